//! `monitor [MISS-LEN]`: prints every message the switch sends (packet-ins,
//! flow-removed, port-status, ...) as ovs-ofctl's monitor does, on standard error,
//! until the connection ends, the process is killed, or `--timeout` runs out (which
//! ends the run with status 0). A MISS-LEN first sets the switch's `miss_send_len`
//! (a get-config, then a set-config keeping the other flags). With `--json`, each
//! message is one JSON object on its own line on standard output.

use serde_json::{json, Value};

use openflow::v10::Message as M10;
use openflow::v13::{Message as M13, SwitchConfig};
use openflow::{Frame, Message, OFP10_VERSION};

use super::out;
use crate::conn::{Conn, Received};
use crate::json;
use crate::{CtlError, Ctx};
use openflow::model::{port_name, Port};
use openflow::text::print;

fn set_miss_len(c: &mut Conn, miss: u16) -> Result<(), CtlError> {
    let flags = super::get_config(c)?.1.map_or(0, |(flags, _)| flags);
    let set = if c.version == OFP10_VERSION {
        Message::V10(M10::SetConfig(openflow::v10::SwitchConfig { flags, miss_send_len: miss }))
    } else {
        Message::V13(M13::SetConfig(SwitchConfig { flags, miss_send_len: miss }))
    };
    let refusals = c.transact_noreply(vec![set])?;
    match refusals.first() {
        None => Ok(()),
        Some(r) => Err(CtlError::Reported(print::raw(&r.error.bytes, 2))),
    }
}

pub fn monitor(ctx: &Ctx, args: &[String]) -> Result<(), CtlError> {
    let mut miss = None;
    for a in args {
        if a.bytes().next().is_some_and(|b| b.is_ascii_digit()) {
            let n: u32 = a.parse().map_err(|_| CtlError::fatal(format!("{a}: bad miss length")))?;
            miss = Some(n.min(u32::from(u16::MAX)) as u16);
        } else {
            return Err(CtlError::fatal(format!("{a}: unsupported \"monitor\" argument")));
        }
    }
    let mut c = ctx.open()?;
    if let Some(m) = miss {
        set_miss_len(&mut c, m)?;
    }
    c.pass_echoes = true;
    while let Some(r) = c.recv_until_deadline()? {
        if ctx.json {
            out(&format!("{}\n", event(&r)))?;
        } else {
            eprint!("{}", print::raw(&r.bytes, 2));
        }
    }
    Ok(())
}

fn hex(data: &[u8]) -> String {
    data.iter().map(|b| format!("{b:02x}")).collect()
}

fn version_name(v: u8) -> &'static str {
    if v == OFP10_VERSION {
        "OpenFlow10"
    } else {
        "OpenFlow13"
    }
}

/// One received message as a JSON object.
pub fn event(r: &Received) -> Value {
    let text = print::raw(&r.bytes, 2);
    let Ok(f) = &r.frame else {
        return json!({"type": "undecodable", "text": text});
    };
    let mut v = body(f).unwrap_or_else(|| json!({"type": print::name(f)}));
    if let Some(o) = v.as_object_mut() {
        o.insert("version".into(), json!(version_name(f.version)));
        o.insert("xid".into(), json!(f.xid));
        o.insert("text".into(), json!(text));
    }
    v
}

fn body(f: &Frame) -> Option<Value> {
    Some(match &f.message {
        Message::V13(M13::PacketIn(p)) => json!({
            "type": "packet_in",
            "total_len": p.total_len,
            "reason": print::reason(p.reason),
            "table_id": p.table_id,
            "cookie": format!("{:#x}", p.cookie),
            "buffer_id": p.buffer_id,
            "match": json::match_object(&p.match_),
            "data": hex(&p.data),
            "packet": print::packet_summary(&p.data),
        }),
        Message::V10(M10::PacketIn(p)) => json!({
            "type": "packet_in",
            "total_len": p.total_len,
            "reason": print::reason(p.reason),
            "in_port": port_name(p.in_port().unwrap_or(openflow::action::port::ANY)),
            "buffer_id": p.buffer_id,
            "data": hex(&p.data),
            "packet": print::packet_summary(&p.data),
        }),
        Message::V13(M13::FlowRemoved(r)) => json!({
            "type": "flow_removed",
            "reason": print::removed_reason(r.reason),
            "table_id": r.table_id,
            "priority": r.priority,
            "cookie": format!("{:#x}", r.cookie),
            "duration_sec": r.duration_sec,
            "duration_nsec": r.duration_nsec,
            "idle_timeout": r.idle_timeout,
            "hard_timeout": r.hard_timeout,
            "packet_count": r.packet_count,
            "byte_count": r.byte_count,
            "match": json::match_object(&r.match_),
        }),
        Message::V10(M10::FlowRemoved(r)) => json!({
            "type": "flow_removed",
            "reason": print::removed_reason(r.reason),
            "priority": r.priority,
            "cookie": format!("{:#x}", r.cookie),
            "duration_sec": r.duration_sec,
            "duration_nsec": r.duration_nsec,
            "idle_timeout": r.idle_timeout,
            "packet_count": r.packet_count,
            "byte_count": r.byte_count,
            "match": json::match_object(&r.match_.to_oxm()),
        }),
        Message::V13(M13::PortStatus(p)) | Message::V10(M10::PortStatus(p)) => {
            port_status(p.reason.to_u8(), &p.port)
        }
        _ => return None,
    })
}

fn port_status(reason: u8, p: &Port) -> Value {
    let r = match reason {
        0 => "ADD".to_string(),
        1 => "DEL".into(),
        2 => "MOD".into(),
        n => n.to_string(),
    };
    json!({"type": "port_status", "reason": r, "port": json::port_desc(p)})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_in_event() {
        let pi = openflow::v13::PacketIn {
            buffer_id: u32::MAX,
            total_len: 14,
            reason: openflow::v13::PacketInReason::Action,
            table_id: 0,
            cookie: u64::MAX,
            match_: openflow::text::parse_match("in_port=3").unwrap(),
            data: vec![0xff; 6].into_iter().chain([0, 0, 0, 0, 0, 1, 0x88, 0xcc]).collect(),
        };
        let f = Frame::v13(0, M13::PacketIn(pi));
        let bytes = f.encode().unwrap();
        let r = Received { frame: Frame::decode(&bytes), bytes };
        let v = event(&r);
        assert_eq!(v["type"], "packet_in");
        assert_eq!(v["reason"], "action");
        assert_eq!(v["match"]["in_port"], "3");
        assert_eq!(v["data"], "ffffffffffff00000000000188cc");
        assert_eq!(
            v["text"],
            "OFPT_PACKET_IN (OF1.3) (xid=0x0): total_len=14 in_port=3 (via action) data_len=14 (unbuffered)\nvlan_tci=0x0000,dl_src=00:00:00:00:00:01,dl_dst=ff:ff:ff:ff:ff:ff,dl_type=0x88cc\n"
        );
    }
}
