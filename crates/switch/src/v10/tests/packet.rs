//! Packet-out (input ports, actions judged on the frame) and packet-in.

use crate::v10::{packet_in_to_v10, packet_out_to_v13};
use openflow::action::Action as A13;
use openflow::match13::Match as Match13;
use openflow::oxm::Oxm;
use openflow::v10::port::port_to_v13;
use openflow::v10::{Action as A10, PacketInReason as R10, PacketOut as PacketOut10};
use openflow::v13::{PacketIn as PacketIn13, PacketInReason as R13};
use openflow::ErrorKind;

fn untagged_frame() -> Vec<u8> {
    let mut f = vec![0xff; 12];
    f.extend_from_slice(&[0x08, 0x06]);
    f.resize(60, 0);
    f
}

fn tagged_frame() -> Vec<u8> {
    let mut f = vec![0xff; 12];
    f.extend_from_slice(&[0x81, 0x00, 0x00, 0x05, 0x08, 0x06]);
    f.resize(64, 0);
    f
}

fn out(port: u16) -> A10 {
    A10::Output { port, max_len: 0 }
}

/// The 1.3 output action to `port`, of no length.
fn out13(port: u32) -> A13 {
    A13::Output { port, max_len: 0 }
}

#[test]
fn ports_buffer_and_data_carry_over() {
    let po = PacketOut10 {
        buffer_id: 0xffff_ffff,
        in_port: 3,
        actions: vec![out(0xfffb)],
        data: untagged_frame(),
    };
    let p = packet_out_to_v13(&po).unwrap();
    assert_eq!(p.buffer_id, 0xffff_ffff);
    assert_eq!(p.in_port, 3);
    assert_eq!(p.data, po.data);
    assert_eq!(p.actions, vec![out13(0xffff_fffb)]);
    p.validate().unwrap();
    let local =
        packet_out_to_v13(&PacketOut10 { in_port: port_to_v13(0xfffe), ..po.clone() }).unwrap();
    assert_eq!(local.in_port, 0xffff_fffe);
    let buffered = packet_out_to_v13(&PacketOut10 { buffer_id: 9, data: vec![], ..po }).unwrap();
    assert_eq!(buffered.buffer_id, 9);
}

#[test]
fn no_input_port_is_the_controller_and_in_port_outputs_go_nowhere() {
    let p = packet_out_to_v13(&PacketOut10 {
        buffer_id: 0xffff_ffff,
        in_port: port_to_v13(0xffff),
        actions: vec![out(0xfff8), out(2), A10::Enqueue { port: 0xfff8, queue_id: 1 }],
        data: untagged_frame(),
    })
    .unwrap();
    assert_eq!(p.in_port, 0xffff_fffd);
    assert_eq!(p.actions, vec![out13(2)]);
    p.validate().unwrap();
}

#[test]
fn actions_are_judged_on_the_frame() {
    let po = |data| PacketOut10 {
        buffer_id: 0xffff_ffff,
        in_port: 1,
        actions: vec![A10::SetVlanVid(9), out(2)],
        data,
    };
    let tagged = packet_out_to_v13(&po(tagged_frame())).unwrap();
    assert_eq!(
        tagged.actions,
        vec![A13::SetField(Oxm::VlanVid(0x1009, None)), A13::Output { port: 2, max_len: 0 }]
    );
    let untagged = packet_out_to_v13(&po(untagged_frame())).unwrap();
    assert_eq!(untagged.actions[0], A13::PushVlan(0x8100));
    // A buffered packet's tag is not known: the conditional set, push or rewrite.
    let buffered = packet_out_to_v13(&PacketOut10 { buffer_id: 5, ..po(vec![]) }).unwrap();
    assert_eq!(crate::v10::conditional_from_v13(&buffered.actions[0]), Some(A10::SetVlanVid(9)));
    // set_nw_src on an ARP frame is no IPv4 rewrite: the conditional set leaves it.
    let arp = packet_out_to_v13(&PacketOut10 {
        actions: vec![A10::SetNwSrc([1, 2, 3, 4].into())],
        ..po(untagged_frame())
    })
    .unwrap();
    assert!(matches!(arp.actions[..], [A13::Experimenter { .. }]));
}

fn packet_in(reason: R13, fields: Vec<Oxm>) -> PacketIn13 {
    PacketIn13 {
        buffer_id: 0xffff_ffff,
        total_len: 60,
        reason,
        table_id: 3,
        cookie: 99,
        match_: Match13::new(fields),
        data: untagged_frame(),
    }
}

/// The input port a packet-in carries on the 1.0 wire.
fn wire_port_10(pi: &PacketIn13) -> u16 {
    let mut w = openflow::Writer::new();
    pi.encode(openflow::OFP10_VERSION, &mut w);
    u16::from_be_bytes([w.buf[6], w.buf[7]])
}

#[test]
fn packet_in_to_1_0() {
    for (r13, r10) in [(R13::NoMatch, R10::NoMatch), (R13::Action, R10::Action)] {
        let pi = packet_in(r13, vec![Oxm::InPort(7), Oxm::EthType(0x0806)]);
        let v = packet_in_to_v10(&pi).unwrap();
        assert_eq!(v.reason, r10);
        assert_eq!(wire_port_10(&v), 7);
        assert_eq!(v.match_, Match13::new(vec![Oxm::InPort(7)]));
        assert_eq!((v.table_id, v.cookie), (0, u64::MAX));
        assert_eq!((v.buffer_id, v.total_len), (0xffff_ffff, 60));
        assert_eq!(v.data, pi.data);
    }
    let local = packet_in(R13::Action, vec![Oxm::InPort(0xffff_fffe)]);
    assert_eq!(wire_port_10(&packet_in_to_v10(&local).unwrap()), 0xfffe);
    let ctl = packet_in(R13::Action, vec![Oxm::InPort(0xffff_fffd)]);
    assert_eq!(wire_port_10(&packet_in_to_v10(&ctl).unwrap()), 0xfffd);
}

#[test]
fn packet_ins_1_0_cannot_carry() {
    let ttl = packet_in(R13::InvalidTtl, vec![Oxm::InPort(1)]);
    assert!(packet_in_to_v10(&ttl).is_err());
    let none = packet_in(R13::NoMatch, vec![]);
    assert_eq!(packet_in_to_v10(&none).unwrap_err().kind, ErrorKind::BAD_REQUEST_BAD_PORT);
    let big = packet_in(R13::NoMatch, vec![Oxm::InPort(0x1_0000)]);
    assert_eq!(packet_in_to_v10(&big).unwrap_err().kind, ErrorKind::BAD_REQUEST_BAD_PORT);
}
