//! The backend a port gets when its configuration names none: AF_XDP where the kernel
//! and the driver support it in full and the port needs nothing changed for it, else
//! AF_PACKET, which works on any interface.
//!
//! AF_XDP is chosen when the kernel announces the interface's XDP features (Linux 6.3
//! and later) and they include native XDP with redirects (the driver runs the program
//! itself; in generic mode AF_XDP is slower than AF_PACKET), a full frame at the
//! interface's MTU fits an AF_XDP frame, and the interface has a receive queue for every
//! worker (AF_XDP serves one queue per socket; AF_PACKET spreads flows over workers
//! on any number of queues). Each choice comes with the reason, for the log.

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
    if !afxdp::fits_mtu(facts.mtu) {
        return afpacket(format!(
            "MTU {} is more than an AF_XDP frame holds (3822)",
            facts.mtu
        ));
    }
    if (facts.rx_queues as usize) < workers {
        return afpacket(format!(
            "{} receive queue(s) for {workers} workers",
            facts.rx_queues
        ));
    }
    let mode = if features.xsk_zerocopy() {
        "zero-copy"
    } else {
        "copy mode"
    };
    Choice {
        afxdp: true,
        why: format!("native XDP, {mode}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xdp_features::XdpFeatures;

    fn facts(features: Option<u64>, mtu: u32, rx_queues: u32) -> Facts {
        Facts {
            features: features.map(XdpFeatures),
            mtu,
            rx_queues,
        }
    }

    #[test]
    fn afxdp_only_where_everything_it_needs_is_there() {
        // A veth: basic, redirect and ndo_xmit (the peer has NAPI), no zero-copy.
        let veth = Some(0b111);
        assert_eq!(
            choose(facts(veth, 1500, 1), 1),
            Choice {
                afxdp: true,
                why: "native XDP, copy mode".into()
            }
        );
        assert_eq!(
            choose(facts(Some(0b1011), 9000 / 3, 8), 4).why,
            "native XDP, zero-copy"
        );
        let no = |f: Facts, w: usize| {
            let c = choose(f, w);
            assert!(!c.afxdp, "{c:?}");
            c.why
        };
        assert!(no(facts(None, 1500, 1), 1).contains("6.3"));
        assert_eq!(
            no(facts(Some(0), 1500, 1), 1),
            "the driver has no native XDP"
        );
        assert_eq!(
            no(facts(Some(0b001), 1500, 1), 1),
            "the driver has no native XDP"
        );
        assert!(no(facts(veth, 9000, 1), 1).contains("MTU 9000"));
        assert!(choose(facts(veth, 3822, 1), 1).afxdp);
        assert!(!choose(facts(veth, 3823, 1), 1).afxdp);
        assert_eq!(
            no(facts(veth, 1500, 1), 2),
            "1 receive queue(s) for 2 workers"
        );
        assert!(choose(facts(veth, 1500, 2), 2).afxdp);
    }
}
