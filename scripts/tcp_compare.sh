#!/usr/bin/env bash
# Single-stream TCP (iperf3) between two namespace hosts whose veths keep the offloads
# `ip link add` gives them (checksum offload, TSO), through one device:
#
#   scripts/tcp_compare.sh DEVICE [SECONDS]
#
# DEVICE: peregrine (ports with the default backend), peregrine-afpacket,
# peregrine-afxdp, ovs (Open vSwitch's userspace datapath, system ports, as configured
# out of the box), ovs-tso (the same with other_config:userspace-tso-enable=true), or
# bridge (the Linux bridge). Prints iperf3's receiver line, or what iperf3 said when the
# transfer did not complete. Nothing is pinned. PEREGRINE may name the binary (default:
# target/release/peregrine).
#
# Needs root, iproute2, iperf3 (and Open vSwitch for ovs*). Everything it makes is named
# pgtc<pid>… or lives in a temporary folder, and is removed on exit, also on failure;
# Open vSwitch runs from that folder (its own database, sockets and pidfiles).
set -euo pipefail
DEV=${1:?DEVICE}
SECS=${2:-5}
BIN=${PEREGRINE:-target/release/peregrine}
P=pgtc$$
D=$(mktemp -d)
SW=
cleanup() {
    if [ -n "$SW" ]; then kill "$SW" 2>/dev/null || true; wait "$SW" 2>/dev/null || true; fi
    for f in vs.pid ovsdb.pid; do
        if [ -f "$D/$f" ]; then kill "$(cat "$D/$f")" 2>/dev/null || true; fi
    done
    sleep 0.3
    # The bridge, or Open vSwitch's internal port (a tap that outlives ovs-vswitchd).
    ip link del "${P}br" 2>/dev/null || true
    ip link del "${P}o" 2>/dev/null || true
    for n in 1 2; do
        ip netns del "${P}h$n" 2>/dev/null || true
        ip link del "${P}p$n" 2>/dev/null || true
    done
    rm -rf "$D"
}
trap cleanup EXIT
for n in 1 2; do
    ip netns add "${P}h$n"
    ip link add "${P}p$n" type veth peer name eth0 netns "${P}h$n"
    echo 1 >"/proc/sys/net/ipv6/conf/${P}p$n/disable_ipv6"
    ip link set "${P}p$n" up
    ip -n "${P}h$n" addr add "10.78.0.$n/24" dev eth0
    ip -n "${P}h$n" link set eth0 up
done
case $DEV in
peregrine | peregrine-afpacket | peregrine-afxdp)
    opt=
    [ "$DEV" != peregrine ] && opt=",backend=${DEV#peregrine-}"
    "$BIN" run --mgmt none --state-dir none --port "${P}p1$opt" --port "${P}p2$opt" >"$D/switch.log" 2>&1 &
    SW=$!
    ;;
bridge)
    ip link add "${P}br" type bridge
    ip link set "${P}p1" master "${P}br"
    ip link set "${P}p2" master "${P}br"
    ip link set "${P}br" up
    ;;
ovs | ovs-tso)
    ovsdb-tool create "$D/conf.db" /usr/share/openvswitch/vswitch.ovsschema
    ovsdb-server "$D/conf.db" --remote="punix:$D/db.sock" --pidfile="$D/ovsdb.pid" \
        --unixctl="$D/ovsdb.ctl" --log-file="$D/ovsdb.log" --no-chdir --detach 2>/dev/null
    vsctl() { ovs-vsctl --db="unix:$D/db.sock" --timeout=20 "$@"; }
    vsctl --no-wait init
    if [ "$DEV" = ovs-tso ]; then
        vsctl --no-wait set Open_vSwitch . other_config:userspace-tso-enable=true
    fi
    ovs-vswitchd "unix:$D/db.sock" --pidfile="$D/vs.pid" --unixctl="$D/vs.ctl" \
        --log-file="$D/vs.log" --no-chdir --detach 2>/dev/null
    vsctl add-br "${P}o" -- set bridge "${P}o" datapath_type=netdev \
        -- add-port "${P}o" "${P}p1" -- add-port "${P}o" "${P}p2"
    ;;
*)
    echo "unknown device $DEV" >&2
    exit 2
    ;;
esac
for _ in $(seq 50); do
    ip netns exec "${P}h1" ping -c1 -W1 10.78.0.2 >/dev/null 2>&1 && break
    sleep 0.2
done
ip netns exec "${P}h2" iperf3 -s -1 -p 5398 >/dev/null 2>&1 &
sleep 0.5
out=$(timeout $((SECS + 15)) ip netns exec "${P}h1" iperf3 -c 10.78.0.2 -p 5398 -t "$SECS" -f m 2>&1 || true)
if grep -q receiver <<<"$out"; then
    echo "$DEV: $(grep receiver <<<"$out")"
else
    echo "$DEV: the transfer did not complete in $((SECS + 15)) s: $(tail -2 <<<"$out" | tr '\n' ' ')"
fi
