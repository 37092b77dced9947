//! A plain traffic source: frames sent as fast as an AF_PACKET transmit ring takes them,
//! from inside a network namespace, for a fixed time. Tests use it to overload a switch
//! and first measurements use it as a generator; the study's generator (timestamps,
//! rate control, AF_XDP) is a separate piece.
//!
//! Each source is a thread that enters the namespace (setns(2) affects only that
//! thread), opens the interface with one of the `ports` crate's backends (AF_PACKET by
//! default, AF_XDP for more speed) and sends batches of the given frames round-robin
//! until its time is up.

use std::fs::File;
use std::io;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use datapath::packet::Packet;
use nix::sched::{setns, CloneFlags};

/// What a source did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sent {
    /// Frames the kernel took.
    pub packets: u64,
    /// Frames offered when the ring was full (not sent).
    pub dropped: u64,
    /// How long the source ran.
    pub elapsed: Duration,
}

/// Starts a source in namespace `ns` on `ifname`, pinned to `cpu` if given, sending
/// `frames` in turn for `duration` through the `ports` crate's `backend` (AF_PACKET
/// works everywhere; AF_XDP sends faster).
pub fn start(
    backend: ports::Backend,
    ns: &str,
    ifname: &str,
    frames: Vec<Vec<u8>>,
    duration: Duration,
    cpu: Option<usize>,
) -> JoinHandle<io::Result<Sent>> {
    let (ns, ifname) = (ns.to_string(), ifname.to_string());
    std::thread::spawn(move || {
        if let Some(c) = cpu {
            core_affinity::set_for_current(core_affinity::CoreId { id: c });
        }
        let netns = File::open(format!("/var/run/netns/{ns}"))?;
        setns(&netns, CloneFlags::CLONE_NEWNET).map_err(io::Error::from)?;
        let mut port =
            ports::open(&ifname, backend, 1).map_err(|e| io::Error::other(e.to_string()))?;
        let io = port.handles.first_mut().ok_or_else(|| io::Error::other("no handle"))?;
        if frames.is_empty() {
            return Err(io::Error::other("no frames to send"));
        }
        let mut pool: Vec<Packet> = Vec::new();
        let mut tx: Vec<Packet> = Vec::with_capacity(64);
        let mut next = 0usize;
        let start = Instant::now();
        while start.elapsed() < duration {
            for _ in 0..64 {
                let mut p = pool.pop().unwrap_or_default();
                p.refill(&frames[next]);
                next = (next + 1) % frames.len();
                tx.push(p);
            }
            io.send(&mut tx, &mut pool);
        }
        let elapsed = start.elapsed();
        let s = port.stats();
        Ok(Sent { packets: s.tx_packets, dropped: s.tx_dropped, elapsed })
    })
}
