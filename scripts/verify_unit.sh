#!/usr/bin/env bash
# Checks packaging/systemd/peregrine@.service with `systemd-analyze verify`, as the
# instance peregrine@test.service (a template cannot be verified without an instance).
#
# usage: scripts/verify_unit.sh [BINARY]   (default: target/release/peregrine; UNIT from
#        the environment checks another unit file)
#
# verify checks that ExecStart's program exists, so the copy it checks runs BINARY in
# place of /usr/bin/peregrine. Fails (exit 1) if systemd-analyze exits non-zero or
# prints anything about the unit (it prints nothing for a clean one, and exits 0 after
# some problems, such as an unknown key or a value it cannot parse, that it only warns
# about).
set -euo pipefail
cd "$(dirname "$0")/.."
UNIT=${UNIT:-packaging/systemd/peregrine@.service}
BIN=${1:-target/release/peregrine}

command -v systemd-analyze >/dev/null || {
    echo "verify_unit.sh: systemd-analyze not found (apt-get install systemd)" >&2
    exit 1
}
[ -x "$BIN" ] || { echo "verify_unit.sh: $BIN is not an executable (build it first)" >&2; exit 1; }
BIN=$(realpath "$BIN")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
name=peregrine@test.service
sed "s#/usr/bin/peregrine#$BIN#g" "$UNIT" >"$tmp/$name"

# Problems of this unit and of the units it names (a missing Requires=) decide the exit
# status, not those of units further down (sysinit.target's and the like, which in a
# container need not all load); its own problems are caught below by name whatever the
# status.
opts=()
if systemd-analyze --help 2>/dev/null | grep -q -- '--recursive-errors'; then
    opts+=(--recursive-errors=one)
fi

set +e
out=$(systemd-analyze verify "${opts[@]}" "$tmp/$name" 2>&1)
rc=$?
set -e

bad=0
while IFS= read -r line; do
    [ -n "$line" ] || continue
    case "$line" in
        *peregrine@*)
            echo "verify_unit.sh: $line" >&2
            bad=1
            ;;
        *)
            # Not about this unit: a message about the machine (in a container: no
            # cgroup hierarchy, a missing /proc entry) or another unit. Shown, not
            # counted.
            echo "verify_unit.sh: (ignored, not about $name) $line" >&2
            ;;
    esac
done <<<"$out"

if [ "$rc" -ne 0 ] || [ "$bad" -ne 0 ]; then
    echo "verify_unit.sh: $UNIT: systemd-analyze verify failed (exit status $rc)" >&2
    exit 1
fi
echo "verify_unit.sh: $UNIT verifies cleanly (as $name, ExecStart $BIN)"
