#!/usr/bin/env bash
# Frames lost while the switch restarts: a constant-rate UDP stream from one namespace
# host to another through `peregrine run` (secure mode, one flow installed over the
# management socket, restored from the state directory at the restart), restarted
# (SIGTERM, then the same command) in the middle of the stream. With the tier, the
# stopped switch leaves the kernel forwarding and the next one takes over.
#
# usage: scripts/restart_loss.sh [CASE ...]   (as root; release build first:
#        cargo build --release -p peregrine; needs trafgen from netsniff-ng)
# CASE: afpacket (the workers forward, AF_PACKET), afxdp (the workers, AF_XDP, no
#       tier), tier (AF_XDP ports with the in-kernel tier forwarding the flow);
#       default: all three. RATE (pps asked of trafgen as a gap between frames; the
#       rate it reached is printed: its rate mode, -b, sends in bursts that overflow
#       receive rings at any average rate, so this paces frame by frame, which on a
#       small machine tops out at a few tens of thousands per second), SECS (default 6) and AT (the restart, seconds into
#       the stream, default 2) from the environment. Each case runs once steady (no
#       restart: its loss must be 0 for the rate to be below capacity) and once with
#       the restart.
# CPUs: the generator (trafgen) and the sink on CPU 0; the switch, and the threaded
# NAPI of both switch ports and of the sink, on CPU 1.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-target/release/peregrine}
RATE=${RATE:-250000}
SECS=${SECS:-6}
AT=${AT:-2}
P=rl$$
W=$(mktemp -d /tmp/restart-loss.XXXXXX)
SW_PID=
cleanup() {
    [ -n "$SW_PID" ] && kill -TERM "$SW_PID" 2>/dev/null && wait "$SW_PID" 2>/dev/null || true
    for n in ${P}g ${P}s; do ip netns del "$n" 2>/dev/null || true; done
    ip link del ${P}p1 2>/dev/null || true
    ip link del ${P}p2 2>/dev/null || true
    # What the last stop left forwarding (the tier's pinned links).
    rm -rf "/sys/fs/bpf/peregrine/$P" "$W"
}
trap cleanup EXIT

bed() {
    # The switch's ports are in the root namespace, as a service's are: its pins (the
    # tier left forwarding across the restart) need the host's bpffs, which
    # `ip netns exec` hides behind a namespace's own /sys.
    for n in ${P}g ${P}s; do ip netns add "$n"; done
    ip link add ${P}p1 type veth peer name eth0 netns ${P}g
    ip link add ${P}p2 type veth peer name eth0 netns ${P}s
    for n in ${P}g ${P}s; do
        ip netns exec "$n" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
        ip -n "$n" link set eth0 up
    done
    for d in ${P}p1 ${P}p2; do
        echo 1 > /proc/sys/net/ipv6/conf/$d/disable_ipv6
        ip link set $d up
    done
    # The sink's end takes frames the kernel redirects to it (XDP needs GRO or a program).
    ip netns exec ${P}s ethtool -K eth0 gro on >/dev/null
    # A veth has NAPI only with GRO on or an XDP program: the others fail here and
    # their receive work runs in the sender's context.
    echo 1 > /sys/class/net/${P}p1/threaded 2>/dev/null || true
    echo 1 > /sys/class/net/${P}p2/threaded 2>/dev/null || true
    ip netns exec ${P}s sh -c "echo 1 > /sys/class/net/eth0/threaded" 2>/dev/null || true
    sleep 0.2
    for pid in $(pgrep -f "napi/${P}p" || true) $(pgrep -f "napi/eth0" || true); do
        taskset -pc 1 "$pid" >/dev/null 2>&1 || true
    done
}

start_switch() { # BACKEND FASTPATH
    taskset -c 1 "$BIN" run --port "${P}p1,backend=$1" \
        --port "${P}p2,backend=$1" --fail-mode secure --fast-path "$2" --cpus 1 \
        --name "$P" --mgmt "$W/m.sock" --state-dir "$W/state" >>"$W/switch.out" 2>>"$W/switch.log" &
    SW_PID=$!
    for _ in $(seq 100); do
        grep -q "switching between" "$W/switch.log" 2>/dev/null && return 0
        sleep 0.05
    done
    echo "the switch did not start:" >&2; cat "$W/switch.log" >&2; exit 1
}

stop_switch() {
    kill -TERM "$SW_PID"; wait "$SW_PID" || true; SW_PID=
}

rx() { ip netns exec ${P}s cat /sys/class/net/eth0/statistics/rx_packets; }
tx() { ip netns exec ${P}g cat /sys/class/net/eth0/statistics/tx_packets; }

# One run of CASE, restarting the switch or not ("restart" / "steady"); prints a line.
run_case() {
    local case=$1 mode=$2 backend fast
    case $case in
        afpacket) backend=afpacket fast=off ;;
        afxdp) backend=afxdp fast=off ;;
        tier) backend=afxdp fast=xdp ;;
        *) echo "unknown case $case" >&2; exit 2 ;;
    esac
    bed
    rm -rf "$W/state" "$W/switch.log" "$W/switch.out"
    start_switch "$backend" "$fast"
    "$BIN" ctl add-flow "$W/m.sock" "in_port=1,actions=output:2" >/dev/null
    local smac dmac
    smac=$(ip netns exec ${P}g cat /sys/class/net/eth0/address)
    dmac=$(ip netns exec ${P}s cat /sys/class/net/eth0/address)
    cat >"$W/frame.cfg" <<CFG
{ eth(da=$dmac, sa=$smac), ipv4(saddr=10.9.0.1, daddr=10.9.0.2, ttl=64), udp(sp=1000, dp=2000), fill(0x00, 18) }
CFG
    # Warm the path (the tier mirrors the flow from its first frames).
    ip netns exec ${P}g trafgen -q -i "$W/frame.cfg" -o eth0 -P 1 -n 1000 -b 10000pps >/dev/null 2>&1
    sleep 0.5
    local rx0 tx0 n=$((RATE * SECS)) down=0
    rx0=$(rx); tx0=$(tx)
    ip netns exec ${P}g taskset -c 0 trafgen -q -i "$W/frame.cfg" -o eth0 -P 1 -n "$n" \
        -t "$((1000000000 / RATE))ns" >/dev/null 2>&1 &
    local gen=$! g0
    g0=$(date +%s%N)
    # The sink's count every 5 ms: the longest time it did not grow is the gap.
    ( while kill -0 $gen 2>/dev/null; do echo "$(date +%s%N) $(rx)"; sleep 0.005; done ) \
        >"$W/samples" &
    local sampler=$!
    if [ "$mode" = restart ]; then
        sleep "$AT"
        local t0 t1
        t0=$(date +%s%N)
        stop_switch
        start_switch "$backend" "$fast"
        t1=$(date +%s%N)
        down=$(( (t1 - t0) / 1000000 ))
    fi
    wait $gen
    wait $sampler 2>/dev/null || true
    local gap
    gap=$(awk 'NR > 1 && $2 == last { if (!since) since = prev } $2 != last { if (since && $1 - since > best) best = $1 - since; since = 0 } { prev = $1; last = $2 } END { printf "%d", best / 1000000 }' "$W/samples")
    local secs
    secs=$(echo "($(date +%s%N) - $g0) / 1000000000" | bc -l)
    sleep 0.5
    local sent got pps
    sent=$(( $(tx) - tx0 )); got=$(( $(rx) - rx0 ))
    pps=$(echo "$sent / $secs" | bc -l)
    local restored
    restored=$(grep -o "restored [0-9]* flow(s)" "$W/switch.log" | tail -1 || true)
    printf '%-9s %-8s %6.0f pps  sent %8d  received %8d  lost %7d  (%.1f ms of the stream)  no frame at the sink for %4d ms  SIGTERM to the new switch forwarding %4d ms  %s\n' \
        "$case" "$mode" "$pps" "$sent" "$got" $((sent - got)) \
        "$(echo "($sent - $got) * 1000 / $pps" | bc -l)" "$gap" "$down" "${restored:-}"
    stop_switch
    [ -n "${VERBOSE:-}" ] && cat "$W/switch.out"
    rm -rf "/sys/fs/bpf/peregrine/$P"
    for n in ${P}g ${P}s; do ip netns del "$n"; done
    ip link del ${P}p1 2>/dev/null || true
    ip link del ${P}p2 2>/dev/null || true
}

cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=(afpacket afxdp tier)
echo "rate $RATE pps for $SECS s, restart at $AT s; $(uname -r); $BIN"
for c in "${cases[@]}"; do
    run_case "$c" steady
    run_case "$c" restart
done
