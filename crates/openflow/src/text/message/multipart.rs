//! OpenFlow 1.3 multipart requests and replies: the multipart type (`OFPMP_FLOW`), the
//! ` flags=[more]` mark, then the type's own text; list replies put one element per line
//! (flow stats as `dump-flows` lines, port stats as `port 1: rx pkts=..`, ...).

use super::v13::table_name;
use super::{counter, data_summary, port_name, with_lines};
use crate::oxm::OXM_CLASS_EXPERIMENTER;
use crate::text::format_duration;
use crate::v13::multipart::*;
use crate::v13::table_features::{FeatureId, OxmId, TableFeatureProp, TableFeatures};

/// The multipart head: type name and flags (the "more" bit is 1 in 1.0 stats too).
pub(super) fn head(type_name: &str, flags: u16) -> String {
    let mut s = type_name.to_string();
    if flags & OFPMPF_REPLY_MORE != 0 {
        s.push_str(" flags=[more]");
    }
    let rest = flags & !OFPMPF_REPLY_MORE;
    if rest != 0 {
        s.push_str(&format!(" flags=[***unknown flags {rest:#06x}***]"));
    }
    s
}

/// `head` then ` text` when `text` is not empty.
pub(super) fn join(head: String, text: String) -> String {
    if text.is_empty() {
        head
    } else {
        format!("{head} {text}")
    }
}

/// A queue id: `ALL` or the number.
pub(super) fn queue_id(q: u32) -> String {
    if q == port_stats::OFPQ_ALL {
        "ALL".into()
    } else {
        q.to_string()
    }
}

fn experimenter_text(experimenter: u32, exp_type: u32, data: &[u8]) -> String {
    format!("experimenter={experimenter:#010x} exp_type={exp_type} {}", data_summary(data))
}

pub(super) fn reply(r: &MultipartReply) -> String {
    use MultipartReplyBody as B;
    let h = head(r.body.name(), r.flags);
    match &r.body {
        B::Queue(qs) => {
            with_lines(join(h, format!("{} queues", qs.len())), qs.iter().map(queue_stats))
        }
        B::TableFeatures(tables) => with_lines(h, tables.iter().map(table_features)),
        B::Experimenter(Experimenter { experimenter, exp_type, data }) => {
            join(h, experimenter_text(*experimenter, *exp_type, data))
        }
        // The ovs-ofctl printer (`text::print`) prints the other replies.
        _ => h,
    }
}

fn queue_stats(q: &QueueStats) -> String {
    format!(
        "port {} queue {}: bytes={}, pkts={}, errors={}, duration={}",
        port_name(q.port_no),
        queue_id(q.queue_id),
        counter(q.tx_bytes),
        counter(q.tx_packets),
        counter(q.tx_errors),
        format_duration(q.duration_sec, q.duration_nsec)
    )
}

/// OpenFlow 1.3 action type names by type number (bit n of an action bitmap).
fn action_type_name(t: u16) -> String {
    match t {
        0 => "output".into(),
        11 => "copy_ttl_out".into(),
        12 => "copy_ttl_in".into(),
        15 => "set_mpls_ttl".into(),
        16 => "dec_mpls_ttl".into(),
        17 => "push_vlan".into(),
        18 => "pop_vlan".into(),
        19 => "push_mpls".into(),
        20 => "pop_mpls".into(),
        21 => "set_queue".into(),
        22 => "group".into(),
        23 => "set_nw_ttl".into(),
        24 => "dec_nw_ttl".into(),
        25 => "set_field".into(),
        26 => "push_pbb".into(),
        27 => "pop_pbb".into(),
        0xffff => "experimenter".into(),
        n => format!("action{n}"),
    }
}

/// OpenFlow basic field names by OXM field number, as ovs-ofctl's table features print.
const OXM_NAMES: [&str; 40] = [
    "in_port",
    "in_phy_port",
    "metadata",
    "eth_dst",
    "eth_src",
    "eth_type",
    "vlan_vid",
    "vlan_pcp",
    "ip_dscp",
    "ip_ecn",
    "ip_proto",
    "ipv4_src",
    "ipv4_dst",
    "tcp_src",
    "tcp_dst",
    "udp_src",
    "udp_dst",
    "sctp_src",
    "sctp_dst",
    "icmpv4_type",
    "icmpv4_code",
    "arp_op",
    "arp_spa",
    "arp_tpa",
    "arp_sha",
    "arp_tha",
    "ipv6_src",
    "ipv6_dst",
    "ipv6_flabel",
    "icmpv6_type",
    "icmpv6_code",
    "ipv6_nd_target",
    "ipv6_nd_sll",
    "ipv6_nd_tll",
    "mpls_label",
    "mpls_tc",
    "mpls_bos",
    "pbb_isid",
    "tunnel_id",
    "ipv6_exthdr",
];

fn oxm_id(o: &OxmId) -> String {
    let mut s = match (o.class, OXM_NAMES.get(usize::from(o.field))) {
        (0x8000, Some(n)) => (*n).to_string(),
        (OXM_CLASS_EXPERIMENTER, _) => {
            format!("oxm(exp={:#x},field={})", o.experimenter.unwrap_or_default(), o.field)
        }
        _ => format!("oxm(class={:#06x},field={})", o.class, o.field),
    };
    if o.has_mask {
        s.push_str("/masked");
    }
    s
}

fn instruction_type_name(t: u16) -> String {
    match t {
        1 => "goto_table".into(),
        2 => "write_metadata".into(),
        3 => "write_actions".into(),
        4 => "apply_actions".into(),
        5 => "clear_actions".into(),
        6 => "meter".into(),
        n => format!("instruction{n}"),
    }
}

fn feature_ids(ids: &[FeatureId], name: fn(u16) -> String) -> String {
    let v: Vec<String> = ids
        .iter()
        .map(|id| match id {
            FeatureId::Type(t) => name(*t),
            FeatureId::Experimenter { experimenter, .. } => {
                format!("experimenter({experimenter:#x})")
            }
        })
        .collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(",")
    }
}

/// Table ids as ranges (`1-253,255`).
fn table_ranges(tables: &[u8]) -> String {
    let mut sorted = tables.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(&start) = sorted.get(i) {
        let mut end = start;
        while sorted.get(i + 1).is_some_and(|&n| u16::from(n) == u16::from(end) + 1) {
            i += 1;
            end = sorted.get(i).copied().unwrap_or(end);
        }
        parts.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
        i += 1;
    }
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(",")
    }
}

fn oxm_ids(ids: &[OxmId]) -> String {
    if ids.is_empty() {
        "none".into()
    } else {
        ids.iter().map(oxm_id).collect::<Vec<_>>().join(",")
    }
}

/// One table-features property as `name=list` (`name_miss=` for a miss property).
fn prop(p: &TableFeatureProp) -> String {
    use TableFeatureProp as P;
    let (name, miss, value) = match p {
        P::Instructions { miss, ids } => {
            ("instructions", *miss, feature_ids(ids, instruction_type_name))
        }
        P::NextTables { miss, tables } => ("next_tables", *miss, table_ranges(tables)),
        P::WriteActions { miss, ids } => {
            ("write_actions", *miss, feature_ids(ids, action_type_name))
        }
        P::ApplyActions { miss, ids } => {
            ("apply_actions", *miss, feature_ids(ids, action_type_name))
        }
        P::Match(ids) => ("match", false, oxm_ids(ids)),
        P::Wildcards(ids) => ("wildcards", false, oxm_ids(ids)),
        P::WriteSetfield { miss, fields } => ("write_setfield", *miss, oxm_ids(fields)),
        P::ApplySetfield { miss, fields } => ("apply_setfield", *miss, oxm_ids(fields)),
        P::Experimenter { miss, experimenter, exp_type, data } => {
            let text = experimenter_text(*experimenter, *exp_type, data);
            ("experimenter", *miss, format!("({text})"))
        }
        P::Unknown { ty, data } => return format!("property{ty}=({})", data_summary(data)),
    };
    let miss = if miss { "_miss" } else { "" };
    format!("{name}{miss}={value}")
}

/// One table's features on one line: limits, then each property as `name=list`.
fn table_features(t: &TableFeatures) -> String {
    let mut s = format!(
        "table {} (\"{}\"): metadata: match={:#x} write={:#x} config={:#x} max_entries={}",
        table_name(t.table_id),
        t.name,
        t.metadata_match,
        t.metadata_write,
        t.config,
        t.max_entries
    );
    for p in &t.properties {
        s.push(' ');
        s.push_str(&prop(p));
    }
    s
}
