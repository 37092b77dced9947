//! Port, queue and table counters, one type each for every OpenFlow version: the
//! port-stats element (`ofp_port_stats`: 104 bytes in 1.0, 112 in 1.3, 80 and
//! properties in 1.4), the queue-stats element (`ofp_queue_stats`: 32 bytes in 1.0, 40
//! in 1.3, 48 and properties in 1.4) and the table-stats element (`ofp_table_stats`:
//! 64 bytes in 1.0, 24 from 1.3), with `decode(version, ..)`, `encode(version, ..)` and
//! `decode_list(version, ..)` (a reply's whole list).
//!
//! Port numbers are in the 1.3 numbering whatever the version (1.0's reserved ports
//! `0xff00..` are `0xffffff00..`, see
//! [`port_to_v13`](crate::v10::port::port_to_v13)); encoding for 1.0 writes a number
//! with no 1.0 form as `OFPP_NONE` (a translation to 1.0 drops such entries first). 1.0
//! has no duration: decoding 1.0 gives `u32::MAX` in both duration fields, which
//! [`PortStats::duration`] reads as "none", as Open vSwitch does. A counter the switch
//! does not have is all ones in every version.
//!
//! OpenFlow 1.4 gives port and queue counters a `length` and a list of properties
//! (framed as [`crate::v13::property`] describes, length faults `OFPBPC_BAD_LEN`): a
//! port's frame, overrun, CRC and collision counters move to its Ethernet property; the
//! other properties are kept as read ([`PortStatsProp`], [`Property`]) so that a reply
//! re-encodes byte for byte.
//! Earlier versions carry no properties: decoding them gives none, encoding them leaves
//! them out.

use super::{read_port, write_port};
use crate::error::OfpError;
use crate::header::{OFP10_VERSION, OFP14_VERSION};
use crate::v13::property::{self, Property};
use crate::wire::{take_sized, Reader, Writer};

/// Bytes of one port-stats element on the wire of `version` (from 1.4: of its fixed
/// part, before the properties).
pub fn port_stats_len(version: u8) -> usize {
    match version {
        OFP10_VERSION => 104,
        v if v >= OFP14_VERSION => PORT_STATS_FIXED_LEN_14,
        _ => 112,
    }
}

/// Bytes of one queue-stats element on the wire of `version` (from 1.4: of its fixed
/// part, before the properties).
pub fn queue_stats_len(version: u8) -> usize {
    match version {
        OFP10_VERSION => 32,
        v if v >= OFP14_VERSION => QUEUE_STATS_FIXED_LEN_14,
        _ => 40,
    }
}

/// The fixed part of a 1.4 `ofp_port_stats`.
pub const PORT_STATS_FIXED_LEN_14: usize = 80;
/// The fixed part of a 1.4 `ofp_queue_stats`.
pub const QUEUE_STATS_FIXED_LEN_14: usize = 48;

/// `ofp_port_stats_prop_type` numbers (OpenFlow 1.4).
pub mod port_stats_prop {
    /// `OFPPSPT_ETHERNET`: frame, overrun, CRC and collision counters.
    pub const ETHERNET: u16 = 0;
    /// `OFPPSPT_OPTICAL`: an optical port's tuning and power.
    pub const OPTICAL: u16 = 1;
    /// `OFPPSPT_EXPERIMENTER`.
    pub const EXPERIMENTER: u16 = 0xffff;
}

/// Length of the Ethernet property's body (after its header): pad and four counters.
const ETHERNET_PROP_BODY: usize = 36;
/// Length of the optical property's body (after its header): pad and the fields.
const OPTICAL_PROP_BODY: usize = 40;

/// Reads the duration fields of 1.3, or "none" (all ones) for 1.0.
fn read_duration(version: u8, r: &mut Reader) -> Result<(u32, u32), OfpError> {
    if version == OFP10_VERSION {
        Ok((u32::MAX, u32::MAX))
    } else {
        Ok((r.u32()?, r.u32()?))
    }
}

/// Reads a list of elements of `version`: fixed-size ones (`fixed` bytes each, the list
/// a whole number of them) before 1.4, length-prefixed ones from 1.4.
fn decode_counters<'a, T>(
    version: u8,
    r: &mut Reader<'a>,
    fixed: usize,
    decode: impl Fn(u8, &mut Reader<'a>) -> Result<T, OfpError>,
) -> Result<Vec<T>, OfpError> {
    if version >= OFP14_VERSION {
        r.list(|r| decode(version, r))
    } else {
        r.fixed_list(fixed, |r| decode(version, r))
    }
}

/// `ofp_port_stats`: a port's counters (all ones where a counter is unavailable) and, from
/// OpenFlow 1.3 on, how long the port has been up; from 1.4 on, its other properties.
///
/// In 1.4 `rx_frame_err`, `rx_over_err`, `rx_crc_err` and `collisions` are the first
/// Ethernet property's (all ones when there is none). Encoding 1.4 writes that property
/// first, then `properties`; it leaves it out when all four are all ones (unavailable)
/// and no `Unknown` property of the Ethernet type follows, so that decoding gives back
/// the same value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PortStats {
    /// In the 1.3 numbering.
    pub port_no: u32,
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_dropped: u64,
    pub tx_dropped: u64,
    pub rx_errors: u64,
    pub tx_errors: u64,
    pub rx_frame_err: u64,
    pub rx_over_err: u64,
    pub rx_crc_err: u64,
    pub collisions: u64,
    /// `u32::MAX` (with `duration_nsec`) when not known: always in OpenFlow 1.0.
    pub duration_sec: u32,
    pub duration_nsec: u32,
    /// OpenFlow 1.4 on: the properties after the Ethernet one, in wire order.
    pub properties: Vec<PortStatsProp>,
}

/// A port-stats property other than the (first) Ethernet one (OpenFlow 1.4).
///
/// Invariant: `Other` never holds an unknown property of the optical type; it holds the
/// Ethernet type only for a second Ethernet property.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PortStatsProp {
    /// `OFPPSPT_OPTICAL` (`ofp_port_stats_prop_optical`).
    Optical(OpticalPortStats),
    /// `OFPPSPT_EXPERIMENTER`, or a type 1.4 does not define (or a second Ethernet one).
    Other(Property),
}

record! {
    /// `ofp_port_stats_prop_optical` after its header and 4 pad bytes: which readings
    /// are valid (`OFPOSF_*`), the transmitter's and receiver's tuning, and power, bias
    /// and temperature.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
    pub struct OpticalPortStats {
        pub flags: u32,
        pub tx_freq_lmda: u32,
        pub tx_offset: u32,
        pub tx_grid_span: u32,
        pub rx_freq_lmda: u32,
        pub rx_offset: u32,
        pub rx_grid_span: u32,
        pub tx_pwr: u16,
        pub rx_pwr: u16,
        pub bias_current: u16,
        pub temperature: u16,
    }
}

impl PortStatsProp {
    /// The property type number.
    pub fn prop_type(&self) -> u16 {
        match self {
            PortStatsProp::Optical(_) => port_stats_prop::OPTICAL,
            PortStatsProp::Other(p) => p.prop_type(),
        }
    }

    /// Writes the property with its padding.
    pub fn encode(&self, w: &mut Writer) {
        match self {
            PortStatsProp::Optical(o) => property::write(w, port_stats_prop::OPTICAL, |w| {
                w.zeros(4);
                o.encode(w);
            }),
            PortStatsProp::Other(p) => p.encode(w),
        }
    }
}

/// Reads `N` `u64` counters in wire order.
fn read_counters<const N: usize>(r: &mut Reader) -> Result<[u64; N], OfpError> {
    let mut c = [0u64; N];
    for v in &mut c {
        *v = r.u64()?;
    }
    Ok(c)
}

impl PortStats {
    /// The element from its fields in wire order: the eight counters every version has
    /// inline (`rx_packets` .. `tx_errors`), the four Ethernet ones (`rx_frame_err` ..
    /// `collisions`), the duration and 1.4's other properties.
    fn from_counters(
        port_no: u32,
        counters: [u64; 8],
        ethernet: [u64; 4],
        (duration_sec, duration_nsec): (u32, u32),
        properties: Vec<PortStatsProp>,
    ) -> PortStats {
        let [rx_packets, tx_packets, rx_bytes, tx_bytes, rx_dropped, tx_dropped, rx_errors, tx_errors] =
            counters;
        let [rx_frame_err, rx_over_err, rx_crc_err, collisions] = ethernet;
        PortStats {
            port_no,
            rx_packets,
            tx_packets,
            rx_bytes,
            tx_bytes,
            rx_dropped,
            tx_dropped,
            rx_errors,
            tx_errors,
            rx_frame_err,
            rx_over_err,
            rx_crc_err,
            collisions,
            duration_sec,
            duration_nsec,
            properties,
        }
    }

    /// The eight counters every version has inline, in wire order.
    fn counters(&self) -> [u64; 8] {
        [
            self.rx_packets,
            self.tx_packets,
            self.rx_bytes,
            self.tx_bytes,
            self.rx_dropped,
            self.tx_dropped,
            self.rx_errors,
            self.tx_errors,
        ]
    }

    /// The four counters 1.4 moves to the Ethernet property, in wire order.
    fn ethernet(&self) -> [u64; 4] {
        [self.rx_frame_err, self.rx_over_err, self.rx_crc_err, self.collisions]
    }

    /// Reads one element of `version`'s layout.
    pub fn decode(version: u8, r: &mut Reader) -> Result<PortStats, OfpError> {
        if version >= OFP14_VERSION {
            return Self::decode14(r);
        }
        let port_no = read_port(version, r, 8)?;
        let counters = read_counters(r)?;
        let ethernet = read_counters(r)?;
        let duration = read_duration(version, r)?;
        Ok(Self::from_counters(port_no, counters, ethernet, duration, Vec::new()))
    }

    /// The 1.4 element: `length:u16, pad[2], port_no, duration_sec, duration_nsec`, eight
    /// counters, then properties to `length`.
    fn decode14(r: &mut Reader) -> Result<PortStats, OfpError> {
        let mut s = take_sized(r, 0, PORT_STATS_FIXED_LEN_14, "port stats")?;
        s.skip(4)?;
        let port_no = s.u32()?;
        let duration = (s.u32()?, s.u32()?);
        let counters = read_counters(&mut s)?;
        let mut ethernet = None;
        let properties = property::read_list(&mut s, "port stats", |ty, body| {
            Ok(match ty {
                port_stats_prop::ETHERNET if ethernet.is_none() => {
                    property::expect_len(body, ETHERNET_PROP_BODY, "port stats Ethernet")?;
                    body.skip(4)?;
                    ethernet = Some(read_counters(body)?);
                    None
                }
                port_stats_prop::OPTICAL => {
                    property::expect_len(body, OPTICAL_PROP_BODY, "port stats optical")?;
                    body.skip(4)?;
                    Some(PortStatsProp::Optical(OpticalPortStats::decode(body)?))
                }
                ty => Some(PortStatsProp::Other(Property::from_body(ty, body, "port stats")?)),
            })
        })?;
        let ethernet = ethernet.unwrap_or([u64::MAX; 4]);
        let properties = properties.into_iter().flatten().collect();
        Ok(Self::from_counters(port_no, counters, ethernet, duration, properties))
    }

    /// Reads a reply's whole list of `version`'s elements.
    pub fn decode_list(version: u8, r: &mut Reader) -> Result<Vec<PortStats>, OfpError> {
        decode_counters(version, r, port_stats_len(version), PortStats::decode)
    }

    /// Writes the element in `version`'s layout.
    pub fn encode(&self, version: u8, w: &mut Writer) {
        if version >= OFP14_VERSION {
            return self.encode14(w);
        }
        write_port(version, self.port_no, w, 8);
        self.counters().iter().chain(&self.ethernet()).for_each(|&v| w.u64(v));
        if version != OFP10_VERSION {
            w.u32(self.duration_sec);
            w.u32(self.duration_nsec);
        }
    }

    fn encode14(&self, w: &mut Writer) {
        w.sized(0, |w| {
            w.zeros(4);
            w.u32(self.port_no);
            w.u32(self.duration_sec);
            w.u32(self.duration_nsec);
            self.counters().iter().for_each(|&v| w.u64(v));
            let ethernet = self.ethernet();
            let second_ethernet =
                self.properties.iter().any(|p| p.prop_type() == port_stats_prop::ETHERNET);
            if ethernet != [u64::MAX; 4] || second_ethernet {
                property::write(w, port_stats_prop::ETHERNET, |w| {
                    w.zeros(4);
                    ethernet.iter().for_each(|&v| w.u64(v));
                });
            }
            self.properties.iter().for_each(|p| p.encode(w));
        });
    }

    /// How long the port has been up (seconds, nanoseconds), when reported.
    pub fn duration(&self) -> Option<(u32, u32)> {
        (self.duration_sec != u32::MAX).then_some((self.duration_sec, self.duration_nsec))
    }
}

/// `ofp_queue_stats`: one queue's counters and, from OpenFlow 1.3 on, its age; from 1.4
/// on, its properties (the spec defines only the experimenter's).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct QueueStats {
    /// In the 1.3 numbering.
    pub port_no: u32,
    pub queue_id: u32,
    pub tx_bytes: u64,
    pub tx_packets: u64,
    pub tx_errors: u64,
    /// `u32::MAX` (with `duration_nsec`) when not known: always in OpenFlow 1.0.
    pub duration_sec: u32,
    pub duration_nsec: u32,
    /// OpenFlow 1.4 on: the properties, in wire order (no type has fields here).
    pub properties: Vec<Property>,
}

impl QueueStats {
    /// Reads one element of `version`'s layout (1.4: `length:u16, pad[6]` first, then
    /// the 1.3 fields, then properties to `length`).
    pub fn decode(version: u8, r: &mut Reader) -> Result<QueueStats, OfpError> {
        let mut sized;
        let r = if version >= OFP14_VERSION {
            sized = take_sized(r, 0, QUEUE_STATS_FIXED_LEN_14, "queue stats")?;
            sized.skip(8)?;
            &mut sized
        } else {
            r
        };
        let port_no = read_port(version, r, 4)?;
        let queue_id = r.u32()?;
        let (tx_bytes, tx_packets, tx_errors) = (r.u64()?, r.u64()?, r.u64()?);
        let (duration_sec, duration_nsec) = read_duration(version, r)?;
        let properties = if version >= OFP14_VERSION {
            Property::decode_list(r, "queue stats")?
        } else {
            Vec::new()
        };
        Ok(QueueStats {
            port_no,
            queue_id,
            tx_bytes,
            tx_packets,
            tx_errors,
            duration_sec,
            duration_nsec,
            properties,
        })
    }

    /// Reads a reply's whole list of `version`'s elements.
    pub fn decode_list(version: u8, r: &mut Reader) -> Result<Vec<QueueStats>, OfpError> {
        decode_counters(version, r, queue_stats_len(version), QueueStats::decode)
    }

    /// Writes the element in `version`'s layout.
    pub fn encode(&self, version: u8, w: &mut Writer) {
        let fields = |w: &mut Writer| {
            write_port(version, self.port_no, w, 4);
            w.u32(self.queue_id);
            w.u64(self.tx_bytes);
            w.u64(self.tx_packets);
            w.u64(self.tx_errors);
            if version != OFP10_VERSION {
                w.u32(self.duration_sec);
                w.u32(self.duration_nsec);
            }
        };
        if version >= OFP14_VERSION {
            w.sized(0, |w| {
                w.zeros(8);
                fields(w);
                self.properties.iter().for_each(|p| p.encode(w));
            });
        } else {
            fields(w);
        }
    }

    /// How long the queue has existed (seconds, nanoseconds), when reported.
    pub fn duration(&self) -> Option<(u32, u32)> {
        (self.duration_sec != u32::MAX).then_some((self.duration_sec, self.duration_nsec))
    }
}

/// Bytes of one table-stats element on the wire of `version`.
pub fn table_stats_len(version: u8) -> usize {
    if version == OFP10_VERSION {
        64
    } else {
        24
    }
}

/// `OFP_MAX_TABLE_NAME_LEN` (OpenFlow 1.0).
const TABLE_NAME_LEN: usize = 32;

/// `ofp_table_stats`: a table's counters and, in OpenFlow 1.0 only, its name, the fields
/// it can wildcard and its capacity (1.3 moved those to table features: decoding 1.3
/// leaves them empty, encoding 1.3 leaves them out).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TableStats {
    pub table_id: u8,
    /// 1.0 only; read up to its first NUL, at most 31 bytes survive encoding.
    pub name: String,
    /// 1.0 only: the `ofp_flow_wildcards` bits the table supports (`None` from 1.3;
    /// encoded as 0 in 1.0).
    pub wildcards: Option<u32>,
    /// 1.0 only.
    pub max_entries: u32,
    pub active_count: u32,
    pub lookup_count: u64,
    pub matched_count: u64,
}

impl TableStats {
    pub fn decode(version: u8, r: &mut Reader) -> Result<TableStats, OfpError> {
        let table_id = r.u8()?;
        r.skip(3)?;
        let (name, wildcards, max_entries) = if version == OFP10_VERSION {
            (r.fixed_str(TABLE_NAME_LEN)?, Some(r.u32()?), r.u32()?)
        } else {
            (String::new(), None, 0)
        };
        Ok(TableStats {
            table_id,
            name,
            wildcards,
            max_entries,
            active_count: r.u32()?,
            lookup_count: r.u64()?,
            matched_count: r.u64()?,
        })
    }

    /// Reads a reply's whole list of `version`'s elements (fixed-size in every version).
    pub fn decode_list(version: u8, r: &mut Reader) -> Result<Vec<TableStats>, OfpError> {
        r.fixed_list(table_stats_len(version), |r| TableStats::decode(version, r))
    }

    pub fn encode(&self, version: u8, w: &mut Writer) {
        w.u8(self.table_id);
        w.zeros(3);
        if version == OFP10_VERSION {
            w.fixed_str(&self.name, TABLE_NAME_LEN);
            w.u32(self.wildcards.unwrap_or(0));
            w.u32(self.max_entries);
        }
        w.u32(self.active_count);
        w.u64(self.lookup_count);
        w.u64(self.matched_count);
    }
}

/// proptest strategies: counters as arbitrary wire bytes of a version decode, so every
/// value that version's wire carries (pads ignored).
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use crate::v13::property::strategy::{arb_properties, arb_property};
    use proptest::prelude::*;

    /// The element of `len` arbitrary bytes that `decode` reads.
    fn from_bytes<T: std::fmt::Debug>(
        len: usize,
        decode: impl Fn(&mut Reader) -> Result<T, OfpError>,
    ) -> impl Strategy<Value = T> {
        proptest::collection::vec(any::<u8>(), len).prop_map(move |b| {
            decode(&mut Reader::new(&b)).expect("any bytes of the length decode")
        })
    }

    /// Port stats of `version`'s wire (1.4's: with and without the Ethernet property,
    /// and up to 2 other properties).
    pub fn arb_port_stats(version: u8) -> BoxedStrategy<PortStats> {
        use crate::header::OFP13_VERSION;
        let v13 =
            from_bytes(port_stats_len(OFP13_VERSION), |r| PortStats::decode(OFP13_VERSION, r));
        if version < OFP14_VERSION {
            return from_bytes(port_stats_len(version), move |r| PortStats::decode(version, r))
                .boxed();
        }
        (v13, any::<bool>(), proptest::collection::vec(arb_port_stats_prop(), 0..3))
            .prop_map(|(mut p, no_ethernet, properties)| {
                if no_ethernet {
                    p.rx_frame_err = u64::MAX;
                    p.rx_over_err = u64::MAX;
                    p.rx_crc_err = u64::MAX;
                    p.collisions = u64::MAX;
                }
                p.properties = properties;
                p
            })
            .boxed()
    }

    /// Every port-stats property (a second Ethernet one among the unknown).
    pub fn arb_port_stats_prop() -> impl Strategy<Value = PortStatsProp> {
        prop_oneof![
            OpticalPortStats::arb().prop_map(PortStatsProp::Optical),
            arb_property(&[port_stats_prop::OPTICAL]).prop_map(PortStatsProp::Other),
        ]
    }

    /// Port `port_no`'s counters numbered 1 to 12 in the order 1.0 and 1.3 write them
    /// (`rx_packets` 1 .. `collisions` 12), with `duration` and `properties`.
    pub fn numbered_port_stats(
        port_no: u32,
        (duration_sec, duration_nsec): (u32, u32),
        properties: Vec<PortStatsProp>,
    ) -> PortStats {
        PortStats {
            port_no,
            rx_packets: 1,
            tx_packets: 2,
            rx_bytes: 3,
            tx_bytes: 4,
            rx_dropped: 5,
            tx_dropped: 6,
            rx_errors: 7,
            tx_errors: 8,
            rx_frame_err: 9,
            rx_over_err: 10,
            rx_crc_err: 11,
            collisions: 12,
            duration_sec,
            duration_nsec,
            properties,
        }
    }

    /// Queue stats of `version`'s wire (1.4's: with up to 2 properties).
    pub fn arb_queue_stats(version: u8) -> BoxedStrategy<QueueStats> {
        use crate::header::OFP13_VERSION;
        if version < OFP14_VERSION {
            return from_bytes(queue_stats_len(version), move |r| QueueStats::decode(version, r))
                .boxed();
        }
        let v13 =
            from_bytes(queue_stats_len(OFP13_VERSION), |r| QueueStats::decode(OFP13_VERSION, r));
        (v13, arb_properties(&[]))
            .prop_map(|(q, properties)| QueueStats { properties, ..q })
            .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::strategy::*;
    use super::*;
    use crate::error::ErrorKind;
    use crate::header::OFP13_VERSION;
    use crate::wire::{assert_refused, assert_roundtrip_in, encoded};
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn port_stats_roundtrip(v in prop_oneof![Just(OFP10_VERSION), Just(OFP13_VERSION), Just(OFP14_VERSION)]
            .prop_flat_map(|v| (Just(v), arb_port_stats(v)))) {
            let (version, p) = v;
            let bytes = assert_roundtrip_in(version, &p, PortStats::encode, PortStats::decode);
            if version >= OFP14_VERSION {
                prop_assert_eq!(usize::from(u16::from_be_bytes([bytes[0], bytes[1]])), bytes.len());
                prop_assert_eq!(bytes.len() % 8, 0);
            } else {
                prop_assert_eq!(bytes.len(), port_stats_len(version));
            }
        }

        #[test]
        fn queue_stats_roundtrip(v in prop_oneof![Just(OFP10_VERSION), Just(OFP13_VERSION), Just(OFP14_VERSION)]
            .prop_flat_map(|v| (Just(v), arb_queue_stats(v)))) {
            let (version, q) = v;
            let bytes = assert_roundtrip_in(version, &q, QueueStats::encode, QueueStats::decode);
            if version < OFP14_VERSION {
                prop_assert_eq!(bytes.len(), queue_stats_len(version));
            } else {
                prop_assert_eq!(usize::from(u16::from_be_bytes([bytes[0], bytes[1]])), bytes.len());
            }
        }

        #[test]
        fn truncated_14_elements_are_errors(p in arb_port_stats(OFP14_VERSION), q in arb_queue_stats(OFP14_VERSION)) {
            let pb = encoded(|w| p.encode(OFP14_VERSION, w));
            let qb = encoded(|w| q.encode(OFP14_VERSION, w));
            for n in 0..pb.len() {
                prop_assert!(PortStats::decode(OFP14_VERSION, &mut Reader::new(&pb[..n])).is_err());
            }
            for n in 0..qb.len() {
                prop_assert!(QueueStats::decode(OFP14_VERSION, &mut Reader::new(&qb[..n])).is_err());
            }
        }
    }

    /// A 1.4 port-stats element: port 7, duration 1 s 2 ns, counters 1..=8, the Ethernet
    /// property with 9..=12, then an experimenter property.
    fn port_stats_14_bytes() -> Vec<u8> {
        let mut b = vec![0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 2];
        for i in 1..=8u64 {
            b.extend_from_slice(&i.to_be_bytes());
        }
        b.extend_from_slice(&[0, 0, 0, 40, 0, 0, 0, 0]);
        for i in 9..=12u64 {
            b.extend_from_slice(&i.to_be_bytes());
        }
        b.extend_from_slice(&[0xff, 0xff, 0, 13, 0, 0, 0x23, 0x20, 0, 0, 0, 1, 0xaa, 0, 0, 0]);
        let len = b.len() as u16;
        b[..2].copy_from_slice(&len.to_be_bytes());
        b
    }

    #[test]
    fn port_stats_14_bytes_value_bytes() {
        let bytes = port_stats_14_bytes();
        assert_eq!(bytes.len(), 80 + 40 + 16);
        let p = PortStats::decode(OFP14_VERSION, &mut Reader::new(&bytes)).unwrap();
        let experimenter =
            Property::Experimenter { experimenter: 0x2320, exp_type: 1, data: vec![0xaa] };
        assert_eq!(p, numbered_port_stats(7, (1, 2), vec![PortStatsProp::Other(experimenter)]));
        assert_eq!(encoded(|w| p.encode(OFP14_VERSION, w)), bytes);
        // The same counters in 1.3 are 112 bytes with the Ethernet ones inline.
        let b13 = encoded(|w| p.encode(OFP13_VERSION, w));
        assert_eq!(b13.len(), 112);
        assert_eq!(&b13[8 + 8 * 8..8 + 9 * 8], &9u64.to_be_bytes());
    }

    #[test]
    fn port_stats_14_without_ethernet_reads_unavailable() {
        let mut b = port_stats_14_bytes();
        b.drain(80..120);
        b[..2].copy_from_slice(&96u16.to_be_bytes());
        let p = PortStats::decode(OFP14_VERSION, &mut Reader::new(&b)).unwrap();
        assert_eq!(
            (p.rx_frame_err, p.rx_over_err, p.rx_crc_err, p.collisions),
            (u64::MAX, u64::MAX, u64::MAX, u64::MAX)
        );
        assert_eq!(encoded(|w| p.encode(OFP14_VERSION, w)), b);
    }

    #[test]
    fn port_stats_14_length_errors() {
        let good = port_stats_14_bytes();
        let with_len = |len: u16| {
            let mut b = good.clone();
            b[..2].copy_from_slice(&len.to_be_bytes());
            b
        };
        let decode = |r: &mut Reader| PortStats::decode(OFP14_VERSION, r);
        // The element's length below its fixed part or beyond the bytes.
        let cases = [with_len(72), with_len(200)];
        let cases: Vec<&[u8]> = cases.iter().map(Vec::as_slice).collect();
        assert_refused(&cases, decode, ErrorKind::BAD_REQUEST_BAD_LEN);
        // The Ethernet property past the element's end, or of the wrong length.
        let mut short_ethernet = good.clone();
        short_ethernet[83] = 32;
        let cases = [with_len(84), short_ethernet];
        let cases: Vec<&[u8]> = cases.iter().map(Vec::as_slice).collect();
        assert_refused(&cases, decode, ErrorKind::BAD_PROPERTY_BAD_LEN);
    }

    #[test]
    fn lists_of_14_elements_follow_their_lengths() {
        let one = port_stats_14_bytes();
        let two = [one.clone(), one.clone()].concat();
        let v = PortStats::decode_list(OFP14_VERSION, &mut Reader::new(&two)).unwrap();
        assert_eq!(v.len(), 2);
        // 1.3 lists must be whole 112-byte elements.
        let e = PortStats::decode_list(OFP13_VERSION, &mut Reader::new(&two)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
        let q = QueueStats { port_no: 1, queue_id: 2, ..QueueStats::default() };
        let qb = encoded(|w| q.encode(OFP14_VERSION, w));
        assert_eq!(qb.len(), 48);
        assert_eq!(&qb[..8], &[0, 48, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&qb[8..16], &[0, 0, 0, 1, 0, 0, 0, 2]);
    }
}
