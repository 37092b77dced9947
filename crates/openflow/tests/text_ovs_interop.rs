//! Live interop with Open vSwitch: a private ovsdb-server and ovs-vswitchd (every socket,
//! pidfile, database and log in a fresh temp dir) get a userspace bridge; a corpus of
//! flows, groups and meters is added with `ovs-ofctl -O OpenFlow13`; what `dump-flows`,
//! `dump-groups` and `dump-meters` print must parse with our parser to exactly what we
//! parse from the text we added, and our printer must print exactly what ovs-ofctl
//! printed. The daemons are stopped by the PIDs in their pidfiles, from a `Drop` guard.

use openflow::text::parse_flow_mod;
use openflow::text::TextError;
use openflow::text::{
    format_flow_mod, format_group_mod, format_meter_mod, parse_flow, parse_group_mod,
    parse_meter_mod,
};
use openflow::v13::flow_mod::{FlowMod, FlowModCommand};
use openflow::v13::group_mod::{GroupMod, GroupModCommand};
use openflow::v13::meter_mod::{MeterMod, MeterModCommand};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const FLOWS: &[&str] = &[
    "table=0,priority=100,in_port=1,actions=output:2",
    "table=0,priority=101,ip,nw_src=10.0.0.0/8,nw_dst=192.168.1.1,actions=output:3",
    "table=0,priority=102,tcp,tp_src=1024,tp_dst=80,actions=NORMAL",
    "table=0,priority=103,udp,udp_src=53,actions=CONTROLLER:128",
    "table=0,priority=104,sctp,sctp_dst=9,actions=controller",
    "table=0,priority=105,icmp,icmp_type=8,icmp_code=0,actions=LOCAL",
    "table=0,priority=106,ipv6,ipv6_src=2001:db8::/32,ipv6_dst=::1,ipv6_label=0x12345,actions=output:4",
    "table=0,priority=107,tcp6,tcp_dst=443,actions=flood",
    "table=0,priority=108,udp6,tp_src=546,tp_dst=547,actions=all",
    "table=0,priority=109,icmp6,icmp_type=135,nd_target=fe80::1,nd_sll=00:01:02:03:04:05,actions=drop",
    "table=0,priority=110,icmp6,icmpv6_type=136,icmpv6_code=0,nd_tll=00:01:02:03:04:06,actions=drop",
    "table=0,priority=111,arp,arp_op=1,arp_spa=10.0.0.1,arp_tpa=10.0.0.0/24,arp_sha=00:00:00:00:00:01,arp_tha=00:00:00:00:00:00/ff:ff:ff:00:00:00,actions=output:1",
    "table=0,priority=112,rarp,actions=drop",
    "table=0,priority=113,dl_src=00:11:22:33:44:55/ff:ff:ff:00:00:00,dl_dst=01:00:00:00:00:00/01:00:00:00:00:00,actions=in_port",
    "table=0,priority=114,dl_type=0x88cc,actions=controller(max_len=100)",
    "table=0,priority=115,dl_vlan=10,dl_vlan_pcp=3,actions=strip_vlan,output:2",
    "table=0,priority=116,vlan_tci=0x1000/0x1000,actions=mod_vlan_vid:20",
    "table=0,priority=117,dl_vlan=0xffff,actions=mod_vlan_vid:30,output:1",
    "table=0,priority=118,vlan_vid=0x1005/0x1ff7,actions=mod_vlan_pcp:5",
    "table=0,priority=119,ip,nw_tos=16,nw_ecn=1,actions=mod_nw_tos:32,mod_nw_ecn:2",
    "table=0,priority=120,ip,ip_dscp=10,nw_proto=47,actions=dec_ttl,mod_nw_ttl:5",
    "table=0,priority=121,mpls,mpls_label=100,mpls_tc=3,mpls_bos=1,actions=pop_mpls:0x0800,output:1",
    "table=0,priority=122,mplsm,actions=dec_mpls_ttl,set_mpls_ttl:10",
    "table=0,priority=123,ip,actions=push_mpls:0x8847,output:2",
    "table=0,priority=124,metadata=0x5/0xff,actions=goto_table:1",
    "table=0,priority=125,tun_id=0x1234,actions=output:3",
    "table=0,priority=126,tun_id=0x10/0xf0,in_port=LOCAL,actions=drop",
    "table=0,cookie=0x1234,priority=127,idle_timeout=60,hard_timeout=300,send_flow_rem,ip,actions=output:1",
    "table=0,priority=128,check_overlap,reset_counts,no_packet_counts,no_byte_counts,tcp,actions=drop",
    "table=1,priority=200,ip,actions=mod_nw_src:1.2.3.4,mod_nw_dst:5.6.7.8,output:2",
    "table=1,priority=201,tcp,actions=mod_tp_src:1000,mod_tp_dst:2000,output:2",
    "table=1,priority=202,udp,actions=mod_tp_dst:53,output:2",
    "table=1,priority=203,actions=mod_dl_src:00:00:00:00:00:aa,mod_dl_dst:00:00:00:00:00:bb,output:2",
    "table=1,priority=204,actions=set_field:00:00:00:00:00:cc->eth_dst,set_field:5->tun_id,set_field:0x10->metadata,output:2",
    "table=1,priority=205,ipv6,actions=set_field:2001:db8::5->ipv6_dst,set_field:0x55->ipv6_label,output:2",
    "table=1,priority=206,actions=push_vlan:0x88a8,set_field:4196->vlan_vid,set_field:2->vlan_pcp,output:2",
    "table=1,priority=207,actions=set_queue:5,output:2",
    "table=1,priority=208,actions=group:1",
    "table=1,priority=209,actions=meter:1,output:2",
    "table=1,priority=210,actions=write_actions(output:2,set_queue:1),goto_table:2",
    "table=1,priority=211,actions=clear_actions,write_metadata:0x1/0x1,goto_table:3",
    "table=2,priority=300,actions=output:1,clear_actions,write_actions(group:2),write_metadata:0xff,goto_table:3",
    "table=3,priority=0,actions=drop",
    "table=3,priority=65535,arp,nw_src=10.0.0.1,nw_proto=2,actions=NORMAL",
    "table=4,priority=400,icmp,actions=set_field:3->icmp_type,set_field:1->icmp_code,output:1",
    "table=4,priority=401,arp,actions=set_field:2->arp_op,set_field:10.1.1.1->arp_spa,set_field:00:00:00:00:00:dd->arp_sha,output:1",
    "table=4,priority=402,dl_vlan=5,actions=mod_vlan_vid:6,pop_vlan,mod_vlan_pcp:1,output:1",
    "table=4,priority=403,ip,actions=set_field:46->ip_dscp,set_field:3->ip_ecn,output:1",
    "table=5,priority=500,sctp,actions=mod_tp_src:7,output:1",
    "table=5,priority=501,icmp6,actions=set_field:1->icmpv6_type,output:1",
    "table=5,priority=502,actions=set_field:2->in_port,output:IN_PORT",
    "table=6,priority=600,in_port=CONTROLLER,actions=LOCAL",
    "table=6,cookie=0xffffffffffff,priority=601,ipv6,ipv6_src=2001:db8::1/ffff:ffff::ffff,actions=output:4294967294",
    "table=6,priority=602,eth_type=0x800,ip_src=1.2.3.4/255.0.255.0,actions=output:7",
    "table=6,priority=603,dl_vlan=7,actions=write_actions(mod_vlan_vid:8,output:1)",
];

const GROUPS: &[&str] = &[
    "group_id=1,type=select,bucket=weight:10,watch_port:1,actions=output:1,bucket=weight:20,actions=output:2",
    "group_id=2,type=all,bucket=output:1,bucket=output:2,mod_dl_src:00:00:00:00:00:01",
    "group_id=3,type=indirect,bucket=actions=mod_dl_dst:00:00:00:00:00:02,output:3",
    "group_id=4,type=ff,bucket=watch_port:1,actions=output:1,bucket=watch_port:2,watch_group:1,actions=output:2",
    "group_id=5,type=all",
    "group_id=6,type=select,bucket=actions=push_vlan:0x8100,set_field:4097->vlan_vid,output:3,bucket=weight:0,actions=drop",
];

const METERS: &[&str] = &[
    "meter=1,kbps,burst,stats,bands=type=drop,rate=1000,burst_size=100",
    "meter=2,pktps,bands=type=drop,rate=10",
    "meter=3,kbps,burst,bands=type=drop,rate=1000,burst_size=10,type=drop,rate=2000,burst_size=20",
    "meter=4,pktps,stats,bands=type=drop,rate=5",
];

/// The private Open vSwitch instance; dropping it stops the daemons it started.
struct Ovs {
    dir: PathBuf,
    bridge: String,
}

impl Ovs {
    fn start() -> Ovs {
        let nanos =
            SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let id = std::process::id();
        let dir = std::env::temp_dir().join(format!("peregrine-ovs-{id}-{nanos}"));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        let ovs = Ovs { dir, bridge: format!("pgt{}", (id ^ nanos) % 100_000) };
        let d = ovs.dir.display().to_string();
        let schema = "/usr/share/openvswitch/vswitch.ovsschema";
        assert!(Path::new(schema).exists(), "{schema} is missing");
        ovs.run("ovsdb-tool", &["create", &format!("{d}/conf.db"), schema]);
        ovs.run(
            "ovsdb-server",
            &[
                &format!("--remote=punix:{d}/db.sock"),
                &format!("--pidfile={d}/ovsdb.pid"),
                "--detach",
                &format!("--log-file={d}/ovsdb.log"),
                &format!("{d}/conf.db"),
            ],
        );
        let db = format!("--db=unix:{d}/db.sock");
        ovs.run("ovs-vsctl", &[&db, "--no-wait", "init"]);
        // The userspace datapath owns one tap device, ovs-netdev, per network namespace:
        // where we may, give our vswitchd a namespace of its own so that it neither
        // collides with nor disturbs another Open vSwitch on this machine.
        let vswitchd_args = [
            format!("unix:{d}/db.sock"),
            format!("--pidfile={d}/vswitchd.pid"),
            "--detach".to_string(),
            format!("--log-file={d}/vswitchd.log"),
        ];
        let own_netns = ovs.run_raw("unshare", &["--net", "true"]).status.success();
        let mut argv: Vec<&str> = Vec::new();
        if own_netns {
            argv.extend(["--net", "ovs-vswitchd"]);
        }
        argv.extend(vswitchd_args.iter().map(String::as_str));
        ovs.run(if own_netns { "unshare" } else { "ovs-vswitchd" }, &argv);
        let br = ovs.bridge.clone();
        ovs.run(
            "ovs-vsctl",
            &[
                &db,
                "--timeout=30",
                "add-br",
                &br,
                "--",
                "set",
                "bridge",
                &br,
                "datapath_type=netdev",
            ],
        );
        let mgmt = ovs.dir.join(format!("{br}.mgmt"));
        let deadline = Instant::now() + Duration::from_secs(20);
        while !mgmt.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        if !mgmt.exists() {
            let log = std::fs::read_to_string(ovs.dir.join("vswitchd.log")).unwrap_or_default();
            panic!("bridge {br} has no management socket after 20 s; vswitchd.log:\n{log}");
        }
        ovs.ofctl(&["del-flows", &br]);
        ovs
    }

    /// Runs a command with the private environment, bounded to 30 s; panics on failure.
    fn run(&self, prog: &str, args: &[&str]) -> String {
        let out = self.run_raw(prog, args);
        assert!(
            out.status.success(),
            "{prog} {args:?} failed: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn run_raw(&self, prog: &str, args: &[&str]) -> Output {
        let d = &self.dir;
        let child = Command::new(prog)
            .args(args)
            .env("OVS_RUNDIR", d)
            .env("OVS_LOGDIR", d)
            .env("OVS_DBDIR", d)
            .env("OVS_SYSCONFDIR", d)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {prog}: {e}"));
        let pid = child.id();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(out) => out.unwrap_or_else(|e| panic!("{prog}: {e}")),
            Err(_) => {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
                panic!("{prog} {args:?} did not finish within 30 s");
            }
        }
    }

    fn ofctl(&self, args: &[&str]) -> String {
        let mut a = vec!["-O", "OpenFlow13"];
        a.extend_from_slice(args);
        self.run("ovs-ofctl", &a)
    }
}

impl Drop for Ovs {
    fn drop(&mut self) {
        for name in ["vswitchd.pid", "ovsdb.pid"] {
            let Ok(text) = std::fs::read_to_string(self.dir.join(name)) else {
                continue;
            };
            let Ok(pid) = text.trim().parse::<u32>() else {
                continue;
            };
            let proc_dir = PathBuf::from(format!("/proc/{pid}"));
            let _ = Command::new("kill").arg(pid.to_string()).status();
            let deadline = Instant::now() + Duration::from_secs(5);
            while proc_dir.exists() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if proc_dir.exists() {
                let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The lines of a dump reply after its `OFPST_... reply` header.
fn body_lines(dump: &str) -> Vec<&str> {
    dump.lines().filter(|l| !l.starts_with("OFPST_") && !l.trim().is_empty()).collect()
}

/// Adds each entry of `corpus` with `ovs-ofctl ADD br entry` and returns what we parse
/// from each, by `key` (which the corpus entries must differ in).
fn add_corpus<K: Ord, T>(
    ovs: &Ovs,
    add: &str,
    corpus: &[&str],
    parse: impl Fn(&str) -> Result<T, TextError>,
    key: impl Fn(&T) -> K,
) -> BTreeMap<K, T> {
    let mut ours = BTreeMap::new();
    for entry in corpus {
        ovs.ofctl(&[add, &ovs.bridge, entry]);
        let parsed = parse(entry).unwrap_or_else(|e| panic!("{entry}: {e}"));
        assert!(
            ours.insert(key(&parsed), parsed).is_none(),
            "corpus entries must differ in their key: {entry}"
        );
    }
    ours
}

/// Each dumped entry parses with `parse` to the entry of `ours` with its `key`, and we
/// print that entry as the dump did (the entry cut by `trim`).
fn check_dump<K: Ord, T: PartialEq + std::fmt::Debug>(
    dumped: &[&str],
    ours: &BTreeMap<K, T>,
    parse: impl Fn(&str) -> Result<T, TextError>,
    key: impl Fn(&T) -> K,
    print: impl Fn(&T) -> String,
    trim: fn(&str) -> &str,
) {
    for entry in dumped {
        let got = parse(entry).unwrap_or_else(|e| panic!("dumped {entry:?}: {e}"));
        let want = ours
            .get(&key(&got))
            .unwrap_or_else(|| panic!("dumped entry not in the corpus: {entry}"));
        assert_eq!(&got, want, "dumped {entry:?}");
        assert_eq!(print(want), trim(entry), "our printing");
    }
}

#[test]
#[ignore = "needs Open vSwitch (ovsdb-server, ovs-vswitchd, ovs-ofctl); run by .ci/run"]
fn ovs_dumps_parse_to_what_we_parse_and_we_print_what_ovs_prints() {
    let ovs = Ovs::start();
    let br = ovs.bridge.clone();

    let parse_group = |s: &str| parse_group_mod(s, GroupModCommand::Add);
    let group_id = |g: &GroupMod| g.group_id;
    let groups = add_corpus(&ovs, "add-group", GROUPS, parse_group, group_id);
    let parse_meter = |s: &str| parse_meter_mod(s, MeterModCommand::Add);
    let meter_id = |m: &MeterMod| m.meter_id;
    let meters = add_corpus(&ovs, "add-meter", METERS, parse_meter, meter_id);
    let flow_key = |f: &FlowMod| (f.table_id, f.priority);
    let flows = add_corpus(&ovs, "add-flow", FLOWS, parse_flow, flow_key);

    let dump = ovs.ofctl(&["dump-flows", &br]);
    let lines = body_lines(&dump);
    assert_eq!(lines.len(), FLOWS.len(), "dump-flows printed:\n{dump}");
    for line in &lines {
        let got = parse_flow(line).unwrap_or_else(|e| panic!("dumped {line:?}: {e}"));
        let want = flows
            .get(&(got.table_id, got.priority))
            .unwrap_or_else(|| panic!("dumped flow not in the corpus: {line}"));
        assert_eq!(&got, want, "dumped line {line:?}");
    }
    let dump = ovs.ofctl(&["--no-stats", "dump-flows", &br]);
    let lines = body_lines(&dump);
    assert_eq!(lines.len(), FLOWS.len());
    check_dump(&lines, &flows, parse_flow, flow_key, format_flow_mod, str::trim_start);

    let dump = ovs.ofctl(&["dump-groups", &br]);
    let lines = body_lines(&dump);
    assert_eq!(lines.len(), GROUPS.len(), "dump-groups printed:\n{dump}");
    check_dump(&lines, &groups, parse_group, group_id, format_group_mod, str::trim_start);

    let dump = ovs.ofctl(&["dump-meters", &br]);
    let blocks: Vec<String> = dump
        .split("\n\n")
        .map(|b| b.lines().filter(|l| !l.starts_with("OFPST_")).collect::<Vec<_>>().join("\n"))
        .filter(|b| !b.trim().is_empty())
        .collect();
    assert_eq!(blocks.len(), METERS.len(), "dump-meters printed:\n{dump}");
    let blocks: Vec<&str> = blocks.iter().map(String::as_str).collect();
    check_dump(&blocks, &meters, parse_meter, meter_id, format_meter_mod, str::trim);

    // Our del-flows printing is what ovs-ofctl del-flows reads: deleting table 6's IPv4
    // flows that output to port 7 removes exactly the priority-602 flow.
    let del = parse_flow_mod("table=6,out_port=7,ip", FlowModCommand::Delete).unwrap();
    let del_text = format_flow_mod(&del);
    assert_eq!(del_text, "table=6, out_port=7, ip");
    ovs.ofctl(&["del-flows", &br, &del_text]);
    let dump = ovs.ofctl(&["dump-flows", &br, "table=6"]);
    let left: Vec<u16> =
        body_lines(&dump).iter().map(|l| parse_flow(l).unwrap().priority).collect();
    assert_eq!(left.len(), 3, "table 6 after del-flows:\n{dump}");
    assert!(!left.contains(&602), "table 6 after del-flows:\n{dump}");
}
