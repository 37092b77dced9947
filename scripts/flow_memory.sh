#!/usr/bin/env bash
# What N exact-match flows cost peregrine and Open vSwitch (userspace datapath), measured
# on the same machine in the same run, one switch after the other:
#
#   scripts/flow_memory.sh [--binary PATH] [--flows N] [--out DIR]
#                          [--switch peregrine|ovs|both] [--step-timeout SECS]
#                          [--cycles C]
#
#   --binary PATH    the peregrine binary (default target/release/peregrine)
#   --flows N        how many flows (default 1000000, at most 16777216)
#   --out DIR        where summary.txt, raw.txt and the switches' logs go
#                    (default ./flow-memory-<time>)
#   --switch WHICH   peregrine, ovs or both (default both)
#   --step-timeout S the longest an install or delete may take before it is stopped
#                    and reported as timed out (default 300)
#   --cycles C       install and delete the flows C times in the same switch process
#                    (default 1), to see whether what a delete leaves is reused
#
# One flow file of N lines `priority=10,tcp,nw_src=10.A.B.C,tp_dst=80,actions=output:2`
# (every line a different source address) is given to each switch. For each switch:
#
# 1. the switch process's RSS (VmRSS; for OVS ovs-vswitchd, with ovsdb-server's shown
#    on rows of its own) before installing, right after installing and 5 s later;
#    bytes per flow = (RSS 5 s after install - RSS before) / N;
# 2. the install: wall time of `peregrine ctl add-flows SOCK FILE` and of
#    `ovs-ofctl -O OpenFlow13 add-flows unix:BRIDGE.mgmt FILE`, both of which wait for
#    the switch's barrier reply, and the installing tool's own max RSS
#    (`/usr/bin/time -f %M`); then `dump-aggregate` checks that flow_count is N;
# 3. the delete: wall time of `peregrine ctl del-flows SOCK` and of
#    `ovs-ofctl del-flows unix:BRIDGE.mgmt` (both end after a barrier reply), then
#    `dump-aggregate` is polled until flow_count is 0: the table reports the count the
#    first poll saw and when 0 was seen (from the start of the delete);
# 4. RSS right after the delete returned, 5 s and 15 s after it, and how far each is
#    above the RSS before the install (MB, % of that RSS, and % of what the install
#    added still held), and how the RSS before the install and 15 s after the delete
#    divide into anonymous memory (RssAnon: the heap, stacks, the allocator's own
#    bookkeeping) and file pages (RssFile: the binary's and libraries' code and data);
# 5. with --cycles C, steps 2-4 again C-1 times: RSS 5 s after each install and 15 s
#    after each delete.
#
# peregrine runs as `BINARY run --port P1 --port P2 --mgmt SOCK --state-dir none
# --fail-mode secure` in the root namespace, its ports the root-side ends of two veth
# pairs whose other ends sit in namespaces of their own. Open vSwitch runs from a
# temporary folder (its own database, sockets, pidfiles and logs; never the system's
# daemons), with a netdev bridge (fail-mode=secure) in a namespace of its own, holding
# the switch-side ends of two more veth pairs as ofport 1 and 2, so its internal ports
# stay out of the root namespace. Nothing sends traffic; no switch is pinned.
#
# These are the numbers of one run on a shared, noisy machine: compare the ratios
# (peregrine/OVS) rather than the absolute values, and rerun before trusting a small
# difference.
#
# Needs root, iproute2, GNU time (/usr/bin/time) and Open vSwitch for --switch ovs|both.
# Everything it makes is named pgfm<pid>… or lives in a temporary folder, and is removed
# on exit, also on failure or interruption; the switches are stopped by their PIDs.
set -euo pipefail

BIN="$(cd "$(dirname "$0")/.." && pwd)/target/release/peregrine"
N=1000000
OUT=
WHICH=both
STEP_TIMEOUT=300
CYCLES=1
usage() { sed -n "5,17p" "$0" | sed "s/^# \{0,1\}//" >&2; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
    case $1 in
    --binary) BIN=${2:?--binary PATH}; shift 2 ;;
    --flows) N=${2:?--flows N}; shift 2 ;;
    --out) OUT=${2:?--out DIR}; shift 2 ;;
    --switch) WHICH=${2:?--switch peregrine|ovs|both}; shift 2 ;;
    --step-timeout) STEP_TIMEOUT=${2:?--step-timeout SECS}; shift 2 ;;
    --cycles) CYCLES=${2:?--cycles C}; shift 2 ;;
    -h | --help) usage 0 ;;
    *) echo "unknown argument: $1" >&2; usage ;;
    esac
done
case $WHICH in peregrine | ovs | both) ;; *) usage ;; esac
if ! [[ $N =~ ^[1-9][0-9]*$ ]] || [ "$N" -gt 16777216 ]; then
    echo "--flows must be 1..16777216" >&2
    exit 2
fi
[[ $STEP_TIMEOUT =~ ^[1-9][0-9]*$ ]] || { echo "--step-timeout must be a number" >&2; exit 2; }
if ! [[ $CYCLES =~ ^[1-9][0-9]*$ ]] || [ "$CYCLES" -gt 100 ]; then
    echo "--cycles must be 1..100" >&2
    exit 2
fi
[ "$(id -u)" = 0 ] || { echo "needs root (namespaces, veths)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs GNU time: apt-get install time" >&2; exit 2; }
want() { [ "$WHICH" = both ] || [ "$WHICH" = "$1" ]; }
if want peregrine; then
    [ -x "$BIN" ] || { echo "no peregrine binary at $BIN (cargo build --release -p peregrine, or --binary PATH)" >&2; exit 2; }
    BIN=$(readlink -f "$BIN")
fi
if want ovs; then
    for p in ovsdb-tool ovsdb-server ovs-vswitchd ovs-vsctl ovs-ofctl ovs-appctl; do
        command -v "$p" >/dev/null || { echo "$p missing: apt-get install openvswitch-switch" >&2; exit 2; }
    done
    SCHEMA=/usr/share/openvswitch/vswitch.ovsschema
    [ -f "$SCHEMA" ] || { echo "$SCHEMA missing" >&2; exit 2; }
fi
OUT=${OUT:-flow-memory-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
OUT=$(readlink -f "$OUT")

P=pgfm$$
D=$(mktemp -d /tmp/pgfm.XXXXXX)
PG_PID=
OVS_STARTED=
NSES=()
LINKS=()

# Ends process $1 (TERM, KILL after 5 s); waits at most 6 s. A zombie counts as ended.
stop_pid() {
    local pid=$1 i
    kill -TERM "$pid" 2>/dev/null || return 0
    for i in $(seq 60); do
        alive "$pid" || return 0
        [ "$i" = 50 ] && kill -KILL "$pid" 2>/dev/null
        sleep 0.1
    done
}
alive() {
    local st
    st=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$st" ] && [ "$st" != Z ]
}
stop_ovs() {
    local f
    for f in vs ovsdb; do
        if [ -f "$D/ovs/$f.pid" ]; then stop_pid "$(cat "$D/ovs/$f.pid")"; rm -f "$D/ovs/$f.pid"; fi
    done
}
cleanup() {
    local rc=$? n l
    trap - EXIT INT TERM
    if [ -n "$PG_PID" ]; then stop_pid "$PG_PID"; wait "$PG_PID" 2>/dev/null || true; fi
    [ -n "$OVS_STARTED" ] && stop_ovs
    for n in "${NSES[@]}"; do ip netns del "$n" 2>/dev/null || true; done
    for l in "${LINKS[@]}"; do ip link del "$l" 2>/dev/null || true; done
    for l in "$D"/ovs/*.log; do [ -f "$l" ] && cp "$l" "$OUT/ovs-$(basename "$l")"; done
    rm -rf "$D"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log() { echo "[$(date +%T)] $*" >&2; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# VmRSS (or field $2 of /proc/PID/status) of process $1 in KiB ("-" when it is gone).
rss() {
    local v
    v=$(awk -v f="${2:-VmRSS}:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null || true)
    echo "${v:--}"
}
# Sleeps until $1 ms (now_ms time) unless that is past.
sleep_until() {
    local d=$(($1 - $(now_ms)))
    [ "$d" -gt 0 ] && sleep "$(awk -v d="$d" 'BEGIN { printf "%.3f", d / 1000 }')"
    return 0
}
declare -A R
put() { R[$1]=$2; echo "$1=$2" >>"$OUT/raw.txt"; }

# A namespace with ipv6 off (so no host sends anything).
mkns() {
    ip netns add "$1"
    NSES+=("$1")
    ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
    ip -n "$1" link set lo up
}

# The flows: the same file for both switches.
FLOWS=$D/flows.txt
log "writing $N flows to $FLOWS"
awk -v n="$N" 'BEGIN {
    for (i = 0; i < n; i++)
        printf "priority=10,tcp,nw_src=10.%d.%d.%d,tp_dst=80,actions=output:2\n",
            int(i / 65536) % 256, int(i / 256) % 256, i % 256
}' >"$FLOWS"
: >"$OUT/raw.txt"
put flows "$N"
put flow_file_bytes "$(stat -c %s "$FLOWS")"
put first_flow "$(head -1 "$FLOWS")"

# Runs "$@" (a flow-table command) with the step timeout under GNU time: sets T_MS
# (wall time), T_RC (exit status; 124 when it timed out) and T_MAXRSS (KiB).
timed() {
    local name=$1 t0 t1
    shift
    t0=$(now_ms)
    set +e
    /usr/bin/time -f %M -o "$D/$name.time" timeout "$STEP_TIMEOUT" "$@" >"$D/$name.out" 2>&1
    T_RC=$?
    set -e
    t1=$(now_ms)
    T_MS=$((t1 - t0))
    T_MAXRSS=$(grep -E '^[0-9]+$' "$D/$name.time" | tail -1 || true)
    T_MAXRSS=${T_MAXRSS:--}
    cp "$D/$name.out" "$OUT/$name.out"
    if [ "$T_RC" != 0 ]; then
        log "$* exited $T_RC after $T_MS ms: $(tail -3 "$D/$name.out" | tr '\n' ' ')"
    fi
}

# flow_count from a dump-aggregate command's output ("?" if none).
flow_count() {
    local out
    out=$(timeout 120 "$@" 2>&1) || true
    out=$(grep -o 'flow_count=[0-9]*' <<<"$out" | head -1 || true)
    echo "${out#flow_count=}" | sed 's/^$/?/'
}

# The measurement for switch $1 (pg|ovs): its process $2 (and ovsdb-server $3 for OVS),
# with the install, delete and aggregate commands in arrays ADD, DEL and AGG.
measure() {
    local sw=$1 pid=$2 db=${3:-} t_end n t_del0 c
    sample() { # label
        put "$sw.rss_$1" "$(rss "$pid")"
        put "$sw.anon_$1" "$(rss "$pid" RssAnon)"
        put "$sw.file_$1" "$(rss "$pid" RssFile)"
        [ -n "$db" ] && put "$sw.db_rss_$1" "$(rss "$db")"
        return 0
    }
    # Polls dump-aggregate until the table is empty, for at most the step timeout from
    # $1 (the delete's start, now_ms); sets FIRST (the first poll's count), POLLS and
    # EMPTY (0 once empty, else -).
    wait_empty() {
        FIRST=
        POLLS=0
        while :; do
            EMPTY=$(flow_count "${AGG[@]}")
            POLLS=$((POLLS + 1))
            [ -z "$FIRST" ] && FIRST=$EMPTY
            [ "$EMPTY" = 0 ] && break
            if [ $(($(now_ms) - $1)) -gt $((STEP_TIMEOUT * 1000)) ]; then
                log "$sw: flow_count still $EMPTY after ${STEP_TIMEOUT}s"
                EMPTY=-
                break
            fi
            sleep 0.2
        done
    }
    sleep 3
    sample before
    log "$sw: installing $N flows"
    timed "$sw-add-flows" "${ADD[@]}"
    t_end=$(now_ms)
    sample installed
    put "$sw.install_ms" "$T_MS"
    put "$sw.install_rc" "$T_RC"
    put "$sw.install_tool_maxrss" "$T_MAXRSS"
    sleep_until $((t_end + 5000))
    sample installed5
    n=$(flow_count "${AGG[@]}")
    put "$sw.flows_installed" "$n"
    [ -n "${AFTER_INSTALL:-}" ] && "$AFTER_INSTALL"
    log "$sw: install took $T_MS ms (rc $T_RC), $n flows; deleting them"
    t_del0=$(now_ms)
    timed "$sw-del-flows" "${DEL[@]}"
    t_end=$(now_ms)
    sample deleted
    put "$sw.delete_ms" "$T_MS"
    put "$sw.delete_rc" "$T_RC"
    put "$sw.delete_tool_maxrss" "$T_MAXRSS"
    # Is the table empty when the delete command has returned? Poll until it is.
    wait_empty "$t_del0"
    put "$sw.flows_after_delete_first_poll" "$FIRST"
    put "$sw.delete_polls" "$POLLS"
    put "$sw.flows_after_delete" "$EMPTY"
    if [ "$EMPTY" = 0 ]; then put "$sw.zero_seen_ms" "$(($(now_ms) - t_del0))"; else put "$sw.zero_seen_ms" -; fi
    sleep_until $((t_end + 5000))
    put "$sw.deleted5_at_ms" "$(($(now_ms) - t_end))"
    sample deleted5
    sleep_until $((t_end + 15000))
    sample deleted15
    log "$sw: delete took $T_MS ms (rc $T_RC); first poll saw $FIRST flows"
    for c in $(seq 2 "$CYCLES"); do
        log "$sw: cycle $c of $CYCLES: installing and deleting again"
        timed "$sw-add-flows-$c" "${ADD[@]}"
        t_end=$(now_ms)
        put "$sw.install_rc_c$c" "$T_RC"
        sleep_until $((t_end + 5000))
        sample "installed5_c$c"
        put "$sw.flows_installed_c$c" "$(flow_count "${AGG[@]}")"
        t_del0=$(now_ms)
        timed "$sw-del-flows-$c" "${DEL[@]}"
        t_end=$(now_ms)
        put "$sw.delete_rc_c$c" "$T_RC"
        wait_empty "$t_del0"
        put "$sw.flows_after_delete_c$c" "$EMPTY"
        sleep_until $((t_end + 15000))
        sample "deleted15_c$c"
    done
}

run_peregrine() {
    local sock=$D/pg.mgmt i
    mkns "${P}ha1"
    mkns "${P}ha2"
    for i in 1 2; do
        ip link add "${P}a$i" type veth peer name eth0 netns "${P}ha$i"
        LINKS+=("${P}a$i")
        echo 1 >"/proc/sys/net/ipv6/conf/${P}a$i/disable_ipv6"
        ip link set "${P}a$i" up
        ip -n "${P}ha$i" link set eth0 up
    done
    log "peregrine: starting $BIN on ${P}a1, ${P}a2"
    "$BIN" run --port "${P}a1" --port "${P}a2" --mgmt "$sock" --state-dir none \
        --fail-mode secure >"$OUT/peregrine.log" 2>&1 &
    PG_PID=$!
    for i in $(seq 300); do
        [ -S "$sock" ] && break
        alive "$PG_PID" || { echo "peregrine exited:" >&2; tail -20 "$OUT/peregrine.log" >&2; exit 1; }
        sleep 0.1
    done
    [ -S "$sock" ] || { echo "peregrine's socket $sock did not appear in 30 s" >&2; exit 1; }
    put pg.pid "$PG_PID"
    ADD=("$BIN" ctl add-flows "$sock" "$FLOWS")
    DEL=("$BIN" ctl del-flows "$sock")
    AGG=("$BIN" ctl dump-aggregate "$sock")
    measure pg "$PG_PID"
    stop_pid "$PG_PID"
    wait "$PG_PID" 2>/dev/null || true
    PG_PID=
    for i in 1 2; do ip link del "${P}a$i" 2>/dev/null || true; done
}

run_ovs() {
    local o=$D/ovs br=br0 i pid dbpid ofport err
    OVS_NS=${P}s
    mkdir -p "$o"
    mkns "$OVS_NS"
    for i in 1 2; do
        mkns "${P}hb$i"
        ip link add "${P}b$i" netns "$OVS_NS" type veth peer name eth0 netns "${P}hb$i"
        ip -n "$OVS_NS" link set "${P}b$i" up
        ip -n "${P}hb$i" link set eth0 up
    done
    # Every OVS directory points at ours; both daemons run in the switch's namespace.
    ovsenv() { ip netns exec "$OVS_NS" env OVS_RUNDIR="$o" OVS_LOGDIR="$o" OVS_DBDIR="$o" \
        OVS_SYSCONFDIR="$o" OVS_PKGDATADIR=/usr/share/openvswitch "$@"; }
    vsctl() { ovsenv ovs-vsctl --db="unix:$o/db.sock" --timeout=30 "$@"; }
    ovsenv ovsdb-tool create "$o/conf.db" "$SCHEMA"
    OVS_STARTED=1
    ovsenv ovsdb-server "$o/conf.db" --remote="punix:$o/db.sock" --pidfile="$o/ovsdb.pid" \
        --unixctl="$o/ovsdb.ctl" --log-file="$o/ovsdb.log" --no-chdir --detach 2>>"$o/start.err"
    vsctl --no-wait init
    ovsenv ovs-vswitchd "unix:$o/db.sock" --pidfile="$o/vs.pid" --unixctl="$o/vs.ctl" \
        --log-file="$o/vs.log" --no-chdir --detach 2>>"$o/start.err"
    vsctl add-br "$br" -- set bridge "$br" datapath_type=netdev fail-mode=secure \
        protocols=OpenFlow10,OpenFlow13 \
        -- add-port "$br" "${P}b1" -- set interface "${P}b1" ofport_request=1 \
        -- add-port "$br" "${P}b2" -- set interface "${P}b2" ofport_request=2
    for i in 1 2; do
        ofport=$(vsctl get interface "${P}b$i" ofport)
        err=$(vsctl get interface "${P}b$i" error 2>/dev/null || true)
        if [ "$ofport" != "$i" ]; then
            echo "OVS gave ${P}b$i ofport $ofport (error: $err)" >&2
            exit 1
        fi
    done
    local target=unix:$o/$br.mgmt
    for i in $(seq 100); do [ -S "$o/$br.mgmt" ] && break; sleep 0.1; done
    [ -S "$o/$br.mgmt" ] || { echo "OVS's $o/$br.mgmt did not appear in 10 s" >&2; exit 1; }
    pid=$(cat "$o/vs.pid")
    dbpid=$(cat "$o/ovsdb.pid")
    put ovs.pid "$pid"
    put ovs.db_pid "$dbpid"
    put ovs.version "$(ovs-vswitchd --version | head -1)"
    ADD=(ovs-ofctl -O OpenFlow13 add-flows "$target" "$FLOWS")
    DEL=(ovs-ofctl del-flows "$target")
    AGG=(ovs-ofctl dump-aggregate "$target")
    # ovs-vswitchd's own account of its memory, with the flows in and at the end.
    memshow() {
        echo "$1: $(ovsenv ovs-appctl -t "$o/vs.ctl" memory/show 2>&1)" >>"$OUT/ovs-memory-show.txt"
    }
    ovs_installed() { memshow "after install"; }
    AFTER_INSTALL=ovs_installed
    measure ovs "$pid" "$dbpid"
    AFTER_INSTALL=
    memshow "after delete"
    stop_ovs
    OVS_STARTED=
}

want peregrine && run_peregrine
want ovs && run_ovs

# The table.
g() { echo "${R[$1]:--}"; }
mib() { [[ $1 =~ ^[0-9]+$ ]] && awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }' || echo -; }
secs() { [[ $1 =~ ^[0-9]+$ ]] && awk -v m="$1" 'BEGIN { printf "%.2f", m / 1000 }' || echo -; }
sub_mib() { [[ $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ ]] && awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f", (a - b) / 1024 }' || echo -; }
# (a - b) as % of c
pct() { [[ $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ && $3 =~ ^-?[0-9]+$ && $3 != 0 ]] && awk -v a="$1" -v b="$2" -v c="$3" 'BEGIN { printf "%+.1f%%", 100 * (a - b) / c }' || echo -; }
per_flow() { [[ $1 =~ ^[0-9]+$ && $2 =~ ^[0-9]+$ ]] && awk -v a="$1" -v b="$2" -v n="$N" 'BEGIN { printf "%.0f", (a - b) * 1024 / n }' || echo -; }
ratio() {
    local a=${1#+} b=${2#+}
    a=${a%\%}
    b=${b%\%}
    [[ $a =~ ^-?[0-9.]+$ && $b =~ ^-?[0-9.]+$ ]] || { echo -; return; }
    awk -v a="$a" -v b="$b" 'BEGIN { if (b == 0) print "-"; else printf "%.2f", a / b }'
}
row() { printf '%-50s %14s %14s %8s\n' "$1" "$2" "$3" "$(ratio "$2" "$3")"; }
rows() { # label, formatter, key (for pg and ovs)
    row "$1" "$($2 "$(g "pg.$3")")" "$($2 "$(g "ovs.$3")")"
}
ident() { echo "$1"; }

# Derived values, then the table.
for s in pg ovs; do
    b=$(g "$s.rss_before")
    R[$s.growth]=$(sub_mib "$(g "$s.rss_installed5")" "$b")
    R[$s.bpf]=$(per_flow "$(g "$s.rss_installed5")" "$b")
    R[$s.bpf0]=$(per_flow "$(g "$s.rss_installed")" "$b")
    grow=-
    [[ $(g "$s.rss_installed5") =~ ^[0-9]+$ && $b =~ ^[0-9]+$ ]] && grow=$(($(g "$s.rss_installed5") - b))
    for t in deleted deleted5 deleted15; do
        R[$s.above_$t]=$(sub_mib "$(g "$s.rss_$t")" "$b")
        R[$s.above_pct_$t]=$(pct "$(g "$s.rss_$t")" "$b" "$b")
        R[$s.held_pct_$t]=$(pct "$(g "$s.rss_$t")" "$b" "$grow")
    done
    for k in anon file; do
        R[$s.${k}_pct]=$(pct "$(g "$s.${k}_deleted15")" "$(g "$s.${k}_before")" "$b")
    done
    for c in $(seq 2 "$CYCLES"); do
        R[$s.above_pct_c$c]=$(pct "$(g "$s.rss_deleted15_c$c")" "$b" "$b")
    done
done
{
    echo "flow_memory.sh: $N flows, $CYCLES cycle(s), one run, $(date -u +%FT%TZ), $(nproc) CPUs, kernel $(uname -r)"
    echo "peregrine: $(want peregrine && echo "$BIN" || echo "not run")"
    echo "OVS: $(want ovs && g ovs.version || echo "not run") (netdev datapath)"
    echo "flow lines like: $(g first_flow)"
    echo "One run on a noisy machine: compare the ratios, not the absolute numbers."
    echo
    printf '%-50s %14s %14s %8s\n' "" peregrine OVS "pg/OVS"
    echo "switch process RSS (MiB; OVS: ovs-vswitchd)"
    rows "  before install" mib rss_before
    rows "  right after install" mib rss_installed
    rows "  5 s after install" mib rss_installed5
    rows "  growth (5 s after - before), MiB" ident growth
    rows "  bytes/flow (5 s after - before)/N" ident bpf
    rows "  bytes/flow (right after - before)/N" ident bpf0
    echo "install"
    rows "  add-flows wall time (s)" secs install_ms
    rows "  add-flows exit status" ident install_rc
    rows "  installing tool max RSS (MiB)" mib install_tool_maxrss
    rows "  flow_count after install" ident flows_installed
    echo "delete all"
    rows "  del-flows wall time (s)" secs delete_ms
    rows "  del-flows exit status" ident delete_rc
    rows "  deleting tool max RSS (MiB)" mib delete_tool_maxrss
    rows "  flow_count at first poll after del-flows" ident flows_after_delete_first_poll
    rows "  dump-aggregate saying 0 returned at (s)" secs zero_seen_ms
    echo "switch process RSS after delete (MiB)"
    rows "  right after delete" mib rss_deleted
    rows "  5 s after delete" mib rss_deleted5
    rows "  15 s after delete" mib rss_deleted15
    echo "above the pre-install RSS"
    for t in deleted deleted5 deleted15; do
        case $t in deleted) l="right after" ;; deleted5) l="5 s after" ;; *) l="15 s after" ;; esac
        rows "  $l delete: MiB" ident "above_$t"
        rows "  $l delete: % of pre-install RSS" ident "above_pct_$t"
        rows "  $l delete: % of the growth still held" ident "held_pct_$t"
    done
    echo "RSS by kind (MiB): before install, 15 s after delete"
    for k in anon file; do
        case $k in anon) l="anonymous (RssAnon)" ;; *) l="file pages (RssFile)" ;; esac
        rows "  $l before" mib "${k}_before"
        rows "  $l 15 s after delete" mib "${k}_deleted15"
        rows "  $l: growth, % of pre-install RSS" ident "${k}_pct"
    done
    if [ "$CYCLES" -gt 1 ]; then
        echo "cycles: RSS (MiB) 5 s after each install, 15 s after each delete"
        rows "  cycle 1: installed" mib rss_installed5
        rows "  cycle 1: deleted" mib rss_deleted15
        for c in $(seq 2 "$CYCLES"); do
            rows "  cycle $c: installed" mib "rss_installed5_c$c"
            rows "  cycle $c: deleted" mib "rss_deleted15_c$c"
            rows "  cycle $c: deleted, % above pre-install RSS" ident "above_pct_c$c"
        done
    fi
    if want ovs; then
        echo "ovsdb-server RSS (MiB, OVS only)"
        for t in before installed installed5 deleted deleted5 deleted15; do
            row "  $t" - "$(mib "$(g "ovs.db_rss_$t")")"
        done
    fi
    # What went wrong in cycle $3 of switch $1, whose keys end in $2.
    cycle_notes() {
        local v k
        for k in install_rc delete_rc; do
            v=$(g "$1.$k$2")
            [ "$v" != - ] && [ "$v" != 0 ] && echo "NOTE: $1 cycle $3 $k=$v (124: stopped after ${STEP_TIMEOUT}s)"
        done
        v=$(g "$1.flows_installed$2")
        [ "$v" != - ] && [ "$v" != "$N" ] && echo "NOTE: $1 cycle $3 had $v flows after the install, not $N"
        v=$(g "$1.flows_after_delete$2")
        [ "$v" != - ] && [ "$v" != 0 ] && echo "NOTE: $1 cycle $3 had $v flows after the delete"
        return 0
    }
    for s in pg ovs; do
        cycle_notes "$s" "" 1
        for c in $(seq 2 "$CYCLES"); do cycle_notes "$s" "_c$c" "$c"; done
    done
    echo
    echo "raw values: $OUT/raw.txt; logs and tool output: $OUT/"
} | tee "$OUT/summary.txt"
