//! The `--json` form of what `peregrine ctl` prints: the same data, as JSON values
//! (the layout is documented in the `ctl` module comment). Counters that a switch
//! reports as unavailable (all ones) are `null`; ports are strings as ovs-ofctl prints
//! them (`"1"`, `"LOCAL"`); matches are objects of ovs-ofctl field names to the values
//! ovs-ofctl prints, with its shorthands (`tcp`) spelled out as `dl_type`/`nw_proto`;
//! actions are the list of ovs-ofctl action strings.

use serde_json::{json, Map, Value};

use openflow::match13::Match;
use openflow::model::{
    port_name, split_top_level, Actions, FlowEntry, Port, PortStats, TableStats,
};
use openflow::text::print;
use openflow::v13::group_mod::GroupType;
use openflow::v13::meter_mod::MeterBand;
use openflow::v13::multipart::{
    GroupDesc, GroupFeatures, GroupStats, MeterConfig, MeterFeatures, MeterStats,
};

fn counter(v: u64) -> Value {
    if v == u64::MAX {
        Value::Null
    } else {
        json!(v)
    }
}

fn words(s: &str) -> Vec<String> {
    if s == "0" || s.is_empty() {
        Vec::new()
    } else {
        s.split(' ').map(str::to_string).collect()
    }
}

/// A match as an object: `{"dl_type": "0x0800", "nw_proto": "6", "tp_dst": "80"}`.
pub fn match_object(m: &Match) -> Value {
    let mut obj = Map::new();
    let text = openflow::text::format_match(m);
    for tok in text.split(',').filter(|t| !t.is_empty()) {
        if let Some((k, v)) = tok.split_once('=') {
            obj.insert(k.to_string(), json!(v));
            continue;
        }
        let (ty, proto) = match tok {
            "ip" => ("0x0800", None),
            "ipv6" => ("0x86dd", None),
            "icmp" => ("0x0800", Some("1")),
            "icmp6" => ("0x86dd", Some("58")),
            "tcp" => ("0x0800", Some("6")),
            "tcp6" => ("0x86dd", Some("6")),
            "udp" => ("0x0800", Some("17")),
            "udp6" => ("0x86dd", Some("17")),
            "sctp" => ("0x0800", Some("132")),
            "sctp6" => ("0x86dd", Some("132")),
            "arp" => ("0x0806", None),
            "rarp" => ("0x8035", None),
            "mpls" => ("0x8847", None),
            "mplsm" => ("0x8848", None),
            other => {
                obj.insert(other.to_string(), json!(""));
                continue;
            }
        };
        obj.insert("dl_type".into(), json!(ty));
        if let Some(p) = proto {
            obj.insert("nw_proto".into(), json!(p));
        }
    }
    Value::Object(obj)
}

/// An action or instruction list as its items.
pub fn action_list(text: &str) -> Value {
    json!(split_top_level(text))
}

pub fn flow(e: &FlowEntry) -> Value {
    let mut flags = Vec::new();
    for (bit, n) in [
        (1, "send_flow_rem"),
        (2, "check_overlap"),
        (4, "reset_counts"),
        (8, "no_packet_counts"),
        (16, "no_byte_counts"),
    ] {
        if e.flags & bit != 0 {
            flags.push(n);
        }
    }
    json!({
        "table": e.table_id,
        "priority": e.priority,
        "cookie": format!("{:#x}", e.cookie),
        "duration_sec": e.duration_sec,
        "duration_nsec": e.duration_nsec,
        "n_packets": counter(e.packet_count),
        "n_bytes": counter(e.byte_count),
        "idle_timeout": e.idle_timeout,
        "hard_timeout": e.hard_timeout,
        "flags": flags,
        "match": match_object(&e.match_),
        "actions": action_list(&e.instructions.format()),
        "text": print::flow_line(e, true),
        "version": if matches!(e.instructions, Actions::V10(_)) { "OpenFlow10" } else { "OpenFlow13" },
    })
}

pub fn port_desc(p: &Port) -> Value {
    use openflow::text::print as pw;
    json!({
        "port": port_name(p.port_no),
        "name": p.name,
        "hw_addr": p.hw_addr.to_string(),
        "config": words(&pw::config_names(p.config)),
        "state": words(&pw::state_names(p.state)),
        "current": words(&pw::feature_names(p.curr)),
        "advertised": words(&pw::feature_names(p.advertised)),
        "supported": words(&pw::feature_names(p.supported)),
        "peer": words(&pw::feature_names(p.peer)),
        "curr_speed_kbps": p.curr_speed,
        "max_speed_kbps": p.max_speed,
    })
}

pub fn port_counters(p: &PortStats) -> Value {
    let mut v = json!({
        "port": port_name(p.port_no),
        "rx_packets": counter(p.rx_packets),
        "rx_bytes": counter(p.rx_bytes),
        "rx_dropped": counter(p.rx_dropped),
        "rx_errors": counter(p.rx_errors),
        "rx_frame_err": counter(p.rx_frame_err),
        "rx_over_err": counter(p.rx_over_err),
        "rx_crc_err": counter(p.rx_crc_err),
        "tx_packets": counter(p.tx_packets),
        "tx_bytes": counter(p.tx_bytes),
        "tx_dropped": counter(p.tx_dropped),
        "tx_errors": counter(p.tx_errors),
        "collisions": counter(p.collisions),
    });
    if let (Some((s, ns)), Some(o)) = (p.duration(), v.as_object_mut()) {
        o.insert("duration_sec".into(), json!(s));
        o.insert("duration_nsec".into(), json!(ns));
    }
    v
}

pub fn table(t: &TableStats) -> Value {
    let mut v = json!({
        "table_id": t.table_id,
        "active_count": t.active_count,
        "lookup_count": t.lookup_count,
        "matched_count": t.matched_count,
    });
    if let (Some(wc), Some(o)) = (t.wildcards, v.as_object_mut()) {
        o.insert("name".into(), json!(t.name));
        o.insert("max_entries".into(), json!(t.max_entries));
        o.insert("wildcards".into(), json!(format!("{wc:#x}")));
    }
    v
}

fn group_type(t: GroupType) -> Value {
    json!(match t {
        GroupType::All => "all".to_string(),
        GroupType::Select => "select".into(),
        GroupType::Indirect => "indirect".into(),
        GroupType::FastFailover => "ff".into(),
        GroupType::Unknown(n) => n.to_string(),
    })
}

pub fn group_desc(g: &GroupDesc) -> Value {
    let buckets: Vec<Value> = g
        .buckets
        .iter()
        .map(|b| {
            json!({
                "weight": b.weight,
                "watch_port": port_name(b.watch_port),
                "watch_group": if b.watch_group == openflow::action::OFPG_ANY {
                    Value::Null
                } else {
                    json!(b.watch_group)
                },
                "actions": action_list(&openflow::text::format_actions(&b.actions)),
            })
        })
        .collect();
    json!({
        "group_id": g.group_id,
        "type": group_type(g.group_type),
        "buckets": buckets,
        "text": print::group_text(g.group_id, g.group_type, &g.buckets),
    })
}

pub fn group_stats(g: &GroupStats) -> Value {
    let buckets: Vec<Value> = g
        .bucket_stats
        .iter()
        .map(|b| json!({"packet_count": counter(b.packet_count), "byte_count": counter(b.byte_count)}))
        .collect();
    json!({
        "group_id": g.group_id,
        "duration_sec": g.duration_sec,
        "duration_nsec": g.duration_nsec,
        "ref_count": g.ref_count,
        "packet_count": counter(g.packet_count),
        "byte_count": counter(g.byte_count),
        "buckets": buckets,
    })
}

pub fn group_features(g: &GroupFeatures) -> Value {
    let names = ["all", "select", "indirect", "ff"];
    let mut types = Vec::new();
    let mut per_type = Map::new();
    for (i, n) in names.iter().enumerate() {
        if g.types & (1 << i) != 0 {
            types.push(*n);
            per_type.insert(
                (*n).into(),
                json!({
                    "max_groups": g.max_groups[i],
                    "actions": words(&print::action_bitmap_names(g.actions[i]).replace("<none>", "")),
                }),
            );
        }
    }
    let caps: Vec<&str> =
        [(1, "select_weight"), (2, "select_liveness"), (4, "chaining"), (8, "chaining_checks")]
            .iter()
            .filter(|(b, _)| g.capabilities & b != 0)
            .map(|(_, n)| *n)
            .collect();
    json!({"types": types, "capabilities": caps, "groups": per_type})
}

fn meter_id(id: u32) -> Value {
    use openflow::v13::meter_mod::OFPM_MAX;
    if id <= OFPM_MAX {
        json!(id)
    } else {
        json!(print::meter_id(id, '=').trim_start_matches("meter="))
    }
}

pub fn meter_config(m: &MeterConfig) -> Value {
    let bands: Vec<Value> = m
        .bands
        .iter()
        .map(|b| {
            let mut v = json!({"rate": b.rate(), "burst_size": b.burst_size()});
            let o = v.as_object_mut();
            if let Some(o) = o {
                match b {
                    MeterBand::Drop { .. } => {
                        o.insert("type".into(), json!("drop"));
                    }
                    MeterBand::DscpRemark { prec_level, .. } => {
                        o.insert("type".into(), json!("dscp_remark"));
                        o.insert("prec_level".into(), json!(prec_level));
                    }
                    MeterBand::Experimenter { experimenter, .. } => {
                        o.insert("type".into(), json!("experimenter"));
                        o.insert("experimenter".into(), json!(experimenter));
                    }
                }
            }
            v
        })
        .collect();
    json!({
        "meter_id": meter_id(m.meter_id),
        "flags": words(print::meter_flag_words(m.flags).trim_end()),
        "bands": bands,
    })
}

pub fn meter_stats(m: &MeterStats) -> Value {
    let bands: Vec<Value> = m
        .band_stats
        .iter()
        .map(|b| {
            json!({"packet_count": counter(b.packet_band_count), "byte_count": counter(b.byte_band_count)})
        })
        .collect();
    json!({
        "meter_id": meter_id(m.meter_id),
        "flow_count": m.flow_count,
        "packet_in_count": counter(m.packet_in_count),
        "byte_in_count": counter(m.byte_in_count),
        "duration_sec": m.duration_sec,
        "duration_nsec": m.duration_nsec,
        "bands": bands,
    })
}

pub fn meter_features(f: &MeterFeatures) -> Value {
    let mut band_types = Vec::new();
    if f.band_types & 2 != 0 {
        band_types.push("drop");
    }
    if f.band_types & 4 != 0 {
        band_types.push("dscp_remark");
    }
    let caps: Vec<&str> = [(1, "kbps"), (2, "pktps"), (4, "burst"), (8, "stats")]
        .iter()
        .filter(|(b, _)| f.capabilities & b != 0)
        .map(|(_, n)| *n)
        .collect();
    json!({
        "max_meter": f.max_meter,
        "max_bands": f.max_bands,
        "max_color": f.max_color,
        "band_types": band_types,
        "capabilities": caps,
    })
}

/// A switch error: its names and ovs-ofctl's full text.
pub fn error(frame_bytes: &[u8], version: u8) -> Value {
    let text = print::raw(frame_bytes, 2);
    let (ty, code) = match openflow::Frame::decode(frame_bytes).map(|f| f.message) {
        Ok(openflow::Message::V13(openflow::v13::Message::Error(
            openflow::v13::ErrorMsg::Standard { kind, .. },
        ))) => (kind.ty, kind.code),
        Ok(openflow::Message::V10(openflow::v10::Message::Error(e))) => (e.err_type, e.code),
        _ => (u16::MAX, u16::MAX),
    };
    json!({
        "error": print::error_name(ty, code, version),
        "type": ty,
        "code": code,
        "text": text,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_become_objects_with_shorthands_spelled_out() {
        let m = openflow::text::parse_match("tcp,nw_src=10.0.0.0/8,tp_dst=80").unwrap();
        assert_eq!(
            match_object(&m),
            json!({"dl_type": "0x0800", "nw_proto": "6", "nw_src": "10.0.0.0/8", "tp_dst": "80"})
        );
        assert_eq!(match_object(&Match::default()), json!({}));
        let a = openflow::text::parse_match("arp,arp_op=1").unwrap();
        assert_eq!(match_object(&a), json!({"dl_type": "0x0806", "arp_op": "1"}));
    }

    /// A flow whose entry the JSON form is checked on.
    const FLOW: &str = "cookie=0x5,table=1,idle_timeout=30,priority=7,send_flow_rem,tcp,tp_dst=80,\
                        actions=mod_vlan_vid:5,output:1";

    #[test]
    fn flows_carry_counters_and_lists() {
        let fm = openflow::text::parse_flow(FLOW).unwrap();
        let e = FlowEntry {
            duration_sec: 3,
            duration_nsec: 5,
            packet_count: u64::MAX,
            byte_count: 60,
            ..fm.installed(fm.match_.clone(), Actions::V13(fm.instructions.clone()))
        };
        let v = flow(&e);
        assert_eq!(v["table"], 1);
        assert_eq!(v["cookie"], "0x5");
        assert_eq!(v["n_packets"], Value::Null);
        assert_eq!(v["n_bytes"], 60);
        assert_eq!(v["flags"], json!(["send_flow_rem"]));
        assert_eq!(v["match"]["tp_dst"], "80");
        assert_eq!(
            v["actions"],
            json!(["push_vlan:0x8100", "set_field:4101->vlan_vid", "output:1"])
        );
    }
}
