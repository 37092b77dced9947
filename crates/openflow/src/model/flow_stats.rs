//! `ofp_flow_stats`, one flow entry of a flow-stats reply: one type for every OpenFlow
//! version, over each version's match ([`WireMatch`]) and what its flows do
//! ([`WireActions`]: 1.0's actions, 1.3's instructions), as Open vSwitch keeps one
//! `ofputil_flow_stats` whatever the wire.
//!
//! 1.0 (88 bytes, then actions): `length:u16, table_id:u8, pad[1]`, `ofp_match` (40),
//! `duration_sec:u32, duration_nsec:u32, priority:u16, idle_timeout:u16,
//! hard_timeout:u16, pad[6], cookie:u64, packet_count:u64, byte_count:u64`.
//! 1.3 (48 bytes, then the match and instructions): `length:u16, table_id:u8, pad[1],
//! duration_sec:u32, duration_nsec:u32, priority:u16, idle_timeout:u16,
//! hard_timeout:u16, flags:u16, pad[4], cookie:u64, packet_count:u64, byte_count:u64`,
//! then an `ofp_match`. 1.4 is 1.3 with `importance:u16` in the first 2 of those 4 pad
//! bytes. The length field is derived when encoding; decoding requires it to cover the
//! fixed part and to fit in what is left. `decode` and `encode` take the frame's
//! version (1.3 or 1.4 for 1.3's match; 1.0's match is 1.0's alone).

use super::flow_removed::WireMatch;
use super::packet_out::WireAction;
use crate::error::OfpError;
use crate::header::{OFP10_VERSION, OFP14_VERSION};
use crate::instruction::Instruction;
use crate::v13::multipart::take_sized;
use crate::wire::{Reader, Writer};

/// What a flow does on one version's wire: 1.0's action list or 1.3's instruction list.
pub trait WireActions: Sized {
    /// Reads the list to the end of the reader.
    fn decode_list(r: &mut Reader) -> Result<Vec<Self>, OfpError>;
    /// Writes the list.
    fn encode_list(list: &[Self], w: &mut Writer);
}

impl WireActions for crate::v10::Action {
    fn decode_list(r: &mut Reader) -> Result<Vec<Self>, OfpError> {
        <Self as WireAction>::decode_list(r)
    }
    fn encode_list(list: &[Self], w: &mut Writer) {
        <Self as WireAction>::encode_list(list, w)
    }
}

impl WireActions for Instruction {
    fn decode_list(r: &mut Reader) -> Result<Vec<Self>, OfpError> {
        Instruction::decode_list(r)
    }
    fn encode_list(list: &[Self], w: &mut Writer) {
        Instruction::encode_list(list, w)
    }
}

/// Length of the fixed part of a 1.0 entry (its match included).
pub const FLOW_STATS_FIXED_LEN_10: usize = 88;
/// Length of the fixed part of a 1.3 entry (before the match).
pub const FLOW_STATS_FIXED_LEN: usize = 48;

/// One flow entry with its counters (module comment), over a match `M` and what the
/// flow does, `L`: on the wire a list of a version's actions or instructions
/// (`Vec<A>`, `A:` [`WireActions`]); in [`super::FlowEntry`] either version's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FlowStats<M, L> {
    pub table_id: u8,
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub priority: u16,
    pub idle_timeout: u16,
    pub hard_timeout: u16,
    /// `OFPFF_*` flags (1.3; 0 from 1.0, which has none here).
    pub flags: u16,
    /// The flow's importance for eviction (OpenFlow 1.4 on; 0 from earlier versions,
    /// which leave it out).
    pub importance: u16,
    pub cookie: u64,
    pub packet_count: u64,
    pub byte_count: u64,
    pub match_: M,
    /// What the flow does: 1.3 instructions, 1.0 actions.
    pub instructions: L,
}

impl<M, L> FlowStats<M, L> {
    /// The same entry's fields and counters over another match and list: the entry as
    /// another version carries it.
    pub fn with<M2, L2>(&self, match_: M2, instructions: L2) -> FlowStats<M2, L2> {
        FlowStats {
            table_id: self.table_id,
            duration_sec: self.duration_sec,
            duration_nsec: self.duration_nsec,
            priority: self.priority,
            idle_timeout: self.idle_timeout,
            hard_timeout: self.hard_timeout,
            flags: self.flags,
            importance: self.importance,
            cookie: self.cookie,
            packet_count: self.packet_count,
            byte_count: self.byte_count,
            match_,
            instructions,
        }
    }
}

impl<M: WireMatch, A: WireActions> FlowStats<M, Vec<A>> {
    /// Reads one entry of a frame of `version` (its layout is `M`'s version's, with
    /// 1.4's importance when `version` is 1.4 or later).
    pub fn decode(version: u8, r: &mut Reader) -> Result<Self, OfpError> {
        let v10 = M::VERSION == OFP10_VERSION;
        let v14 = !v10 && version >= OFP14_VERSION;
        let min = if v10 { FLOW_STATS_FIXED_LEN_10 } else { FLOW_STATS_FIXED_LEN };
        let mut s = take_sized(r, 0, min, "flow stats")?;
        s.skip(2)?;
        let table_id = s.u8()?;
        s.skip(1)?;
        let match10 = if v10 { Some(M::decode(&mut s)?) } else { None };
        let duration_sec = s.u32()?;
        let duration_nsec = s.u32()?;
        let priority = s.u16()?;
        let idle_timeout = s.u16()?;
        let hard_timeout = s.u16()?;
        let flags = if v10 { 0 } else { s.u16()? };
        let importance = if v14 { s.u16()? } else { 0 };
        s.skip(if v10 {
            6
        } else if v14 {
            2
        } else {
            4
        })?;
        let cookie = s.u64()?;
        let packet_count = s.u64()?;
        let byte_count = s.u64()?;
        let match_ = match match10 {
            Some(m) => m,
            None => M::decode(&mut s)?,
        };
        Ok(FlowStats {
            table_id,
            duration_sec,
            duration_nsec,
            priority,
            idle_timeout,
            hard_timeout,
            flags,
            importance,
            cookie,
            packet_count,
            byte_count,
            match_,
            instructions: A::decode_list(&mut s)?,
        })
    }

    /// Writes the entry for a frame of `version` (1.0 has no flags, versions before 1.4
    /// no importance).
    pub fn encode(&self, version: u8, w: &mut Writer) {
        let v10 = M::VERSION == OFP10_VERSION;
        let v14 = !v10 && version >= OFP14_VERSION;
        let start = w.len();
        w.u16(0);
        w.u8(self.table_id);
        w.zeros(1);
        if v10 {
            self.match_.encode(w);
        }
        w.u32(self.duration_sec);
        w.u32(self.duration_nsec);
        w.u16(self.priority);
        w.u16(self.idle_timeout);
        w.u16(self.hard_timeout);
        if v10 {
            w.zeros(6);
        } else if v14 {
            w.u16(self.flags);
            w.u16(self.importance);
            w.zeros(2);
        } else {
            w.u16(self.flags);
            w.zeros(4);
        }
        w.u64(self.cookie);
        w.u64(self.packet_count);
        w.u64(self.byte_count);
        if !v10 {
            self.match_.encode(w);
        }
        A::encode_list(&self.instructions, w);
        w.patch_len16(start, start);
    }
}

/// proptest strategy: entries over `matches` and `actions`, every other field as
/// `version`'s wire (`M`'s) carries it.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use crate::model::strategy::wire_with;
    use proptest::prelude::*;

    pub fn arb_flow_stats<M: WireMatch + std::fmt::Debug, A: WireActions + std::fmt::Debug>(
        version: u8,
        matches: impl Strategy<Value = M>,
        actions: impl Strategy<Value = Vec<A>>,
    ) -> impl Strategy<Value = FlowStats<M, Vec<A>>> {
        assert!(
            version == M::VERSION || (M::VERSION != OFP10_VERSION && version >= M::VERSION),
            "the version of the match's wire"
        );
        // Both versions: 48 bytes besides the match.
        let fixed = proptest::collection::vec(any::<u8>(), FLOW_STATS_FIXED_LEN);
        (fixed, matches, actions).prop_map(move |(fixed, m, list)| {
            let mut b = wire_with(&fixed, 4, &m, &list);
            let len = u16::try_from(b.len()).expect("a few actions fit");
            b[..2].copy_from_slice(&len.to_be_bytes());
            FlowStats::decode(version, &mut Reader::new(&b)).expect("any fixed part decodes")
        })
    }
}
