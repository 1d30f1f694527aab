#!/bin/sh
# check_state.sh - ctest's check that liblatchd's only writable static data
# is what latchd.h calls process-wide: the SipHash key (sip_key, set once
# under seed_once), the command index by name and the stats slots
# (by_hash, sub_base, stat_slots under by_hash_once), the tick rate
# (ns_per_tick under calibrated) and the ACL's view of the commands
# (acl_registry, registry_once) and the TLS sessions' I/O method
# (bio_method under bio_once, in a build with TLS).
# Usage: check_state.sh OBJDUMP liblatchd.a [MORE...]: MORE are names the
# build adds (bio_method bio_once with LATCHD_TLS); exit 1 on anything else.
set -u
objdump_bin=$1
lib=$2
shift 2
# Data objects ("O") in writable sections; .data.rel.ro is read-only after relocation.
found=$("$objdump_bin" -t "$lib" | awk '$3 == "O" && $4 ~ /^\.(data|bss|data\.rel|data\.rel\.local)$/ { print $NF }' | sort)
want=$(printf '%s\n' acl_registry by_hash by_hash_once calibrated ns_per_tick registry_once seed_once sip_key stat_slots sub_base "$@" | sort)
if [ "$found" != "$want" ]; then
    echo "$lib: writable static data is"
    printf '  %s\n' $found
    echo "expected exactly: $(echo $want)"
    exit 1
fi
echo "$lib: writable static data: $(echo $found)"
