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

/// A packet-in record for the agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacketIn {
    pub reason: PacketInReason,
    pub table_id: u8,
    /// Cookie of the rule that sent it (`u64::MAX` when no rule did, as OpenFlow asks).
    pub cookie: u64,
    pub in_port: u32,
    /// The key at the time (metadata included), for the packet-in's match.
    pub key: FlowKey,
    /// Length of the whole frame.
    pub total_len: usize,
    /// The frame, cut to the requested length.
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
