//! `OFPMP_FLOW_MONITOR` (OpenFlow 1.4): the request (`ofp_flow_monitor_request`) adds,
//! changes or removes one monitor of flow-table changes; the reply and later updates
//! are a list of `ofp_flow_update_*` elements, each `length:u16, event:u16` first.
//!
//! - request: `monitor_id:u32, out_port:u32, out_group:u32, flags:u16, table_id:u8,
//!   command:u8` (16 bytes), then an `ofp_match` that ends the body;
//! - full update (events `INITIAL`, `ADDED`, `REMOVED`, `MODIFIED`): `table_id:u8,
//!   reason:u8, idle_timeout:u16, hard_timeout:u16, priority:u16, pad[4], cookie:u64`
//!   (24 bytes with the head), then the match and instructions to `length`;
//! - abbreviated update (`ABBREV`): `xid:u32` (8 bytes);
//! - `PAUSED` / `RESUMED`: `pad[4]` (8 bytes).
//!
//! An update of an event number 1.4 does not define keeps its bytes. A `length` below
//! the event's size (or not 8 for the 8-byte events) or beyond the body is
//! `OFPBRC_BAD_LEN`; a bad match or instruction keeps its own error.

use super::take_sized;
use crate::error::{ErrorKind, OfpError};
use crate::instruction::Instruction;
use crate::match13::Match;
use crate::wire::{Reader, Writer};

/// Length of `ofp_flow_monitor_request` before its match.
pub const FLOW_MONITOR_REQUEST_FIXED_LEN: usize = 16;
/// Length of `ofp_flow_update_full` before its match.
pub const FLOW_UPDATE_FULL_FIXED_LEN: usize = 24;
/// Length of the abbreviated, paused and resumed updates.
pub const FLOW_UPDATE_SHORT_LEN: usize = 8;

spec_table! {
    /// `ofp_flow_monitor_flags` bits.
    pub mod monitor_flags: u16 as bits {
        INITIAL, ADD, REMOVED, MODIFY, INSTRUCTIONS, NO_ABBREV, ONLY_OWN,
    }
}

spec_table! {
    /// `ofp_flow_update_event` numbers.
    pub mod update_event: u16 as numbers {
        INITIAL, ADDED, REMOVED, MODIFIED, ABBREV, PAUSED, RESUMED,
    }
}

wire_enum! {
    /// `ofp_flow_monitor_command`.
    pub enum FlowMonitorCommand: u8 as from_u8 / to_u8 {
        Add = 0,
        Modify = 1,
        Delete = 2,
    }
}

/// `ofp_flow_monitor_request`: the monitor's id, which flows it watches (out port and
/// group, table, match; `OFPP_ANY`, `OFPG_ANY`, `OFPTT_ALL` for any) and which changes
/// it reports (`monitor_flags`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FlowMonitorRequest {
    pub monitor_id: u32,
    pub out_port: u32,
    pub out_group: u32,
    /// `monitor_flags` bits.
    pub flags: u16,
    pub table_id: u8,
    pub command: FlowMonitorCommand,
    pub match_: Match,
}

impl FlowMonitorRequest {
    /// Reads the whole request body: `r` must end with the match.
    pub fn decode(r: &mut Reader) -> Result<FlowMonitorRequest, OfpError> {
        let monitor_id = r.u32()?;
        let out_port = r.u32()?;
        let out_group = r.u32()?;
        let flags = r.u16()?;
        let table_id = r.u8()?;
        let command = FlowMonitorCommand::from_u8(r.u8()?);
        let match_ = Match::decode(r)?;
        r.expect_end("flow monitor request body")?;
        Ok(FlowMonitorRequest { monitor_id, out_port, out_group, flags, table_id, command, match_ })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.monitor_id);
        w.u32(self.out_port);
        w.u32(self.out_group);
        w.u16(self.flags);
        w.u8(self.table_id);
        w.u8(self.command.to_u8());
        self.match_.encode(w);
    }
}

wire_enum! {
    /// The events of a full flow update.
    pub enum FullUpdateEvent: u16 as from_u16 / to_u16 {
        /// `OFPFME_INITIAL`: a flow that matched when the monitor was set up.
        Initial = 0,
        /// `OFPFME_ADDED`.
        Added = 1,
        /// `OFPFME_REMOVED` (`reason` says why).
        Removed = 2,
        /// `OFPFME_MODIFIED`: the flow's instructions changed.
        Modified = 3,
    }
}

/// `ofp_flow_update_full`: one flow and what happened to it.
///
/// Invariant: `event` is never `Unknown` (updates of other events are other
/// [`FlowUpdate`] variants).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FlowUpdateFull {
    pub event: FullUpdateEvent,
    pub table_id: u8,
    /// An `ofp_flow_removed_reason` for `Removed`, else 0.
    pub reason: u8,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub priority: u16,
    pub cookie: u64,
    pub match_: Match,
    /// Empty unless the monitor asked for instructions.
    pub instructions: Vec<Instruction>,
}

/// One element of a flow-monitor reply (module comment).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FlowUpdate {
    /// Events 0-3: the flow in full.
    Full(FlowUpdateFull),
    /// `OFPFME_ABBREV`: a change this controller made, by the xid of its request.
    Abbrev { xid: u32 },
    /// `OFPFME_PAUSED`: updates stop until the switch can send them again.
    Paused,
    /// `OFPFME_RESUMED`.
    Resumed,
    /// An event 1.4 does not define, with the bytes after `length` and `event`.
    ///
    /// Invariant: `event` is none of 0-6.
    Unknown { event: u16, data: Vec<u8> },
}

impl FlowUpdate {
    /// The `event` number on the wire.
    pub fn event(&self) -> u16 {
        match self {
            FlowUpdate::Full(f) => f.event.to_u16(),
            FlowUpdate::Abbrev { .. } => update_event::ABBREV,
            FlowUpdate::Paused => update_event::PAUSED,
            FlowUpdate::Resumed => update_event::RESUMED,
            FlowUpdate::Unknown { event, .. } => *event,
        }
    }

    /// Reads one update: its `length` must be the event's size (at least it, for full
    /// updates and unknown events) and fit in `r`.
    pub fn decode(r: &mut Reader) -> Result<FlowUpdate, OfpError> {
        let event = r.peek_u16(2)?;
        let min = match event {
            0..=3 => FLOW_UPDATE_FULL_FIXED_LEN,
            4..=6 => FLOW_UPDATE_SHORT_LEN,
            _ => 4,
        };
        let mut s = take_sized(r, 0, min, "flow update")?;
        if (4..=6).contains(&event) && s.remaining() != FLOW_UPDATE_SHORT_LEN {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_LEN,
                format!("flow update of event {event} has length {}, must be 8", s.remaining()),
            ));
        }
        s.skip(4)?;
        Ok(match event {
            0..=3 => {
                let table_id = s.u8()?;
                let reason = s.u8()?;
                let idle_timeout = s.u16()?;
                let hard_timeout = s.u16()?;
                let priority = s.u16()?;
                s.skip(4)?;
                let cookie = s.u64()?;
                let match_ = Match::decode(&mut s)?;
                FlowUpdate::Full(FlowUpdateFull {
                    event: FullUpdateEvent::from_u16(event),
                    table_id,
                    reason,
                    idle_timeout,
                    hard_timeout,
                    priority,
                    cookie,
                    match_,
                    instructions: Instruction::decode_list(&mut s)?,
                })
            }
            update_event::ABBREV => FlowUpdate::Abbrev { xid: s.u32()? },
            update_event::PAUSED => FlowUpdate::Paused,
            update_event::RESUMED => FlowUpdate::Resumed,
            event => FlowUpdate::Unknown { event, data: s.take_rest().to_vec() },
        })
    }

    /// Writes the update with its length.
    pub fn encode(&self, w: &mut Writer) {
        w.sized(0, |w| {
            w.u16(0);
            w.u16(self.event());
            match self {
                FlowUpdate::Full(f) => {
                    w.u8(f.table_id);
                    w.u8(f.reason);
                    w.u16(f.idle_timeout);
                    w.u16(f.hard_timeout);
                    w.u16(f.priority);
                    w.zeros(4);
                    w.u64(f.cookie);
                    f.match_.encode(w);
                    Instruction::encode_list(&f.instructions, w);
                }
                FlowUpdate::Abbrev { xid } => w.u32(*xid),
                FlowUpdate::Paused | FlowUpdate::Resumed => w.zeros(4),
                FlowUpdate::Unknown { data, .. } => w.bytes(data),
            }
        });
    }
}

/// proptest strategies for flow-monitor requests and updates.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use crate::instruction::strategy::arb_instruction;
    use crate::match13::strategy::arb_match;
    use proptest::prelude::*;

    pub fn arb_flow_monitor_request() -> impl Strategy<Value = FlowMonitorRequest> {
        (
            (any::<u32>(), any::<u32>(), any::<u32>()),
            (any::<u16>(), any::<u8>(), <FlowMonitorCommand as crate::wire::Field>::arb()),
            arb_match(),
        )
            .prop_map(
                |((monitor_id, out_port, out_group), (flags, table_id, command), match_)| {
                    FlowMonitorRequest {
                        monitor_id,
                        out_port,
                        out_group,
                        flags,
                        table_id,
                        command,
                        match_,
                    }
                },
            )
    }

    pub fn arb_flow_update() -> impl Strategy<Value = FlowUpdate> {
        let full = (
            (0u16..4, any::<u8>(), any::<u8>()),
            (any::<u16>(), any::<u16>(), any::<u16>(), any::<u64>()),
            arb_match(),
            proptest::collection::vec(arb_instruction(), 0..3),
        )
            .prop_map(
                |(
                    (event, table_id, reason),
                    (idle_timeout, hard_timeout, priority, cookie),
                    match_,
                    instructions,
                )| {
                    FlowUpdate::Full(FlowUpdateFull {
                        event: FullUpdateEvent::from_u16(event),
                        table_id,
                        reason,
                        idle_timeout,
                        hard_timeout,
                        priority,
                        cookie,
                        match_,
                        instructions,
                    })
                },
            );
        prop_oneof![
            full,
            any::<u32>().prop_map(|xid| FlowUpdate::Abbrev { xid }),
            Just(FlowUpdate::Paused),
            Just(FlowUpdate::Resumed),
            (7u16.., crate::wire::arb_bytes(0..12))
                .prop_map(|(event, data)| FlowUpdate::Unknown { event, data }),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::strategy::*;
    use super::*;
    use crate::oxm::Oxm;
    use crate::wire::{assert_refused, encoded};

    roundtrip_tests! {
        request_roundtrip: arb_flow_monitor_request() => FlowMonitorRequest;
        update_roundtrip: arb_flow_update() => FlowUpdate;
    }

    proptest::proptest! {
        #[test]
        fn truncated_updates_are_errors(u in arb_flow_update()) {
            let bytes = encoded(|w| u.encode(w));
            for n in 0..bytes.len() {
                proptest::prop_assert!(FlowUpdate::decode(&mut Reader::new(&bytes[..n])).is_err());
            }
        }
    }

    #[test]
    fn request_bytes_value_bytes() {
        let mut bytes = vec![0, 0, 0, 9, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff, 0, 3, 0xff, 2];
        bytes.extend_from_slice(&[0, 1, 0, 12, 0x80, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 0]);
        let m = FlowMonitorRequest::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(
            m,
            FlowMonitorRequest {
                monitor_id: 9,
                out_port: 1,
                out_group: 0xffff_ffff,
                flags: monitor_flags::INITIAL | monitor_flags::ADD,
                table_id: 0xff,
                command: FlowMonitorCommand::Delete,
                match_: Match { fields: vec![Oxm::InPort(5)] },
            }
        );
        assert_eq!(encoded(|w| m.encode(w)), bytes);
    }

    #[test]
    fn update_bytes_value_bytes() {
        let abbrev = [0, 8, 0, 4, 0, 0, 4, 0xd2];
        let u = FlowUpdate::decode(&mut Reader::new(&abbrev)).unwrap();
        assert_eq!(u, FlowUpdate::Abbrev { xid: 1234 });
        assert_eq!(encoded(|w| u.encode(w)), abbrev);
        let paused = [0, 8, 0, 5, 0, 0, 0, 0];
        assert_eq!(FlowUpdate::decode(&mut Reader::new(&paused)).unwrap(), FlowUpdate::Paused);
        let mut full = vec![0, 40, 0, 2, 1, 0, 0, 10, 0, 0, 0, 100, 0, 0, 0, 0];
        full.extend_from_slice(&7u64.to_be_bytes());
        full.extend_from_slice(&[0, 1, 0, 4, 0, 0, 0, 0]);
        full.extend_from_slice(&[0, 5, 0, 8, 0, 0, 0, 0]);
        let u = FlowUpdate::decode(&mut Reader::new(&full)).unwrap();
        assert_eq!(
            u,
            FlowUpdate::Full(FlowUpdateFull {
                event: FullUpdateEvent::Removed,
                table_id: 1,
                reason: 0,
                idle_timeout: 10,
                hard_timeout: 0,
                priority: 100,
                cookie: 7,
                match_: Match::default(),
                instructions: vec![Instruction::ClearActions],
            })
        );
        assert_eq!(encoded(|w| u.encode(w)), full);
    }

    #[test]
    fn length_errors() {
        let cases: &[&[u8]] = &[
            // abbrev of length 12, paused of length 4
            &[0, 12, 0, 4, 0, 0, 0, 1, 0, 0, 0, 0],
            &[0, 4, 0, 5],
            // full update below its fixed part
            &[0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            // beyond the bytes
            &[0, 16, 0, 4, 0, 0, 0, 1],
            // an unknown event's length below the head
            &[0, 2, 0, 9],
        ];
        assert_refused(cases, FlowUpdate::decode, ErrorKind::BAD_REQUEST_BAD_LEN);
    }
}
