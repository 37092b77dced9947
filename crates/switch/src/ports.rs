//! The agent's authoritative port state, sans-IO: the switch's ports as OpenFlow sees
//! them ([`Port`], the one port description of every version: 1.3 and 1.0 controllers
//! are sent the same value, each version's encoder writing what it can say), their
//! configuration as controllers set it (port-mod), their link state as the kernel
//! reports it, and their statistics.
//!
//! [`PortTable`] is built from the [`PortSpec`]s of the opened ports. It answers the
//! port-description and port-statistics requests, applies port-mods
//! ([`PortTable::port_mod`]) and link changes ([`PortTable::link`]), each of which
//! returns the port to report in an `OFPT_PORT_STATUS` when something a controller can
//! see changed. [`PortTable::datapath_ports`] gives the datapath's per-port flags
//! that follow from the configuration.
//!
//! Configuration bits and what they do in the datapath:
//! - `OFPPC_PORT_DOWN`: the port neither receives nor forwards, and counts as not live
//!   (fast-failover buckets watching it are skipped). The interface itself is left as it
//!   is; its link state is still reported as the kernel gives it.
//! - `OFPPC_NO_RECV`, `OFPPC_NO_FWD`, `OFPPC_NO_PACKET_IN`: as named;
//! - `OFPPC_NO_FLOOD` (bit 4; 1.0 defines it and 1.3 reserves it, as Open vSwitch
//!   accepts it in both): left out of FLOOD.
//!
//! Other bits are refused with `OFPPMFC_BAD_CONFIG`. Invariant: every port's `config`
//! holds only [`CONFIG_BITS`]; `state` holds `LINK_DOWN` or `LIVE`, never both.

use std::collections::BTreeMap;
use std::sync::Arc;

use datapath::action::port as ofport;
use datapath::pipeline::{Datapath, PortInfo};
use openflow::model::Port;
use openflow::v13::multipart::PortStats;
use openflow::v13::port::{port_config as pc, port_features as pf, port_state as ps};
use openflow::v13::port_status::PortMod;
use openflow::wire::MacAddr;
use openflow::{ErrorKind, OfpError};

/// `OFPPC_NO_FLOOD` (1.0; reserved in 1.3).
pub const NO_FLOOD: u32 = 1 << 4;
/// The configuration bits a port-mod may set.
pub const CONFIG_BITS: u32 = pc::PORT_DOWN | pc::NO_RECV | NO_FLOOD | pc::NO_FWD | pc::NO_PACKET_IN;

/// Drops and errors a port backend counted (beyond the datapath's own counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BackendStats {
    pub rx_dropped: u64,
    pub tx_dropped: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
}

/// Reads a port backend's counters.
pub type BackendStatsFn = Arc<dyn Fn() -> BackendStats + Send + Sync>;

/// One opened port, as the runner describes it to the agent.
#[derive(Clone)]
pub struct PortSpec {
    /// OpenFlow port number (1.., or `OFPP_LOCAL`).
    pub no: u32,
    /// Its datapath counter and liveness slot.
    pub slot: u16,
    pub name: String,
    pub hw_addr: [u8; 6],
    /// Link speed in Mbit/s, when the kernel knows it.
    pub speed_mbps: Option<u32>,
    /// Whether the link is up now.
    pub up: bool,
    pub backend: Option<BackendStatsFn>,
}

impl std::fmt::Debug for PortSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortSpec")
            .field("no", &self.no)
            .field("slot", &self.slot)
            .field("name", &self.name)
            .field("up", &self.up)
            .finish_non_exhaustive()
    }
}

struct PortEntry {
    spec: PortSpec,
    config: u32,
    link_up: bool,
    /// When the port was added (ns), for the statistics' duration.
    since: u64,
    /// The datapath's counts in the port's slot when it was added (a slot is reused
    /// once its port is deleted): its statistics count from there.
    base: datapath::counters::PortStats,
}

impl PortEntry {
    fn state(&self) -> u32 {
        if self.link_up {
            ps::LIVE
        } else {
            ps::LINK_DOWN
        }
    }

    fn desc(&self) -> Port {
        let (curr, speed_kbps) = features_of(self.spec.speed_mbps);
        Port {
            port_no: self.spec.no,
            hw_addr: MacAddr(self.spec.hw_addr),
            name: self.spec.name.chars().take(15).collect(),
            config: self.config,
            state: self.state(),
            curr,
            advertised: 0,
            supported: 0,
            peer: 0,
            curr_speed: speed_kbps,
            max_speed: speed_kbps,
            undefined: None,
            properties: None,
        }
    }

    /// Whether the datapath should treat the port as live.
    fn live(&self) -> bool {
        self.link_up && self.config & pc::PORT_DOWN == 0
    }
}

/// The `ofp_port_features` "current" bits and speed (kbit/s) of a link of `mbps`.
fn features_of(mbps: Option<u32>) -> (u32, u32) {
    let Some(m) = mbps else {
        return (pf::F_OTHER, 0);
    };
    let rate = match m {
        10 => pf::F_10MB_FD,
        100 => pf::F_100MB_FD,
        1_000 => pf::F_1GB_FD,
        10_000 => pf::F_10GB_FD,
        40_000 => pf::F_40GB_FD,
        100_000 => pf::F_100GB_FD,
        1_000_000 => pf::F_1TB_FD,
        _ => pf::F_OTHER,
    };
    (rate | pf::COPPER, m.saturating_mul(1000))
}

/// The switch's ports (see the module comment).
#[derive(Default)]
pub struct PortTable {
    ports: BTreeMap<u32, PortEntry>,
}

/// What a port change means for the datapath and the controllers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortChange {
    /// The port as it is now (for `OFPT_PORT_STATUS` with reason MODIFY).
    pub port: Port,
    /// The datapath slot and whether it is live now.
    pub slot: u16,
    pub live: bool,
    /// Whether the datapath's per-port flags changed (a new config must be published).
    pub flags_changed: bool,
}

impl PortTable {
    /// The table of `specs`, created at `now` (ns).
    pub fn new(specs: Vec<PortSpec>, now: u64) -> PortTable {
        PortTable {
            ports: specs
                .into_iter()
                .map(|spec| {
                    let e = PortEntry {
                        link_up: spec.up,
                        spec,
                        config: 0,
                        since: now,
                        base: Default::default(),
                    };
                    (e.spec.no, e)
                })
                .collect(),
        }
    }

    /// Every port's description, by port number (LOCAL last).
    pub fn desc(&self) -> Vec<Port> {
        self.ports.values().map(PortEntry::desc).collect()
    }

    /// One port's description.
    pub fn get(&self, no: u32) -> Option<Port> {
        self.ports.get(&no).map(PortEntry::desc)
    }

    /// Whether `no` is one of the switch's ports.
    pub fn contains(&self, no: u32) -> bool {
        self.ports.contains_key(&no)
    }

    /// Port numbers, ascending.
    pub fn numbers(&self) -> impl Iterator<Item = u32> + '_ {
        self.ports.keys().copied()
    }

    /// The datapath's per-port flags, from the configuration.
    pub fn datapath_ports(&self) -> Vec<PortInfo> {
        self.ports
            .values()
            .map(|e| {
                let down = e.config & pc::PORT_DOWN != 0;
                let mut p = PortInfo::new(e.spec.no, e.spec.slot);
                p.no_recv = down || e.config & pc::NO_RECV != 0;
                p.no_fwd = down || e.config & pc::NO_FWD != 0;
                p.no_flood = down || e.config & NO_FLOOD != 0;
                p.no_packet_in = e.config & pc::NO_PACKET_IN != 0;
                p
            })
            .collect()
    }

    /// Applies a port-mod (OpenFlow 1.3.5 §7.3.4.3): the bits of `mask` in `config` are
    /// set; `advertise` must be 0 (this switch negotiates nothing). Errors:
    /// `OFPPMFC_BAD_PORT` for a port the switch lacks, `OFPPMFC_BAD_HW_ADDR` when
    /// `hw_addr` is not the port's, `OFPPMFC_BAD_CONFIG` for bits outside
    /// [`CONFIG_BITS`], `OFPPMFC_BAD_ADVERTISE` for a non-zero `advertise`. Returns the
    /// change when the configuration changed.
    pub fn port_mod(&mut self, pm: &PortMod) -> Result<Option<PortChange>, OfpError> {
        let e = self.ports.get_mut(&pm.port_no).ok_or_else(|| {
            OfpError::new(
                ErrorKind::PORT_MOD_FAILED_BAD_PORT,
                format!("port {} does not exist", pm.port_no),
            )
        })?;
        if pm.hw_addr.0 != e.spec.hw_addr {
            return Err(OfpError::new(
                ErrorKind::PORT_MOD_FAILED_BAD_HW_ADDR,
                format!(
                    "hw_addr {} is not port {}'s ({})",
                    pm.hw_addr,
                    pm.port_no,
                    MacAddr(e.spec.hw_addr)
                ),
            ));
        }
        let bad = (pm.config | pm.mask) & !CONFIG_BITS;
        if bad != 0 {
            return Err(OfpError::new(
                ErrorKind::PORT_MOD_FAILED_BAD_CONFIG,
                format!("config bits {bad:#x} are not supported (supported: {CONFIG_BITS:#x})"),
            ));
        }
        if pm.advertise != 0 {
            return Err(OfpError::new(
                ErrorKind::PORT_MOD_FAILED_BAD_ADVERTISE,
                format!("advertise {:#x}: this switch advertises no features", pm.advertise),
            ));
        }
        let config = (e.config & !pm.mask) | (pm.config & pm.mask);
        if config == e.config {
            return Ok(None);
        }
        e.config = config;
        Ok(Some(PortChange {
            port: e.desc(),
            slot: e.spec.slot,
            live: e.live(),
            flags_changed: true,
        }))
    }

    /// Records port `no`'s link going up or down; returns the change when its state
    /// changed (none for an unknown port).
    pub fn link(&mut self, no: u32, up: bool) -> Option<PortChange> {
        let e = self.ports.get_mut(&no)?;
        if e.link_up == up {
            return None;
        }
        e.link_up = up;
        Some(PortChange { port: e.desc(), slot: e.spec.slot, live: e.live(), flags_changed: false })
    }

    /// Adds a port opened at run time at `now`; `base` is what the datapath counted in
    /// its slot so far. False (and nothing changes) when its number or slot is taken.
    pub fn add(&mut self, spec: PortSpec, now: u64, base: datapath::counters::PortStats) -> bool {
        if self.ports.contains_key(&spec.no)
            || self.ports.values().any(|e| e.spec.slot == spec.slot)
        {
            return false;
        }
        let e = PortEntry { link_up: spec.up, spec, config: 0, since: now, base };
        self.ports.insert(e.spec.no, e);
        true
    }

    /// Removes port `no`; returns its last description and spec.
    pub fn remove(&mut self, no: u32) -> Option<(Port, PortSpec)> {
        self.ports.remove(&no).map(|e| (e.desc(), e.spec))
    }

    /// The slots of every port.
    pub fn slots(&self) -> impl Iterator<Item = u16> + '_ {
        self.ports.values().map(|e| e.spec.slot)
    }

    /// The port with kernel interface name `name`.
    pub fn by_name(&self, name: &str) -> Option<u32> {
        self.ports.values().find(|e| e.spec.name == name).map(|e| e.spec.no)
    }

    /// Port statistics for `port_no` (`OFPP_ANY`: every port) at `now`: the datapath's
    /// packet and byte counts, the backend's drops and errors. An unknown port is
    /// `OFPBRC_BAD_PORT` (an empty reply would hide a mistyped number).
    pub fn stats(&self, dp: &Datapath, port_no: u32, now: u64) -> Result<Vec<PortStats>, OfpError> {
        let pick: Vec<&PortEntry> = if port_no == ofport::ANY {
            self.ports.values().collect()
        } else {
            vec![self.ports.get(&port_no).ok_or_else(|| {
                OfpError::new(
                    ErrorKind::BAD_REQUEST_BAD_PORT,
                    format!("port {port_no} does not exist"),
                )
            })?]
        };
        Ok(pick
            .into_iter()
            .map(|e| {
                let c = dp.read_port(e.spec.slot);
                let c = datapath::counters::PortStats {
                    rx_packets: c.rx_packets.saturating_sub(e.base.rx_packets),
                    rx_bytes: c.rx_bytes.saturating_sub(e.base.rx_bytes),
                    tx_packets: c.tx_packets.saturating_sub(e.base.tx_packets),
                    tx_bytes: c.tx_bytes.saturating_sub(e.base.tx_bytes),
                };
                let b = e.spec.backend.as_ref().map(|f| f()).unwrap_or_default();
                let d = now.saturating_sub(e.since);
                PortStats {
                    port_no: e.spec.no,
                    rx_packets: c.rx_packets,
                    tx_packets: c.tx_packets,
                    rx_bytes: c.rx_bytes,
                    tx_bytes: c.tx_bytes,
                    rx_dropped: b.rx_dropped,
                    tx_dropped: b.tx_dropped,
                    rx_errors: b.rx_errors,
                    tx_errors: b.tx_errors,
                    rx_frame_err: 0,
                    rx_over_err: 0,
                    rx_crc_err: 0,
                    collisions: 0,
                    duration_sec: (d / 1_000_000_000) as u32,
                    duration_nsec: (d % 1_000_000_000) as u32,
                    properties: Vec::new(),
                }
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(no: u32, slot: u16, up: bool) -> PortSpec {
        PortSpec {
            no,
            slot,
            name: format!("p{no}"),
            hw_addr: [2, 0, 0, 0, 0, no as u8],
            speed_mbps: Some(10_000),
            up,
            backend: Some(Arc::new(move || BackendStats {
                rx_dropped: no as u64,
                ..BackendStats::default()
            })),
        }
    }

    fn table() -> PortTable {
        PortTable::new(vec![spec(2, 1, false), spec(1, 0, true)], 0)
    }

    fn pm(no: u32, config: u32, mask: u32) -> PortMod {
        PortMod {
            port_no: no,
            hw_addr: MacAddr([2, 0, 0, 0, 0, no as u8]),
            config,
            mask,
            advertise: 0,
            properties: None,
        }
    }

    #[test]
    fn describes_ports_in_number_order_with_link_state_and_speed() {
        let d = table().desc();
        assert_eq!(d.iter().map(|p| p.port_no).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(d[0].state, ps::LIVE);
        assert_eq!(d[1].state, ps::LINK_DOWN);
        assert_eq!(d[0].curr, pf::F_10GB_FD | pf::COPPER);
        assert_eq!(d[0].curr_speed, 10_000_000);
        assert_eq!(d[0].name, "p1");
    }

    #[test]
    fn port_mod_sets_masked_bits_and_maps_them_to_datapath_flags() {
        let mut t = table();
        let ch = t.port_mod(&pm(1, pc::NO_FWD | pc::NO_RECV, pc::NO_FWD)).unwrap().unwrap();
        assert_eq!(ch.port.config, pc::NO_FWD);
        assert!(ch.live);
        let dp = t.datapath_ports();
        let p1 = dp.iter().find(|p| p.no == 1).unwrap();
        assert!(p1.no_fwd && !p1.no_recv && !p1.no_flood);
        // The same again changes nothing.
        assert_eq!(t.port_mod(&pm(1, pc::NO_FWD, pc::NO_FWD)).unwrap(), None);
        let ch = t.port_mod(&pm(1, pc::PORT_DOWN, pc::PORT_DOWN)).unwrap().unwrap();
        assert!(!ch.live);
        let p1 = t.datapath_ports().into_iter().find(|p| p.no == 1).unwrap();
        assert!(p1.no_recv && p1.no_fwd && p1.no_flood);
    }

    #[test]
    fn port_mod_errors() {
        let mut t = table();
        let code = |r: Result<Option<PortChange>, OfpError>| r.unwrap_err().kind;
        assert_eq!(code(t.port_mod(&pm(9, 0, 0))), ErrorKind::PORT_MOD_FAILED_BAD_PORT);
        let mut bad_mac = pm(1, 0, 0);
        bad_mac.hw_addr = MacAddr([9; 6]);
        assert_eq!(code(t.port_mod(&bad_mac)), ErrorKind::PORT_MOD_FAILED_BAD_HW_ADDR);
        assert_eq!(code(t.port_mod(&pm(1, 1 << 1, 1 << 1))), ErrorKind::PORT_MOD_FAILED_BAD_CONFIG);
        let mut adv = pm(1, 0, 0);
        adv.advertise = pf::F_1GB_FD;
        assert_eq!(code(t.port_mod(&adv)), ErrorKind::PORT_MOD_FAILED_BAD_ADVERTISE);
        assert!(t.datapath_ports().iter().all(|p| !p.no_fwd && !p.no_recv));
    }

    #[test]
    fn link_changes_report_once() {
        let mut t = table();
        assert_eq!(t.link(1, true), None);
        let ch = t.link(1, false).unwrap();
        assert_eq!(ch.port.state, ps::LINK_DOWN);
        assert!(!ch.live);
        assert_eq!(t.link(1, false), None);
        assert!(t.link(2, true).unwrap().live);
        assert_eq!(t.link(7, true), None);
    }
}
