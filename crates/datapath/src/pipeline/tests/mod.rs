//! Pipeline tests. They run with a model of the header rewrites ([`model_rewrite`]) that
//! changes only the flow key, so that they test the pipeline's own logic whatever the
//! state of `crate::rewrite`.

mod cache_prop;
mod forwarding;
mod groups_meters;
mod packet_out;
mod versions;

use std::sync::mpsc::Receiver;

use super::*;
use crate::action::Action;
use crate::key::{Field, FlowKey, FlowMatch};
use crate::packet::{Layers, Packet};
use crate::rewrite::RewriteError;
use crate::trace::{Trace, TraceEvent};

/// An ethertype no parser interprets, so frames parse the same with any parser.
pub const ETH_TEST: u16 = 0x88b5;

/// Rewrites the key only: set-field sets, TTL actions on `IpTtl`, VLAN push/pop on
/// `VlanVid`; everything else is accepted unchanged.
pub fn model_rewrite(
    _: &mut Packet,
    key: &mut FlowKey,
    _: &mut Layers,
    a: &Action,
) -> Result<(), RewriteError> {
    match *a {
        Action::SetField(f, v) => key.set(f, v),
        Action::SetNwTtl(t) => key.set(Field::IpTtl, t as u128),
        Action::DecNwTtl => {
            let t = key.get(Field::IpTtl);
            if t <= 1 {
                return Err(RewriteError::InvalidTtl);
            }
            key.set(Field::IpTtl, t - 1);
        }
        Action::PushVlan(_) => key.set(Field::VlanVid, 0x1000 | (key.get(Field::VlanVid) & 0xfff)),
        Action::PopVlan => {
            if key.get(Field::VlanVid) == 0 {
                return Err(RewriteError::MissingHeader);
            }
            key.set(Field::VlanVid, 0)
        }
        Action::Output(_) | Action::Controller { .. } | Action::Group(_) | Action::SetQueue(_) => {
            return Err(RewriteError::NotARewrite)
        }
        _ => {}
    }
    Ok(())
}

/// Ports 1..=n in slots 0..n, the model rewriter.
pub fn config(n: u32) -> DatapathConfig {
    DatapathConfig {
        ports: (1..=n).map(|i| PortInfo::new(i, (i - 1) as u16)).collect(),
        rewrite: model_rewrite,
        ..DatapathConfig::default()
    }
}

pub fn datapath(c: DatapathConfig) -> (Datapath, Writer, Receiver<PacketIn>) {
    Datapath::new(c, 64)
}

/// An Ethernet frame of 64 bytes.
pub fn frame(dst: u64, src: u64) -> Vec<u8> {
    let mut f = Vec::with_capacity(64);
    f.extend_from_slice(&dst.to_be_bytes()[2..]);
    f.extend_from_slice(&src.to_be_bytes()[2..]);
    f.extend_from_slice(&ETH_TEST.to_be_bytes());
    f.resize(64, 0xa5);
    f
}

pub fn ins() -> Instructions {
    Instructions::default()
}

pub fn apply(actions: Vec<Action>) -> Instructions {
    Instructions { apply: actions, ..Instructions::default() }
}

/// A rule of `m` at `priority` that outputs to `port`.
pub fn output_rule(m: FlowMatch, priority: u16, port: u32) -> Rule {
    Rule::new(m, priority, apply(vec![Action::Output(port)]))
}

pub fn on_port(p: u32) -> FlowMatch {
    FlowMatch::ANY.exact(Field::InPort, p as u128)
}

/// A trace's events, each as a short line (the rule found, not which one).
pub fn trace_steps(t: &Trace) -> Vec<String> {
    t.events
        .iter()
        .map(|e| match e {
            TraceEvent::Parsed { .. } => "parsed".into(),
            TraceEvent::Table { table, rule, .. } => format!("table{table}:{}", rule.is_some()),
            TraceEvent::Apply(a) => format!("apply {a:?}"),
            TraceEvent::ClearActions => "clear".into(),
            TraceEvent::WriteActions(_) => "write".into(),
            TraceEvent::WriteMetadata(m) => format!("metadata {m:#x}"),
            TraceEvent::Goto(t) => format!("goto {t}"),
            TraceEvent::ActionSet(s) => format!("set {s:?}"),
            TraceEvent::SetAction(a) => format!("exec {a:?}"),
            TraceEvent::Output { port, queue } => format!("out {port} {queue:?}"),
            TraceEvent::PacketIn(p) => format!("packet-in {}", p.max_len),
            other => format!("{other:?}"),
        })
        .collect()
}

/// Processes one frame and returns what came out.
pub fn run(dp: &Datapath, w: &mut WorkerState, f: &[u8], in_port: u32, now: u64) -> Outputs {
    let mut out = Outputs::new();
    dp.process(w, Packet::from_slice(f), in_port, now, &mut out);
    out
}
