#!/bin/sh
# Functions every workspace script shares (inlined into each at build time:
# cmake/EmbedScripts.cmake). $W is the workspace root as the script sees it.

# The exit status of a path that leads outside the workspace through a
# symlink (the backend turns it into OCISBX_EFORBIDDEN); backend_int.h has
# the same number.
OCISBX_EXIT_OUTSIDE=93

# confine PATH: exits OCISBX_EXIT_OUTSIDE unless PATH, its symlinks followed
# as the workspace sees them, stays inside $W.
confine() {
    case "$(realpath -m -- "$1" 2>/dev/null)/" in
    "$W"/*) ;;
    *) exit "$OCISBX_EXIT_OUTSIDE" ;;
    esac
}
