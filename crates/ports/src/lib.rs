//! Port backends behind one batch trait ([`datapath::port::PortIo`]): AF_XDP sockets,
//! AF_PACKET with TPACKET_V2 rings, tap devices, pcap replay/record, and in-memory ports;
//! plus the
//! interface facts ([`InterfaceInfo`]) and the link monitor ([`LinkMonitor`]) a switch
//! needs around them. It knows nothing of OpenFlow.
//!
//! # Opening a port
//!
//! [`open`] takes an interface name, a [`Backend`] and a worker count, and returns an
//! [`OpenPort`]: the interface's facts, one handle per worker (`handles[i]` belongs to
//! worker `i`) and each handle's counters. Backends with one queue (pcap, memory) give
//! a single handle, for worker 0; the other workers get none for that port.
//!
//! | backend | handles | rx_fd | notes |
//! |---|---|---|---|
//! | `afpacket` | `workers` (fanout by flow hash) | yes | interface must exist; brought up; vnet header |
//! | `afxdp` | `min(workers, rx queues)` | yes | XDP program + one AF_XDP socket per queue ([`afxdp`]) |
//! | `tap` | `workers` (one queue each) | yes | created if missing; brought up; vnet header |
//! | `pcap` | 1 | no | replay once, record on send |
//! | memory ([`memory::open`]) | 1 | no | tests and benchmarks |
//!
//! Offloads: ports with a vnet header ([`vnet`]) take hosts with their default
//! offloads: received packets carry the kernel's offload note (partial checksum, TCP
//! super-frame; `datapath::packet::Offload`), and sent ones hand it back to the kernel.
//! The other backends are opened behind a step that first does what a note asks
//! (segments, finished checksums; `resolve`), so they never see a noted packet.
//!
//! Opening needs root or CAP_NET_RAW (afpacket) / CAP_NET_ADMIN (tap, bringing an
//! interface up) / CAP_NET_RAW, CAP_BPF and CAP_NET_ADMIN (afxdp); errors say which. Everything happens in the calling thread's network
//! namespace. After opening, no call returns an error: data-path trouble is dropped and
//! counted ([`PortCounters`]), and the owner watches the links with [`LinkMonitor`]
//! (a removed interface is reopened, not repaired in place).
//!
//! ```no_run
//! use ports::{open, Backend, LinkMonitor};
//! use datapath::packet::Packet;
//!
//! let backend: Backend = "afpacket".parse()?;          // or "afxdp", "tap"
//! let mut port = open("veth0", backend, 2)?;             // two workers
//! println!("{} ifindex {} mac {:02x?} mtu {}", port.info.name, port.info.ifindex, port.info.mac, port.info.mtu);
//! let (monitor, link_events) = LinkMonitor::channel()?;  // LinkEvent { ifindex, name, up, removed }
//!
//! // Worker 0's loop (worker 1 does the same with handles[1]):
//! let io = &mut port.handles[0];
//! let (mut rx, mut pool) = (Vec::<Packet>::new(), Vec::<Packet>::new());
//! let n = io.recv(&mut rx, 32, &mut pool);                // never blocks; poll io.rx_fd() when idle
//! let mut tx: Vec<Packet> = rx.drain(..n).collect();
//! io.send(&mut tx, &mut pool);                            // empties tx, buffers back to pool
//!
//! let total = port.stats();                               // sum over the handles' counters
//! println!("rx {} tx {} dropped {}", total.rx_packets, total.tx_packets, total.tx_dropped);
//! monitor.stop();
//! # drop(link_events);
//! # Ok::<(), ports::PortError>(())
//! ```
//!
//! In tests, an in-memory port stands in for an interface:
//!
//! ```
//! use datapath::packet::Packet;
//!
//! let (mut port, peer) = ports::memory::open("m0", 64);
//! peer.inject(&[0xff; 60]);
//! let (mut rx, mut pool) = (Vec::new(), Vec::new());
//! assert_eq!(port.handles[0].recv(&mut rx, 32, &mut pool), 1);
//! port.handles[0].send(&mut rx, &mut pool);
//! assert_eq!(peer.take_sent(), vec![Packet::from_slice(&[0xff; 60])]);
//! assert_eq!(port.stats().tx_packets, 1);
//! ```

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod afpacket;
pub mod afxdp;
pub mod auto;
pub mod counters;
pub mod error;
pub mod info;
pub mod link;
pub mod memory;
pub mod pcap;
mod resolve;
mod sys;
pub mod tap;
pub mod vnet;
pub mod xdp_features;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

use datapath::port::PortIo;

pub use counters::{PortCounters, PortStats};
pub use error::PortError;
pub use info::InterfaceInfo;
pub use link::{LinkEvent, LinkMonitor};

/// Which kind of port to open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backend {
    /// AF_PACKET sockets with TPACKET_V2 rings on an existing interface.
    AfPacket,
    /// An XDP program and AF_XDP sockets (one per rx queue) on an existing interface,
    /// the program attached as `mode` says.
    AfXdp { mode: afxdp::AttachMode },
    /// A multi-queue tap device, created if missing.
    Tap,
    /// Frames replayed from a pcap file (once) and/or recorded to one; either may be
    /// absent (no replay: nothing is received; no record: sent frames are dropped).
    Pcap { replay: Option<PathBuf>, record: Option<PathBuf> },
}

impl Backend {
    /// The names [`Backend::from_str`] accepts.
    pub const NAMES: &'static str = "afpacket, afxdp, afxdp-native, afxdp-generic, tap";
}

impl FromStr for Backend {
    type Err = PortError;

    /// Parses "afpacket", "afxdp" (native XDP, else generic), "afxdp-native",
    /// "afxdp-generic" or "tap" (pcap ports name their files, so they are built as
    /// `Backend::Pcap { .. }`).
    fn from_str(s: &str) -> Result<Backend, PortError> {
        use afxdp::AttachMode;
        match s {
            "afpacket" => Ok(Backend::AfPacket),
            "afxdp" => Ok(Backend::AfXdp { mode: AttachMode::Auto }),
            "afxdp-native" => Ok(Backend::AfXdp { mode: AttachMode::Native }),
            "afxdp-generic" => Ok(Backend::AfXdp { mode: AttachMode::Generic }),
            "tap" => Ok(Backend::Tap),
            _ => Err(PortError::UnknownBackend { given: s.to_string(), allowed: Backend::NAMES }),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::AfPacket => "afpacket",
            Backend::AfXdp { mode } => match mode {
                afxdp::AttachMode::Auto => "afxdp",
                afxdp::AttachMode::Native => "afxdp-native",
                afxdp::AttachMode::Generic => "afxdp-generic",
            },
            Backend::Tap => "tap",
            Backend::Pcap { .. } => "pcap",
        })
    }
}

/// An opened port: its facts, one handle per worker that has one, and their counters.
///
/// `handles[i]` is worker `i`'s and `counters[i]` is that handle's; `handles.len()` is
/// `workers` for afpacket and tap, `min(workers, rx queues)` for afxdp, 1 for pcap and
/// memory ports (worker 0 only).
pub struct OpenPort {
    /// The interface as it was when opened (synthetic for pcap and memory ports).
    pub info: InterfaceInfo,
    pub handles: Vec<Box<dyn PortIo>>,
    pub counters: Vec<Arc<PortCounters>>,
}

impl fmt::Debug for OpenPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenPort")
            .field("info", &self.info)
            .field("handles", &self.handles.len())
            .finish()
    }
}

impl OpenPort {
    /// The port's totals: the sum over its handles' counters.
    pub fn stats(&self) -> PortStats {
        self.counters.iter().map(|c| c.snapshot()).sum()
    }
}

/// Opens port `name` with `backend` for `workers` workers (at least 1). For pcap, `name`
/// is only the port's name (its info is synthetic). See the crate comment.
pub fn open(name: &str, backend: Backend, workers: usize) -> Result<OpenPort, PortError> {
    open_steered(name, backend, workers, None)
}

/// [`open`], with `steering`'s XDP program on an AF_XDP port instead of the port's own
/// (see [`afxdp::Steering`]); other backends ignore it.
pub fn open_steered(
    name: &str,
    backend: Backend,
    workers: usize,
    steering: Option<&dyn afxdp::Steering>,
) -> Result<OpenPort, PortError> {
    if workers == 0 {
        return Err(PortError::NoWorkers);
    }
    match backend {
        Backend::AfPacket => {
            let (info, ports) = afpacket::open(name, workers)?;
            Ok(open_port(info, ports, afpacket::AfPacketPort::counters))
        }
        Backend::AfXdp { mode } => {
            let (info, ports) = match steering {
                Some(s) => afxdp::open_steered(name, workers, mode, s)?,
                None => afxdp::open(name, workers, mode)?,
            };
            Ok(open_resolving(info, ports, afxdp::AfXdpPort::counters))
        }
        Backend::Tap => {
            let (info, ports) = tap::open(name, workers)?;
            Ok(open_port(info, ports, tap::TapPort::counters))
        }
        Backend::Pcap { replay, record } => {
            let port = pcap::PcapPort::open(replay.as_deref(), record.as_deref())?;
            Ok(open_resolving(InterfaceInfo::synthetic(name), vec![port], pcap::PcapPort::counters))
        }
    }
}

/// An [`OpenPort`] of `info` whose handles are `ports` (boxed, in order), each with the
/// counters `counters` gives for it.
fn open_port<P: PortIo + 'static>(
    info: InterfaceInfo,
    ports: Vec<P>,
    counters: impl Fn(&P) -> &Arc<PortCounters>,
) -> OpenPort {
    OpenPort {
        info,
        counters: ports.iter().map(|p| counters(p).clone()).collect(),
        handles: ports.into_iter().map(|p| Box::new(p) as Box<dyn PortIo>).collect(),
    }
}

/// [`open_port`] for a backend without offloads: each handle behind
/// [`resolve::Resolving`], which finishes noted packets before the backend sees them.
fn open_resolving<P: PortIo + 'static>(
    info: InterfaceInfo,
    ports: Vec<P>,
    counters: impl Fn(&P) -> &Arc<PortCounters>,
) -> OpenPort {
    let mtu = info.mtu;
    let wrapped: Vec<resolve::Resolving<P>> = ports
        .into_iter()
        .map(|p| {
            let c = counters(&p).clone();
            resolve::Resolving::new(p, mtu, c)
        })
        .collect();
    let counters: Vec<Arc<PortCounters>> = wrapped.iter().map(|r| r.counters().clone()).collect();
    OpenPort {
        info,
        counters,
        handles: wrapped.into_iter().map(|p| Box::new(p) as Box<dyn PortIo>).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_names() {
        assert_eq!("afpacket".parse::<Backend>().unwrap(), Backend::AfPacket);
        assert_eq!("tap".parse::<Backend>().unwrap(), Backend::Tap);
        let xdp = |mode| Backend::AfXdp { mode };
        assert_eq!("afxdp".parse::<Backend>().unwrap(), xdp(afxdp::AttachMode::Auto));
        assert_eq!("afxdp-native".parse::<Backend>().unwrap(), xdp(afxdp::AttachMode::Native));
        assert_eq!("afxdp-generic".parse::<Backend>().unwrap(), xdp(afxdp::AttachMode::Generic));
        for bad in ["", "AF_PACKET", "AF_XDP", "af_xdp", "afxdp-skb", "afxdp ", "pcap", "tap "] {
            let err = bad.parse::<Backend>().unwrap_err();
            let msg = err.to_string();
            assert!(
                msg.contains("afpacket") && msg.contains("tap") && msg.contains("afxdp-generic"),
                "{msg}"
            );
            assert!(msg.contains(&format!("{bad:?}")), "{msg}");
        }
        for b in [
            Backend::AfPacket,
            Backend::Tap,
            xdp(afxdp::AttachMode::Auto),
            xdp(afxdp::AttachMode::Native),
            xdp(afxdp::AttachMode::Generic),
        ] {
            assert_eq!(b.to_string().parse::<Backend>().unwrap(), b);
        }
    }

    #[test]
    fn zero_workers_is_an_error() {
        assert!(matches!(
            open("x", Backend::Pcap { replay: None, record: None }, 0),
            Err(PortError::NoWorkers)
        ));
    }
}
