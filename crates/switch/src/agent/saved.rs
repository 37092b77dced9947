//! The switch's tables as saved across a restart: every meter, group and flow entry as
//! the OpenFlow 1.3 message that recreates it (`OFPT_METER_MOD`, `OFPT_GROUP_MOD`,
//! `OFPT_FLOW_MOD`, each an add), in that order, so that a flow finds the groups and
//! meters it names. Flow entries keep their match, priority, cookie, timeouts (which
//! count again from the restore), flags and instructions; counters start again from
//! zero. The fail-open rule is not a flow entry and is not saved.
//!
//! [`Agent::saved_tables`] writes them as one byte string of messages;
//! [`Agent::restore_tables`] applies such a string, as a controller's requests would be
//! applied, and says what it could not apply.

use openflow::framing::Framer;
use openflow::v13::flow_mod::{FlowMod, FlowModCommand, OFP_NO_BUFFER};
use openflow::v13::group_mod::{GroupMod, GroupModCommand};
use openflow::v13::meter_mod::{MeterMod, MeterModCommand};
use openflow::{v13, Frame, Message};

use super::Agent;

/// What a restore did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Restored {
    pub flows: usize,
    pub groups: usize,
    pub meters: usize,
    /// Each message that could not be applied, and why.
    pub errors: Vec<String>,
}

impl Agent {
    /// Every meter, group and flow entry as OpenFlow 1.3 add messages, encoded one after
    /// another (see the module comment).
    pub fn saved_tables(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut put = |m: v13::Message| {
            // Each came as one message, so it fits one again.
            if let Ok(b) = Frame::v13(0, m).encode() {
                out.extend_from_slice(&b);
            }
        };
        for c in self.meters.config(v13::meter_mod::OFPM_ALL) {
            put(v13::Message::MeterMod(MeterMod {
                command: MeterModCommand::Add,
                flags: c.flags,
                meter_id: c.meter_id,
                bands: c.bands,
            }));
        }
        for g in self.groups.desc() {
            put(v13::Message::GroupMod(GroupMod {
                command: GroupModCommand::Add,
                group_type: g.group_type,
                group_id: g.group_id,
                buckets: g.buckets,
            }));
        }
        for (table_id, k, e) in self.flows.flows().iter() {
            put(v13::Message::FlowMod(FlowMod {
                cookie: e.cookie,
                table_id,
                command: FlowModCommand::Add,
                idle_timeout: e.idle_timeout,
                hard_timeout: e.hard_timeout,
                priority: e.priority,
                buffer_id: OFP_NO_BUFFER,
                flags: e.flags,
                match_: e.match_(k),
                instructions: e.instructions.to_vec(),
                ..FlowMod::default()
            }));
        }
        out
    }

    /// Applies saved tables (as [`Agent::saved_tables`] wrote them) at `now`. A group
    /// that names a group saved after it is applied once that one is. Bytes that are
    /// not such messages end the restore with an error; the rest is still applied.
    pub fn restore_tables(&mut self, bytes: &[u8], now: u64) -> Restored {
        let mut r = Restored::default();
        let mut framer = Framer::new();
        framer.push(bytes);
        let (mut meters, mut groups, mut flows) = (Vec::new(), Vec::new(), Vec::new());
        loop {
            match framer.next_message() {
                Ok(Some(b)) => match Frame::decode_validated(b) {
                    Ok(Frame { message: Message::V13(m), .. }) => match m {
                        v13::Message::MeterMod(m) => meters.push(m),
                        v13::Message::GroupMod(g) => groups.push(g),
                        v13::Message::FlowMod(f) => flows.push(f),
                        other => r.errors.push(format!(
                            "a saved message is not a meter, group or flow: {other:?}"
                        )),
                    },
                    Ok(_) => r.errors.push("a saved message is not OpenFlow 1.3".into()),
                    Err(e) => r.errors.push(format!("a saved message is damaged: {e}")),
                },
                Ok(None) => break,
                Err(e) => {
                    r.errors.push(format!("the saved tables are cut short: {e}"));
                    break;
                }
            }
        }
        if framer.pending() > 0 {
            r.errors.push(format!(
                "the saved tables end in {} bytes of a message cut short",
                framer.pending()
            ));
        }
        for m in meters {
            match self.meter_mod(&m, now) {
                Ok(()) => r.meters += 1,
                Err(e) => r.errors.push(format!("meter {}: {e}", m.meter_id)),
            }
        }
        // Groups in passes: one that names a group not yet back waits for the next.
        let mut left = groups;
        loop {
            let before = left.len();
            let mut failed = Vec::new();
            for g in left {
                match self.group_mod(&g, now) {
                    Ok(()) => r.groups += 1,
                    Err(e) => failed.push((g, e)),
                }
            }
            if failed.is_empty() || failed.len() == before {
                for (g, e) in failed {
                    r.errors.push(format!("group {}: {e}", g.group_id));
                }
                break;
            }
            left = failed.into_iter().map(|(g, _)| g).collect();
        }
        for f in flows {
            match self.flow_mod_unpublished(&f, now) {
                Ok(()) => r.flows += 1,
                Err(e) => r
                    .errors
                    .push(format!("flow in table {} priority {}: {e}", f.table_id, f.priority)),
            }
        }
        self.publish();
        r
    }
}
