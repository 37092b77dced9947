//! The messages OpenFlow 1.4 added (role-status, table-status, request-forward,
//! bundles, and 1.4's table-mod), roles, and the asynchronous configuration, whose
//! printed form names 1.4's kinds in every version: as ovs-ofctl 3.1 prints them.
//!
//! Where Open vSwitch fails to decode (experimenter properties, unknown numbers), the
//! same layout is kept: properties it would refuse print as ` property: ...` lines, and
//! numbers without a name print as numbers.

use super::{bit_names, raw};
use crate::text::match_format::hex_bytes;
use crate::v13::bundle::{bundle_flags, BundleAdd, BundleControl, BundleCtrlType};
use crate::v13::request_forward::RequestForward;
use crate::v13::role::{AsyncConfig, ControllerRole, ControllerRoleReason, Role, RoleStatus};
use crate::v13::switch_config::{
    table_config, TableDesc, TableMod, TableModProp, TableReason, TableStatus,
};
use crate::v13::{Message as M13, Property};
use crate::{Frame, Message};

/// A role as Open vSwitch 3.1 names it (`primary`, `secondary`, ...).
fn role_name(r: ControllerRole) -> String {
    match r {
        ControllerRole::NoChange => "nochange".into(),
        ControllerRole::Equal => "equal".into(),
        ControllerRole::Master => "primary".into(),
        ControllerRole::Slave => "secondary".into(),
        ControllerRole::Unknown(n) => n.to_string(),
    }
}

/// A role request or reply: ` role=primary generation_id=7`.
pub(super) fn role(r: &Role) -> String {
    format!(" role={} generation_id={}", role_name(r.role), r.generation_id)
}

/// ` role=primary generation_id=7 reason=primary_request`, then any property.
pub(super) fn role_status(r: &RoleStatus) -> String {
    let reason = match r.reason {
        ControllerRoleReason::MasterRequest => "primary_request",
        ControllerRoleReason::Config => "configuration_changed",
        ControllerRoleReason::Experimenter => "experimenter_data_changed",
        ControllerRoleReason::Unknown(_) => "(unknown)",
    };
    let mut s =
        format!(" role={} generation_id={} reason={reason}", role_name(r.role), r.generation_id);
    s.push_str(&properties(&r.properties));
    s
}

/// One property a message has no fields for.
fn property(p: &Property) -> String {
    let (head, data) = match p {
        Property::Experimenter { experimenter, exp_type, data } => {
            (format!("experimenter={experimenter:#x} exp_type={exp_type}"), data)
        }
        Property::Unknown { ty, data } => (format!("type={ty:#x}"), data),
    };
    if data.is_empty() {
        head
    } else {
        format!("{head} data=0x{}", hex_bytes(data))
    }
}

/// Each property on its own line, `\n property: ...`.
fn properties(props: &[Property]) -> String {
    props.iter().map(|p| format!("\n property: {}", property(p))).collect()
}

/// `OTHER|IMPORTANCE|LIFETIME`, unknown bits as hex, `0` for none.
fn eviction_flags(flags: u32) -> String {
    if flags == 0 {
        return "0".into();
    }
    let mut parts: Vec<String> = [(1, "OTHER"), (2, "IMPORTANCE"), (4, "LIFETIME")]
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|(_, n)| (*n).to_string())
        .collect();
    let rest = flags & !7;
    if rest != 0 {
        parts.push(format!("{rest:#x}"));
    }
    parts.join("|")
}

/// The eviction flags of a property list: `(default)` without an eviction property.
fn eviction_flags_of(props: &[TableModProp]) -> String {
    props
        .iter()
        .find_map(|p| match p {
            TableModProp::Eviction { flags } => Some(eviction_flags(*flags)),
            _ => None,
        })
        .unwrap_or_else(|| "(default)".into())
}

/// The vacancy property of a list, if any: `(down, up, vacancy)`.
fn vacancy_of(props: &[TableModProp]) -> (u8, u8, u8) {
    props
        .iter()
        .find_map(|p| match p {
            TableModProp::Vacancy { vacancy_down, vacancy_up, vacancy } => {
                Some((*vacancy_down, *vacancy_up, *vacancy))
            }
            _ => None,
        })
        .unwrap_or((0, 0, 0))
}

/// The properties of a list other than eviction and vacancy.
fn other_table_props(props: &[TableModProp]) -> String {
    props
        .iter()
        .filter_map(|p| match p {
            TableModProp::Other(o) => Some(format!("\n property: {}", property(o))),
            _ => None,
        })
        .collect()
}

fn on_off(on: bool) -> &'static str {
    if on {
        "on"
    } else {
        "off"
    }
}

/// A 1.4 table-mod: ` table_id=3, eviction=on, eviction_flags=IMPORTANCE, vacancy=on
/// vacancy:10,20` (`table_id: ALL_TABLES` for all tables).
pub(super) fn table_mod14(t: &TableMod) -> String {
    let mut s = if t.table_id == crate::v13::flow_mod::OFPTT_ALL {
        " table_id: ALL_TABLES".to_string()
    } else {
        format!(" table_id={}", t.table_id)
    };
    s.push_str(&format!(", eviction={}", on_off(t.config & table_config::EVICTION != 0)));
    if t.properties.iter().any(|p| matches!(p, TableModProp::Eviction { .. })) {
        s.push_str(&format!(", eviction_flags={}", eviction_flags_of(&t.properties)));
    }
    if t.config & table_config::VACANCY_EVENTS != 0 {
        let (down, up, _) = vacancy_of(&t.properties);
        s.push_str(&format!(", vacancy=on vacancy:{down},{up}"));
    } else {
        s.push_str(", vacancy=off");
    }
    s.push_str(&other_table_props(&t.properties));
    s
}

/// One table description, as the table-description reply and table-status list it:
/// `  table 8:\n   eviction=on eviction_flags=0\n   vacancy=off\n`.
pub(crate) fn table_desc(d: &TableDesc) -> String {
    let mut s = format!(
        "  table {}:\n   eviction={} eviction_flags={}\n",
        d.table_id,
        on_off(d.config & table_config::EVICTION != 0),
        eviction_flags_of(&d.properties)
    );
    if d.config & table_config::VACANCY_EVENTS != 0 {
        let (down, up, now) = vacancy_of(&d.properties);
        s.push_str(&format!(
            "   vacancy=on vacancy_down={down}% vacancy_up={up}% vacancy={now}%\n"
        ));
    } else {
        s.push_str("   vacancy=off\n");
    }
    let others = other_table_props(&d.properties);
    if !others.is_empty() {
        s.push_str(others.trim_start_matches('\n'));
        s.push('\n');
    }
    s
}

/// ` reason=VACANCY_DOWN\ntable_desc:-\n  table 8: ...`.
pub(super) fn table_status(t: &TableStatus) -> String {
    let reason = match t.reason {
        TableReason::VacancyDown => "VACANCY_DOWN".to_string(),
        TableReason::VacancyUp => "VACANCY_UP".into(),
        TableReason::Unknown(n) => n.to_string(),
    };
    format!(" reason={reason}\ntable_desc:-\n{}", table_desc(&t.table))
}

/// `atomic ordered`, `0` for none.
fn bundle_flag_names(flags: u16) -> String {
    bit_names(u32::from(flags), |b| match b as u16 {
        bundle_flags::ATOMIC => Some("atomic"),
        bundle_flags::ORDERED => Some("ordered"),
        _ => None,
    })
}

/// `\n bundle_id=0x4d2 type=OPEN_REQUEST flags=atomic`, then any property.
pub(super) fn bundle_control(b: &BundleControl) -> String {
    let ty = match b.ctrl_type {
        BundleCtrlType::OpenRequest => "OPEN_REQUEST".to_string(),
        BundleCtrlType::OpenReply => "OPEN_REPLY".into(),
        BundleCtrlType::CloseRequest => "CLOSE_REQUEST".into(),
        BundleCtrlType::CloseReply => "CLOSE_REPLY".into(),
        BundleCtrlType::CommitRequest => "COMMIT_REQUEST".into(),
        BundleCtrlType::CommitReply => "COMMIT_REPLY".into(),
        BundleCtrlType::DiscardRequest => "DISCARD_REQUEST".into(),
        BundleCtrlType::DiscardReply => "DISCARD_REPLY".into(),
        BundleCtrlType::Unknown(n) => n.to_string(),
    };
    format!(
        "\n bundle_id={:#x} type={ty} flags={}{}",
        b.bundle_id,
        bundle_flag_names(b.flags),
        properties(&b.properties)
    )
}

/// `\n bundle_id=0x4d2 flags=atomic`, any property, then the bundled message printed
/// whole.
pub(super) fn bundle_add(b: &BundleAdd, verbosity: u8) -> String {
    format!(
        "\n bundle_id={:#x} flags={}{}\n{}",
        b.bundle_id,
        bundle_flag_names(b.flags),
        properties(&b.properties),
        raw(&b.message, verbosity)
    )
}

/// ` reason=group_mod` and the forwarded group-mod's (or meter-mod's) body; another or
/// an undecodable request prints whole.
pub(super) fn request_forward(r: &RequestForward, verbosity: u8) -> String {
    match Frame::decode(&r.request) {
        Ok(Frame { message: Message::V13(M13::GroupMod(g)), .. }) => {
            format!(" reason=group_mod{}", super::group::group_mod(&g))
        }
        Ok(Frame { message: Message::V13(M13::MeterMod(m)), .. }) => {
            format!(" reason=meter_mod{}", super::meter::meter_mod(&m))
        }
        _ => format!("\n{}", raw(&r.request, verbosity)),
    }
}

/// The names of the reasons of async kind `kind` (as [`AsyncConfig::masks`] numbers
/// kinds), by bit.
fn async_reason(kind: usize, bit: u32) -> Option<&'static str> {
    let names: &[&str] = match kind {
        0 => &["no_match", "action", "invalid_ttl", "action_set", "group", "packet_out"],
        1 => &["add", "delete", "modify"],
        2 => &["idle", "hard", "delete", "group_delete", "meter_delete", "eviction"],
        3 => &["primary_request", "configuration_changed", "experimenter_data_changed"],
        4 => &["", "", "", "vacancy_down", "vacancy_up"],
        5 => &["group_mod_request", "meter_mod_request"],
        _ => &[],
    };
    names.get(bit as usize).copied().filter(|n| !n.is_empty())
}

/// The asynchronous configuration, both roles, every kind, as Open vSwitch prints it
/// (`(off)` for a kind with no reason enabled); then any property it has no mask for.
pub(super) fn async_config(a: &AsyncConfig) -> String {
    const KINDS: [&str; 6] = [
        "PACKET_IN",
        "PORT_STATUS",
        "FLOW_REMOVED",
        "ROLE_STATUS",
        "TABLE_STATUS",
        "REQUESTFORWARD",
    ];
    let mut s = String::new();
    for (i, role) in ["primary", "secondary"].iter().enumerate() {
        s.push_str(&format!("\n {role}:\n"));
        for (kind, name) in KINDS.iter().enumerate() {
            let mask = a.masks(kind).map_or(0, |m| m[i]);
            s.push_str(&format!("{name:>16}:"));
            if mask == 0 {
                s.push_str(" (off)");
            }
            for bit in (0..32).filter(|b| mask & 1 << b != 0) {
                match async_reason(kind, bit) {
                    Some(n) => s.push_str(&format!(" {n}")),
                    None => s.push_str(&format!(" {bit}")),
                }
            }
            s.push('\n');
        }
    }
    for p in a.properties.iter().flatten() {
        let text = match p {
            crate::v13::AsyncProp::Reasons(_) => continue,
            crate::v13::AsyncProp::ExperimenterSlave { experimenter, exp_type, data } => {
                let p = Property::Experimenter {
                    experimenter: *experimenter,
                    exp_type: *exp_type,
                    data: data.clone(),
                };
                format!("secondary {}", property(&p))
            }
            crate::v13::AsyncProp::Other(o) => property(o),
        };
        s.push_str(&format!(" property: {text}\n"));
    }
    s
}

/// The name of an OpenFlow 1.3 ONF bundle message carried as an experimenter message.
pub(super) fn onf_bundle_name(e: &crate::v13::Experimenter) -> Option<&'static str> {
    if BundleControl::from_experimenter(e).is_some_and(|r| r.is_ok()) {
        Some("ONFT_BUNDLE_CONTROL")
    } else if BundleAdd::from_experimenter(e).is_some_and(|r| r.is_ok()) {
        Some("ONFT_BUNDLE_ADD_MESSAGE")
    } else {
        None
    }
}

/// The body of an OpenFlow 1.3 ONF bundle message, if `e` is one that decodes.
pub(super) fn onf_bundle(e: &crate::v13::Experimenter, verbosity: u8) -> Option<String> {
    if let Some(Ok(c)) = BundleControl::from_experimenter(e) {
        return Some(bundle_control(&c));
    }
    if let Some(Ok(a)) = BundleAdd::from_experimenter(e) {
        return Some(bundle_add(&a, verbosity));
    }
    None
}
