//! `replace-flows SWITCH FILE` (ovs-ofctl's): makes the switch's flow tables hold the
//! flows of FILE and nothing else, sending only the differences.
//!
//! A flow is known by its table, priority and match (compared as the switch compares
//! them: [`NormMatch`], so field order and mask spelling do not matter). The file is
//! read and checked first (a bad line stops the run with `FILE:LINE:`; a line may
//! start with `add` but with no other command word); where two lines have the same
//! key the later one counts, as in ovs-ofctl. Then the switch's flows are dumped (every
//! table) and compared one reply part at a time, so that only the file's flows and the
//! deletions to come are held, never the whole dump:
//! - a switch flow whose key is not in the file gets a strict delete;
//! - a file flow the switch lacks, or has with other actions (instructions, compared
//!   as a set: their order in the list does not matter), cookie, timeouts or (1.4)
//!   importance, gets an add, which replaces the switch's; with `--readd` every file
//!   flow gets one. Flags are not compared (as ovs-ofctl, which cannot read them back
//!   over 1.0) and an add keeps only the file's `send_flow_rem`.
//!
//! Deletions go first, then additions in file order, on the connection that dumped the
//! flows; with `--bundle` all of them in one bundle, so the tables change at once.
//! Over OpenFlow 1.0, which has no tables, the file's flows are table 0's; a strict
//! delete reaches every table, so one that also removes a file flow's key from table 0
//! makes that flow be added again.

use std::collections::HashMap;

use openflow::model::{Actions, FlowEntry};
use openflow::v10::Action as A10;
use openflow::v10::Message as M10;
use openflow::v13::flow_mod::{flow_mod_flags as ff, FlowMod, FlowModCommand, OFPTT_ALL};
use openflow::v13::multipart::MultipartReplyBody as R13;
use openflow::v13::Message as M13;
use openflow::{Frame, Message, OFP10_VERSION, OFP14_VERSION};
use switch::flows::NormMatch;

use super::modify::{flow_msg, send_on};
use super::parse_flow_arg;
use super::query::flow_request;
use crate::compat10;
use crate::flow_file;
use crate::{CtlError, Ctx};
use openflow::instruction::Instruction;
use openflow::v10::stats::StatsReplyBody as R10;

/// What identifies a flow: its table, priority and normalised match.
type Key = (u8, u16, NormMatch);

/// One flow of the file and what the switch was found to hold under its key.
#[derive(Debug)]
struct Wanted {
    line: usize,
    flow: FlowMod,
    /// Over 1.0: the flow's actions in 1.0's form (what a 1.0 dump shows).
    actions10: Option<Vec<A10>>,
    /// A later line has the same key: this one is not sent.
    superseded: bool,
    /// The switch holds this flow as the file says (and nothing deletes it).
    present: bool,
    /// Over 1.0: a strict delete of another table's flow removes this key too.
    clobbered: bool,
}

/// The comparison of a file's flows with a switch's (module comment): fed the
/// switch's flows one by one ([`Diff::see`]), it gives the flow-mods to send
/// ([`Diff::plan`]).
#[derive(Debug)]
pub struct Diff {
    version: u8,
    readd: bool,
    wanted: Vec<Wanted>,
    by_key: HashMap<Key, usize>,
    deletes: Vec<FlowMod>,
}

impl Diff {
    /// The diff for the flows of `file` (its numbered lines, parsed as adds) over a
    /// connection of `version`; an error names the line.
    pub fn new(
        version: u8,
        readd: bool,
        file: &str,
        flows: Vec<(usize, FlowMod)>,
    ) -> Result<Diff, String> {
        let mut d = Diff {
            version,
            readd,
            wanted: Vec::new(),
            by_key: HashMap::new(),
            deletes: Vec::new(),
        };
        for (line, mut flow) in flows {
            let at = |e: String| format!("{file}:{line}: {e}");
            if flow.command != FlowModCommand::Add {
                return Err(at("replace-flows reads flows, not commands: a line may not \
                               start with modify, modify_strict, delete or delete_strict"
                    .into()));
            }
            if flow.table_id == OFPTT_ALL {
                flow.table_id = 0;
            }
            flow.flags &= ff::SEND_FLOW_REM;
            let (norm, actions10) = if version == OFP10_VERSION {
                let f10 = compat10::flow_mod10(&flow).map_err(at)?;
                (NormMatch::new(&f10.match_.to_oxm()), Some(f10.instructions))
            } else {
                (NormMatch::new(&flow.match_), None)
            };
            let key = (flow.table_id, flow.priority, norm);
            let w = Wanted {
                line,
                flow,
                actions10,
                superseded: false,
                present: false,
                clobbered: false,
            };
            d.wanted.push(w);
            if let Some(old) = d.by_key.insert(key, d.wanted.len() - 1) {
                d.wanted[old].superseded = true;
            }
        }
        Ok(d)
    }

    /// Takes one of the switch's flows into account.
    pub fn see(&mut self, e: &FlowEntry) {
        let norm = NormMatch::new(&e.match_);
        if self.version == OFP10_VERSION && e.table_id != 0 {
            if let Some(&i) = self.by_key.get(&(0, e.priority, norm.clone())) {
                self.wanted[i].clobbered = true;
            }
        }
        match self.by_key.get(&(e.table_id, e.priority, norm)) {
            Some(&i) => {
                let w = &mut self.wanted[i];
                w.present = !self.readd && same(self.version, w, e);
            }
            None => self.deletes.push(FlowMod {
                command: FlowModCommand::DeleteStrict,
                // A 1.0 flow-mod names no table (and reaches them all).
                table_id: if self.version == OFP10_VERSION { OFPTT_ALL } else { e.table_id },
                priority: e.priority,
                match_: e.match_.clone(),
                ..FlowMod::default()
            }),
        }
    }

    /// The flow-mods to send, each with its file line (none for deletions): the
    /// deletions, then the additions in file order.
    pub fn plan(self) -> Vec<(Option<usize>, FlowMod)> {
        let deletes = self.deletes.into_iter().map(|f| (None, f));
        let adds = self
            .wanted
            .into_iter()
            .filter(|w| !w.superseded && (!w.present || w.clobbered))
            .map(|w| (Some(w.line), w.flow));
        deletes.chain(adds).collect()
    }
}

/// Whether switch flow `e` is file flow `w` (same key assumed): same cookie, timeouts,
/// importance (1.4) and actions.
fn same(version: u8, w: &Wanted, e: &FlowEntry) -> bool {
    let f = &w.flow;
    let actions = match &e.instructions {
        Actions::V13(i) => normal(i) == normal(&f.instructions),
        Actions::V10(a) => w.actions10.as_ref() == Some(a),
    };
    f.cookie == e.cookie
        && f.idle_timeout == e.idle_timeout
        && f.hard_timeout == e.hard_timeout
        && (version < OFP14_VERSION || f.importance == e.importance)
        && actions
}

/// An instruction list in a form where equal effect is equal value: in the order the
/// switch carries them out (OpenFlow 1.3 §5.9), action lists that do nothing dropped.
fn normal(list: &[Instruction]) -> Vec<&Instruction> {
    let mut v: Vec<&Instruction> = list
        .iter()
        .filter(|i| !matches!(i, Instruction::ApplyActions(a) | Instruction::WriteActions(a) if a.is_empty()))
        .collect();
    v.sort_by_key(|i| i.execution_rank());
    v
}

/// The flow entries of one reply part.
fn entries(f: &Frame) -> Vec<FlowEntry> {
    match &f.message {
        Message::V13(M13::MultipartReply(r)) => match &r.body {
            R13::Flow(fs) => fs.iter().map(FlowEntry::from_v13).collect(),
            _ => Vec::new(),
        },
        Message::V10(M10::StatsReply(r)) => match &r.body {
            R10::Flow(fs) => fs.iter().map(FlowEntry::from_v10).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// `replace-flows SWITCH FILE` (module comment).
pub fn replace_flows(ctx: &Ctx, file: &str) -> Result<(), CtlError> {
    let lines = flow_file::read_lines(file).map_err(CtlError::Fatal)?;
    let flows =
        flow_file::parse_flows(file, &lines, FlowModCommand::Add).map_err(CtlError::Fatal)?;
    drop(lines);
    let mut c = ctx.open()?;
    let mut diff = Diff::new(c.version, ctx.readd, file, flows).map_err(CtlError::Fatal)?;
    let all = parse_flow_arg("", FlowModCommand::Delete).map_err(CtlError::Fatal)?;
    let req = c.frame(flow_request(c.version, &all, false)?);
    c.dump_each(req, |f| {
        entries(f).iter().for_each(|e| diff.see(e));
        Ok(())
    })?;
    send_on(ctx, &mut c, Some(file), &diff.plan(), flow_msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use openflow::OFP13_VERSION;

    fn file(text: &str) -> Vec<(usize, FlowMod)> {
        let lines = flow_file::split_lines(text.as_bytes()).unwrap();
        flow_file::parse_flows("f", &lines, FlowModCommand::Add).unwrap()
    }

    /// A switch flow entry as a 1.3 dump would show it.
    fn entry(text: &str) -> FlowEntry {
        let fm = openflow::text::parse_flow_mod(text, FlowModCommand::Add).unwrap();
        FlowEntry {
            table_id: fm.table_id,
            duration_sec: 5,
            duration_nsec: 0,
            priority: fm.priority,
            idle_timeout: fm.idle_timeout,
            hard_timeout: fm.hard_timeout,
            flags: 0,
            importance: fm.importance,
            cookie: fm.cookie,
            packet_count: 9,
            byte_count: 900,
            match_: fm.match_,
            instructions: Actions::V13(fm.instructions),
        }
    }

    /// The plan as `(line or "del", command, priority)`.
    fn summary(plan: &[(Option<usize>, FlowMod)]) -> Vec<(String, FlowModCommand, u16)> {
        plan.iter()
            .map(|(l, f)| (l.map_or("del".into(), |n| n.to_string()), f.command, f.priority))
            .collect()
    }

    #[test]
    fn deletes_extra_flows_adds_missing_and_changed_ones_keeps_equal_ones() {
        let mut d = Diff::new(
            OFP13_VERSION,
            false,
            "f",
            file(
                "priority=10,ip,nw_dst=10.0.0.1,actions=output:1\n\
                 priority=20,in_port=1,actions=output:2\n\
                 # a comment\n\
                 priority=30,cookie=0x5,in_port=2,actions=output:1\n\
                 table=1,priority=40,actions=drop\n",
            ),
        )
        .unwrap();
        // Same flow, fields in another order and a full mask: nothing to do.
        d.see(&entry("priority=10,nw_dst=10.0.0.1/32,ip,actions=output:1"));
        // Other actions: re-added.
        d.see(&entry("priority=20,in_port=1,actions=output:3"));
        // Other cookie: re-added.
        d.see(&entry("priority=30,cookie=0x6,in_port=2,actions=output:1"));
        // Not in the file: another priority, and the same flow in another table.
        d.see(&entry("priority=11,ip,nw_dst=10.0.0.1,actions=output:1"));
        d.see(&entry("table=2,priority=10,ip,nw_dst=10.0.0.1,actions=output:1"));
        let plan = d.plan();
        assert_eq!(
            summary(&plan),
            vec![
                ("del".into(), FlowModCommand::DeleteStrict, 11),
                ("del".into(), FlowModCommand::DeleteStrict, 10),
                ("2".into(), FlowModCommand::Add, 20),
                ("4".into(), FlowModCommand::Add, 30),
                ("5".into(), FlowModCommand::Add, 40),
            ]
        );
        // The deletes name the switch's flow exactly, in its table; adds keep theirs.
        let del = &plan[1].1;
        assert_eq!(
            (del.table_id, del.out_port, del.cookie_mask),
            (2, openflow::action::port::ANY, 0)
        );
        assert_eq!(del.match_, entry("table=2,ip,nw_dst=10.0.0.1,actions=drop").match_);
        assert!(del.instructions.is_empty());
        assert_eq!(plan[4].1.table_id, 1);
        assert_eq!(plan[3].1.cookie, 5);
    }

    #[test]
    fn timeouts_importance_and_instruction_order() {
        let text = "priority=1,idle_timeout=10,actions=output:1\n\
                    priority=2,actions=output:1\n\
                    priority=3,actions=output:2,write_metadata:0x1/0xff,goto_table:3\n\
                    priority=4,actions=drop\n";
        // A switch may hold instructions in another order (the text parser keeps
        // OpenFlow's): priority 3's come reversed. And an empty apply-actions is no
        // instruction: priority 4's "drop" comes as one. (The text parser reads no
        // importance: "importance=N" on the switch's side is set here.)
        let seen = |s: &str| {
            let mut e = entry(s);
            if let Some(n) = s.split(',').find_map(|f| f.strip_prefix("importance=")) {
                e.importance = n.parse().unwrap();
            }
            match (e.priority, &mut e.instructions) {
                (3, Actions::V13(i)) => i.reverse(),
                (4, Actions::V13(i)) if i.is_empty() => i.push(Instruction::ApplyActions(vec![])),
                _ => {}
            }
            e
        };
        let plan = |version, readd, switch: &[&str]| {
            let mut d = Diff::new(version, readd, "f", file(text)).unwrap();
            switch.iter().for_each(|s| d.see(&seen(s)));
            summary(&d.plan())
        };
        let same = [
            "priority=1,idle_timeout=10,actions=output:1",
            "priority=2,actions=output:1",
            "priority=3,actions=output:2,write_metadata:0x1/0xff,goto_table:3",
            "priority=4,actions=drop",
        ];
        assert_eq!(plan(OFP14_VERSION, false, &same), vec![]);
        // --readd adds everything again.
        assert_eq!(plan(OFP14_VERSION, true, &same).len(), 4);
        let other = [
            "priority=1,idle_timeout=11,actions=output:1",
            "priority=2,importance=8,actions=output:1",
            "priority=3,actions=output:2,write_metadata:0x1/0xff,goto_table:4",
            "priority=4,hard_timeout=5,actions=drop",
        ];
        let lines = |v| plan(v, false, &other).into_iter().map(|p| p.0).collect::<Vec<_>>();
        assert_eq!(lines(OFP14_VERSION), ["1", "2", "3", "4"]);
        // 1.3 has no importance to compare.
        assert_eq!(lines(OFP13_VERSION), ["1", "3", "4"]);
    }

    #[test]
    fn later_lines_win_and_commands_are_refused() {
        let two = "priority=5,ip,actions=output:1\npriority=5,ip,actions=output:2\n";
        let mut d = Diff::new(OFP13_VERSION, false, "f", file(two)).unwrap();
        d.see(&entry("priority=5,ip,actions=output:2"));
        assert_eq!(d.plan().len(), 0, "the second line is what the switch has");
        let d = Diff::new(OFP13_VERSION, false, "f", file(two)).unwrap();
        assert_eq!(summary(&d.plan()), vec![("2".into(), FlowModCommand::Add, 5)]);

        let cmds = file("ip,actions=drop\ndelete ip\n");
        let e = Diff::new(OFP13_VERSION, false, "flows.txt", cmds).unwrap_err();
        assert!(e.starts_with("flows.txt:2: replace-flows reads flows, not commands"), "{e}");
        // Flags other than send_flow_rem are not sent.
        let flags = file("priority=5,ip,check_overlap,send_flow_rem,actions=drop\n");
        let d = Diff::new(OFP13_VERSION, false, "f", flags).unwrap();
        assert_eq!(d.plan()[0].1.flags, ff::SEND_FLOW_REM);
    }

    #[test]
    fn over_10_compares_10_actions_and_re_adds_what_a_delete_reaches() {
        let text = "priority=5,in_port=1,actions=mod_vlan_vid:5,output:2\n\
                    priority=6,in_port=2,actions=output:1\n";
        // A 1.0 dump's entry, in `table`.
        let v10 = |text: &str, table: u8| {
            let fm = openflow::text::parse_flow_mod(text, FlowModCommand::Add).unwrap();
            let fm = compat10::flow_mod10(&fm).unwrap();
            FlowEntry {
                table_id: table,
                match_: fm.match_.to_oxm(),
                instructions: Actions::V10(fm.instructions),
                ..entry(text)
            }
        };
        let mut d = Diff::new(OFP10_VERSION, false, "f", file(text)).unwrap();
        d.see(&v10("priority=5,in_port=1,actions=mod_vlan_vid:5,output:2", 0));
        d.see(&v10("priority=6,in_port=2,actions=output:1", 0));
        assert_eq!(d.plan().len(), 0);
        // The same key in table 1 is deleted, which takes table 0's too: added again.
        let mut d = Diff::new(OFP10_VERSION, false, "f", file(text)).unwrap();
        d.see(&v10("priority=5,in_port=1,actions=mod_vlan_vid:5,output:2", 0));
        d.see(&v10("priority=6,in_port=2,actions=output:1", 0));
        d.see(&v10("priority=6,in_port=2,actions=output:1", 1));
        let plan = d.plan();
        assert_eq!(
            summary(&plan),
            vec![
                ("del".into(), FlowModCommand::DeleteStrict, 6),
                ("2".into(), FlowModCommand::Add, 6)
            ]
        );
        // Both go out as 1.0 flow-mods.
        for (_, f) in &plan {
            let m = flow_msg(OFP10_VERSION, f).unwrap();
            assert!(matches!(m, Message::V10(M10::FlowMod(_))), "{m:?}");
        }
        // What 1.0 cannot say is refused with its line.
        let e =
            Diff::new(OFP10_VERSION, false, "f", file("ip,actions=drop\ntable=1,actions=drop\n"))
                .unwrap_err();
        assert!(e.starts_with("f:2: table=1"), "{e}");
    }
}
