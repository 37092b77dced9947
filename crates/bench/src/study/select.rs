//! The select-group experiment: random flows through an OpenFlow select group of two
//! buckets.
//!
//! An OpenFlow device holds group [`rules::GROUP`] (type select, two buckets of weight 1,
//! each writing a destination MAC of its own and sending to the sink port) and one rule
//! sending every UDP flow from the input port to the sink's /24 into it; N random flows
//! then spread over both buckets by the device's hash of each flow, and the sink counts
//! every frame whichever bucket took it. The flows differ in their UDP ports, as in the
//! other experiments, and also in their destination address (random in the sink's /24):
//! Open vSwitch's default selection hashes a UDP flow by its addresses alone, so flows
//! differing in ports only would all take one bucket there.
//! The bridge and the router have no groups: they forward the same flows as any traffic,
//! the baseline (and so does peregrine as a learning switch, `peregrine-xdp-normal`).
//!
//! After each point the experiment asks the device, over its management connection
//! (`peregrine ctl`, or `ovs-ofctl` for Open vSwitch), how many packets each bucket took
//! since the point before (`dump-group-stats`: both buckets must have been used) and,
//! for peregrine with the in-kernel fast tier, how many entries the tier holds and how
//! many frames it forwarded in the kernel (`dump-fastpath`); the note carries those and
//! each device's rate relative to the bridge's.

use std::process::{Command, Output, Stdio};

use crate::report::results::{Experiment, ExperimentKind, Series};
use crate::traffic::{FlowHeader, Spread};

use super::bed::{Bed, Loadout};
use super::experiments::{flat_point, frames, note, per_device, SEED, SPACE};
use super::{rules, Ctx, Dut};

/// The device the select-group experiment compares every other one with.
const BASELINE: &str = "bridge";

/// The select-group experiment (see the module comment).
pub fn select_group(ctx: &mut Ctx) -> Result<Experiment, String> {
    let kind = ExperimentKind::SelectGroup;
    let counts = ctx.opts.group_flows.clone();
    let duts = ctx.opts.duts.clone();
    let mut seen = Vec::new();
    let (series, failed) = per_device(ctx, kind, &duts, &mut |ctx, dut| {
        let bed = Bed::new(ctx, Some(dut), 1, &|_inputs, sink| {
            let sink = sink.ipv4()?;
            Ok(Loadout {
                groups: vec![rules::select_group(rules::GROUP, &rules::BUCKET_MACS, 2)],
                flows: Some(vec![rules::covering_group(sink, 1, rules::GROUP)]),
                ..Loadout::default()
            })
        })?;
        let client = client(ctx, dut);
        let mut before = Counts::default();
        let mut points = Vec::new();
        for &n in &counts {
            let flows = group_flows(&bed, n)?;
            let p = flat_point(ctx, &bed, &frames(&flows, 64), n as f64, "flows")?;
            points.push(p);
            if let Some(client) = &client {
                let now = Counts::read(client, &bed, dut);
                let line = now.since(&before);
                ctx.progress(&format!("  {line}"));
                seen.push(format!("{} at {n} flows: {line}", dut.name()));
                before = now;
            }
        }
        Ok(points)
    });
    let ratios = ratios_to(&series, BASELINE);
    Ok(Experiment {
        kind,
        note: note(
            format!(
                "64 B frames flat out; N random flows (random UDP source and destination ports, random destination addresses in the sink's /24) to the sink. OpenFlow devices: `{}` and one rule `udp,in_port=1,nw_dst=SINK/24,actions=group:{}`, so each flow takes one of the two buckets by the device's hash (both output to the sink). Devices without OpenFlow rules (the bridge, the router, peregrine as a learning switch) have no groups: they forward the same flows as any traffic, the baseline. Forwarded relative to the {BASELINE} (median): {}. Read from the devices after each point (warm-up and runs): {}.",
                rules::select_group(rules::GROUP, &rules::BUCKET_MACS, 2),
                rules::GROUP,
                if ratios.is_empty() { format!("no {BASELINE} measured") } else { ratios.join(", ") },
                if seen.is_empty() { "nothing".to_string() } else { seen.join("; ") }
            ),
            &failed,
        ),
        ceiling: Vec::new(),
        series,
    })
}

/// `n` flows from the bed's first input (see the module comment): random UDP ports,
/// each to a random address of its target's /24.
fn group_flows(bed: &Bed, n: usize) -> Result<Vec<FlowHeader>, String> {
    let ports = bed.flows(0, Spread::UdpPorts, n, SPACE, SEED)?;
    let dsts = bed.flows(0, Spread::DstIps, n, (bed.targets[0].dst_ip, 24), SEED)?;
    Ok(with_dsts(ports, &dsts))
}

/// `flows`, each with the destination address of the flow of `dsts` at its place.
fn with_dsts(flows: Vec<FlowHeader>, dsts: &[FlowHeader]) -> Vec<FlowHeader> {
    flows.into_iter().zip(dsts).map(|(f, d)| FlowHeader { dst_ip: d.dst_ip, ..f }).collect()
}

/// The OpenFlow client of `dut` for queries (program and leading arguments):
/// `peregrine ctl` for peregrine, `ovs-ofctl` for Open vSwitch, none for the devices
/// without OpenFlow rules (or without a `peregrine` binary to ask with).
pub(super) fn client(ctx: &Ctx, dut: Dut) -> Option<Vec<String>> {
    if !dut.openflow() {
        return None;
    }
    match dut.peregrine_backend() {
        Some(_) => ctx.opts.ctl.as_ref().map(|c| vec![c.display().to_string(), "ctl".into()]),
        None => Some(vec!["ovs-ofctl".into()]),
    }
}

/// Runs the client with `args` over OpenFlow 1.3, failing with its stderr; returns its
/// standard output.
pub(super) fn query(client: &[String], args: &[&str]) -> Result<String, String> {
    let (prog, lead) = client.split_first().ok_or("no client")?;
    let mut cmd = Command::new(prog);
    cmd.args(lead).args(["-O", "OpenFlow13"]).args(args);
    let out = output_of(cmd, prog, args)?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `cmd`, which runs `prog` with `args` (and maybe more before them), with no
/// standard input; fails with its stderr where it fails, naming `prog` and `args`.
pub(super) fn output_of(mut cmd: Command, prog: &str, args: &[&str]) -> Result<Output, String> {
    let out = cmd.stdin(Stdio::null()).output().map_err(|e| format!("{prog}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "`{prog} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out)
}

/// What a device said about the group and its fast tier at one moment (totals since it
/// started; the default is the device before any traffic), or why it could not say.
#[derive(Clone, Debug, PartialEq)]
struct Counts {
    buckets: Result<Vec<u64>, String>,
    /// peregrine with the fast tier only.
    tier: Option<Result<Tier, String>>,
}

impl Default for Counts {
    fn default() -> Counts {
        Counts { buckets: Ok(Vec::new()), tier: None }
    }
}

/// The fast tier's state as `dump-fastpath --json` gives it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Tier {
    pub entries: usize,
    pub hit: u64,
    pub miss: u64,
    /// Hits of metered entries (metered in the kernel).
    pub metered: u64,
    /// Of those, the frames a meter band dropped in the kernel.
    pub meter_dropped: u64,
}

impl Counts {
    fn read(client: &[String], bed: &Bed, dut: Dut) -> Counts {
        let (buckets, tier) = read_with_tier(client, bed, dut, "dump-group-stats", |t| {
            bucket_packets(t, rules::GROUP)
                .ok_or_else(|| format!("no bucket counts of group {}: {t}", rules::GROUP))
        });
        Counts { buckets, tier }
    }

    /// A line on what changed from `before` to `self`.
    fn since(&self, before: &Counts) -> String {
        let mut s = match (&self.buckets, &before.buckets) {
            (Ok(now), Ok(then)) => {
                let d: Vec<u64> = now
                    .iter()
                    .enumerate()
                    .map(|(i, n)| n.saturating_sub(then.get(i).copied().unwrap_or(0)))
                    .collect();
                format!("buckets {}", shares(&d))
            }
            (Err(e), _) | (_, Err(e)) => format!("bucket counts unread ({e})"),
        };
        match (&self.tier, &before.tier) {
            (Some(Ok(now)), then) => {
                let then = match then {
                    Some(Ok(t)) => *t,
                    _ => Tier::default(),
                };
                let hit = now.hit.saturating_sub(then.hit);
                let miss = now.miss.saturating_sub(then.miss);
                let total = hit + miss;
                s.push_str(&format!(
                    "; fast tier: {} entries, {hit} of {total} frames forwarded in the kernel ({})",
                    now.entries,
                    percent(hit, total)
                ));
            }
            (Some(Err(e)), _) => s.push_str(&format!("; fast tier unread ({e})")),
            (None, _) => {}
        }
        s
    }
}

/// The packet counts of each bucket of group `group` in a `dump-group-stats` reply
/// (ovs-ofctl's text, which `peregrine ctl` prints too):
/// `group_id=1,…,bucket0:packet_count=N,byte_count=B,bucket1:packet_count=…`.
fn bucket_packets(text: &str, group: u32) -> Option<Vec<u64>> {
    let head = format!("group_id={group},");
    let line = text.lines().map(str::trim).find(|l| l.starts_with(&head))?;
    let mut v = Vec::new();
    for field in line.split(',') {
        let Some((name, value)) = field.split_once(":packet_count=") else {
            continue;
        };
        let i: usize = name.strip_prefix("bucket")?.parse().ok()?;
        if i != v.len() {
            return None;
        }
        v.push(value.parse().ok()?);
    }
    Some(v)
}

/// The fast tier's state read from `dut` (peregrine with the tier only) at `target`.
/// Runs query `cmd` on `bed`'s OpenFlow connection and reads its output with `read`,
/// then reads the fast tier ([`read_tier`]); without a connection, that error and no
/// tier.
pub(super) fn read_with_tier<T>(
    client: &[String],
    bed: &Bed,
    dut: Dut,
    cmd: &str,
    read: impl FnOnce(&str) -> Result<T, String>,
) -> (Result<T, String>, Option<Result<Tier, String>>) {
    let Some(target) = bed.openflow_target() else {
        return (Err("no OpenFlow connection".into()), None);
    };
    let what = query(client, &[cmd, &target]).and_then(|t| read(&t));
    (what, read_tier(client, dut, &target))
}

pub(super) fn read_tier(client: &[String], dut: Dut, target: &str) -> Option<Result<Tier, String>> {
    dut.peregrine_backend()
        .is_some_and(|b| b.contains("+xdp"))
        .then(|| query(client, &["--json", "dump-fastpath", target]).and_then(|j| tier(&j)))
}

/// The fast tier's entries, kernel hits and misses and metering from `dump-fastpath
/// --json`.
pub(super) fn tier(json: &str) -> Result<Tier, String> {
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("dump-fastpath: {e}"))?;
    if v["enabled"] != serde_json::Value::Bool(true) {
        return Err("the fast tier is off".into());
    }
    let n = |x: &serde_json::Value| x.as_u64().unwrap_or(0);
    Ok(Tier {
        entries: v["entries"].as_array().map_or(0, Vec::len),
        hit: n(&v["events"]["hit"]),
        miss: n(&v["events"]["miss"]),
        metered: n(&v["events"]["metered"]),
        meter_dropped: n(&v["events"]["meter_dropped"]),
    })
}

/// `part` as a percentage of `whole`.
pub(super) fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}%", part as f64 * 100.0 / whole as f64)
    }
}

/// Packets per bucket with their shares: `600 (60.0%) / 400 (40.0%)`.
fn shares(packets: &[u64]) -> String {
    let total: u64 = packets.iter().sum();
    let v: Vec<String> = packets.iter().map(|&p| format!("{p} ({})", percent(p, total))).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(" / ")
    }
}

/// Each device's median forwarded rate over the `base` device's at the same `x`:
/// `peregrine-xdp 2.10× at 64 flows`. The base itself and points without a rate are
/// left out.
fn ratios_to(series: &[Series], base: &str) -> Vec<String> {
    let Some(b) = series.iter().find(|s| s.dut == base) else {
        return Vec::new();
    };
    let mut v = Vec::new();
    for s in series.iter().filter(|s| s.dut != base) {
        for p in &s.points {
            let rate = |p: &crate::report::results::Point| p.forwarded_mpps.map(|f| f.median);
            let bp = b.points.iter().find(|q| q.x == p.x);
            if let (Some(r), Some(br)) = (rate(p), bp.and_then(rate)) {
                if br > 0.0 {
                    v.push(format!("{} {:.2}× at {} flows", s.dut, r / br, p.x));
                }
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::method::stats::Summary;
    use crate::report::results::Point;
    use std::net::Ipv4Addr;

    #[test]
    fn flows_take_their_ports_and_a_destination_each() {
        let target =
            crate::dut::Target { dst_mac: crate::dut::NOBODY, dst_ip: Ipv4Addr::new(10, 7, 0, 2) };
        let make = |spread, space| {
            crate::traffic::flows(
                spread,
                100,
                [2, 0, 0, 0, 0, 1],
                Ipv4Addr::new(10, 7, 0, 1),
                target,
                space,
                SEED,
            )
        };
        let ports = make(Spread::UdpPorts, SPACE);
        let dsts = make(Spread::DstIps, (target.dst_ip, 24));
        let f = with_dsts(ports.clone(), &dsts);
        assert_eq!(f.len(), 100);
        for ((f, p), d) in f.iter().zip(&ports).zip(&dsts) {
            assert_eq!((f.sport, f.dport, f.src_ip), (p.sport, p.dport, p.src_ip));
            assert_eq!(f.dst_ip, d.dst_ip);
            assert_eq!(f.dst_ip.octets()[..3], [10, 7, 0]);
        }
        let distinct: std::collections::HashSet<Ipv4Addr> = f.iter().map(|h| h.dst_ip).collect();
        assert!(distinct.len() > 50, "{}", distinct.len());
    }

    #[test]
    fn bucket_counts_are_read_from_group_stats() {
        let ovs = "OFPST_GROUP reply (OF1.3) (xid=0x2):\n \
                   group_id=1,duration=3.120s,ref_count=1,packet_count=1000,byte_count=60000,\
                   bucket0:packet_count=600,byte_count=36000,bucket1:packet_count=400,byte_count=24000\n";
        assert_eq!(bucket_packets(ovs, 1), Some(vec![600, 400]));
        assert_eq!(bucket_packets(ovs, 2), None);
        let two = "x\n group_id=10,ref_count=0,packet_count=0,byte_count=0,bucket0:packet_count=0,byte_count=0\n \
                   group_id=1,ref_count=1,packet_count=5,byte_count=300,bucket0:packet_count=5,byte_count=300\n";
        assert_eq!(bucket_packets(two, 1), Some(vec![5]));
        assert_eq!(bucket_packets(two, 10), Some(vec![0]));
        let gap = "group_id=1,packet_count=5,bucket1:packet_count=5,byte_count=300";
        assert_eq!(bucket_packets(gap, 1), None);
        let junk = "group_id=1,packet_count=5,bucket0:packet_count=many,byte_count=300";
        assert_eq!(bucket_packets(junk, 1), None);
    }

    #[test]
    fn the_fast_tier_is_read_from_its_json() {
        let j = r#"{"enabled":true,"capacity":1024,"entries":[{"live":true},{"live":true}],
                    "events":{"hit":990,"miss":10,"metered":500,"meter_dropped":300}}"#;
        assert_eq!(
            tier(j),
            Ok(Tier { entries: 2, hit: 990, miss: 10, metered: 500, meter_dropped: 300 })
        );
        let old = r#"{"enabled":true,"entries":[],"events":{"hit":1,"miss":2}}"#;
        assert_eq!(tier(old), Ok(Tier { hit: 1, miss: 2, ..Tier::default() }));
        assert!(tier(r#"{"enabled":false}"#).unwrap_err().contains("off"));
        assert!(tier("fast path: off").is_err());
    }

    #[test]
    fn lines_give_what_changed_since_the_point_before() {
        // Bucket counts and a tier of 64 entries with `hit` kernel hits and 100 misses.
        let read = |buckets: Vec<u64>, hit: u64| Counts {
            buckets: Ok(buckets),
            tier: Some(Ok(Tier { entries: 64, hit, miss: 100, ..Tier::default() })),
        };
        let first = read(vec![600, 400], 900);
        assert_eq!(
            first.since(&Counts::default()),
            "buckets 600 (60.0%) / 400 (40.0%); fast tier: 64 entries, 900 of 1000 frames \
             forwarded in the kernel (90.0%)"
        );
        let second = read(vec![1100, 900], 1900);
        assert_eq!(
            second.since(&first),
            "buckets 500 (50.0%) / 500 (50.0%); fast tier: 64 entries, 1000 of 1000 frames \
             forwarded in the kernel (100.0%)"
        );
        let unread = Counts {
            buckets: Err("refused".into()),
            tier: Some(Err("the fast tier is off".into())),
        };
        assert_eq!(
            unread.since(&first),
            "bucket counts unread (refused); fast tier unread (the fast tier is off)"
        );
        let ovs = Counts { buckets: Ok(vec![3, 0]), tier: None };
        assert_eq!(ovs.since(&Counts::default()), "buckets 3 (100.0%) / 0 (0.0%)");
        assert_eq!(shares(&[]), "none");
        assert_eq!(shares(&[0, 0]), "0 (-) / 0 (-)");
    }

    #[test]
    fn ratios_are_to_the_baseline_at_the_same_point() {
        let s = |dut: &str, pts: &[(f64, f64)]| Series {
            dut: dut.into(),
            workers: None,
            points: pts
                .iter()
                .map(|&(x, m)| Point {
                    x,
                    forwarded_mpps: Some(Summary::single(m)),
                    ..Point::default()
                })
                .collect(),
        };
        let series = [
            s("peregrine-xdp", &[(64.0, 2.0), (128000.0, 1.0)]),
            s("bridge", &[(64.0, 0.8), (128000.0, 0.5)]),
            s("ovs-afxdp", &[(64.0, 0.2)]),
        ];
        assert_eq!(
            ratios_to(&series, "bridge"),
            [
                "peregrine-xdp 2.50× at 64 flows",
                "peregrine-xdp 2.00× at 128000 flows",
                "ovs-afxdp 0.25× at 64 flows"
            ]
        );
        assert!(ratios_to(&series[..1], "bridge").is_empty());
    }
}
