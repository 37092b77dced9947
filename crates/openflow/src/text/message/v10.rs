//! OpenFlow 1.0 message bodies and statistics. Matches are converted with
//! [`crate::v10::Match::to_oxm`] and printed with the flow text form; 1.0 actions are
//! printed here with Open vSwitch's names (`output:1`, `mod_vlan_vid:5`, `strip_vlan`,
//! `enqueue:1:2`, ...).

use super::multipart::{head, join, queue_id};
use super::{counter, data_summary, hex_dump, port_name, with_lines};
use crate::v10::port::{ofpp, port_to_v13};
use crate::v10::stats::{stats_type, VendorStats};
use crate::v10::*;

fn port10(p: u16) -> String {
    port_name(port_to_v13(p))
}

/// The body of a 1.0 message (after `NAME (OF1.0) (xid=..): `).
pub(super) fn body(m: &Message) -> String {
    match m {
        Message::Hello(d) if d.is_empty() => String::new(),
        Message::Hello(d) => data_summary(d),
        Message::Vendor(v) => format!("vendor={:#010x} {}", v.vendor, data_summary(&v.data)),
        Message::StatsReply(r) => stats_reply(r),
        Message::QueueGetConfigRequest(p) => format!("port={}", port10(*p)),
        Message::QueueGetConfigReply(q) => super::v13::queue_config(q),
        // The ovs-ofctl printer (`text::print`) prints every other message.
        _ => String::new(),
    }
}

/// The OpenFlow 1.0 name of an error type/code (`OFPBRC_BAD_LEN`); numbers when 1.0
/// has no name for it: `OFPET_BAD_ACTION(code=99)` for a code a known type lacks,
/// `type=9,code=0` for an unknown type.
pub fn error_name(ty: u16, code: u16) -> String {
    const HELLO: &[&str] = &["OFPHFC_INCOMPATIBLE", "OFPHFC_EPERM"];
    const REQUEST: &[&str] = &[
        "OFPBRC_BAD_VERSION",
        "OFPBRC_BAD_TYPE",
        "OFPBRC_BAD_STAT",
        "OFPBRC_BAD_VENDOR",
        "OFPBRC_BAD_SUBTYPE",
        "OFPBRC_EPERM",
        "OFPBRC_BAD_LEN",
        "OFPBRC_BUFFER_EMPTY",
        "OFPBRC_BUFFER_UNKNOWN",
    ];
    const ACTION: &[&str] = &[
        "OFPBAC_BAD_TYPE",
        "OFPBAC_BAD_LEN",
        "OFPBAC_BAD_VENDOR",
        "OFPBAC_BAD_VENDOR_TYPE",
        "OFPBAC_BAD_OUT_PORT",
        "OFPBAC_BAD_ARGUMENT",
        "OFPBAC_EPERM",
        "OFPBAC_TOO_MANY",
        "OFPBAC_BAD_QUEUE",
    ];
    const FLOW_MOD: &[&str] = &[
        "OFPFMFC_ALL_TABLES_FULL",
        "OFPFMFC_OVERLAP",
        "OFPFMFC_EPERM",
        "OFPFMFC_BAD_EMERG_TIMEOUT",
        "OFPFMFC_BAD_COMMAND",
        "OFPFMFC_UNSUPPORTED",
    ];
    const PORT_MOD: &[&str] = &["OFPPMFC_BAD_PORT", "OFPPMFC_BAD_HW_ADDR"];
    const QUEUE_OP: &[&str] = &["OFPQOFC_BAD_PORT", "OFPQOFC_BAD_QUEUE", "OFPQOFC_EPERM"];
    const TYPES: [(&str, &[&str]); 6] = [
        ("OFPET_HELLO_FAILED", HELLO),
        ("OFPET_BAD_REQUEST", REQUEST),
        ("OFPET_BAD_ACTION", ACTION),
        ("OFPET_FLOW_MOD_FAILED", FLOW_MOD),
        ("OFPET_PORT_MOD_FAILED", PORT_MOD),
        ("OFPET_QUEUE_OP_FAILED", QUEUE_OP),
    ];
    match TYPES.get(usize::from(ty)) {
        Some((_, codes)) if usize::from(code) < codes.len() => {
            codes.get(usize::from(code)).map_or_else(|| code.to_string(), |c| (*c).to_string())
        }
        Some((t, _)) => format!("{t}(code={code})"),
        None => format!("type={ty},code={code}"),
    }
}

/// One 1.0 action as Open vSwitch prints it; reserved ports by the names of the flow
/// text form, vendor data cut after [`super::MAX_DUMP`] bytes.
pub fn format_action10(a: &Action) -> String {
    match a {
        Action::Output { port, max_len } => {
            if *port == ofpp::CONTROLLER {
                format!("CONTROLLER:{max_len}")
            } else if *port < ofpp::MAX {
                format!("output:{port}")
            } else {
                port10(*port)
            }
        }
        Action::SetVlanVid(v) => format!("mod_vlan_vid:{v}"),
        Action::SetVlanPcp(p) => format!("mod_vlan_pcp:{p}"),
        Action::StripVlan => "strip_vlan".into(),
        Action::SetDlSrc(m) => format!("mod_dl_src:{m}"),
        Action::SetDlDst(m) => format!("mod_dl_dst:{m}"),
        Action::SetNwSrc(a) => format!("mod_nw_src:{a}"),
        Action::SetNwDst(a) => format!("mod_nw_dst:{a}"),
        Action::SetNwTos(t) => format!("mod_nw_tos:{t}"),
        Action::SetTpSrc(p) => format!("mod_tp_src:{p}"),
        Action::SetTpDst(p) => format!("mod_tp_dst:{p}"),
        Action::Enqueue { port, queue_id } => format!("enqueue:{}:{queue_id}", port10(*port)),
        Action::Vendor { vendor, data } => {
            format!("vendor({vendor:#x},data=0x{})", hex_dump(data))
        }
    }
}

/// `OFPST_*` name of a 1.0 stats type.
fn stats_name(ty: u16) -> String {
    match ty {
        stats_type::DESC => "OFPST_DESC".into(),
        stats_type::FLOW => "OFPST_FLOW".into(),
        stats_type::AGGREGATE => "OFPST_AGGREGATE".into(),
        stats_type::TABLE => "OFPST_TABLE".into(),
        stats_type::PORT => "OFPST_PORT".into(),
        stats_type::QUEUE => "OFPST_QUEUE".into(),
        stats_type::PORT_DESC => "OFPST_PORT_DESC".into(),
        stats_type::VENDOR => "OFPST_VENDOR".into(),
        n => format!("OFPST_{n}"),
    }
}

fn stats_head(ty: u16, flags: u16) -> String {
    head(&stats_name(ty), flags)
}

fn stats_reply(r: &StatsReply) -> String {
    let h = stats_head(r.body.type_code(), r.flags);
    match &r.body {
        StatsReplyBody::Queue(qs) => with_lines(
            join(h, format!("{} queues", qs.len())),
            qs.iter().map(|q| {
                format!(
                    "port {} queue {}: bytes={}, pkts={}, errors={}",
                    port_name(q.port_no),
                    queue_id(q.queue_id),
                    counter(q.tx_bytes),
                    counter(q.tx_packets),
                    counter(q.tx_errors)
                )
            }),
        ),
        StatsReplyBody::Vendor(VendorStats { vendor, data }) => {
            join(h, format!("vendor={vendor:#010x} {}", data_summary(data)))
        }
        // The ovs-ofctl printer (`text::print`) prints the other replies.
        _ => h,
    }
}
