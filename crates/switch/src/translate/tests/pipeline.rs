//! Flows written in ovs-ofctl text, parsed by `openflow::text`, translated, installed in a
//! real `datapath::pipeline::Datapath` (with the real header rewriter) and tried with
//! frames: each packet must come out where, and as, the flows say.

use std::sync::mpsc::Receiver;

use super::frames::*;
use super::*;
use datapath::packet::Packet;
use datapath::pipeline::{
    Datapath, DatapathConfig, Outputs, PacketIn, PacketInReason, PortInfo, WorkerState, Writer,
};
use openflow::text::parse_flow_mod;
use openflow::v13::flow_mod::FlowModCommand;

/// A datapath with ports 1..=4 and the production rewriter, holding `flows` (add-flow
/// lines, each in the table its `table=` names).
struct Switch {
    dp: Datapath,
    worker: WorkerState,
    packet_ins: Receiver<PacketIn>,
    _writer: Writer,
}

impl Switch {
    fn with_flows(flows: &[&str]) -> Switch {
        let config = DatapathConfig {
            ports: (1..=4).map(|i| PortInfo::new(i, (i - 1) as u16)).collect(),
            ..DatapathConfig::default()
        };
        let (dp, mut wr, packet_ins): (Datapath, Writer, Receiver<PacketIn>) =
            Datapath::new(config, 16);
        for s in flows {
            let fm = parse_flow_mod(s, FlowModCommand::Add)
                .unwrap_or_else(|e| panic!("{s}: does not parse: {e}"));
            let rule = flow_mod_to_rule(&fm, fm.table_id)
                .unwrap_or_else(|e| panic!("{s}: does not translate: {e}"));
            wr.insert_rule(fm.table_id, rule)
                .unwrap_or_else(|e| panic!("{s}: not inserted: {e:?}"));
        }
        wr.publish();
        let worker = dp.worker(64);
        Switch { dp, worker, packet_ins, _writer: wr }
    }

    /// Processes `frame` received on `in_port`, twice (the second time through the
    /// exact-match cache), checks both give the same, and returns the output.
    fn send(&mut self, frame: &[u8], in_port: u32) -> Outputs {
        let mut run = || {
            let mut out = Outputs::new();
            self.dp.process(&mut self.worker, Packet::from_slice(frame), in_port, 0, &mut out);
            out
        };
        let first = run();
        let second = run();
        assert_eq!(first.tx, second.tx, "the cached path differs from the first");
        first
    }

    /// The ports `frame` from `in_port` goes to.
    fn ports(&mut self, frame: &[u8], in_port: u32) -> Vec<u32> {
        self.send(frame, in_port).ports()
    }

    /// The single frame sent out, and its port.
    fn single(&mut self, frame: &[u8], in_port: u32) -> (u32, Vec<u8>) {
        let out = self.send(frame, in_port);
        assert_eq!(out.tx.len(), 1, "expected one output, got {:?}", out.ports());
        (out.tx[0].port, out.tx[0].packet.data().to_vec())
    }
}

#[test]
fn in_port_to_output() {
    let mut sw = Switch::with_flows(&["in_port=1,actions=output:2"]);
    let f = tcp4(80);
    assert_eq!(sw.single(&f, 1), (2, f.clone()));
    assert_eq!(sw.ports(&f, 3), Vec::<u32>::new(), "no rule: dropped");
}

#[test]
fn masked_ip_and_tcp_port_with_set_field() {
    let mut sw = Switch::with_flows(&[
        "priority=10,ip,nw_src=10.0.0.0/8,tcp,tp_dst=80,actions=set_field:00:11:22:33:44:55->eth_dst,output:3",
        "priority=1,actions=output:4",
    ]);
    let f = tcp4(80);
    let (port, data) = sw.single(&f, 1);
    assert_eq!(port, 3);
    assert_eq!(data[..6], [0x00, 0x11, 0x22, 0x33, 0x44, 0x55]);
    assert_eq!(data[6..], f[6..], "only the destination MAC changes");
    // Everything the match leaves out falls to the low-priority rule.
    assert_eq!(sw.ports(&tcp4(81), 1), vec![4]);
    let udp80 = eth_ipv4(&ipv4(0, 17, v4("10.1.2.3"), v4("10.9.9.9"), &udp(1234, 80)));
    assert_eq!(sw.ports(&udp80, 1), vec![4], "UDP port 80 is not TCP port 80");
    let sctp80 = eth_ipv4(&ipv4(0, 132, v4("10.1.2.3"), v4("10.9.9.9"), &sctp(1234, 80)));
    assert_eq!(sw.ports(&sctp80, 1), vec![4], "SCTP port 80 is not TCP port 80");
    let other_net = eth_ipv4(&ipv4(0, 6, v4("11.1.2.3"), v4("10.9.9.9"), &tcp(1234, 80)));
    assert_eq!(sw.ports(&other_net, 1), vec![4]);
    let v6_80 = eth(
        MAC_B,
        MAC_A,
        ETH_IPV6,
        &ipv6(0, 0, 6, v6("2001:db8::1"), v6("2001:db8::2"), &tcp(1, 80)),
    );
    assert_eq!(sw.ports(&v6_80, 1), vec![4]);
}

#[test]
fn goto_table() {
    let mut sw =
        Switch::with_flows(&["table=0,actions=goto_table:1", "table=1,in_port=2,actions=output:1"]);
    assert_eq!(sw.ports(&tcp4(80), 2), vec![1]);
    assert_eq!(sw.ports(&tcp4(80), 3), Vec::<u32>::new(), "table 1 has no rule for port 3");
}

#[test]
fn write_actions_metadata_and_clear_actions() {
    let mut sw = Switch::with_flows(&[
        "table=0,in_port=1,actions=write_actions(output:3),write_metadata:0x5/0xff,goto_table:1",
        "table=0,in_port=4,actions=write_actions(output:3),goto_table:1",
        "table=1,priority=10,metadata=0x5/0xff,actions=output:2",
        "table=1,priority=0,actions=clear_actions",
    ]);
    // Apply-actions output first, then the action set at the end of the pipeline.
    assert_eq!(sw.ports(&tcp4(80), 1), vec![2, 3]);
    // Without the metadata, table 1's table-miss clears the action set.
    assert_eq!(sw.ports(&tcp4(80), 4), Vec::<u32>::new());
}

#[test]
fn vlan_match_push_and_pop() {
    let mut sw = Switch::with_flows(&[
        "priority=20,dl_vlan=5,actions=pop_vlan,output:2",
        "priority=10,vlan_tci=0,actions=mod_vlan_vid:6,output:3",
        "priority=5,vlan_tci=0x1000/0x1000,actions=output:4",
    ]);
    let payload = ipv4(0, 17, v4("1.1.1.1"), v4("2.2.2.2"), &udp(1, 2));
    let untagged = eth_ipv4(&payload);
    let tagged5 = eth_vlan(MAC_B, MAC_A, 5, ETH_IPV4, &payload);
    let tagged7 = eth_vlan(MAC_B, MAC_A, (2 << 13) | 7, ETH_IPV4, &payload);
    let (port, data) = sw.single(&tagged5, 1);
    assert_eq!(port, 2);
    assert_eq!(data[..12], untagged[..12]);
    assert_eq!(data[12..14], ETH_IPV4.to_be_bytes(), "tag popped");
    let (port, data) = sw.single(&untagged, 1);
    assert_eq!(port, 3);
    assert_eq!(data[12..14], [0x81, 0x00], "tag pushed");
    assert_eq!(u16::from_be_bytes([data[14], data[15]]) & 0x0fff, 6);
    assert_eq!(data[16..18], ETH_IPV4.to_be_bytes());
    assert_eq!(sw.ports(&tagged7, 1), vec![4], "any other tagged frame");
}

#[test]
fn arp_and_ipv4_addresses_share_a_place_but_not_a_flow() {
    let mut sw = Switch::with_flows(&[
        "arp,arp_tpa=10.0.0.2,actions=output:2",
        "ip,nw_dst=10.0.0.2,actions=output:3",
        "arp,arp_op=1,arp_spa=10.0.0.0/24,arp_sha=02:00:00:00:00:0a,actions=output:4",
    ]);
    let arp_to =
        |tpa: &str| eth(MAC_B, MAC_A, ETH_ARP, &arp(2, MAC_A, v4("10.0.1.1"), MAC_B, v4(tpa)));
    assert_eq!(sw.ports(&arp_to("10.0.0.2"), 1), vec![2]);
    assert_eq!(sw.ports(&arp_to("10.0.0.3"), 1), Vec::<u32>::new());
    let ip_to = eth_ipv4(&ipv4(0, 17, v4("10.0.1.1"), v4("10.0.0.2"), &udp(1, 2)));
    assert_eq!(sw.ports(&ip_to, 1), vec![3]);
    let request =
        eth(MAC_B, MAC_A, ETH_ARP, &arp(1, MAC_A, v4("10.0.0.7"), [0; 6], v4("10.0.0.9")));
    assert_eq!(sw.ports(&request, 1), vec![4]);
    let other_sha =
        eth(MAC_B, MAC_A, ETH_ARP, &arp(1, MAC_B, v4("10.0.0.7"), [0; 6], v4("10.0.0.9")));
    assert_eq!(sw.ports(&other_sha, 1), Vec::<u32>::new());
}

#[test]
fn ipv6_neighbor_discovery_fields() {
    let t6 = v6("2001:db8::99");
    let ns = |target, sll| {
        eth(
            MAC_B,
            MAC_A,
            ETH_IPV6,
            &ipv6(0, 0, 58, v6("2001:db8::1"), v6("ff02::1:ff00:99"), &nd(135, target, sll)),
        )
    };
    let mut sw = Switch::with_flows(&[
        "icmp6,icmp_type=135,nd_target=2001:db8::99,nd_sll=02:00:00:00:00:0a,actions=output:2",
    ]);
    assert_eq!(sw.ports(&ns(t6, MAC_A), 1), vec![2]);
    assert_eq!(sw.ports(&ns(t6, MAC_B), 1), Vec::<u32>::new());
    assert_eq!(sw.ports(&ns(v6("2001:db8::98"), MAC_A), 1), Vec::<u32>::new());
}

#[test]
fn set_field_on_a_transport_port_rewrites_the_header() {
    let mut sw = Switch::with_flows(&[
        "tcp,tp_dst=80,actions=set_field:8080->tcp_dst,output:2",
        "udp,udp_dst=53,actions=mod_tp_dst:5353,dec_ttl,output:3",
    ]);
    let (port, data) = sw.single(&tcp4(80), 1);
    assert_eq!(port, 2);
    assert_eq!(data[14 + 20 + 2..14 + 20 + 4], 8080u16.to_be_bytes());
    let dns = eth_ipv4(&ipv4(0, 17, v4("10.0.0.1"), v4("10.0.0.2"), &udp(1000, 53)));
    let (port, data) = sw.single(&dns, 1);
    assert_eq!(port, 3);
    assert_eq!(data[14 + 20 + 2..14 + 20 + 4], 5353u16.to_be_bytes());
    assert_eq!(data[14 + 8], 63, "TTL decremented");
}

#[test]
fn reserved_ports_and_controller() {
    let mut sw = Switch::with_flows(&[
        "in_port=1,actions=flood",
        "in_port=2,actions=in_port",
        "cookie=0x42,in_port=3,actions=controller:32,output:4",
    ]);
    assert_eq!(sw.ports(&tcp4(80), 1), vec![2, 3, 4]);
    assert_eq!(sw.ports(&tcp4(80), 2), vec![2]);
    let f = tcp4(80);
    let out = sw.send(&f, 3);
    assert_eq!(out.ports(), vec![4]);
    // Two packet-ins: the frame was processed twice (see `send`).
    for _ in 0..2 {
        let pi = sw.packet_ins.try_recv().expect("a packet-in");
        assert_eq!(pi.reason, PacketInReason::Action);
        assert_eq!(pi.cookie, 0x42);
        assert_eq!(pi.in_port, 3);
        assert_eq!(pi.total_len, f.len());
        assert_eq!((pi.max_len, &pi.data), (32, &f), "the datapath leaves cutting to the agent");
    }
    assert!(sw.packet_ins.try_recv().is_err());
}
