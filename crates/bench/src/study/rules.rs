//! The rule sets the study loads into the devices, derived from the flows the generator
//! sends so that every generated packet hits a rule: OpenFlow flows, groups and meters
//! (ovs-ofctl syntax, for peregrine and Open vSwitch alike), static FDB entries (the
//! bridge) and the routes' traffic (the router).
//!
//! Shapes, for the exact-vs-wildcard experiment: an exact rule matches a flow's whole
//! 5-tuple; a wildcard rule matches only a prefix of its destination address, the prefix
//! lengths cycling through [`MASKS`] so the classifier sees that many distinct masks.

use std::net::Ipv4Addr;

use crate::traffic::FlowHeader;

/// Prefix lengths of wildcard rules, in the order rules take them.
pub const MASKS: [u8; 8] = [8, 12, 16, 20, 24, 26, 28, 30];

/// The exact rule of flow `h` entering at OpenFlow port `in_port`, sent to `out`.
pub fn exact(h: &FlowHeader, in_port: usize, out: usize) -> String {
    format!(
        "priority=200,udp,in_port={in_port},nw_src={},nw_dst={},tp_src={},tp_dst={},actions=output:{out}",
        h.src_ip, h.dst_ip, h.sport, h.dport
    )
}

/// The wildcard rule number `i` covering flow `h`: its destination under mask
/// `MASKS[i % 8]`, sent to `out`. Longer prefixes get higher priorities, so overlapping
/// rules resolve as a routing table would (all send to the same port anyway).
pub fn wildcard(h: &FlowHeader, i: usize, out: usize) -> String {
    let len = MASKS[i % MASKS.len()];
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    let net = Ipv4Addr::from(u32::from(h.dst_ip) & mask);
    format!("priority={},udp,nw_dst={net}/{len},actions=output:{out}", 100 + len as u32)
}

/// One rule covering every UDP flow from port `in_port` to the /24 of `dst`, sent to
/// `out`.
pub fn covering(dst: Ipv4Addr, in_port: usize, out: usize) -> String {
    covering_to(dst, in_port, &format!("output:{out}"))
}

/// The same rule as [`covering`], sending its flows into group `group` instead.
pub fn covering_group(dst: Ipv4Addr, in_port: usize, group: u32) -> String {
    covering_to(dst, in_port, &format!("group:{group}"))
}

/// The same rule as [`covering`], its flows going through meter `meter` first.
pub fn covering_metered(dst: Ipv4Addr, in_port: usize, meter: u32, out: usize) -> String {
    covering_to(dst, in_port, &format!("meter:{meter},output:{out}"))
}

fn covering_to(dst: Ipv4Addr, in_port: usize, actions: &str) -> String {
    let net = Ipv4Addr::from(u32::from(dst) & 0xffff_ff00);
    format!("priority=100,udp,in_port={in_port},nw_dst={net}/24,actions={actions}")
}

/// The group of the select-group experiment.
pub const GROUP: u32 = 1;

/// The destination MACs the select group's two buckets write (locally administered, no
/// host's), so that each bucket is a path of its own.
pub const BUCKET_MACS: [[u8; 6]; 2] =
    [[0x02, 0x00, 0x5e, 0x00, 0x01, 0x01], [0x02, 0x00, 0x5e, 0x00, 0x01, 0x02]];

/// A select group `id` (ovs-ofctl `add-group` syntax) with one bucket per MAC of
/// `macs`, each writing that destination MAC and sending to `out`, all of weight 1: the
/// device picks a bucket by a hash of each flow.
pub fn select_group(id: u32, macs: &[[u8; 6]], out: usize) -> String {
    let buckets: String = macs
        .iter()
        .map(|m| {
            let mac: Vec<String> = m.iter().map(|b| format!("{b:02x}")).collect();
            format!(",bucket=actions=set_field:{}->eth_dst,output:{out}", mac.join(":"))
        })
        .collect();
    format!("group_id={id},type=select{buckets}")
}

/// The meter of the meter experiment.
pub const METER: u32 = 1;

/// A meter `id` (ovs-ofctl `add-meter` syntax) counting packets, with one band that drops
/// what exceeds `rate` packets per second, `burst` packets of burst allowed.
pub fn drop_meter(id: u32, rate: u64, burst: u64) -> String {
    format!("meter={id},pktps,burst,bands=type=drop,rate={rate},burst_size={burst}")
}

/// Rules for `flows` (all entering at port `in_port`, sent to `out`) with
/// `wildcard_percent` of them wildcard (the first ones) and the rest exact.
pub fn mixed(
    flows: &[FlowHeader],
    wildcard_percent: u8,
    in_port: usize,
    out: usize,
) -> Vec<String> {
    let wild = flows.len() * wildcard_percent.min(100) as usize / 100;
    flows
        .iter()
        .enumerate()
        .map(|(i, h)| if i < wild { wildcard(h, i, out) } else { exact(h, in_port, out) })
        .collect()
}

/// `count` addresses, one inside each of `prefixes` in turn (a `/32` is itself; a
/// shorter prefix gets a host part from `seed`), for traffic that must hit routes.
pub fn addresses_in(prefixes: &[(Ipv4Addr, u8)], count: usize, seed: u64) -> Vec<Ipv4Addr> {
    let mut rng = crate::workload::Rng::new(seed);
    (0..count)
        .map(|i| {
            let (net, len) = prefixes[i % prefixes.len()];
            if len >= 32 {
                net
            } else {
                let host_bits = 32 - len as u32;
                let host = (rng.next_u64() as u32) & ((1u32 << host_bits) - 1);
                // Neither the network nor the broadcast address.
                let host = host.clamp(1, (1u32 << host_bits) - 2);
                Ipv4Addr::from(u32::from(net) | host)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(dst: [u8; 4], sport: u16) -> FlowHeader {
        FlowHeader {
            src_mac: [2, 0, 0, 0, 0, 1],
            dst_mac: [2, 0, 0, 0, 0, 2],
            src_ip: Ipv4Addr::new(10, 1, 0, 1),
            dst_ip: Ipv4Addr::from(dst),
            sport,
            dport: 9,
        }
    }

    #[test]
    fn exact_rules_name_the_whole_five_tuple() {
        assert_eq!(
            exact(&flow([100, 64, 1, 2], 4000), 1, 3),
            "priority=200,udp,in_port=1,nw_src=10.1.0.1,nw_dst=100.64.1.2,tp_src=4000,tp_dst=9,actions=output:3"
        );
    }

    #[test]
    fn wildcard_rules_cycle_through_the_masks_and_cover_their_flow() {
        let h = flow([100, 64, 171, 205], 9);
        assert_eq!(wildcard(&h, 0, 2), "priority=108,udp,nw_dst=100.0.0.0/8,actions=output:2");
        assert_eq!(wildcard(&h, 4, 2), "priority=124,udp,nw_dst=100.64.171.0/24,actions=output:2");
        assert_eq!(
            wildcard(&h, 15, 2),
            "priority=130,udp,nw_dst=100.64.171.204/30,actions=output:2"
        );
    }

    #[test]
    fn covering_rules_send_to_a_port_or_a_group() {
        let sink = Ipv4Addr::new(10, 1, 0, 2);
        assert_eq!(
            covering(sink, 1, 2),
            "priority=100,udp,in_port=1,nw_dst=10.1.0.0/24,actions=output:2"
        );
        assert_eq!(
            covering_group(sink, 1, GROUP),
            "priority=100,udp,in_port=1,nw_dst=10.1.0.0/24,actions=group:1"
        );
        assert_eq!(
            covering_metered(sink, 1, METER, 2),
            "priority=100,udp,in_port=1,nw_dst=10.1.0.0/24,actions=meter:1,output:2"
        );
    }

    #[test]
    fn drop_meters_count_packets_with_a_burst() {
        assert_eq!(
            drop_meter(METER, 100_000, 200),
            "meter=1,pktps,burst,bands=type=drop,rate=100000,burst_size=200"
        );
    }

    #[test]
    fn select_groups_have_a_bucket_per_mac() {
        assert_eq!(
            select_group(GROUP, &BUCKET_MACS, 2),
            "group_id=1,type=select,\
             bucket=actions=set_field:02:00:5e:00:01:01->eth_dst,output:2,\
             bucket=actions=set_field:02:00:5e:00:01:02->eth_dst,output:2"
        );
        assert_eq!(select_group(7, &[], 2), "group_id=7,type=select");
    }

    #[test]
    fn mixed_takes_the_share_asked() {
        let flows: Vec<FlowHeader> = (0..10).map(|i| flow([100, 64, 0, i], 9)).collect();
        let r = mixed(&flows, 30, 1, 2);
        assert_eq!(r.len(), 10);
        assert_eq!(r.iter().filter(|r| r.contains("tp_src")).count(), 7);
        assert!(mixed(&flows, 0, 1, 2).iter().all(|r| r.contains("tp_src")));
        assert!(mixed(&flows, 100, 1, 2).iter().all(|r| !r.contains("tp_src")));
    }

    #[test]
    fn addresses_fall_inside_their_prefixes() {
        let p = [(Ipv4Addr::new(1, 2, 3, 0), 24), (Ipv4Addr::new(5, 6, 7, 8), 32)];
        let a = addresses_in(&p, 6, 1);
        for (i, x) in a.iter().enumerate() {
            let o = x.octets();
            if i % 2 == 0 {
                assert_eq!(&o[..3], &[1, 2, 3], "{x}");
                assert!(o[3] != 0 && o[3] != 255, "{x}");
            } else {
                assert_eq!(*x, Ipv4Addr::new(5, 6, 7, 8));
            }
        }
        assert_eq!(addresses_in(&p, 6, 1), a);
    }
}
