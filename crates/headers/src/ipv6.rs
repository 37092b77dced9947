//! The IPv6 header (RFC 8200): [`HEADER_LEN`] bytes, then a chain of extension headers
//! ([`crate::ipv6_ext`]) and the upper layer. The payload length counts everything after
//! the fixed header.

/// Length of the fixed header.
pub const HEADER_LEN: usize = 40;

/// The version of IPv6, in the header's first nibble.
pub const VERSION: u8 = 6;

fields! {
    /// Field offsets from the start of the header.
    pub mod field: HEADER_LEN {
        /// Version (4 bits), traffic class (8), flow label (20).
        VER_TC_FLOW: 0..4,
        /// Payload length (all that follows the fixed header).
        PAYLOAD_LEN: 4..6,
        /// Next header ([`crate::ip_proto`]).
        NXT_HDR: 6,
        /// Hop limit.
        HOP_LIMIT: 7,
        /// Source address.
        SRC_ADDR: 8..24,
        /// Destination address.
        DST_ADDR: 24..40,
        /// Source and destination addresses together: the addresses of the upper-layer
        /// pseudo-header.
        ADDRS: 8..40,
    }
}

/// The flow label's bits in the first word.
pub const FLOW_LABEL_MASK: u32 = 0x000f_ffff;
/// Where the 8-bit traffic class starts in the first word.
pub const TC_SHIFT: u32 = 20;

view! {
    /// A view of the fixed IPv6 header ([`HEADER_LEN`] bytes).
    Ipv6Header, HEADER_LEN;

    /// The first word: version, traffic class, flow label.
    ver_tc_flow / set_ver_tc_flow: u32 = field::VER_TC_FLOW;
    /// The version nibble (6 for IPv6).
    version: u8 = ver_tc_flow[0xf << 28];
    /// The traffic class (DSCP and ECN, as IPv4's TOS).
    traffic_class / set_traffic_class: u8 = ver_tc_flow / set_ver_tc_flow[0xff << TC_SHIFT];
    /// The flow label (20 bits).
    flow_label / set_flow_label: u32 = ver_tc_flow / set_ver_tc_flow[FLOW_LABEL_MASK];
    /// The payload length.
    payload_len / set_payload_len: u16 = field::PAYLOAD_LEN;
    /// The next header.
    next_header / set_next_header: u8 = field::NXT_HDR;
    /// The hop limit.
    hop_limit / set_hop_limit: u8 = field::HOP_LIMIT;
    /// The source address.
    src_addr / set_src_addr: u128 = field::SRC_ADDR;
    /// The destination address.
    dst_addr / set_dst_addr: u128 = field::DST_ADDR;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// fe80::1 → ff02::1, traffic class 0xb9, flow label 0x12345, 32 bytes of ICMPv6,
    /// hop limit 255.
    fn hdr() -> [u8; 40] {
        let mut h = [0u8; 40];
        h[..8].copy_from_slice(&[0x6b, 0x91, 0x23, 0x45, 0, 32, 58, 255]);
        h[8..10].copy_from_slice(&[0xfe, 0x80]);
        h[23] = 1;
        h[24..26].copy_from_slice(&[0xff, 0x02]);
        h[39] = 1;
        h
    }

    #[test]
    fn hand_made_header() {
        check_view! {
            Ipv6Header, HEADER_LEN, hdr();
            ver_tc_flow = 0x6b91_2345, version = 6, traffic_class = 0xb9, flow_label = 0x12345,
            payload_len / set_payload_len = 32,
            next_header / set_next_header = 58,
            hop_limit / set_hop_limit = 255,
            src_addr / set_src_addr = 0xfe80 << 112 | 1,
            dst_addr / set_dst_addr = 0xff02 << 112 | 1;
            build(h) {
                h.set_ver_tc_flow(u32::from(VERSION) << 28);
                h.set_traffic_class(0xb9);
                // The flow label's setter keeps only the low 20 bits.
                h.set_flow_label(0xfff_12345);
            }
        }
        assert_eq!(hdr()[field::ADDRS].len(), 32);
    }

    #[test]
    fn writable_views() {
        let mut b = hdr();
        assert!(Ipv6Header::new_checked_mut(&mut b[..39]).is_none());
        Ipv6Header::new_checked_mut(&mut b).unwrap().set_hop_limit(1);
        assert_eq!(b[field::HOP_LIMIT], 1);
    }
}
