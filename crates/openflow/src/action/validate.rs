//! Stateless semantic checks on decoded actions (what a switch can refuse without
//! looking at its ports, groups, queues or the rule's match).
//!
//! - output to port 0, to `OFPP_ANY`, or to a number between `OFPP_MAX` and
//!   `OFPP_IN_PORT` (reserved space with no port defined) → `OFPBAC_BAD_OUT_PORT`;
//! - group id above `OFPG_MAX` (`OFPG_ALL`, `OFPG_ANY`, ...) → `OFPBAC_BAD_OUT_GROUP`;
//! - push_vlan other than 0x8100/0x88a8, push_mpls other than 0x8847/0x8848, push_pbb
//!   other than 0x88e7 → `OFPBAC_BAD_ARGUMENT`;
//! - set-field of a field that is not a packet header field → `OFPBAC_BAD_SET_TYPE`:
//!   `IN_PORT`, `IN_PHY_PORT` and `METADATA` (1.3.5 §7.2.5 says set-field does not
//!   support them, "because those are not header fields"), `IPV6_EXTHDR` (a pseudo-field
//!   summarising which extension headers are present, not a value in the packet), and
//!   any field of a class other than OpenFlow basic (this switch supports none);
//! - set-field with a mask, or a value outside the field's range (`VLAN_VID` without
//!   `OFPVID_PRESENT` or above 0x1fff, `VLAN_PCP` > 7, `IP_DSCP` > 63, `IP_ECN` > 3,
//!   `MPLS_LABEL` ≥ 2^20, `MPLS_TC` > 7, `MPLS_BOS` > 1, `IPV6_FLABEL` ≥ 2^20,
//!   `PBB_ISID` ≥ 2^24) → `OFPBAC_BAD_SET_ARGUMENT`;
//! - experimenter actions pass: the agent knows which experimenters it supports.
//!
//! [`Action::validate_action_set`] adds the action-set rule for write-actions (1.3.5
//! §5.10: the action set holds at most one action of each type, and one set-field per
//! field). The spec names no error for a write-actions list that breaks it; this codec
//! answers `OFPBAC_TOO_MANY` ("can't handle this many actions": the set has one slot per
//! type and the list offers two), rather than `OFPBAC_UNSUPPORTED_ORDER`, which the spec
//! defines for the order of an apply-actions list. Experimenter actions are exempt: their
//! slot is the experimenter's business.

use super::port;
use super::{Action, OFPG_MAX};
use crate::error::{ErrorKind, OfpError};
use crate::oxm::{Oxm, OFPVID_PRESENT};
use std::collections::HashSet;
use std::mem::Discriminant;

/// `ETH_TYPE_VLAN` (802.1Q) and `ETH_TYPE_VLAN_QinQ` (802.1ad).
const VLAN_TPIDS: [u16; 2] = [0x8100, 0x88a8];
/// MPLS unicast and multicast ethertypes.
const MPLS_ETHERTYPES: [u16; 2] = [0x8847, 0x8848];
/// 802.1ah PBB I-TAG ethertype.
const PBB_ETHERTYPE: u16 = 0x88e7;

/// The slot an action takes in an action set.
#[derive(Hash, PartialEq, Eq)]
enum SetSlot {
    /// One per action type.
    Type(u16),
    /// One per basic OXM field.
    BasicField(Discriminant<Oxm>),
    /// One per field of another OXM class.
    OtherField(u16, u8),
}

fn bad_arg(detail: String) -> OfpError {
    OfpError::new(ErrorKind::BAD_ACTION_BAD_ARGUMENT, detail)
}

fn bad_set_type(detail: String) -> OfpError {
    OfpError::new(ErrorKind::BAD_ACTION_BAD_SET_TYPE, detail)
}

fn bad_set_arg(detail: String) -> OfpError {
    OfpError::new(ErrorKind::BAD_ACTION_BAD_SET_ARGUMENT, detail)
}

/// `Err(BAD_SET_ARGUMENT)` unless `value <= max`.
fn in_range(name: &str, value: u64, max: u64) -> Result<(), OfpError> {
    if value > max {
        return Err(bad_set_arg(format!("set_field {name} value {value:#x} exceeds {max:#x}")));
    }
    Ok(())
}

/// Whether an output port number names a port a packet can be sent to.
fn valid_out_port(p: u32) -> bool {
    p != 0 && (p <= port::MAX || (port::IN_PORT..=port::LOCAL).contains(&p))
}

/// Checks the OXM of a set-field action.
fn validate_set_field(oxm: &Oxm) -> Result<(), OfpError> {
    match oxm {
        Oxm::InPort(_) => return Err(bad_set_type("set_field may not write IN_PORT".into())),
        Oxm::InPhyPort(_) => {
            return Err(bad_set_type("set_field may not write IN_PHY_PORT".into()))
        }
        Oxm::Metadata(..) => {
            return Err(bad_set_type(
                "set_field may not write METADATA (use write_metadata)".into(),
            ))
        }
        Oxm::Ipv6Exthdr(..) => {
            return Err(bad_set_type("set_field may not write the IPV6_EXTHDR pseudo-field".into()))
        }
        Oxm::Other { class, field, .. } => {
            return Err(bad_set_type(format!(
                "set_field of unsupported OXM class 0x{class:04x} field {field}"
            )))
        }
        _ => {}
    }
    if oxm.has_mask() {
        return Err(bad_set_arg(format!("set_field OXM carries a mask: {oxm:?}")));
    }
    match *oxm {
        Oxm::VlanVid(v, _) => {
            if v & OFPVID_PRESENT == 0 {
                return Err(bad_set_arg(format!(
                    "set_field VLAN_VID {v:#x} lacks OFPVID_PRESENT (0x1000)"
                )));
            }
            in_range("VLAN_VID", v.into(), 0x1fff)
        }
        Oxm::VlanPcp(v) => in_range("VLAN_PCP", v.into(), 7),
        Oxm::IpDscp(v) => in_range("IP_DSCP", v.into(), 63),
        Oxm::IpEcn(v) => in_range("IP_ECN", v.into(), 3),
        Oxm::MplsLabel(v) => in_range("MPLS_LABEL", v.into(), (1 << 20) - 1),
        Oxm::MplsTc(v) => in_range("MPLS_TC", v.into(), 7),
        Oxm::MplsBos(v) => in_range("MPLS_BOS", v.into(), 1),
        Oxm::Ipv6Flabel(v, _) => in_range("IPV6_FLABEL", v.into(), (1 << 20) - 1),
        Oxm::PbbIsid(v, _) => in_range("PBB_ISID", v.into(), (1 << 24) - 1),
        Oxm::PbbUca(v) => in_range("PBB_UCA", v.into(), 1),
        _ => Ok(()),
    }
}

impl Action {
    /// The stateless checks of the module doc: `Ok` when a switch may accept this action
    /// without consulting its state.
    pub fn validate(&self) -> Result<(), OfpError> {
        match *self {
            Action::Output { port, .. } if !valid_out_port(port) => Err(OfpError::new(
                ErrorKind::BAD_ACTION_BAD_OUT_PORT,
                format!("output to invalid port {port:#x}"),
            )),
            Action::Group(g) if g > OFPG_MAX => Err(OfpError::new(
                ErrorKind::BAD_ACTION_BAD_OUT_GROUP,
                format!("group action to group {g:#x}, above OFPG_MAX"),
            )),
            Action::PushVlan(et) if !VLAN_TPIDS.contains(&et) => {
                Err(bad_arg(format!("push_vlan ethertype {et:#06x} is not 0x8100 or 0x88a8")))
            }
            Action::PushMpls(et) if !MPLS_ETHERTYPES.contains(&et) => {
                Err(bad_arg(format!("push_mpls ethertype {et:#06x} is not 0x8847 or 0x8848")))
            }
            Action::PushPbb(et) if et != PBB_ETHERTYPE => {
                Err(bad_arg(format!("push_pbb ethertype {et:#06x} is not 0x88e7")))
            }
            Action::SetField(ref oxm) => validate_set_field(oxm),
            _ => Ok(()),
        }
    }

    /// Validates every action of a list (apply-actions, a bucket, packet-out); the
    /// first failure is returned.
    pub fn validate_list(actions: &[Action]) -> Result<(), OfpError> {
        actions.iter().try_for_each(Action::validate)
    }

    /// Validates a write-actions list: every action, and at most one action per
    /// action-set slot (one per type, one set-field per field; experimenter actions
    /// exempt) → `OFPBAC_TOO_MANY` otherwise.
    pub fn validate_action_set(actions: &[Action]) -> Result<(), OfpError> {
        Action::validate_list(actions)?;
        let mut seen = HashSet::new();
        for a in actions {
            let slot = match a {
                Action::Experimenter { .. } => continue,
                Action::SetField(Oxm::Other { class, field, .. }) => {
                    SetSlot::OtherField(*class, *field)
                }
                Action::SetField(oxm) => SetSlot::BasicField(std::mem::discriminant(oxm)),
                other => SetSlot::Type(other.action_type()),
            };
            if !seen.insert(slot) {
                return Err(OfpError::new(
                    ErrorKind::BAD_ACTION_TOO_MANY,
                    format!("write_actions holds two actions for the same action-set slot: {a:?}"),
                ));
            }
        }
        Ok(())
    }
}
