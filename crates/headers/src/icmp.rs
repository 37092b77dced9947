//! The start of an ICMP (RFC 792) or ICMPv6 (RFC 4443) message: type, code, checksum.
//! ICMPv4's checksum covers the message; ICMPv6's also the IPv6 pseudo-header. What
//! follows depends on the type ([`crate::nd`] for neighbour discovery).

/// Length of the part every message starts with: type, code, checksum.
pub const HEADER_LEN: usize = 4;

/// Length of an ICMPv4 header with its 4 bytes of type-specific data (the rest of the
/// header of an echo, unreachable, ...).
pub const V4_HEADER_LEN: usize = 8;

fields! {
    /// Field offsets from the start of the message.
    pub mod field: HEADER_LEN {
        /// Message type.
        TYPE: 0,
        /// Message code.
        CODE: 1,
        /// Checksum.
        CHECKSUM: 2..4,
    }
}

view! {
    /// A view of the start of an ICMP or ICMPv6 message ([`HEADER_LEN`] bytes).
    IcmpHeader, HEADER_LEN;

    /// The message type.
    msg_type / set_msg_type: u8 = field::TYPE;
    /// The message code.
    code / set_code: u8 = field::CODE;
    /// The checksum as stored.
    checksum / set_checksum: u16 = field::CHECKSUM;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_a_hand_made_header() {
        // An echo request: the type, code and checksum, then 4 bytes of its own.
        check_view! {
            IcmpHeader, HEADER_LEN, [8, 0, 0xf7, 0xff, 0, 1, 0, 1];
            msg_type / set_msg_type = 8,
            code / set_code = 0,
            checksum / set_checksum = 0xf7ff,
        }
    }
}
