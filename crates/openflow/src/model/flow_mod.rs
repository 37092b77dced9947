//! `OFPT_FLOW_MOD`, one type for every OpenFlow version, over each version's match
//! ([`WireMatch`]) and what its flows do ([`WireActions`]: 1.0's actions, 1.3's
//! instructions), as Open vSwitch keeps one `ofputil_flow_mod` whatever the wire.
//!
//! 1.0 body: `ofp_match` (40), `cookie:u64, command:u16, idle_timeout:u16,
//! hard_timeout:u16, priority:u16, buffer_id:u32, out_port:u16, flags:u16`, then
//! actions to the end. 1.3 body: `cookie:u64, cookie_mask:u64, table_id:u8, command:u8,
//! idle_timeout:u16, hard_timeout:u16, priority:u16, buffer_id:u32, out_port:u32,
//! out_group:u32, flags:u16, pad[2]`, an `ofp_match`, then instructions to the end.
//! 1.4 body: 1.3's, with `importance:u16` in place of the 2 pad bytes.
//!
//! `out_port` is in the 1.3 numbering whatever the version. 1.0 has no cookie mask,
//! table id or out group: decoding 1.0 gives 0, 0 and `OFPG_ANY`, and encoding 1.0
//! leaves them out. `importance` is 1.4's: decoding an older version gives 0 (1.3's pad
//! bytes are not read) and encoding an older version leaves it out (1.3 writes zeros
//! there). What a flow-mod may ask is each version's own check (`validate`,
//! beside each version's match).

use super::flow_stats::WireActions;
use super::{read_port, write_port, WireMatch};
use crate::action::{port, OFPG_ANY};
use crate::error::OfpError;
use crate::header::{OFP10_VERSION, OFP14_VERSION};
use crate::v13::flow_mod::{FlowModCommand, OFP_NO_BUFFER};
use crate::wire::{Reader, Writer};

/// A flow-mod (module comment).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FlowMod<M, A> {
    pub cookie: u64,
    /// 1.3; 0 from 1.0.
    pub cookie_mask: u64,
    /// 1.3; 0 from 1.0.
    pub table_id: u8,
    pub command: FlowModCommand,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    pub priority: u16,
    pub buffer_id: u32,
    /// For deletes: only flows with an output to this port (`OFPP_ANY`: any), in the
    /// 1.3 numbering.
    pub out_port: u32,
    /// For deletes (1.3): only flows with an output to this group; `OFPG_ANY` from 1.0.
    pub out_group: u32,
    pub flags: u16,
    /// 1.4's eviction importance; 0 from older versions.
    pub importance: u16,
    pub match_: M,
    /// What the flow does: 1.3 instructions, 1.0 actions.
    pub instructions: Vec<A>,
}

impl<M: Default, A> Default for FlowMod<M, A> {
    /// An add to table 0 at the default priority 0x8000, no buffer, any out port and
    /// group, the match-everything match, everything else zero: what ovs-ofctl's
    /// `add-flow` starts from.
    fn default() -> Self {
        FlowMod {
            cookie: 0,
            cookie_mask: 0,
            table_id: 0,
            command: FlowModCommand::Add,
            idle_timeout: 0,
            hard_timeout: 0,
            priority: 0x8000,
            buffer_id: OFP_NO_BUFFER,
            out_port: port::ANY,
            out_group: OFPG_ANY,
            flags: 0,
            importance: 0,
            match_: M::default(),
            instructions: Vec::new(),
        }
    }
}

impl<M, A> FlowMod<M, A> {
    /// The same flow-mod over another match and list: the flow-mod as another version
    /// carries it.
    pub fn with<M2, A2>(&self, match_: M2, instructions: Vec<A2>) -> FlowMod<M2, A2> {
        FlowMod {
            cookie: self.cookie,
            cookie_mask: self.cookie_mask,
            table_id: self.table_id,
            command: self.command,
            idle_timeout: self.idle_timeout,
            hard_timeout: self.hard_timeout,
            priority: self.priority,
            buffer_id: self.buffer_id,
            out_port: self.out_port,
            out_group: self.out_group,
            flags: self.flags,
            importance: self.importance,
            match_,
            instructions,
        }
    }

    /// The flow-stats entry of the flow this flow-mod installs, before any time passes or
    /// packet matches, with `match_` and `instructions` (this flow-mod's, or as another
    /// version or a printer holds them).
    pub fn installed<M2, L>(&self, match_: M2, instructions: L) -> super::FlowStats<M2, L> {
        super::FlowStats {
            table_id: self.table_id,
            duration_sec: 0,
            duration_nsec: 0,
            priority: self.priority,
            idle_timeout: self.idle_timeout,
            hard_timeout: self.hard_timeout,
            flags: self.flags,
            importance: 0,
            cookie: self.cookie,
            packet_count: 0,
            byte_count: 0,
            match_,
            instructions,
        }
    }

    /// The check every version makes first: a command the version defines
    /// (`OFPFMFC_BAD_COMMAND`).
    pub fn check_command(&self) -> Result<(), OfpError> {
        match self.command {
            FlowModCommand::Unknown(n) => Err(OfpError::new(
                crate::error::ErrorKind::FLOW_MOD_FAILED_BAD_COMMAND,
                format!("flow-mod command {n} is not defined"),
            )),
            _ => Ok(()),
        }
    }

    /// Whether this command adds or modifies entries (as opposed to deleting them).
    pub fn installs(&self) -> bool {
        matches!(
            self.command,
            FlowModCommand::Add | FlowModCommand::Modify | FlowModCommand::ModifyStrict
        )
    }
}

impl<M: WireMatch, A: WireActions> FlowMod<M, A> {
    /// Reads a body in `M`'s version; the list runs to the end of `r`.
    pub fn decode(r: &mut Reader) -> Result<Self, OfpError> {
        Self::decode_version(M::VERSION, r)
    }

    /// Writes the body in `M`'s version.
    pub fn encode(&self, w: &mut Writer) {
        self.encode_version(M::VERSION, w)
    }

    /// Reads a body of a frame of `version` (`M`'s, or a later one that uses `M`'s
    /// match); the list runs to the end of `r`.
    pub fn decode_version(version: u8, r: &mut Reader) -> Result<Self, OfpError> {
        let v10 = M::VERSION == OFP10_VERSION;
        let match10 = if v10 { Some(M::decode(r)?) } else { None };
        let cookie = r.u64()?;
        let (cookie_mask, table_id, command) =
            if v10 { (0, 0, r.u16()?) } else { (r.u64()?, r.u8()?, u16::from(r.u8()?)) };
        let idle_timeout = r.u16()?;
        let hard_timeout = r.u16()?;
        let priority = r.u16()?;
        let buffer_id = r.u32()?;
        let out_port = read_port(M::VERSION, r, if v10 { 2 } else { 4 })?;
        let out_group = if v10 { OFPG_ANY } else { r.u32()? };
        let flags = r.u16()?;
        let mut importance = 0;
        let match_ = match match10 {
            Some(m) => m,
            None => {
                if version >= OFP14_VERSION {
                    importance = r.u16()?;
                } else {
                    r.skip(2)?;
                }
                M::decode(r)?
            }
        };
        Ok(FlowMod {
            cookie,
            cookie_mask,
            table_id,
            command: FlowModCommand::from_u16(command),
            idle_timeout,
            hard_timeout,
            priority,
            buffer_id,
            out_port,
            out_group,
            flags,
            importance,
            match_,
            instructions: A::decode_list(r)?,
        })
    }

    /// Writes the body for a frame of `version` (see [`Self::decode_version`]). 1.3 and
    /// later write a command above 255 as 255, which no version defines; 1.0 writes a
    /// port with no 1.0 number as `OFPP_NONE`.
    pub fn encode_version(&self, version: u8, w: &mut Writer) {
        let v10 = M::VERSION == OFP10_VERSION;
        if v10 {
            self.match_.encode(w);
        }
        w.u64(self.cookie);
        if v10 {
            w.u16(self.command.to_u16());
        } else {
            w.u64(self.cookie_mask);
            w.u8(self.table_id);
            w.u8(u8::try_from(self.command.to_u16()).unwrap_or(u8::MAX));
        }
        w.u16(self.idle_timeout);
        w.u16(self.hard_timeout);
        w.u16(self.priority);
        w.u32(self.buffer_id);
        write_port(M::VERSION, self.out_port, w, if v10 { 2 } else { 4 });
        if !v10 {
            w.u32(self.out_group);
        }
        w.u16(self.flags);
        if !v10 {
            w.u16(if version >= OFP14_VERSION { self.importance } else { 0 });
            self.match_.encode(w);
        }
        A::encode_list(&self.instructions, w);
    }
}

/// proptest strategy: flow-mods over `matches` and `lists`, every other field as
/// `version`'s wire (`M`'s) carries it, with a command up to 6 (the five defined and
/// two unknown).
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use crate::header::OFP13_VERSION;
    use crate::model::strategy::wire_with;
    use proptest::prelude::*;

    pub fn arb_flow_mod<M: WireMatch + std::fmt::Debug, A: WireActions + std::fmt::Debug>(
        version: u8,
        matches: impl Strategy<Value = M>,
        lists: impl Strategy<Value = Vec<A>>,
    ) -> impl Strategy<Value = FlowMod<M, A>> {
        assert!(
            version == M::VERSION || version == OFP14_VERSION && M::VERSION == OFP13_VERSION,
            "the version of the match's wire, or 1.4 over 1.3's match"
        );
        let fixed_len = if version == OFP10_VERSION { 24 } else { 40 };
        let fixed = proptest::collection::vec(any::<u8>(), fixed_len);
        (fixed, 0u16..7, matches, lists).prop_map(move |(fixed, command, m, list)| {
            let b = wire_with(&fixed, 0, &m, &list);
            let mut f = FlowMod::decode_version(version, &mut Reader::new(&b))
                .expect("any fixed part decodes");
            f.command = FlowModCommand::from_u16(command);
            f
        })
    }
}
