//! Table statistics (`dump-tables`) as Open vSwitch prints them: one block per table,
//! and a run of tables identical to the one before (same counters, same features, no
//! name) collapsed into `tables 3...253: ditto`. From OpenFlow 1.0 replies a table
//! also has features: its size and the fields it matches (from the wildcard bits),
//! which Open vSwitch prints with common prefixes folded (`eth_{src,dst,type}`).

use crate::model::TableStats;
use crate::v10::match10::wildcards as w;

/// The fields a 1.0 table matches, in Open vSwitch's field order, from its wildcards.
fn fields_of(wildcards: u32) -> Vec<&'static str> {
    const MAP: [(u32, &str); 12] = [
        (w::IN_PORT, "in_port"),
        (w::DL_SRC, "eth_src"),
        (w::DL_DST, "eth_dst"),
        (w::DL_TYPE, "eth_type"),
        (w::DL_VLAN, "vlan_vid"),
        (w::DL_VLAN_PCP, "vlan_pcp"),
        (w::NW_SRC_MASK, "ip_src"),
        (w::NW_DST_MASK, "ip_dst"),
        (w::NW_PROTO, "nw_proto"),
        (w::NW_TOS, "nw_tos"),
        (w::TP_SRC, "tcp_src"),
        (w::TP_DST, "tcp_dst"),
    ];
    MAP.iter().filter(|(bit, _)| wildcards & bit != 0).map(|(_, n)| *n).collect()
}

/// The features Open vSwitch derives from a table-stats entry.
#[derive(PartialEq, Eq)]
struct Features {
    max_entries: u32,
    fields: Vec<&'static str>,
}

impl Features {
    fn of(t: &TableStats) -> Features {
        Features {
            max_entries: t.max_entries,
            fields: t.wildcards.map(fields_of).unwrap_or_default(),
        }
    }

    fn is_empty(&self) -> bool {
        self.max_entries == 0 && self.fields.is_empty()
    }
}

fn finish_ditto(s: &mut String, first: Option<u8>, last: u8) {
    if let Some(first) = first {
        if first == last {
            s.push_str(&format!("\n  table {first}: ditto\n"));
        } else {
            s.push_str(&format!("\n  tables {first}...{last}: ditto\n"));
        }
    }
}

/// The body of a table-stats reply.
pub(super) fn tables(list: &[TableStats]) -> String {
    let mut s = String::new();
    let mut prev: Option<(&TableStats, Features)> = None;
    let mut first_ditto: Option<u8> = None;
    let mut last_ditto = 0u8;
    for t in list {
        let f = Features::of(t);
        let same_stats = prev.as_ref().is_some_and(|(p, _)| {
            (p.active_count, p.lookup_count, p.matched_count)
                == (t.active_count, t.lookup_count, t.matched_count)
        });
        let same_features = prev.as_ref().is_some_and(|(_, pf)| *pf == f);
        if same_stats && same_features && t.name.is_empty() {
            first_ditto.get_or_insert(t.table_id);
            last_ditto = t.table_id;
            prev = Some((t, f));
            continue;
        }
        finish_ditto(&mut s, first_ditto.take(), last_ditto);
        s.push_str(&format!("\n  table {}", t.table_id));
        if !t.name.is_empty() {
            s.push_str(&format!(" (\"{}\")", t.name));
        }
        s.push(':');
        if same_stats && same_features {
            s.push_str(" ditto");
            prev = Some((t, f));
            continue;
        }
        s.push('\n');
        s.push_str(&format!(
            "    active={}, lookup={}, matched={}\n",
            t.active_count, t.lookup_count, t.matched_count
        ));
        if same_features {
            if !f.is_empty() {
                s.push_str("    (same features)\n");
            }
            prev = Some((t, f));
            continue;
        }
        if f.max_entries != 0 {
            s.push_str(&format!("    max_entries={}\n", f.max_entries));
        }
        if !f.fields.is_empty() {
            let same_matching = prev.as_ref().is_some_and(|(_, pf)| pf.fields == f.fields);
            if same_matching {
                s.push_str("    (same matching)\n");
            } else {
                s.push_str("    matching:\n");
                s.push_str(&format!(
                    "      exact match or wildcard: {}\n",
                    print_names(&f.fields, 0)
                ));
            }
        }
        prev = Some((t, f));
    }
    finish_ditto(&mut s, first_ditto, last_ditto);
    s
}

/// The length of the longest common prefix ending in `_` of `a` and `b`.
fn common_prefix(a: &str, b: &str) -> usize {
    let mut ret = 0;
    for (i, (x, y)) in a.bytes().zip(b.bytes()).enumerate() {
        if x != y {
            return ret;
        }
        if x == b'_' {
            ret = i + 1;
        }
    }
    ret
}

/// How many names at the start share a further common prefix, and its length.
fn common_prefix_run(ids: &[&str], prefix_len: usize) -> (usize, usize) {
    if ids.len() < 2 {
        return (ids.len(), 0);
    }
    let tail = |s: &str| s.get(prefix_len..).unwrap_or("").to_string();
    let extra = common_prefix(&tail(ids[0]), &tail(ids[1]));
    if extra == 0 {
        return (1, 0);
    }
    let mut i = 2;
    while i < ids.len() && common_prefix(&tail(ids[0]), &tail(ids[i])) != 0 {
        i += 1;
    }
    (i, extra)
}

fn sequential(a: &str, b: &str) -> bool {
    let common = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    let (ra, rb) = (&a[common..], &b[common..]);
    let digits = |s: &str| !s.is_empty() && s.len() < 10 && s.bytes().all(|c| c.is_ascii_digit());
    if ra.is_empty() && rb.is_empty() {
        return false;
    }
    digits(ra) && digits(rb) && ra.parse::<u64>().ok().map(|n| n + 1) == rb.parse::<u64>().ok()
}

fn sequential_run(ids: &[&str]) -> usize {
    let mut i = 1;
    while i < ids.len() && sequential(ids[i - 1], ids[i]) {
        i += 1;
    }
    if i == 2 {
        1
    } else {
        i.min(ids.len())
    }
}

/// Names with common prefixes folded (`eth_{src,dst}`) and numbered runs shortened
/// (`reg0...reg3`), as Open vSwitch's `print_names`.
fn print_names(ids: &[&str], prefix_len: usize) -> String {
    let mut s = String::new();
    let mut rest = ids;
    let mut group = 0;
    while !rest.is_empty() {
        if group > 0 {
            s.push(if prefix_len > 0 { ',' } else { ' ' });
        }
        group += 1;
        let (prefix_run, extra) = common_prefix_run(rest, prefix_len);
        let suffix_run = sequential_run(rest);
        let run = prefix_run.max(suffix_run).max(1);
        let tail = |x: &str| x.get(prefix_len..).unwrap_or("").to_string();
        if suffix_run >= prefix_run {
            s.push_str(&tail(rest[0]));
            if run > 1 {
                s.push_str("...");
                s.push_str(&tail(rest[run - 1]));
            }
        } else {
            s.push_str(rest[0].get(prefix_len..prefix_len + extra).unwrap_or(""));
            s.push('{');
            s.push_str(&print_names(&rest[..run], prefix_len + extra));
            s.push('}');
        }
        rest = &rest[run..];
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folds_names_like_ovs() {
        let all = fields_of(w::ALL);
        assert_eq!(
            print_names(&all, 0),
            "in_port eth_{src,dst,type} vlan_{vid,pcp} ip_{src,dst} nw_{proto,tos} tcp_{src,dst}"
        );
        assert_eq!(print_names(&["reg0", "reg1", "reg2", "reg3"], 0), "reg0...reg3");
        assert_eq!(print_names(&["reg0", "reg1"], 0), "reg0 reg1");
        assert_eq!(print_names(&["a"], 0), "a");
    }
}
