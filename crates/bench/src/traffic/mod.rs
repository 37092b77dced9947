//! The study's traffic generator and sink, in one thread.
//!
//! [`run`] starts a thread that opens every transmit port and the receive port (each in
//! its own network namespace: setns(2) moves only that thread, and a socket keeps
//! working in the namespace it was opened in after the thread moves on), then loops:
//!
//! 1. every stream that is due sends its batches — a paced stream as its [`Pacer`]
//!    releases them (at most 4 batches at once after a stall; the rest are counted as
//!    missed), an unpaced one a batch every turn — each frame copied from the stream's
//!    frames round-robin and [stamped](stamp) just before the batch is handed to `send`;
//! 2. the sink drains the receive port (a few `recv` calls), and every frame with a
//!    valid stamp of this run (its tag) counts for its stream and gives one latency
//!    sample (receive time minus stamp, one clock since the same thread stamps and
//!    receives); anything else counts as foreign.
//!
//! A transmit port with several queues ([`Spec::tx_queues`], AF_XDP only) is opened
//! with one socket per queue, and frame `j` of a stream always goes out of socket
//! `j % queues`: the frames of a stream are its flows, so each flow keeps to one queue
//! (a veth hands a frame to the peer's receive queue of the number it was sent on, so
//! the flows spread over the device's receive queues and each stays in order).
//!
//! When nothing is due the loop keeps polling the receive port (it busy-waits: this is
//! the generator's CPU, and sleeping would delay stamps). Sending stops at `duration` or
//! after `max_packets` frames handed to the ports; the sink goes on for `drain`, while
//! the transmit ports settle what they still had in flight.
//!
//! # Counting what was sent
//!
//! Each `send` call carries one batch of one stream. The port's drop and error counters
//! are read before and after the call, and their growth is charged to that stream; drops
//! found while settling after sending stopped are charged to the stream that sent last on
//! that port (the frames still in flight are the newest). So per stream
//! `sent = handed − tx_dropped − tx_errors`: frames the ring took. Per port these sum
//! exactly to the port's own counts; the charge to a stream is off only when the
//! kernel reports an earlier batch's frame as dropped during a later call of another
//! stream on the same port (AF_XDP's EBUSY on a busy device queue).

mod flows;
mod stamp;

pub use flows::{flows, frame, FlowHeader, Spread};
pub use stamp::{
    read_stamp, write_stamp, Latency, Reservoir, Stamp, MAGIC, MIN_FRAME, STAMP_LEN, STAMP_OFFSET,
};

use std::fmt;
use std::fs::File;
use std::time::{Duration, Instant};

use datapath::packet::Packet;
use nix::sched::{setns, CloneFlags};
use ports::OpenPort;

use crate::method::rate::Pacer;

/// Batches a paced stream may send at once after a stall.
const MAX_BURST: u32 = 4;
/// Frames asked of the receive port per `recv` call.
const RX_BATCH: usize = 64;
/// `recv` calls per loop turn at most (while they return frames).
const RX_CALLS: usize = 4;
/// Latency samples kept for the percentiles (16 MiB).
const LATENCY_SAMPLES: usize = 1 << 21;
/// Latency samples kept per stream.
const STREAM_LATENCY_SAMPLES: usize = 1 << 18;

/// Where a port is: an interface in a namespace (`None`: the namespace of the process's
/// main thread, the root namespace for a process that did not move). A namespace is a
/// name under `/var/run/netns` (as `ip netns` makes them) or, if it has a `/`, a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub ns: Option<String>,
    pub ifname: String,
}

impl Endpoint {
    /// Interface `ifname` in the root namespace.
    pub fn root(ifname: &str) -> Endpoint {
        Endpoint { ns: None, ifname: ifname.to_string() }
    }

    /// Interface `ifname` in namespace `ns`.
    pub fn in_ns(ns: &str, ifname: &str) -> Endpoint {
        Endpoint { ns: Some(ns.to_string()), ifname: ifname.to_string() }
    }

    fn ns_path(&self) -> String {
        match &self.ns {
            None => "/proc/self/ns/net".to_string(),
            Some(p) if p.contains('/') => p.clone(),
            Some(n) => format!("/var/run/netns/{n}"),
        }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.ns {
            None => write!(f, "{} in the root namespace", self.ifname),
            Some(ns) => write!(f, "{} in namespace {ns}", self.ifname),
        }
    }
}

/// One stream: frames sent round-robin out of transmit port `tx` (an index into
/// [`Spec::tx`]), at `rate_pps` (`None`: a batch every loop turn, as fast as the ring
/// takes them). Every frame must be at least [`MIN_FRAME`] bytes; its bytes
/// `42..58` are overwritten by the stamp.
#[derive(Clone, Debug, PartialEq)]
pub struct Stream {
    pub tx: usize,
    pub frames: Vec<Vec<u8>>,
    pub rate_pps: Option<f64>,
}

/// A run of the generator and sink. Invariants checked by [`run`]: at least one tx
/// port and one stream (at most 65535), each stream's `tx` names a port, has frames
/// of at least [`MIN_FRAME`] bytes and a positive finite rate if any; `batch >= 1`.
#[derive(Clone, Debug)]
pub struct Spec {
    /// One or more transmit ports (fairness uses two).
    pub tx: Vec<Endpoint>,
    /// The sink.
    pub rx: Endpoint,
    /// AF_XDP (`Auto`) normally.
    pub tx_backend: ports::Backend,
    pub rx_backend: ports::Backend,
    pub streams: Vec<Stream>,
    /// How long to send.
    pub duration: Duration,
    /// Stop sending after this many frames handed to the ports in total.
    pub max_packets: Option<u64>,
    /// Keep receiving this long after sending stops (e.g. 100 ms).
    pub drain: Duration,
    /// Pin the thread to this CPU.
    pub cpu: Option<usize>,
    /// Transmit queues to spread each stream's flows over on every transmit port (see
    /// the module comment); 1 sends on one. Only AF_XDP sockets choose their queue: an
    /// AF_PACKET sender's frames take the queue of its CPU whatever this says, so with
    /// AF_PACKET every port is opened with one socket.
    pub tx_queues: u32,
    /// Packets per send batch of an unpaced stream (e.g. 32); a paced stream sends what
    /// it sends in 20 µs at its rate, from 1 up to this.
    pub batch: u32,
}

/// What one stream did. `sent` counts frames the ring took (handed over minus
/// `tx_dropped` and `tx_errors`; see the module comment for how they are charged).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StreamResult {
    pub sent: u64,
    /// Frames of this stream that reached the sink with a valid stamp.
    pub received: u64,
    /// Frames the pacer skipped because the loop was late (unpaced streams: 0).
    pub missed: u64,
    /// Frames the port dropped because its ring was full (or its link down).
    pub tx_dropped: u64,
    /// Frames the port refused (too short or too long for it).
    pub tx_errors: u64,
    /// This stream's one-way latency; `None` when none of its frames arrived.
    pub latency: Option<Latency>,
}

/// The result of [`run`].
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Per stream, in [`Spec::streams`] order.
    pub streams: Vec<StreamResult>,
    /// Sending time actually spent (from the first send to the end of sending).
    pub elapsed: Duration,
    /// `None` when nothing of ours arrived.
    pub latency: Option<Latency>,
    /// Frames received that were not ours (no stamp, or a stream index out of range,
    /// or a send time after the receive time).
    pub foreign: u64,
}

impl Outcome {
    /// Frames the rings took, all streams.
    pub fn sent(&self) -> u64 {
        self.streams.iter().map(|s| s.sent).sum()
    }

    /// Frames of ours received, all streams (drain included).
    pub fn received(&self) -> u64 {
        self.streams.iter().map(|s| s.received).sum()
    }

    /// `sent()` per second of sending time (0 when no time was spent).
    pub fn offered_pps(&self) -> f64 {
        per_second(self.sent(), self.elapsed)
    }

    /// `received()` per second of sending time (0 when no time was spent).
    pub fn received_pps(&self) -> f64 {
        per_second(self.received(), self.elapsed)
    }
}

fn per_second(n: u64, t: Duration) -> f64 {
    let s = t.as_secs_f64();
    if s > 0.0 {
        n as f64 / s
    } else {
        0.0
    }
}

/// Runs the traffic in a new thread (entering namespaces with setns, which only affects
/// that thread) and waits for it. Errors name the endpoint or stream at fault.
pub fn run(spec: Spec) -> Result<Outcome, String> {
    check(&spec)?;
    std::thread::Builder::new()
        .name("traffic".into())
        .spawn(move || generate(&spec))
        .map_err(|e| format!("cannot start the traffic thread: {e}"))?
        .join()
        .map_err(|_| "the traffic thread panicked".to_string())?
}

/// Checks the invariants of [`Spec`].
fn check(spec: &Spec) -> Result<(), String> {
    if spec.tx.is_empty() {
        return Err("no transmit port".into());
    }
    if spec.streams.is_empty() {
        return Err("no stream".into());
    }
    if spec.streams.len() > usize::from(u16::MAX) {
        return Err(format!("{} streams (at most 65535)", spec.streams.len()));
    }
    if spec.batch == 0 {
        return Err("batch size 0".into());
    }
    if spec.tx_queues == 0 {
        return Err("0 transmit queues".into());
    }
    for (i, s) in spec.streams.iter().enumerate() {
        if s.tx >= spec.tx.len() {
            return Err(format!(
                "stream {i}: transmit port {} does not exist ({} given)",
                s.tx,
                spec.tx.len()
            ));
        }
        if s.frames.is_empty() {
            return Err(format!("stream {i}: no frames"));
        }
        if let Some((j, f)) = s.frames.iter().enumerate().find(|(_, f)| f.len() < MIN_FRAME) {
            return Err(format!(
                "stream {i}: frame {j} has {} bytes, too short for the stamp ({MIN_FRAME})",
                f.len()
            ));
        }
        if let Some(r) = s.rate_pps {
            if !(r > 0.0 && r.is_finite()) {
                return Err(format!("stream {i}: bad rate {r} pps"));
            }
        }
    }
    Ok(())
}

/// Opens `ep` with `backend` from inside its namespace (the thread stays there), with
/// `handles` sockets where the interface has that many queues (AF_XDP; fewer where it
/// has fewer).
fn open(
    ep: &Endpoint,
    backend: &ports::Backend,
    handles: usize,
    what: &str,
) -> Result<OpenPort, String> {
    let path = ep.ns_path();
    let ns = File::open(&path).map_err(|e| format!("{what} ({ep}): namespace {path}: {e}"))?;
    setns(&ns, CloneFlags::CLONE_NEWNET).map_err(|e| format!("{what} ({ep}): setns: {e}"))?;
    // An AF_XDP socket of the previous run on the same queue is released by the kernel
    // a little after it is closed; until then binding says "busy". Retry for a while.
    let mut tries = 0;
    let port = loop {
        match ports::open(&ep.ifname, backend.clone(), handles) {
            Ok(p) => break p,
            Err(e) if tries < OPEN_RETRIES && e.to_string().contains("busy") => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(format!("{what} ({ep}): cannot open as {backend}: {e}")),
        }
    };
    if port.handles.is_empty() {
        return Err(format!("{what} ({ep}): the port has no handle"));
    }
    Ok(port)
}

/// How long a paced stream's batch may last at its rate, in ns: a slow stream sends
/// single frames (a probe must not queue behind its own burst), a fast one batches.
const BATCH_SPAN_NS: f64 = 20_000.0;

/// The frames per send of a stream at `rate_pps` (`None`: flat out, `max`), at most
/// `max`: what the stream sends in [`BATCH_SPAN_NS`], at least 1.
fn paced_batch(rate_pps: Option<f64>, max: u32) -> u32 {
    match rate_pps {
        None => max,
        Some(r) => ((r * BATCH_SPAN_NS / 1e9) as u32).clamp(1, max.max(1)),
    }
}

/// Attempts (20 ms apart) at opening a port whose queue is still busy.
const OPEN_RETRIES: u32 = 50;

/// A tag for this run, different from the last runs' (from the clock's nanoseconds
/// and a counter), never 0.
fn run_tag() -> u16 {
    static NEXT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let tag = n ^ ((t >> 10) as u16 & 0xff00);
    tag.max(1)
}

/// A transmit port and the stream that sent on it last.
struct TxPort {
    port: OpenPort,
    last: Option<usize>,
}

/// The socket (handle) of a transmit port with `handles` of them that frame `frame` of
/// a stream goes out of: the same for every frame of the same index, so a flow keeps to
/// one queue.
fn handle_for(frame: usize, handles: usize) -> usize {
    frame % handles.max(1)
}

/// The running state of one stream. Invariant: `next < frames.len()`.
struct StreamState {
    handed: u64,
    dropped: u64,
    errors: u64,
    received: u64,
    /// This stream's latency samples (a smaller sample than the whole run's).
    latency: Reservoir,
    next: usize,
    /// Frames per send of this stream ([`paced_batch`]).
    batch: u32,
    pacer: Option<Pacer>,
}

/// The sink's state: what arrived so far.
struct Sink {
    port: OpenPort,
    rx: Vec<Packet>,
    latency: Reservoir,
    foreign: u64,
}

impl Sink {
    /// Up to [`RX_CALLS`] `recv` calls while frames come, each frame counted.
    fn poll(
        &mut self,
        origin: Instant,
        run: u16,
        streams: &mut [StreamState],
        pool: &mut Vec<Packet>,
    ) {
        for _ in 0..RX_CALLS {
            let n = self.port.handles[0].recv(&mut self.rx, RX_BATCH, pool);
            if n == 0 {
                return;
            }
            let now = ns_since(origin);
            for p in self.rx.drain(..) {
                match read_stamp(p.data()) {
                    Some(s)
                        if s.run == run
                            && s.sent_ns <= now
                            && usize::from(s.stream) < streams.len() =>
                    {
                        let st = &mut streams[usize::from(s.stream)];
                        st.received += 1;
                        st.latency.add(now - s.sent_ns);
                        self.latency.add(now - s.sent_ns);
                    }
                    _ => self.foreign += 1,
                }
                pool.push(p);
            }
        }
    }
}

/// Nanoseconds since `origin` (saturating: 584 years).
fn ns_since(origin: Instant) -> u64 {
    u64::try_from(origin.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// The drop and error counts of a port.
fn losses(port: &OpenPort) -> (u64, u64) {
    let s = port.stats();
    (s.tx_dropped, s.tx_errors)
}

/// The thread's clock origin and its packet buffers (the transmit batch and the pool
/// that transmit and receive share).
struct Buffers {
    origin: Instant,
    /// This run's tag, stamped into every frame.
    run: u16,
    /// One batch per transmit socket ([`handle_for`]).
    tx: Vec<Vec<Packet>>,
    pool: Vec<Packet>,
}

/// Sends `count` frames of stream `i` out of its port, stamped now, charging the port's
/// new drops and errors to the stream.
fn send_batch(
    b: &mut Buffers,
    i: usize,
    count: u32,
    stream: &Stream,
    st: &mut StreamState,
    port: &mut TxPort,
) {
    let Buffers { origin, run, tx, pool } = b;
    let origin = *origin;
    let handles = port.port.handles.len().min(tx.len()).max(1);
    for _ in 0..count {
        let mut p = pool.pop().unwrap_or_default();
        p.refill(&stream.frames[st.next]);
        tx[handle_for(st.next, handles)].push(p);
        st.next = (st.next + 1) % stream.frames.len();
    }
    let stamp = Stamp {
        // `check` bounds the stream count by u16::MAX.
        stream: i as u16,
        run: *run,
        sent_ns: ns_since(origin),
    };
    for p in tx.iter_mut().flatten() {
        write_stamp(p.data_mut(), stamp);
    }
    let before = losses(&port.port);
    for (h, batch) in port.port.handles.iter_mut().zip(tx.iter_mut()) {
        if !batch.is_empty() {
            h.send(batch, pool);
            batch.clear();
        }
    }
    let after = losses(&port.port);
    st.handed += u64::from(count);
    st.dropped += after.0.wrapping_sub(before.0);
    st.errors += after.1.wrapping_sub(before.1);
    port.last = Some(i);
}

/// Lets every transmit port settle its frames in flight (an empty `send`), charging new
/// drops to the stream that sent last on it.
fn settle(txs: &mut [TxPort], streams: &mut [StreamState], b: &mut Buffers) {
    for t in txs.iter_mut() {
        let before = losses(&t.port);
        for h in t.port.handles.iter_mut() {
            h.send(&mut b.tx[0], &mut b.pool);
        }
        let after = losses(&t.port);
        if let Some(s) = t.last {
            streams[s].dropped += after.0.wrapping_sub(before.0);
            streams[s].errors += after.1.wrapping_sub(before.1);
        }
    }
}

/// The traffic thread: opens the ports, sends and receives, sums up.
fn generate(spec: &Spec) -> Result<Outcome, String> {
    if let Some(cpu) = spec.cpu {
        if !core_affinity::set_for_current(core_affinity::CoreId { id: cpu }) {
            return Err(format!("cannot pin the traffic thread to CPU {cpu}"));
        }
    }
    let mut txs = Vec::with_capacity(spec.tx.len());
    for (i, ep) in spec.tx.iter().enumerate() {
        let handles = match spec.tx_backend {
            ports::Backend::AfXdp { .. } => spec.tx_queues as usize,
            _ => 1,
        };
        let port = open(ep, &spec.tx_backend, handles, &format!("transmit port {i}"))?;
        txs.push(TxPort { port, last: None });
    }
    let mut sink = Sink {
        port: open(&spec.rx, &spec.rx_backend, 1, "receive port")?,
        rx: Vec::with_capacity(RX_BATCH),
        latency: Reservoir::new(LATENCY_SAMPLES),
        foreign: 0,
    };
    let mut b = Buffers {
        origin: Instant::now(),
        run: run_tag(),
        tx: (0..spec.tx_queues.max(1)).map(|_| Vec::with_capacity(spec.batch as usize)).collect(),
        pool: Vec::new(),
    };
    let origin = b.origin;
    let start = ns_since(origin);
    let mut streams = spec
        .streams
        .iter()
        .map(|s| {
            let batch = paced_batch(s.rate_pps, spec.batch);
            let pacer = match s.rate_pps {
                None => None,
                Some(r) => Some(
                    Pacer::new(r, batch, MAX_BURST, start)
                        .map_err(|e| format!("pacer for {r} pps: {e:?}"))?,
                ),
            };
            Ok(StreamState {
                handed: 0,
                dropped: 0,
                errors: 0,
                received: 0,
                latency: Reservoir::new(STREAM_LATENCY_SAMPLES),
                next: 0,
                batch,
                pacer,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let duration_ns = u64::try_from(spec.duration.as_nanos()).unwrap_or(u64::MAX);
    let send_end = start.saturating_add(duration_ns);
    let limit = spec.max_packets.unwrap_or(u64::MAX);
    let mut handed = 0u64;
    let mut now = start;
    'send: while now < send_end && handed < limit {
        for (i, (s, st)) in spec.streams.iter().zip(streams.iter_mut()).enumerate() {
            let batches = match &mut st.pacer {
                Some(p) => p.poll(now).batches,
                None => 1,
            };
            for _ in 0..batches {
                let left = limit - handed;
                if left == 0 {
                    break 'send;
                }
                let count = u64::from(st.batch).min(left) as u32;
                send_batch(&mut b, i, count, s, st, &mut txs[s.tx]);
                handed += u64::from(count);
            }
        }
        sink.poll(origin, b.run, &mut streams, &mut b.pool);
        now = ns_since(origin);
    }
    let sent_end = ns_since(origin);
    let drain_end =
        sent_end.saturating_add(u64::try_from(spec.drain.as_nanos()).unwrap_or(u64::MAX));
    loop {
        settle(&mut txs, &mut streams, &mut b);
        sink.poll(origin, b.run, &mut streams, &mut b.pool);
        if ns_since(origin) >= drain_end {
            break;
        }
    }
    Ok(Outcome {
        streams: streams
            .into_iter()
            .map(|st| StreamResult {
                sent: st.handed.saturating_sub(st.dropped + st.errors),
                received: st.received,
                missed: st.pacer.as_ref().map_or(0, |p| p.missed_packets()),
                tx_dropped: st.dropped,
                tx_errors: st.errors,
                latency: st.latency.summary(),
            })
            .collect(),
        elapsed: Duration::from_nanos(sent_end - start),
        latency: sink.latency.summary(),
        foreign: sink.foreign,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(streams: Vec<Stream>) -> Spec {
        Spec {
            tx: vec![Endpoint::in_ns("nowhere", "eth0")],
            rx: Endpoint::root("nothing0"),
            tx_backend: ports::Backend::AfPacket,
            rx_backend: ports::Backend::AfPacket,
            streams,
            duration: Duration::from_millis(10),
            max_packets: None,
            drain: Duration::ZERO,
            cpu: None,
            batch: 32,
            tx_queues: 1,
        }
    }

    fn stream(tx: usize, len: usize, rate: Option<f64>) -> Stream {
        Stream { tx, frames: vec![vec![0; len]], rate_pps: rate }
    }

    #[test]
    fn bad_specs_are_refused_with_the_reason() {
        let err = |s: Spec| check(&s).unwrap_err();
        assert_eq!(err(spec(vec![])), "no stream");
        let mut s = spec(vec![stream(0, 60, None)]);
        s.tx.clear();
        assert_eq!(err(s), "no transmit port");
        assert!(err(spec(vec![stream(1, 60, None)])).starts_with("stream 0: transmit port 1"));
        assert!(err(spec(vec![stream(0, 60, None), stream(0, 57, None)]))
            .starts_with("stream 1: frame 0 has 57"));
        let mut empty = stream(0, 60, None);
        empty.frames.clear();
        assert_eq!(err(spec(vec![empty])), "stream 0: no frames");
        for r in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(err(spec(vec![stream(0, 60, Some(r))])).contains("bad rate"));
        }
        let mut s = spec(vec![stream(0, 60, None)]);
        s.batch = 0;
        assert_eq!(err(s), "batch size 0");
        let mut s = spec(vec![stream(0, 60, None)]);
        s.tx_queues = 0;
        assert_eq!(err(s), "0 transmit queues");
        assert!(check(&spec(vec![stream(0, 58, Some(1e3)), stream(0, 1514, None)])).is_ok());
    }

    #[test]
    fn each_flow_keeps_to_one_transmit_socket_and_flows_spread_over_all() {
        // Frames (flows) 0..6 over 2 sockets: alternate, the same frame always alike.
        let on: Vec<usize> = (0..6).map(|j| handle_for(j, 2)).collect();
        assert_eq!(on, [0, 1, 0, 1, 0, 1]);
        assert_eq!(handle_for(5, 2), handle_for(5, 2));
        // One socket (or none reported): everything on the first.
        assert!((0..6).all(|j| handle_for(j, 1) == 0 && handle_for(j, 0) == 0));
        // Three queues, 64 flows: every queue gets flows.
        let mut per = [0usize; 3];
        for j in 0..64 {
            per[handle_for(j, 3)] += 1;
        }
        assert_eq!(per, [22, 21, 21]);
    }

    #[test]
    fn a_missing_namespace_is_named() {
        let e = run(spec(vec![stream(0, 60, None)])).unwrap_err();
        assert!(
            e.starts_with(
                "transmit port 0 (eth0 in namespace nowhere): namespace /var/run/netns/nowhere"
            ),
            "{e}"
        );
    }

    #[test]
    fn rates_are_per_second_of_sending() {
        let o = Outcome {
            streams: vec![
                StreamResult { sent: 300, received: 200, ..Default::default() },
                StreamResult { sent: 100, received: 100, ..Default::default() },
            ],
            elapsed: Duration::from_millis(500),
            latency: None,
            foreign: 0,
        };
        assert_eq!((o.sent(), o.received()), (400, 300));
        assert_eq!((o.offered_pps(), o.received_pps()), (800.0, 600.0));
        let none = Outcome { elapsed: Duration::ZERO, ..o };
        assert_eq!(none.offered_pps(), 0.0);
    }

    #[test]
    fn endpoints_say_where_they_are() {
        assert_eq!(Endpoint::root("veth1").to_string(), "veth1 in the root namespace");
        assert_eq!(Endpoint::in_ns("h1", "eth0").to_string(), "eth0 in namespace h1");
        assert_eq!(Endpoint::in_ns("h1", "eth0").ns_path(), "/var/run/netns/h1");
        assert_eq!(Endpoint::in_ns("/proc/7/ns/net", "eth0").ns_path(), "/proc/7/ns/net");
        assert_eq!(Endpoint::root("x").ns_path(), "/proc/self/ns/net");
    }

    #[test]
    fn paced_streams_batch_what_they_send_in_twenty_microseconds() {
        assert_eq!(paced_batch(None, 32), 32);
        assert_eq!(paced_batch(Some(1_000.0), 32), 1);
        assert_eq!(paced_batch(Some(1e6), 32), 20);
        assert_eq!(paced_batch(Some(1e8), 32), 32);
        assert_eq!(paced_batch(Some(1e6), 0), 1);
    }
}
