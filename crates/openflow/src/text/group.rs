//! Groups in ovs-ofctl text: `add-group`/`mod-group`/`del-groups` syntax to [`GroupMod`],
//! and [`GroupMod`]s back to the lines `ovs-ofctl -O OpenFlow13 dump-groups` prints, e.g.
//! `group_id=1,type=select,bucket=weight:10,watch_port:1,actions=output:1`.
//!
//! A bucket is everything from one `bucket=` to the next. Its `weight:`, `watch_port:`,
//! `watch_group:` settings come first; then either `actions=` followed by the actions, or
//! (Open vSwitch's older form) the actions directly: `bucket=output:1,mod_dl_src:...`.
//! Defaults follow Open vSwitch: weight 1 in select groups (0 elsewhere; only select
//! groups may set one), watch port and group `ANY`. Printing omits what is default.

use super::action::{format_actions, parse_action_items, ActState};
use super::error::{Span, TextError};
use super::flow::parse_group_id;
use super::lexer::{Item, Lexer};
use super::value::*;
use crate::action::{port, OFPG_ALL, OFPG_ANY};
use crate::v13::group_mod::{Bucket, GroupMod, GroupModCommand, GroupType};

const GROUP_TYPES: [(&str, GroupType); 5] = [
    ("all", GroupType::All),
    ("select", GroupType::Select),
    ("indirect", GroupType::Indirect),
    ("ff", GroupType::FastFailover),
    ("fast_failover", GroupType::FastFailover),
];

/// Parses a group in the syntax of `add-group` (`Add`), `mod-group` (`Modify`) or
/// `del-groups` (`Delete`: only `group_id`, default `all`).
pub fn parse_group_mod(s: &str, command: GroupModCommand) -> Result<GroupMod, TextError> {
    let whole = Span::new(s, 0);
    if let GroupModCommand::Unknown(n) = command {
        return Err(whole.err(format!("group-mod command {n} has no ovs-ofctl syntax")));
    }
    let is_del = command == GroupModCommand::Delete;
    let items = Lexer::new(whole).collect_all()?;
    let mut gm =
        GroupMod { command, group_type: GroupType::All, group_id: OFPG_ALL, buckets: Vec::new() };
    let (mut have_id, mut have_type) = (false, false);
    let mut buckets: Vec<Vec<Item<'_>>> = Vec::new();
    for it in &items {
        match it.key.text {
            "bucket" => {
                if is_del {
                    return Err(it.err("del-groups takes no buckets"));
                }
                let mut b = Vec::new();
                if let Some(v) = it.value {
                    b.extend(Lexer::new(v).collect_all()?);
                }
                buckets.push(b);
            }
            _ if !buckets.is_empty() => {
                if let Some(b) = buckets.last_mut() {
                    b.push(*it);
                }
            }
            "group_id" => {
                gm.group_id = parse_group_id(it.need_value()?)?;
                have_id = true;
            }
            "type" => {
                if is_del {
                    return Err(it.err("del-groups takes no type"));
                }
                let v = it.need_value()?;
                gm.group_type = match GROUP_TYPES.iter().find(|(n, _)| *n == v.text) {
                    Some(&(_, t)) => t,
                    None => GroupType::from_u8(parse_num(v, 255, "group type").map_err(|_| {
                        v.err(format!(
                            "unknown group type \"{}\" (all, select, indirect, ff)",
                            v.text
                        ))
                    })? as u8),
                };
                have_type = true;
            }
            "selection_method" | "selection_method_param" | "fields" | "command_bucket_id" => {
                return Err(it.err(format!(
                    "{} is an OpenFlow 1.5 / Open vSwitch extension that OpenFlow 1.3 \
                     cannot express",
                    it.key.text
                )))
            }
            k => return Err(it.err(format!("unknown group keyword \"{k}\""))),
        }
    }
    if !is_del {
        if !have_id {
            return Err(whole.slice(0, 0).err("a group needs group_id=N"));
        }
        if !have_type {
            return Err(whole
                .slice(0, 0)
                .err("a group needs type=all, type=select, type=indirect or type=ff"));
        }
    }
    for b in buckets {
        gm.buckets.push(parse_bucket(&b, gm.group_type)?);
    }
    Ok(gm)
}

fn parse_bucket(items: &[Item<'_>], gt: GroupType) -> Result<Bucket, TextError> {
    let mut b = Bucket {
        weight: if gt == GroupType::Select { 1 } else { 0 },
        watch_port: port::ANY,
        watch_group: OFPG_ANY,
        actions: Vec::new(),
    };
    let mut acts: Vec<Item<'_>> = Vec::new();
    let mut in_actions = false;
    for it in items {
        if in_actions {
            acts.push(*it);
            continue;
        }
        match it.key.text {
            "weight" => {
                if gt != GroupType::Select {
                    return Err(it.err("only select groups can have bucket weights"));
                }
                b.weight = parse_num(it.need_value()?, 0xffff, "weight")? as u16;
            }
            "watch_port" => b.watch_port = parse_port(it.need_value()?)?,
            "watch_group" => b.watch_group = parse_group_id(it.need_value()?)?,
            "bucket_id" => {
                return Err(it.err(
                    "bucket_id is an OpenFlow 1.5 extension that OpenFlow 1.3 cannot express",
                ))
            }
            "actions" | "action" => {
                in_actions = true;
                if let Some(v) = it.value {
                    acts.extend(Lexer::new(v).collect_all()?);
                }
            }
            _ => acts.push(*it),
        }
    }
    let mut st = ActState::default();
    b.actions = parse_action_items(&acts, &mut st)?;
    Ok(b)
}

fn type_name(t: GroupType) -> String {
    match t {
        GroupType::All => "all".into(),
        GroupType::Select => "select".into(),
        GroupType::Indirect => "indirect".into(),
        GroupType::FastFailover => "ff".into(),
        GroupType::Unknown(n) => n.to_string(),
    }
}

fn format_group_id(g: u32) -> String {
    match g {
        OFPG_ALL => "all".into(),
        OFPG_ANY => "any".into(),
        n => n.to_string(),
    }
}

/// Prints a group as `ovs-ofctl -O OpenFlow13 dump-groups` does (without its one-space
/// indent). For deletes only the group id is printed.
pub fn format_group_mod(gm: &GroupMod) -> String {
    let mut s = format!("group_id={}", format_group_id(gm.group_id));
    if gm.command == GroupModCommand::Delete {
        return s;
    }
    s.push_str(&format!(",type={}", type_name(gm.group_type)));
    for b in &gm.buckets {
        s.push_str(",bucket=");
        if gm.group_type == GroupType::Select && b.weight != 1 {
            s.push_str(&format!("weight:{},", b.weight));
        }
        if b.watch_port != port::ANY {
            s.push_str(&format!("watch_port:{},", format_port(b.watch_port)));
        }
        if b.watch_group != OFPG_ANY {
            s.push_str(&format!("watch_group:{},", format_group_id(b.watch_group)));
        }
        s.push_str("actions=");
        s.push_str(&format_actions(&b.actions));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_print_like_ovs() {
        #[track_caller]
        fn g(input: &str, printed: &str) {
            let parse = |s: &str| parse_group_mod(s, GroupModCommand::Add);
            crate::text::tests::assert_prints_as(input, printed, parse, format_group_mod);
        }
        g(
            "group_id=5,type=fast_failover,bucket=watch_port:1,output:1",
            "group_id=5,type=ff,bucket=watch_port:1,actions=output:1",
        );
        g(
            "group_id=3,type=indirect,bucket=actions=output:3",
            "group_id=3,type=indirect,bucket=actions=output:3",
        );
        g(
            "group_id=4,type=ff,bucket=watch_port:1,actions=output:1,bucket=watch_port:2,watch_group:1,actions=output:2",
            "group_id=4,type=ff,bucket=watch_port:1,actions=output:1,bucket=watch_port:2,watch_group:1,actions=output:2",
        );
        g(
            "group_id=2,type=all,bucket=output:1,bucket=output:2,mod_dl_src:00:00:00:00:00:01",
            "group_id=2,type=all,bucket=actions=output:1,bucket=actions=output:2,set_field:00:00:00:00:00:01->eth_src",
        );
        g("group_id=7,type=all", "group_id=7,type=all");
        g(
            "group_id=1,type=select,bucket=weight:10,watch_port:1,actions=output:1,bucket=weight:20,actions=output:2",
            "group_id=1,type=select,bucket=weight:10,watch_port:1,actions=output:1,bucket=weight:20,actions=output:2",
        );
        g(
            "group_id=11,type=select,bucket=weight:1,watch_port:3,actions=output:1,bucket=weight:0,output:2",
            "group_id=11,type=select,bucket=watch_port:3,actions=output:1,bucket=weight:0,actions=output:2",
        );
        g("group_id=9,type=all,bucket=actions=drop", "group_id=9,type=all,bucket=actions=drop");
        let gm = parse_group_mod("group_id=1,type=select,bucket=output:1", GroupModCommand::Add)
            .unwrap();
        assert_eq!(gm.buckets[0].weight, 1);
        let del = parse_group_mod("", GroupModCommand::Delete).unwrap();
        assert_eq!(del.group_id, OFPG_ALL);
        assert_eq!(format_group_mod(&del), "group_id=all");
        let e = parse_group_mod("group_id=1,bucket=output:1", GroupModCommand::Add).unwrap_err();
        assert!(e.message.contains("type="), "{e}");
        let e =
            parse_group_mod("group_id=1,type=all,bucket=weight:5,output:1", GroupModCommand::Add)
                .unwrap_err();
        assert_eq!((e.pos, e.token.as_str()), (27, "weight:5"));
        let e = parse_group_mod("group_id=1,type=bogus", GroupModCommand::Add).unwrap_err();
        assert_eq!((e.pos, e.token.as_str()), (16, "bogus"));
        let e = parse_group_mod("group_id=1,type=all,bucket=output:1,frob", GroupModCommand::Add)
            .unwrap_err();
        assert_eq!((e.pos, e.token.as_str()), (36, "frob"));
    }
}
