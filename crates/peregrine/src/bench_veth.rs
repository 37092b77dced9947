//! `peregrine bench veth`: forwarding rate through veth pairs, one generator host to one
//! sink host, with peregrine (AF_XDP or AF_PACKET ports), the Linux bridge, Linux IPv4
//! routing and Open vSwitch's userspace datapath as devices under test in the same run.
//! peregrine is started here (`Switch::start`); the others by `bench::dut`.
//!
//! Each trial builds a fresh two-host topology, starts the device under test on the
//! root-side ends (the router and OVS move them into a namespace of their own), lets the
//! hosts learn each other (a ping), then floods 64..1518-byte UDP frames from host 1
//! (`bench::blast`, pinned to the generator CPU) for the given time and counts what host
//! 2's interface received. For the switches the frames are addressed to a MAC no host
//! has, so they flood them to the only other port and host 2's stack drops them at once
//! as not its own (its IP stack, and its ICMP replies, would otherwise run in the softirq
//! of whoever transmits to it: the device under test); for the router they go to its MAC
//! and to a prefix it routes to host 2, which drops them as not its own address. The offered rate is reported next
//! to the forwarded one: a generator that cannot outrun the device makes the figure a
//! floor, not a measurement. Before the flood, 20 pings through the idle device give
//! its idle round-trip time. Results are medians over the runs.

use std::time::{Duration, Instant};

use bench::topo::{Host, Topology};

use crate::config::{BackendName, PortConfig, RunConfig};
use crate::run::Switch;

/// Options of `peregrine bench veth`.
#[derive(Clone, Debug, clap::Args)]
pub struct VethArgs {
    /// Devices under test, in order.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "peregrine-afxdp,peregrine-afpacket,bridge"
    )]
    pub dut: Vec<Dut>,
    /// Frame sizes in bytes (64..=1518), comma separated.
    #[arg(long, value_delimiter = ',', default_value = "64,1500")]
    pub size: Vec<usize>,
    /// Seconds of traffic per trial.
    #[arg(long, default_value_t = 3.0)]
    pub seconds: f64,
    /// Trials per device and size (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub runs: usize,
    /// CPU of the generator.
    #[arg(long, default_value_t = 0)]
    pub gen_cpu: usize,
    /// CPU of peregrine's worker.
    #[arg(long, default_value_t = 1)]
    pub dut_cpu: usize,
    /// How the generator sends.
    #[arg(long, value_enum, default_value = "afxdp")]
    pub generator: Generator,
    /// Extra routes (random /24 and /32 prefixes towards the sink) in the router.
    #[arg(long, default_value_t = 0)]
    pub routes: usize,
    /// peregrine's flow table: `simple` is in_port=1,actions=output:2 and back; `normal`
    /// the learning switch alone.
    #[arg(long, value_enum, default_value = "simple")]
    pub rules: Rules,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Rules {
    Simple,
    Normal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Generator {
    Afxdp,
    Afpacket,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Dut {
    /// peregrine with AF_XDP ports (native mode where the driver allows).
    PeregrineAfxdp,
    /// peregrine with AF_XDP ports in generic (SKB) mode.
    PeregrineAfxdpGeneric,
    /// peregrine with AF_PACKET (TPACKET_V3) ports.
    PeregrineAfpacket,
    /// The Linux bridge (learning).
    Bridge,
    /// The Linux bridge, learning off, static FDB entries for both hosts.
    BridgeStatic,
    /// Linux IPv4 forwarding in a namespace of its own (`--routes` extra routes).
    Router,
    /// Open vSwitch userspace datapath, AF_PACKET (`type=system`) ports.
    OvsAfpacket,
    /// Open vSwitch userspace datapath, AF_XDP (`type=afxdp`) ports.
    OvsAfxdp,
}

impl Dut {
    fn name(self) -> &'static str {
        match self {
            Dut::PeregrineAfxdp => "peregrine-afxdp",
            Dut::PeregrineAfxdpGeneric => "peregrine-afxdp-generic",
            Dut::PeregrineAfpacket => "peregrine-afpacket",
            Dut::Bridge => "bridge",
            Dut::BridgeStatic => "bridge-static",
            Dut::Router => "router",
            Dut::OvsAfpacket => "ovs-afpacket",
            Dut::OvsAfxdp => "ovs-afxdp",
        }
    }

    fn backend(self) -> Option<BackendName> {
        match self {
            Dut::PeregrineAfxdp => Some(BackendName::Afxdp),
            Dut::PeregrineAfxdpGeneric => Some(BackendName::AfxdpGeneric),
            Dut::PeregrineAfpacket => Some(BackendName::Afpacket),
            _ => None,
        }
    }

    /// The `bench::dut` driver of a device other than peregrine.
    fn spec(self, a: &VethArgs) -> Option<bench::dut::Spec> {
        use bench::dut::{bridge::Fdb, ovs::PortType, Spec};
        match self {
            Dut::Bridge => Some(Spec::Bridge(Fdb::Learned)),
            Dut::BridgeStatic => Some(Spec::Bridge(Fdb::Static)),
            Dut::Router => Some(Spec::Router { routes: a.routes }),
            Dut::OvsAfpacket | Dut::OvsAfxdp => Some(Spec::Ovs {
                ports: if self == Dut::OvsAfxdp {
                    PortType::Afxdp
                } else {
                    PortType::Afpacket
                },
            }),
            _ => None,
        }
    }
}

/// One trial's figures.
struct Trial {
    /// Median round-trip time of pings through the idle device.
    rtt_ms: f64,
    offered_pps: f64,
    forwarded_pps: f64,
}

pub fn run(a: &VethArgs) -> Result<(), String> {
    crate::run::require_root("bench veth").map_err(|e| e.to_string())?;
    println!(
        "veth forwarding, generator ({:?}) on CPU {}, peregrine's worker and OVS's daemons on CPU {} with {} rules (the bridge and the router run in softirq wherever the kernel puts it; the router has {} extra routes); {} s per trial, median of {}",
        a.generator,
        a.gen_cpu,
        a.dut_cpu,
        match a.rules {
            Rules::Simple => "in_port=1,actions=output:2 (and back)",
            Rules::Normal => "NORMAL (learning switch)",
        },
        a.routes,
        a.seconds,
        a.runs
    );
    println!(
        "{:<24} {:>6} {:>14} {:>14} {:>8} {:>12}",
        "dut", "bytes", "offered Mpps", "forwarded Mpps", "Gbit/s", "idle rtt ms"
    );
    for &size in &a.size {
        if !(64..=1518).contains(&size) {
            return Err(format!("--size {size}: frames are 64 to 1518 bytes"));
        }
        for &dut in &a.dut {
            let mut trials = Vec::with_capacity(a.runs);
            for _ in 0..a.runs.max(1) {
                trials.push(
                    trial(dut, size, a).map_err(|e| format!("{}, {size} B: {e}", dut.name()))?,
                );
            }
            let med = |f: &dyn Fn(&Trial) -> f64| {
                let mut v: Vec<f64> = trials.iter().map(f).collect();
                v.sort_by(|x, y| x.total_cmp(y));
                v[v.len() / 2]
            };
            let fwd = med(&|t| t.forwarded_pps);
            println!(
                "{:<24} {:>6} {:>14.3} {:>14.3} {:>8.2} {:>12.3}",
                dut.name(),
                size,
                med(&|t| t.offered_pps) / 1e6,
                fwd / 1e6,
                // On the wire: frame (FCS included) + preamble and gap.
                fwd * (size + 20) as f64 * 8.0 / 1e9,
                med(&|t| t.rtt_ms)
            );
        }
    }
    Ok(())
}

/// The median round trip of 20 pings, 50 ms apart, from `a` to `b` (through the idle
/// device under test).
fn idle_rtt_ms(topo: &Topology, a: &Host, b: &Host) -> Result<f64, String> {
    let out = topo
        .in_ns(&a.ns, "ping", &["-c", "20", "-i", "0.05", "-W", "1", &b.ip])
        .map_err(|e| e.to_string())?;
    let mut rtts: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split("time=").nth(1))
        .filter_map(|t| t.split_whitespace().next()?.parse().ok())
        .collect();
    if rtts.is_empty() {
        return Err("no ping answered".into());
    }
    rtts.sort_by(|x, y| x.total_cmp(y));
    Ok(rtts[rtts.len() / 2])
}

/// Frames host `h`'s interface has received.
fn rx_packets(topo: &Topology, h: &Host) -> Result<u64, String> {
    let out = topo
        .in_ns(&h.ns, "cat", &["/sys/class/net/eth0/statistics/rx_packets"])
        .map_err(|e| e.to_string())?;
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .map_err(|e| format!("rx_packets: {e}"))
}

fn trial(dut: Dut, size: usize, a: &VethArgs) -> Result<Trial, String> {
    let mut topo = Topology::new();
    let h1 = topo.add_host(1).map_err(|e| e.to_string())?;
    let h2 = topo.add_host(2).map_err(|e| e.to_string())?;
    // Exactly one of the two is set; each tears its device down when dropped.
    let mut switch = None;
    let mut other = None;
    match (dut.backend(), dut.spec(a)) {
        (Some(backend), _) => {
            let ports = [&h1, &h2]
                .iter()
                .map(|h| PortConfig {
                    name: h.port.clone(),
                    backend,
                })
                .collect();
            let flows = match a.rules {
                Rules::Simple => ["in_port=1,actions=output:2", "in_port=2,actions=output:1"]
                    .iter()
                    .map(|f| {
                        let fm = openflow::text::parse_flow_mod(
                            f,
                            openflow::v13::flow_mod::FlowModCommand::Add,
                        )
                        .map_err(|e| format!("{f}: {e}"))?;
                        Ok((f.to_string(), fm))
                    })
                    .collect::<Result<Vec<_>, String>>()?,
                Rules::Normal => Vec::new(),
            };
            let cfg = RunConfig {
                flows,
                cpus: vec![a.dut_cpu],
                ..RunConfig::with_ports(ports)
            };
            switch = Some(Switch::start(&cfg).map_err(|e| format!("{e:#}"))?);
        }
        (None, Some(spec)) => {
            let setup = bench::dut::Setup {
                cpu: Some(a.dut_cpu),
                ..bench::dut::Setup::pair(&h1, &h2)
            };
            other = Some(spec.start_on(&mut topo, &setup)?)
        }
        (None, None) => return Err("no driver for this device".into()),
    }
    let target = match &other {
        Some(d) => d.target(&h2),
        None => bench::dut::Target {
            dst_mac: bench::dut::NOBODY,
            dst_ip: h2.ip.parse().map_err(|_| "bad host address".to_string())?,
        },
    };
    // Learning (and ARP) before the flood.
    let t = Instant::now();
    while topo
        .in_ns(&h1.ns, "ping", &["-c", "1", "-W", "1", &h2.ip])
        .is_err()
    {
        if t.elapsed() > Duration::from_secs(5) {
            return Err("host 1 cannot reach host 2".into());
        }
    }
    let rtt_ms = idle_rtt_ms(&topo, &h1, &h2)?;
    let before = rx_packets(&topo, &h2)?;
    let frame = frame(&h1, target, size)?;
    let gen = match a.generator {
        Generator::Afxdp => ports::Backend::AfXdp {
            mode: ports::afxdp::AttachMode::Auto,
        },
        Generator::Afpacket => ports::Backend::AfPacket,
    };
    let sent = bench::blast::start_with(
        gen,
        &h1.ns,
        "eth0",
        vec![frame],
        Duration::from_secs_f64(a.seconds),
        Some(a.gen_cpu),
    )
    .join()
    .map_err(|_| "generator panicked".to_string())?
    .map_err(|e| e.to_string())?;
    // Let the last frames through.
    std::thread::sleep(Duration::from_millis(100));
    let after = rx_packets(&topo, &h2)?;
    drop(switch);
    drop(other);
    let secs = sent.elapsed.as_secs_f64();
    Ok(Trial {
        rtt_ms,
        offered_pps: sent.packets as f64 / secs,
        forwarded_pps: after.saturating_sub(before) as f64 / secs,
    })
}

/// A `size`-byte UDP frame from host `a` addressed as `t` says.
fn frame(a: &Host, t: bench::dut::Target, size: usize) -> Result<Vec<u8>, String> {
    let src: std::net::Ipv4Addr = a.ip.parse().map_err(|_| format!("bad address {}", a.ip))?;
    let mut f = bench::workload::udp_frame(src.into(), t.dst_ip.into(), 9, 9, size);
    f[0..6].copy_from_slice(&t.dst_mac);
    f[6..12].copy_from_slice(&bench::dut::parse_mac(&a.mac)?);
    Ok(f)
}
