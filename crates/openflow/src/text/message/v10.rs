//! OpenFlow 1.0 message bodies and statistics. Matches are converted with
//! [`crate::v10::Match::to_oxm`] and printed with the flow text form; 1.0 actions are
//! printed here with Open vSwitch's names (`output:1`, `mod_vlan_vid:5`, `strip_vlan`,
//! `enqueue:1:2`, ...).

use super::multipart::{aggregate, head, join, queue_id, PortCounters};
use super::port::{features10, format_port10, format_port_mod};
use super::v13::{
    echo, error_data, flow_flags, packet_data, rate, removed_tail, switch_config, FlowModText,
};
use super::{bit_names, counter, data_summary, hex_dump, port_name, with_lines};
use crate::text::match_format::format_match_prio;
use crate::text::{format_flow_stats, FlowStatsText};
use crate::v10::features::capabilities as cap;
use crate::v10::flow::flow_mod_flags as ff;
use crate::v10::port::{ofpp, port_to_v13};
use crate::v10::stats::stats_type;
use crate::v10::*;

fn port10(p: u16) -> String {
    port_name(port_to_v13(p))
}

/// The body of a 1.0 message (after `NAME (OF1.0) (xid=..): `).
pub(super) fn body(m: &Message) -> String {
    match m {
        Message::Hello(d) if d.is_empty() => String::new(),
        Message::Hello(d) => data_summary(d),
        Message::Error(e) => format!("{} {}", error_name(e.err_type, e.code), error_data(&e.data)),
        Message::EchoRequest(d) | Message::EchoReply(d) => echo(d),
        Message::Vendor(v) => format!("vendor={:#010x} {}", v.vendor, data_summary(&v.data)),
        Message::FeaturesRequest
        | Message::GetConfigRequest
        | Message::BarrierRequest
        | Message::BarrierReply => String::new(),
        Message::FeaturesReply(f) => features(f),
        Message::GetConfigReply(c) | Message::SetConfig(c) => {
            switch_config(c.flags, c.miss_send_len)
        }
        Message::PacketIn(p) => {
            let reason = match p.reason {
                PacketInReason::NoMatch => "no_match".to_string(),
                PacketInReason::Action => "action".into(),
                PacketInReason::Unknown(n) => n.to_string(),
            };
            format!(
                "total_len={} in_port={} (via {reason}) {}",
                p.total_len,
                port10(p.in_port),
                packet_data(p.buffer_id, &p.data)
            )
        }
        Message::FlowRemoved(f) => flow_removed(f),
        Message::PortStatus(p) => {
            let reason = match p.reason {
                PortStatusReason::Add => "ADD".to_string(),
                PortStatusReason::Delete => "DEL".into(),
                PortStatusReason::Modify => "MOD".into(),
                PortStatusReason::Unknown(n) => format!("reason {n}"),
            };
            format!("{reason}: {}", format_port10(&p.desc))
        }
        Message::PacketOut(p) => packet_out(p),
        Message::FlowMod(f) => flow_mod(f),
        Message::PortMod(p) => format_port_mod(
            port10(p.port_no),
            p.hw_addr,
            p.config,
            p.mask,
            p.advertise,
            features10,
        ),
        Message::StatsRequest(r) => stats_request(r),
        Message::StatsReply(r) => stats_reply(r),
        Message::QueueGetConfigRequest(p) => format!("port={}", port10(*p)),
        Message::QueueGetConfigReply(q) => with_lines(
            format!("port={}", port10(q.port)),
            q.queues.iter().map(|pq| {
                let mut s = format!("queue {}:", pq.queue_id);
                for p in &pq.properties {
                    s.push(' ');
                    s.push_str(&match p {
                        QueueProperty::MinRate(r) => format!("min_rate:{}", rate(*r)),
                        QueueProperty::Other { property, data } => {
                            format!("property:{property} {}", data_summary(data))
                        }
                    });
                }
                s
            }),
        ),
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
        Some((_, codes)) if usize::from(code) < codes.len() => codes
            .get(usize::from(code))
            .map_or_else(|| code.to_string(), |c| (*c).to_string()),
        Some((t, _)) => format!("{t}(code={code})"),
        None => format!("type={ty},code={code}"),
    }
}

const CAPABILITIES: [(u32, &str); 8] = [
    (cap::FLOW_STATS, "FLOW_STATS"),
    (cap::TABLE_STATS, "TABLE_STATS"),
    (cap::PORT_STATS, "PORT_STATS"),
    (cap::STP, "STP"),
    (cap::RESERVED, "RESERVED"),
    (cap::IP_REASM, "IP_REASM"),
    (cap::QUEUE_STATS, "QUEUE_STATS"),
    (cap::ARP_MATCH_IP, "ARP_MATCH_IP"),
];

/// 1.0 action types by bit number of the features reply's action bitmap.
const ACTION_BITS: [(u32, &str); 12] = [
    (1 << 0, "output"),
    (1 << 1, "set_vlan_vid"),
    (1 << 2, "set_vlan_pcp"),
    (1 << 3, "strip_vlan"),
    (1 << 4, "set_dl_src"),
    (1 << 5, "set_dl_dst"),
    (1 << 6, "set_nw_src"),
    (1 << 7, "set_nw_dst"),
    (1 << 8, "set_nw_tos"),
    (1 << 9, "set_tp_src"),
    (1 << 10, "set_tp_dst"),
    (1 << 11, "enqueue"),
];

fn features(f: &FeaturesReply) -> String {
    with_lines(
        format!(
            "dpid:{:016x} n_tables:{}, n_buffers:{} capabilities: {} actions: {}",
            f.datapath_id,
            f.n_tables,
            f.n_buffers,
            bit_names(f.capabilities, &CAPABILITIES),
            bit_names(f.actions, &ACTION_BITS)
        ),
        f.ports.iter().map(format_port10),
    )
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

/// A 1.0 action list (`drop` when empty).
pub(super) fn format_actions10(actions: &[Action]) -> String {
    if actions.is_empty() {
        "drop".into()
    } else {
        actions
            .iter()
            .map(format_action10)
            .collect::<Vec<_>>()
            .join(",")
    }
}

fn flow_removed(f: &FlowRemoved) -> String {
    let reason = match f.reason {
        FlowRemovedReason::IdleTimeout => "idle".to_string(),
        FlowRemovedReason::HardTimeout => "hard".into(),
        FlowRemovedReason::Delete => "delete".into(),
        FlowRemovedReason::Unknown(n) => format!("**{n}**"),
    };
    let mut s = format_match_prio(&f.match_.to_oxm(), Some(f.priority));
    if !s.is_empty() {
        s.push(' ');
    }
    s.push_str(&format!("reason={reason}"));
    s.push_str(&removed_tail(
        f.cookie,
        f.duration_sec,
        f.duration_nsec,
        f.idle_timeout,
        0,
        f.packet_count,
        f.byte_count,
    ));
    s
}

fn packet_out(p: &PacketOut) -> String {
    let mut s = format!(
        "in_port={} actions={}",
        port10(p.in_port),
        format_actions10(&p.actions)
    );
    if p.buffer_id == crate::v10::flow::NO_BUFFER {
        let d = packet_data(p.buffer_id, &p.data);
        // `packet_data` says "(unbuffered)" after the length; a packet-out says nothing.
        s.push(' ');
        s.push_str(&d.replacen(" (unbuffered)", "", 1));
    } else {
        s.push_str(&format!(" buffer={:#010x}", p.buffer_id));
    }
    s
}

const FLOW_FLAGS: [(u16, &str); 3] = [
    (ff::SEND_FLOW_REM, "send_flow_rem"),
    (ff::CHECK_OVERLAP, "check_overlap"),
    (ff::EMERG, "emergency"),
];

fn flow_mod(f: &FlowMod) -> String {
    let cmd = match f.command {
        FlowModCommand::Add => "ADD".to_string(),
        FlowModCommand::Modify => "MOD".into(),
        FlowModCommand::ModifyStrict => "MOD_STRICT".into(),
        FlowModCommand::Delete => "DEL".into(),
        FlowModCommand::DeleteStrict => "DEL_STRICT".into(),
        FlowModCommand::Unknown(n) => format!("cmd:{n}"),
    };
    let mut s = format!("{cmd} ");
    s.push_str(
        &FlowModText {
            match_prio: format_match_prio(&f.match_.to_oxm(), Some(f.priority)),
            cookie: f.cookie,
            cookie_mask: 0,
            idle: f.idle_timeout,
            hard: f.hard_timeout,
            buffer_id: f.buffer_id,
            out_port: (f.out_port != ofpp::NONE).then(|| port10(f.out_port)),
        }
        .render(),
    );
    s.push_str(&flow_flags(f.flags, &FLOW_FLAGS));
    s.push_str("actions=");
    s.push_str(&format_actions10(&f.actions));
    s
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
        stats_type::VENDOR => "OFPST_VENDOR".into(),
        n => format!("OFPST_{n}"),
    }
}

fn stats_head(ty: u16, flags: u16) -> String {
    head(&stats_name(ty), flags)
}

fn stats_request(r: &StatsRequest) -> String {
    let h = stats_head(r.body.type_code(), r.flags);
    let text = match &r.body {
        StatsRequestBody::Desc | StatsRequestBody::Table => String::new(),
        StatsRequestBody::Flow(f) | StatsRequestBody::Aggregate(f) => {
            let mut parts: Vec<String> = Vec::new();
            if f.table_id != 0xff {
                parts.push(format!("table={}", f.table_id));
            }
            if f.out_port != ofpp::NONE {
                parts.push(format!("out_port={}", port10(f.out_port)));
            }
            let m = format_match_prio(&f.match_.to_oxm(), None);
            if !m.is_empty() {
                parts.push(m);
            }
            parts.join(" ")
        }
        StatsRequestBody::Port(p) => format!("port_no={}", port10(p.port_no)),
        StatsRequestBody::Queue(q) => {
            format!("port={} queue={}", port10(q.port_no), queue_id(q.queue_id))
        }
        StatsRequestBody::Vendor { vendor, data } => {
            format!("vendor={vendor:#010x} {}", data_summary(data))
        }
    };
    join(h, text)
}

fn flow_stats(f: &stats::FlowStats) -> String {
    let m = f.match_.to_oxm();
    let line = format_flow_stats(&FlowStatsText {
        table_id: f.table_id,
        duration_sec: f.duration_sec,
        duration_nsec: f.duration_nsec,
        priority: f.priority,
        idle_timeout: f.idle_timeout,
        hard_timeout: f.hard_timeout,
        flags: 0,
        cookie: f.cookie,
        packet_count: f.packet_count,
        byte_count: f.byte_count,
        idle_age: None,
        hard_age: None,
        match_: &m,
        instructions: &[],
    });
    // The 1.3 printer ends with the (empty) instructions; put the 1.0 actions there.
    let head = line.strip_suffix("actions=drop").unwrap_or(&line);
    let sep = if head.contains("actions=") {
        " 1.0-actions="
    } else {
        "actions="
    };
    format!("{head}{sep}{}", format_actions10(&f.actions))
}

fn stats_reply(r: &StatsReply) -> String {
    let h = stats_head(r.body.type_code(), r.flags);
    match &r.body {
        StatsReplyBody::Desc(d) => with_lines(
            h,
            [
                format!("Manufacturer: {}", d.mfr_desc),
                format!("Hardware: {}", d.hw_desc),
                format!("Software: {}", d.sw_desc),
                format!("Serial Num: {}", d.serial_num),
                format!("DP Description: {}", d.dp_desc),
            ],
        ),
        StatsReplyBody::Flow(fs) => with_lines(h, fs.iter().map(flow_stats)),
        StatsReplyBody::Aggregate(a) => {
            join(h, aggregate(a.packet_count, a.byte_count, a.flow_count))
        }
        StatsReplyBody::Table(ts) => with_lines(
            h,
            ts.iter().map(|t| {
                format!(
                    "table {} (\"{}\"): wild={:#08x}, max={}, active={}, lookup={}, matched={}",
                    t.table_id,
                    t.name,
                    t.wildcards,
                    t.max_entries,
                    t.active_count,
                    t.lookup_count,
                    t.matched_count
                )
            }),
        ),
        StatsReplyBody::Port(ps) => with_lines(
            join(h, format!("{} ports", ps.len())),
            ps.iter().map(|p| {
                PortCounters {
                    port: port10(p.port_no),
                    rx: [
                        p.rx_packets,
                        p.rx_bytes,
                        p.rx_dropped,
                        p.rx_errors,
                        p.rx_frame_err,
                        p.rx_over_err,
                        p.rx_crc_err,
                    ],
                    tx: [
                        p.tx_packets,
                        p.tx_bytes,
                        p.tx_dropped,
                        p.tx_errors,
                        p.collisions,
                    ],
                    duration: None,
                }
                .render()
            }),
        ),
        StatsReplyBody::Queue(qs) => with_lines(
            join(h, format!("{} queues", qs.len())),
            qs.iter().map(|q| {
                format!(
                    "port {} queue {}: bytes={}, pkts={}, errors={}",
                    port10(q.port_no),
                    queue_id(q.queue_id),
                    counter(q.tx_bytes),
                    counter(q.tx_packets),
                    counter(q.tx_errors)
                )
            }),
        ),
        StatsReplyBody::Vendor { vendor, data } => {
            join(h, format!("vendor={vendor:#010x} {}", data_summary(data)))
        }
    }
}
