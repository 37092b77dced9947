//! What a tier can redo of a decision: the vocabulary in which a tier tells the datapath
//! ([`Mirror::capabilities`](super::Mirror::capabilities)) which of the things a
//! [`Decision`](super::Decision) may contain its program does, so that
//! [`Datapath::decision`](crate::pipeline::Datapath::decision) accepts only decisions
//! the tier can copy and names the capability it lacks for the others
//! ([`Ineligible::Unsupported`]).
//!
//! The datapath knows what each capability means for a decision (which actions, group
//! types, meters and outputs need it); the tier knows which ones its program has. What
//! no [`Capability`] names is not a property of a tier but of what a decision can carry
//! (see the module comment of [`crate::mirror`]): the controller, set-queue, PBB, TTL
//! copies, OpenFlow 1.0's conditional rewrites and reserved outputs other than FLOOD,
//! ALL, IN_PORT and NORMAL are never copied, whatever a tier says.

use crate::action::Action;
use crate::group::GroupKind;
use crate::key::Field;

use super::Ineligible;

/// Declares [`Capability`] from its variants, each with its docs and what it does in
/// words: the enum, [`Capability::ALL`] (every variant, in declaration order) and
/// [`Capability::what`].
macro_rules! capabilities {
    ($($(#[$doc:meta])* $name:ident => $what:literal,)*) => {
        /// One thing a tier can redo of a decision (see [`Capabilities`]). Each is all or
        /// nothing: a decision that needs one the tier lacks is refused with
        /// [`Ineligible::Unsupported`] naming it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Capability {
            $($(#[$doc])* $name,)*
        }

        impl Capability {
            /// Every capability, in declaration order.
            pub const ALL: [Capability; [$(Capability::$name),*].len()] = [$(Capability::$name),*];

            /// What it does, in words ("push_mpls", "select groups").
            pub fn what(self) -> &'static str {
                match self {
                    $(Capability::$name => $what,)*
                }
            }
        }
    };
}

capabilities! {
    /// Set-field of the Ethernet destination or source.
    SetEth => "set-field of an Ethernet address",
    /// Set-field of the VLAN VID or PCP of the outermost tag.
    SetVlan => "set-field of the VLAN VID or PCP",
    /// Set-field of the IPv4 DSCP or ECN (the TOS byte, with the header checksum).
    SetIpTos => "set-field of the IPv4 DSCP or ECN",
    /// Set-field of the IPv4 source or destination address (with the header and the
    /// TCP/UDP checksums).
    SetIpv4 => "set-field of an IPv4 address",
    /// Set-field of the TCP or UDP source or destination port (with its checksum).
    SetTransport => "set-field of a TCP or UDP port",
    /// Set-field of the outermost MPLS label stack entry's label, TC or bottom-of-stack
    /// bit.
    SetMpls => "set-field of the MPLS label, TC or bottom-of-stack bit",
    /// push_vlan.
    PushVlan => "push_vlan",
    /// pop_vlan.
    PopVlan => "pop_vlan",
    /// push_mpls with ethertype 0x8847 or 0x8848.
    PushMpls => "push_mpls",
    /// pop_mpls.
    PopMpls => "pop_mpls",
    /// set_nw_ttl and dec_nw_ttl (IPv4).
    IpTtl => "set or decrement of the IP TTL",
    /// set_mpls_ttl and dec_mpls_ttl (the outermost label stack entry's TTL, which a
    /// decision carries in its [`TtlVariant`](super::TtlVariant)s).
    MplsTtl => "set or decrement of the MPLS TTL",
    /// Groups of type all (the buckets the decision takes, see
    /// [`groups`](super::groups)).
    GroupAll => "all groups",
    /// Groups of type select: the bucket the microflow's hash picks among the live ones,
    /// so the decision covers its microflow alone and reads port liveness.
    GroupSelect => "select groups",
    /// Groups of type indirect.
    GroupIndirect => "indirect groups",
    /// Groups of type fast-failover: the first live bucket, so the decision reads port
    /// liveness.
    GroupFastFailover => "fast-failover groups",
    /// One frame sent to several ports (FLOOD, ALL, several outputs, an all group's
    /// buckets, NORMAL flooding).
    Broadcast => "one frame to several ports",
    /// An output to NORMAL whose answer the MAC table fixes (the decision carries a
    /// [`NormalCredit`](super::NormalCredit); the tier must withdraw it when the table
    /// changes).
    Normal => "output to NORMAL",
    /// One meter on the path, metered with cells shared with the datapath
    /// ([`MeterCredit`](super::MeterCredit)), of at most [`Capabilities::meter_bands`]
    /// bands, whose drop bands it applies.
    Meter => "meters",
    /// A meter band that remarks the DSCP (with [`Capability::Meter`]).
    DscpRemark => "DSCP remark bands",
}

// Each capability is a bit of `Capabilities::set`.
const _: () = assert!(Capability::ALL.len() <= u32::BITS as usize);

impl Capability {
    const fn bit(self) -> u32 {
        1 << self as u32
    }

    /// The capability running a group of `kind` needs.
    pub fn group(kind: GroupKind) -> Capability {
        match kind {
            GroupKind::All => Capability::GroupAll,
            GroupKind::Select => Capability::GroupSelect,
            GroupKind::Indirect => Capability::GroupIndirect,
            GroupKind::FastFailover => Capability::GroupFastFailover,
        }
    }

    /// The capability executing action `a` needs, if it is one a capability covers
    /// (`None`: an output to a port, a group, whose type is judged when it runs, or an
    /// action that no capability covers).
    pub fn of_action(a: &Action) -> Option<Capability> {
        use Field::*;
        Some(match a {
            Action::Output(crate::action::port::NORMAL) => Capability::Normal,
            Action::SetField(EthDst | EthSrc, _) => Capability::SetEth,
            Action::SetField(VlanVid | VlanPcp, _) => Capability::SetVlan,
            Action::SetField(IpDscp | IpEcn, _) => Capability::SetIpTos,
            Action::SetField(Ipv4Src | Ipv4Dst, _) => Capability::SetIpv4,
            Action::SetField(TpSrc | TpDst, _) => Capability::SetTransport,
            Action::SetField(MplsLabel | MplsTc | MplsBos, _) => Capability::SetMpls,
            Action::PushVlan(_) => Capability::PushVlan,
            Action::PopVlan => Capability::PopVlan,
            Action::PushMpls(0x8847 | 0x8848) => Capability::PushMpls,
            Action::PopMpls(_) => Capability::PopMpls,
            Action::SetNwTtl(_) | Action::DecNwTtl => Capability::IpTtl,
            Action::SetMplsTtl(_) | Action::DecMplsTtl => Capability::MplsTtl,
            _ => return None,
        })
    }
}

impl std::fmt::Display for Capability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.what())
    }
}

/// The set of [`Capability`]s a tier has, and the most bands of a meter it runs. A
/// constant of the tier: the datapath asks for it when it judges a decision
/// ([`Mirror::capabilities`](super::Mirror::capabilities)). Invariant:
/// `meter_bands` means something only with [`Capability::Meter`] (without it no meter is
/// copied); a meter also needs cells shared with the datapath, which hold at most
/// [`KERNEL_BANDS`](crate::meter::KERNEL_BANDS) bands whatever a tier says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// One bit per [`Capability`] (`1 << c as u32`).
    set: u32,
    meter_bands: u8,
}

impl Capabilities {
    /// Nothing: only decisions that look tables up, go to ports one at a time, write
    /// metadata and actions, or drop.
    pub const NONE: Capabilities = Capabilities { set: 0, meter_bands: 0 };

    /// Everything the datapath can hand a tier, meters of as many bands as shared cells
    /// hold. What [`Datapath::decision`](crate::pipeline::Datapath::decision) judges
    /// against while no tier is set.
    pub const ALL: Capabilities =
        Capabilities::of(&Capability::ALL).with_meter_bands(crate::meter::KERNEL_BANDS as u8);

    /// The capabilities of `list`, with meters of no band (see
    /// [`with_meter_bands`](Self::with_meter_bands)).
    pub const fn of(list: &[Capability]) -> Capabilities {
        let mut c = Capabilities::NONE;
        let mut i = 0;
        while i < list.len() {
            c = c.with(list[i]);
            i += 1;
        }
        c
    }

    /// These and `c`.
    pub const fn with(self, c: Capability) -> Capabilities {
        Capabilities { set: self.set | c.bit(), meter_bands: self.meter_bands }
    }

    /// These but `c`.
    pub const fn without(self, c: Capability) -> Capabilities {
        Capabilities { set: self.set & !c.bit(), meter_bands: self.meter_bands }
    }

    /// These, running meters of at most `bands` bands.
    pub const fn with_meter_bands(self, bands: u8) -> Capabilities {
        Capabilities { set: self.set, meter_bands: bands }
    }

    /// Whether `c` is one of them.
    pub const fn has(self, c: Capability) -> bool {
        self.set & c.bit() != 0
    }

    /// The most bands of a meter the tier runs.
    pub const fn meter_bands(self) -> u8 {
        self.meter_bands
    }

    /// `Ok` if `c` is one of them, else the refusal that names it.
    pub fn need(self, c: Capability) -> Result<(), Ineligible> {
        if self.has(c) {
            Ok(())
        } else {
            Err(Ineligible::Unsupported(c))
        }
    }

    /// `Ok` if action `a` needs none of the capabilities these lack.
    pub fn allow(self, a: &Action) -> Result<(), Ineligible> {
        Capability::of_action(a).map_or(Ok(()), |c| self.need(c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_lists_every_capability_in_declaration_order() {
        for (i, c) in Capability::ALL.into_iter().enumerate() {
            assert_eq!(c as usize, i, "{c:?}");
        }
    }

    #[test]
    fn each_capability_is_its_own_bit() {
        let all = Capabilities::of(&Capability::ALL);
        for c in Capability::ALL {
            assert!(all.has(c) && !Capabilities::NONE.has(c), "{c:?}");
            let less = all.without(c);
            assert!(!less.has(c), "{c:?}");
            for d in Capability::ALL.into_iter().filter(|d| *d != c) {
                assert!(less.has(d), "{c:?} took {d:?} with it");
            }
            assert_eq!(less.with(c), all);
            assert_eq!(Capabilities::NONE.need(c), Err(Ineligible::Unsupported(c)));
        }
        assert_eq!(Capabilities::ALL.meter_bands(), crate::meter::KERNEL_BANDS as u8);
    }

    #[test]
    fn actions_need_the_capability_of_their_class() {
        use crate::action::port;
        let cases = [
            (Action::SetField(Field::EthSrc, 1), Some(Capability::SetEth)),
            (Action::SetField(Field::VlanPcp, 1), Some(Capability::SetVlan)),
            (Action::SetField(Field::IpEcn, 1), Some(Capability::SetIpTos)),
            (Action::SetField(Field::Ipv4Dst, 1), Some(Capability::SetIpv4)),
            (Action::SetField(Field::TpDst, 1), Some(Capability::SetTransport)),
            (Action::SetField(Field::MplsBos, 1), Some(Capability::SetMpls)),
            (Action::PushMpls(0x8848), Some(Capability::PushMpls)),
            (Action::DecMplsTtl, Some(Capability::MplsTtl)),
            (Action::SetNwTtl(3), Some(Capability::IpTtl)),
            (Action::Output(port::NORMAL), Some(Capability::Normal)),
            (Action::Output(2), None),
            (Action::Output(port::FLOOD), None),
            (Action::Group(1), None),
            // Not a capability: refused for what it is (see `kernel_action`).
            (Action::PushMpls(0x0800), None),
        ];
        for (a, want) in cases {
            assert_eq!(Capability::of_action(&a), want, "{a:?}");
            let lacking = want.map_or(Capabilities::NONE, |c| Capabilities::ALL.without(c));
            assert_eq!(lacking.allow(&a).is_ok(), want.is_none(), "{a:?} with {lacking:?}");
        }
    }
}
