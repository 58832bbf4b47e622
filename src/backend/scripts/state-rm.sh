#!/bin/sh
# Removes what a backend operation left under $1/.ocisbx: a capture file,
# the parts of a chunked write.
#   $1  the workspace root as this shell sees it
#   $2  the name under $1/.ocisbx (one path component, checked by the caller)
set -u
rm -rf -- "$1/.ocisbx/$2"
