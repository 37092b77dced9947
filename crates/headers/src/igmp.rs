//! The IGMP header (RFC 2236, and the start of every later version's messages): type,
//! maximum response time (IGMPv1: unused), checksum, group address.

/// Length of the header.
pub const HEADER_LEN: usize = 8;

fields! {
    /// Field offsets from the start of the header.
    pub mod field: HEADER_LEN {
        /// Message type.
        TYPE: 0,
        /// Maximum response time (in tenths of a second), the "code" of tools that treat
        /// IGMP as ICMP.
        MAX_RESP: 1,
        /// Checksum.
        CHECKSUM: 2..4,
        /// Group address.
        GROUP: 4..8,
    }
}

view! {
    /// A view of an IGMP header ([`HEADER_LEN`] bytes).
    IgmpHeader, HEADER_LEN;

    /// The message type.
    msg_type: u8 = field::TYPE;
    /// The maximum response time.
    max_resp: u8 = field::MAX_RESP;
    /// The checksum as stored.
    checksum: u16 = field::CHECKSUM;
    /// The group address.
    group: u32 = field::GROUP;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_a_hand_made_report() {
        // An IGMPv2 membership report for 239.1.2.3.
        check_view! {
            read IgmpHeader, HEADER_LEN, [0x16, 0, 0xfa, 0xfb, 239, 1, 2, 3];
            msg_type = 0x16, max_resp = 0, checksum = 0xfafb, group = 0xef01_0203,
        }
    }
}
