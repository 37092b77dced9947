#!/bin/bash
# Flood throughput (as root): 64-byte frames from h1 flooded to h2 and h3 through
# peregrine with the XDP fast tier on (`in_port=1,actions=flood`, served in the kernel by
# a broadcast group), with it off, and through a Linux bridge (the frames' destination MAC
# is nobody's, so the bridge floods too). Per device, ROUNDS runs of SECONDS s; prints
# the frames received per output port per second in each run and their median.
# The sender (examples/blast.rs, AF_XDP) runs on CPU 0; the device, with its ports'
# kernel receive work (threaded NAPI pinned there) and the hosts' receive work (which
# veth runs where the frame is forwarded), on CPU 1.
# Build first: cargo build --release -p peregrine -p bench --example blast.
set -u
PG=${PG:-target/release/peregrine}
BLAST=${BLAST:-target/release/examples/blast}
ROUNDS=${ROUNDS:-3}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-3}
S=ft$$
P=${S}p  # port names ${P}1..3: unique, so this run's NAPI threads are told apart
PID=
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null
  wait 2>/dev/null
  for n in 1 2 3 s; do ip netns del ${S}$n 2>/dev/null; done
}
trap cleanup EXIT

setup() {
  for n in 1 2 3 s; do ip netns add ${S}$n; done
  for n in 1 2 3; do
    ip link add $P$n netns ${S}s type veth peer name eth0 netns ${S}$n
    ip -n ${S}$n link set eth0 up
    ip netns exec ${S}$n ethtool -K eth0 gro on >/dev/null
    ip -n ${S}s link set $P$n up
    ip netns exec ${S}s sh -c "ethtool -K $P$n gro on >/dev/null && echo 1 > /sys/class/net/$P$n/threaded"
  done
  sleep 0.5
  # The ports' NAPI threads are named napi/<port>-<id> (cut at 15 characters).
  local want=napi/$P
  for c in /proc/[0-9]*/comm; do
    read -r comm <"$c" 2>/dev/null || continue
    case $comm in "${want:0:15}"*) pid=${c#/proc/}; taskset -p -c 1 "${pid%/comm}" >/dev/null ;; esac
  done
}
teardown() { for n in 1 2 3 s; do ip netns del ${S}$n; done; }
received() {
  echo $(( $(ip netns exec ${S}2 cat /sys/class/net/eth0/statistics/rx_packets) +
           $(ip netns exec ${S}3 cat /sys/class/net/eth0/statistics/rx_packets) ))
}
measure() {
  local name=$1 rates=()
  sleep 2
  "$BLAST" ${S}1 eth0 1 0 64 >/dev/null || exit 1
  for r in $(seq 1 "$ROUNDS"); do
    sleep 0.5
    local a b
    a=$(received)
    "$BLAST" ${S}1 eth0 "$SECONDS_PER_RUN" 0 64 >/dev/null || exit 1
    sleep 0.2
    b=$(received)
    rates+=("$(awk -v n=$((b - a)) -v s="$SECONDS_PER_RUN" 'BEGIN { printf "%.3f", n / 2 / s / 1e6 }')")
  done
  printf '%-14s Mpps per output port: %s  median %s\n' "$name" "${rates[*]}" \
    "$(printf '%s\n' "${rates[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')"
}

for mode in xdp off; do
  setup
  ip netns exec ${S}s taskset -c 1 "$PG" run --port ${P}1,backend=afxdp \
    --port ${P}2,backend=afxdp --port ${P}3,backend=afxdp --cpus 1 --fail-mode secure --mgmt none --state-dir none --fast-path $mode \
    --flow "in_port=1,actions=flood" >/dev/null 2>&1 &
  PID=$!
  measure "peregrine $mode"
  kill "$PID"; wait "$PID" 2>/dev/null; PID=
  teardown
done
setup
ip -n ${S}s link add br0 type bridge
for n in 1 2 3; do ip -n ${S}s link set $P$n master br0; done
ip -n ${S}s link set br0 up
measure "bridge"
