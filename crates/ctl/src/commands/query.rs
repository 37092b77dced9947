//! Query commands: `show`, `dump-desc`, `dump-tables`, `dump-ports`,
//! `dump-ports-desc`, `dump-flows`, `dump-aggregate`, `dump-groups`,
//! `dump-group-stats`, `dump-group-features`, `dump-meters`, `meter-stats`,
//! `meter-features`, `probe`.
//!
//! Each sends its request (as ovs-ofctl builds it) and prints every reply message as
//! it arrives, so a reply split over several messages prints as several, each with its
//! `flags=[more]` heading, exactly as ovs-ofctl shows it. With `--json` the parts are
//! gathered first and joined into one document; `dump-flows` also gathers them for
//! `--sort`/`--rsort`/`--no-stats`, which print bare flow lines as ovs-ofctl does.

use serde_json::{json, Value};

use openflow::v10::stats::{
    FlowStatsRequest as Fsr10, PortStatsRequest, StatsReplyBody as R10, StatsRequestBody as Q10,
};
use openflow::v10::Message as M10;
use openflow::v13::flow_mod::{FlowMod, FlowModCommand};
use openflow::v13::group_mod::GroupModCommand;
use openflow::v13::meter_mod::{MeterModCommand, OFPM_ALL};
use openflow::v13::multipart::{
    FlowStatsRequest, MultipartReplyBody as R13, MultipartRequestBody as Q13,
};
use openflow::v13::Message as M13;
use openflow::{Frame, Message, OFP10_VERSION};

use super::{get_config, mp, need13, out, out_json, parse_flow_arg, st};
use crate::compat10;
use crate::conn::Conn;
use crate::json;
use crate::ports;
use crate::sort;
use crate::{CtlError, Ctx};
use openflow::model::{FeaturesReply, FlowEntry, Port, PortStats, TableStats};
use openflow::text::print;

/// Sends `msg`: without `--json`, prints each reply as it comes and returns nothing;
/// with `--json`, returns the replies.
fn dump(ctx: &Ctx, c: &mut Conn, msg: Message) -> Result<Vec<Frame>, CtlError> {
    let f = c.frame(msg);
    if ctx.json {
        c.dump_frame(f)
    } else {
        c.dump_each(f, |fr| out(&print::frame(fr, 1)))?;
        Ok(Vec::new())
    }
}

/// Opens a connection and sends the request `msg` makes for it: with `--json` the
/// replies, without none (they were printed).
fn dump_json(
    ctx: &Ctx,
    msg: impl FnOnce(&mut Conn) -> Result<Message, CtlError>,
) -> Result<Option<Vec<Frame>>, CtlError> {
    let mut c = ctx.open()?;
    let msg = msg(&mut c)?;
    let frames = dump(ctx, &mut c, msg)?;
    Ok(ctx.json.then_some(frames))
}

/// The 1.0 stats request `q10` or the 1.3 multipart request `q13`, as `c` speaks.
fn by_version(c: &Conn, q10: Q10, q13: Q13) -> Message {
    if c.version == OFP10_VERSION {
        st(q10)
    } else {
        mp(q13)
    }
}

/// The 1.3 multipart bodies of `frames`.
fn bodies13(frames: &[Frame]) -> impl Iterator<Item = &R13> {
    frames.iter().filter_map(|f| match &f.message {
        Message::V13(M13::MultipartReply(r)) => Some(&r.body),
        _ => None,
    })
}

/// The 1.0 stats bodies of `frames`.
fn bodies10(frames: &[Frame]) -> impl Iterator<Item = &R10> {
    frames.iter().filter_map(|f| match &f.message {
        Message::V10(M10::StatsReply(r)) => Some(&r.body),
        _ => None,
    })
}

fn features_json(f: &FeaturesReply, v10: bool) -> Value {
    let mut v = json!({
        "datapath_id": format!("{:016x}", f.datapath_id),
        "n_tables": f.n_tables,
        "n_buffers": f.n_buffers,
        "auxiliary_id": f.auxiliary_id,
        "capabilities": words(&print::capability_names(f.capabilities)),
    });
    if let (true, Some(o)) = (v10, v.as_object_mut()) {
        o.insert(
            "actions".into(),
            json!(words(&print::actions10_names(f.actions).replace("<none>", ""))),
        );
    }
    v
}

fn words(s: &str) -> Vec<String> {
    s.split(' ').filter(|w| !w.is_empty() && *w != "0").map(str::to_string).collect()
}

/// `show`: the features reply, the ports (a port-desc request on 1.3, whose features
/// reply has none) and, over a second connection as ovs-ofctl does, the config.
pub fn show(ctx: &Ctx) -> Result<(), CtlError> {
    let mut c = ctx.open()?;
    let v10 = c.version == OFP10_VERSION;
    let feat = c.transact(if v10 {
        Message::V10(M10::FeaturesRequest)
    } else {
        Message::V13(M13::FeaturesRequest)
    })?;
    if !ctx.json {
        out(&print::frame(&feat, 1))?;
    }
    let port_frames = if v10 { Vec::new() } else { dump(ctx, &mut c, mp(Q13::PortDesc))? };
    let (cfg, config) = get_config(&mut ctx.open()?)?;
    if !ctx.json {
        return out(&print::frame(&cfg, 1));
    }
    let features = match &feat.message {
        Message::V13(M13::FeaturesReply(f)) | Message::V10(M10::FeaturesReply(f)) => f,
        _ => return Err(CtlError::fatal(format!("{}: bad features reply", ctx.switch))),
    };
    let mut ports: Vec<Port> = features.ports.clone();
    for b in bodies13(&port_frames) {
        if let R13::PortDesc(ps) = b {
            ports.extend(ps.iter().cloned());
        }
    }
    let (flags, miss) =
        config.ok_or_else(|| CtlError::fatal(format!("{}: bad config reply", ctx.switch)))?;
    let frags = ["normal", "drop", "reassemble", "nx-match"][usize::from(flags & 3)];
    out_json(&json!({
        "features": features_json(features, v10),
        "ports": ports.iter().map(json::port_desc).collect::<Vec<_>>(),
        "config": {"frags": frags, "miss_send_len": miss},
    }))
}

pub fn dump_desc(ctx: &Ctx) -> Result<(), CtlError> {
    let Some(frames) = dump_json(ctx, |c| Ok(by_version(c, Q10::Desc, Q13::Desc)))? else {
        return Ok(());
    };
    let d = bodies13(&frames)
        .find_map(|b| match b {
            R13::Desc(d) => Some(d),
            _ => None,
        })
        .or_else(|| {
            bodies10(&frames).find_map(|b| match b {
                R10::Desc(d) => Some(d),
                _ => None,
            })
        });
    match d {
        Some(d) => out_json(&json!({
            "manufacturer": d.mfr_desc,
            "hardware": d.hw_desc,
            "software": d.sw_desc,
            "serial_num": d.serial_num,
            "dp_description": d.dp_desc,
        })),
        None => Err(CtlError::fatal(format!("{}: empty desc reply", ctx.switch))),
    }
}

pub fn dump_tables(ctx: &Ctx) -> Result<(), CtlError> {
    let Some(frames) = dump_json(ctx, |c| Ok(by_version(c, Q10::Table, Q13::Table)))? else {
        return Ok(());
    };
    let mut tables: Vec<TableStats> = Vec::new();
    for b in bodies13(&frames) {
        if let R13::Table(ts) = b {
            tables.extend(ts.iter().cloned());
        }
    }
    for b in bodies10(&frames) {
        if let R10::Table(ts) = b {
            tables.extend(ts.iter().cloned());
        }
    }
    out_json(&json!(tables.iter().map(json::table).collect::<Vec<_>>()))
}

pub fn dump_ports(ctx: &Ctx, port: Option<&str>) -> Result<(), CtlError> {
    let found = dump_json(ctx, |c| {
        let port_no = match port {
            Some(p) => ports::resolve_port(c, p)?,
            None => openflow::action::port::ANY,
        };
        Ok(if c.version == OFP10_VERSION {
            st(Q10::Port(PortStatsRequest {
                port_no: compat10::port10(port_no).map_err(CtlError::Fatal)?,
            }))
        } else {
            mp(Q13::PortStats { port_no })
        })
    })?;
    let Some(frames) = found else {
        return Ok(());
    };
    let mut list: Vec<PortStats> = Vec::new();
    for b in bodies13(&frames) {
        if let R13::PortStats(ps) = b {
            list.extend(ps.iter().cloned());
        }
    }
    for b in bodies10(&frames) {
        if let R10::Port(ps) = b {
            list.extend(ps.iter().cloned());
        }
    }
    out_json(&json!(list.iter().map(json::port_counters).collect::<Vec<_>>()))
}

/// `dump-ports-desc`. As ovs-ofctl over OpenFlow 1.3, the PORT argument is accepted
/// but every port is listed (1.3's port-desc request has no port field). Over 1.0 the
/// ports come from the features reply.
pub fn dump_ports_desc(ctx: &Ctx) -> Result<(), CtlError> {
    let mut c = ctx.open()?;
    if c.version == OFP10_VERSION {
        let f = c.frame(Message::V10(M10::FeaturesRequest));
        let xid = f.xid;
        let frames = c.dump_frame(f)?;
        let ports: Vec<Port> = frames
            .iter()
            .filter_map(|f| match &f.message {
                Message::V10(M10::FeaturesReply(r)) => Some(r.ports.iter().cloned()),
                _ => None,
            })
            .flatten()
            .collect();
        if ctx.json {
            return out_json(&json!(ports.iter().map(json::port_desc).collect::<Vec<_>>()));
        }
        return out(&print::port_desc_reply(OFP10_VERSION, xid, &ports));
    }
    let frames = dump(ctx, &mut c, mp(Q13::PortDesc))?;
    if !ctx.json {
        return Ok(());
    }
    let mut ports: Vec<Port> = Vec::new();
    for b in bodies13(&frames) {
        if let R13::PortDesc(ps) = b {
            ports.extend(ps.iter().cloned());
        }
    }
    out_json(&json!(ports.iter().map(json::port_desc).collect::<Vec<_>>()))
}

/// The flow-stats (or aggregate) request for a FLOW filter.
pub(super) fn flow_request(
    version: u8,
    fm: &FlowMod,
    aggregate: bool,
) -> Result<Message, CtlError> {
    if version == OFP10_VERSION {
        if fm.cookie_mask != 0 {
            return Err(CtlError::fatal(
                "cookie=VALUE/MASK: OpenFlow 1.0 cannot select flows by cookie (use -O OpenFlow13)",
            ));
        }
        if fm.out_group != openflow::action::OFPG_ANY {
            return Err(CtlError::fatal(
                "out_group: OpenFlow 1.0 has no groups (use -O OpenFlow13)",
            ));
        }
        let r = Fsr10 {
            match_: compat10::match10(&fm.match_).map_err(CtlError::Fatal)?,
            table_id: fm.table_id,
            out_port: compat10::port10(fm.out_port).map_err(CtlError::Fatal)?,
        };
        Ok(st(if aggregate { Q10::Aggregate(r) } else { Q10::Flow(r) }))
    } else {
        let r = FlowStatsRequest {
            table_id: fm.table_id,
            out_port: fm.out_port,
            out_group: fm.out_group,
            cookie: fm.cookie,
            cookie_mask: fm.cookie_mask,
            match_: fm.match_.clone(),
        };
        Ok(mp(if aggregate { Q13::Aggregate(r) } else { Q13::Flow(r) }))
    }
}

/// The flows of flow-stats replies.
pub fn flow_entries(frames: &[Frame]) -> Vec<FlowEntry> {
    let mut flows = Vec::new();
    for b in bodies13(frames) {
        if let R13::Flow(fs) = b {
            flows.extend(fs.iter().map(FlowEntry::from_v13));
        }
    }
    for b in bodies10(frames) {
        if let R10::Flow(fs) = b {
            flows.extend(fs.iter().map(FlowEntry::from_v10));
        }
    }
    flows
}

pub fn dump_flows(ctx: &Ctx, filter: &str) -> Result<(), CtlError> {
    let fm = parse_flow_arg(filter, FlowModCommand::Delete).map_err(CtlError::Fatal)?;
    let mut c = ctx.open()?;
    let msg = flow_request(c.version, &fm, false)?;
    let gather = ctx.json || !ctx.sort.is_empty() || !ctx.show_stats;
    if !gather {
        dump(ctx, &mut c, msg)?;
        return Ok(());
    }
    let frames = c.dump(msg)?;
    let mut flows = flow_entries(&frames);
    sort::sort_flows(&mut flows, &ctx.sort);
    if ctx.json {
        return out_json(&json!(flows.iter().map(json::flow).collect::<Vec<_>>()));
    }
    let text: String =
        flows.iter().map(|f| format!(" {}\n", print::flow_line(f, ctx.show_stats))).collect();
    out(&text)
}

pub fn dump_aggregate(ctx: &Ctx, filter: &str) -> Result<(), CtlError> {
    let fm = parse_flow_arg(filter, FlowModCommand::Delete).map_err(CtlError::Fatal)?;
    let Some(frames) = dump_json(ctx, |c| flow_request(c.version, &fm, true))? else {
        return Ok(());
    };
    let agg = bodies13(&frames)
        .find_map(|b| match b {
            R13::Aggregate(a) => Some((a.packet_count, a.byte_count, a.flow_count)),
            _ => None,
        })
        .or_else(|| {
            bodies10(&frames).find_map(|b| match b {
                R10::Aggregate(a) => Some((a.packet_count, a.byte_count, a.flow_count)),
                _ => None,
            })
        })
        .ok_or_else(|| CtlError::fatal(format!("{}: empty aggregate reply", ctx.switch)))?;
    out_json(&json!({"packet_count": agg.0, "byte_count": agg.1, "flow_count": agg.2}))
}

/// Opens a connection, which must speak OpenFlow 1.3 for `cmd`, and sends multipart
/// request `body`: with `--json` the replies, without none (they were printed).
fn dump13(ctx: &Ctx, cmd: &str, body: Q13) -> Result<Option<Vec<Frame>>, CtlError> {
    dump_json(ctx, |c| {
        need13(c, cmd)?;
        Ok(mp(body))
    })
}

/// [`dump13`], then with `--json` prints the JSON `pick` makes of the first reply body
/// it takes; an error naming the `what` reply where none is there.
fn dump_one13(
    ctx: &Ctx,
    cmd: &str,
    body: Q13,
    what: &str,
    pick: impl Fn(&R13) -> Option<Value>,
) -> Result<(), CtlError> {
    let Some(frames) = dump13(ctx, cmd, body)? else {
        return Ok(());
    };
    let found = bodies13(&frames).find_map(pick);
    match found {
        Some(v) => out_json(&v),
        None => Err(CtlError::fatal(format!("{}: empty {what} reply", ctx.switch))),
    }
}

/// [`dump13`], then with `--json` prints the list that `add` makes of the reply bodies
/// (adding to it what it takes from each).
fn dump_list13(
    ctx: &Ctx,
    cmd: &str,
    body: Q13,
    add: impl Fn(&R13, &mut Vec<Value>),
) -> Result<(), CtlError> {
    let Some(frames) = dump13(ctx, cmd, body)? else {
        return Ok(());
    };
    let mut list = Vec::new();
    for b in bodies13(&frames) {
        add(b, &mut list);
    }
    out_json(&json!(list))
}

/// `dump-groups`. As ovs-ofctl over OpenFlow 1.3, a GROUP argument is accepted but
/// every group is listed (1.3's group-desc request has no group field).
pub fn dump_groups(ctx: &Ctx) -> Result<(), CtlError> {
    dump_list13(ctx, "dump-groups", Q13::GroupDesc, |b, list| {
        if let R13::GroupDesc(gs) = b {
            list.extend(gs.iter().map(json::group_desc));
        }
    })
}

pub fn dump_group_stats(ctx: &Ctx, arg: &str) -> Result<(), CtlError> {
    let gm = openflow::text::parse_group_mod(arg, GroupModCommand::Delete)
        .map_err(|e| CtlError::fatal(e.to_string()))?;
    let body = Q13::Group { group_id: gm.group_id };
    dump_list13(ctx, "dump-group-stats", body, |b, list| {
        if let R13::Group(gs) = b {
            list.extend(gs.iter().map(json::group_stats));
        }
    })
}

pub fn dump_group_features(ctx: &Ctx) -> Result<(), CtlError> {
    let body = Q13::GroupFeatures;
    dump_one13(ctx, "dump-group-features", body, "group features", |b| match b {
        R13::GroupFeatures(g) => Some(json::group_features(g)),
        _ => None,
    })
}

/// `dump-meters` (`stats` false) and `meter-stats` (`stats` true).
pub fn dump_meters(ctx: &Ctx, arg: Option<&str>, stats: bool) -> Result<(), CtlError> {
    let meter_id = match arg {
        Some(a) => {
            openflow::text::parse_meter_mod(a, MeterModCommand::Delete)
                .map_err(|e| CtlError::fatal(e.to_string()))?
                .meter_id
        }
        None => OFPM_ALL,
    };
    let (cmd, body) = if stats {
        ("meter-stats", Q13::Meter { meter_id })
    } else {
        ("dump-meters", Q13::MeterConfig { meter_id })
    };
    dump_list13(ctx, cmd, body, |b, list| match b {
        R13::Meter(ms) => list.extend(ms.iter().map(json::meter_stats)),
        R13::MeterConfig(ms) => list.extend(ms.iter().map(json::meter_config)),
        _ => {}
    })
}

pub fn meter_features(ctx: &Ctx) -> Result<(), CtlError> {
    let body = Q13::MeterFeatures;
    dump_one13(ctx, "meter-features", body, "meter features", |b| match b {
        R13::MeterFeatures(f) => Some(json::meter_features(f)),
        _ => None,
    })
}

/// `probe`: an echo request that must be answered.
pub fn probe(ctx: &Ctx) -> Result<(), CtlError> {
    let mut c = ctx.open()?;
    let msg = if c.version == OFP10_VERSION {
        Message::V10(M10::EchoRequest(Vec::new()))
    } else {
        Message::V13(M13::EchoRequest(Vec::new()))
    };
    c.transact(msg)?;
    if ctx.json {
        out_json(&json!({"ok": true}))?;
    }
    Ok(())
}

/// `dump-fastpath`: the in-kernel fast tier's entries and counts (peregrine's own
/// request, OpenFlow 1.3 only), asked as an `OFPMP_EXPERIMENTER` multipart request so
/// that a map of any size comes back (in as many parts as it needs). Text: a heading
/// with the tier's counts, then one line per entry, most hit first.
pub fn dump_fastpath(ctx: &Ctx) -> Result<(), CtlError> {
    use switch::agent::{exp_type, PEREGRINE_EXPERIMENTER};
    let mut c = ctx.open()?;
    need13(&c, "dump-fastpath")?;
    let replies = c.dump(mp(Q13::Experimenter(openflow::v13::Experimenter {
        experimenter: PEREGRINE_EXPERIMENTER,
        exp_type: exp_type::FAST_PATH,
        data: b"{}".to_vec(),
    })))?;
    let mut data = Vec::new();
    for r in replies {
        match r.message {
            Message::V13(M13::MultipartReply(openflow::v13::multipart::MultipartReply {
                body:
                    R13::Experimenter(openflow::v13::Experimenter {
                        experimenter: PEREGRINE_EXPERIMENTER,
                        data: part,
                        ..
                    }),
                ..
            })) => data.extend_from_slice(&part),
            other => {
                return Err(CtlError::fatal(format!("{}: unexpected reply {other:?}", ctx.switch)))
            }
        }
    }
    let v = super::reply_json(ctx, &data)?;
    if ctx.json {
        return out_json(&v);
    }
    out(&fastpath_text(&v))
}

/// The text form of a `FAST_PATH` reply.
fn fastpath_text(v: &Value) -> String {
    if v["enabled"] != Value::Bool(true) {
        return "fast path: off (run the switch with afxdp ports and --fast-path xdp)\n".into();
    }
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let entries = v["entries"].as_array().cloned().unwrap_or_default();
    let ev = &v["events"];
    let tier = &v["tier"];
    let mut s = format!(
        "fast path: xdp, generation {}, {} of {} entries\n \
         kernel: hit={} miss={} stale={} unparsed={} passed={} rewrite_failed={} partial_csum={} \
         csum_finished={} undelivered={} metered={} meter_dropped={}\n \
         mirror: installed={} refused={} mismatched={} evicted={} revalidated={} flushes={} \
         offers={} offers_lost={} mac_withdrawn={} mac_stale={}\n",
        n(&v["generation"]),
        entries.len(),
        n(&v["capacity"]),
        n(&ev["hit"]),
        n(&ev["miss"]),
        n(&ev["stale"]),
        n(&ev["unparsed"]),
        n(&ev["passed"]),
        n(&ev["rewrite_failed"]),
        n(&ev["partial_csum"]),
        n(&ev["csum_finished"]),
        n(&ev["undelivered"]),
        n(&ev["metered"]),
        n(&ev["meter_dropped"]),
        n(&tier["installed"]),
        n(&tier["refused"]),
        n(&tier["mismatched"]),
        n(&tier["evicted"]),
        n(&tier["revalidated"]),
        n(&tier["flushes"]),
        n(&tier["offers"]),
        n(&tier["offers_lost"]),
        n(&tier["mac_withdrawn"]),
        n(&tier["mac_stale"]),
    );
    for p in v["ports"].as_array().into_iter().flatten() {
        let lost = match (&p["lost"], &v["lost_counted"]) {
            (Value::Number(l), _) => l.to_string(),
            (_, Value::String(why)) => format!("not counted ({why})"),
            _ => "not counted".to_string(),
        };
        s.push_str(&format!(
            " port {} ({}): {} XDP, kernel delivers here from native ports: {}, lost={}\n",
            n(&p["port"]),
            p["name"].as_str().unwrap_or(""),
            p["mode"].as_str().unwrap_or(""),
            match p["why"].as_str() {
                None => "yes".to_string(),
                Some(why) => format!("no ({why})"),
            },
            lost,
        ));
    }
    let masks = v["masks"].as_array().cloned().unwrap_or_default();
    if !masks.is_empty() {
        s.push_str(&format!(" masks ({}, in lookup order):\n", masks.len()));
        for m in &masks {
            s.push_str(&format!(
                "  slot {}: {} entries, {}\n",
                n(&m["slot"]),
                n(&m["entries"]),
                m["mask"].as_str().unwrap_or(""),
            ));
        }
    }
    for e in &entries {
        s.push_str(&format!(
            " {}packets={}, bytes={}, generation={}{}, {} actions={}{}{}{}\n",
            if e["megaflow"] == Value::Bool(true) { "megaflow " } else { "" },
            n(&e["packets"]),
            n(&e["bytes"]),
            n(&e["generation"]),
            if e["live"] == Value::Bool(true) { "" } else { " (stale)" },
            e["key"].as_str().unwrap_or(""),
            e["actions"].as_str().unwrap_or(""),
            if e["normal"] == Value::Bool(true) { " (NORMAL)" } else { "" },
            match e["groups"].as_array() {
                Some(g) if !g.is_empty() => format!(
                    " (group {})",
                    g.iter().map(|x| n(x).to_string()).collect::<Vec<_>>().join(",")
                ),
                _ => String::new(),
            },
            match e["meter"].as_u64() {
                Some(m) => format!(" (meter {m})"),
                None => String::new(),
            },
        ));
    }
    s
}
