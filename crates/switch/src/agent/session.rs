//! One connection as the agent sees it: the protocol machine ([`Connection`]), what kind
//! of peer it is, its controller role and its asynchronous-message filter.
//!
//! Roles (OpenFlow 1.3.5 §6.3.5): every connection starts EQUAL. A slave receives no
//! packet-ins and no flow-removed by default and may not change the switch's state. The
//! role of a 1.0 connection is always EQUAL (1.0 has no roles).

use openflow::v13::role::{AsyncConfig, ControllerRole};

use crate::conn::Connection;

/// What kind of peer a connection serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionKind {
    /// A controller (active or passive OpenFlow channel): counts for the fail mode.
    Controller,
    /// The management socket (`peregrine ctl`): served alike, but its presence or
    /// absence does not change the fail mode.
    Management,
}

/// Asynchronous message kinds, for the per-role masks of [`AsyncConfig`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsyncKind {
    PacketIn,
    PortStatus,
    FlowRemoved,
    /// 1.4.
    RoleStatus,
    /// 1.4.
    TableStatus,
    /// 1.4.
    RequestForward,
}

impl AsyncKind {
    /// Whether OpenFlow 1.3 has this kind of message (else it goes to 1.4 connections
    /// only).
    pub fn in_v13(self) -> bool {
        matches!(self, AsyncKind::PacketIn | AsyncKind::PortStatus | AsyncKind::FlowRemoved)
    }
}

/// The default filter of OpenFlow 1.3.5 §6.1.1: masters and equals get every packet-in
/// (no match, action, invalid TTL), port-status and flow-removed reason; slaves get only
/// port-status. Of 1.4's kinds, every connection gets role-status (master request,
/// config, experimenter) and table-status (vacancy down and up), and none gets
/// request-forward until it asks for it.
pub fn default_async() -> AsyncConfig {
    AsyncConfig {
        packet_in_mask: [0b111, 0],
        port_status_mask: [0b111, 0b111],
        flow_removed_mask: [0b1111, 0],
        role_status_mask: [0b111, 0b111],
        table_status_mask: [0b11000, 0b11000],
        requestforward_mask: [0, 0],
        properties: None,
    }
}

pub(crate) struct Session {
    pub conn: Connection,
    pub kind: SessionKind,
    /// Who is at the other end, for the log (`tcp:192.0.2.1:6653`).
    pub peer: String,
    /// When it opened (ns).
    pub opened_ns: u64,
    /// Whether its end has been told to the log.
    pub end_noticed: bool,
    pub role: ControllerRole,
    pub async_cfg: AsyncConfig,
    /// Its open bundles ([`super::bundle`]).
    pub bundles: super::bundle::Bundles,
    /// Its flow monitors ([`super::monitor`]).
    pub monitors: super::monitor::Monitors,
    /// While its monitors' updates are paused, what it was not told.
    pub monitor_pause: Option<super::monitor::Paused>,
    /// Bytes the shell took and has not yet written ([`super::pace`]).
    pub in_flight: usize,
    /// Its flow-stats reply under way.
    pub dump: Option<super::pace::Dump>,
    /// Whether its backlog reached `BACKLOG_HIGH` and has not yet come down to
    /// `BACKLOG_LOW`.
    pub pressed: bool,
    /// When its backlog last reached `BACKLOG_HIGH`.
    pub pressed_at: u64,
    /// Whether the log was told that its backlog held it.
    pub backlog_noticed: bool,
    /// A packet-out's packets the workers could not take yet: the connection is held
    /// until they do.
    pub stalled: Option<datapath::pipeline::Outputs>,
}

impl Session {
    pub fn new(conn: Connection, kind: SessionKind, peer: String, opened_ns: u64) -> Session {
        Session {
            conn,
            kind,
            peer,
            opened_ns,
            end_noticed: false,
            role: ControllerRole::Equal,
            async_cfg: default_async(),
            bundles: Default::default(),
            monitors: Default::default(),
            monitor_pause: None,
            in_flight: 0,
            dump: None,
            pressed: false,
            pressed_at: 0,
            backlog_noticed: false,
            stalled: None,
        }
    }

    /// What it has unsent: queued, or taken by the shell and not yet written.
    pub fn backlog(&self) -> usize {
        self.conn.outbox_bytes() + self.in_flight
    }

    pub fn is_slave(&self) -> bool {
        self.role == ControllerRole::Slave
    }

    /// Whether this connection wants an asynchronous message of `kind` with `reason`.
    pub fn wants(&self, kind: AsyncKind, reason: u8) -> bool {
        let i = usize::from(self.is_slave());
        let masks = match kind {
            AsyncKind::PacketIn => self.async_cfg.packet_in_mask,
            AsyncKind::PortStatus => self.async_cfg.port_status_mask,
            AsyncKind::FlowRemoved => self.async_cfg.flow_removed_mask,
            AsyncKind::RoleStatus => self.async_cfg.role_status_mask,
            AsyncKind::TableStatus => self.async_cfg.table_status_mask,
            AsyncKind::RequestForward => self.async_cfg.requestforward_mask,
        };
        reason < 32 && masks.get(i).is_some_and(|m| m & (1 << reason) != 0)
    }
}
