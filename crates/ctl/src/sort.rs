//! `dump-flows --sort[=FIELD]` / `--rsort[=FIELD]`, as ovs-ofctl sorts: by each
//! criterion in the order given on the command line, a bare `--sort` meaning priority.
//! For a field, flows that match on it come before flows that do not (in both
//! directions), and values compare as their big-endian bytes. Flows without the field
//! still compare among themselves by what Open vSwitch keeps in its place (an ARP
//! flow's `arp_spa` for `nw_src`, a UDP flow's port for `tp_src`, else zero). Flows
//! equal on every criterion keep the switch's order (ovs-ofctl's order for them is
//! arbitrary).
//!
//! Field names are ovs-ofctl's (`nw_src`, `tp_dst`, `dl_vlan`, ...) and the OpenFlow
//! 1.3 OXM names (`ipv4_src`, `tcp_dst`, `vlan_vid`, ...).

use std::cmp::Ordering;

use openflow::oxm::{Oxm, OxmField};

use openflow::model::FlowEntry;

/// One sort criterion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SortKey {
    /// `None` sorts by priority.
    pub field: Option<OxmField>,
    pub descending: bool,
}

impl SortKey {
    /// `--sort` (`descending` false) or `--rsort` with an optional field name.
    pub fn parse(field: &str, descending: bool) -> Result<SortKey, String> {
        let field = match field {
            "" | "priority" => None,
            name => Some(
                OxmField::from_name(name)
                    .or_else(|| openflow::text::oxm_field_named(name))
                    .ok_or_else(|| format!("{name}: unknown field for --sort/--rsort"))?,
            ),
        };
        Ok(SortKey { field, descending })
    }
}

/// The sort criteria in command-line order, read from the raw arguments (clap keeps
/// `--sort` and `--rsort` apart, and their relative order matters).
pub fn keys_from_args<I: IntoIterator<Item = String>>(args: I) -> Result<Vec<SortKey>, String> {
    let mut keys = Vec::new();
    for a in args {
        if a == "--" {
            break;
        }
        for (flag, desc) in [("--sort", false), ("--rsort", true)] {
            if a == flag {
                keys.push(SortKey::parse("", desc)?);
            } else if let Some(f) = a.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
                keys.push(SortKey::parse(f, desc)?);
            }
        }
    }
    Ok(keys)
}

fn field_value(e: &FlowEntry, f: OxmField) -> Option<Vec<u8>> {
    e.match_.fields.iter().find(|o: &&Oxm| o.field() == Some(f)).map(|o| o.value_bytes())
}

/// Fields Open vSwitch keeps in the same place of its flow structure as `f` (so that
/// a flow without `f` still has a value there that sorting compares).
fn siblings(f: OxmField) -> &'static [OxmField] {
    use OxmField as F;
    const SRC: [F; 5] = [F::TcpSrc, F::UdpSrc, F::SctpSrc, F::Icmpv4Type, F::Icmpv6Type];
    const DST: [F; 5] = [F::TcpDst, F::UdpDst, F::SctpDst, F::Icmpv4Code, F::Icmpv6Code];
    match f {
        F::Ipv4Src | F::ArpSpa => &[F::Ipv4Src, F::ArpSpa],
        F::Ipv4Dst | F::ArpTpa => &[F::Ipv4Dst, F::ArpTpa],
        F::TcpSrc | F::UdpSrc | F::SctpSrc | F::Icmpv4Type | F::Icmpv6Type => &SRC,
        F::TcpDst | F::UdpDst | F::SctpDst | F::Icmpv4Code | F::Icmpv6Code => &DST,
        _ => &[],
    }
}

/// The value a flow without `f` has in `f`'s place: a sibling's, widened or cut to
/// `f`'s width, or zeros.
fn stored_value(e: &FlowEntry, f: OxmField) -> Vec<u8> {
    let width = f.value_len();
    for s in siblings(f) {
        if let Some(mut v) = field_value(e, *s) {
            while v.len() < width {
                v.insert(0, 0);
            }
            return v[v.len() - width..].to_vec();
        }
    }
    vec![0; width]
}

fn compare(a: &FlowEntry, b: &FlowEntry, keys: &[SortKey]) -> Ordering {
    for k in keys {
        let ord = match k.field {
            None => a.priority.cmp(&b.priority),
            Some(f) => match (field_value(a, f), field_value(b, f)) {
                (Some(x), Some(y)) => x.cmp(&y),
                (Some(_), None) => return Ordering::Less,
                (None, Some(_)) => return Ordering::Greater,
                (None, None) => stored_value(a, f).cmp(&stored_value(b, f)),
            },
        };
        if ord != Ordering::Equal {
            return if k.descending { ord.reverse() } else { ord };
        }
    }
    Ordering::Equal
}

/// Sorts flows by `keys` (stable: ties keep the switch's order).
pub fn sort_flows(flows: &mut [FlowEntry], keys: &[SortKey]) {
    flows.sort_by(|a, b| compare(a, b, keys));
}

#[cfg(test)]
mod tests {
    use super::*;
    use openflow::model::Actions;

    fn flow(prio: u16, m: &str) -> FlowEntry {
        FlowEntry {
            table_id: 0,
            duration_sec: 0,
            duration_nsec: 0,
            priority: prio,
            idle_timeout: 0,
            hard_timeout: 0,
            flags: 0,
            importance: 0,
            cookie: 0,
            packet_count: 0,
            byte_count: 0,
            match_: openflow::text::parse_match(m).unwrap(),
            instructions: Actions::V13(vec![]),
        }
    }

    fn prios(v: &[FlowEntry]) -> Vec<u16> {
        v.iter().map(|f| f.priority).collect()
    }

    #[test]
    fn sorts_by_priority_and_fields() {
        let mut v = vec![
            flow(5, "ip,nw_src=10.0.0.2"),
            flow(9, "arp"),
            flow(1, "ip,nw_src=10.0.0.1"),
            flow(7, "ip,nw_src=9.0.0.1"),
        ];
        sort_flows(&mut v, &[SortKey::parse("", false).unwrap()]);
        assert_eq!(prios(&v), vec![1, 5, 7, 9]);
        sort_flows(&mut v, &[SortKey::parse("", true).unwrap()]);
        assert_eq!(prios(&v), vec![9, 7, 5, 1]);
        // Flows without the field go last in both directions.
        sort_flows(&mut v, &[SortKey::parse("nw_src", false).unwrap()]);
        assert_eq!(prios(&v), vec![7, 1, 5, 9]);
        sort_flows(&mut v, &[SortKey::parse("ipv4_src", true).unwrap()]);
        assert_eq!(prios(&v), vec![5, 1, 7, 9]);
        // Without the field, an ARP flow's arp_spa stands in for nw_src.
        let mut w =
            vec![flow(1, "arp,arp_spa=10.0.0.1"), flow(2, "arp"), flow(3, "ip,nw_src=1.1.1.1")];
        sort_flows(&mut w, &[SortKey::parse("nw_src", false).unwrap()]);
        assert_eq!(prios(&w), vec![3, 2, 1]);
    }

    #[test]
    fn criteria_keep_command_line_order() {
        let k = keys_from_args(
            ["peregrine", "ctl", "--rsort=in_port", "--sort", "dump-flows", "br0"]
                .map(String::from),
        )
        .unwrap();
        assert_eq!(
            k,
            vec![
                SortKey { field: Some(OxmField::InPort), descending: true },
                SortKey { field: None, descending: false }
            ]
        );
        assert!(keys_from_args(["--sort=bogus".to_string()]).is_err());
    }
}
