//! OpenFlow 1.3 message bodies (everything but multipart, see `multipart`).

use super::{bit_names, data_summary, multipart, port_name};
use crate::v13::flow_mod::FlowModCommand;
use crate::v13::*;

/// The body of a 1.3 message (after `NAME (OF1.3) (xid=..): `).
pub(super) fn body(m: &Message) -> String {
    match m {
        Message::Hello(h) => hello(h),
        Message::Experimenter(e) => format!(
            "experimenter={:#010x} exp_type={} {}",
            e.experimenter,
            e.exp_type,
            data_summary(&e.data)
        ),
        Message::TableMod(t) => {
            format!("table_id={} config={:#x}", table_name(t.table_id), t.config)
        }
        Message::QueueGetConfigRequest(p) => format!("port={}", port_name(*p)),
        Message::QueueGetConfigReply(q) => queue_config(q),
        Message::RoleRequest(r) | Message::RoleReply(r) => role(r),
        Message::GetAsyncReply(a) | Message::SetAsync(a) => async_config(a),
        Message::MultipartReply(r) => multipart::reply(r),
        // The ovs-ofctl printer (`text::print`) prints every other message.
        _ => String::new(),
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

/// Rates in tenths of a percent, as ovs-ofctl prints them (`50.0%`, `disabled`).
pub(super) fn rate(r: u16) -> String {
    if r > 1000 {
        "disabled".into()
    } else {
        format!("{}.{}%", r / 10, r % 10)
    }
}

pub(super) fn queue_config(q: &QueueGetConfigReply) -> String {
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

const PACKET_IN_REASONS: [(u32, &str); 3] =
    [(1 << 0, "no_match"), (1 << 1, "action"), (1 << 2, "invalid_ttl")];
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
