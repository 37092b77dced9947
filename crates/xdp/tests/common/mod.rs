//! What the root tests of the program share: a UDP frame, the Internet checksum, a
//! thread in a network namespace of its own, a datapath of a few ports and its kernel
//! tier.

#![allow(dead_code)]

use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Instant;

use datapath::key::FlowKey;
use datapath::pipeline::{Datapath, DatapathConfig, PacketIn, PortInfo, Writer};
use ports::afxdp::AttachMode;
use xdp::tier::KernelTier;
use xdp::{Attached, FastPath};

/// The key of `frame` arriving on port 1 (which must parse without error).
pub fn key_of(frame: &[u8]) -> FlowKey {
    let mut k = FlowKey::ZERO;
    assert!(datapath::parse::parse(frame, 1, &mut k).error.is_none());
    k
}

/// A datapath of ports 1..=`n` in slots 0..`n` (a packet-in queue of 16).
pub fn datapath(n: u32) -> (Datapath, Writer, Receiver<PacketIn>) {
    let cfg = DatapathConfig {
        ports: (1..=n).map(|p| PortInfo::new(p, (p - 1) as u16)).collect(),
        ..DatapathConfig::default()
    };
    Datapath::new(cfg, 16)
}

/// `fp`'s kernel tier for `dp` on the clock that started at `started`, made `dp`'s
/// mirror.
pub fn mirrored(fp: &Arc<FastPath>, dp: &Datapath, started: Instant) -> Arc<KernelTier> {
    let tier = KernelTier::new(fp.clone(), dp.clone(), started);
    assert!(dp.set_mirror(tier.clone()));
    tier
}

/// Ethernet/IPv4/UDP with valid checksums.
pub fn udp_frame(sport: u16) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    let mut ip = vec![0x45, 0, 0, 32, 0, 1, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
    let c = csum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    let mut udp = vec![0, 0, 0, 53, 0, 12, 0, 0, 1, 2, 3, 4];
    udp[..2].copy_from_slice(&sport.to_be_bytes());
    let mut ph = ip[12..20].to_vec();
    ph.extend_from_slice(&[0, 17, 0, 12]);
    ph.extend_from_slice(&udp);
    let c = csum(&ph);
    udp[6..8].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(&udp);
    f.resize(60, 0);
    f
}

pub fn csum(b: &[u8]) -> u16 {
    let mut acc: u64 =
        b.chunks(2).map(|c| u64::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))).sum();
    while acc >> 16 != 0 {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// Runs `body` on a thread moved into a fresh network namespace (which goes away with
/// the thread), so the loopback there (ifindex 1) is ours alone, with IPv6 off so the
/// kernel sends nothing of its own on the interfaces made there.
pub fn in_fresh_netns(body: impl FnOnce() + Send + 'static) {
    std::thread::spawn(move || {
        // SAFETY: unshare(CLONE_NEWNET) only changes this thread's network namespace;
        // the thread is ours and ends when `body` returns.
        let rc = unsafe { libc::unshare(libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "unshare: {}", std::io::Error::last_os_error());
        // No IPv6 on the interfaces the test makes: their router solicitations and MLD
        // reports would otherwise land in the counts the tests compare.
        for conf in ["all", "default"] {
            let path = format!("/proc/sys/net/ipv6/conf/{conf}/disable_ipv6");
            std::fs::write(&path, "1").unwrap_or_else(|e| panic!("{path}: {e}"));
        }
        body();
    })
    .join()
    .expect("test thread");
}

/// `CMD ARGS` in the calling thread's namespace, which must succeed.
pub fn run_ok(cmd: &str, args: &[&str]) {
    let st = std::process::Command::new(cmd).args(args).status().unwrap();
    assert!(st.success(), "{cmd} {args:?}");
}

/// A veth pair `a`-`b`, both up, in the calling thread's namespace: `a`'s ifindex.
pub fn veth(a: &str, b: &str) -> u32 {
    run_ok("ip", &["link", "add", a, "type", "veth", "peer", "name", b]);
    run_ok("ip", &["link", "set", a, "up"]);
    run_ok("ip", &["link", "set", b, "up"]);
    ports::InterfaceInfo::by_name(a).unwrap().ifindex
}

/// `fp` attached (generic mode, one queue) to the loopback as port 1, where frames are
/// run "arriving", then to a new veth `{a}{p}`-`{b}{p}` as port `p` for each `p` of
/// 2..=`last`: the attachments in port order.
pub fn attach_ports(fp: &FastPath, a: &str, b: &str, last: u32) -> Vec<Attached> {
    let mut attached = vec![fp.attach("lo", 1, 1, 1, AttachMode::Generic).unwrap()];
    for p in 2..=last {
        let (a, b) = (format!("{a}{p}"), format!("{b}{p}"));
        let ifindex = veth(&a, &b);
        attached.push(fp.attach(&a, ifindex, p, 1, AttachMode::Generic).unwrap());
    }
    attached
}

/// A label stack entry.
pub fn lse(label: u32, tc: u32, bos: u32, ttl: u32) -> u32 {
    (label << 12) | (tc << 9) | (bos << 8) | ttl
}

/// An MPLS frame (ethertype `ty`, tagged with TCI `tci` if given) with label stack
/// `stack`, then an IPv4 packet of `ip_len` bytes (at least 20).
pub fn mpls_frame(tci: Option<u16>, ty: u16, stack: &[u32], ip_len: usize) -> Vec<u8> {
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];
    if let Some(tci) = tci {
        f.extend_from_slice(&[0x81, 0x00]);
        f.extend_from_slice(&tci.to_be_bytes());
    }
    f.extend_from_slice(&ty.to_be_bytes());
    for e in stack {
        f.extend_from_slice(&e.to_be_bytes());
    }
    let mut ip = vec![0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 253, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
    ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
    let c = csum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    ip.resize(ip_len, 0x77);
    f.extend_from_slice(&ip);
    f
}
