#!/bin/bash
# Idle ping latency (as root): h1 -> h2 through peregrine with the XDP fast tier on and
# off (AF_XDP ports, two flows) and through a Linux bridge; median, p10 and p90 RTT of N
# pings 10 ms apart. Build first: cargo build --release -p peregrine.
# ping pinned to CPU 0, the device (peregrine's worker and tier thread) to CPU 1.
set -u
PG=${PG:-target/release/peregrine}
N=${N:-300}
S=pc$$
cleanup() { [ -n "${PID:-}" ] && kill $PID 2>/dev/null; wait 2>/dev/null; for n in a b s; do ip netns del ${S}$n 2>/dev/null; done; }
trap cleanup EXIT
setup() {
  for n in a b s; do ip netns add ${S}$n; ip -n ${S}$n link set lo up; done
  ip link add p1 netns ${S}s type veth peer name eth0 netns ${S}a
  ip link add p2 netns ${S}s type veth peer name eth0 netns ${S}b
  for n in a b; do ip -n ${S}$n link set eth0 up; ip netns exec ${S}$n ethtool -K eth0 gro on >/dev/null; done
  ip -n ${S}a addr add 10.9.0.1/24 dev eth0; ip -n ${S}b addr add 10.9.0.2/24 dev eth0
  ip -n ${S}s link set p1 up; ip -n ${S}s link set p2 up
}
median() { ip netns exec ${S}a taskset -c 0 ping -c $N -i 0.01 10.9.0.2 | sed -n 's/.*time=\([0-9.]*\) ms/\1/p' | sort -n | awk '{a[NR]=$1} END {printf "median %.3f ms  p10 %.3f  p90 %.3f  (n=%d)\n", a[int(NR/2)+1], a[int(NR*0.1)+1], a[int(NR*0.9)+1], NR}'; }
for mode in xdp off; do
  setup
  ip netns exec ${S}s taskset -c 1 $PG run --port p1,backend=afxdp --port p2,backend=afxdp --cpus 1 --fail-mode secure --mgmt none --fast-path $mode --flow "in_port=1,actions=output:2" --flow "in_port=2,actions=output:1" >/dev/null 2>&1 &
  PID=$!; sleep 2
  ip netns exec ${S}a ping -c 20 -i 0.01 -q 10.9.0.2 >/dev/null
  echo -n "peregrine fast path $mode: "; median
  kill $PID; wait $PID 2>/dev/null; PID=
  for n in a b s; do ip netns del ${S}$n; done
done
setup
ip -n ${S}s link add br0 type bridge; ip -n ${S}s link set p1 master br0; ip -n ${S}s link set p2 master br0; ip -n ${S}s link set br0 up
sleep 1
ip netns exec ${S}a ping -c 20 -i 0.01 -q 10.9.0.2 >/dev/null
echo -n "linux bridge: "; median
