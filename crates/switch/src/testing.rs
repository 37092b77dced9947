//! Helpers shared by this crate's unit tests: the time unit, the 64-byte test frame, a
//! small datapath with ports 1..=4, a port's spec and the agent's three-port datapath,
//! running the frame through a datapath, and flow-mods from ovs-ofctl text (parsed, or
//! installed straight into a datapath's writer).
//!
//! Everything here panics on a test's own mistakes (text that does not parse, a flow the
//! datapath refuses); none of it is built outside tests.

use datapath::packet::Packet;
use std::sync::mpsc::Receiver;

use datapath::pipeline::{
    Datapath, DatapathConfig, Outputs, PacketIn, PortInfo, WorkerState, Writer,
};
use openflow::text::parse_flow_mod;
use openflow::v13::flow_mod::{FlowMod, FlowModCommand};

use crate::ports::{PortSpec, PortTable};
use crate::translate::flow_mod_to_rule;

/// One second in the datapath's and the agent's time unit (nanoseconds).
pub(crate) const SEC: u64 = 1_000_000_000;

/// A 64-byte Ethernet/IPv4/UDP frame from 02:00:00:00:00:0a to 02:00:00:00:00:0b (IPv4
/// total length 50, TTL 64, addresses and ports zero).
pub(crate) fn frame() -> Vec<u8> {
    let mut f = vec![0u8; 64];
    f[..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x0b]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0x0a]);
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    f[14] = 0x45;
    f[16..18].copy_from_slice(&50u16.to_be_bytes());
    f[22] = 64;
    f[23] = 17;
    f
}

/// A datapath with ports 1..=4 on slots 0..=3 and empty tables, its writer, and one
/// worker (64 cache entries). The packet-in queue holds 16 records; its receiver is
/// dropped, so packet-ins are discarded.
pub(crate) fn small_datapath() -> (Datapath, Writer, WorkerState) {
    let config = DatapathConfig {
        ports: (1..=4).map(|i| PortInfo::new(i, (i - 1) as u16)).collect(),
        ..DatapathConfig::default()
    };
    let (dp, writer, _packet_ins) = Datapath::new(config, 16);
    let worker = dp.worker(64);
    (dp, writer, worker)
}

/// Port `no` as the agent's tests open it: slot `no - 1`, named `eth{no}`, address
/// 02:00:00:00:00:`no`, 10 Gb/s, up, no backend.
pub(crate) fn port_spec(no: u32) -> PortSpec {
    PortSpec {
        no,
        slot: (no - 1) as u16,
        name: format!("eth{no}"),
        hw_addr: [2, 0, 0, 0, 0, no as u8],
        speed_mbps: Some(10_000),
        up: true,
        backend: None,
    }
}

/// Ports 1..=3 ([`port_spec`]) and a datapath over them with room for 64 packet-ins:
/// the port table, the datapath, its writer, the packet-in receiver and a worker (no
/// cache).
pub(crate) fn three_port_datapath() -> (PortTable, Datapath, Writer, Receiver<PacketIn>, WorkerState)
{
    let table = PortTable::new((1..=3).map(port_spec).collect(), 0);
    let config = DatapathConfig { ports: table.datapath_ports(), ..DatapathConfig::default() };
    let (dp, writer, packet_ins) = Datapath::new(config, 64);
    let worker = dp.worker(0);
    (table, dp, writer, packet_ins, worker)
}

/// Runs [`frame`] in on `in_port` at `now` through `dp`'s published version; the ports
/// it went out on, in the order the datapath emitted them.
pub(crate) fn send_frame(
    dp: &Datapath,
    worker: &mut WorkerState,
    in_port: u32,
    now: u64,
) -> Vec<u32> {
    let mut out = Outputs::new();
    dp.process(worker, Packet::from_slice(&frame()), in_port, now, &mut out);
    out.ports()
}

/// The flow-mod of ovs-ofctl text `s` with `command`; panics naming `s` if it does not
/// parse.
pub(crate) fn flow_mod(s: &str, command: FlowModCommand) -> FlowMod {
    parse_flow_mod(s, command).unwrap_or_else(|e| panic!("{s}: {e}"))
}

/// Adds the flow of ovs-ofctl text `s` (an add flow-mod, translated at time 0) to table
/// 0 of `w`'s pending version; the caller publishes it.
pub(crate) fn install_flow(w: &mut Writer, s: &str) {
    let rule = flow_mod_to_rule(&flow_mod(s, FlowModCommand::Add), 0).expect("rule");
    w.insert_rule(0, rule).expect("insert");
}
