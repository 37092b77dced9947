#!/bin/bash
# The fast tier's program run time (as root, needs bpftool): runs COMMAND with the
# kernel's BPF run-time statistics on (sysctl kernel.bpf_stats_enabled, restored after),
# samples every loaded XDP program named `fastpath` once a second, and prints for each
# program the mean run time per frame over every busy second (more than MIN_RUNS runs)
# and over its whole life. The statistics add two clock reads per run (tens of ns).
#
#   scripts/fastpath/prog_time.sh target/release/peregrine bench table-size \
#       --dut peregrine-xdp --table-sizes 128K --runs 3 --seconds 1
#   PGARGS=... DEVICES="xdp redirect" scripts/fastpath/prog_time.sh \
#       scripts/fastpath/ping_latency.sh       # idle: the program starts cold each frame
#
# Programs named `r` (ping_latency.sh's one-line redirect) are reported too.
set -u
[ $# -ge 1 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }
command -v bpftool >/dev/null || { echo "$0: bpftool not found (apt-get install bpftool)" >&2; exit 2; }
MIN_RUNS=${MIN_RUNS:-100000}
TMP=$(mktemp -d)
old=$(sysctl -n kernel.bpf_stats_enabled)
SAMPLER=
cleanup() {
  [ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null
  sysctl -qw kernel.bpf_stats_enabled="$old"
  rm -rf "$TMP"
}
trap cleanup EXIT
sysctl -qw kernel.bpf_stats_enabled=1 || exit 1

# One line per sample and program: time id name run_time_ns run_cnt.
(
  while :; do
    bpftool -j prog show 2>/dev/null | python3 -c '
import json, sys, time
now = time.time()
for p in json.load(sys.stdin):
    if p.get("type") == "xdp" and p.get("name") in ("fastpath", "r"):
        print("%.3f %d %s %d %d" % (now, p["id"], p["name"], p.get("run_time_ns", 0), p.get("run_cnt", 0)))
'
    sleep 1
  done >"$TMP/samples"
) &
SAMPLER=$!
"$@"
rc=$?
kill "$SAMPLER" 2>/dev/null
wait "$SAMPLER" 2>/dev/null
SAMPLER=

sort -k2,2n -k1,1n "$TMP/samples" | awk -v min="$MIN_RUNS" '
  {
    id = $2
    if (id in cnt && $5 - cnt[id] > min) busy[id] = busy[id] sprintf(" %.0f", ($4 - t[id]) / ($5 - cnt[id]))
    t[id] = $4; cnt[id] = $5; name[id] = $3
  }
  END {
    for (id in cnt) {
      if (cnt[id] == 0) continue
      printf "program %s (id %s): %.0f ns/run over %d runs; busy seconds:%s\n",
        name[id], id, t[id] / cnt[id], cnt[id], (id in busy) ? busy[id] : " none"
    }
  }'
exit $rc
