//! Building fast-path keys from userspace flow keys, and the ovs-ofctl-like text of
//! keys and entries (for dump commands).
//!
//! [`FpKey::from_flow_key`] gives the key the program builds for a frame whose userspace
//! [`FlowKey`] is `k`, or `None` for the kinds of frames the program never parses. An
//! MPLS frame's label, TC and BoS go where an IPv4 frame's source is (see [`FpKey`]). The
//! `FlowKey` cannot tell everything the program checks (a truncated IPv4 packet, a
//! second VLAN tag with TPID 0x8100 and options-only TCP problems leave no trace in
//! it): for those frames the program sends the frame to user space although a key
//! exists, which is safe, as such frames never look the key up.

use datapath::key::{Field, FlowKey};

use crate::layout::*;

impl FpKey {
    /// The key the program would build for any frame it parses whose userspace flow key
    /// is `k`; `None` when the program does not parse such frames.
    pub fn from_flow_key(k: &FlowKey) -> Option<FpKey> {
        let eth_type = k.get(Field::EthType) as u16;
        if matches!(eth_type, 0x05ff | 0x86dd | 0x0806 | 0x88e7 | 0x8100 | 0x88a8)
            || eth_type < 0x0600
        {
            return None;
        }
        if eth_type == 0x0800 && (k.get(Field::IpFrag) != 0 || k.get(Field::IpProto) == 132) {
            return None;
        }
        Some(FpKey::read(k, k))
    }

    /// The mask the program applies for a decision whose received flow key `k` depends
    /// on the bits of `mask` ([`datapath::mirror::Credit::mask`]): each program key
    /// field gets the bits of the flow key field it is built from for frames like `k`
    /// (TCP/UDP ports or the ICMP type and code, DSCP and ECN in the TOS byte). Flow key
    /// fields the program does not build are the same (zero) for every frame it parses
    /// and need no bits.
    pub fn mask_of(mask: &FlowKey, k: &FlowKey) -> FpKey {
        FpKey::read(mask, k)
    }

    /// The program key fields read from `src` (a flow key or a mask of one) as the
    /// program builds them for frames like `like`: L2 fields always; for MPLS the
    /// outermost label stack entry's label, TC and BoS, in `ipv4_src`; for IPv4 the L3
    /// fields, and the ports (or ICMP type and code) of TCP, UDP and ICMP.
    fn read(src: &FlowKey, like: &FlowKey) -> FpKey {
        let get = |f: Field| src.get(f) as u64;
        let mac = |f: Field| {
            let b = get(f).to_be_bytes();
            let mut m = [0u8; 6];
            m.copy_from_slice(&b[2..]);
            m
        };
        let mut out = FpKey {
            in_port: get(Field::InPort) as u32,
            eth_dst: mac(Field::EthDst),
            eth_src: mac(Field::EthSrc),
            eth_type: get(Field::EthType) as u16,
            vlan_vid: get(Field::VlanVid) as u16,
            vlan_pcp: get(Field::VlanPcp) as u8,
            ..FpKey::default()
        };
        if is_mpls(like.get(Field::EthType) as u16) {
            out.ipv4_src = ((get(Field::MplsLabel) as u32 & 0xf_ffff) << 12)
                | ((get(Field::MplsTc) as u32 & 7) << 9)
                | ((get(Field::MplsBos) as u32 & 1) << 8);
            return out;
        }
        if like.get(Field::EthType) != 0x0800 {
            return out;
        }
        out.ip_proto = get(Field::IpProto) as u8;
        out.ip_tos = ((get(Field::IpDscp) as u8) << 2) | (get(Field::IpEcn) as u8 & 3);
        out.ip_ttl = get(Field::IpTtl) as u8;
        out.ipv4_src = get(Field::Ipv4Src) as u32;
        out.ipv4_dst = get(Field::Ipv4Dst) as u32;
        match like.get(Field::IpProto) {
            6 => {
                out.tp_src = get(Field::TpSrc) as u16;
                out.tp_dst = get(Field::TpDst) as u16;
                out.tcp_flags = get(Field::TcpFlags) as u16;
            }
            17 => {
                out.tp_src = get(Field::TpSrc) as u16;
                out.tp_dst = get(Field::TpDst) as u16;
            }
            1 => {
                out.tp_src = get(Field::IcmpType) as u16;
                out.tp_dst = get(Field::IcmpCode) as u16;
            }
            _ => {}
        }
        out
    }

    /// This key read as a mask: the fields it holds bits of, comma separated, each as
    /// its name where it holds every bit and as `NAME/BITS` where only some
    /// (`in_port,dl_type,nw_proto,nw_dst/255.255.255.0`); `exact` for [`FpKey::EXACT`].
    /// A mask serves frames of any ethertype: the bits of an MPLS frame's label, TC and
    /// BoS show as `nw_src`'s (the field that holds them).
    pub fn describe_mask(&self) -> String {
        if *self == FpKey::EXACT {
            return "exact".into();
        }
        let text = self.describe_masked(self);
        text.split(',')
            .filter_map(|part| {
                let (name, value) = part.split_once('=')?;
                Some(match value.split_once('/') {
                    Some((_, bits)) => format!("{name}/{bits}"),
                    None => name.to_string(),
                })
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The key in ovs-ofctl's match syntax, showing only the fields `mask` holds bits
    /// of (`FIELD=VALUE/MASK` where it holds some bits only): a megaflow.
    pub fn describe_masked(&self, mask: &FpKey) -> String {
        if *mask == FpKey::EXACT {
            return self.describe();
        }
        // (name, the mask of every bit, how a value is written, the field of a key)
        type Field = (&'static str, u64, fn(u64) -> String, fn(&FpKey) -> u64);
        fn mac48(a: &[u8; 6]) -> u64 {
            a.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b))
        }
        let mac = |v: u64| mac_text(&std::array::from_fn(|i| (v >> (40 - 8 * i)) as u8));
        let dec = |v: u64| v.to_string();
        let hex = |v: u64| format!("0x{v:x}");
        let hex4 = |v: u64| format!("0x{v:04x}");
        let ip = |v: u64| ip_text(v as u32);
        let l2: [Field; 6] = [
            ("dl_src", (1 << 48) - 1, mac, |k| mac48(&k.eth_src)),
            ("dl_dst", (1 << 48) - 1, mac, |k| mac48(&k.eth_dst)),
            ("vlan_tci", 0xffff, hex, |k| k.vlan_vid.into()),
            ("dl_vlan_pcp", 0xff, dec, |k| k.vlan_pcp.into()),
            ("dl_type", 0xffff, hex4, |k| k.eth_type.into()),
            ("nw_proto", 0xff, dec, |k| k.ip_proto.into()),
        ];
        // An MPLS key holds its label stack entry where an IPv4 key has the source.
        let src: &[Field] = if is_mpls(self.eth_type) {
            &[
                ("mpls_label", 0xf_ffff, dec, |k| u64::from(k.ipv4_src >> 12) & 0xf_ffff),
                ("mpls_tc", 7, dec, |k| u64::from(k.ipv4_src >> 9) & 7),
                ("mpls_bos", 1, dec, |k| u64::from(k.ipv4_src >> 8) & 1),
            ]
        } else {
            &[("nw_src", 0xffff_ffff, ip, |k| k.ipv4_src.into())]
        };
        let rest: [Field; 6] = [
            ("nw_dst", 0xffff_ffff, ip, |k| k.ipv4_dst.into()),
            ("nw_tos", 0xff, dec, |k| k.ip_tos.into()),
            ("nw_ttl", 0xff, dec, |k| k.ip_ttl.into()),
            ("tp_src", 0xffff, dec, |k| k.tp_src.into()),
            ("tp_dst", 0xffff, dec, |k| k.tp_dst.into()),
            ("tcp_flags", 0xffff, hex, |k| k.tcp_flags.into()),
        ];
        let mut parts = vec![format!("in_port={}", self.in_port)];
        for &(name, full, text, field) in l2.iter().chain(src).chain(&rest) {
            let (v, m) = (field(self), field(mask));
            if m == full {
                parts.push(format!("{name}={}", text(v)));
            } else if m != 0 {
                parts.push(format!("{name}={}/{}", text(v & m), text(m)));
            }
        }
        parts.join(",")
    }

    /// The key in ovs-ofctl's match syntax (VLAN fields only when tagged, IP fields only
    /// for IPv4, ports only for TCP/UDP/ICMP).
    pub fn describe(&self) -> String {
        let mut s = format!(
            "in_port={},dl_src={},dl_dst={}",
            self.in_port,
            mac_text(&self.eth_src),
            mac_text(&self.eth_dst)
        );
        if self.vlan_vid != 0 {
            s.push_str(&format!(
                ",dl_vlan={},dl_vlan_pcp={}",
                self.vlan_vid & 0x0fff,
                self.vlan_pcp
            ));
        }
        s.push_str(&format!(",dl_type=0x{:04x}", self.eth_type));
        if is_mpls(self.eth_type) {
            let l = self.ipv4_src;
            s.push_str(&format!(
                ",mpls_label={},mpls_tc={},mpls_bos={}",
                l >> 12,
                (l >> 9) & 7,
                (l >> 8) & 1
            ));
        }
        if self.eth_type == 0x0800 {
            s.push_str(&format!(
                ",nw_src={},nw_dst={},nw_proto={},nw_tos={},nw_ttl={}",
                ip_text(self.ipv4_src),
                ip_text(self.ipv4_dst),
                self.ip_proto,
                self.ip_tos,
                self.ip_ttl
            ));
            match self.ip_proto {
                6 => s.push_str(&format!(
                    ",tp_src={},tp_dst={},tcp_flags=0x{:03x}",
                    self.tp_src, self.tp_dst, self.tcp_flags
                )),
                17 => s.push_str(&format!(",tp_src={},tp_dst={}", self.tp_src, self.tp_dst)),
                1 => s.push_str(&format!(",icmp_type={},icmp_code={}", self.tp_src, self.tp_dst)),
                _ => {}
            }
        }
        s
    }
}

impl FpEntry {
    /// The entry's actions in ovs-ofctl's action syntax, in the order the program
    /// applies them, ending in `output slot N`, `broadcast group N` or `drop`.
    pub fn describe(&self) -> String {
        self.describe_to(&[])
    }

    /// [`describe`](Self::describe), with the outputs shown as `output:PORT` each when
    /// the OpenFlow ports the entry sends to are given.
    pub fn describe_to(&self, out_ports: &[u32]) -> String {
        let f = self.flags;
        let mut parts: Vec<String> = Vec::new();
        if f & FP_SET_IPV4_SRC != 0 {
            parts.push(format!("set_field:{}->ip_src", ip_text(self.ipv4_src)));
        }
        if f & FP_SET_IPV4_DST != 0 {
            parts.push(format!("set_field:{}->ip_dst", ip_text(self.ipv4_dst)));
        }
        if f & FP_SET_TOS != 0 {
            parts.push(format!("mod_nw_tos:{}", self.ip_tos));
        }
        if f & FP_SET_TTL != 0 {
            parts.push(format!("mod_nw_ttl:{}", self.ip_ttl));
        }
        if f & FP_SET_TP_SRC != 0 {
            parts.push(format!("mod_tp_src:{}", self.tp_src));
        }
        if f & FP_SET_TP_DST != 0 {
            parts.push(format!("mod_tp_dst:{}", self.tp_dst));
        }
        if f & FP_SET_ETH_DST != 0 {
            parts.push(format!("set_field:{}->eth_dst", mac_text(&self.eth_dst)));
        }
        if f & FP_SET_ETH_SRC != 0 {
            parts.push(format!("set_field:{}->eth_src", mac_text(&self.eth_src)));
        }
        self.describe_mpls(&mut parts);
        if f & FP_VLAN_POP != 0 {
            parts.push("pop_vlan".into());
        }
        if f & FP_VLAN_PUSH != 0 {
            parts.push(format!(
                "push_vlan:0x{:04x},set_field:{}->vlan_vid,set_field:{}->vlan_pcp",
                self.vlan_tpid,
                0x1000 | (self.vlan_tci & 0x0fff),
                self.vlan_tci >> 13
            ));
        }
        if f & FP_VLAN_SET != 0 {
            parts.push(format!(
                "set_field:{}->vlan_vid,set_field:{}->vlan_pcp",
                0x1000 | (self.vlan_tci & 0x0fff),
                self.vlan_tci >> 13
            ));
        }
        if self.out == FP_DROP {
            parts.push("drop".into());
        } else if !out_ports.is_empty() {
            parts.extend(out_ports.iter().map(|p| format!("output:{p}")));
        } else if self.out & FP_GROUP != 0 {
            parts.push(format!("broadcast group {}", self.out & !FP_GROUP));
        } else {
            parts.push(format!("output slot {}", self.out));
        }
        parts.join(",")
    }
}

impl FpEntry {
    /// The entry's MPLS rewrites, in ovs-ofctl's syntax ([`FP_MPLS_TTL_CHECK`] alone
    /// shows as the decrement that fails at TTL 1 on the decision's path).
    fn describe_mpls(&self, parts: &mut Vec<String>) {
        let f = self.flags;
        let w = self.mpls_word();
        let fields = |parts: &mut Vec<String>| {
            parts.push(format!("set_field:{}->mpls_label", w >> 12));
            parts.push(format!("set_field:{}->mpls_tc", (w >> 9) & 7));
            parts.push(format!("set_field:{}->mpls_bos", (w >> 8) & 1));
        };
        if f & FP_MPLS_PUSH != 0 {
            let ty = if f & FP_MPLS_MCAST != 0 { 0x8848 } else { 0x8847 };
            parts.push(format!("push_mpls:0x{ty:04x}"));
            fields(parts);
            parts.push(format!("set_mpls_ttl({})", w & 0xff));
            return;
        }
        if f & FP_MPLS_TTL_CHECK != 0 && f & FP_MPLS_TTL_DEC == 0 {
            parts.push("dec_mpls_ttl".into());
        }
        if f & FP_MPLS_POP != 0 {
            parts.push(format!("pop_mpls:0x{:04x}", self.tp_src));
            return;
        }
        if f & FP_MPLS_SET != 0 {
            fields(parts);
        }
        if f & FP_MPLS_TTL_SET != 0 {
            parts.push(format!("set_mpls_ttl({})", w & 0xff));
        }
        if f & FP_MPLS_TTL_DEC != 0 {
            parts.push("dec_mpls_ttl".into());
        }
    }
}

fn is_mpls(eth_type: u16) -> bool {
    eth_type == 0x8847 || eth_type == 0x8848
}

fn mac_text(m: &[u8; 6]) -> String {
    format!("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
}

fn ip_text(a: u32) -> String {
    std::net::Ipv4Addr::from(a).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_a_tcp_key_and_its_entry() {
        let k = FpKey {
            in_port: 1,
            eth_dst: [0, 0, 0, 0, 0, 2],
            eth_src: [0, 0, 0, 0, 0, 1],
            eth_type: 0x0800,
            ip_proto: 6,
            ip_ttl: 64,
            ipv4_src: 0x0a00_0001,
            ipv4_dst: 0x0a00_0002,
            tp_src: 1000,
            tp_dst: 80,
            tcp_flags: 2,
            ..FpKey::default()
        };
        assert_eq!(
            k.describe(),
            "in_port=1,dl_src=00:00:00:00:00:01,dl_dst=00:00:00:00:00:02,dl_type=0x0800,\
             nw_src=10.0.0.1,nw_dst=10.0.0.2,nw_proto=6,nw_tos=0,nw_ttl=64,\
             tp_src=1000,tp_dst=80,tcp_flags=0x002"
        );
        let e = FpEntry {
            flags: FP_SET_ETH_DST | FP_VLAN_POP,
            eth_dst: [2, 0, 0, 0, 0, 9],
            out: 3,
            ..FpEntry::default()
        };
        assert_eq!(e.describe(), "set_field:02:00:00:00:00:09->eth_dst,pop_vlan,output slot 3");
        let d = FpEntry { out: FP_DROP, ..FpEntry::default() };
        assert_eq!(d.describe(), "drop");
        assert_eq!(d.describe_to(&[2]), "drop");
        let b = FpEntry { out: FP_GROUP | 5, ..FpEntry::default() };
        assert_eq!(b.describe(), "broadcast group 5");
        assert_eq!(b.describe_to(&[2, 3]), "output:2,output:3");
        assert_eq!(e.describe_to(&[4]), "set_field:02:00:00:00:00:09->eth_dst,pop_vlan,output:4");
    }

    #[test]
    fn megaflow_masks_follow_the_flow_key_fields() {
        let mut k = FlowKey::ZERO;
        k.set(Field::EthType, 0x0800);
        k.set(Field::IpProto, 1);
        let mut m = FlowKey::ZERO;
        for f in [Field::InPort, Field::EthType, Field::IpProto, Field::IcmpType] {
            m.set(f, f.full());
        }
        m.set(Field::Ipv4Dst, 0xffff_ff00);
        m.set(Field::IpDscp, 0x3f);
        let fm = FpKey::mask_of(&m, &k);
        assert_eq!(
            (fm.in_port, fm.eth_type, fm.ip_proto, fm.ipv4_dst, fm.tp_src, fm.tp_dst),
            (u32::MAX, 0xffff, 0xff, 0xffff_ff00, 0xff, 0)
        );
        assert_eq!((fm.ip_tos, fm.ipv4_src, fm.eth_src), (0xfc, 0, [0; 6]));
        k.set(Field::IpProto, 17);
        m.set(Field::TpSrc, 0xffff);
        assert_eq!(FpKey::mask_of(&m, &k).tp_src, 0xffff);
        let key = FpKey {
            in_port: 3,
            eth_type: 0x0800,
            ip_proto: 17,
            ipv4_dst: 0x0a00_0207,
            tp_src: 99,
            ..FpKey::default()
        };
        assert_eq!(
            FpKey::mask_of(&m, &k).describe_mask(),
            "in_port,dl_type,nw_proto,nw_dst/255.255.255.0,nw_tos/252,tp_src"
        );
        assert_eq!(FpKey::EXACT.describe_mask(), "exact");
        assert_eq!(
            key.describe_masked(&FpKey::mask_of(&m, &k)),
            "in_port=3,dl_type=0x0800,nw_proto=17,nw_dst=10.0.2.0/255.255.255.0,nw_tos=0/252,\
             tp_src=99"
        );
    }

    #[test]
    fn vlan_fields_only_when_tagged() {
        let mut k = FpKey { eth_type: 0x88cc, ..FpKey::default() };
        assert!(!k.describe().contains("dl_vlan"));
        k.vlan_vid = 0x1000 | 10;
        k.vlan_pcp = 3;
        assert!(k.describe().contains("dl_vlan=10,dl_vlan_pcp=3"));
    }

    #[test]
    fn an_mpls_key_holds_its_entry_less_the_ttl_where_ipv4_src_is() {
        let mut k = FlowKey::ZERO;
        k.set(Field::InPort, 4);
        k.set(Field::EthType, 0x8847);
        k.set(Field::MplsLabel, 0xabcde);
        k.set(Field::MplsTc, 5);
        k.set(Field::MplsBos, 1);
        let fk = FpKey::from_flow_key(&k).unwrap();
        assert_eq!(fk.ipv4_src, 0xabcd_eb00);
        assert_eq!((fk.ipv4_dst, fk.ip_ttl, fk.ip_proto), (0, 0, 0));
        // A mask of the label alone, as a table matching mpls_label consults it.
        let mut m = FlowKey::ZERO;
        for f in [Field::InPort, Field::EthType, Field::MplsLabel] {
            m.set(f, f.full());
        }
        let fm = FpKey::mask_of(&m, &k);
        assert_eq!(fm.ipv4_src, 0xffff_f000);
        // A mask alone does not say which frames it is for: `ipv4_src`'s bits show as
        // the IPv4 source's.
        assert_eq!(fm.describe_mask(), "in_port,dl_type,nw_src/255.255.240.0");
        assert_eq!(fk.describe_masked(&fm), "in_port=4,dl_type=0x8847,mpls_label=703710");
        m.set(Field::MplsBos, 1);
        assert_eq!(
            fk.describe_masked(&FpKey::mask_of(&m, &k)),
            "in_port=4,dl_type=0x8847,mpls_label=703710,mpls_bos=1"
        );
        // Every bit of such a key: its TTL bits are none.
        let every = FlowKey { words: [u64::MAX; datapath::key::KEY_WORDS] };
        assert_eq!(FpKey::mask_of(&every, &k).ipv4_src, FP_MPLS_LSE);
        k.set(Field::EthType, 0x8848);
        assert!(FpKey::from_flow_key(&k).is_some());
    }

    #[test]
    fn mpls_rewrites_are_described_in_the_programs_order() {
        let mut push = FpEntry {
            flags: FP_MPLS_PUSH | FP_MPLS_MCAST | FP_SET_ETH_DST | FP_VLAN_POP,
            eth_dst: [2, 0, 0, 0, 0, 9],
            out: 1,
            ..FpEntry::default()
        };
        push.set_mpls_word((1000 << 12) | (5 << 9) | (1 << 8) | 63);
        assert_eq!(
            push.describe(),
            "set_field:02:00:00:00:00:09->eth_dst,push_mpls:0x8848,\
             set_field:1000->mpls_label,set_field:5->mpls_tc,set_field:1->mpls_bos,\
             set_mpls_ttl(63),pop_vlan,output slot 1"
        );
        let pop = FpEntry {
            flags: FP_MPLS_POP | FP_MPLS_TTL_CHECK,
            tp_src: 0x0800,
            out: FP_DROP,
            ..FpEntry::default()
        };
        assert_eq!(pop.describe(), "dec_mpls_ttl,pop_mpls:0x0800,drop");
        let mut swap = FpEntry {
            flags: FP_MPLS_SET | FP_MPLS_TTL_DEC | FP_MPLS_TTL_CHECK,
            out: 2,
            ..FpEntry::default()
        };
        swap.set_mpls_word((200 << 12) | (1 << 8));
        assert_eq!(
            swap.describe(),
            "set_field:200->mpls_label,set_field:0->mpls_tc,set_field:1->mpls_bos,\
             dec_mpls_ttl,output slot 2"
        );
    }
}
