//! The stateless semantic checks of an OpenFlow 1.3 match (spec §7.2.3.6–7.2.3.8).
//!
//! Pass one walks the TLVs in wire order and, for each, checks in turn:
//! 1. its class: only OpenFlow basic fields are supported (`OFPBMC_BAD_FIELD`);
//! 2. that the field did not appear before (`OFPBMC_DUP_FIELD`);
//! 3. that no value bit is set where the mask is 0 (`OFPBMC_BAD_WILDCARDS`);
//! 4. the value's range (`OFPBMC_BAD_VALUE`), see [`check_value`].
//!
//! Pass two checks every field's prerequisites against the whole match
//! (`OFPBMC_BAD_PREREQ`), so the order of TLVs does not matter. A prerequisite field must
//! be present with the required value; `ETH_TYPE`, `IP_PROTO`, `ICMPV6_TYPE` and
//! `IN_PORT` cannot be masked, so "present" means "exact". `VLAN_VID != NONE` (for
//! `VLAN_PCP`) holds when `VLAN_VID` is present with a nonzero value, masked or not
//! (0x1000/0x1000 "any tagged" included): once bits outside the mask are zero, a nonzero
//! value cannot match the untagged value 0.
//!
//! Masks with bits beyond a field's meaningful width (a `VLAN_VID` mask of 0xffff) are
//! accepted: those bits constrain nothing, since the value bits there must be zero.

use super::Match;
use crate::action::port;
use crate::error::{ErrorKind, OfpError};
use crate::oxm::{Oxm, OxmField, OFPVID_PRESENT};

use headers::ethertype::{
    ARP as ETH_ARP, IPV4 as ETH_IPV4, IPV6 as ETH_IPV6, MPLS as ETH_MPLS,
    MPLS_MCAST as ETH_MPLS_MC, PBB as ETH_PBB,
};
use headers::ip_proto::{
    ICMP as PROTO_ICMP, ICMPV6 as PROTO_ICMPV6, SCTP as PROTO_SCTP, TCP as PROTO_TCP,
    UDP as PROTO_UDP,
};
use headers::nd::{NA as ND_ADVERT, NS as ND_SOLICIT};

fn err(kind: ErrorKind, detail: String) -> OfpError {
    OfpError::new(kind, detail)
}

pub(super) fn validate(m: &Match) -> Result<(), OfpError> {
    let mut seen = 0u64;
    for x in &m.fields {
        let Some(f) = x.field() else {
            return Err(err(
                ErrorKind::BAD_MATCH_BAD_FIELD,
                format!(
                    "OXM class 0x{:04x} field {} is not supported (only OpenFlow basic fields)",
                    x.class(),
                    x.header() >> 9 & 0x7f
                ),
            ));
        };
        let bit = 1u64 << (f as u8);
        if seen & bit != 0 {
            return Err(err(
                ErrorKind::BAD_MATCH_DUP_FIELD,
                format!("field {} appears more than once", f.name()),
            ));
        }
        seen |= bit;
        check_wildcards(x, f)?;
        check_value(x)?;
    }
    let c = Facts::of(m);
    m.fields.iter().try_for_each(|x| check_prereq(&c, x))
}

fn check_wildcards(x: &Oxm, f: OxmField) -> Result<(), OfpError> {
    let Some(mask) = x.mask_bytes() else {
        return Ok(());
    };
    let value = x.value_bytes();
    if value.iter().zip(&mask).any(|(v, m)| v & !m != 0) {
        return Err(err(
            ErrorKind::BAD_MATCH_BAD_WILDCARDS,
            format!(
                "{} value {} has bits set outside its mask {}",
                f.name(),
                hex(&value),
                hex(&mask)
            ),
        ));
    }
    Ok(())
}

fn hex(b: &[u8]) -> String {
    let mut s = String::from("0x");
    for byte in b {
        s.push_str(&format!("{byte:02x}"));
    }
    s
}

/// Range checks. Ingress ports: `IN_PORT` must be a standard port (1..=`OFPP_MAX`) or
/// one a packet can arrive on from outside the pipeline, `OFPP_LOCAL` or
/// `OFPP_CONTROLLER` (packet-out); 0, `OFPP_ANY` and the output-only reserved ports
/// (`IN_PORT`, `TABLE`, `NORMAL`, `FLOOD`, `ALL`) and unassigned numbers above
/// `OFPP_MAX` are rejected. `IN_PHY_PORT` must be a standard port.
fn check_value(x: &Oxm) -> Result<(), OfpError> {
    let bad = |what: String| Err(err(ErrorKind::BAD_MATCH_BAD_VALUE, what));
    match *x {
        Oxm::InPort(p)
            if p == 0 || (p > port::MAX && p != port::LOCAL && p != port::CONTROLLER) =>
        {
            bad(format!("in_port 0x{p:x} is not a valid ingress port"))
        }
        Oxm::InPhyPort(p) if p == 0 || p > port::MAX => {
            bad(format!("in_phy_port 0x{p:x} is not a physical port"))
        }
        Oxm::VlanVid(v, _) if v > 0x1fff => bad(format!("vlan_vid 0x{v:x} exceeds 0x1fff")),
        Oxm::VlanVid(v, None) if v != 0 && v & OFPVID_PRESENT == 0 => {
            bad(format!("vlan_vid 0x{v:x} has a VLAN id without OFPVID_PRESENT (0x1000)"))
        }
        Oxm::VlanVid(v, Some(m))
            if m & OFPVID_PRESENT != 0 && v & OFPVID_PRESENT == 0 && v != 0 =>
        {
            bad(format!("vlan_vid 0x{v:x}/0x{m:x} asks for an untagged packet with a VLAN id"))
        }
        Oxm::VlanPcp(v) if v > 7 => bad(format!("vlan_pcp {v} exceeds 7")),
        Oxm::IpDscp(v) if v > 63 => bad(format!("ip_dscp {v} exceeds 63")),
        Oxm::IpEcn(v) if v > 3 => bad(format!("ip_ecn {v} exceeds 3")),
        Oxm::MplsLabel(v) if v >= 1 << 20 => bad(format!("mpls_label 0x{v:x} exceeds 20 bits")),
        Oxm::MplsTc(v) if v > 7 => bad(format!("mpls_tc {v} exceeds 7")),
        Oxm::MplsBos(v) if v > 1 => bad(format!("mpls_bos {v} exceeds 1")),
        Oxm::Ipv6Flabel(v, _) if v >= 1 << 20 => {
            bad(format!("ipv6_flabel 0x{v:x} exceeds 20 bits"))
        }
        Oxm::PbbIsid(v, _) if v >= 1 << 24 => bad(format!("pbb_isid 0x{v:x} exceeds 24 bits")),
        Oxm::PbbUca(v) if v > 1 => bad(format!("pbb_uca {v} exceeds 1")),
        Oxm::Ipv6Exthdr(v, _) if v > 0x1ff => {
            bad(format!("ipv6_exthdr 0x{v:x} exceeds 9 bits (0x1ff)"))
        }
        _ => Ok(()),
    }
}

/// What a match pins down about the packets it admits, as far as OpenFlow 1.3
/// prerequisites (1.3.5 §7.2.3.7, table 12) care: whether the ingress port is given,
/// whether an outer VLAN tag is present, the ethertype, the IP protocol and the ICMPv6
/// type. [`Match::validate`] checks each match field against the whole match's facts
/// (`OFPBMC_BAD_PREREQ`); the switch agent checks each set-field against the facts of
/// the flow's match as the actions before it leave them (`OFPBAC_MATCH_INCONSISTENT`),
/// with [`Facts::unmet`] for both, so there is one prerequisite table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Facts {
    pub in_port: bool,
    pub vlan_tagged: bool,
    pub eth_type: Option<u16>,
    pub ip_proto: Option<u8>,
    pub icmpv6_type: Option<u8>,
}

impl Facts {
    /// The facts of match `m` (for a field given twice, the last; a match that
    /// validates has none twice). `ETH_TYPE`, `IP_PROTO` and `ICMPV6_TYPE` cannot be
    /// masked, so a present one is exact; `VLAN_VID` says "tagged" when its value is
    /// nonzero, masked or not (0x1000/0x1000 "any tagged" included): once bits outside
    /// the mask are zero, a nonzero value cannot match the untagged value 0.
    pub fn of(m: &Match) -> Facts {
        let mut c = Facts::default();
        for x in &m.fields {
            match *x {
                Oxm::InPort(_) => c.in_port = true,
                Oxm::VlanVid(v, _) => c.vlan_tagged = v != 0,
                Oxm::EthType(t) => c.eth_type = Some(t),
                Oxm::IpProto(p) => c.ip_proto = Some(p),
                Oxm::Icmpv6Type(t) => c.icmpv6_type = Some(t),
                _ => {}
            }
        }
        c
    }

    fn eth_is(&self, types: &[u16]) -> bool {
        self.eth_type.is_some_and(|t| types.contains(&t))
    }

    fn ip(&self) -> bool {
        self.eth_is(&[ETH_IPV4, ETH_IPV6])
    }

    fn proto_is(&self, p: u8) -> bool {
        self.ip_proto == Some(p)
    }

    /// `None` if these facts meet field `f`'s prerequisites; otherwise what `f` needs,
    /// in words ("ip_proto 6 with eth_type 0x0800 or 0x86dd").
    pub fn unmet(&self, f: OxmField) -> Option<&'static str> {
        use OxmField as F;
        let c = self;
        let (ok, need) = match f {
            F::InPhyPort => (c.in_port, "in_port"),
            F::VlanPcp => (c.vlan_tagged, "vlan_vid other than OFPVID_NONE"),
            F::IpDscp | F::IpEcn | F::IpProto => (c.ip(), "eth_type 0x0800 or 0x86dd"),
            F::Ipv4Src | F::Ipv4Dst => (c.eth_is(&[ETH_IPV4]), "eth_type 0x0800"),
            F::TcpSrc | F::TcpDst => {
                (c.ip() && c.proto_is(PROTO_TCP), "ip_proto 6 with eth_type 0x0800 or 0x86dd")
            }
            F::UdpSrc | F::UdpDst => {
                (c.ip() && c.proto_is(PROTO_UDP), "ip_proto 17 with eth_type 0x0800 or 0x86dd")
            }
            F::SctpSrc | F::SctpDst => {
                (c.ip() && c.proto_is(PROTO_SCTP), "ip_proto 132 with eth_type 0x0800 or 0x86dd")
            }
            F::Icmpv4Type | F::Icmpv4Code => {
                (c.eth_is(&[ETH_IPV4]) && c.proto_is(PROTO_ICMP), "ip_proto 1 with eth_type 0x0800")
            }
            F::ArpOp | F::ArpSpa | F::ArpTpa | F::ArpSha | F::ArpTha => {
                (c.eth_is(&[ETH_ARP]), "eth_type 0x0806")
            }
            F::Ipv6Src | F::Ipv6Dst | F::Ipv6Flabel | F::Ipv6Exthdr => {
                (c.eth_is(&[ETH_IPV6]), "eth_type 0x86dd")
            }
            F::Icmpv6Type | F::Icmpv6Code => (
                c.eth_is(&[ETH_IPV6]) && c.proto_is(PROTO_ICMPV6),
                "ip_proto 58 with eth_type 0x86dd",
            ),
            F::Ipv6NdTarget => (
                c.eth_is(&[ETH_IPV6])
                    && c.proto_is(PROTO_ICMPV6)
                    && matches!(c.icmpv6_type, Some(ND_SOLICIT | ND_ADVERT)),
                "icmpv6_type 135 or 136 (with ip_proto 58, eth_type 0x86dd)",
            ),
            F::Ipv6NdSll => (
                c.eth_is(&[ETH_IPV6])
                    && c.proto_is(PROTO_ICMPV6)
                    && c.icmpv6_type == Some(ND_SOLICIT),
                "icmpv6_type 135 (with ip_proto 58, eth_type 0x86dd)",
            ),
            F::Ipv6NdTll => (
                c.eth_is(&[ETH_IPV6])
                    && c.proto_is(PROTO_ICMPV6)
                    && c.icmpv6_type == Some(ND_ADVERT),
                "icmpv6_type 136 (with ip_proto 58, eth_type 0x86dd)",
            ),
            F::MplsLabel | F::MplsTc | F::MplsBos => {
                (c.eth_is(&[ETH_MPLS, ETH_MPLS_MC]), "eth_type 0x8847 or 0x8848")
            }
            F::PbbIsid | F::PbbUca => (c.eth_is(&[ETH_PBB]), "eth_type 0x88e7"),
            F::InPort
            | F::Metadata
            | F::EthDst
            | F::EthSrc
            | F::EthType
            | F::VlanVid
            | F::TunnelId => (true, ""),
        };
        (!ok).then_some(need)
    }
}

fn check_prereq(c: &Facts, x: &Oxm) -> Result<(), OfpError> {
    let Some(f) = x.field() else { return Ok(()) };
    match c.unmet(f) {
        None => Ok(()),
        Some(need) => {
            Err(err(ErrorKind::BAD_MATCH_BAD_PREREQ, format!("{} requires {need}", f.name())))
        }
    }
}
