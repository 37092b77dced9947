//! `OFPT_FEATURES_REPLY` of every version: one type, decoded from and encoded to each
//! version's layout, after Open vSwitch's `ofputil_switch_features`.
//!
//! 1.0: `datapath_id:u64, n_buffers:u32, n_tables:u8, pad[3], capabilities:u32,
//! actions:u32`, then `ofp_phy_port`s to the end. 1.3: `datapath_id:u64, n_buffers:u32,
//! n_tables:u8, auxiliary_id:u8, pad[2], capabilities:u32, reserved:u32`, and no ports
//! (they come from the port-description reply).
//!
//! Capabilities are held in one numbering, [`cap`], which has a place for every
//! version's bits (the wire numbers group-stats 3 in 1.3, where 1.0 has STP). Bits the
//! decoded version leaves undefined are kept aside and written back to that version
//! only, so every message round-trips byte for byte.

use super::port::Port;
use crate::error::{ErrorKind, OfpError};
use crate::v10::port::PHY_PORT_LEN;
use crate::wire::{Reader, Writer};
use crate::OFP10_VERSION;

spec_table! {
    /// Capability bits as Open vSwitch numbers them internally (its printing order).
    pub mod cap: u32 as bits {
        FLOW_STATS, TABLE_STATS, PORT_STATS, STP, GROUP_STATS, IP_REASM, QUEUE_STATS,
        ARP_MATCH_IP, PORT_BLOCKED,
    }
}

/// Bits that are at the same place on every wire and in [`cap`]: flow, table and port
/// stats, IP reassembly, queue stats.
const SAME_EVERYWHERE: u32 = 0x67;
/// The bit 1.0 calls STP and 1.3 group stats.
const WIRE_BIT_3: u32 = 1 << 3;

/// Length of the fixed part of the body, in every version.
pub const FEATURES_FIXED_LEN: usize = 24;

/// A features reply (module comment).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FeaturesReply {
    pub datapath_id: u64,
    pub n_buffers: u32,
    pub n_tables: u8,
    /// 0 on the main connection, nonzero on an auxiliary one (1.3; always 0 in 1.0).
    pub auxiliary_id: u8,
    /// What the switch can do, in the [`cap`] numbering. Encoding writes the bits the
    /// target version defines.
    pub capabilities: u32,
    /// 1.0: the supported action types (bit `n`: 1.0 action type `n`). 1.3: the
    /// reserved word, as read.
    pub actions: u32,
    /// The ports (1.0 only: a 1.3 encoder writes none and its decoder reads none).
    pub ports: Vec<Port>,
    /// The version read and the capability bits it leaves undefined, when any were
    /// set; written back to that version only.
    pub undefined: Option<(u8, u32)>,
}

impl FeaturesReply {
    /// Reads a body of `version`'s layout.
    pub fn decode(version: u8, r: &mut Reader) -> Result<FeaturesReply, OfpError> {
        let v10 = version == OFP10_VERSION;
        let datapath_id = r.u64()?;
        let n_buffers = r.u32()?;
        let n_tables = r.u8()?;
        let auxiliary_id = if v10 { 0 } else { r.u8()? };
        r.skip(if v10 { 3 } else { 2 })?;
        let wire = r.u32()?;
        let actions = r.u32()?;
        let (capabilities, defined) = if v10 {
            (wire & (SAME_EVERYWHERE | cap::ARP_MATCH_IP | cap::STP), 0xef)
        } else {
            let group = if wire & WIRE_BIT_3 != 0 { cap::GROUP_STATS } else { 0 };
            (wire & (SAME_EVERYWHERE | cap::PORT_BLOCKED) | group, 0x16f)
        };
        let ports = if v10 { decode_ports(r)? } else { Vec::new() };
        Ok(FeaturesReply {
            datapath_id,
            n_buffers,
            n_tables,
            auxiliary_id,
            capabilities,
            actions,
            ports,
            undefined: (wire & !defined != 0).then_some((version, wire & !defined)),
        })
    }

    /// Writes the body in `version`'s layout.
    pub fn encode(&self, version: u8, w: &mut Writer) {
        let v10 = version == OFP10_VERSION;
        w.u64(self.datapath_id);
        w.u32(self.n_buffers);
        w.u8(self.n_tables);
        if v10 {
            w.zeros(3);
        } else {
            w.u8(self.auxiliary_id);
            w.zeros(2);
        }
        let c = self.capabilities;
        let mut wire = if v10 {
            c & (SAME_EVERYWHERE | cap::ARP_MATCH_IP | cap::STP)
        } else {
            let group = if c & cap::GROUP_STATS != 0 { WIRE_BIT_3 } else { 0 };
            c & (SAME_EVERYWHERE | cap::PORT_BLOCKED) | group
        };
        if let Some((v, bits)) = self.undefined {
            if v == version {
                wire |= bits;
            }
        }
        w.u32(wire);
        w.u32(self.actions);
        if v10 {
            self.ports.iter().for_each(|p| p.encode(version, w));
        }
    }
}

/// The 1.0 port list: whole ports to the end of the message.
fn decode_ports(r: &mut Reader) -> Result<Vec<Port>, OfpError> {
    if !r.remaining().is_multiple_of(PHY_PORT_LEN) {
        return Err(OfpError::new(
            ErrorKind::BAD_REQUEST_BAD_LEN,
            format!(
                "features reply port list of {} bytes is not a multiple of {PHY_PORT_LEN}",
                r.remaining()
            ),
        ));
    }
    let mut ports = Vec::with_capacity(r.remaining() / PHY_PORT_LEN);
    while !r.is_empty() {
        ports.push(Port::decode(OFP10_VERSION, r)?);
    }
    Ok(ports)
}

/// proptest strategy: features replies as `version`'s wire describes them.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use proptest::prelude::*;

    /// Arbitrary wire bytes of `version`, decoded (with up to three 1.0 ports).
    pub fn arb_features_reply(version: u8) -> impl Strategy<Value = FeaturesReply> {
        let ports = if version == OFP10_VERSION { 0..4usize } else { 0..1 };
        (
            proptest::collection::vec(any::<u8>(), FEATURES_FIXED_LEN),
            proptest::collection::vec(super::super::port::strategy::arb_port(version), ports),
        )
            .prop_map(move |(fixed, ports)| {
                let mut w = Writer::new();
                w.bytes(&fixed);
                ports.iter().for_each(|p| p.encode(version, &mut w));
                FeaturesReply::decode(version, &mut Reader::new(&w.buf))
                    .expect("any fixed part and whole ports decode")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::assert_roundtrip_in;
    use crate::OFP13_VERSION;
    use proptest::prelude::*;

    fn bytes(f: &FeaturesReply, version: u8) -> Vec<u8> {
        crate::wire::encoded(|w| f.encode(version, w))
    }

    #[test]
    fn spec_bytes_13() {
        let b = [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 254, 0, 0, 0, 0, 0, 0, 0x4f, 0, 0, 0, 0];
        let f = FeaturesReply::decode(OFP13_VERSION, &mut Reader::new(&b)).unwrap();
        assert_eq!(
            f,
            FeaturesReply {
                datapath_id: 1,
                n_buffers: 256,
                n_tables: 254,
                capabilities: cap::FLOW_STATS
                    | cap::TABLE_STATS
                    | cap::PORT_STATS
                    | cap::GROUP_STATS
                    | cap::QUEUE_STATS,
                ..FeaturesReply::default()
            }
        );
        assert_eq!(bytes(&f, OFP13_VERSION), b);
    }

    #[test]
    fn the_same_capabilities_on_each_wire() {
        let f = FeaturesReply {
            capabilities: cap::FLOW_STATS | cap::GROUP_STATS | cap::STP | cap::PORT_BLOCKED,
            ..FeaturesReply::default()
        };
        // 1.3: group stats at bit 3, port-blocked at 8, no STP.
        assert_eq!(bytes(&f, OFP13_VERSION)[16..20], (1u32 | 1 << 3 | 1 << 8).to_be_bytes());
        // 1.0: STP at bit 3, no group stats or port-blocked.
        assert_eq!(bytes(&f, OFP10_VERSION)[16..20], (1u32 | 1 << 3).to_be_bytes());
    }

    #[test]
    fn undefined_bits_return_to_their_version_only() {
        let mut b = vec![0u8; FEATURES_FIXED_LEN];
        b[16..20].copy_from_slice(&0x8000_0010u32.to_be_bytes());
        let f = FeaturesReply::decode(OFP10_VERSION, &mut Reader::new(&b)).unwrap();
        assert_eq!(f.capabilities, 0);
        assert_eq!(f.undefined, Some((OFP10_VERSION, 0x8000_0010)));
        assert_eq!(bytes(&f, OFP10_VERSION), b);
        assert_eq!(bytes(&f, OFP13_VERSION)[16..20], [0; 4]);
    }

    #[test]
    fn partial_port_is_bad_len() {
        let f = FeaturesReply { ports: vec![Port::default()], ..FeaturesReply::default() };
        let b = bytes(&f, OFP10_VERSION);
        assert_eq!(b.len(), FEATURES_FIXED_LEN + PHY_PORT_LEN);
        for cut in 1..PHY_PORT_LEN {
            let e = FeaturesReply::decode(OFP10_VERSION, &mut Reader::new(&b[..b.len() - cut]))
                .unwrap_err();
            assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        }
    }

    proptest! {
        #[test]
        fn roundtrip(
            f10 in strategy::arb_features_reply(OFP10_VERSION),
            f13 in strategy::arb_features_reply(OFP13_VERSION),
        ) {
            for (f, v, ports) in [(&f10, OFP10_VERSION, f10.ports.len()), (&f13, OFP13_VERSION, 0)] {
                let b = assert_roundtrip_in(v, f, FeaturesReply::encode, FeaturesReply::decode);
                prop_assert_eq!(b.len(), FEATURES_FIXED_LEN + PHY_PORT_LEN * ports);
            }
        }
    }
}
