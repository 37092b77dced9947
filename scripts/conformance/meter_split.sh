#!/usr/bin/env bash
# How peregrine splits traffic at a DSCP-remark meter when the offered rate is exactly
# what an os-ken meter case asks for: 1500-byte IPv4/TCP frames with DSCP 18, paced by
# the clock, through `in_port=1,actions=meter:1,output:2` with one dscp_remark band
# (prec_level 1: DSCP 18 becomes 20). It prints what was sent, what arrived by DSCP and
# the band's own count. os-ken's tester expects, within 10%, the band's rate unremarked
# and the rest remarked; this shows whether a failed case is the switch or the tester's
# generator falling short of the rate.
#
# usage: scripts/conformance/meter_split.sh pktps|kbps BAND-RATE OFFERED-PPS SECONDS
#   e.g. scripts/conformance/meter_split.sh pktps 1000 2000 30   (02_DSCP_REMARK_01_PKTPS_01_1000)
#
# The switch runs on CPU 1 (its worker pinned there), sender and counter on CPU 0. Needs
# root; the switch is $PEREGRINE, else target/release/peregrine. Everything it makes (two
# namespaces, two veth pairs, the switch) is removed on exit.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
[ $# -eq 4 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
unit=$1 rate=$2 pps=$3 secs=$4
case "$unit" in pktps|kbps) ;; *) echo "meter_split.sh: pktps or kbps, not $unit" >&2; exit 2 ;; esac
for n in "$rate" "$pps" "$secs"; do
    [[ "$n" =~ ^[0-9]+$ ]] || { echo "meter_split.sh: $n is not a whole number" >&2; exit 2; }
done
[ "$(id -u)" = 0 ] || { echo "meter_split.sh: needs root" >&2; exit 2; }
P=${PEREGRINE:-$ROOT/target/release/peregrine}
[ -x "$P" ] || { echo "meter_split.sh: no peregrine at $P" >&2; exit 2; }
T=ms$$
D=$(mktemp -d)
PG=
cleanup() {
    [ -n "$PG" ] && { kill "$PG" 2>/dev/null || true; wait "$PG" 2>/dev/null || true; }
    for i in 1 2; do ip netns del "${T}h$i" 2>/dev/null || true; ip link del "${T}p$i" 2>/dev/null || true; done
    rm -rf "$D"
}
trap cleanup EXIT
for i in 1 2; do
    ip netns add "${T}h$i"
    ip link add "${T}p$i" type veth peer name eth0 netns "${T}h$i"
    ip link set "${T}p$i" up
    ip -n "${T}h$i" link set eth0 up
    ip netns exec "${T}h$i" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
done
taskset -c 1 "$P" run --port "${T}p1" --port "${T}p2" --cpus 1 --fail-mode secure \
    --controller tcp:127.0.0.1:1 --state-dir none --mgmt "$D/m.mgmt" > "$D/switch.log" 2>&1 &
PG=$!
for _ in $(seq 50); do [ -S "$D/m.mgmt" ] && break; sleep 0.1; done
"$P" ctl add-meter "$D/m.mgmt" "meter=1,$unit,band=type=dscp_remark,rate=$rate,prec_level=1"
"$P" ctl add-flow "$D/m.mgmt" "in_port=1,actions=meter:1,output:2"
ip netns exec "${T}h2" taskset -c 0 python3 "$HERE/meter_split.py" count eth0 $((secs + 2)) > "$D/count" &
C=$!
sleep 0.5
echo "sent:      $(ip netns exec "${T}h1" taskset -c 0 python3 "$HERE/meter_split.py" send eth0 "$pps" "$secs")"
wait "$C"
echo "by DSCP:   $(cat "$D/count")"
echo "band:      $("$P" ctl meter-stats "$D/m.mgmt" | tail -1)"
