//! Tests of the text form against what Open vSwitch 3.1's `ovs-ofctl -O OpenFlow13`
//! printed for the same input (captured from a private ovs-vswitchd), and of errors.

use super::*;
use crate::action::{port, Action};
use crate::instruction::Instruction;
use crate::oxm::Oxm;
use crate::v13::flow_mod::{FlowMod, FlowModCommand};
use crate::wire::MacAddr;

/// `input` parsed with `parse` prints with `print` as `printed`, and `printed` parses
/// back to the same value.
#[track_caller]
pub(super) fn assert_prints_as<T: PartialEq + std::fmt::Debug>(
    input: &str,
    printed: &str,
    parse: impl Fn(&str) -> Result<T, TextError>,
    print: impl Fn(&T) -> String,
) {
    let v = parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
    assert_eq!(print(&v), printed, "printing the parse of {input}");
    let back = parse(printed).unwrap_or_else(|e| panic!("{printed}: {e}"));
    assert_eq!(back, v, "reparsing {printed}");
}

/// add-flow `input`, then print: must be what `--no-stats dump-flows` printed, and
/// the printed line must parse back to the same flow.
#[track_caller]
fn ovs(input: &str, printed: &str) {
    assert_prints_as(input, printed, parse_flow, format_flow_mod);
}

#[track_caller]
fn err(input: &str, kind: FlowModCommand, pos: usize, token: &str, msg: &str) {
    let e = parse_flow_mod(input, kind).expect_err(input);
    assert_eq!((e.pos, e.token.as_str()), (pos, token), "{input}: error {e} at the wrong place");
    assert!(e.message.contains(msg), "{input}: message {:?}", e.message);
}

fn mac(s: &str) -> MacAddr {
    s.parse().unwrap()
}

#[test]
fn match_fields_print_like_ovs() {
    ovs("in_port=1,actions=output:2", "in_port=1 actions=output:2");
    ovs("priority=32768,ip,nw_src=10.0.0.0/8,actions=2", "ip,nw_src=10.0.0.0/8 actions=output:2");
    ovs(
        "table=3,cookie=0x10,idle_timeout=10,hard_timeout=20,priority=5,tcp,tp_dst=80,actions=drop",
        "cookie=0x10, table=3, idle_timeout=10, hard_timeout=20, priority=5,tcp,tp_dst=80 actions=drop",
    );
    ovs(
        "dl_src=00:11:22:33:44:55/ff:ff:ff:00:00:00,dl_type=0x0800,nw_tos=16,actions=normal",
        "ip,dl_src=00:11:22:00:00:00/ff:ff:ff:00:00:00,nw_tos=16 actions=NORMAL",
    );
    ovs(
        "udp6,ipv6_src=2001:db8::/32,udp_dst=53,actions=controller",
        "udp6,ipv6_src=2001:db8::/32,tp_dst=53 actions=CONTROLLER:65535",
    );
    ovs(
        "icmp,icmp_type=8,icmp_code=0,actions=controller:100",
        "icmp,icmp_type=8,icmp_code=0 actions=CONTROLLER:100",
    );
    ovs(
        "arp,arp_op=1,arp_spa=10.0.0.1,arp_sha=00:00:00:00:00:01,actions=flood,local,all,in_port",
        "arp,arp_spa=10.0.0.1,arp_op=1,arp_sha=00:00:00:00:00:01 actions=FLOOD,LOCAL,ALL,IN_PORT",
    );
    ovs("tp_src=80,tcp,actions=drop", "tcp,tp_src=80 actions=drop");
    ovs(
        "arp,nw_src=10.0.0.1,nw_proto=2,actions=drop",
        "arp,arp_spa=10.0.0.1,arp_op=2 actions=drop",
    );
    ovs("metadata=0,actions=drop", "metadata=0 actions=drop");
    ovs("metadata=0x5/0xff,actions=drop", "metadata=0x5/0xff actions=drop");
    ovs("tun_id=0x5,actions=drop", "tun_id=0x5 actions=drop");
    ovs("tunnel_id=0/0xff,actions=drop", "tun_id=0/0xff actions=drop");
    ovs(
        "mpls,mpls_label=5,mpls_tc=2,mpls_bos=1,actions=drop",
        "mpls,mpls_label=5,mpls_tc=2,mpls_bos=1 actions=drop",
    );
    ovs("mplsm,actions=drop", "mplsm actions=drop");
    ovs("rarp,actions=drop", "rarp actions=drop");
    ovs("ipv6,ipv6_label=0x12345,actions=drop", "ipv6,ipv6_label=0x12345 actions=drop");
    ovs("ipv6,ipv6_label=5,actions=drop", "ipv6,ipv6_label=0x00005 actions=drop");
    ovs("ipv6,ipv6_label=0x5/0xff,actions=drop", "ipv6,ipv6_label=0x00005/0x000ff actions=drop");
    ovs(
        "icmp6,icmp_type=135,nd_target=fe80::1,nd_sll=00:01:02:03:04:05,actions=drop",
        "icmp6,icmp_type=135,nd_target=fe80::1,nd_sll=00:01:02:03:04:05 actions=drop",
    );
    ovs(
        "icmp6,icmpv6_type=136,icmpv6_code=0,nd_tll=00:01:02:03:04:05,actions=drop",
        "icmp6,icmp_type=136,icmp_code=0,nd_tll=00:01:02:03:04:05 actions=drop",
    );
    ovs("ip,nw_ecn=2,ip_dscp=10,actions=drop", "ip,nw_tos=40,nw_ecn=2 actions=drop");
    ovs("ip,nw_proto=47,actions=drop", "ip,nw_proto=47 actions=drop");
    ovs("ip,nw_proto=2,actions=drop", "ip,nw_proto=2 actions=drop");
    ovs("ip,nw_proto=1,actions=drop", "icmp actions=drop");
    ovs("ipv6,nw_proto=58,actions=drop", "icmp6 actions=drop");
    ovs("ip,nw_proto=58,actions=drop", "ip,nw_proto=58 actions=drop");
    ovs("ipv6,nw_proto=47,actions=drop", "ipv6,nw_proto=47 actions=drop");
    ovs("dl_type=0x1234,actions=drop", "dl_type=0x1234 actions=drop");
    ovs("sctp,sctp_src=5,actions=drop", "sctp,tp_src=5 actions=drop");
    ovs(
        "eth_type=0x800,ip_src=1.2.3.4/255.255.0.0,ip_dst=1.2.3.4/255.0.255.0,actions=drop",
        "ip,nw_src=1.2.0.0/16,nw_dst=1.0.3.0/255.0.255.0 actions=drop",
    );
    ovs(
        "ipv6,ipv6_src=2001:db8::1/ffff:0:ffff::,ipv6_dst=::1,actions=drop",
        "ipv6,ipv6_src=2001::/ffff:0:ffff::,ipv6_dst=::1 actions=drop",
    );
    ovs(
        "ipv6,ipv6_src=::1.2.3.4,ipv6_dst=::ffff:1.2.3.4,actions=drop",
        "ipv6,ipv6_src=::1.2.3.4,ipv6_dst=::ffff:1.2.3.4 actions=drop",
    );
    ovs(
        "ipv6,ipv6_src=1:0:0:1:0:0:0:1,ipv6_dst=0:0:1::,actions=drop",
        "ipv6,ipv6_src=1:0:0:1::1,ipv6_dst=0:0:1:: actions=drop",
    );
    ovs("ipv6,ipv6_src=::/1,actions=drop", "ipv6,ipv6_src=::/1 actions=drop");
    ovs("in_port=LOCAL,actions=drop", "in_port=LOCAL actions=drop");
    ovs("in_port=65534,actions=drop", "in_port=LOCAL actions=drop");
    ovs("in_port=CONTROLLER,actions=drop", "in_port=CONTROLLER actions=drop");
    ovs("in_port=4294967040,actions=drop", "in_port=65280 actions=drop");
    ovs("in_port=65279,actions=drop", "in_port=65279 actions=drop");
    ovs(
        "dl_dst=01:00:00:00:00:00/01:00:00:00:00:00,actions=drop",
        "dl_dst=01:00:00:00:00:00/01:00:00:00:00:00 actions=drop",
    );
    ovs(
        "eth_dst=ff:ff:ff:ff:ff:ff/ff:ff:ff:ff:ff:ff,actions=drop",
        "dl_dst=ff:ff:ff:ff:ff:ff actions=drop",
    );
    ovs(
        "arp,arp_tpa=10.0.0.0/24,arp_tha=00:00:00:00:00:02/ff:ff:ff:ff:ff:00,actions=drop",
        "arp,arp_tpa=10.0.0.0/24,arp_tha=00:00:00:00:00:00/ff:ff:ff:ff:ff:00 actions=drop",
    );
}

#[test]
fn vlan_forms_print_like_ovs() {
    ovs("dl_vlan=5,actions=drop", "dl_vlan=5 actions=drop");
    ovs("dl_vlan=5,dl_vlan_pcp=3,actions=drop", "dl_vlan=5,dl_vlan_pcp=3 actions=drop");
    ovs("vlan_tci=0x1005/0x1fff,actions=drop", "dl_vlan=5 actions=drop");
    ovs("vlan_tci=0,actions=drop", "vlan_tci=0x0000/0x1fff actions=drop");
    ovs("vlan_vid=0x1005,actions=drop", "dl_vlan=5 actions=drop");
    ovs("vlan_vid=0x1000/0x1000,actions=drop", "vlan_tci=0x1000/0x1000 actions=drop");
    ovs("vlan_pcp=3,actions=drop", "dl_vlan_pcp=3 actions=drop");
    ovs("dl_vlan=0xffff,actions=drop", "vlan_tci=0x0000/0x1fff actions=drop");
    let m = parse_match("dl_vlan_pcp=3").unwrap();
    assert_eq!(m.fields, vec![Oxm::VlanVid(0x1000, Some(0x1000)), Oxm::VlanPcp(3)]);
    let m = parse_match("dl_vlan=0xffff").unwrap();
    assert_eq!(m.fields, vec![Oxm::VlanVid(0, None)]);
    let m = parse_match("vlan_tci=0x0005/0x0fff").unwrap();
    assert_eq!(m.fields, vec![Oxm::VlanVid(5, Some(0x0fff))]);
    assert_eq!(format_match(&m), "vlan_tci=0x0005/0x0fff");
    assert!(parse_match("vlan_tci=0x2000/0x2000").is_err());
    assert!(parse_match("vlan_tci=0x2000/0xf000").is_err());
}

#[test]
fn actions_print_like_ovs() {
    ovs(
        "dl_vlan=3,actions=mod_vlan_vid:5,mod_vlan_pcp:3",
        "dl_vlan=3 actions=set_field:4101->vlan_vid,set_field:3->vlan_pcp",
    );
    ovs("dl_vlan=3,actions=strip_vlan", "dl_vlan=3 actions=pop_vlan");
    ovs(
        "actions=push_vlan:0x8100,set_field:4101->vlan_vid,push_vlan:0x88a8",
        "actions=push_vlan:0x8100,set_field:4101->vlan_vid,push_vlan:0x88a8",
    );
    ovs("actions=mod_vlan_vid:5", "actions=push_vlan:0x8100,set_field:4101->vlan_vid");
    ovs(
        "dl_vlan=3,actions=mod_vlan_vid:5,pop_vlan,mod_vlan_pcp:2",
        "dl_vlan=3 actions=set_field:4101->vlan_vid,pop_vlan,push_vlan:0x8100,set_field:2->vlan_pcp",
    );
    ovs(
        "actions=write_actions(mod_vlan_vid:5)",
        "actions=write_actions(push_vlan:0x8100,set_field:4101->vlan_vid)",
    );
    ovs(
        "dl_vlan=3,actions=set_field:0x1005->vlan_vid",
        "dl_vlan=3 actions=set_field:4101->vlan_vid",
    );
    ovs(
        "ip,actions=mod_nw_src:1.2.3.4,mod_nw_dst:1.2.3.5,mod_nw_tos:16,mod_nw_ecn:2,mod_nw_ttl:9,dec_ttl",
        "ip actions=set_field:1.2.3.4->ip_src,set_field:1.2.3.5->ip_dst,set_field:4->ip_dscp,set_field:2->nw_ecn,mod_nw_ttl:9,dec_ttl",
    );
    ovs(
        "dl_type=0x0800,actions=push_mpls:0x8847,set_mpls_ttl:5,dec_mpls_ttl,pop_mpls:0x0800",
        "ip actions=push_mpls:0x8847,set_mpls_ttl(5),dec_mpls_ttl,pop_mpls:0x0800",
    );
    ovs(
        "actions=mod_dl_src:00:01:02:03:04:05,mod_dl_dst:00:01:02:03:04:06",
        "actions=set_field:00:01:02:03:04:05->eth_src,set_field:00:01:02:03:04:06->eth_dst",
    );
    ovs(
        "tcp,actions=mod_tp_src:1,mod_tp_dst:2",
        "tcp actions=set_field:1->tcp_src,set_field:2->tcp_dst",
    );
    ovs(
        "udp,actions=mod_tp_src:1,mod_tp_dst:2",
        "udp actions=set_field:1->udp_src,set_field:2->udp_dst",
    );
    ovs(
        "sctp,actions=set_field:5->sctp_src,mod_tp_dst:4",
        "sctp actions=set_field:5->sctp_src,set_field:4->sctp_dst",
    );
    ovs("actions=set_queue:3,output:3", "actions=set_queue:3,output:3");
    ovs("actions=group:5", "actions=group:5");
    ovs(
        "actions=controller(max_len=100),controller:200,controller",
        "actions=CONTROLLER:100,CONTROLLER:200,CONTROLLER:65535",
    );
    ovs(
        "ipv6,actions=set_field:::1->ipv6_src,set_field:5->ipv6_label",
        "ipv6 actions=set_field:::1->ipv6_src,set_field:0x5->ipv6_label",
    );
    ovs(
        "actions=set_field:5->tun_id,set_field:0x5->metadata",
        "actions=set_field:0x5->tun_id,set_field:0x5->metadata",
    );
    ovs(
        "ip,actions=set_field:16->ip_dscp,set_field:2->ip_ecn",
        "ip actions=set_field:16->ip_dscp,set_field:2->nw_ecn",
    );
    ovs("actions=set_field:5->in_port", "actions=set_field:5->in_port");
    ovs("actions=set_field:LOCAL->in_port", "actions=set_field:LOCAL->in_port");
    ovs(
        "icmp,actions=set_field:5->icmp_type,set_field:1->icmp_code",
        "icmp actions=set_field:5->icmp_type,set_field:1->icmp_code",
    );
    ovs(
        "icmp6,actions=set_field:5->icmpv6_type,set_field:1->icmpv6_code",
        "icmp6 actions=set_field:5->icmpv6_type,set_field:1->icmpv6_code",
    );
    ovs(
        "arp,actions=set_field:1->arp_op,set_field:1.2.3.4->arp_spa,set_field:00:00:00:00:00:01->arp_sha",
        "arp actions=set_field:1->arp_op,set_field:1.2.3.4->arp_spa,set_field:00:00:00:00:00:01->arp_sha",
    );
    ovs(
        "icmp6,icmp_type=135,actions=set_field:fe80::1->nd_target,set_field:00:00:00:00:00:01->nd_sll",
        "icmp6,icmp_type=135 actions=set_field:fe80::1->nd_target,set_field:00:00:00:00:00:01->nd_sll",
    );
    ovs(
        "actions=set_field:0->metadata,write_metadata:0",
        "actions=set_field:0->metadata,write_metadata:0",
    );
    ovs("actions=set_field:0->tun_id", "actions=set_field:0->tun_id");
    ovs("actions=output:4294967294", "actions=LOCAL");
    ovs("actions=output:NORMAL", "actions=NORMAL");
    ovs("actions=in_port,table", "actions=IN_PORT,TABLE");
    ovs("actions=controller:0", "actions=CONTROLLER:0");
    ovs("actions=output:CONTROLLER", "actions=CONTROLLER:65535");
    ovs(
        "mpls,actions=pop_mpls:0x0800,push_mpls:0x8848",
        "mpls actions=pop_mpls:0x0800,push_mpls:0x8848",
    );
    ovs("ipv6,actions=dec_ttl,mod_nw_ttl:3", "ipv6 actions=dec_ttl,mod_nw_ttl:3");
    ovs("actions=", "actions=drop");
    ovs("actions=drop", "actions=drop");
    ovs(
        "actions=copy_ttl_in,copy_ttl_out,push_pbb:0x88e7,pop_pbb",
        "actions=copy_ttl_in,copy_ttl_out,push_pbb:0x88e7,pop_pbb",
    );
    ovs(
        "actions=experimenter(id=0x2320,data=0x0102)",
        "actions=experimenter(id=0x2320,data=0x0102)",
    );
}

#[test]
fn action_values() {
    let a = parse_actions("output:3,LOCAL,7,set_field:10.0.0.1->nw_src").unwrap();
    assert_eq!(
        a,
        vec![
            Action::Output { port: 3, max_len: 0 },
            Action::Output { port: port::LOCAL, max_len: 0 },
            Action::Output { port: 7, max_len: 0 },
            Action::SetField(Oxm::Ipv4Src("10.0.0.1".parse().unwrap(), None)),
        ]
    );
    assert_eq!(
        parse_actions("mod_dl_dst:00:00:00:00:00:09").unwrap(),
        vec![Action::SetField(Oxm::EthDst(mac("00:00:00:00:00:09"), None))]
    );
    assert_eq!(parse_actions("drop").unwrap(), vec![]);
    assert_eq!(
        parse_actions("set_mpls_ttl(7),set_nw_ttl:3").unwrap(),
        vec![Action::SetMplsTtl(7), Action::SetNwTtl(3)]
    );
    assert_eq!(
        format_action(&Action::SetField(Oxm::Metadata(5, Some(0xff)))),
        "set_field:0x5/0xff->metadata"
    );
}

#[test]
fn instructions_print_like_ovs() {
    ovs(
        "actions=write_actions(output:1,set_queue:2),goto_table:5",
        "actions=write_actions(output:1,set_queue:2),goto_table:5",
    );
    ovs(
        "actions=clear_actions,write_metadata:0x5/0xff,goto_table:1",
        "actions=clear_actions,write_metadata:0x5/0xff,goto_table:1",
    );
    ovs("actions=write_metadata:0x5", "actions=write_metadata:0x5");
    ovs("actions=write_metadata:0/0xff", "actions=write_metadata:0/0xff");
    ovs(
        "actions=output:1,clear_actions,write_actions(output:2),write_metadata:0x1,goto_table:3",
        "actions=output:1,clear_actions,write_actions(output:2),write_metadata:0x1,goto_table:3",
    );
    ovs("actions=meter:1,output:1", "actions=meter:1,output:1");
    let fm = parse_flow("actions=meter:2,output:1,goto_table:4").unwrap();
    assert_eq!(
        fm.instructions,
        vec![
            Instruction::Meter(2),
            Instruction::ApplyActions(vec![Action::Output { port: 1, max_len: 0 }]),
            Instruction::GotoTable(4)
        ]
    );
    let unordered =
        vec![Instruction::GotoTable(1), Instruction::ApplyActions(vec![Action::DecNwTtl])];
    assert_eq!(format_instructions(&unordered), "dec_ttl,goto_table:1");
}

#[test]
fn flags_and_defaults_print_like_ovs() {
    ovs(
        "send_flow_rem,check_overlap,reset_counts,no_packet_counts,no_byte_counts,actions=drop",
        "send_flow_rem check_overlap reset_counts no_packet_counts no_byte_counts actions=drop",
    );
    ovs("priority=0,actions=drop", "priority=0 actions=drop");
    ovs("priority=65535,actions=drop", "priority=65535 actions=drop");
    ovs("cookie=0xffffffffffffffff,actions=drop", "cookie=0xffffffffffffffff, actions=drop");
    ovs(
        "send_flow_rem,idle_timeout=5,priority=7,ip,actions=drop",
        "idle_timeout=5, send_flow_rem priority=7,ip actions=drop",
    );
    ovs("table=2,send_flow_rem,actions=drop", "table=2, send_flow_rem actions=drop");
    ovs(
        "table=3,cookie=0x5,hard_timeout=9,reset_counts,in_port=1,actions=output:2",
        "cookie=0x5, table=3, hard_timeout=9, reset_counts in_port=1 actions=output:2",
    );
    let fm = parse_flow("importance=5,actions=drop").unwrap();
    assert_eq!(fm, FlowMod { importance: 5, ..FlowMod::default() });
}

#[test]
fn dumped_stats_lines_parse_and_print() {
    let line = "cookie=0x0, duration=0.095s, table=0, n_packets=0, n_bytes=0, idle_timeout=5, send_flow_rem priority=7,ip actions=drop";
    let fm = parse_flow(line).unwrap();
    assert_eq!(fm.priority, 7);
    assert_eq!(fm.idle_timeout, 5);
    let entry = crate::model::FlowEntry::from_v13(&crate::v13::multipart::FlowStats {
        table_id: 0,
        duration_sec: 0,
        duration_nsec: 95_000_000,
        priority: fm.priority,
        idle_timeout: fm.idle_timeout,
        hard_timeout: 0,
        flags: fm.flags,
        importance: 0,
        cookie: 0,
        packet_count: 0,
        byte_count: 0,
        match_: fm.match_.clone(),
        instructions: fm.instructions.clone(),
    });
    assert_eq!(crate::text::print::flow_line(&entry, true), line);
    assert_eq!(format_duration(1, 0), "1s");
    assert_eq!(format_duration(1, 1_500), "1.0000015s");
    assert_eq!(format_duration(0, 7_000_000), "0.007s");
}

#[test]
fn mod_and_del_syntax() {
    let fm = parse_flow_mod("cookie=0x5/0xff,ip,actions=output:1", FlowModCommand::Modify).unwrap();
    assert_eq!((fm.cookie, fm.cookie_mask), (5, 0xff));
    let fm = parse_flow_mod(
        "table=1,out_port=2,out_group=3,cookie=1/1,n_packets=5,ip",
        FlowModCommand::Delete,
    )
    .unwrap();
    assert_eq!(
        (fm.table_id, fm.out_port, fm.out_group, fm.command),
        (1, 2, 3, FlowModCommand::Delete)
    );
    assert!(fm.instructions.is_empty());
    assert_eq!(format_flow_mod(&fm), "cookie=0x1/0x1, table=1, out_port=2, out_group=3, ip");
    assert_eq!(parse_flow_mod(&format_flow_mod(&fm), FlowModCommand::Delete).unwrap(), fm);
    let all = parse_flow_mod("", FlowModCommand::Delete).unwrap();
    assert_eq!(all.table_id, 0xff);
    assert_eq!(format_flow_mod(&all), "table=255");
    let strict = parse_flow_mod("priority=5,ip", FlowModCommand::DeleteStrict).unwrap();
    assert_eq!(strict.priority, 5);
}

#[test]
fn errors_name_token_and_position() {
    use FlowModCommand::*;
    err("ip,nw_scr=1.2.3.4,actions=drop", Add, 3, "nw_scr=1.2.3.4", "unknown field \"nw_scr\"");
    let e = parse_flow("ip,nw_scr=1.2.3.4,actions=drop").unwrap_err();
    assert_eq!(e.to_string(), "at column 4 (\"nw_scr=1.2.3.4\"): unknown field \"nw_scr\"");
    err("tp_src=80,actions=drop", Add, 0, "tp_src=80", "needs tcp, udp or sctp");
    err("icmp_type=3,actions=drop", Add, 0, "icmp_type=3", "icmp or icmp6");
    err("ipv6,nw_src=1.2.3.4,actions=drop", Add, 5, "nw_src=1.2.3.4", "needs ip or arp");
    err("nw_proto=6,actions=drop", Add, 0, "nw_proto=6", "needs ip");
    err("ip,tcp_dst=5,actions=drop", Add, 3, "tcp_dst=5", "tcp or tcp6");
    err(
        "icmp6,nd_sll=00:00:00:00:00:01,actions=drop",
        Add,
        6,
        "nd_sll=00:00:00:00:00:01",
        "icmp_type=135",
    );
    err("mpls_label=5,actions=drop", Add, 0, "mpls_label=5", "mpls");
    err("ip,nw_src=1.2.3.4", Add, 17, "", "needs actions=");
    err("ip,nw_src=1.2.3.4", Modify, 17, "", "needs actions=");
    err("ip,actions=foo", Add, 11, "foo", "unknown action \"foo\"");
    err("ip,nw_tos=17,actions=drop", Add, 10, "17", "multiple of 4");
    err("ip,ip_dscp=64,actions=drop", Add, 11, "64", "out of range");
    err("dl_vlan=4096,actions=drop", Add, 8, "4096", "out of range");
    err("ip,nw_src=1.2.3.4/33,actions=drop", Add, 18, "33", "out of range");
    err("ip,nw_src=1.2.3,actions=drop", Add, 10, "1.2.3", "not an IPv4 address");
    err("dl_src=00:11,actions=drop", Add, 7, "00:11", "not an Ethernet address");
    err("in_port=eth0,actions=drop", Add, 8, "eth0", "unknown port");
    err("metadata=xyz,actions=drop", Add, 9, "xyz", "not a number");
    err("udp,tp_src=0x10/0xf0,actions=drop", Add, 11, "0x10/0xf0", "cannot be masked");
    err(
        "ip,actions=set_field:1.2.3.4/255.0.0.0->ip_src",
        Add,
        21,
        "1.2.3.4/255.0.0.0",
        "set_field with a mask",
    );
    err("actions=set_field:1->nw_scr", Add, 21, "nw_scr", "unknown field");
    err("actions=set_field:1", Add, 18, "1", "VALUE->FIELD");
    err("actions=load:1->NXM_NX_REG0[]", Add, 8, "load:1->NXM_NX_REG0[]", "use set_field");
    err("actions=resubmit(,2)", Add, 8, "resubmit(,2)", "extension action");
    err("cookie=1/1,actions=drop", Add, 0, "cookie=1/1", "cookie mask");
    err("actions=goto_table:3,output:1", Add, 21, "output:1", "instruction order");
    err("actions=meter:1,meter:2", Add, 16, "meter:2", "twice");
    err("actions=goto_table:255", Add, 19, "255", "out of range");
    err("actions=output:1,drop", Add, 17, "drop", "only action");
    err("tcp_flags=+syn,tcp,actions=drop", Add, 0, "tcp_flags=+syn", "Open vSwitch extension");
    err("reg0=5,actions=drop", Add, 0, "reg0=5", "Open vSwitch extension");
    err("ip,actions=mod_tp_src:5", Add, 11, "mod_tp_src:5", "tcp, udp or sctp");
    err("actions=mod_nw_tos:3", Add, 8, "mod_nw_tos:3", "multiple of 4");
    err("actions=push_vlan:0x800", Add, 18, "0x800", "TPID");
    err("actions=controller(reason=no_match)", Add, 19, "reason=no_match", "max_len");
    err("table=255,actions=drop", Add, 0, "table=255", "0 to 254");
    err("out_port=2,actions=drop", Add, 0, "out_port=2", "cannot be used with add-flow");
    err("ip,actions=drop", Delete, 3, "actions=drop", "cannot be used with del-flows");
    err("priority=5", Delete, 0, "priority=5", "without --strict");
    err("idle_timeout=5", Delete, 0, "idle_timeout=5", "del-flows");
    err("ip,actions=write_actions(output:1", Add, 11, "write_actions(output:1", "unbalanced");
    err("ip)", Add, 2, ")", "unbalanced");
    err("ip,tp_dst", Add, 3, "tp_dst", "needs a value");
    err("ip=5,actions=drop", Add, 0, "ip=5", "takes no value");
}

/// Found by the `text_parse` fuzz target: numeric flags with both named and unnamed bits
/// print as names plus `flags=` for the rest, and must parse back to the same bits.
#[test]
fn numeric_flags_round_trip_with_named_bits() {
    let fm = parse_flow_mod("flags=80,actions=2", FlowModCommand::Add).unwrap();
    assert_eq!(fm.flags, 80);
    let printed = format_flow_mod(&fm);
    assert_eq!(printed, "no_byte_counts flags=0x40 actions=output:2");
    assert_eq!(parse_flow_mod(&printed, FlowModCommand::Add).unwrap(), fm);
}

/// Found by the `text_parse` fuzz target: a burst size given without the `burst` flag is
/// kept, so it must be printed for the meter to parse back the same.
#[test]
fn meter_burst_size_without_burst_flag_round_trips() {
    use crate::v13::meter_mod::MeterModCommand;
    let mm = parse_meter_mod(
        "meter=1,kbps,bands=type=drop,rate=1000,burst_size=100",
        MeterModCommand::Add,
    )
    .unwrap();
    let printed = format_meter_mod(&mm);
    assert!(printed.contains("burst_size=100"), "{printed}");
    assert_eq!(parse_meter_mod(&printed, MeterModCommand::Add).unwrap(), mm);
}
