#!/usr/bin/env bash
# Runs os-ken's OpenFlow switch test tool (os_ken/tests/switch/tester.py, the OF1.3
# cases of tests/switch/of13, the OF1.0 ones of of10 or the OF1.4 ones of of14) against
# peregrine,
# with a private Open vSwitch (userspace datapath, datapath_type=netdev) as the tester
# switch.
#
# usage: scripts/conformance/run.sh [--version 13|10|14] [--quick | --subset PATTERN]...
#            [--out DIR] [--target peregrine|ovs] [--backend B] [--timeout SECS]
#            [--stall SECS]
#
#   --version V       the suite: 13 (default; of13, 991 cases), 10 (of10, 40 files) or
#                     14 (of14, 146 files);
#                     the target is started with --protocols OpenFlow1V so that it
#                     joins the tester in that version (the tester switch speaks 1.3)
#   --quick           a fixed subset of a few dozen cases (see QUICK in
#                     osken_conformance.py); about a minute
#   --subset PATTERN  case files to run: a directory or a glob relative to the suite
#                     (match, action/25_SET_FIELD, 'match/1*_TCP_*.json',
#                     meter/01_DROP_00_KBPS_00_1M.json); repeatable or comma-separated.
#                     Default: the whole suite.
#   --out DIR         where results go (default: ./conformance-out); created
#   --target          the switch under test: peregrine (default) or a second OVS
#                     bridge (a baseline for the tester setup itself)
#   --backend B       peregrine's port backend (default afpacket)
#   --timeout SECS    bound on the whole tester run (default 300 with --quick, else 7200)
#   --stall SECS      stop if no case finishes for this long (default 240)
#   --tester-cpus L   run the tester (the os-ken app and the private Open vSwitch) on
#                     CPUs L only (taskset list, e.g. 0); default: anywhere
#   --target-cpus L   run the target on CPUs L only (its one worker pinned to the first)
#
# Builds nothing: the switch is $PEREGRINE, else target/release/peregrine. os-ken comes
# from $OSKEN_PYTHON, else the repository's .venv/bin/python. Needs root.
#
# Topology: everything lives in one private network namespace made for this run, so
# nothing here can clash with or hear the host (the netdev datapath's fixed tap name
# "ovs-netdev", other OVS instances, IPv6 autoconfiguration and neighbour discovery,
# host daemons that talk on new links); deleting the namespace removes every link it
# holds. IPv6 is disabled in it, so the veths carry only the tester's frames (the tester
# compares port counters and every packet that arrives). Target port N is one end of
# veth pair N (tgN), tester port N the other end (tsN), N = 1..3. The controller (the
# tester app) listens on 127.0.0.1:6653 inside the namespace; the target has dpid 1, the
# tester OVS dpid 2.
#
# Outputs in DIR: results.txt (one line per case, with the tester's reason for each
# failure), summary.txt (pass/fail/not-run per category: match, action, set_field, group,
# meter; failure reasons grouped with an example each), cases.jsonl (the same per case,
# machine-readable), tester.log (the tester's own log), peregrine.log, ovs/ (OVS logs),
# restarts.txt (when the target exited and was restarted).
#
# Robustness: a bound on the whole run (--timeout) and on the time without progress
# (--stall); if the target exits it is restarted (at most 10 times, each noted in
# restarts.txt) so that one crash does not end the suite; on any exit (also Ctrl-C or a
# failure) every process this script started is stopped by its PID and the namespace is
# deleted; the summary is written from what finished.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
HELPER="$HERE/osken_conformance.py"

QUICK=0
VERSION=13
TESTER_CPUS=
TARGET_CPUS=
SUBSETS=()
OUT=./conformance-out
TARGET=peregrine
BACKEND=afpacket
TIMEOUT=
STALL=240
MAX_RESTARTS=10
OF_PORT=6653
TARGET_DPID=0000000000000001
TESTER_DPID=0000000000000002

die() { echo "run.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
        --quick) QUICK=1 ;;
        --version) [ $# -ge 2 ] || die "--version needs 13, 10 or 14"; VERSION=$2; shift ;;
        --subset) [ $# -ge 2 ] || die "--subset needs a pattern"; SUBSETS+=("$2"); shift ;;
        --out) [ $# -ge 2 ] || die "--out needs a directory"; OUT=$2; shift ;;
        --target) [ $# -ge 2 ] || die "--target needs peregrine|ovs"; TARGET=$2; shift ;;
        --backend) [ $# -ge 2 ] || die "--backend needs a name"; BACKEND=$2; shift ;;
        --timeout) [ $# -ge 2 ] || die "--timeout needs seconds"; TIMEOUT=$2; shift ;;
        --stall) [ $# -ge 2 ] || die "--stall needs seconds"; STALL=$2; shift ;;
        --tester-cpus) [ $# -ge 2 ] || die "--tester-cpus needs a CPU list"; TESTER_CPUS=$2; shift ;;
        --target-cpus) [ $# -ge 2 ] || die "--target-cpus needs a CPU list"; TARGET_CPUS=$2; shift ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
    shift
done
case "$TARGET" in peregrine|ovs) ;; *) die "--target must be peregrine or ovs" ;; esac
case "$VERSION" in 13|10|14) ;; *) die "--version must be 13, 10 or 14" ;; esac
PROTOCOL="OpenFlow$VERSION"
# Pinning: a command prefix per side (empty: the OS places them).
ON_TESTER=()
ON_TARGET=()
for l in "$TESTER_CPUS" "$TARGET_CPUS"; do
    [ -z "$l" ] || [[ "$l" =~ ^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$ ]] \
        || die "a CPU list is like 0 or 0-1,3, not $l"
done
[ -n "$TESTER_CPUS" ] && ON_TESTER=(taskset -c "$TESTER_CPUS")
[ -n "$TARGET_CPUS" ] && ON_TARGET=(taskset -c "$TARGET_CPUS")
[[ "$STALL" =~ ^[0-9]+$ ]] || die "--stall must be a number of seconds"
if [ -z "$TIMEOUT" ]; then
    if [ "$QUICK" = 1 ]; then TIMEOUT=300; else TIMEOUT=7200; fi
fi
[[ "$TIMEOUT" =~ ^[0-9]+$ ]] || die "--timeout must be a number of seconds"
[ "$(id -u)" = 0 ] || die "needs root (network namespace, veths, OVS)"

PY=${OSKEN_PYTHON:-$ROOT/.venv/bin/python}
[ -x "$PY" ] || die "no python with os-ken at $PY (set OSKEN_PYTHON)"
SUITE=$("$PY" -c 'import os, os_ken.tests.switch as t; print(os.path.join(os.path.dirname(t.__file__), "of'"$VERSION"'"))') \
    || die "$PY cannot import os_ken"
PEREGRINE=${PEREGRINE:-$ROOT/target/release/peregrine}
if [ "$TARGET" = peregrine ]; then
    [ -x "$PEREGRINE" ] || die "no peregrine binary at $PEREGRINE (cargo build --release -p peregrine, or set PEREGRINE)"
    PEREGRINE=$(cd "$(dirname "$PEREGRINE")" && pwd)/$(basename "$PEREGRINE")
fi
for tool in ip ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl ovs-appctl; do
    command -v "$tool" >/dev/null || die "$tool not found"
done
SCHEMA=/usr/share/openvswitch/vswitch.ovsschema
[ -r "$SCHEMA" ] || die "$SCHEMA not found"

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT/results.txt" "$OUT/summary.txt" "$OUT/cases.jsonl" "$OUT/tester.log" \
      "$OUT/peregrine.log" "$OUT/restarts.txt"
rm -rf "$OUT/ovs"
mkdir -p "$OUT/ovs"

WORK=$(mktemp -d /tmp/pgconf.XXXXXX)
NS="pgconf-$$-${WORK##*.}"
TESTER_PID=
TARGET_PID=
STATUS="set-up did not finish"
FINISHED=0

log() { echo "[$(date +%T)] $*" >&2; }
# Runs a command in the namespace. Not for background jobs: "$!" of a backgrounded
# function is a subshell, not the process, so those call ip netns exec directly.
nsx() { ip netns exec "$NS" "$@"; }

stop_pid() {  # stop_pid PID: TERM, wait up to 5 s, then KILL; only our own children
    local pid=$1 i
    [ -n "$pid" ] || return 0
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

stop_pidfile() {  # an OVS daemon, by the pidfile it wrote under $WORK
    local f=$1 pid i
    [ -r "$f" ] || return 0
    pid=$(cat "$f" 2>/dev/null) || return 0
    [[ "$pid" =~ ^[0-9]+$ ]] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for i in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
}

finish() {
    local rc=$?
    trap - EXIT INT TERM
    [ "$FINISHED" = 1 ] && exit "$rc"
    FINISHED=1
    set +e
    stop_pid "$TESTER_PID"
    stop_pid "$TARGET_PID"
    stop_pidfile "$WORK/vs.pid"
    stop_pidfile "$WORK/ovsdb.pid"
    cp -f "$WORK"/*.log "$OUT/ovs/" 2>/dev/null
    ip netns del "$NS" 2>/dev/null
    if [ -r "$WORK/cases/manifest.json" ]; then
        "$PY" "$HELPER" summarize --manifest "$WORK/cases/manifest.json" \
            --results "$OUT/cases.jsonl" --out "$OUT" --status "$STATUS" \
            --title "os-ken switch tester (OF1.${VERSION#1}) against $TARGET_DESC; tester: Open vSwitch $(ovs-vswitchd --version | awk 'NR==1{print $NF}') netdev" \
            >/dev/null
        log "summary: $OUT/summary.txt"
    fi
    rm -rf "$WORK"
    exit "$rc"
}
trap finish EXIT
trap 'STATUS="interrupted"; exit 130' INT TERM

if [ "$TARGET" = peregrine ]; then
    TARGET_DESC="peregrine ($PEREGRINE, $BACKEND ports)"
else
    TARGET_DESC="Open vSwitch netdev bridge (baseline)"
fi
[ -n "$TARGET_CPUS" ] && TARGET_DESC="$TARGET_DESC on CPUs $TARGET_CPUS"
[ -n "$TESTER_CPUS" ] && TARGET_DESC="$TARGET_DESC; tester on CPUs $TESTER_CPUS"

# ---- cases
SEL_ARGS=()
[ "$QUICK" = 1 ] && SEL_ARGS+=(--quick)
for s in ${SUBSETS[@]+"${SUBSETS[@]}"}; do SEL_ARGS+=(--subset "$s"); done
NCASES=$("$PY" "$HELPER" select --suite "$SUITE" --dest "$WORK/cases" ${SEL_ARGS[@]+"${SEL_ARGS[@]}"})
log "$NCASES cases selected; out: $OUT"

# ---- namespace and veths
ip netns add "$NS"
nsx sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
nsx ip link set lo up
for n in 1 2 3; do
    nsx ip link add "tg$n" type veth peer name "ts$n"
    for dev in "tg$n" "ts$n"; do
        nsx ip link set "$dev" up
    done
done

# ---- the tester app (the controller of both switches)
: > "$OUT/cases.jsonl"
ip netns exec "$NS" ${ON_TESTER[@]+"${ON_TESTER[@]}"} "$PY" "$HELPER" run --cases "$WORK/cases" --results "$OUT/cases.jsonl" \
    --port "$OF_PORT" --target-dpid "$TARGET_DPID" --tester-dpid "$TESTER_DPID" \
    --target-version "openflow$VERSION" \
    > "$OUT/tester.log" 2>&1 &
TESTER_PID=$!
for i in $(seq 100); do
    nsx ss -ltnH "sport = :$OF_PORT" 2>/dev/null | grep -q . && break
    kill -0 "$TESTER_PID" 2>/dev/null || { STATUS="tester did not start"; die "tester exited at start (see $OUT/tester.log)"; }
    sleep 0.2
done
nsx ss -ltnH "sport = :$OF_PORT" | grep -q . || { STATUS="tester did not start"; die "tester does not listen on $OF_PORT"; }

# ---- private Open vSwitch: the tester switch (and the target with --target ovs)
VSCTL=(ovs-vsctl --db="unix:$WORK/db.sock" --timeout=30)
ovsdb-tool create "$WORK/conf.db" "$SCHEMA"
nsx ${ON_TESTER[@]+"${ON_TESTER[@]}"} ovsdb-server --remote="punix:$WORK/db.sock" --pidfile="$WORK/ovsdb.pid" \
    --unixctl="$WORK/ovsdb.ctl" --detach --log-file="$WORK/ovsdb.log" "$WORK/conf.db"
"${VSCTL[@]}" --no-wait init
# flow-limit=0: no datapath flow cache, so the tester never forwards with flows that a
# barrier has already replaced.
"${VSCTL[@]}" --no-wait set Open_vSwitch . other_config:flow-limit=0
nsx ${ON_TESTER[@]+"${ON_TESTER[@]}"} ovs-vswitchd "unix:$WORK/db.sock" --pidfile="$WORK/vs.pid" --unixctl="$WORK/vs.ctl" \
    --detach --log-file="$WORK/vs.log"

add_ovs_bridge() {  # add_ovs_bridge NAME DPID PORT-PREFIX PROTOCOL
    local br=$1 dpid=$2 pfx=$3 proto=$4
    "${VSCTL[@]}" add-br "$br" -- set bridge "$br" datapath_type=netdev \
        protocols="$proto" other-config:datapath-id="$dpid" fail-mode=secure
    for n in 1 2 3; do
        "${VSCTL[@]}" add-port "$br" "$pfx$n" -- set interface "$pfx$n" ofport_request="$n"
    done
    "${VSCTL[@]}" set-controller "$br" "tcp:127.0.0.1:$OF_PORT" \
        -- set controller "$br" max_backoff=1000 inactivity_probe=30000
}
add_ovs_bridge tester "$TESTER_DPID" ts OpenFlow13

# ---- the target
start_target() {
    if [ "$TARGET" = ovs ]; then
        add_ovs_bridge target "$TARGET_DPID" tg "$PROTOCOL"
        return
    fi
    local extra=()
    "$PEREGRINE" run --help 2>/dev/null | grep -q -- '--mgmt' && extra+=(--mgmt none)
    # Each start must be a fresh switch: no tables restored from the last one.
    "$PEREGRINE" run --help 2>/dev/null | grep -q -- '--state-dir' && extra+=(--state-dir none)
    echo "=== $(date +%T) start" >> "$OUT/peregrine.log"
    [ -n "$TARGET_CPUS" ] && extra+=(--cpus "${TARGET_CPUS%%[,-]*}")
    ip netns exec "$NS" ${ON_TARGET[@]+"${ON_TARGET[@]}"} "$PEREGRINE" run --port "tg1,backend=$BACKEND" --port "tg2,backend=$BACKEND" \
        --port "tg3,backend=$BACKEND" --dpid "$TARGET_DPID" \
        --controller "tcp:127.0.0.1:$OF_PORT" --fail-mode secure --workers 1 --protocols "$PROTOCOL" \
        ${extra[@]+"${extra[@]}"} >> "$OUT/peregrine.log" 2>&1 &
    TARGET_PID=$!
}
start_target
log "target and tester started; running (bound ${TIMEOUT}s, stall ${STALL}s)"

# ---- watch
STATUS="running"
START=$(date +%s)
LAST_PROGRESS=$START
LAST_LINES=0
RESTARTS=0
while kill -0 "$TESTER_PID" 2>/dev/null; do
    sleep 1
    now=$(date +%s)
    lines=$(wc -l < "$OUT/cases.jsonl")
    if [ "$lines" != "$LAST_LINES" ]; then
        LAST_LINES=$lines
        LAST_PROGRESS=$now
    fi
    if [ "$TARGET" = peregrine ] && ! kill -0 "$TARGET_PID" 2>/dev/null; then
        wait "$TARGET_PID" 2>/dev/null && trc=0 || trc=$?
        echo "$(date +%T) target exited (status $trc) after $lines results" >> "$OUT/restarts.txt"
        if [ "$RESTARTS" -ge "$MAX_RESTARTS" ]; then
            STATUS="stopped: the target exited $((RESTARTS + 1)) times"
            break
        fi
        RESTARTS=$((RESTARTS + 1))
        log "target exited (status $trc); restart $RESTARTS of $MAX_RESTARTS"
        start_target
    fi
    if [ $((now - START)) -ge "$TIMEOUT" ]; then
        STATUS="timed out after ${TIMEOUT}s"
        break
    fi
    if [ $((now - LAST_PROGRESS)) -ge "$STALL" ]; then
        STATUS="stalled: no case finished in ${STALL}s"
        break
    fi
done
if [ "$STATUS" = running ]; then
    if grep -q '"end": "---  Test end  ---"' "$OUT/cases.jsonl"; then
        STATUS="complete"
    else
        STATUS="tester exited before the end (see tester.log)"
    fi
fi
[ "$RESTARTS" -gt 0 ] && STATUS="$STATUS; target restarted $RESTARTS times (restarts.txt)"
STATUS="$STATUS; $(( $(date +%s) - START ))s"
log "run: $STATUS"
exit 0
