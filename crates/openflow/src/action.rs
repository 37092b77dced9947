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

spec_table! {
    /// `OFPP_*` reserved port numbers (1.3).
    pub mod port: u32 as numbers {
        MAX = 0xffff_ff00, IN_PORT = 0xffff_fff8, TABLE, NORMAL, FLOOD, ALL, CONTROLLER,
        LOCAL, ANY,
    }
}

/// `OFPCML_NO_BUFFER`: send the whole packet to the controller.
pub const OFPCML_NO_BUFFER: u16 = 0xffff;
/// `OFPG_ANY` / `OFPG_ALL` group wildcards.
pub const OFPG_ALL: u32 = 0xffff_fffc;
pub const OFPG_ANY: u32 = 0xffff_ffff;
/// Largest ordinary group id, `OFPG_MAX`.
pub const OFPG_MAX: u32 = 0xffff_ff00;

spec_table! {
    /// `ofp_action_type` numbers.
    pub mod action_type: u16 as numbers {
        OUTPUT, COPY_TTL_OUT = 11, COPY_TTL_IN, SET_MPLS_TTL = 15, DEC_MPLS_TTL, PUSH_VLAN,
        POP_VLAN, PUSH_MPLS, POP_MPLS, SET_QUEUE, GROUP, SET_NW_TTL, DEC_NW_TTL, SET_FIELD,
        PUSH_PBB, POP_PBB, EXPERIMENTER = 0xffff,
    }
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
