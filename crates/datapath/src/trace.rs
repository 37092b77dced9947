//! The packet tracer: runs a frame through the published pipeline exactly as a worker
//! would (or a packet-out's actions on it, as the agent would), recording every step, without touching counters, meter buckets, the
//! exact-match cache or the packet-in queue (meters report what they would decide).

use crate::action::Action;
use crate::packet::Packet;
use crate::pipeline::exec::{Exec, Observer};
use crate::pipeline::{Datapath, Outputs, PacketIn, RuleId, RuleTable};

pub use crate::pipeline::event::TraceEvent;

/// Everything a traced packet went through.
#[derive(Debug, Default)]
pub struct Trace {
    /// The version traced against.
    pub version: u64,
    pub events: Vec<TraceEvent>,
    pub outputs: Outputs,
}

impl Trace {
    /// The actions executed from action sets, in order.
    pub fn set_actions(&self) -> Vec<Action> {
        self.events
            .iter()
            .filter_map(|e| match e {
                TraceEvent::SetAction(a) => Some(a.clone()),
                _ => None,
            })
            .collect()
    }

    /// The tables visited and the rule each matched.
    pub fn tables(&self) -> Vec<(u8, Option<RuleId>)> {
        self.events
            .iter()
            .filter_map(|e| match e {
                TraceEvent::Table { table, rule, .. } => Some((*table, rule.map(|r| r.0))),
                _ => None,
            })
            .collect()
    }

    pub fn packet_ins(&self) -> Vec<&PacketIn> {
        self.events
            .iter()
            .filter_map(|e| match e {
                TraceEvent::PacketIn(p) => Some(p),
                _ => None,
            })
            .collect()
    }
}

struct Recorder(Vec<TraceEvent>);

impl Observer for Recorder {
    const ON: bool = true;
    fn event(&mut self, e: TraceEvent) {
        self.0.push(e);
    }
}

impl<C: RuleTable> Datapath<C> {
    /// Traces `frame` received on `in_port` at `now_ns` through the published version.
    pub fn trace(&self, frame: &[u8], in_port: u32, now_ns: u64) -> Trace {
        self.trace_with(frame, in_port, now_ns, false)
    }

    /// [`trace`](Self::trace) with every meter passing the frame: the path a metered
    /// flow's conforming frames take.
    pub(crate) fn trace_passing_meters(&self, frame: &[u8], in_port: u32, now_ns: u64) -> Trace {
        self.trace_with(frame, in_port, now_ns, true)
    }

    fn trace_with(&self, frame: &[u8], in_port: u32, now_ns: u64, meters_pass: bool) -> Trace {
        self.recorded(now_ns, |exec| {
            exec.meters_pass = meters_pass;
            exec.run(Packet::from_slice(frame), in_port, None);
        })
    }

    /// The trace of what `f` does with an executor on the published version at
    /// `now_ns` that counts nothing and records every step.
    fn recorded(&self, now_ns: u64, f: impl FnOnce(&mut Exec<'_, C, Recorder>)) -> Trace {
        let v = self.shared.read();
        let mut rec = Recorder(Vec::new());
        let mut outputs = Outputs::new();
        let mut exec = Exec::new(&v, &self.shared.live, None, None, now_ns, &mut outputs, &mut rec);
        f(&mut exec);
        Trace { version: v.version, events: rec.0, outputs }
    }

    /// Traces a packet-out of `frame` with input port `in_port` and action list
    /// `actions` (see [`Batch::packet_out`](crate::pipeline::Batch::packet_out)): each
    /// action shows as [`TraceEvent::Apply`]; an `Output(TABLE)` is followed by the
    /// pipeline's steps for the packet it sends there.
    pub fn trace_packet_out(
        &self,
        frame: &[u8],
        in_port: u32,
        actions: &[Action],
        now_ns: u64,
    ) -> Trace {
        self.recorded(now_ns, |exec| exec.packet_out(Packet::from_slice(frame), in_port, actions))
    }
}
