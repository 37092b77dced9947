#!/usr/bin/env bash
# Soak: `peregrine run` forwarding for a long time under load while its flow table
# churns, its flows are dumped every second and misbehaving clients come and go; then a
# report of forwarding, loss, memory (RSS) over time, panics and how the switch stops.
# Outside CI (30 minutes by default); CI runs a 60-second version
# (crates/peregrine/tests/soak_netns.rs).
#
# usage: scripts/soak.sh [--binary PATH] [--duration SECONDS] [--rate PPS]
#                        [--churn FLOW_MODS_PER_S] [--out DIR]
#   --binary    the peregrine binary (default target/release/peregrine, else
#               target/debug/peregrine)
#   --duration  seconds of soak (default 1800)
#   --rate      frames/s offered during the soak; without it the zero-loss rate is
#               measured first (3-second trials, see below) and 80 % of it is offered
#   --churn     flow-mods per second to the switch during the soak (default 10000; 0: none)
#   --out       where the report goes (default soak-results): summary.txt, rss.csv (one
#               row a second: RSS, frames sent and received so far), dump_flows.csv (one
#               row per dump: its time and flows listed), misbehave.log, churn.json,
#               search.txt, and the switch's switch.log (stderr) and switch.out (stdout)
# Needs root (network namespaces), iproute2, python3 and taskset.
#
# The bed: two hosts, each a network namespace joined to the root namespace by a veth
# pair whose root end is a switch port; the hosts' eth0 as `ip link add` makes them
# (checksum and segmentation offloads on, GRO off), IPv6 off so they send nothing
# unasked. The switch runs in the root namespace in secure mode with one flow,
# `in_port=1,actions=output:2`, its worker pinned to the last CPU; the generator is
# pinned to CPU 0.
#
# Load, all at once for the whole duration:
# - traffic: 64-byte UDP frames over 64 flows (UDP source ports) from host 1 to a MAC
#   nobody has behind port 2, paced by the clock (a Python AF_PACKET sender: the
#   project's own generator runs only inside `peregrine bench`);
# - churn: an OpenFlow 1.3 client on the management socket adds and deletes (strict)
#   priority-5 exact IPv4 flows on addresses no frame carries, in table 0, in batches
#   every 100 ms, each batch closed by a barrier whose reply it waits for; the rate it
#   reached is reported (what the switch acknowledged, not what was asked). The churn
#   flows drop what they match, so a churn flow taking traffic would show as loss;
# - `peregrine ctl dump-flows` every second, each one timed;
# - every 10 s a misbehaving client, in turn: one that sends HELLO and 200 flow-stats
#   requests and never reads, holding the connection 3 s; one that sends 4 KiB of
#   random bytes (the first header's length set to 64, so that the switch gets a whole
#   message that is no HELLO) and waits up to 5 s for the switch to close; one that
#   sends HELLO and the first bytes of a 64 KiB message, holding 3 s.
#
# The zero-loss rate (without --rate): a 3-second trial flat out gives the forwarded
# rate F; trials at F, 0.9 F, 0.8 F, … (at most 8 in all) until one loses no frame;
# that trial's sent rate is the zero-loss rate, and the soak offers 80 % of it. A trial
# that loses nothing flat out makes the generator the limit (said in the report).
#
# Counting: sent is host 1's eth0 tx_packets + tx_dropped (what the host handed to its
# interface), received host 2's eth0 rx_packets, both from /sys/class/net in the
# namespaces, before and after (1 s after the generator stops).
#
# Pass (exit 0) only if all of:
# - no "panicked" in the switch's stderr;
# - the switch is alive at the end and exits 0 on SIGTERM (within 20 s);
# - loss < 0.1 % of the frames sent;
# - RSS growth < 1 %: the median of the first minute's samples against the median of
#   the last minute's, for runs of at least 10 minutes; shorter runs compare the first
#   and last quarter (at most a minute each) against a looser 10 %, since the switch's
#   warm-up (buffers, tables, the churn's flows) dominates a short run;
# - every churn flow-mod accepted (no OpenFlow error), and the flow table back to the
#   one forwarding flow once the churn stopped;
# - every dump-flows answered.
# Exit 1: a criterion failed; 2: the soak could not run (bad arguments, no bed, no
# switch, a failed command).
set -euo pipefail
trap 'echo "soak: line $LINENO: \`$BASH_COMMAND\` failed" >&2; exit 2' ERR

die() { echo "soak: $*" >&2; exit 2; }

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=
DURATION=1800
RATE=
CHURN=10000
OUT=soak-results

while [ $# -gt 0 ]; do
    case $1 in
        --binary) [ $# -ge 2 ] || die "--binary needs a path"; BIN=$2; shift 2 ;;
        --duration) [ $# -ge 2 ] || die "--duration needs seconds"; DURATION=$2; shift 2 ;;
        --rate) [ $# -ge 2 ] || die "--rate needs frames/s"; RATE=$2; shift 2 ;;
        --churn) [ $# -ge 2 ] || die "--churn needs flow-mods/s"; CHURN=$2; shift 2 ;;
        --out) [ $# -ge 2 ] || die "--out needs a directory"; OUT=$2; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
done
[[ $DURATION =~ ^[0-9]+$ ]] && [ "$DURATION" -ge 10 ] || die "--duration: whole seconds, at least 10"
[[ $CHURN =~ ^[0-9]+$ ]] && [ "$CHURN" -le 500000 ] || die "--churn: a whole number up to 500000"
if [ -n "$RATE" ]; then
    [[ $RATE =~ ^[0-9]+$ ]] && [ "$RATE" -ge 1 ] || die "--rate: whole frames per second"
fi
if [ -z "$BIN" ]; then
    if [ -x "$ROOT/target/release/peregrine" ]; then BIN=$ROOT/target/release/peregrine
    else BIN=$ROOT/target/debug/peregrine; fi
fi
[ -x "$BIN" ] || die "no binary $BIN (cargo build -p peregrine, or --binary)"
BIN=$(realpath "$BIN")
[ "$(id -u)" -eq 0 ] || die "needs root (network namespaces)"
for t in ip python3 taskset; do command -v "$t" >/dev/null || die "needs $t"; done
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
rm -f "$OUT"/{summary.txt,rss.csv,dump_flows.csv,misbehave.log,churn.json,search.txt,switch.log,switch.out} \
    "$OUT"/dump_flows.err.*

NCPU=$(nproc)
GEN_CPU=0
SW_CPU=$((NCPU - 1))
P=sk$$                      # names: sk<pid>h1, sk<pid>h2 (namespaces and root-side ports)
H1=${P}h1 H2=${P}h2
W=$(mktemp -d /tmp/peregrine-soak.XXXXXX)
SOCK=$W/mgmt.sock
SW_PID=
BG_PIDS=()

# SIGTERM to one of our background processes, if it still runs.
stop_pid() {
    if kill -0 "$1" 2>/dev/null; then kill -TERM "$1" 2>/dev/null || true; fi
}

cleanup() {
    local p
    touch "$W/stop" 2>/dev/null || true
    for p in "${BG_PIDS[@]}"; do stop_pid "$p"; done
    if [ -n "$SW_PID" ] && kill -0 "$SW_PID" 2>/dev/null; then
        kill -KILL "$SW_PID" 2>/dev/null || true
        wait "$SW_PID" 2>/dev/null || true
    fi
    for p in "${BG_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    ip netns del "$H1" 2>/dev/null || true
    ip netns del "$H2" 2>/dev/null || true
    ip link del "$H1" 2>/dev/null || true
    ip link del "$H2" 2>/dev/null || true
    rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The helpers: traffic, churn, misbehaving clients and the report.
cat >"$W/soak.py" <<'PY'
import json, os, socket, statistics, struct, sys, time

ANY = 0xFFFFFFFF
CHURN_PRIORITY = 5


def hdr(kind, length, xid):
    return struct.pack("!BBHI", 4, kind, length, xid)


def hello():
    return hdr(0, 8, 1)


def churn_match(i):
    # eth_type=0x0800, ipv4_dst=10.250.(i >> 8).(i & 255): no frame of the soak's has it.
    oxm = struct.pack("!IH", 0x80000A02, 0x0800)
    oxm += struct.pack("!I4B", 0x80001804, 10, 250, (i >> 8) & 255, i & 255)
    n = 4 + len(oxm)
    return struct.pack("!HH", 1, n) + oxm + bytes((8 - n % 8) % 8)


def flow_mod(xid, command, i):
    # No instructions: the flow drops what it matches.
    body = struct.pack("!QQBBHHHIIIH2x", 0, 0, 0, command, 0, 0, CHURN_PRIORITY,
                       ANY, ANY, ANY, 0) + churn_match(i)
    return hdr(14, 8 + len(body), xid) + body


def flow_stats_request(xid):
    body = struct.pack("!HH4x", 1, 0)  # OFPMP_FLOW
    body += struct.pack("!B3xII4xQQ", 0xFF, ANY, ANY, 0, 0)
    body += struct.pack("!HH4x", 1, 4)  # an empty OXM match
    return hdr(18, 8 + len(body), xid) + body


class Conn:
    def __init__(self, path, timeout):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(path)
        self.buf = bytearray()

    def recv(self):
        while True:
            if len(self.buf) >= 8:
                n = struct.unpack_from("!H", self.buf, 2)[0]
                if n < 8:
                    raise ValueError("a message of length %d" % n)
                if len(self.buf) >= n:
                    m = bytes(self.buf[:n])
                    del self.buf[:n]
                    return m
            d = self.s.recv(1 << 16)
            if not d:
                raise EOFError("the switch closed the connection")
            self.buf += d


def churn(path, rate, secs, out):
    """Adds and strictly deletes churn flows at RATE flow-mods/s for SECS seconds."""
    tick = 0.1
    per = max(1, min(30000, round(rate * tick / 2)))  # adds per batch, as many deletes
    c = Conn(path, 30)
    c.s.sendall(hello())
    first = c.recv()
    if first[1] != 0:
        raise SystemExit("churn: no HELLO from the switch: type %d" % first[1])
    xid = 100
    mods = errors = late = 0
    first_error = None
    waits = []
    t0 = time.monotonic()
    max_batches = int(secs / tick) + 1

    def batch(add_at, del_at):
        nonlocal xid, mods, errors, first_error
        msgs = []
        for base, cmd in ((add_at, 0), (del_at, 4)):  # OFPFC_ADD, OFPFC_DELETE_STRICT
            if base is None:
                continue
            for j in range(per):
                xid += 1
                msgs.append(flow_mod(xid, cmd, (base + j) % 65536))
        xid += 1
        bx = xid
        t = time.monotonic()
        c.s.sendall(b"".join(msgs) + hdr(20, 8, bx))
        for _ in range(10 * len(msgs) + 100):
            m = c.recv()
            if m[1] == 1:
                errors += 1
                if first_error is None:
                    first_error = "type %d code %d" % struct.unpack_from("!HH", m, 8)
            elif m[1] == 2:  # echo request
                c.s.sendall(hdr(3, len(m), struct.unpack_from("!I", m, 4)[0]) + m[8:])
            elif m[1] == 21 and struct.unpack_from("!I", m, 4)[0] == bx:
                break
        else:
            raise SystemExit("churn: no barrier reply")
        waits.append(time.monotonic() - t)
        mods += len(msgs)

    k = 0
    while k < max_batches:
        now = time.monotonic()
        if now - t0 >= secs:
            break
        due = t0 + k * tick
        if due > now:
            time.sleep(due - now)
        elif now - due > tick:
            late += 1
        batch((k * per) % 65536, ((k - 1) * per) % 65536 if k > 0 else None)
        k += 1
    elapsed = time.monotonic() - t0
    in_time = mods
    if k > 0:
        batch(None, ((k - 1) * per) % 65536)  # the last batch's flows go too
    waits.sort()
    r = {
        "target_per_s": rate,
        "batches": k,
        "flow_mods_per_batch": 2 * per,
        "flow_mods": mods,
        "seconds": round(elapsed, 3),
        "achieved_per_s": round(in_time / elapsed, 1) if elapsed > 0 else 0,
        "errors": errors,
        "first_error": first_error,
        "late_batches": late,
        "barrier_ms_median": round(1000 * waits[len(waits) // 2], 2) if waits else None,
        "barrier_ms_max": round(1000 * waits[-1], 2) if waits else None,
    }
    with open(out, "w") as f:
        json.dump(r, f, indent=1)


def nonreader(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    s.sendall(hello())
    n = 0
    try:
        for i in range(200):
            s.sendall(flow_stats_request(1000 + i))
            n += 1
    except OSError as e:
        print("nonreader: stopped sending after %d requests: %s" % (n, e))
    time.sleep(3)
    s.close()
    print("nonreader: HELLO and %d flow-stats requests, nothing read, held 3 s" % n)


def garbage(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    # Random bytes whose first header says 64 bytes, so the switch frames a whole
    # message that is no HELLO (a random length would mostly leave it waiting).
    junk = bytearray(os.urandom(4096))
    struct.pack_into("!H", junk, 2, 64)
    try:
        s.sendall(junk)
    except OSError as e:
        print("garbage: the switch closed while we sent: %s" % e)
        return
    got, closed = 0, False
    end = time.monotonic() + 5
    try:
        while time.monotonic() < end:
            d = s.recv(1 << 16)
            if not d:
                closed = True
                break
            got += len(d)
    except OSError:
        pass
    s.close()
    print("garbage: 4096 random bytes sent, %d bytes answered, %s" %
          (got, "closed by the switch" if closed else "still open after 5 s"))


def partial(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(path)
    s.sendall(hello() + hdr(14, 0xFFFF, 7) + bytes(100))
    time.sleep(3)
    s.close()
    print("partial: HELLO and 108 bytes of a 65535-byte flow-mod, held 3 s")


def udp_frame(src_mac, sport):
    dst = bytes.fromhex("02534b000002")  # a MAC nobody has: host 2 counts and drops it
    ip = bytearray(struct.pack("!BBHHHBBH4s4s", 0x45, 0, 46, 0, 0x4000, 64, 17, 0,
                               bytes([10, 254, 0, 1]), bytes([10, 254, 0, 99])))
    s = sum(struct.unpack("!10H", ip))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    struct.pack_into("!H", ip, 10, ~s & 0xFFFF)
    udp = struct.pack("!HHHH", sport, 9, 26, 0) + bytes(18)
    return dst + src_mac + b"\x08\x00" + bytes(ip) + udp


def send(ifname, pps, secs, flows, out):
    """Frames out of IFNAME at PPS a second (0: as fast as the socket takes them)."""
    with open("/sys/class/net/%s/address" % ifname) as f:
        mac = bytes.fromhex(f.read().strip().replace(":", ""))
    frames = [udp_frame(mac, 1024 + i) for i in range(flows)]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((ifname, 0))
    snd = s.send
    nf = len(frames)
    # At most 2 ms of frames at once: after a stall the rest is counted as missed.
    burst = max(64, pps // 500) if pps > 0 else 256
    ring = frames * (burst // nf + 2)
    n = failed = missed = i = 0
    cap = int((pps or 2_000_000) * (secs + 1))
    t0 = time.monotonic()
    end = t0 + secs
    while n < cap:
        now = time.monotonic()
        if now >= end:
            break
        owed = int((now - t0) * pps) - n - missed if pps > 0 else burst
        if owed > burst:
            missed += owed - burst
            owed = burst
        if owed <= 0:
            time.sleep(0.0001)
            continue
        for f in ring[i:i + owed]:
            try:
                snd(f)
            except OSError:
                failed += 1
        i = (i + owed) % nf
        n += owed
    el = time.monotonic() - t0
    r = {"asked_pps": pps, "sent": n - failed, "failed": failed, "missed": missed,
         "seconds": round(el, 3), "pps": round((n - failed) / el, 1)}
    with open(out, "w") as f:
        json.dump(r, f)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def report(outdir, facts_file):
    facts = {}
    with open(facts_file) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            facts[k] = v
    dur = int(facts["duration"])
    rows = []
    with open(os.path.join(outdir, "rss.csv")) as f:
        next(f)
        for line in f:
            t, rss, sent, recv = line.strip().split(",")
            if rss and sent and recv:
                rows.append((int(t), int(rss), int(sent), int(recv)))
    dumps = []
    with open(os.path.join(outdir, "dump_flows.csv")) as f:
        next(f)
        for line in f:
            t, ms, flows, rc = line.strip().split(",")
            dumps.append((int(t), float(ms), int(flows or 0), int(rc)))
    try:
        with open(os.path.join(outdir, "churn.json")) as f:
            ch = json.load(f)
    except (OSError, ValueError):
        ch = None
    mis = []
    if os.path.exists(os.path.join(outdir, "misbehave.log")):
        with open(os.path.join(outdir, "misbehave.log")) as f:
            mis = [l.rstrip("\n") for l in f if l.strip()]

    lines, fails = [], []
    say = lines.append
    say("peregrine soak, %s" % facts["when"])
    say("machine: %s CPUs, Linux %s; binary %s" % (facts["ncpu"], facts["kernel"], facts["binary"]))
    say("switch: %s" % facts["banner"])
    say("duration: %d s (samples: %d)" % (dur, len(rows)))
    say("")
    say("rate: %s" % facts["rate_note"])
    sent = int(facts["sent"])
    recv = int(facts["received"])
    lost = sent - recv
    loss = 100.0 * lost / sent if sent else float("nan")
    say("forwarding: sent %d frames (%.0f/s), received %d (%.0f/s), lost %d: %.4f %% (bound 0.1 %%)"
        % (sent, sent / dur, recv, recv / dur, lost, loss))
    try:
        g = json.loads(facts["gen"])
        say("generator: asked %d/s, sent %.0f/s (%d frames not sent: it fell behind; "
            "%d send errors)" % (g["asked_pps"], g["pps"], g["missed"], g["failed"]))
    except ValueError:
        say("generator: %s" % facts["gen"])
        fails.append("the generator failed")
    if not sent or not loss < 0.1:
        fails.append("loss %.4f %% (bound 0.1 %%)" % loss)

    if ch:
        say("churn: asked %s flow-mods/s, reached %.0f/s (%d flow-mods in %d batches of %d, "
            "each closed by a barrier: reply after %s ms median, %s ms at most; late batches: "
            "%d), %d refused%s"
            % (ch["target_per_s"], ch["achieved_per_s"], ch["flow_mods"], ch["batches"],
               ch["flow_mods_per_batch"], ch["barrier_ms_median"], ch["barrier_ms_max"],
               ch["late_batches"], ch["errors"],
               " (first: %s)" % ch["first_error"] if ch["first_error"] else ""))
        if ch["errors"]:
            fails.append("%d churn flow-mods refused" % ch["errors"])
    elif facts["churn"] != "0":
        say("churn: no result (%s)" % facts["churn_rc"])
        fails.append("the churn client failed (%s)" % facts["churn_rc"])
    else:
        say("churn: none asked")
    say("flow table after the churn: %s flow(s) (expected 1)" % facts["flows_after"])
    if facts["flows_after"] != "1":
        fails.append("%s flows left after the churn (expected 1)" % facts["flows_after"])

    ok = [d for d in dumps if d[3] == 0]
    bad = len(dumps) - len(ok)
    if ok:
        ms = sorted(d[1] for d in ok)
        say("dump-flows: %d dumps, %d failed; time median %.1f ms, p95 %.1f ms, max %.1f ms; "
            "flows listed median %d, max %d"
            % (len(dumps), bad, median(ms), ms[min(len(ms) - 1, int(0.95 * len(ms)))], ms[-1],
               median([d[2] for d in ok]), max(d[2] for d in ok)))
    else:
        say("dump-flows: %d dumps, none answered" % len(dumps))
    if bad or not dumps:
        fails.append("%d of %d dump-flows failed" % (bad, len(dumps)))

    kinds = {}
    for l in mis:
        k = l.split()[1] if len(l.split()) > 1 else "?"
        kinds[k] = kinds.get(k, 0) + 1
    failed_clients = sum(1 for l in mis if " rc=0 " not in l)
    say("misbehaving clients: %d (%s), %d of them failed to run (misbehave.log)"
        % (len(mis), ", ".join("%s %d" % kv for kv in sorted(kinds.items())) or "none",
           failed_clients))

    rss = [r[1] for r in rows]
    if rss:
        w = 60 if dur >= 600 else max(1, min(60, len(rss) // 4))
        bound = 1.0 if dur >= 600 else 10.0
        first, last = median(rss[:w]), median(rss[-w:])
        growth = 100.0 * (last - first) / first
        say("RSS: first %d s median %.0f KiB, last %d s median %.0f KiB: growth %.2f %% "
            "(bound %.0f %%); min %d KiB, max %d KiB"
            % (w, first, w, last, growth, bound, min(rss), max(rss)))
        if not growth < bound:
            fails.append("RSS growth %.2f %% (bound %.0f %%)" % (growth, bound))
    else:
        say("RSS: no samples")
        fails.append("no RSS samples")

    panics = int(facts["panics"])
    say("panics: %d; alive at the end: %s; exit on SIGTERM: %s"
        % (panics, facts["alive"], facts["exit"]))
    if panics:
        fails.append("%d panic(s) in switch.log" % panics)
    if facts["alive"] != "yes":
        fails.append("the switch was not alive at the end")
    if facts["exit"] != "0":
        fails.append("exit status %s on SIGTERM" % facts["exit"])

    # Over time: forwarding and RSS per interval.
    step = 60 if dur >= 600 else max(10, dur // 6)
    say("")
    say("over time (the two counters are read a few ms apart, so a row's loss may be off by "
        "a few tenths of a percent either way; the total above is exact):")
    say("%8s %12s %12s %10s %10s" % ("seconds", "sent/s", "received/s", "loss %", "RSS KiB"))
    prev = rows[0] if rows else None
    for r in rows[1:]:
        dt = r[0] - prev[0]
        if dt >= step or (r is rows[-1] and 2 * dt >= step):
            s, rv = r[2] - prev[2], r[3] - prev[3]
            seg = [x[1] for x in rows if prev[0] < x[0] <= r[0]]
            say("%8d %12.0f %12.0f %10.4f %10.0f"
                % (r[0], s / dt, rv / dt, 100.0 * (s - rv) / s if s else 0.0, median(seg)))
            prev = r
    try:
        with open(os.path.join(outdir, "switch.out")) as f:
            table = f.read().strip()
    except OSError:
        table = ""
    if table:
        say("")
        say("the switch's own counts at its stop%s (switch.out):"
            % (", the rate search's trials included" if facts["searched"] == "yes" else ""))
        lines.extend(table.splitlines())
    say("")
    say("RESULT: %s" % ("PASS" if not fails else "FAIL: " + "; ".join(fails)))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(outdir, "summary.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0 if not fails else 1


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "send":
        send(args[0], int(args[1]), float(args[2]), int(args[3]), args[4])
    elif cmd == "churn":
        churn(args[0], int(args[1]), float(args[2]), args[3])
    elif cmd in ("nonreader", "garbage", "partial"):
        globals()[cmd](args[0])
    elif cmd == "report":
        sys.exit(report(args[0], args[1]))
    else:
        raise SystemExit("unknown command " + cmd)
PY

# --- the bed ---
for h in "$H1" "$H2"; do
    ip netns add "$h"
    ip link add "$h" type veth peer name "${h}p"
    echo 1 >"/proc/sys/net/ipv6/conf/$h/disable_ipv6"
    ip link set "${h}p" netns "$h"
    ip -n "$h" link set "${h}p" name eth0
    ip netns exec "$h" sh -c 'echo 1 > /proc/sys/net/ipv6/conf/all/disable_ipv6'
    ip -n "$h" link set lo up
    ip -n "$h" link set eth0 up
    ip link set "$h" up
done
ip -n "$H1" addr add 10.254.0.1/24 dev eth0
ip -n "$H2" addr add 10.254.0.2/24 dev eth0

# sent: host 1's frames handed to its eth0; received: host 2's eth0.
sent() {
    ip netns exec "$H1" sh -c 'echo $(( $(cat /sys/class/net/eth0/statistics/tx_packets) + $(cat /sys/class/net/eth0/statistics/tx_dropped) ))'
}
received() { ip netns exec "$H2" cat /sys/class/net/eth0/statistics/rx_packets; }

CPU_ARGS=()
[ "$NCPU" -ge 2 ] && CPU_ARGS=(--cpus "$SW_CPU")
"$BIN" run --port "$H1" --port "$H2" --mgmt "$SOCK" --state-dir none --fail-mode secure \
    --flow "in_port=1,actions=output:2" "${CPU_ARGS[@]}" \
    >"$OUT/switch.out" 2>"$OUT/switch.log" &
SW_PID=$!
for _ in $(seq 300); do
    grep -q "switching between" "$OUT/switch.log" 2>/dev/null && [ -S "$SOCK" ] && break
    kill -0 "$SW_PID" 2>/dev/null || { cat "$OUT/switch.log" >&2; die "the switch exited at start"; }
    sleep 0.1
done
grep -q "switching between" "$OUT/switch.log" && [ -S "$SOCK" ] \
    || { cat "$OUT/switch.log" >&2; die "the switch did not start in 30 s"; }
BANNER=$(grep -m1 "switching between" "$OUT/switch.log")
echo "soak: $BANNER"

# One trial: frames at PPS (0: flat out) for SECS; prints "sent received sent_per_s".
trial() {
    local pps=$1 secs=$2 s0 r0 s1 r1
    s0=$(sent); r0=$(received)
    ip netns exec "$H1" taskset -c "$GEN_CPU" python3 "$W/soak.py" send eth0 "$pps" "$secs" 64 \
        "$W/trial.json" || return 1
    sleep 0.5
    s1=$(sent); r1=$(received)
    echo "$((s1 - s0)) $((r1 - r0)) $(( (s1 - s0) / secs ))"
}

# --- the rate ---
SEARCHED=no
if [ -n "$RATE" ]; then
    RATE_NOTE="$RATE frames/s, as given (--rate)"
else
    echo "soak: measuring the zero-loss rate (3-second trials)"
    SEARCHED=yes
    trial 0 3 >"$W/trial" || die "the flat-out trial failed"
    read -r s r pps <"$W/trial"
    echo "flat out: sent $s received $r (sent $pps/s, forwarded $((r / 3))/s)" | tee "$OUT/search.txt"
    ZL=
    if [ "$s" -gt 0 ] && [ "$s" -eq "$r" ]; then
        ZL=$pps
        ZL_NOTE="the generator's flat-out rate lost nothing: the generator is the limit"
    else
        F=$((r / 3))
        for pct in 100 90 80 70 60 50 40; do
            try=$((F * pct / 100))
            [ "$try" -ge 1 ] || break
            trial "$try" 3 >"$W/trial" || die "the trial at $try/s failed"
            read -r s r pps <"$W/trial"
            echo "trial at $try/s ($pct % of forwarded flat out): sent $s received $r lost $((s - r))" | tee -a "$OUT/search.txt"
            if [ "$s" -gt 0 ] && [ "$s" -eq "$r" ]; then
                ZL=$pps
                ZL_NOTE="the first trial without loss, asked $pct % of the flat-out forwarded rate $F/s"
                [ $((pps * 100)) -ge $((try * 95)) ] \
                    || ZL_NOTE="$ZL_NOTE; the generator reached only $pps/s of it: the generator is the limit"
                break
            fi
        done
    fi
    if [ -z "$ZL" ]; then
        ZL=$((F * 40 / 100))
        ZL_NOTE="no trial down to 40 % of the flat-out forwarded rate $F/s lost nothing; taking that"
    fi
    RATE=$((ZL * 80 / 100))
    [ "$RATE" -ge 1 ] || RATE=1
    RATE_NOTE="$RATE frames/s = 80 % of the zero-loss rate $ZL/s ($ZL_NOTE; trials in search.txt)"
fi
echo "soak: rate $RATE frames/s, churn $CHURN flow-mods/s, $DURATION s"

# --- the soak ---
echo "seconds,rss_kib,sent,received" >"$OUT/rss.csv"
echo "second,ms,flows,rc" >"$OUT/dump_flows.csv"
: >"$OUT/misbehave.log"
S0=$(sent); R0=$(received)
T0=$(date +%s)
DEADLINE=$((T0 + DURATION))

rss_sampler() {
    local i rss now
    for ((i = 0; i <= DURATION + 60; i++)); do
        [ -e "$W/stop" ] && break
        rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$SW_PID/status" 2>/dev/null || true)
        now=$(date +%s)
        echo "$((now - T0)),${rss},$(( $(sent) - S0 )),$(( $(received) - R0 ))" >>"$OUT/rss.csv"
        sleep "$(awk -v t="$(date +%s.%N)" 'BEGIN { d = 1 - (t - int(t)); printf "%.3f", d < 0.05 ? 1 : d }')"
    done
}

dump_poller() {
    local i t0 t1 rc n
    for ((i = 0; i <= DURATION; i++)); do
        [ -e "$W/stop" ] || [ "$(date +%s)" -ge "$DEADLINE" ] && break
        t0=$(date +%s%N)
        rc=0
        timeout 20 "$BIN" ctl -t 15 dump-flows "$SOCK" >"$W/dump.out" 2>"$W/dump.err" || rc=$?
        t1=$(date +%s%N)
        n=$(grep -c "actions=" "$W/dump.out" || true)
        echo "$(( (t0 / 1000000000) - T0 )),$(awk -v ns="$((t1 - t0))" 'BEGIN { printf "%.1f", ns / 1e6 }'),$n,$rc" >>"$OUT/dump_flows.csv"
        [ "$rc" -eq 0 ] || cp "$W/dump.err" "$OUT/dump_flows.err.$i" 2>/dev/null || true
        sleep "$(awk -v ns="$((t1 - t0))" 'BEGIN { d = 1 - ns / 1e9; printf "%.3f", d < 0.05 ? 0.05 : d }')"
    done
}

misbehaver() {
    local i kind kinds=(nonreader garbage partial) rc msg
    sleep 5
    for ((i = 0; i <= DURATION / 10; i++)); do
        [ -e "$W/stop" ] || [ "$(date +%s)" -ge "$((DEADLINE - 4))" ] && break
        kind=${kinds[$((i % 3))]}
        rc=0
        msg=$(timeout 20 python3 "$W/soak.py" "$kind" "$SOCK" 2>&1) || rc=$?
        echo "$(( $(date +%s) - T0 )) $kind rc=$rc $(echo "$msg" | tail -1)" >>"$OUT/misbehave.log"
        sleep 7
    done
}

rss_sampler & BG_PIDS+=($!)
ip netns exec "$H1" taskset -c "$GEN_CPU" python3 "$W/soak.py" send eth0 "$RATE" "$DURATION" 64 "$W/gen.json" &
GEN_PID=$!; BG_PIDS+=("$GEN_PID")
CHURN_PID=
if [ "$CHURN" -gt 0 ]; then
    python3 "$W/soak.py" churn "$SOCK" "$CHURN" "$DURATION" "$OUT/churn.json" \
        2>"$W/churn.err" & CHURN_PID=$!; BG_PIDS+=("$CHURN_PID")
fi
dump_poller & BG_PIDS+=($!)
misbehaver & BG_PIDS+=($!)

GEN_RC=0
wait "$GEN_PID" || GEN_RC=$?
CHURN_RC=0
if [ -n "$CHURN_PID" ]; then
    # The churn stops at the deadline; give it a minute for its last barrier.
    for _ in $(seq 600); do kill -0 "$CHURN_PID" 2>/dev/null || break; sleep 0.1; done
    stop_pid "$CHURN_PID"
    wait "$CHURN_PID" || CHURN_RC=$?
fi
sleep 1
S1=$(sent); R1=$(received)
touch "$W/stop"
for p in "${BG_PIDS[@]}"; do
    for _ in $(seq 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    stop_pid "$p"
    wait "$p" 2>/dev/null || true
done
BG_PIDS=()

FLOWS_AFTER=$(timeout 20 "$BIN" ctl -t 15 dump-flows "$SOCK" 2>/dev/null | grep -c "actions=" || true)
ALIVE=no
kill -0 "$SW_PID" 2>/dev/null && ALIVE=yes
EXIT="not stopped in 20 s"
if [ "$ALIVE" = yes ]; then
    kill -TERM "$SW_PID"
    for _ in $(seq 200); do kill -0 "$SW_PID" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$SW_PID" 2>/dev/null; then
        kill -KILL "$SW_PID" 2>/dev/null || true
        wait "$SW_PID" 2>/dev/null || true
    else
        rc=0; wait "$SW_PID" || rc=$?; EXIT=$rc
    fi
else
    rc=0; wait "$SW_PID" || rc=$?; EXIT="$rc (exited before the end)"
fi
SW_PID=
PANICS=$(grep -c "panicked" "$OUT/switch.log" || true)

if [ -s "$W/gen.json" ] && [ "$GEN_RC" -eq 0 ]; then
    GEN=$(cat "$W/gen.json")
else
    GEN="no result (exit status $GEN_RC)"
fi
cat >"$W/facts" <<EOF
when=$(date -u +"%Y-%m-%d %H:%M:%S UTC")
ncpu=$NCPU
kernel=$(uname -r)
binary=$BIN
banner=$BANNER
duration=$DURATION
searched=$SEARCHED
rate_note=$RATE_NOTE; the generator on CPU $GEN_CPU, the switch's worker on CPU $SW_CPU
sent=$((S1 - S0))
received=$((R1 - R0))
gen=$GEN
churn=$CHURN
churn_rc=rc $CHURN_RC: $(tail -1 "$W/churn.err" 2>/dev/null || true)
flows_after=$FLOWS_AFTER
panics=$PANICS
alive=$ALIVE
exit=$EXIT
EOF
RESULT=0
python3 "$W/soak.py" report "$OUT" "$W/facts" || RESULT=$?
exit "$RESULT"
