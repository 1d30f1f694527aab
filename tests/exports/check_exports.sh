#!/bin/sh
# check_exports.sh - ctest's check that liblatchd leaks no internal name:
# every defined global symbol of the given archives and shared objects
# starts with latchd_, and the API itself is there (so an empty nm passes
# nothing). Usage: check_exports.sh [--allow REGEX] NM FILE... (.a, .so);
# exit 1 on a leak. --allow names symbols a build adds on purpose (the
# linker's __start_/__stop_ symbols of coverage sections in fuzz builds).
set -u
allow='^$'
if [ "$1" = "--allow" ]; then
    allow=$2
    shift 2
fi
nm_bin=$1
shift
status=0
for lib in "$@"; do
    case "$lib" in
        *.a) syms=$("$nm_bin" -g --defined-only "$lib") ;;
        # The dynamic table is what a program binds to; .symtab may be stripped.
        *) syms=$("$nm_bin" -D --defined-only "$lib") ;;
    esac || { echo "$lib: nm failed"; exit 1; }
    # "addr T name" lines; archives add "member.o:" headers and blank lines.
    names=$(printf '%s\n' "$syms" | awk 'NF >= 2 && $NF !~ /:$/ { print $NF }')
    leaked=$(printf '%s\n' "$names" | grep -v '^latchd_' | grep -Ev "$allow" | grep -v '^$')
    api=$(printf '%s\n' "$names" | grep -c '^latchd_create$')
    count=$(printf '%s\n' "$leaked" | grep -c .)
    echo "$lib: $(printf '%s\n' "$names" | grep -c '^latchd_') latchd_* and $count other defined global symbols"
    if [ "$count" -ne 0 ]; then
        printf '  leaked: %s\n' $leaked | head -20
        status=1
    fi
    if [ "$api" -ne 1 ]; then
        echo "  latchd_create is not exported"
        status=1
    fi
done
exit $status
