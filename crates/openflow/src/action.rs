//! OpenFlow 1.3 actions (`ofp_action_*`).
//!
//! Every action is `type:u16, len:u16, body`, `len` a multiple of 8. [`Action`] has one
//! variant per 1.3 action type; experimenter actions (Nicira's and others) are kept as
//! their experimenter id and the bytes after it, so they re-encode byte for byte. An
//! unknown action type is a decode error (`OFPBAC_BAD_TYPE`); a length that does not fit
//! the type is `OFPBAC_BAD_LEN`.
//!
//! Two layers, kept apart:
//! - `codec` (decode/encode): only what the wire form needs. A decoded action has a
//!   length that fits its type and, for set-field, one unmasked OXM TLV of a known basic
//!   field (or of another class, kept opaque). Padding is read without being checked and
//!   written as zeros.
//! - `validate`: the stateless semantic checks a switch makes before accepting a rule
//!   (port and group ranges, push ethertypes, which fields set-field may write and the
//!   range of the value). Checks that need switch state (does port 7 exist, is group 3
//!   defined, does the match satisfy a set-field's prerequisites) belong to the agent.

use crate::oxm::Oxm;

/// `OFPP_*` reserved port numbers (1.3).
pub mod port {
    pub const MAX: u32 = 0xffff_ff00;
    pub const IN_PORT: u32 = 0xffff_fff8;
    pub const TABLE: u32 = 0xffff_fff9;
    pub const NORMAL: u32 = 0xffff_fffa;
    pub const FLOOD: u32 = 0xffff_fffb;
    pub const ALL: u32 = 0xffff_fffc;
    pub const CONTROLLER: u32 = 0xffff_fffd;
    pub const LOCAL: u32 = 0xffff_fffe;
    pub const ANY: u32 = 0xffff_ffff;
}

/// `OFPCML_NO_BUFFER`: send the whole packet to the controller.
pub const OFPCML_NO_BUFFER: u16 = 0xffff;
/// `OFPG_ANY` / `OFPG_ALL` group wildcards.
pub const OFPG_ALL: u32 = 0xffff_fffc;
pub const OFPG_ANY: u32 = 0xffff_ffff;
/// Largest ordinary group id, `OFPG_MAX`.
pub const OFPG_MAX: u32 = 0xffff_ff00;

/// `ofp_action_type` numbers.
pub mod action_type {
    pub const OUTPUT: u16 = 0;
    pub const COPY_TTL_OUT: u16 = 11;
    pub const COPY_TTL_IN: u16 = 12;
    pub const SET_MPLS_TTL: u16 = 15;
    pub const DEC_MPLS_TTL: u16 = 16;
    pub const PUSH_VLAN: u16 = 17;
    pub const POP_VLAN: u16 = 18;
    pub const PUSH_MPLS: u16 = 19;
    pub const POP_MPLS: u16 = 20;
    pub const SET_QUEUE: u16 = 21;
    pub const GROUP: u16 = 22;
    pub const SET_NW_TTL: u16 = 23;
    pub const DEC_NW_TTL: u16 = 24;
    pub const SET_FIELD: u16 = 25;
    pub const PUSH_PBB: u16 = 26;
    pub const POP_PBB: u16 = 27;
    pub const EXPERIMENTER: u16 = 0xffff;
}

/// One OpenFlow 1.3 action.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Output {
        port: u32,
        max_len: u16,
    },
    CopyTtlOut,
    CopyTtlIn,
    SetMplsTtl(u8),
    DecMplsTtl,
    /// Push a VLAN tag with this TPID (0x8100 or 0x88a8).
    PushVlan(u16),
    PopVlan,
    /// Push an MPLS shim with this ethertype (0x8847 or 0x8848).
    PushMpls(u16),
    /// Pop the outermost MPLS shim; the payload gets this ethertype.
    PopMpls(u16),
    SetQueue(u32),
    Group(u32),
    SetNwTtl(u8),
    DecNwTtl,
    /// Set a field. The OXM carries no mask in OpenFlow 1.3.
    SetField(Oxm),
    /// Push a PBB service tag with this ethertype (0x88e7).
    PushPbb(u16),
    PopPbb,
    /// An experimenter action: the id and every byte after it, padding included.
    Experimenter {
        experimenter: u32,
        data: Vec<u8>,
    },
}

mod codec;
mod validate;

#[cfg(test)]
pub(crate) mod list_tests;
#[cfg(test)]
pub(crate) mod strategy;
#[cfg(test)]
mod tests;
