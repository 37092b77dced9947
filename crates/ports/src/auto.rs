//! The backend a port gets when its configuration names none: AF_XDP where the kernel
//! and the driver support it in full and the port needs nothing changed for it, else
//! AF_PACKET, which works on any interface.
//!
//! AF_XDP is chosen when the kernel announces the interface's XDP features (Linux 6.3
//! and later) and they include native XDP with redirects (the driver runs the program
//! itself) and zero-copy AF_XDP sockets, a full frame at the interface's MTU fits an
//! AF_XDP frame, and the interface has a receive queue for every worker (AF_XDP serves
//! one queue per socket; AF_PACKET spreads flows over workers on any number of queues).
//! Each choice comes with the reason, for the log.
//!
//! Zero-copy is required because without it (veth, tap, many NIC drivers) AF_XDP copies
//! every frame as AF_PACKET does, but cannot take a host's GSO super-frames whole: the
//! kernel cuts them into segments before the XDP program, where AF_PACKET's vnet header
//! passes up to 64 KiB at a time. On a veth bed (hosts with default offloads, one TCP
//! stream through two ports) AF_PACKET carried 12.9 Gbit/s and copy-mode AF_XDP 2.8,
//! with thousands of retransmissions; at 64 B copy-mode AF_XDP forwarded about 1.2 times
//! AF_PACKET's rate, the smaller matter for a default.

use crate::afxdp;
use crate::error::PortError;
use crate::info::InterfaceInfo;
use crate::xdp_features;

/// The backend chosen for a port, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Choice {
    /// AF_XDP (native mode) rather than AF_PACKET.
    pub afxdp: bool,
    /// Why, in words, e.g. "native XDP, copy mode" or "the driver has no native XDP".
    pub why: String,
}

/// What [`choose`] looks at, read from the interface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    /// The XDP features the kernel announces; none: it announces none (before 6.3).
    pub features: Option<xdp_features::XdpFeatures>,
    pub mtu: u32,
    pub rx_queues: u32,
}

impl Facts {
    /// Reads the facts of interface `name` (in the calling thread's namespace).
    pub fn of(name: &str) -> Result<Facts, PortError> {
        let info = InterfaceInfo::by_name(name)?;
        Ok(Facts {
            features: xdp_features::query(info.ifindex)?,
            mtu: info.mtu,
            rx_queues: afxdp::rx_queues(name)?,
        })
    }
}

/// The backend for a port with these facts served by `workers` workers.
pub fn choose(facts: Facts, workers: usize) -> Choice {
    let afpacket = |why: String| Choice { afxdp: false, why };
    let Some(features) = facts.features else {
        return afpacket(
            "this kernel does not say whether the driver runs XDP (Linux 6.3 and later do)".into(),
        );
    };
    if !features.native() {
        return afpacket("the driver has no native XDP".into());
    }
    if !features.xsk_zerocopy() {
        return afpacket(
            "no zero-copy AF_XDP on this driver: in copy mode AF_XDP takes the hosts' GSO \
             super-frames as single segments, AF_PACKET whole"
                .into(),
        );
    }
    if !afxdp::fits_mtu(facts.mtu) {
        return afpacket(format!("MTU {} is more than an AF_XDP frame holds (3822)", facts.mtu));
    }
    if (facts.rx_queues as usize) < workers {
        return afpacket(format!("{} receive queue(s) for {workers} workers", facts.rx_queues));
    }
    Choice { afxdp: true, why: "native XDP, zero-copy".into() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xdp_features::XdpFeatures;

    fn facts(features: Option<u64>, mtu: u32, rx_queues: u32) -> Facts {
        Facts { features: features.map(XdpFeatures), mtu, rx_queues }
    }

    #[test]
    fn afxdp_only_where_everything_it_needs_is_there() {
        // A NIC with zero-copy AF_XDP: basic, redirect, ndo_xmit, xsk_zerocopy.
        let nic = Some(0b1111);
        assert_eq!(
            choose(facts(nic, 1500, 1), 1),
            Choice { afxdp: true, why: "native XDP, zero-copy".into() }
        );
        // ndo_xmit (redirects *to* the port) is no condition.
        assert!(choose(facts(Some(0b1011), 3000, 8), 4).afxdp);
        let no = |f: Facts, w: usize| {
            let c = choose(f, w);
            assert!(!c.afxdp, "{c:?}");
            c.why
        };
        assert!(no(facts(None, 1500, 1), 1).contains("6.3"));
        assert_eq!(no(facts(Some(0), 1500, 1), 1), "the driver has no native XDP");
        assert_eq!(no(facts(Some(0b001), 1500, 1), 1), "the driver has no native XDP");
        // A veth: basic, redirect and ndo_xmit (its peer has NAPI), no zero-copy.
        assert!(no(facts(Some(0b111), 1500, 4), 1).starts_with("no zero-copy AF_XDP"));
        assert!(no(facts(nic, 9000, 1), 1).contains("MTU 9000"));
        assert!(choose(facts(nic, 3822, 1), 1).afxdp);
        assert!(!choose(facts(nic, 3823, 1), 1).afxdp);
        assert_eq!(no(facts(nic, 1500, 1), 2), "1 receive queue(s) for 2 workers");
        assert!(choose(facts(nic, 1500, 2), 2).afxdp);
    }
}
