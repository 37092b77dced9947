//! The flow-removed message (`OFPT_FLOW_REMOVED`), one type for every OpenFlow version,
//! over the match of each version's wire ([`WireMatch`]: 1.0's
//! [`crate::v10::match10::Match`], 1.3's OXM [`crate::match13::Match`]).
//!
//! 1.0 body: `ofp_match (40), cookie:u64, priority:u16, reason:u8, pad[1],
//! duration_sec:u32, duration_nsec:u32, idle_timeout:u16, pad[2], packet_count:u64,
//! byte_count:u64` (80 bytes). 1.3 body: `cookie:u64, priority:u16, reason:u8,
//! table_id:u8, duration_sec:u32, duration_nsec:u32, idle_timeout:u16,
//! hard_timeout:u16, packet_count:u64, byte_count:u64`, then an `ofp_match` ending the
//! message. 1.0 has no table id and no hard timeout: decoding 1.0 gives 0 for both and
//! encoding 1.0 leaves them out.

use crate::error::OfpError;
use crate::header::{OFP10_VERSION, OFP14_VERSION};
use crate::wire::{Reader, Writer};

/// The match of one OpenFlow version's wire, as a version-neutral message that carries a
/// match needs it. `VERSION` says which wire, and so the layout around the match.
pub trait WireMatch: Sized {
    /// The OpenFlow version whose match this is.
    const VERSION: u8;

    /// Reads one match.
    fn decode(r: &mut Reader) -> Result<Self, OfpError>;

    /// Writes one match.
    fn encode(&self, w: &mut Writer);
}

wire_enum! {
    /// `ofp_flow_removed_reason`. 1.0 defines the first three; 1.3 adds group-delete and
    /// (1.3.5) meter-delete, 1.4 eviction. Numbers a version does not define decode as
    /// `Unknown`.
    pub enum FlowRemovedReason: u8 as from_u8 / to_u8 {
        IdleTimeout = 0,
        HardTimeout = 1,
        Delete = 2,
        GroupDelete = 3,
        /// 1.3.5's `OFPRR_METER_DELETE`.
        MeterDelete = 4,
        /// 1.4's `OFPRR_EVICTION`.
        Eviction = 5,
    }
}

impl FlowRemovedReason {
    /// The reason numbered `v` in `version`.
    pub fn of_version(version: u8, v: u8) -> Self {
        match Self::from_u8(v) {
            Self::GroupDelete | Self::MeterDelete if version == OFP10_VERSION => Self::Unknown(v),
            Self::Eviction if version < OFP14_VERSION => Self::Unknown(v),
            r => r,
        }
    }
}

/// An `OFPT_FLOW_REMOVED` body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FlowRemoved<M> {
    pub cookie: u64,
    pub priority: u16,
    pub reason: FlowRemovedReason,
    /// 1.3 only (0 from 1.0).
    pub table_id: u8,
    pub duration_sec: u32,
    pub duration_nsec: u32,
    pub idle_timeout: u16,
    /// 1.3 only (0 from 1.0).
    pub hard_timeout: u16,
    pub packet_count: u64,
    pub byte_count: u64,
    pub match_: M,
}

impl<M: WireMatch> FlowRemoved<M> {
    /// Reads a body of `M`'s version.
    pub fn decode(r: &mut Reader) -> Result<FlowRemoved<M>, OfpError> {
        Self::decode_version(M::VERSION, r)
    }

    /// Writes the body in `M`'s version.
    pub fn encode(&self, w: &mut Writer) {
        self.encode_version(M::VERSION, w)
    }

    /// Reads a body of a frame of `version` (`M`'s, or 1.4 over 1.3's match: the layout
    /// is the same, the reasons differ).
    pub fn decode_version(version: u8, r: &mut Reader) -> Result<FlowRemoved<M>, OfpError> {
        let v10 = M::VERSION == OFP10_VERSION;
        let early = if v10 { Some(M::decode(r)?) } else { None };
        let cookie = r.u64()?;
        let priority = r.u16()?;
        let reason = FlowRemovedReason::of_version(version, r.u8()?);
        let table_id = if v10 {
            r.skip(1)?;
            0
        } else {
            r.u8()?
        };
        let duration_sec = r.u32()?;
        let duration_nsec = r.u32()?;
        let idle_timeout = r.u16()?;
        let hard_timeout = if v10 {
            r.skip(2)?;
            0
        } else {
            r.u16()?
        };
        let packet_count = r.u64()?;
        let byte_count = r.u64()?;
        let match_ = match early {
            Some(m) => m,
            None => M::decode(r)?,
        };
        Ok(FlowRemoved {
            cookie,
            priority,
            reason,
            table_id,
            duration_sec,
            duration_nsec,
            idle_timeout,
            hard_timeout,
            packet_count,
            byte_count,
            match_,
        })
    }

    /// Writes the body for a frame of `version` (the layout is `M`'s).
    pub fn encode_version(&self, version: u8, w: &mut Writer) {
        let _ = version;
        let v10 = M::VERSION == OFP10_VERSION;
        if v10 {
            self.match_.encode(w);
        }
        w.u64(self.cookie);
        w.u16(self.priority);
        w.u8(self.reason.to_u8());
        w.u8(if v10 { 0 } else { self.table_id });
        w.u32(self.duration_sec);
        w.u32(self.duration_nsec);
        w.u16(self.idle_timeout);
        w.u16(if v10 { 0 } else { self.hard_timeout });
        w.u64(self.packet_count);
        w.u64(self.byte_count);
        if !v10 {
            self.match_.encode(w);
        }
    }
}

/// proptest strategy: flow-removed bodies of `M`'s version, decoded from arbitrary bytes
/// of its fixed part around `matches`, so every field takes what that wire can carry.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    pub fn arb_flow_removed<M: WireMatch + std::fmt::Debug>(
        matches: impl Strategy<Value = M>,
    ) -> impl Strategy<Value = FlowRemoved<M>> {
        arb_flow_removed_in(M::VERSION, matches)
    }

    /// Flow-removed bodies as a frame of `version` carries them over `M`'s match.
    pub fn arb_flow_removed_in<M: WireMatch + std::fmt::Debug>(
        version: u8,
        matches: impl Strategy<Value = M>,
    ) -> impl Strategy<Value = FlowRemoved<M>> {
        (proptest::collection::vec(any::<u8>(), 40), matches).prop_map(move |(fixed, m)| {
            let b = crate::wire::encoded(|w| {
                if M::VERSION == OFP10_VERSION {
                    m.encode(w);
                    w.bytes(&fixed);
                } else {
                    w.bytes(&fixed);
                    m.encode(w);
                }
            });
            FlowRemoved::decode_version(version, &mut Reader::new(&b))
                .expect("any fixed part decodes")
        })
    }
}
