#!/bin/bash
# Idle ping latency (as root), paired: h1 -> h2 through each device, all set up at once
# and measured in turns (ROUNDS rounds of N pings 10 ms apart per device, in a rotating
# order), so every device sees the same periods of this machine's speed. Devices:
#   xdp          peregrine, AF_XDP ports, the XDP fast tier (native XDP on veth)
#   xdp-generic  the same with the program attached in generic (skb) mode
#   off          peregrine with the tier off (every frame through the workers)
#   normal       peregrine with the tier as a standalone learning switch (NORMAL)
#   afpacket     peregrine with AF_PACKET ports (no XDP; every frame through the workers)
#   bridge       the Linux bridge
#   redirect     a one-line native XDP program redirecting p1 <-> p2 (no lookup: what
#                native XDP on veth costs by itself)
# Prints per device the median, p10 and p90 RTT over all its pings, and the median over
# rounds of each device's round median divided by the bridge's in the same round.
# ping runs on CPU 0; peregrine (worker and tier thread) on CPU 1; the kernel's forwarding
# runs in the softirq of the sending CPU. Build first: cargo build --release -p peregrine.
# PGARGS: more arguments for the peregrine devices' `peregrine run` (e.g. --fast-path-entries 1024).
set -u
PG=${PG:-target/release/peregrine}
N=${N:-50}
ROUNDS=${ROUNDS:-10}
DEVICES=${DEVICES:-xdp xdp-generic normal off bridge redirect}
S=pl$$
TMP=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  for i in $(seq 0 9); do for n in a b s; do ip netns del ${S}$i$n 2>/dev/null; done; done
  rm -rf "$TMP"
}
trap cleanup EXIT

# setup I: hosts ${S}Ia (10.9.I.1) and ${S}Ib (10.9.I.2) on p1/p2 in ${S}Is.
setup() {
  local i=$1
  for n in a b s; do ip netns add ${S}$i$n; ip -n ${S}$i$n link set lo up; done
  ip link add p1 netns ${S}${i}s type veth peer name eth0 netns ${S}${i}a
  ip link add p2 netns ${S}${i}s type veth peer name eth0 netns ${S}${i}b
  for n in a b; do
    ip -n ${S}$i$n link set eth0 up
    ip netns exec ${S}$i$n ethtool -K eth0 gro on >/dev/null
  done
  ip -n ${S}${i}a addr add 10.9.$i.1/24 dev eth0
  ip -n ${S}${i}b addr add 10.9.$i.2/24 dev eth0
  ip -n ${S}${i}s link set p1 up
  ip -n ${S}${i}s link set p2 up
}

start() {
  local i=$1 dev=$2
  case $dev in
    xdp|xdp-generic|off)
      local backend=afxdp mode=xdp
      [ "$dev" = xdp-generic ] && backend=afxdp-generic
      [ "$dev" = off ] && mode=off
      ip netns exec ${S}${i}s taskset -c 1 $PG run --state-dir none --port p1,backend=$backend \
        --port p2,backend=$backend --cpus 1 --fail-mode secure --mgmt none \
        --fast-path $mode ${PGARGS:-} --flow "in_port=1,actions=output:2" \
        --flow "in_port=2,actions=output:1" >"$TMP/$dev.log" 2>&1 &
      PIDS+=($!)
      ;;
    normal)
      ip netns exec ${S}${i}s taskset -c 1 $PG run --state-dir none --port p1,backend=afxdp \
        --port p2,backend=afxdp --cpus 1 --fail-mode standalone --mgmt none \
        ${PGARGS:-} >"$TMP/$dev.log" 2>&1 &
      PIDS+=($!)
      ;;
    afpacket)
      ip netns exec ${S}${i}s taskset -c 1 $PG run --state-dir none --port p1,backend=afpacket \
        --port p2,backend=afpacket --cpus 1 --fail-mode secure --mgmt none \
        ${PGARGS:-} --flow "in_port=1,actions=output:2" \
        --flow "in_port=2,actions=output:1" >"$TMP/$dev.log" 2>&1 &
      PIDS+=($!)
      ;;
    bridge)
      ip -n ${S}${i}s link add br0 type bridge
      ip -n ${S}${i}s link set p1 master br0
      ip -n ${S}${i}s link set p2 master br0
      ip -n ${S}${i}s link set br0 up
      ;;
    redirect)
      local i1 i2
      i1=$(ip netns exec ${S}${i}s cat /sys/class/net/p1/ifindex)
      i2=$(ip netns exec ${S}${i}s cat /sys/class/net/p2/ifindex)
      cat >"$TMP/r.c" <<'EOF'
typedef unsigned int __u32;
struct xdp_md { __u32 data, data_end, data_meta, ingress_ifindex, rx_queue_index; };
static long (*bpf_redirect)(__u32 ifindex, unsigned long long flags) = (void *)23;
__attribute__((section("xdp"), used)) int r(struct xdp_md *ctx) { return bpf_redirect(OUT, 0); }
char _license[] __attribute__((section("license"), used)) = "GPL";
EOF
      clang -O2 -target bpf -c "$TMP/r.c" -o "$TMP/r1.o" -DOUT=$i2 || exit 1
      clang -O2 -target bpf -c "$TMP/r.c" -o "$TMP/r2.o" -DOUT=$i1 || exit 1
      ip -n ${S}${i}s link set dev p1 xdpdrv obj "$TMP/r1.o" sec xdp || exit 1
      ip -n ${S}${i}s link set dev p2 xdpdrv obj "$TMP/r2.o" sec xdp || exit 1
      ;;
    *) echo "unknown device $dev" >&2; exit 2 ;;
  esac
}

devs=($DEVICES)
for i in "${!devs[@]}"; do setup "$i"; start "$i" "${devs[$i]}"; done
sleep 3
for i in "${!devs[@]}"; do
  ip netns exec ${S}${i}a ping -c 20 -i 0.01 -q 10.9.$i.2 >/dev/null
done
for r in $(seq 1 "$ROUNDS"); do
  for k in "${!devs[@]}"; do
    i=$(( (k + r) % ${#devs[@]} ))
    ip netns exec ${S}${i}a taskset -c 0 ping -c "$N" -i 0.01 10.9.$i.2 |
      sed -n 's/.*time=\([0-9.]*\) ms/\1/p' | sed "s/^/$r /" >>"$TMP/${devs[$i]}.rtt"
  done
done
for d in "${devs[@]}"; do
  awk -v d="$d" '{ print $2 * 1000 }' "$TMP/$d.rtt" | sort -n | awk -v d="$d" '
    { a[NR] = $1 }
    END { printf "%-12s median %5.1f us  p10 %5.1f  p90 %5.1f  (n=%d)\n", d,
          a[int(NR/2)+1], a[int(NR*0.1)+1], a[int(NR*0.9)+1], NR }'
done
if [ -f "$TMP/bridge.rtt" ]; then
  for d in "${devs[@]}"; do
    [ "$d" = bridge ] && continue
    for r in $(seq 1 "$ROUNDS"); do
      m() { awk -v r="$r" '$1 == r { print $2 }' "$TMP/$1.rtt" | sort -n | awk '{ a[NR] = $1 } END { print a[int(NR/2)+1] }'; }
      echo "$(m "$d") $(m bridge)"
    done | awk '{ print $1 / $2 }' | sort -n | awk -v d="$d" '
      { a[NR] = $1 } END { printf "%-12s / bridge, median of %d paired rounds: %.3f\n", d, NR, a[int(NR/2)+1] }'
  done
fi
