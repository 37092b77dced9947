//! OpenFlow 1.3 message bodies (everything but multipart, see `multipart`).

use super::port::{features13, format_port13, format_port_mod};
use super::{bit_names, data_summary, hex_dump, multipart, packet, port_name};
use crate::action::{port, OFPG_ANY};
use crate::header::Header;
use crate::text::match_format::format_match_prio;
use crate::text::{format_duration, format_group_mod, format_instructions, format_match};
use crate::v13::features::capabilities as cap;
use crate::v13::flow_mod::{flow_mod_flags as ff, FlowModCommand, OFP_NO_BUFFER};
use crate::v13::group_mod::GroupModCommand;
use crate::v13::meter_mod::MeterModCommand;
use crate::v13::switch_config::config_flags as cf;
use crate::v13::*;
use crate::{Frame, Message as AnyMessage};

/// The body of a 1.3 message (after `NAME (OF1.3) (xid=..): `).
pub(super) fn body(m: &Message) -> String {
    match m {
        Message::Hello(h) => hello(h),
        Message::Error(e) => error(e),
        Message::EchoRequest(d) | Message::EchoReply(d) => echo(d),
        Message::Experimenter(e) => format!(
            "experimenter={:#010x} exp_type={} {}",
            e.experimenter,
            e.exp_type,
            data_summary(&e.data)
        ),
        Message::FeaturesRequest
        | Message::GetConfigRequest
        | Message::BarrierRequest
        | Message::BarrierReply
        | Message::GetAsyncRequest => String::new(),
        Message::FeaturesReply(f) => features(f),
        Message::GetConfigReply(c) | Message::SetConfig(c) => {
            switch_config(c.flags, c.miss_send_len)
        }
        Message::PacketIn(p) => packet_in(p),
        Message::FlowRemoved(f) => flow_removed(f),
        Message::PortStatus(p) => format!("{}: {}", port_reason(p.reason), format_port13(&p.port)),
        Message::PacketOut(p) => packet_out(p),
        Message::FlowMod(f) => flow_mod(f),
        Message::GroupMod(g) => format!(
            "{} {}",
            match g.command {
                GroupModCommand::Add => "ADD".to_string(),
                GroupModCommand::Modify => "MOD".into(),
                GroupModCommand::Delete => "DEL".into(),
                GroupModCommand::Unknown(n) => format!("cmd:{n}"),
            },
            format_group_mod(g)
        ),
        Message::PortMod(p) => format_port_mod(
            port_name(p.port_no),
            p.hw_addr,
            p.config,
            p.mask,
            p.advertise,
            features13,
        ),
        Message::TableMod(t) => {
            format!("table_id={} config={:#x}", table_name(t.table_id), t.config)
        }
        Message::MultipartRequest(r) => multipart::request(r),
        Message::MultipartReply(r) => multipart::reply(r),
        Message::QueueGetConfigRequest(p) => format!("port={}", port_name(*p)),
        Message::QueueGetConfigReply(q) => queue_config(q),
        Message::RoleRequest(r) | Message::RoleReply(r) => role(r),
        Message::GetAsyncReply(a) | Message::SetAsync(a) => async_config(a),
        Message::MeterMod(mm) => meter_mod(mm),
    }
}

/// A table id: `ALL` for 0xff, else the number.
pub(super) fn table_name(t: u8) -> String {
    if t == crate::v13::flow_mod::OFPTT_ALL {
        "ALL".into()
    } else {
        t.to_string()
    }
}

fn hello(h: &Hello) -> String {
    let mut parts: Vec<String> = Vec::new();
    for e in &h.elements {
        match e {
            HelloElement::VersionBitmap(_) => {}
            HelloElement::Unknown { ty, data } => {
                parts.push(format!("unknown element type={ty} len={}", data.len()))
            }
        }
    }
    if let Some(v) = h.versions() {
        let vs: Vec<String> = v.iter().map(|v| format!("0x{v:02x}")).collect();
        parts.insert(0, format!("version bitmap: {}", vs.join(", ")));
    }
    parts.join(" ")
}

/// `N bytes of payload` and the payload in hex.
pub(super) fn echo(d: &[u8]) -> String {
    if d.is_empty() {
        "0 bytes of payload".into()
    } else {
        format!("{} bytes of payload: 0x{}", d.len(), hex_dump(d))
    }
}

fn error(e: &ErrorMsg) -> String {
    match e {
        ErrorMsg::Standard { kind, data } => {
            let name = match (kind.type_name(), kind.code_name()) {
                (_, Some(c)) => c.to_string(),
                (Some(t), None) => format!("{t}(code={})", kind.code),
                (None, None) => format!("type={},code={}", kind.ty, kind.code),
            };
            format!("{name} {}", error_data(data))
        }
        ErrorMsg::Experimenter {
            exp_type,
            experimenter,
            data,
        } => format!(
            "OFPET_EXPERIMENTER experimenter={experimenter:#010x} exp_type={exp_type} {}",
            data_summary(data)
        ),
    }
}

/// The data of an error: the offending request printed whole when it decodes (unless
/// it is itself an error, which would nest without end), else its header and a dump.
pub(super) fn error_data(data: &[u8]) -> String {
    if let Ok(f) = Frame::decode(data) {
        let nested = !matches!(
            &f.message,
            AnyMessage::V13(Message::Error(_)) | AnyMessage::V10(crate::v10::Message::Error(_))
        );
        if nested {
            return super::format_frame(&f);
        }
    }
    match Header::peek(data) {
        Ok(h) if (1..=6).contains(&h.version) => {
            let name = match h.version {
                1 => crate::v10::name_of(h.msg_type),
                _ => crate::v13::type_name(h.msg_type),
            };
            let name = name.map_or_else(|| format!("type {}", h.msg_type), String::from);
            let cut = if usize::from(h.length) > data.len() {
                format!(
                    " (***truncated to {} bytes from {}***)",
                    data.len(),
                    h.length
                )
            } else {
                String::new()
            };
            format!(
                "{name} ({}) (xid={:#x}):{cut} 0x{}",
                super::version_name(h.version),
                h.xid,
                hex_dump(data)
            )
        }
        _ => data_summary(data),
    }
}

const CAPABILITIES: [(u32, &str); 7] = [
    (cap::FLOW_STATS, "FLOW_STATS"),
    (cap::TABLE_STATS, "TABLE_STATS"),
    (cap::PORT_STATS, "PORT_STATS"),
    (cap::GROUP_STATS, "GROUP_STATS"),
    (cap::IP_REASM, "IP_REASM"),
    (cap::QUEUE_STATS, "QUEUE_STATS"),
    (cap::PORT_BLOCKED, "PORT_BLOCKED"),
];

fn features(f: &FeaturesReply) -> String {
    let mut s = format!(
        "dpid:{:016x} n_tables:{}, n_buffers:{}",
        f.datapath_id, f.n_tables, f.n_buffers
    );
    if f.auxiliary_id != 0 {
        s.push_str(&format!(", auxiliary_id:{}", f.auxiliary_id));
    }
    s.push_str(&format!(
        " capabilities: {}",
        bit_names(f.capabilities, &CAPABILITIES)
    ));
    s
}

/// `frags=normal miss_send_len=128` (both versions share the layout).
pub(super) fn switch_config(flags: u16, miss_send_len: u16) -> String {
    let frags = match flags & cf::FRAG_MASK {
        cf::FRAG_NORMAL => "normal",
        cf::FRAG_DROP => "drop",
        cf::FRAG_REASM => "reassemble",
        _ => "nx-match",
    };
    let mut s = format!("frags={frags}");
    let rest = flags & !cf::FRAG_MASK;
    if rest != 0 {
        s.push_str(&format!(" flags={rest:#x}"));
    }
    s.push_str(&format!(" miss_send_len={miss_send_len}"));
    s
}

/// `data_len=N buffer=0x........` or `(unbuffered)`, then the packet summary.
pub(super) fn packet_data(buffer_id: u32, data: &[u8]) -> String {
    let mut s = format!("data_len={}", data.len());
    if buffer_id == OFP_NO_BUFFER {
        s.push_str(" (unbuffered)");
    } else {
        s.push_str(&format!(" buffer={buffer_id:#010x}"));
    }
    let sum = packet::summary(data);
    if !sum.is_empty() {
        s.push_str(" packet: ");
        s.push_str(&sum);
    }
    s
}

fn packet_in(p: &PacketIn) -> String {
    let mut s = String::new();
    if p.table_id != 0 {
        s.push_str(&format!("table_id={} ", p.table_id));
    }
    if p.cookie != u64::MAX {
        s.push_str(&format!("cookie={:#x} ", p.cookie));
    }
    s.push_str(&format!("total_len={} ", p.total_len));
    let m = format_match(&p.match_);
    if !m.is_empty() {
        s.push_str(&m);
        s.push(' ');
    }
    let reason = match p.reason {
        PacketInReason::NoMatch => "no_match".to_string(),
        PacketInReason::Action => "action".into(),
        PacketInReason::InvalidTtl => "invalid_ttl".into(),
        PacketInReason::Unknown(n) => n.to_string(),
    };
    s.push_str(&format!(
        "(via {reason}) {}",
        packet_data(p.buffer_id, &p.data)
    ));
    s
}

fn flow_removed(f: &FlowRemoved) -> String {
    let reason = match f.reason {
        FlowRemovedReason::IdleTimeout => "idle".to_string(),
        FlowRemovedReason::HardTimeout => "hard".into(),
        FlowRemovedReason::Delete => "delete".into(),
        FlowRemovedReason::GroupDelete => "group_delete".into(),
        FlowRemovedReason::MeterDelete => "meter_delete".into(),
        FlowRemovedReason::Unknown(n) => format!("**{n}**"),
    };
    let mut s = format_match_prio(&f.match_, Some(f.priority));
    if !s.is_empty() {
        s.push(' ');
    }
    s.push_str(&format!("reason={reason}"));
    if f.table_id != 0xff {
        s.push_str(&format!(" table_id={}", f.table_id));
    }
    s.push_str(&removed_tail(
        f.cookie,
        f.duration_sec,
        f.duration_nsec,
        f.idle_timeout,
        f.hard_timeout,
        f.packet_count,
        f.byte_count,
    ));
    s
}

/// ` cookie:0x.. duration1.5s idle5 hard10 pkts1 bytes60`, as ovs-ofctl prints the end
/// of a flow-removed message.
#[allow(clippy::too_many_arguments)]
pub(super) fn removed_tail(
    cookie: u64,
    sec: u32,
    nsec: u32,
    idle: u16,
    hard: u16,
    packets: u64,
    bytes: u64,
) -> String {
    let mut s = String::new();
    if cookie != 0 {
        s.push_str(&format!(" cookie:{cookie:#x}"));
    }
    s.push_str(&format!(
        " duration{} idle{idle}",
        format_duration(sec, nsec)
    ));
    if hard != 0 {
        s.push_str(&format!(" hard{hard}"));
    }
    s.push_str(&format!(" pkts{packets} bytes{bytes}"));
    s
}

/// `ADD`, `DEL`, `MOD` of a port status.
pub(super) fn port_reason(r: PortReason) -> String {
    match r {
        PortReason::Add => "ADD".into(),
        PortReason::Delete => "DEL".into(),
        PortReason::Modify => "MOD".into(),
        PortReason::Unknown(n) => format!("reason {n}"),
    }
}

fn packet_out(p: &PacketOut) -> String {
    let mut s = format!(
        "in_port={} actions={}",
        port_name(p.in_port),
        crate::text::format_actions(&p.actions)
    );
    if p.buffer_id == OFP_NO_BUFFER {
        s.push_str(&format!(" data_len={}", p.data.len()));
        let sum = packet::summary(&p.data);
        if !sum.is_empty() {
            s.push_str(" packet: ");
            s.push_str(&sum);
        }
    } else {
        s.push_str(&format!(" buffer={:#010x}", p.buffer_id));
    }
    s
}

/// `ADD`, `MOD`, `MOD_STRICT`, `DEL`, `DEL_STRICT`, `cmd:N`.
pub fn command_name(c: FlowModCommand) -> String {
    match c {
        FlowModCommand::Add => "ADD".into(),
        FlowModCommand::Modify => "MOD".into(),
        FlowModCommand::ModifyStrict => "MOD_STRICT".into(),
        FlowModCommand::Delete => "DEL".into(),
        FlowModCommand::DeleteStrict => "DEL_STRICT".into(),
        FlowModCommand::Unknown(n) => format!("cmd:{n}"),
    }
}

/// Flow-mod flag words as ovs-ofctl prints them, each followed by a space.
pub(super) fn flow_flags(flags: u16, names: &[(u16, &str)]) -> String {
    let mut s = String::new();
    let mut rest = flags;
    for &(bit, name) in names {
        if flags & bit != 0 {
            s.push_str(name);
            s.push(' ');
            rest &= !bit;
        }
    }
    if rest != 0 {
        s.push_str(&format!("flags:{rest:#x} "));
    }
    s
}

const FLOW_FLAGS: [(u16, &str); 5] = [
    (ff::SEND_FLOW_REM, "send_flow_rem"),
    (ff::CHECK_OVERLAP, "check_overlap"),
    (ff::RESET_COUNTS, "reset_counts"),
    (ff::NO_PKT_COUNTS, "no_packet_counts"),
    (ff::NO_BYT_COUNTS, "no_byte_counts"),
];

/// The common part of a flow-mod of either version after the command (and table):
/// match with priority, cookie, timeouts, buffer, out port; the caller adds flags and
/// actions.
pub(super) struct FlowModText {
    pub match_prio: String,
    pub cookie: u64,
    pub cookie_mask: u64,
    pub idle: u16,
    pub hard: u16,
    pub buffer_id: u32,
    /// The output port filter, already named, or `None` when it is "any".
    pub out_port: Option<String>,
}

impl FlowModText {
    pub fn render(&self) -> String {
        let mut s = self.match_prio.clone();
        if !s.is_empty() {
            s.push(' ');
        }
        if self.cookie_mask != 0 {
            s.push_str(&format!(
                "cookie:{:#x}/{:#x} ",
                self.cookie, self.cookie_mask
            ));
        } else if self.cookie != 0 {
            s.push_str(&format!("cookie:{:#x} ", self.cookie));
        }
        if self.idle != 0 {
            s.push_str(&format!("idle:{} ", self.idle));
        }
        if self.hard != 0 {
            s.push_str(&format!("hard:{} ", self.hard));
        }
        if self.buffer_id != OFP_NO_BUFFER {
            s.push_str(&format!("buf:{:#x} ", self.buffer_id));
        }
        if let Some(p) = &self.out_port {
            s.push_str(&format!("out_port:{p} "));
        }
        s
    }
}

fn flow_mod(f: &FlowMod) -> String {
    let mut s = format!(
        "{} table:{} ",
        command_name(f.command),
        table_name(f.table_id)
    );
    s.push_str(
        &FlowModText {
            match_prio: format_match_prio(&f.match_, Some(f.priority)),
            cookie: f.cookie,
            cookie_mask: f.cookie_mask,
            idle: f.idle_timeout,
            hard: f.hard_timeout,
            buffer_id: f.buffer_id,
            out_port: (f.out_port != port::ANY).then(|| port_name(f.out_port)),
        }
        .render(),
    );
    if f.out_group != OFPG_ANY {
        s.push_str(&format!("out_group:{} ", f.out_group));
    }
    s.push_str(&flow_flags(f.flags, &FLOW_FLAGS));
    s.push_str("actions=");
    s.push_str(&format_instructions(&f.instructions));
    s
}

/// Rates in tenths of a percent, as ovs-ofctl prints them (`50.0%`, `disabled`).
pub(super) fn rate(r: u16) -> String {
    if r > 1000 {
        "disabled".into()
    } else {
        format!("{}.{}%", r / 10, r % 10)
    }
}

fn queue_config(q: &QueueGetConfigReply) -> String {
    let lines = q.queues.iter().map(|pq| {
        let mut s = format!("queue {}:", pq.queue_id);
        if pq.port != q.port {
            s.push_str(&format!(" port={}", port_name(pq.port)));
        }
        for p in &pq.properties {
            s.push(' ');
            s.push_str(&match p {
                QueueProperty::MinRate(r) => format!("min_rate:{}", rate(*r)),
                QueueProperty::MaxRate(r) => format!("max_rate:{}", rate(*r)),
                QueueProperty::Experimenter { experimenter, data } => {
                    format!("experimenter:{experimenter:#x} {}", data_summary(data))
                }
                QueueProperty::Unknown { ty, data } => {
                    format!("property:{ty} {}", data_summary(data))
                }
            });
        }
        s
    });
    super::with_lines(format!("port={}", port_name(q.port)), lines)
}

fn role(r: &Role) -> String {
    let name = match r.role {
        ControllerRole::NoChange => "nochange".to_string(),
        ControllerRole::Equal => "equal".into(),
        ControllerRole::Master => "master".into(),
        ControllerRole::Slave => "slave".into(),
        ControllerRole::Unknown(n) => format!("{n}"),
    };
    format!("role={name} generation_id={}", r.generation_id)
}

const PACKET_IN_REASONS: [(u32, &str); 3] = [
    (1 << 0, "no_match"),
    (1 << 1, "action"),
    (1 << 2, "invalid_ttl"),
];
const PORT_REASONS: [(u32, &str); 3] = [(1 << 0, "add"), (1 << 1, "delete"), (1 << 2, "modify")];
const REMOVED_REASONS: [(u32, &str); 5] = [
    (1 << 0, "idle"),
    (1 << 1, "hard"),
    (1 << 2, "delete"),
    (1 << 3, "group_delete"),
    (1 << 4, "meter_delete"),
];

fn async_config(a: &AsyncConfig) -> String {
    let reasons = |bits: u32, names: &[(u32, &str)]| {
        if bits == 0 {
            "(off)".to_string()
        } else {
            bit_names(bits, names)
        }
    };
    let role = |i: usize, name: &str| {
        format!(
            "{name}: PACKET_IN: {} PORT_STATUS: {} FLOW_REMOVED: {}",
            reasons(a.packet_in_mask[i], &PACKET_IN_REASONS),
            reasons(a.port_status_mask[i], &PORT_REASONS),
            reasons(a.flow_removed_mask[i], &REMOVED_REASONS)
        )
    };
    format!("{}\n {}", role(0, "master"), role(1, "slave"))
}

fn meter_mod(mm: &MeterMod) -> String {
    let cmd = match mm.command {
        MeterModCommand::Add => "ADD".to_string(),
        MeterModCommand::Modify => "MOD".into(),
        MeterModCommand::Delete => "DEL".into(),
        MeterModCommand::Unknown(n) => format!("cmd:{n}"),
    };
    format!(
        "{cmd} {}",
        one_line_meter(&crate::text::format_meter_mod(mm))
    )
}

/// The dump-meters text of a meter on one line: band lines joined by spaces
/// (`meter=1 kbps bands=type=drop rate=1000 type=dscp_remark rate=10 prec_level=1`).
pub(super) fn one_line_meter(text: &str) -> String {
    text.replace("bands=\n", "bands=").replace('\n', " ")
}
