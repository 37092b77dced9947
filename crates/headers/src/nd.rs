//! IPv6 neighbour discovery (RFC 4861): the neighbour solicitation and advertisement
//! messages (ICMPv6 types [`NS`] and [`NA`]) with their target address, and the options
//! after it: a type, a length in 8-byte units, and for the link-layer address options
//! ([`OPT_SOURCE_LL`], [`OPT_TARGET_LL`]) a MAC address.

use crate::bytes::{set, set_u8_at};

/// ICMPv6 type of a neighbour solicitation.
pub const NS: u8 = 135;
/// ICMPv6 type of a neighbour advertisement.
pub const NA: u8 = 136;

/// Length of an NS or NA message up to the options: ICMPv6 header, reserved/flags,
/// target address.
pub const HEADER_LEN: usize = 24;

/// Length of an option's type and length.
pub const OPT_HEADER_LEN: usize = 2;
/// Length of a link-layer address option for Ethernet (length 1).
pub const LL_OPT_LEN: usize = 8;

/// Option type: source link-layer address (on an NS).
pub const OPT_SOURCE_LL: u8 = 1;
/// Option type: target link-layer address (on an NA).
pub const OPT_TARGET_LL: u8 = 2;

fields! {
    /// Field offsets from the start of the NS/NA message (its ICMPv6 header).
    pub mod field: HEADER_LEN {
        /// ICMPv6 type.
        TYPE: 0,
        /// ICMPv6 code (0 for neighbour discovery).
        CODE: 1,
        /// ICMPv6 checksum.
        CHECKSUM: 2..4,
        /// Flags (NA) or reserved (NS).
        FLAGS: 4..8,
        /// Target address.
        TARGET: 8..24,
    }
}

fields! {
    /// Field offsets from the start of an option.
    pub mod opt_field: LL_OPT_LEN {
        /// Option type.
        TYPE: 0,
        /// Option length in 8-byte units (0 is invalid).
        LEN: 1,
        /// The link-layer address of a source/target link-layer address option.
        LL_ADDR: 2..8,
    }
}

view! {
    /// A view of an NS or NA message up to its options ([`HEADER_LEN`] bytes).
    NdMessage, HEADER_LEN;

    /// The ICMPv6 type.
    msg_type / set_msg_type: u8 = field::TYPE;
    /// The ICMPv6 code.
    code / set_code: u8 = field::CODE;
    /// The target address.
    target / set_target: u128 = field::TARGET;
}

view! {
    /// A view of an option's type and length ([`OPT_HEADER_LEN`] bytes).
    NdOption, OPT_HEADER_LEN;

    /// The option type.
    opt_type: u8 = opt_field::TYPE;
    /// The length byte as stored (8-byte units).
    len_units: u8 = opt_field::LEN;
    /// The option's length in bytes (0 for an invalid option).
    pub fn len_bytes(&self) -> usize {
        usize::from(self.len_units()) * 8
    }
}

view! {
    /// A view of an Ethernet link-layer address option ([`LL_OPT_LEN`] bytes).
    NdLinkLayerOption, LL_OPT_LEN;

    /// The option type.
    opt_type: u8 = opt_field::TYPE;
    /// The length byte as stored (1 for Ethernet).
    len_units: u8 = opt_field::LEN;
    /// The link-layer address.
    addr: [u8; 6] = opt_field::LL_ADDR;

    /// Writes a whole option: type `t`, length 1, address `mac`.
    pub fn set(&mut self, t: u8, mac: [u8; 6]) {
        let b = self.as_bytes_mut();
        set_u8_at(b, opt_field::TYPE, t);
        set_u8_at(b, opt_field::LEN, 1);
        set(b, opt_field::LL_ADDR.start, mac);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An NS for fe80::2 with a source link-layer address option 02:00:00:00:00:01.
    fn ns() -> [u8; 32] {
        let mut b = [0u8; 32];
        b[0] = 135;
        b[8..10].copy_from_slice(&[0xfe, 0x80]);
        b[23] = 2;
        b[24..32].copy_from_slice(&[1, 1, 2, 0, 0, 0, 0, 1]);
        b
    }

    #[test]
    fn hand_made_solicitation() {
        let b = ns();
        check_view! {
            NdMessage, HEADER_LEN, b;
            msg_type / set_msg_type = NS,
            code / set_code = 0,
            target / set_target = 0xfe80 << 112 | 2,
        }
        check_view! {
            read NdOption, OPT_HEADER_LEN, b[HEADER_LEN..];
            opt_type = OPT_SOURCE_LL, len_units = 1, len_bytes = 8,
        }
        check_view! {
            NdLinkLayerOption, LL_OPT_LEN, b[HEADER_LEN..];
            opt_type = 1, len_units = 1, addr = [2, 0, 0, 0, 0, 1];
            build(ll) { ll.set(OPT_SOURCE_LL, [2, 0, 0, 0, 0, 1]); }
        }
    }

    #[test]
    fn built_solicitation_is_the_hand_made_one() {
        let mut b = [0u8; 32];
        let mut m = NdMessage::new_checked_mut(&mut b).unwrap();
        m.set_msg_type(NS);
        m.set_code(0);
        m.set_target(0xfe80 << 112 | 2);
        NdLinkLayerOption::new_checked_at_mut(&mut b, HEADER_LEN)
            .unwrap()
            .set(OPT_SOURCE_LL, [2, 0, 0, 0, 0, 1]);
        assert_eq!(b, ns());
    }

    #[test]
    fn truncated_buffers_are_refused() {
        let b = ns();
        assert!(NdMessage::new_checked(&b[..23]).is_none());
        assert!(NdOption::new_checked_at(&b, 31).is_none());
        assert!(NdLinkLayerOption::new_checked_at(&b, 25).is_none());
    }
}
