//! Wire form of actions: `type:u16, len:u16, body`, `len` a multiple of 8.
//!
//! Fixed layouts (1.3.5 §7.2.5): output is 16 bytes (`port:u32, max_len:u16, pad[6]`);
//! every other fixed action is 8 bytes (`u32`, `u8 + pad[3]`, `u16 + pad[2]` or `pad[4]`).
//! Set-field is `type, len, OXM TLV, zero padding to 8` and the TLV must fill the action
//! up to that padding. Experimenter is `type, len, experimenter:u32, data` with `data`
//! kept whole (its padding included), so it re-encodes byte for byte.
//!
//! Length errors are `OFPBAC_BAD_LEN` (the action itself) or `OFPBAC_BAD_SET_LEN` (the
//! OXM inside a set-field); the decoder never reads past the `len` of the action.

use super::action_type as t;
use super::Action;
use crate::error::{ErrorKind, OfpError};
use crate::oxm::Oxm;
use crate::wire::{Reader, Tlv8, Writer};

/// Length of every action header (`type`, `len`) plus the smallest body.
const MIN_LEN: usize = 8;
/// `sizeof(struct ofp_action_output)`.
const OUTPUT_LEN: usize = 16;
/// Set-field: the OXM TLV starts this many bytes into the action.
const SET_FIELD_HEADER: usize = 4;
/// `hasmask` bit in the third byte of an OXM header.
const OXM_HASMASK: u8 = 0x01;

fn bad_len(detail: String) -> OfpError {
    OfpError::new(ErrorKind::BAD_ACTION_BAD_LEN, detail)
}

/// Rounds `n` up to a multiple of 8.
fn round8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// The fixed wire length of an action type, `None` for variable ones (set-field,
/// experimenter) and unknown types.
fn fixed_len(ty: u16) -> Option<usize> {
    match ty {
        t::OUTPUT => Some(OUTPUT_LEN),
        t::COPY_TTL_OUT
        | t::COPY_TTL_IN
        | t::SET_MPLS_TTL
        | t::DEC_MPLS_TTL
        | t::PUSH_VLAN
        | t::POP_VLAN
        | t::PUSH_MPLS
        | t::POP_MPLS
        | t::SET_QUEUE
        | t::GROUP
        | t::SET_NW_TTL
        | t::DEC_NW_TTL
        | t::PUSH_PBB
        | t::POP_PBB => Some(MIN_LEN),
        _ => None,
    }
}

/// Human-readable name of an action type, for error details.
pub(super) fn type_name(ty: u16) -> &'static str {
    match ty {
        t::OUTPUT => "output",
        t::COPY_TTL_OUT => "copy_ttl_out",
        t::COPY_TTL_IN => "copy_ttl_in",
        t::SET_MPLS_TTL => "set_mpls_ttl",
        t::DEC_MPLS_TTL => "dec_mpls_ttl",
        t::PUSH_VLAN => "push_vlan",
        t::POP_VLAN => "pop_vlan",
        t::PUSH_MPLS => "push_mpls",
        t::POP_MPLS => "pop_mpls",
        t::SET_QUEUE => "set_queue",
        t::GROUP => "group",
        t::SET_NW_TTL => "set_nw_ttl",
        t::DEC_NW_TTL => "dec_nw_ttl",
        t::SET_FIELD => "set_field",
        t::PUSH_PBB => "push_pbb",
        t::POP_PBB => "pop_pbb",
        t::EXPERIMENTER => "experimenter",
        _ => "unknown",
    }
}

impl Action {
    /// The `ofp_action_type` number of this action.
    pub fn action_type(&self) -> u16 {
        match self {
            Action::Output { .. } => t::OUTPUT,
            Action::CopyTtlOut => t::COPY_TTL_OUT,
            Action::CopyTtlIn => t::COPY_TTL_IN,
            Action::SetMplsTtl(_) => t::SET_MPLS_TTL,
            Action::DecMplsTtl => t::DEC_MPLS_TTL,
            Action::PushVlan(_) => t::PUSH_VLAN,
            Action::PopVlan => t::POP_VLAN,
            Action::PushMpls(_) => t::PUSH_MPLS,
            Action::PopMpls(_) => t::POP_MPLS,
            Action::SetQueue(_) => t::SET_QUEUE,
            Action::Group(_) => t::GROUP,
            Action::SetNwTtl(_) => t::SET_NW_TTL,
            Action::DecNwTtl => t::DEC_NW_TTL,
            Action::SetField(_) => t::SET_FIELD,
            Action::PushPbb(_) => t::PUSH_PBB,
            Action::PopPbb => t::POP_PBB,
            Action::Experimenter { .. } => t::EXPERIMENTER,
        }
    }

    /// Bytes [`Action::encode`] writes: the `len` field of the encoded action.
    pub fn wire_len(&self) -> usize {
        match self {
            Action::SetField(oxm) => round8(SET_FIELD_HEADER + oxm.wire_len()),
            Action::Experimenter { data, .. } => MIN_LEN + round8(data.len()),
            other => fixed_len(other.action_type()).unwrap_or(MIN_LEN),
        }
    }

    /// Reads one action.
    ///
    /// Errors: fewer than 4 bytes, `len` below 8, not a multiple of 8, past the end of
    /// the reader, or not the size of a fixed-size type → `OFPBAC_BAD_LEN`; an unknown
    /// type → `OFPBAC_BAD_TYPE`; a bad set-field OXM → `OFPBAC_BAD_SET_TYPE`,
    /// `OFPBAC_BAD_SET_LEN` or `OFPBAC_BAD_SET_ARGUMENT` (the OXM's own error, renumbered).
    pub fn decode(r: &mut Reader) -> Result<Action, OfpError> {
        const FRAMING: Tlv8 =
            Tlv8 { what: "action", type_name, fixed_len, bad_len: ErrorKind::BAD_ACTION_BAD_LEN };
        let (ty, len, mut body) = FRAMING.take(r)?;
        let name = type_name(ty);
        decode_body(ty, len, &mut body).map_err(|e| {
            if e.kind == ErrorKind::BAD_REQUEST_BAD_LEN {
                bad_len(format!("{name} action: {}", e.detail))
            } else {
                e
            }
        })
    }

    /// Writes one action, padded to a multiple of 8 with zeros.
    ///
    /// An experimenter action whose `data` is not a multiple of 8 bytes long gets zero
    /// padding after it (so it decodes with the padding as part of `data`).
    pub fn encode(&self, w: &mut Writer) {
        w.tlv8(self.action_type(), |w| match self {
            Action::Output { port, max_len } => {
                w.u32(*port);
                w.u16(*max_len);
                w.zeros(6);
            }
            Action::CopyTtlOut
            | Action::CopyTtlIn
            | Action::DecMplsTtl
            | Action::PopVlan
            | Action::DecNwTtl
            | Action::PopPbb => w.zeros(4),
            Action::SetMplsTtl(ttl) | Action::SetNwTtl(ttl) => {
                w.u8(*ttl);
                w.zeros(3);
            }
            Action::PushVlan(et)
            | Action::PushMpls(et)
            | Action::PopMpls(et)
            | Action::PushPbb(et) => {
                w.u16(*et);
                w.zeros(2);
            }
            Action::SetQueue(id) | Action::Group(id) => w.u32(*id),
            Action::SetField(oxm) => oxm.encode(w),
            Action::Experimenter { experimenter, data } => {
                w.u32(*experimenter);
                w.bytes(data);
            }
        });
    }

    /// Total bytes [`WireAction::encode_list`] writes for `actions`.
    pub fn list_wire_len(actions: &[Action]) -> usize {
        actions.iter().map(Action::wire_len).sum()
    }
}

/// Decodes the body of an action whose length already fits its type; `body` starts after
/// the 4-byte header and ends at the action's `len`.
fn decode_body(ty: u16, len: usize, body: &mut Reader) -> Result<Action, OfpError> {
    let a = match ty {
        t::OUTPUT => {
            let port = body.u32()?;
            let max_len = body.u16()?;
            Action::Output { port, max_len }
        }
        t::COPY_TTL_OUT => Action::CopyTtlOut,
        t::COPY_TTL_IN => Action::CopyTtlIn,
        t::SET_MPLS_TTL => Action::SetMplsTtl(body.u8()?),
        t::DEC_MPLS_TTL => Action::DecMplsTtl,
        t::PUSH_VLAN => Action::PushVlan(body.u16()?),
        t::POP_VLAN => Action::PopVlan,
        t::PUSH_MPLS => Action::PushMpls(body.u16()?),
        t::POP_MPLS => Action::PopMpls(body.u16()?),
        t::SET_QUEUE => Action::SetQueue(body.u32()?),
        t::GROUP => Action::Group(body.u32()?),
        t::SET_NW_TTL => Action::SetNwTtl(body.u8()?),
        t::DEC_NW_TTL => Action::DecNwTtl,
        t::PUSH_PBB => Action::PushPbb(body.u16()?),
        t::POP_PBB => Action::PopPbb,
        t::SET_FIELD => Action::SetField(decode_set_field(len, body)?),
        t::EXPERIMENTER => {
            Action::Experimenter { experimenter: body.u32()?, data: body.take_rest().to_vec() }
        }
        _ => {
            return Err(OfpError::new(
                ErrorKind::BAD_ACTION_BAD_TYPE,
                format!("unknown action type {ty}"),
            ))
        }
    };
    Ok(a)
}

/// Decodes the OXM TLV of a set-field action of length `len`; `body` holds the `len - 4`
/// bytes after the action header.
///
/// - the TLV runs past the action, or leaves 8 or more bytes of padding, or its length
///   does not fit the field → `OFPBAC_BAD_SET_LEN`;
/// - the TLV has `hasmask` set (1.3 set-field carries no mask) → `OFPBAC_BAD_SET_ARGUMENT`;
/// - an unknown basic field → `OFPBAC_BAD_SET_TYPE`;
/// - any other OXM failure (a value the OXM codec refuses) → `OFPBAC_BAD_SET_ARGUMENT`.
///
/// Padding bytes are not checked; the encoder writes them as zeros.
fn decode_set_field(len: usize, body: &mut Reader) -> Result<Oxm, OfpError> {
    let class = body.peek_u16(0).map_err(set_len)?;
    let field_and_len = body.peek_u16(2).map_err(set_len)?;
    let (field, has_mask, oxm_len) = (
        (field_and_len >> 9) as u8,
        (field_and_len >> 8) as u8 & OXM_HASMASK != 0,
        usize::from(field_and_len as u8),
    );
    let tlv_len = 4 + oxm_len;
    if tlv_len > body.remaining() {
        return Err(OfpError::new(
            ErrorKind::BAD_ACTION_BAD_SET_LEN,
            format!(
                "set_field action of length {len} cannot hold an OXM TLV of {tlv_len} bytes \
                 (class 0x{class:04x}, field {field})"
            ),
        ));
    }
    let pad = body.remaining() - tlv_len;
    if pad >= 8 {
        return Err(OfpError::new(
            ErrorKind::BAD_ACTION_BAD_SET_LEN,
            format!(
                "set_field action of length {len} holds an OXM TLV of {tlv_len} bytes \
                 and {pad} bytes of padding (at most 7)"
            ),
        ));
    }
    if has_mask {
        return Err(OfpError::new(
            ErrorKind::BAD_ACTION_BAD_SET_ARGUMENT,
            format!("set_field OXM (class 0x{class:04x}, field {field}) has a mask"),
        ));
    }
    let mut tlv = body.sub(tlv_len)?;
    let oxm = Oxm::decode(&mut tlv).map_err(|e| {
        let kind = match e.kind {
            ErrorKind::BAD_MATCH_BAD_FIELD | ErrorKind::BAD_MATCH_BAD_TYPE => {
                ErrorKind::BAD_ACTION_BAD_SET_TYPE
            }
            ErrorKind::BAD_MATCH_BAD_LEN | ErrorKind::BAD_REQUEST_BAD_LEN => {
                ErrorKind::BAD_ACTION_BAD_SET_LEN
            }
            _ => ErrorKind::BAD_ACTION_BAD_SET_ARGUMENT,
        };
        OfpError::new(kind, format!("set_field OXM: {}", e.detail))
    })?;
    if !tlv.is_empty() {
        return Err(OfpError::new(
            ErrorKind::BAD_ACTION_BAD_SET_LEN,
            format!("set_field OXM length {oxm_len} leaves {} bytes unread", tlv.remaining()),
        ));
    }
    Ok(oxm)
}

fn set_len(e: OfpError) -> OfpError {
    OfpError::new(ErrorKind::BAD_ACTION_BAD_SET_LEN, format!("set_field OXM header: {}", e.detail))
}

// OpenFlow 1.3's actions as the action list of version-neutral messages
// (`crate::model::PacketOut`); lists are read and written with its `decode_list` and
// `encode_list` (apply-actions, write-actions, buckets, packet-out).
wire_by_methods!(WireAction for Action, crate::header::OFP13_VERSION);
