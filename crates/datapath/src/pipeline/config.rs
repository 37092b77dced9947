//! Datapath-wide settings published with each pipeline version, and the port liveness
//! table that fast-failover groups read.
//!
//! Ports: [`DatapathConfig::ports`] lists the switch's ports sorted by number; each has a
//! `slot`, a small dense index chosen by the agent that stays the same for the port's
//! life. The slot indexes the per-worker port counters and the [`PortLiveness`] table.
//! Liveness changes without a new version (a link going down must switch fast-failover
//! groups at once); it is read per packet only by fast-failover (and select) buckets
//! that watch a port.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::action::Action;
use crate::key::FlowKey;
use crate::packet::{Layers, Packet};
use crate::rewrite::RewriteError;

/// Most port slots a datapath tracks.
pub const MAX_PORT_SLOTS: usize = 4096;

/// The header rewrite function: [`crate::rewrite::apply`] in production; tests may
/// substitute a model.
pub type RewriteFn =
    fn(&mut Packet, &mut FlowKey, &mut Layers, &Action) -> Result<(), RewriteError>;

/// What happens to a packet that no rule of a table matches (OpenFlow 1.3: dropped; the
/// table-miss entry is an ordinary priority-0 rule).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissBehaviour {
    Drop,
    /// OpenFlow 1.0 behaviour: a packet-in with reason `NoMatch`, asking for `max_len`
    /// bytes (0xffff: the config's `packet_in_max_len`).
    Controller {
        max_len: u16,
    },
}

/// One switch port as the pipeline sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortInfo {
    /// OpenFlow port number (below `port::MAX`).
    pub no: u32,
    /// Dense index (< [`MAX_PORT_SLOTS`]) for counters and liveness.
    pub slot: u16,
    /// `OFPPC_NO_RECV`: drop every packet received here.
    pub no_recv: bool,
    /// `OFPPC_NO_FWD`: drop every packet output here.
    pub no_fwd: bool,
    /// `OFPPC_NO_FLOOD`: leave out of FLOOD.
    pub no_flood: bool,
    /// `OFPPC_NO_PACKET_IN`: no packet-ins for packets received here.
    pub no_packet_in: bool,
}

impl PortInfo {
    pub fn new(no: u32, slot: u16) -> PortInfo {
        PortInfo { no, slot, no_recv: false, no_fwd: false, no_flood: false, no_packet_in: false }
    }
}

/// Settings that change rarely; replaced as a whole by `Writer::set_config`.
#[derive(Clone, Debug)]
pub struct DatapathConfig {
    /// Ports, sorted by number (`set_config` sorts them).
    pub ports: Vec<PortInfo>,
    /// `OFPC_INVALID_TTL_TO_CONTROLLER`: a TTL decrement reaching zero sends a packet-in
    /// (reason `InvalidTtl`) instead of a silent drop.
    pub invalid_ttl_to_controller: bool,
    pub miss: MissBehaviour,
    /// The `max_len` given to packet-ins that no action gave a length for (see
    /// [`PacketIn::max_len`](super::PacketIn::max_len)); 0xffff: the whole packet.
    pub packet_in_max_len: u16,
    pub rewrite: RewriteFn,
}

impl Default for DatapathConfig {
    fn default() -> Self {
        DatapathConfig {
            ports: Vec::new(),
            invalid_ttl_to_controller: false,
            miss: MissBehaviour::Drop,
            packet_in_max_len: u16::MAX,
            rewrite: crate::rewrite::apply,
        }
    }
}

impl DatapathConfig {
    /// The port numbered `no`.
    #[inline]
    pub fn port(&self, no: u32) -> Option<&PortInfo> {
        self.ports.binary_search_by_key(&no, |p| p.no).ok().and_then(|i| self.ports.get(i))
    }
}

/// Port numbers below this are found in a [`PortIndex`] by direct indexing; higher ones
/// by binary search.
const DIRECT_PORTS: usize = 1024;

/// Port number → the config's [`PortInfo`], built with each config so that a packet's
/// port lookups (input, output) cost one array read for the usual small port numbers.
/// Invariant: gives exactly what [`DatapathConfig::port`] gives for every number.
#[derive(Clone, Debug)]
pub(crate) struct PortIndex {
    /// For each number below [`DIRECT_PORTS`]: 1 + the index in `ports`, or 0.
    direct: Box<[u16]>,
}

impl PortIndex {
    pub fn new(cfg: &DatapathConfig) -> PortIndex {
        let mut direct = vec![0u16; DIRECT_PORTS].into_boxed_slice();
        for p in &cfg.ports {
            let found = cfg
                .ports
                .binary_search_by_key(&p.no, |q| q.no)
                .ok()
                .and_then(|i| u16::try_from(i + 1).ok());
            if let (Some(slot), Some(i)) = (direct.get_mut(p.no as usize), found) {
                *slot = i;
            }
        }
        PortIndex { direct }
    }

    /// The port numbered `no` in `cfg` (the config this index was built from).
    #[inline]
    pub fn get<'c>(&self, cfg: &'c DatapathConfig, no: u32) -> Option<&'c PortInfo> {
        match self.direct.get(no as usize) {
            Some(0) => None,
            Some(&i) => cfg.ports.get(i as usize - 1),
            None => cfg.port(no),
        }
    }
}

/// Whether each port slot's link is up; shared by the agent (writer) and every worker.
pub struct PortLiveness {
    live: Box<[AtomicBool]>,
}

impl PortLiveness {
    /// Every slot starts live.
    pub fn new() -> PortLiveness {
        PortLiveness { live: (0..MAX_PORT_SLOTS).map(|_| AtomicBool::new(true)).collect() }
    }

    #[inline]
    pub fn is_live(&self, slot: u16) -> bool {
        self.live.get(slot as usize).is_some_and(|b| b.load(Ordering::Relaxed))
    }

    pub fn set(&self, slot: u16, live: bool) {
        if let Some(b) = self.live.get(slot as usize) {
            b.store(live, Ordering::Relaxed);
        }
    }
}

impl Default for PortLiveness {
    fn default() -> Self {
        PortLiveness::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_index_agrees_with_binary_search() {
        let mut ports: Vec<PortInfo> = [1u32, 7, 1023, 1024, 5000, port_max()]
            .iter()
            .enumerate()
            .map(|(i, &no)| PortInfo::new(no, i as u16))
            .collect();
        ports.sort_by_key(|p| p.no);
        let cfg = DatapathConfig { ports, ..DatapathConfig::default() };
        let idx = PortIndex::new(&cfg);
        for no in (0..1100).chain([4999, 5000, 5001, port_max(), u32::MAX]) {
            assert_eq!(idx.get(&cfg, no), cfg.port(no), "port {no}");
        }
        assert_eq!(idx.get(&cfg, 1023).map(|p| p.slot), Some(2));
    }

    fn port_max() -> u32 {
        crate::action::port::MAX
    }
}
