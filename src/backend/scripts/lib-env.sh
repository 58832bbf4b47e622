#!/bin/sh
# The wrapper's own environment, shared by exec.sh and job-run.sh (inlined
# into each at build time: cmake/EmbedScripts.cmake). The user's values of
# the variables the wrapper's programs would obey move to OCISBX_U_<name>;
# the command's shell restores them ($ox_back). Then the wrapper's programs
# run with its own PATH and LC_ALL=C.
ox_back=
for ox_v in PATH LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT LD_BIND_NOW LD_DEBUG LD_DEBUG_OUTPUT LD_PROFILE \
    LD_PROFILE_OUTPUT LD_DYNAMIC_WEAK LD_ASSUME_KERNEL GLIBC_TUNABLES MALLOC_CHECK_ MALLOC_PERTURB_ \
    POSIXLY_CORRECT _POSIX2_VERSION LC_ALL LANG LANGUAGE LC_MESSAGES LC_CTYPE LC_NUMERIC TZ \
    BASH_ENV ENV CDPATH OCISBX_TOOLS_PATH; do
    eval "ox_x=\${$ox_v+1}"
    if [ -n "$ox_x" ]; then
        eval "OCISBX_U_$ox_v=\$$ox_v"
        export "OCISBX_U_$ox_v"
        ox_back="$ox_back$ox_v=\$OCISBX_U_$ox_v; export $ox_v; unset OCISBX_U_$ox_v
"
    fi
    [ "$ox_v" = OCISBX_TOOLS_PATH ] || unset "$ox_v"
done
ox_back="unset PATH LC_ALL
$ox_back"
PATH=${OCISBX_TOOLS_PATH:-/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin}
unset OCISBX_TOOLS_PATH
LC_ALL=C
export PATH LC_ALL
