//! Groups: descriptions (`dump-groups`), counters (`dump-group-stats`), features
//! (`dump-group-features`) and group-mods (inside errors), as Open vSwitch's
//! `ofp-group.c` prints them.

use super::{c_hex, duration};
use crate::action::{OFPG_ALL, OFPG_ANY};
use crate::model::port_name;
use crate::v13::group_mod::{Bucket, GroupMod, GroupModCommand, GroupType};
use crate::v13::multipart::{GroupDesc, GroupFeatures, GroupStats};

/// A group id in a request (`ALL`, `ANY` or the number).
pub(super) fn group_id_name(g: u32) -> String {
    match g {
        OFPG_ALL => "ALL".into(),
        OFPG_ANY => "ANY".into(),
        n => n.to_string(),
    }
}

/// `group_id=1,type=select,bucket=...` (Open vSwitch's `ofp_print_group`).
pub fn group_text(group_id: u32, ty: GroupType, buckets: &[Bucket]) -> String {
    let t = ty.to_u8();
    let type_name = ["all", "select", "indirect", "ff", "unknown"][usize::from(t.min(4))];
    let mut s = format!("group_id={group_id},type={type_name}");
    if buckets.is_empty() {
        return s;
    }
    s.push(',');
    let default_weight = if ty == GroupType::Select { 1 } else { 0 };
    for b in buckets {
        s.push_str("bucket=");
        if b.weight != default_weight {
            s.push_str(&format!("weight:{},", b.weight));
        }
        if b.watch_port != crate::action::port::ANY {
            s.push_str(&format!("watch_port:{},", port_name(b.watch_port)));
        }
        if b.watch_group != OFPG_ANY {
            s.push_str(&format!("watch_group:{},", b.watch_group));
        }
        s.push_str("actions=");
        s.push_str(&crate::text::format_actions(&b.actions));
        s.push(',');
    }
    s.pop();
    s
}

pub(super) fn group_descs(list: &[GroupDesc]) -> String {
    list.iter()
        .map(|g| format!("\n {}", group_text(g.group_id, g.group_type, &g.buckets)))
        .collect()
}

/// One group's counters.
pub fn group_stats_line(g: &GroupStats) -> String {
    let mut s = format!("group_id={},", g.group_id);
    if g.duration_sec != u32::MAX {
        s.push_str(&format!("duration={},", duration(g.duration_sec, g.duration_nsec)));
    }
    s.push_str(&format!(
        "ref_count={},packet_count={},byte_count={}",
        g.ref_count, g.packet_count, g.byte_count
    ));
    for (i, b) in g.bucket_stats.iter().enumerate() {
        if b.packet_count != u64::MAX {
            s.push_str(&format!(
                ",bucket{i}:packet_count={},byte_count={}",
                b.packet_count, b.byte_count
            ));
        }
    }
    s
}

pub(super) fn group_stats(list: &[GroupStats]) -> String {
    list.iter().map(|g| format!("\n {}", group_stats_line(g))).collect()
}

/// Action names of an OpenFlow 1.3 action bitmap, in Open vSwitch's order (bits it
/// does not support are not shown).
pub fn action_bitmap_names(bits: u32) -> String {
    const ORDER: [(u32, &str); 12] = [
        (0, "output"),
        (22, "group"),
        (25, "set_field"),
        (18, "strip_vlan"),
        (17, "push_vlan"),
        (23, "mod_nw_ttl"),
        (24, "dec_ttl"),
        (15, "set_mpls_ttl"),
        (16, "dec_mpls_ttl"),
        (19, "push_mpls"),
        (20, "pop_mpls"),
        (21, "set_queue"),
    ];
    super::ordered_bit_names(bits, &ORDER)
}

pub(super) fn group_features(g: &GroupFeatures) -> String {
    let mut s = format!(
        "\n Group table:\n    Types:  {:#x}\n    Capabilities:  {:#x}\n",
        g.types, g.capabilities
    );
    let names = ["all", "select", "indirect", "fast failover"];
    for (i, name) in names.iter().enumerate() {
        if g.types & (1 << i) != 0 {
            s.push_str(&format!("    {name} group:\n"));
            s.push_str(&format!("       max_groups={}\n", c_hex(g.max_groups[i])));
            s.push_str(&format!("       actions: {}\n", action_bitmap_names(g.actions[i])));
        }
    }
    s
}

pub(super) fn group_mod(g: &GroupMod) -> String {
    let cmd = match g.command {
        GroupModCommand::Add => "ADD".to_string(),
        GroupModCommand::Modify => "MOD".into(),
        GroupModCommand::Delete => "DEL".into(),
        GroupModCommand::Unknown(n) => format!("cmd:{n}"),
    };
    format!("\n {cmd} {}", group_text(g.group_id, g.group_type, &g.buckets))
}
