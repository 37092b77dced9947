//! What processing produces: packets for ports, packets for the NORMAL pipeline, and
//! packet-in records for the controller.
//!
//! [`Outputs`] is filled per call and drained by the caller (the worker loop sends
//! `tx` to its port batches). Packet-ins go to a bounded queue shared by the workers
//! ([`std::sync::mpsc::sync_channel`]); when it is full the record is dropped and counted
//! (`Misc::PacketInDropped`), so a slow controller never blocks forwarding.

use crate::key::FlowKey;
use crate::packet::Packet;

/// A packet to transmit on a port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tx {
    /// Port number: a physical port or `port::LOCAL`.
    pub port: u32,
    /// The set-queue in force, if any.
    pub queue: Option<u32>,
    pub packet: Packet,
}

/// A packet handed to the NORMAL (learning switch) pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NormalPacket {
    pub in_port: u32,
    pub key: FlowKey,
    pub packet: Packet,
}

/// Why a packet went to the controller (`OFPR_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PacketInReason {
    NoMatch,
    Action,
    InvalidTtl,
}

/// A packet-in record for the agent: the whole frame and the length the controller asked
/// for. The agent cuts the frame to `max_len` and buffers it (or not) as OpenFlow says;
/// the datapath never cuts.
///
/// Invariant: `total_len == data.len()`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacketIn {
    pub reason: PacketInReason,
    /// The table whose rule (or miss) sent it; 0 for a packet-out's actions.
    pub table_id: u8,
    /// Cookie of the rule that sent it (`u64::MAX` when no rule did, as OpenFlow asks).
    pub cookie: u64,
    pub in_port: u32,
    /// The key at the time (metadata included), for the packet-in's match.
    pub key: FlowKey,
    /// The length asked for: an [`Action::Controller`](crate::action::Action::Controller)'s
    /// `max_len` as given, 0xffff (`OFPCML_NO_BUFFER`) meaning "the whole packet, not
    /// buffered"; for a packet-in no action gave a length for (output to the CONTROLLER
    /// port, an invalid TTL, a miss under
    /// [`MissBehaviour::Controller`](super::MissBehaviour::Controller) asking for 0xffff),
    /// the config's `packet_in_max_len`.
    pub max_len: u16,
    /// Length of the whole frame (`data.len()`).
    pub total_len: usize,
    /// The whole frame as it was when sent (after the rewrites before the action).
    pub data: Vec<u8>,
}

/// Where NORMAL packets go once a learning switch exists.
pub trait NormalHandler {
    fn handle(&mut self, pkt: NormalPacket, out: &mut Outputs);
}

/// The result of processing packets.
#[derive(Debug, Default)]
pub struct Outputs {
    pub tx: Vec<Tx>,
    pub normal: Vec<NormalPacket>,
}

impl Outputs {
    pub fn new() -> Outputs {
        Outputs::default()
    }

    pub fn clear(&mut self) {
        self.tx.clear();
        self.normal.clear();
    }

    /// Hands every NORMAL packet to `h` (which may add to `tx`).
    pub fn drain_normal<H: NormalHandler + ?Sized>(&mut self, h: &mut H) {
        let normal = std::mem::take(&mut self.normal);
        for p in normal {
            h.handle(p, self);
        }
    }

    /// The ports of `tx`, in order (for tests).
    pub fn ports(&self) -> Vec<u32> {
        self.tx.iter().map(|t| t.port).collect()
    }
}
