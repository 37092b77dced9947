//! OpenFlow messages printed as ovs-ofctl prints them (Open vSwitch 3.1's
//! `ofp_to_string`), so that scripts reading ovs-ofctl's output read ours.
//!
//! A message prints as `NAME (OF1.3) (xid=0x2):` (no version tag for OpenFlow 1.0),
//! then ` flags=[more]` on multipart/stats messages that have it, then the body in Open
//! vSwitch's layout, which for lists puts one element per line. The result always ends
//! with one newline. `verbosity` has Open vSwitch's meaning where it matters: replies
//! print at 1 (ovs-ofctl's dumps), async messages and errors at 2 (`monitor` and the
//! errors of modifications), the request inside an error at 1; packet-ins and
//! packet-outs show the packet's flow from 1 on and a hex dump from 3 on.
//!
//! The bodies are built with Open vSwitch's conventions (a leading space, `\n` before
//! list elements) so that the code reads like its C counterpart: `finish` then drops
//! trailing spaces and adds the final newline. Message families live in submodules:
//! `switch` (features, config), `port` (descriptions, counters, port-mod, port-status),
//! `flow` (flow stats, flow-mod, flow-removed, flow requests), `table` (table stats),
//! `group`, `meter`, `packet` (packet-in/out and the flow of a packet), `error`, `v14`
//! (the messages 1.4 added, 1.4's table-mod, roles and the asynchronous configuration)
//! and `mp14` (1.4's table and queue descriptions and flow monitors).
//! Messages no ovs-ofctl command of ours receives print with the `openflow` crate's
//! one-line form after the same header.

mod error;
mod flow;
mod group;
mod meter;
mod mp14;
mod packet;
mod port;
mod switch;
mod table;
mod v14;

pub use error::error_name;
pub use flow::{flow_line, removed_reason};
pub use group::{action_bitmap_names, group_text};
pub use meter::{meter_flag_words, meter_id};
pub use packet::{reason, summary as packet_summary};
pub use port::{config_names, feature_names, state_names};
pub use switch::{actions10_names, capability_names};

use crate::header::Header;
use crate::v10::stats::{StatsReplyBody as R10, StatsRequestBody as Q10};
use crate::v10::Message as M10;
use crate::v13::multipart::{MultipartReplyBody as R13, MultipartRequestBody as Q13};
use crate::v13::Message as M13;
use crate::{Frame, Message};

use crate::model::{FlowEntry, Port};

/// Prints a whole message (see the module comment for `verbosity`).
pub fn frame(f: &Frame, verbosity: u8) -> String {
    let mut s = header(f.version, &name(f), f.xid);
    if let Some(flags) = stats_flags(f) {
        push_stats_flags(&mut s, flags);
    }
    let body = match &f.message {
        Message::V13(m) => body13(m, f.version, verbosity),
        Message::V10(m) => body10(m, verbosity),
    };
    s.push_str(&body);
    finish(s)
}

/// Prints bytes that should hold one message: the message when they decode; else the
/// header, what is wrong and a hex dump, as Open vSwitch does.
pub fn raw(bytes: &[u8], verbosity: u8) -> String {
    let Ok(h) = Header::peek(bytes) else {
        return format!(
            "OpenFlow packet too short (only {} bytes):\n{}",
            bytes.len(),
            hex_dump(bytes)
        );
    };
    if usize::from(h.length) > bytes.len() {
        return format!(
            "{}\n(***truncated to {} bytes from {}***)\n{}",
            header(h.version, &type_name(h.version, h.msg_type), h.xid),
            bytes.len(),
            h.length,
            hex_dump(bytes)
        );
    }
    let whole = &bytes[..usize::from(h.length)];
    match Frame::decode(whole) {
        Ok(f) => frame(&f, verbosity),
        Err(e) => {
            let name = error_name(e.kind.ty, e.kind.code, crate::OFP13_VERSION);
            format!(
                "{} ***decode error: {name}***\n{}",
                header(h.version, &type_name(h.version, h.msg_type), h.xid),
                hex_dump(whole)
            )
        }
    }
}

/// ovs-ofctl's port-desc reply for a list of ports we got otherwise (OpenFlow 1.0's
/// features reply).
pub fn port_desc_reply(version: u8, xid: u32, ports: &[Port]) -> String {
    finish(format!("{}\n{}", header(version, "OFPST_PORT_DESC reply", xid), port::ports(ports)))
}

/// `NAME (OF1.3) (xid=0x5):`.
pub fn header(version: u8, name: &str, xid: u32) -> String {
    let v = match version {
        1 => String::new(),
        2 => " (OF1.1)".into(),
        3 => " (OF1.2)".into(),
        4 => " (OF1.3)".into(),
        5 => " (OF1.4)".into(),
        6 => " (OF1.5)".into(),
        n => format!(" (OF 0x{n:02x})"),
    };
    format!("{name}{v} (xid={xid:#x}):")
}

/// Drops trailing spaces and ends the text with exactly one newline.
fn finish(mut s: String) -> String {
    while s.ends_with(' ') {
        s.pop();
    }
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

fn push_stats_flags(s: &mut String, flags: u16) {
    if flags == 0 {
        return;
    }
    s.push_str(" flags=");
    let mut rest = flags;
    if rest & 1 != 0 {
        s.push_str("[more]");
        rest &= !1;
    }
    if rest != 0 {
        s.push_str(&format!("[***unknown flags 0x{rest:04x}***]"));
    }
}

fn stats_flags(f: &Frame) -> Option<u16> {
    match &f.message {
        Message::V13(M13::MultipartRequest(r)) => Some(r.flags),
        Message::V13(M13::MultipartReply(r)) => Some(r.flags),
        Message::V10(M10::StatsRequest(r)) => Some(r.flags),
        Message::V10(M10::StatsReply(r)) => Some(r.flags),
        _ => None,
    }
}

/// The name Open vSwitch gives a message (`OFPST_FLOW reply`, `OFPT_FLOW_MOD`, ...).
pub fn name(f: &Frame) -> String {
    match &f.message {
        Message::V13(M13::MultipartRequest(r)) => mp_name(r.body.multipart_type(), "request"),
        Message::V13(M13::MultipartReply(r)) => mp_name(r.body.multipart_type(), "reply"),
        Message::V10(M10::StatsRequest(r)) => stats10_name(r.body.type_code(), "request"),
        Message::V10(M10::StatsReply(r)) => stats10_name(r.body.type_code(), "reply"),
        Message::V13(M13::Experimenter(e)) if v14::onf_bundle_name(e).is_some() => {
            v14::onf_bundle_name(e).unwrap_or_default().to_string()
        }
        Message::V13(m) => m.name().to_string(),
        Message::V10(m) => m.name().to_string(),
    }
}

fn mp_name(ty: u16, dir: &str) -> String {
    use crate::v13::multipart::mp_type as t;
    let n = match ty {
        t::DESC => "DESC",
        t::FLOW => "FLOW",
        t::AGGREGATE => "AGGREGATE",
        t::TABLE => "TABLE",
        t::PORT_STATS => "PORT",
        t::QUEUE => "QUEUE",
        t::GROUP => "GROUP",
        t::GROUP_DESC => "GROUP_DESC",
        t::GROUP_FEATURES => "GROUP_FEATURES",
        t::METER => "METER",
        t::METER_CONFIG => "METER_CONFIG",
        t::METER_FEATURES => "METER_FEATURES",
        t::TABLE_FEATURES => "TABLE_FEATURES",
        t::PORT_DESC => "PORT_DESC",
        t::TABLE_DESC => "TABLE_DESC",
        t::QUEUE_DESC => "QUEUE_DESC",
        t::FLOW_MONITOR => "FLOW_MONITOR",
        _ => "EXPERIMENTER",
    };
    format!("OFPST_{n} {dir}")
}

fn stats10_name(ty: u16, dir: &str) -> String {
    use crate::v10::stats::stats_type as t;
    let n = match ty {
        t::DESC => "DESC",
        t::FLOW => "FLOW",
        t::AGGREGATE => "AGGREGATE",
        t::TABLE => "TABLE",
        t::PORT => "PORT",
        t::QUEUE => "QUEUE",
        t::PORT_DESC => "PORT_DESC",
        _ => "VENDOR",
    };
    format!("OFPST_{n} {dir}")
}

/// The name of a message type number (for messages that do not decode).
fn type_name(version: u8, ty: u8) -> String {
    use crate::header::t13;
    let n = match (version, ty) {
        (crate::OFP10_VERSION, _) => crate::v10::name_of(ty),
        // 1.4's types are none of 1.3's, 1.3's queue configuration none of 1.4's.
        (v, t13::ROLE_STATUS..=t13::BUNDLE_ADD_MESSAGE) if v < crate::OFP14_VERSION => None,
        (v, t13::QUEUE_GET_CONFIG_REQUEST | t13::QUEUE_GET_CONFIG_REPLY)
            if v >= crate::OFP14_VERSION =>
        {
            None
        }
        _ => crate::v13::type_name(ty),
    };
    n.map_or_else(|| format!("OFPT_UNKNOWN({ty})"), str::to_string)
}

fn body13(m: &M13, version: u8, verbosity: u8) -> String {
    match m {
        M13::Error(e) => error::error13(e, version),
        M13::EchoRequest(d) | M13::EchoReply(d) => echo(d, verbosity),
        M13::FeaturesReply(f) => switch::features(f, crate::OFP13_VERSION),
        M13::GetConfigReply(c) | M13::SetConfig(c) => switch::config(c.flags, c.miss_send_len),
        M13::PacketIn(p) => packet::packet_in(p, verbosity),
        M13::FlowRemoved(f) => flow::flow_removed(f),
        M13::PortStatus(p) => port::port_status(p.reason.to_u8(), &p.port),
        M13::PacketOut(p) => packet::packet_out(p, verbosity),
        M13::FlowMod(f) => flow::flow_mod(f),
        M13::GroupMod(g) => group::group_mod(g),
        M13::MeterMod(mm) => meter::meter_mod(mm),
        M13::PortMod(p) => port::port_mod(p.port_no, p.hw_addr, p.config, p.mask, p.advertise),
        M13::TableMod(t) if version >= crate::OFP14_VERSION => v14::table_mod14(t),
        M13::RoleRequest(r) | M13::RoleReply(r) => v14::role(r),
        M13::GetAsyncReply(a) | M13::SetAsync(a) => v14::async_config(a),
        M13::RoleStatus(r) => v14::role_status(r),
        M13::TableStatus(t) => v14::table_status(t),
        M13::RequestForward(r) => v14::request_forward(r, verbosity),
        M13::BundleControl(b) => v14::bundle_control(b),
        M13::BundleAdd(b) => v14::bundle_add(b, verbosity),
        M13::Experimenter(e) => v14::onf_bundle(e, verbosity).unwrap_or_else(|| {
            fallback(&Frame { version, xid: 0, message: Message::V13(m.clone()) })
        }),
        M13::MultipartRequest(r) => request13(&r.body),
        M13::MultipartReply(r) => reply13(&r.body),
        M13::FeaturesRequest
        | M13::GetConfigRequest
        | M13::BarrierRequest
        | M13::BarrierReply
        | M13::GetAsyncRequest => String::new(),
        other => fallback(&Frame { version, xid: 0, message: Message::V13(other.clone()) }),
    }
}

fn body10(m: &M10, verbosity: u8) -> String {
    match m {
        M10::Error(e) => error::error10(e),
        M10::EchoRequest(d) | M10::EchoReply(d) => echo(d, verbosity),
        M10::FeaturesReply(f) => switch::features(f, crate::OFP10_VERSION),
        M10::GetConfigReply(c) | M10::SetConfig(c) => switch::config(c.flags, c.miss_send_len),
        M10::PacketIn(p) => packet::packet_in(p, verbosity),
        M10::FlowRemoved(f) => flow::flow_removed(f),
        M10::PortStatus(p) => port::port_status(p.reason.to_u8(), &p.port),
        M10::PacketOut(p) => packet::packet_out(p, verbosity),
        M10::FlowMod(f) => flow::flow_mod(f),
        M10::PortMod(p) => port::port_mod(
            crate::v10::port::port_to_v13(p.port_no),
            p.hw_addr,
            p.config,
            p.mask,
            crate::model::features_from_v10(p.advertise),
        ),
        M10::StatsRequest(r) => request10(&r.body),
        M10::StatsReply(r) => reply10(&r.body),
        M10::Hello(_)
        | M10::FeaturesRequest
        | M10::GetConfigRequest
        | M10::BarrierRequest
        | M10::BarrierReply => String::new(),
        other => fallback(&Frame::v10(0, other.clone())),
    }
}

/// The `openflow` crate's one-line form of a message body (after its own header).
fn fallback(f: &Frame) -> String {
    let s = crate::text::message::format_frame(f);
    match s.split_once("): ") {
        Some((_, body)) => format!(" {body}"),
        None => String::new(),
    }
}

fn echo(d: &[u8], verbosity: u8) -> String {
    let mut s = format!(" {} bytes of payload\n", d.len());
    if verbosity > 1 {
        s.push_str(&hex_dump(d));
    }
    s
}

fn request13(b: &Q13) -> String {
    match b {
        Q13::Flow(r) | Q13::Aggregate(r) => flow::flow_request(r.table_id, r.out_port, &r.match_),
        Q13::PortStats { port_no } => format!(" port_no={}", crate::model::port_name(*port_no)),
        Q13::PortDesc => " port=ANY".into(),
        Q13::Group { group_id } => format!(" group_id={}", group::group_id_name(*group_id)),
        Q13::GroupDesc => " group_id=ALL".into(),
        Q13::Meter { meter_id } | Q13::MeterConfig { meter_id } => {
            format!(" {}", meter::meter_id(*meter_id, '='))
        }
        Q13::Queue { port_no, queue_id } => {
            format!(" port={} queue={}", crate::model::port_name(*port_no), queue_name(*queue_id))
        }
        Q13::QueueDesc { port_no, queue_id } => mp14::queue_desc_request(*port_no, *queue_id),
        Q13::FlowMonitor(m) => mp14::flow_monitor_request(m),
        _ => String::new(),
    }
}

fn queue_name(q: u32) -> String {
    if q == u32::MAX {
        "ALL".into()
    } else {
        q.to_string()
    }
}

fn reply13(b: &R13) -> String {
    match b {
        R13::Desc(d) => desc(d),
        R13::Flow(fs) => flow::flow_lines(fs.iter().map(FlowEntry::from_v13)),
        R13::Aggregate(a) => aggregate(a.packet_count, a.byte_count, a.flow_count),
        R13::Table(ts) => table::tables(ts),
        R13::PortStats(ps) => port::port_stats(ps),
        R13::Queue(qs) => queue_stats(qs),
        R13::PortDesc(ps) => format!("\n{}", port::ports(ps)),
        R13::Group(gs) => group::group_stats(gs),
        R13::GroupDesc(gd) => group::group_descs(gd),
        R13::GroupFeatures(g) => group::group_features(g),
        R13::Meter(ms) => meter::meter_stats(ms),
        R13::MeterConfig(mc) => meter::meter_configs(mc),
        R13::MeterFeatures(f) => meter::meter_features(f),
        R13::TableDesc(t) => mp14::table_descs(t),
        R13::QueueDesc(q) => mp14::queue_descs(q),
        R13::FlowMonitor(u) => mp14::flow_updates(u),
        other => fallback(&Frame::v13(
            0,
            M13::MultipartReply(crate::v13::multipart::MultipartReply {
                flags: 0,
                body: other.clone(),
            }),
        )),
    }
}

fn request10(b: &Q10) -> String {
    use crate::v10::port::port_to_v13;
    match b {
        Q10::Flow(r) | Q10::Aggregate(r) => {
            flow::flow_request(r.table_id, port_to_v13(r.out_port), &r.match_.to_oxm())
        }
        Q10::Port(p) => format!(" port_no={}", crate::model::port_name(port_to_v13(p.port_no))),
        Q10::PortDesc => " port=ANY".into(),
        Q10::Queue(q) => format!(
            " port={} queue={}",
            crate::model::port_name(port_to_v13(q.port_no)),
            queue_name(q.queue_id)
        ),
        _ => String::new(),
    }
}

fn reply10(b: &R10) -> String {
    match b {
        R10::Desc(d) => desc(d),
        R10::Flow(fs) => flow::flow_lines(fs.iter().map(FlowEntry::from_v10)),
        R10::Aggregate(a) => aggregate(a.packet_count, a.byte_count, a.flow_count),
        R10::Table(ts) => table::tables(ts),
        R10::Port(ps) => port::port_stats(ps),
        R10::Queue(qs) => queue_stats(qs),
        R10::PortDesc(ps) => format!("\n{}", port::ports(ps)),
        other => fallback(&Frame::v10(
            0,
            M10::StatsReply(crate::v10::stats::StatsReply { flags: 0, body: other.clone() }),
        )),
    }
}

fn desc(d: &crate::v13::multipart::Desc) -> String {
    format!(
        "\nManufacturer: {}\nHardware: {}\nSoftware: {}\nSerial Num: {}\nDP Description: {}\n",
        d.mfr_desc, d.hw_desc, d.sw_desc, d.serial_num, d.dp_desc
    )
}

/// Queue counters: how many, then `  port P queue Q: bytes=.., pkts=.., errors=..,
/// duration=..` per queue (`?` for what is not available).
fn queue_stats(qs: &[crate::model::QueueStats]) -> String {
    let stat = |v: u64| if v == u64::MAX { "?".to_string() } else { v.to_string() };
    let mut s = format!(" {} queues\n", qs.len());
    for q in qs {
        let d = q.duration().map_or_else(|| "?".to_string(), |(sec, ns)| duration(sec, ns));
        s.push_str(&format!(
            "  port {} queue {}: bytes={}, pkts={}, errors={}, duration={d}\n",
            crate::model::port_name(q.port_no),
            queue_name(q.queue_id),
            stat(q.tx_bytes),
            stat(q.tx_packets),
            stat(q.tx_errors),
        ));
    }
    s
}

fn aggregate(packets: u64, bytes: u64, flows: u32) -> String {
    format!(" packet_count={packets} byte_count={bytes} flow_count={flows}")
}

/// The names of the set bits of `bits`, lowest first, `0x..` for bits without a name,
/// `0` when none are set (Open vSwitch's `ofp_print_bit_names`).
pub(super) fn bit_names(bits: u32, name: impl Fn(u32) -> Option<&'static str>) -> String {
    if bits == 0 {
        return "0".into();
    }
    let mut parts: Vec<String> = Vec::new();
    let mut rest = bits;
    for i in 0..32 {
        let bit = 1u32 << i;
        if bits & bit != 0 {
            if let Some(n) = name(bit) {
                parts.push(n.into());
                rest &= !bit;
            }
        }
    }
    if rest != 0 {
        parts.push(format!("{rest:#x}"));
    }
    parts.join(" ")
}

/// The names `order` gives the set bits of `bits` (each entry a bit number and its
/// name), in `order`'s order and space separated; bits it does not name are left out,
/// `<none>` when no bit it names is set.
pub(super) fn ordered_bit_names(bits: u32, order: &[(u32, &str)]) -> String {
    let names: Vec<&str> = order
        .iter()
        .filter(|(b, _)| 1u32.checked_shl(*b).is_some_and(|m| bits & m != 0))
        .map(|(_, n)| *n)
        .collect();
    if names.is_empty() {
        "<none>".into()
    } else {
        names.join(" ")
    }
}

/// Open vSwitch's `ds_put_hex_dump` with the ASCII column: 16 bytes a line.
pub fn hex_dump(data: &[u8]) -> String {
    let mut s = String::new();
    for (line, chunk) in data.chunks(16).enumerate() {
        s.push_str(&format!("{:08x}  ", line * 16));
        for i in 0..16 {
            match chunk.get(i) {
                Some(b) => s.push_str(&format!("{b:02x}{}", if i == 7 { '-' } else { ' ' })),
                None => s.push_str("   "),
            }
        }
        s.push('|');
        for &b in chunk {
            s.push(if (32..127).contains(&b) { b as char } else { '.' });
        }
        for _ in chunk.len()..16 {
            s.push(' ');
        }
        s.push_str("|\n");
    }
    s
}

/// A number as C's `%#x` prints it: `0` for zero, else `0x` and hex digits.
pub(super) fn c_hex(v: u32) -> String {
    if v == 0 {
        "0".into()
    } else {
        format!("{v:#x}")
    }
}

/// A duration as Open vSwitch prints it (`1.5s`, `2.000001s`).
pub fn duration(sec: u32, nsec: u32) -> String {
    crate::text::format_duration(sec, nsec)
}

#[cfg(test)]
mod tests;
