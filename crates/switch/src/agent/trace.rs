//! The `TRACE` request (`peregrine trace`): a flow written in ovs-ofctl match syntax, or
//! a frame in hex, run through the live pipeline by [`Datapath::trace`], and every step
//! reported in JSON and as ready-to-print text (in the manner of `ovs-appctl
//! ofproto/trace`).
//!
//! Request data (a JSON object), one of:
//! - `{"flow": "tcp,in_port=1,nw_dst=10.0.0.2,tcp_dst=80"}`: an ovs-ofctl match that
//!   must name `in_port`, plus the fields OpenFlow 1.3 cannot match but a packet has:
//!   `nw_ttl=N`, `tcp_flags=N` or `tcp_flags=+syn+ack`, `nw_frag=no|first|later`. The
//!   frame is composed by [`datapath::compose`] (unnamed fields take its defaults:
//!   zero MACs, TTL 64, ...).
//! - `{"packet": "<hex>", "in_port": N}`: the frame itself (white space in the hex is
//!   ignored).
//!
//! The trace runs against the published pipeline after every earlier change of the
//! connection is published, without touching counters, meter buckets, the exact-match
//! cache or the packet-in queue; nothing is sent anywhere.
//!
//! Flow entries are found for the rules the trace matched by one pass over the flow
//! tables (a trace is a diagnostic, not a hot path).
//!
//! Errors: request data that is not a JSON object is answered with `OFPBRC_BAD_LEN` (a
//! client bug). Everything a user can get wrong (flow text, hex, unknown input port,
//! fields no frame can carry) is answered with a normal reply `{"error": "...",
//! "column": N}`, because an `OFPT_ERROR` carries only a type and code, not the
//! message; `column` (1-based, in bytes of the flow text) is there when the flow text
//! parser located the problem.
//!
//! Reply (a JSON object):
//! - `in_port`, `packet` (the traced frame in hex), `packet_len`, `version` (of the
//!   pipeline traced);
//! - `parsed`: `{"key": "<ovs-ofctl text of every field the parser set>", "error":
//!   null | "<parse error name>"}`; the key text can be traced again as a flow;
//! - `steps`: one object per step, in order, with `step` naming its kind:
//!   `table` (`table`, `key` text when it differs from the previous table's, `rule`:
//!   null on a miss, else `{"id", "priority", "cookie", "entry": "flow" | "fail-open" |
//!   "hidden", "match", "instructions"}` — match and instructions in ovs-ofctl text, from
//!   the flow entry that owns the rule; the fail-open rule shows its own; a rule without
//!   an entry has none), `meter` (`meter`, `outcome`: pass | drop | remark, `band`,
//!   `prec_level`), `apply` (`action`), `clear_actions`, `write_actions` (`actions`),
//!   `write_metadata` (`metadata`), `goto` (`table`), `action_set` (`actions`: the set
//!   executed at the end of the pipeline), `execute` (`action`: one from an action set
//!   or bucket), `bucket` (`group`, `bucket`, `actions`), `output` (`port`, `queue`),
//!   `normal`, `packet_in` (`reason`, `table`, `cookie`, `max_len`), `drop` (`reason`,
//!   and `port` when an output action sent nothing);
//! - `fast_path`: what the in-kernel fast tier does with such frames, in words (served
//!   in the kernel, mirrored after this packet, or why it stays in user space); null
//!   when the switch runs without the tier;
//! - `outputs`: the port numbers packets leave by, in order; `normal`: how many packets
//!   went to the learning switch; `packet_ins`: the packet-ins it would send; `drops`:
//!   the drop reasons;
//! - `text`: all of it as lines, e.g. `table 0: priority 100, cookie 0x1: in_port=1
//!   actions=output:2` then `  output:2` and `    -> output to port 2 (eth2)`;
//! - `truncated`: present (true) when the reply would not fit in one OpenFlow message:
//!   `steps` is then null, `drops` shortened and `text` cut at a line.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, Ipv6Addr};

use datapath::action::{port as dport, Action as DpAction};
use datapath::compose::compose;
use datapath::key::{Field, FlowKey as DpKey, FlowMatch};
use datapath::meter::MeterOutcome;
use datapath::parse::ethertype;
use datapath::pipeline::{PacketIn as DpPacketIn, PacketInReason as DpReason, RuleId};
use datapath::trace::{Trace, TraceEvent};
use openflow::action::{port, Action};
use openflow::match13::Match;
use openflow::oxm::Oxm;
use openflow::text::{format_action, format_actions, format_instructions, format_match};
use openflow::v13::port::port_config;
use openflow::{ErrorKind, MacAddr, OfpError};
use serde_json::{json, Value};

use super::{Agent, FAIL_OPEN_PRIORITY};
use crate::flows::{FlowEntry, FlowKey};
use crate::translate::{match_to_flow, TranslateError};

/// A user's mistake in a trace request: the message and, for flow text, the 1-based
/// column it points at.
#[derive(Debug, PartialEq, Eq)]
struct Refusal {
    message: String,
    column: Option<usize>,
}

impl Refusal {
    fn new(message: impl Into<String>) -> Refusal {
        Refusal { message: message.into(), column: None }
    }
}

/// The most bytes a traced frame may have (the parser looks at no more).
const MAX_FRAME: usize = 65_535;

/// The most bytes of JSON one reply can carry: an OpenFlow message is at most 65535
/// bytes, 16 of them the experimenter message's headers.
const MAX_REPLY: usize = 65_535 - 16;

/// The reply's bytes, cut to fit one message: first without `steps`, then with fewer
/// `drops` and the `text` cut at a line (saying so); `truncated` is set when cut.
fn fit(mut reply: Value) -> Vec<u8> {
    let bytes = reply.to_string().into_bytes();
    if bytes.len() <= MAX_REPLY {
        return bytes;
    }
    reply["truncated"] = true.into();
    reply["steps"] = Value::Null;
    if let Some(d) = reply["drops"].as_array_mut() {
        d.truncate(16);
    }
    let text = match reply["text"].take() {
        Value::String(t) => t,
        _ => String::new(),
    };
    reply["text"] = "".into();
    let room = MAX_REPLY.saturating_sub(reply.to_string().len() + 200);
    let mut kept = String::new();
    let mut used = 0;
    for line in text.lines() {
        // Escaped as JSON, plus the newline's two bytes.
        let cost = serde_json::to_string(line).map_or(usize::MAX, |e| e.len());
        if used + cost > room {
            break;
        }
        used += cost;
        kept.push_str(line);
        kept.push('\n');
    }
    kept.push_str("... (the trace is too long for one reply: cut here)\n");
    reply["text"] = kept.into();
    reply.to_string().into_bytes()
}

impl Agent {
    /// Serves a `TRACE` request (see the module comment) at `now`: the reply's JSON.
    pub(super) fn trace_request(&mut self, data: &[u8], now: u64) -> Result<Vec<u8>, OfpError> {
        let req: serde_json::Map<String, Value> = serde_json::from_slice(data).map_err(|e| {
            OfpError::new(
                ErrorKind::BAD_REQUEST_BAD_LEN,
                format!("trace request data is not a JSON object: {e}"),
            )
        })?;
        let reply = match self.frame_of(&req) {
            Ok((frame, in_port)) => {
                // The trace sees every earlier change, as a packet-out would.
                self.publish();
                let t = self.flows.datapath().trace(&frame, in_port, now);
                self.trace_json(&frame, in_port, &t)
            }
            Err(r) => {
                let mut v = json!({ "error": r.message });
                if let Some(c) = r.column {
                    v["column"] = c.into();
                }
                v
            }
        };
        Ok(fit(reply))
    }

    /// The frame and input port a request names.
    fn frame_of(&self, req: &serde_json::Map<String, Value>) -> Result<(Vec<u8>, u32), Refusal> {
        let (frame, in_port) =
            match (req.get("flow"), req.get("packet")) {
                (Some(Value::String(flow)), None) => frame_of_flow(flow)?,
                (None, Some(Value::String(hex))) => {
                    let frame = decode_hex(hex)?;
                    let in_port = req
                        .get("in_port")
                        .and_then(Value::as_u64)
                        .and_then(|p| u32::try_from(p).ok())
                        .ok_or_else(|| Refusal::new("a packet needs \"in_port\": a port number"))?;
                    (frame, in_port)
                }
                _ => return Err(Refusal::new(
                    "the request needs either \"flow\" (text) or \"packet\" (hex) and \"in_port\"",
                )),
            };
        if !self.ports.contains(in_port) {
            let ports: Vec<String> = self.ports.numbers().map(port_name).collect();
            return Err(Refusal::new(format!(
                "in_port {} is not a port of the switch (its ports: {})",
                port_name(in_port),
                if ports.is_empty() { "none".to_string() } else { ports.join(", ") }
            )));
        }
        Ok((frame, in_port))
    }

    /// The reply for trace `t` of `frame` received on `in_port`.
    fn trace_json(&self, frame: &[u8], in_port: u32, t: &Trace) -> Value {
        let wanted: Vec<RuleId> = t
            .events
            .iter()
            .filter_map(|e| match e {
                TraceEvent::Table { rule: Some((id, ..)), .. } => Some(*id),
                _ => None,
            })
            .collect();
        let entries: BTreeMap<RuleId, (&FlowKey, &FlowEntry)> = self
            .flows
            .flows()
            .iter()
            .filter_map(|(_, k, e)| e.rule.filter(|r| wanted.contains(r)).map(|r| (r, (k, e))))
            .collect();
        let mut r = Render {
            agent: self,
            in_port,
            entries,
            steps: Vec::new(),
            lines: Vec::new(),
            drops: Vec::new(),
            packet_ins: Vec::new(),
            indent: 2,
            groups: Vec::new(),
            in_bucket: false,
            shown_key: None,
            parsed: json!(null),
        };
        r.lines.push(format!(
            "Packet: {} bytes on port {}, pipeline version {}",
            frame.len(),
            r.port_label(in_port),
            t.version
        ));
        for (i, e) in t.events.iter().enumerate() {
            r.event(e, t.events.get(i + 1));
        }
        let outputs: Vec<u32> = t.outputs.tx.iter().map(|x| x.port).collect();
        let normal = t.outputs.normal.len();
        r.lines.push(String::new());
        r.lines.push(r.result_line(&outputs, normal));
        let fast_path = self.fast_path.as_ref().and_then(|f| {
            let key = t.events.iter().find_map(|e| match e {
                TraceEvent::Parsed { key, .. } => Some(*key),
                _ => None,
            })?;
            Some(f.verdict(&key))
        });
        if let Some(v) = &fast_path {
            r.lines.push(format!("fast path: {v}"));
        }
        let mut text = r.lines.join("\n");
        text.push('\n');
        json!({
            "in_port": in_port,
            "packet": hex(frame),
            "packet_len": frame.len(),
            "version": t.version,
            "parsed": r.parsed,
            "steps": r.steps,
            "outputs": outputs,
            "normal": normal,
            "packet_ins": r.packet_ins,
            "drops": r.drops,
            "fast_path": fast_path,
            "text": text,
        })
    }
}

/// Builds the steps and the text of one trace, event by event.
struct Render<'a> {
    agent: &'a Agent,
    in_port: u32,
    /// The flow entries of the rules the trace matched, by rule id.
    entries: BTreeMap<RuleId, (&'a FlowKey, &'a FlowEntry)>,
    steps: Vec<Value>,
    lines: Vec<String>,
    drops: Vec<String>,
    packet_ins: Vec<Value>,
    /// The indentation of the last action line (what it caused goes 2 deeper).
    indent: usize,
    /// The group actions whose buckets may follow, innermost last: the group and the
    /// indentation of its bucket lines.
    groups: Vec<(u32, usize)>,
    /// Whether the last bucket line's actions are being shown (they go below it).
    in_bucket: bool,
    /// The key last shown (at parse or at a table).
    shown_key: Option<DpKey>,
    parsed: Value,
}

impl Render<'_> {
    fn line(&mut self, indent: usize, s: impl AsRef<str>) {
        self.lines.push(format!("{:indent$}{}", "", s.as_ref()));
    }

    /// An action line at `indent`; what the action causes is indented below it.
    fn action_line(&mut self, indent: usize, s: impl AsRef<str>) {
        self.line(indent, s);
        self.indent = indent;
    }

    /// A line of the pipeline itself (a table, an instruction, the action set): no
    /// bucket is being shown any more.
    fn pipeline_line(&mut self, indent: usize, s: impl AsRef<str>) {
        self.groups.clear();
        self.in_bucket = false;
        self.action_line(indent, s);
    }

    /// An executed action: below the bucket it belongs to, if one is being shown.
    fn executed(&mut self, a: &DpAction, text: &str, top: usize) {
        let indent = match self.groups.last() {
            Some(&(_, base)) if self.in_bucket => base + 2,
            _ => top,
        };
        self.action_line(indent, text);
        if let DpAction::Group(g) = *a {
            self.groups.push((g, indent + 2));
            self.in_bucket = false;
        }
    }

    fn effect(&mut self, s: impl AsRef<str>) {
        let i = self.indent + 2;
        self.line(i, format!("-> {}", s.as_ref()));
    }

    fn drop(&mut self, reason: String, port: Option<u32>) {
        self.effect(format!("dropped: {reason}"));
        let mut step = json!({ "step": "drop", "reason": reason });
        if let Some(p) = port {
            step["port"] = p.into();
        }
        self.steps.push(step);
        self.drops.push(reason);
    }

    fn port_label(&self, p: u32) -> String {
        match self.agent.ports.get(p) {
            Some(d) if !d.name.is_empty() => format!("{} ({})", port_name(p), d.name),
            _ => port_name(p),
        }
    }

    fn event(&mut self, e: &TraceEvent, next: Option<&TraceEvent>) {
        match e {
            TraceEvent::Parsed { key, error } => {
                let text = key_text(key);
                self.line(0, format!("Flow: {text}"));
                if let Some(err) = error {
                    self.line(
                        2,
                        format!("(the parser stopped early: {}; later fields are 0)", err.name()),
                    );
                }
                self.parsed = json!({ "key": text, "error": error.map(|e| e.name()) });
                self.shown_key = Some(*key);
            }
            TraceEvent::Table { table, key, rule } => self.table(*table, key, *rule),
            TraceEvent::Meter { meter, outcome } => {
                let (text, step) = match *outcome {
                    MeterOutcome::Pass => (
                        "pass".to_string(),
                        json!({ "step": "meter", "meter": meter, "outcome": "pass" }),
                    ),
                    MeterOutcome::Drop { band } => (
                        format!("band {band} drops the packet"),
                        json!({ "step": "meter", "meter": meter, "outcome": "drop",
                                "band": band }),
                    ),
                    MeterOutcome::Remark { band, prec_level } => (
                        format!("band {band} raises the drop precedence by {prec_level}"),
                        json!({ "step": "meter", "meter": meter, "outcome": "remark",
                                "band": band, "prec_level": prec_level }),
                    ),
                };
                self.pipeline_line(2, format!("meter:{meter}: {text}"));
                self.steps.push(step);
            }
            TraceEvent::Apply(a) => {
                let text = action_text(a, self.key());
                // Apply-actions are the pipeline's, never a bucket's.
                self.groups.clear();
                self.in_bucket = false;
                self.executed(a, &text, 2);
                self.steps.push(json!({ "step": "apply", "action": text }));
                self.check_effect(a, next);
            }
            TraceEvent::ClearActions => {
                self.pipeline_line(2, "clear_actions");
                self.steps.push(json!({ "step": "clear_actions" }));
            }
            TraceEvent::WriteActions(v) => {
                let list = self.action_list(v);
                self.pipeline_line(2, format!("write_actions({})", list.join(",")));
                self.steps.push(json!({ "step": "write_actions", "actions": list }));
            }
            TraceEvent::WriteMetadata(md) => {
                self.pipeline_line(2, format!("write_metadata: metadata is now {md:#x}"));
                self.steps.push(json!({ "step": "write_metadata", "metadata": md }));
            }
            TraceEvent::Goto(t) => {
                self.pipeline_line(2, format!("goto_table:{t}"));
                self.steps.push(json!({ "step": "goto", "table": t }));
            }
            TraceEvent::ActionSet(v) => {
                let list = self.action_list(v);
                let shown = if list.is_empty() { "empty".to_string() } else { list.join(",") };
                self.pipeline_line(0, format!("action set: {shown}"));
                self.steps.push(json!({ "step": "action_set", "actions": list }));
            }
            TraceEvent::SetAction(a) => {
                let text = action_text(a, self.key());
                self.executed(a, &text, 2);
                self.steps.push(json!({ "step": "execute", "action": text }));
                self.check_effect(a, next);
            }
            TraceEvent::Bucket { group, bucket } => {
                let actions = self.bucket_actions(*group, *bucket);
                // The bucket belongs to the innermost group action of its group.
                while self.groups.last().is_some_and(|&(g, _)| g != *group) {
                    self.groups.pop();
                }
                let indent = match self.groups.last() {
                    Some(&(_, base)) => base,
                    None => self.indent + 2,
                };
                if self.groups.is_empty() {
                    self.groups.push((*group, indent));
                }
                self.in_bucket = true;
                self.line(
                    indent,
                    format!(
                        "group:{group} bucket {bucket}: {}",
                        actions.as_deref().unwrap_or("(not in the group table)")
                    ),
                );
                self.indent = indent;
                self.steps.push(json!({
                    "step": "bucket", "group": group, "bucket": bucket, "actions": actions,
                }));
            }
            TraceEvent::Output { port, queue } => {
                let q = queue.map_or(String::new(), |q| format!(" (queue {q})"));
                self.effect(format!("output to port {}{q}", self.port_label(*port)));
                self.steps.push(json!({ "step": "output", "port": port, "queue": queue }));
            }
            TraceEvent::Normal => {
                self.effect("NORMAL: to the learning switch");
                self.steps.push(json!({ "step": "normal" }));
            }
            TraceEvent::PacketIn(pi) => self.packet_in(pi),
            TraceEvent::Dropped(why) => self.drop((*why).to_string(), None),
        }
    }

    /// The key the actions now see: the last shown.
    fn key(&self) -> &DpKey {
        static ZERO: DpKey = DpKey::ZERO;
        self.shown_key.as_ref().unwrap_or(&ZERO)
    }

    fn action_list(&self, v: &[DpAction]) -> Vec<String> {
        v.iter().map(|a| action_text(a, self.key())).collect()
    }

    fn table(&mut self, table: u8, key: &DpKey, rule: Option<(RuleId, u16, u64)>) {
        let mut step = json!({ "step": "table", "table": table, "rule": null });
        if self.shown_key != Some(*key) {
            let text = key_text(key);
            self.line(0, format!("packet now: {text}"));
            step["key"] = text.into();
            self.shown_key = Some(*key);
        }
        let Some((id, priority, cookie)) = rule else {
            self.pipeline_line(0, format!("table {table}: no match (table miss)"));
            self.steps.push(step);
            return;
        };
        let head = format!("table {table}: priority {priority}, cookie {cookie:#x}:");
        let (entry, m, i) = match self.entries.get(&id) {
            Some((k, e)) => (
                "flow",
                Some(format_match(&e.match_(k))),
                Some(format_instructions(&e.instructions)),
            ),
            None if table == 0 && priority == FAIL_OPEN_PRIORITY && self.agent.fail_open => {
                ("fail-open", Some(String::new()), Some("NORMAL".to_string()))
            }
            None => ("hidden", None, None),
        };
        let desc = match (entry, &m, &i) {
            ("fail-open", ..) => {
                "fail-open rule (standalone, no controller connected): actions=NORMAL".into()
            }
            (_, Some(m), Some(i)) if m.is_empty() => format!("actions={i}"),
            (_, Some(m), Some(i)) => format!("{m} actions={i}"),
            _ => format!("rule {id}, which no flow entry owns"),
        };
        self.pipeline_line(0, format!("{head} {desc}"));
        step["rule"] = json!({
            "id": id, "priority": priority, "cookie": cookie, "entry": entry,
            "match": m, "instructions": i,
        });
        self.steps.push(step);
    }

    fn packet_in(&mut self, pi: &DpPacketIn) {
        let reason = match pi.reason {
            DpReason::NoMatch => "no_match",
            DpReason::Action => "action",
            DpReason::InvalidTtl => "invalid_ttl",
        };
        let len = if pi.max_len == openflow::action::OFPCML_NO_BUFFER {
            "the whole packet".to_string()
        } else {
            format!("max_len {}", pi.max_len)
        };
        self.effect(format!(
            "packet-in to the controller (reason {reason}, table {}, cookie {:#x}, {len})",
            pi.table_id, pi.cookie
        ));
        let v = json!({
            "reason": reason, "table": pi.table_id, "cookie": pi.cookie,
            "max_len": pi.max_len,
        });
        let mut step = v.clone();
        step["step"] = "packet_in".into();
        self.steps.push(step);
        self.packet_ins.push(v);
    }

    /// After an output, controller or group action: when the next event is not what the
    /// action produces, says why nothing came of it.
    fn check_effect(&mut self, a: &DpAction, next: Option<&TraceEvent>) {
        let produced = matches!(
            next,
            Some(TraceEvent::Output { .. } | TraceEvent::Normal | TraceEvent::PacketIn(_))
        );
        match *a {
            DpAction::Output(p) if !produced => {
                let why = self.why_no_output(p);
                self.drop(why, Some(p));
            }
            DpAction::Controller { .. } if !produced => self.drop(
                "the input port has no_packet_in: no packet-in is sent".into(),
                Some(dport::CONTROLLER),
            ),
            DpAction::Group(g) if !matches!(next, Some(TraceEvent::Bucket { .. })) => self
                .drop(format!("group {g} took no bucket (no live bucket, or no such group)"), None),
            _ => {}
        }
    }

    fn why_no_output(&self, p: u32) -> String {
        let ports = &self.agent.ports;
        match p {
            dport::IN_PORT => {
                "output to IN_PORT: the packet has no input port to go back to".into()
            }
            dport::FLOOD | dport::ALL => {
                format!("output to {}: no other port may send it", port_name(p))
            }
            dport::CONTROLLER => "the input port has no_packet_in: no packet-in is sent".into(),
            _ if p == self.in_port => format!(
                "port {} is the input port: OpenFlow sends there only by output:IN_PORT",
                port_name(p)
            ),
            _ => match ports.get(p) {
                None => format!("port {} does not exist", port_name(p)),
                Some(d) if d.config & (port_config::NO_FWD | port_config::PORT_DOWN) != 0 => {
                    format!("port {} is down or has no_fwd", self.port_label(p))
                }
                Some(_) => format!("port {} sent nothing", self.port_label(p)),
            },
        }
    }

    /// The actions of bucket `bucket` of group `group`, in ovs-ofctl text.
    fn bucket_actions(&self, group: u32, bucket: usize) -> Option<String> {
        self.agent
            .groups
            .desc()
            .into_iter()
            .find(|g| g.group_id == group)
            .and_then(|g| g.buckets.get(bucket).map(|b| format_actions(&b.actions)))
    }

    fn result_line(&self, outputs: &[u32], normal: usize) -> String {
        let mut parts = Vec::new();
        if !outputs.is_empty() {
            let ports: Vec<String> = outputs.iter().map(|p| self.port_label(*p)).collect();
            let s = if ports.len() == 1 { "" } else { "s" };
            parts.push(format!("output to port{s} {}", ports.join(", ")));
        }
        if normal > 0 {
            parts.push("NORMAL (the learning switch decides)".into());
        }
        if !self.packet_ins.is_empty() {
            parts.push(format!("{} packet-in(s) to the controller", self.packet_ins.len()));
        }
        if parts.is_empty() {
            let why = if self.drops.is_empty() {
                "no output action".to_string()
            } else {
                self.drops.join("; ")
            };
            format!("Result: dropped ({why})")
        } else {
            format!("Result: {}", parts.join("; "))
        }
    }
}

/// The frame and input port of a `flow` request.
fn frame_of_flow(flow: &str) -> Result<(Vec<u8>, u32), Refusal> {
    let (rest, extra) = trace_fields(flow)?;
    let m = openflow::text::parse_match(&rest)
        .map_err(|e| Refusal { message: e.to_string(), column: Some(e.column()) })?;
    let mut fm: FlowMatch = match_to_flow(&m).map_err(|e| match e {
        TranslateError::Invalid(e) => Refusal::new(e.detail),
        other => Refusal::new(other.to_string()),
    })?;
    if fm.mask.get(Field::InPort) == 0 {
        return Err(Refusal::new("the flow needs in_port=N: the port the packet arrives on"));
    }
    for (f, v) in extra {
        fm.set(f, v, f.full());
    }
    let frame = compose(&fm).map_err(|e| Refusal::new(e.to_string()))?;
    Ok((frame, fm.key.get(Field::InPort) as u32))
}

/// Takes the fields a packet has but an OpenFlow 1.3 match cannot name (`nw_ttl`,
/// `tcp_flags`, `nw_frag`) out of flow text: the text with them blanked (so the match
/// parser's columns stay right) and their values.
fn trace_fields(flow: &str) -> Result<(String, Vec<(Field, u128)>), Refusal> {
    let mut rest = flow.to_string();
    let mut extra = Vec::new();
    let is_sep = |c: char| matches!(c, ',' | ' ' | '\t' | '\r' | '\n');
    let mut at = 0;
    for item in flow.split(is_sep) {
        let start = at;
        at += item.len() + 1;
        let Some((key, value)) = item.split_once(['=', ':']) else {
            continue;
        };
        let bad = |what: &str| Refusal {
            message: format!("at column {} ({item:?}): {what}", start + 1),
            column: Some(start + 1),
        };
        let fv = match key {
            "nw_ttl" => {
                let v: u8 = parse_num(value)
                    .and_then(|v| u8::try_from(v).ok())
                    .ok_or_else(|| bad("nw_ttl takes a number from 0 to 255"))?;
                (Field::IpTtl, u128::from(v))
            }
            "tcp_flags" => (
                Field::TcpFlags,
                tcp_flags(value).ok_or_else(|| {
                    bad("tcp_flags takes a number up to 0xfff or flags like +syn+ack")
                })?,
            ),
            "nw_frag" => {
                let v = match value {
                    "no" => 0,
                    "first" | "yes" => 1,
                    "later" => 3,
                    _ => return Err(bad("nw_frag takes no, first, later or yes")),
                };
                (Field::IpFrag, v)
            }
            _ => continue,
        };
        extra.push(fv);
        rest.replace_range(start..start + item.len(), &" ".repeat(item.len()));
    }
    Ok((rest, extra))
}

/// A decimal or `0x` hexadecimal number.
fn parse_num(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// `tcp_flags` as a number or as `+flag` / `-flag` names (Open vSwitch's names; a
/// `-flag` is a flag that is clear, which a packet has by default).
fn tcp_flags(s: &str) -> Option<u128> {
    const NAMES: [(&str, u16); 9] = [
        ("fin", 0x001),
        ("syn", 0x002),
        ("rst", 0x004),
        ("psh", 0x008),
        ("ack", 0x010),
        ("urg", 0x020),
        ("ece", 0x040),
        ("cwr", 0x080),
        ("ns", 0x100),
    ];
    if !s.starts_with(['+', '-']) {
        return parse_num(s).filter(|v| *v <= 0xfff).map(u128::from);
    }
    let mut v = 0u16;
    let mut rest = s;
    while !rest.is_empty() {
        let set = rest.starts_with('+');
        let body = rest.get(1..)?;
        let end = body.find(['+', '-']).unwrap_or(body.len());
        let bit = NAMES.iter().find(|(n, _)| *n == &body[..end])?.1;
        if set {
            v |= bit;
        }
        rest = &body[end..];
    }
    Some(v.into())
}

fn decode_hex(s: &str) -> Result<Vec<u8>, Refusal> {
    let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if digits.is_empty() {
        return Err(Refusal::new("the packet is empty"));
    }
    if !digits.len().is_multiple_of(2) {
        return Err(Refusal::new("the packet's hex has an odd number of digits"));
    }
    if digits.len() / 2 > MAX_FRAME {
        return Err(Refusal::new(format!(
            "the packet has {} bytes; at most {MAX_FRAME} can be traced",
            digits.len() / 2
        )));
    }
    digits
        .chunks_exact(2)
        .map(|p| {
            std::str::from_utf8(p).ok().and_then(|d| u8::from_str_radix(d, 16).ok()).ok_or_else(
                || {
                    Refusal::new(format!(
                        "the packet's hex has {:?}, which is not a hex byte",
                        String::from_utf8_lossy(p)
                    ))
                },
            )
        })
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A port number as ovs-ofctl writes it (`LOCAL`, `CONTROLLER`, ... for reserved ones).
fn port_name(p: u32) -> String {
    if p == port::CONTROLLER {
        return "CONTROLLER".into();
    }
    format_action(&Action::Output { port: p, max_len: 0 }).trim_start_matches("output:").to_string()
}

fn mac(v: u128) -> MacAddr {
    let b = (v as u64).to_be_bytes();
    MacAddr([b[2], b[3], b[4], b[5], b[6], b[7]])
}

/// The OXM that carries key field `f` = `v` in a packet whose key is `key` (which
/// decides between the fields that share a place: TCP/UDP/SCTP ports, IPv4/ARP
/// addresses, ICMPv4/v6, ARP/ND link-layer addresses). `None` for the fields no OXM
/// carries (TTL, TCP flags, fragment state) and ports of another protocol.
fn oxm_of(f: Field, v: u128, key: &DpKey) -> Option<Oxm> {
    let et = key.get(Field::EthType) as u16;
    let proto = key.get(Field::IpProto) as u8;
    Some(match f {
        Field::InPort => Oxm::InPort(v as u32),
        Field::InPhyPort => Oxm::InPhyPort(v as u32),
        Field::Metadata => Oxm::Metadata(v as u64, None),
        Field::TunnelId => Oxm::TunnelId(v as u64, None),
        Field::EthDst => Oxm::EthDst(mac(v), None),
        Field::EthSrc => Oxm::EthSrc(mac(v), None),
        Field::EthType => Oxm::EthType(v as u16),
        Field::VlanVid => Oxm::VlanVid(v as u16, None),
        Field::VlanPcp => Oxm::VlanPcp(v as u8),
        Field::IpDscp => Oxm::IpDscp(v as u8),
        Field::IpEcn => Oxm::IpEcn(v as u8),
        Field::IpProto => Oxm::IpProto(v as u8),
        Field::Ipv4Src if et == ethertype::ARP => Oxm::ArpSpa(Ipv4Addr::from(v as u32), None),
        Field::Ipv4Src => Oxm::Ipv4Src(Ipv4Addr::from(v as u32), None),
        Field::Ipv4Dst if et == ethertype::ARP => Oxm::ArpTpa(Ipv4Addr::from(v as u32), None),
        Field::Ipv4Dst => Oxm::Ipv4Dst(Ipv4Addr::from(v as u32), None),
        Field::TpSrc | Field::TpDst => {
            let src = f == Field::TpSrc;
            let v = v as u16;
            match (proto, src) {
                (6, true) => Oxm::TcpSrc(v),
                (6, false) => Oxm::TcpDst(v),
                (17, true) => Oxm::UdpSrc(v),
                (17, false) => Oxm::UdpDst(v),
                (132, true) => Oxm::SctpSrc(v),
                (132, false) => Oxm::SctpDst(v),
                _ => return None,
            }
        }
        Field::IcmpType if et == ethertype::IPV6 => Oxm::Icmpv6Type(v as u8),
        Field::IcmpType => Oxm::Icmpv4Type(v as u8),
        Field::IcmpCode if et == ethertype::IPV6 => Oxm::Icmpv6Code(v as u8),
        Field::IcmpCode => Oxm::Icmpv4Code(v as u8),
        Field::ArpOp => Oxm::ArpOp(v as u16),
        Field::ArpSha if et == ethertype::IPV6 => Oxm::Ipv6NdSll(mac(v)),
        Field::ArpSha => Oxm::ArpSha(mac(v), None),
        Field::ArpTha if et == ethertype::IPV6 => Oxm::Ipv6NdTll(mac(v)),
        Field::ArpTha => Oxm::ArpTha(mac(v), None),
        Field::Ipv6Src => Oxm::Ipv6Src(Ipv6Addr::from(v), None),
        Field::Ipv6Dst => Oxm::Ipv6Dst(Ipv6Addr::from(v), None),
        Field::Ipv6Flabel => Oxm::Ipv6Flabel(v as u32, None),
        Field::Ipv6NdTarget => Oxm::Ipv6NdTarget(Ipv6Addr::from(v)),
        Field::MplsLabel => Oxm::MplsLabel(v as u32),
        Field::MplsTc => Oxm::MplsTc(v as u8),
        Field::MplsBos => Oxm::MplsBos(v as u8),
        Field::PbbIsid => Oxm::PbbIsid(v as u32, None),
        Field::PbbUca => Oxm::PbbUca(v as u8),
        Field::Ipv6Exthdr => Oxm::Ipv6Exthdr(v as u16, None),
        Field::TcpFlags | Field::IpFrag | Field::IpTtl => return None,
    })
}

/// A packet's key in ovs-ofctl text: every field its protocols have (as `ofproto/trace`
/// prints a flow), then `nw_ttl`, `nw_frag` and `tcp_flags`, which a trace request
/// accepts back.
fn key_text(key: &DpKey) -> String {
    let et = key.get(Field::EthType) as u16;
    let proto = key.get(Field::IpProto) as u8;
    let frag = key.get(Field::IpFrag);
    let mut fields = vec![Field::InPort];
    for f in [Field::Metadata, Field::TunnelId] {
        if key.get(f) != 0 {
            fields.push(f);
        }
    }
    fields.extend([Field::EthSrc, Field::EthDst]);
    if key.get(Field::VlanVid) & 0x1000 != 0 {
        fields.extend([Field::VlanVid, Field::VlanPcp]);
    }
    fields.push(Field::EthType);
    let ip = et == ethertype::IPV4 || et == ethertype::IPV6;
    match et {
        ethertype::IPV4 => fields.extend([Field::Ipv4Src, Field::Ipv4Dst]),
        ethertype::IPV6 => {
            fields.extend([Field::Ipv6Src, Field::Ipv6Dst, Field::Ipv6Flabel]);
            if key.get(Field::Ipv6Exthdr) != 0 {
                fields.push(Field::Ipv6Exthdr);
            }
        }
        ethertype::ARP => fields.extend([
            Field::ArpOp,
            Field::Ipv4Src,
            Field::Ipv4Dst,
            Field::ArpSha,
            Field::ArpTha,
        ]),
        ethertype::MPLS | ethertype::MPLS_MCAST => {
            fields.extend([Field::MplsLabel, Field::MplsTc, Field::MplsBos])
        }
        ethertype::PBB => fields.extend([Field::PbbIsid, Field::PbbUca]),
        _ => {}
    }
    if ip {
        fields.extend([Field::IpProto, Field::IpDscp, Field::IpEcn]);
        if frag & 2 == 0 {
            match (proto, et) {
                (6 | 17 | 132, _) => fields.extend([Field::TpSrc, Field::TpDst]),
                (1, ethertype::IPV4) => fields.extend([Field::IcmpType, Field::IcmpCode]),
                (58, ethertype::IPV6) => {
                    fields.extend([Field::IcmpType, Field::IcmpCode]);
                    let ty = key.get(Field::IcmpType);
                    if (ty == 135 || ty == 136) && key.get(Field::IcmpCode) == 0 {
                        fields.push(Field::Ipv6NdTarget);
                        fields.push(if ty == 135 { Field::ArpSha } else { Field::ArpTha });
                    }
                }
                _ => {}
            }
        }
    }
    let oxms: Vec<Oxm> = fields.into_iter().filter_map(|f| oxm_of(f, key.get(f), key)).collect();
    let mut s = format_match(&Match::new(oxms));
    if ip {
        s.push_str(&format!(",nw_ttl={}", key.get(Field::IpTtl)));
        match frag {
            0 => {}
            1 => s.push_str(",nw_frag=first"),
            _ => s.push_str(",nw_frag=later"),
        }
        let flags = key.get(Field::TcpFlags);
        if proto == 6 && flags != 0 {
            s.push_str(&format!(",tcp_flags={flags:#x}"));
        }
    }
    s
}

/// A datapath action in ovs-ofctl text, `key` deciding the field names of a set-field.
fn action_text(a: &DpAction, key: &DpKey) -> String {
    let of = match *a {
        DpAction::Output(p) => Action::Output { port: p, max_len: 0 },
        DpAction::Controller { max_len } => Action::Output { port: port::CONTROLLER, max_len },
        DpAction::SetField(f, v) => match oxm_of(f, v, key) {
            Some(o) => Action::SetField(o),
            None => return format!("set_field:{v:#x}->{}", datapath::compose::field_name(f)),
        },
        DpAction::PushVlan(t) => Action::PushVlan(t),
        DpAction::PopVlan => Action::PopVlan,
        DpAction::PushMpls(t) => Action::PushMpls(t),
        DpAction::PopMpls(t) => Action::PopMpls(t),
        DpAction::SetMplsTtl(t) => Action::SetMplsTtl(t),
        DpAction::DecMplsTtl => Action::DecMplsTtl,
        DpAction::SetNwTtl(t) => Action::SetNwTtl(t),
        DpAction::DecNwTtl => Action::DecNwTtl,
        DpAction::CopyTtlOut => Action::CopyTtlOut,
        DpAction::CopyTtlIn => Action::CopyTtlIn,
        DpAction::PushPbb(t) => Action::PushPbb(t),
        DpAction::PopPbb => Action::PopPbb,
        DpAction::SetQueue(q) => Action::SetQueue(q),
        DpAction::Group(g) => Action::Group(g),
        DpAction::ModVlanVid(_) | DpAction::ModVlanPcp(_) | DpAction::SetFieldIfPresent(..) => {
            return conditional_text(a)
        }
    };
    format_action(&of)
}

/// OpenFlow 1.0's conditional rewrites in the words of ovs-ofctl's 1.0 actions
/// (`mod_vlan_vid:5`, `mod_nw_src:10.0.0.1`, `mod_tp_dst:80`, ...), with what they do to
/// a packet that lacks the header.
fn conditional_text(a: &DpAction) -> String {
    let ip = |v: u128| Ipv4Addr::from(v as u32);
    match *a {
        DpAction::ModVlanVid(v) => format!("mod_vlan_vid:{v} (pushes a tag if none)"),
        DpAction::ModVlanPcp(p) => format!("mod_vlan_pcp:{p} (pushes a tag if none)"),
        DpAction::SetFieldIfPresent(f, v) => {
            let what = match f {
                Field::Ipv4Src => format!("mod_nw_src:{}", ip(v)),
                Field::Ipv4Dst => format!("mod_nw_dst:{}", ip(v)),
                Field::IpDscp => format!("mod_nw_tos:{}", v << 2),
                Field::TpSrc => format!("mod_tp_src:{v}"),
                Field::TpDst => format!("mod_tp_dst:{v}"),
                _ => format!("set_field:{v:#x}->{}", datapath::compose::field_name(f)),
            };
            format!("{what} (if the packet has the header)")
        }
        _ => format!("{a:?}"),
    }
}

#[cfg(test)]
mod tests;
