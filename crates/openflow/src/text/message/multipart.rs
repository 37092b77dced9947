//! OpenFlow 1.3 multipart requests and replies: the multipart type (`OFPMP_FLOW`), the
//! ` flags=[more]` mark, then the type's own text; list replies put one element per line
//! (flow stats as `dump-flows` lines, port stats as `port 1: rx pkts=..`, ...).

use super::port::format_port13;
use super::v13::{one_line_meter, table_name};
use super::{bit_names, counter, data_summary, port_name, with_lines};
use crate::action::{port, OFPG_ALL, OFPG_ANY};
use crate::oxm::OXM_CLASS_EXPERIMENTER;
use crate::text::match_format::format_match_prio;
use crate::text::{
    format_duration, format_flow_stats, format_group_mod, format_meter_mod, FlowStatsText,
};
use crate::v13::group_mod::{GroupMod, GroupModCommand};
use crate::v13::meter_mod::{MeterMod, MeterModCommand, OFPM_ALL, OFPM_CONTROLLER, OFPM_SLOWPATH};
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

/// A meter id: `all`, `controller`, `slowpath` or the number.
fn meter_id(m: u32) -> String {
    match m {
        OFPM_ALL => "all".into(),
        OFPM_SLOWPATH => "slowpath".into(),
        OFPM_CONTROLLER => "controller".into(),
        n => n.to_string(),
    }
}

/// A group id: `all`, `any` or the number.
fn group_id(g: u32) -> String {
    match g {
        OFPG_ALL => "all".into(),
        OFPG_ANY => "any".into(),
        n => n.to_string(),
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

pub(super) fn request(r: &MultipartRequest) -> String {
    use MultipartRequestBody as B;
    let h = head(r.body.name(), r.flags);
    let text = match &r.body {
        B::Desc | B::Table | B::GroupDesc | B::GroupFeatures | B::MeterFeatures | B::PortDesc => {
            String::new()
        }
        B::Flow(f) | B::Aggregate(f) => flow_request(f),
        B::PortStats { port_no } => format!("port_no={}", port_name(*port_no)),
        B::Queue {
            port_no,
            queue_id: q,
        } => {
            format!("port={} queue={}", port_name(*port_no), queue_id(*q))
        }
        B::Group { group_id: g } => format!("group_id={}", group_id(*g)),
        B::Meter { meter_id: m } | B::MeterConfig { meter_id: m } => {
            format!("meter={}", meter_id(*m))
        }
        B::TableFeatures(tables) => {
            return with_lines(h, tables.iter().map(table_features));
        }
        B::Experimenter {
            experimenter,
            exp_type,
            data,
        } => experimenter_text(*experimenter, *exp_type, data),
    };
    join(h, text)
}

fn experimenter_text(experimenter: u32, exp_type: u32, data: &[u8]) -> String {
    format!(
        "experimenter={experimenter:#010x} exp_type={exp_type} {}",
        data_summary(data)
    )
}

fn flow_request(f: &FlowStatsRequest) -> String {
    let mut parts: Vec<String> = Vec::new();
    if f.table_id != crate::v13::flow_mod::OFPTT_ALL {
        parts.push(format!("table={}", f.table_id));
    }
    if f.out_port != port::ANY {
        parts.push(format!("out_port={}", port_name(f.out_port)));
    }
    if f.out_group != OFPG_ANY {
        parts.push(format!("out_group={}", group_id(f.out_group)));
    }
    if f.cookie_mask != 0 {
        parts.push(format!("cookie={:#x}/{:#x}", f.cookie, f.cookie_mask));
    }
    let m = format_match_prio(&f.match_, None);
    if !m.is_empty() {
        parts.push(m);
    }
    parts.join(" ")
}

pub(super) fn reply(r: &MultipartReply) -> String {
    use MultipartReplyBody as B;
    let h = head(r.body.name(), r.flags);
    match &r.body {
        B::Desc(d) => desc(h, d),
        B::Flow(flows) => with_lines(h, flows.iter().map(flow_stats)),
        B::Aggregate(a) => join(h, aggregate(a.packet_count, a.byte_count, a.flow_count)),
        B::Table(t) => with_lines(
            h,
            t.iter().map(|t| {
                format!(
                    "table {}: active={}, lookup={}, matched={}",
                    t.table_id, t.active_count, t.lookup_count, t.matched_count
                )
            }),
        ),
        B::PortStats(ps) => with_lines(
            join(h, format!("{} ports", ps.len())),
            ps.iter().map(port_stats),
        ),
        B::Queue(qs) => with_lines(
            join(h, format!("{} queues", qs.len())),
            qs.iter().map(queue_stats),
        ),
        B::Group(gs) => with_lines(h, gs.iter().map(group_stats)),
        B::GroupDesc(gd) => with_lines(
            h,
            gd.iter().map(|g| {
                format_group_mod(&GroupMod {
                    command: GroupModCommand::Add,
                    group_type: g.group_type,
                    group_id: g.group_id,
                    buckets: g.buckets.clone(),
                })
            }),
        ),
        B::GroupFeatures(g) => with_lines(h, group_features(g)),
        B::Meter(ms) => with_lines(h, ms.iter().map(meter_stats)),
        B::MeterConfig(mc) => with_lines(
            h,
            mc.iter().map(|m| {
                one_line_meter(&format_meter_mod(&MeterMod {
                    command: MeterModCommand::Add,
                    flags: m.flags,
                    meter_id: m.meter_id,
                    bands: m.bands.clone(),
                }))
            }),
        ),
        B::MeterFeatures(f) => join(h, meter_features(f)),
        B::TableFeatures(tables) => with_lines(h, tables.iter().map(table_features)),
        B::PortDesc(ports) => with_lines(h, ports.iter().map(format_port13)),
        B::Experimenter {
            experimenter,
            exp_type,
            data,
        } => join(h, experimenter_text(*experimenter, *exp_type, data)),
    }
}

/// The five desc strings, one per line.
fn desc(h: String, d: &Desc) -> String {
    with_lines(
        h,
        [
            format!("Manufacturer: {}", d.mfr_desc),
            format!("Hardware: {}", d.hw_desc),
            format!("Software: {}", d.sw_desc),
            format!("Serial Num: {}", d.serial_num),
            format!("DP Description: {}", d.dp_desc),
        ],
    )
}

/// `packet_count=N byte_count=N flow_count=N` (both versions).
pub(super) fn aggregate(packets: u64, bytes: u64, flows: u32) -> String {
    format!("packet_count={packets} byte_count={bytes} flow_count={flows}")
}

fn flow_stats(f: &FlowStats) -> String {
    format_flow_stats(&FlowStatsText {
        table_id: f.table_id,
        duration_sec: f.duration_sec,
        duration_nsec: f.duration_nsec,
        priority: f.priority,
        idle_timeout: f.idle_timeout,
        hard_timeout: f.hard_timeout,
        flags: f.flags,
        cookie: f.cookie,
        packet_count: f.packet_count,
        byte_count: f.byte_count,
        idle_age: None,
        hard_age: None,
        match_: &f.match_,
        instructions: &f.instructions,
    })
}

/// The counters of one port, as ovs-ofctl's `dump-ports` prints them but on one line.
pub(super) struct PortCounters {
    pub port: String,
    /// packets, bytes, dropped, errors, frame errors, overruns, CRC errors.
    pub rx: [u64; 7],
    /// packets, bytes, dropped, errors, collisions.
    pub tx: [u64; 5],
    pub duration: Option<(u32, u32)>,
}

impl PortCounters {
    pub fn render(&self) -> String {
        let [rp, rb, rd, re, rf, ro, rc] = self.rx.map(counter);
        let [tp, tb, td, te, tc] = self.tx.map(counter);
        let mut s = format!(
            "port {}: rx pkts={rp}, bytes={rb}, drop={rd}, errs={re}, frame={rf}, over={ro}, crc={rc} tx pkts={tp}, bytes={tb}, drop={td}, errs={te}, coll={tc}",
            self.port
        );
        if let Some((sec, nsec)) = self.duration {
            s.push_str(&format!(" duration={}", format_duration(sec, nsec)));
        }
        s
    }
}

fn port_stats(p: &PortStats) -> String {
    PortCounters {
        port: port_name(p.port_no),
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
        duration: Some((p.duration_sec, p.duration_nsec)),
    }
    .render()
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

fn group_stats(g: &GroupStats) -> String {
    let mut s = format!(
        "group_id={},duration={},ref_count={},packet_count={},byte_count={}",
        group_id(g.group_id),
        format_duration(g.duration_sec, g.duration_nsec),
        g.ref_count,
        counter(g.packet_count),
        counter(g.byte_count)
    );
    for (i, b) in g.bucket_stats.iter().enumerate() {
        s.push_str(&format!(
            ",bucket{i}:packet_count={},byte_count={}",
            counter(b.packet_count),
            counter(b.byte_count)
        ));
    }
    s
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

/// The names of the set bits of an action-type bitmap, space separated.
fn action_bitmap(bits: u32) -> String {
    let names: Vec<String> = (0..32u16)
        .filter(|b| bits & (1 << b) != 0)
        .map(action_type_name)
        .collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(" ")
    }
}

const GROUP_TYPES: [(u32, &str); 4] = [(1, "all"), (2, "select"), (4, "indirect"), (8, "ff")];

fn group_features(g: &GroupFeatures) -> Vec<String> {
    use crate::v13::multipart::group::group_capabilities as gc;
    let caps = [
        (gc::SELECT_WEIGHT, "select_weight"),
        (gc::SELECT_LIVENESS, "select_liveness"),
        (gc::CHAINING, "chaining"),
        (gc::CHAINING_CHECKS, "chaining_checks"),
    ];
    let mut lines = vec![format!(
        "types: {} capabilities: {}",
        bit_names(g.types, &GROUP_TYPES),
        bit_names(g.capabilities, &caps)
    )];
    for (i, (max, actions)) in g.max_groups.iter().zip(g.actions.iter()).enumerate() {
        if g.types & (1 << i) != 0 || *max != 0 || *actions != 0 {
            let name = GROUP_TYPES.get(i).map_or("?", |(_, n)| n);
            lines.push(format!(
                "{name}: max_groups={max} actions: {}",
                action_bitmap(*actions)
            ));
        }
    }
    lines
}

fn meter_stats(m: &MeterStats) -> String {
    let mut s = format!(
        "meter:{} flow_count:{} packet_in_count:{} byte_in_count:{} duration:{} bands:",
        meter_id(m.meter_id),
        m.flow_count,
        counter(m.packet_in_count),
        counter(m.byte_in_count),
        format_duration(m.duration_sec, m.duration_nsec)
    );
    for (i, b) in m.band_stats.iter().enumerate() {
        s.push_str(&format!(
            " {i}: packet_count:{} byte_count:{}",
            counter(b.packet_band_count),
            counter(b.byte_band_count)
        ));
    }
    s
}

fn meter_features(f: &MeterFeatures) -> String {
    let bands = [(1 << 1, "drop"), (1 << 2, "dscp_remark")];
    let caps = [(1, "kbps"), (2, "pktps"), (4, "burst"), (8, "stats")];
    format!(
        "max_meter:{} max_bands:{} max_color:{} band_types: {} capabilities: {}",
        f.max_meter,
        f.max_bands,
        f.max_color,
        bit_names(f.band_types, &bands),
        bit_names(f.capabilities, &caps)
    )
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
        (OXM_CLASS_EXPERIMENTER, _) => format!(
            "oxm(exp={:#x},field={})",
            o.experimenter.unwrap_or_default(),
            o.field
        ),
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
        while sorted
            .get(i + 1)
            .is_some_and(|&n| u16::from(n) == u16::from(end) + 1)
        {
            i += 1;
            end = sorted.get(i).copied().unwrap_or(end);
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
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

fn prop(p: &TableFeatureProp) -> String {
    use TableFeatureProp as P;
    let miss = |m: bool| if m { "_miss" } else { "" };
    match p {
        P::Instructions { miss: m, ids } => {
            format!(
                "instructions{}={}",
                miss(*m),
                feature_ids(ids, instruction_type_name)
            )
        }
        P::NextTables { miss: m, tables } => {
            format!("next_tables{}={}", miss(*m), table_ranges(tables))
        }
        P::WriteActions { miss: m, ids } => {
            format!(
                "write_actions{}={}",
                miss(*m),
                feature_ids(ids, action_type_name)
            )
        }
        P::ApplyActions { miss: m, ids } => {
            format!(
                "apply_actions{}={}",
                miss(*m),
                feature_ids(ids, action_type_name)
            )
        }
        P::Match(ids) => format!("match={}", oxm_ids(ids)),
        P::Wildcards(ids) => format!("wildcards={}", oxm_ids(ids)),
        P::WriteSetfield { miss: m, fields } => {
            format!("write_setfield{}={}", miss(*m), oxm_ids(fields))
        }
        P::ApplySetfield { miss: m, fields } => {
            format!("apply_setfield{}={}", miss(*m), oxm_ids(fields))
        }
        P::Experimenter {
            miss: m,
            experimenter,
            exp_type,
            data,
        } => format!(
            "experimenter{}=({})",
            miss(*m),
            experimenter_text(*experimenter, *exp_type, data)
        ),
        P::Unknown { ty, data } => format!("property{ty}=({})", data_summary(data)),
    }
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
