//! OpenFlow Extensible Match (OXM) fields.
//!
//! An OXM TLV is `class:u16, field:u7, hasmask:u1, length:u8, value[, mask]`. [`Oxm`] has
//! one variant per OpenFlow 1.3 basic field (class `0x8000`, fields 0..=39) and 1.4's
//! `PBB_UCA` (41; decoded in every version, as the field number is unambiguous); maskable
//! fields carry `Option<mask>`, so a field that the spec does not let be masked cannot
//! hold one. Values keep the width the wire gives them (`VLAN_VID` includes the
//! `OFPVID_PRESENT` bit 0x1000; `PBB_ISID` is 24 bits in a u32; `MPLS_LABEL` is 20 bits in
//! a u32). TLVs of any other class (Nicira's NXM classes 0 and 1, experimenter class
//! 0xffff, ...) decode to [`Oxm::Other`] with their payload kept byte for byte, so a
//! message round-trips even when the switch does not support the field; an unknown field
//! number of the basic class is a decode error (`OFPBMC_BAD_FIELD`).
//!
//! Invariants after decode: the TLV length matched the field's width (×2 when masked);
//! a mask appears only on maskable fields. Value/mask consistency, duplicates and
//! prerequisites are checked by [`crate::match13::Match::validate`], not here. Decode
//! never yields `Other` with class `0x8000`, nor a payload above 255 bytes.
//!
//! Submodules: `field` holds the table of basic fields (width, maskability, names).

use crate::wire::MacAddr;
use std::net::{Ipv4Addr, Ipv6Addr};

/// `OFPXMC_OPENFLOW_BASIC`.
pub const OXM_CLASS_BASIC: u16 = 0x8000;
/// `OFPXMC_EXPERIMENTER`.
pub const OXM_CLASS_EXPERIMENTER: u16 = 0xffff;
/// `OFPVID_PRESENT`: set in `VLAN_VID` when a VLAN tag is present.
pub const OFPVID_PRESENT: u16 = 0x1000;
/// `OFPVID_NONE`: `VLAN_VID` of an untagged packet.
pub const OFPVID_NONE: u16 = 0x0000;

/// One OXM TLV.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Oxm {
    InPort(u32),
    InPhyPort(u32),
    Metadata(u64, Option<u64>),
    EthDst(MacAddr, Option<MacAddr>),
    EthSrc(MacAddr, Option<MacAddr>),
    EthType(u16),
    VlanVid(u16, Option<u16>),
    VlanPcp(u8),
    IpDscp(u8),
    IpEcn(u8),
    IpProto(u8),
    Ipv4Src(Ipv4Addr, Option<Ipv4Addr>),
    Ipv4Dst(Ipv4Addr, Option<Ipv4Addr>),
    TcpSrc(u16),
    TcpDst(u16),
    UdpSrc(u16),
    UdpDst(u16),
    SctpSrc(u16),
    SctpDst(u16),
    Icmpv4Type(u8),
    Icmpv4Code(u8),
    ArpOp(u16),
    ArpSpa(Ipv4Addr, Option<Ipv4Addr>),
    ArpTpa(Ipv4Addr, Option<Ipv4Addr>),
    ArpSha(MacAddr, Option<MacAddr>),
    ArpTha(MacAddr, Option<MacAddr>),
    Ipv6Src(Ipv6Addr, Option<Ipv6Addr>),
    Ipv6Dst(Ipv6Addr, Option<Ipv6Addr>),
    Ipv6Flabel(u32, Option<u32>),
    Icmpv6Type(u8),
    Icmpv6Code(u8),
    Ipv6NdTarget(Ipv6Addr),
    Ipv6NdSll(MacAddr),
    Ipv6NdTll(MacAddr),
    MplsLabel(u32),
    MplsTc(u8),
    MplsBos(u8),
    PbbIsid(u32, Option<u32>),
    TunnelId(u64, Option<u64>),
    Ipv6Exthdr(u16, Option<u16>),
    /// 1.4's `OXM_OF_PBB_UCA`: the PBB I-TAG's use-customer-address bit (1 byte, 0 or 1).
    PbbUca(u8),
    /// A TLV of a class other than OpenFlow basic, kept as read. `payload` is everything
    /// after the 4-byte OXM header (for class 0xffff it starts with the experimenter id).
    Other {
        class: u16,
        field: u8,
        has_mask: bool,
        payload: Vec<u8>,
    },
}

/// The OpenFlow 1.3 and 1.4 basic field numbers (`oxm_ofb_match_fields`; 40 is
/// unassigned).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum OxmField {
    InPort = 0,
    InPhyPort = 1,
    Metadata = 2,
    EthDst = 3,
    EthSrc = 4,
    EthType = 5,
    VlanVid = 6,
    VlanPcp = 7,
    IpDscp = 8,
    IpEcn = 9,
    IpProto = 10,
    Ipv4Src = 11,
    Ipv4Dst = 12,
    TcpSrc = 13,
    TcpDst = 14,
    UdpSrc = 15,
    UdpDst = 16,
    SctpSrc = 17,
    SctpDst = 18,
    Icmpv4Type = 19,
    Icmpv4Code = 20,
    ArpOp = 21,
    ArpSpa = 22,
    ArpTpa = 23,
    ArpSha = 24,
    ArpTha = 25,
    Ipv6Src = 26,
    Ipv6Dst = 27,
    Ipv6Flabel = 28,
    Icmpv6Type = 29,
    Icmpv6Code = 30,
    Ipv6NdTarget = 31,
    Ipv6NdSll = 32,
    Ipv6NdTll = 33,
    MplsLabel = 34,
    MplsTc = 35,
    MplsBos = 36,
    PbbIsid = 37,
    TunnelId = 38,
    Ipv6Exthdr = 39,
    /// OpenFlow 1.4.
    PbbUca = 41,
}

mod field;
#[cfg(test)]
pub(crate) mod strategy;
#[cfg(test)]
mod tests;

use crate::error::{ErrorKind, OfpError};
use crate::wire::{Reader, Writer};

/// Length of the OXM header (`class`, `field`/`hasmask`, `length`).
pub const OXM_HEADER_LEN: usize = 4;

fn bad_len(detail: String) -> OfpError {
    OfpError::new(ErrorKind::BAD_MATCH_BAD_LEN, detail)
}

/// A basic field's value or mask at its wire width.
#[derive(Clone, Copy)]
enum Val {
    U8(u8),
    U16(u16),
    /// 3 bytes on the wire (`PBB_ISID`); bits above 24 are not written.
    U24(u32),
    U32(u32),
    U64(u64),
    Mac(MacAddr),
    V4(Ipv4Addr),
    V6(Ipv6Addr),
}

impl Val {
    fn write(self, w: &mut Writer) {
        match self {
            Val::U8(v) => w.u8(v),
            Val::U16(v) => w.u16(v),
            Val::U24(v) => {
                let b = v.to_be_bytes();
                w.bytes(&[b[1], b[2], b[3]]);
            }
            Val::U32(v) => w.u32(v),
            Val::U64(v) => w.u64(v),
            Val::Mac(v) => w.mac(v),
            Val::V4(v) => w.ipv4(v),
            Val::V6(v) => w.ipv6(v),
        }
    }

    fn to_bytes(self) -> Vec<u8> {
        let mut w = Writer::with_capacity(16);
        self.write(&mut w);
        w.into_vec()
    }
}

fn u24(r: &mut Reader) -> Result<u32, OfpError> {
    let [a, b, c] = r.array::<3>()?;
    Ok(u32::from_be_bytes([0, a, b, c]))
}

/// Reads the mask half of a payload when there is one.
fn opt<'a, T>(
    m: &mut Option<Reader<'a>>,
    read: impl FnOnce(&mut Reader<'a>) -> Result<T, OfpError>,
) -> Result<Option<T>, OfpError> {
    match m {
        Some(r) => read(r).map(Some),
        None => Ok(None),
    }
}

impl Oxm {
    /// Reads one TLV. Basic-class TLVs are checked against the field table (number,
    /// maskability, length); other classes are kept as read (class `0xffff` must carry
    /// at least its 4-byte experimenter id). Every failure is an `OFPET_BAD_MATCH` error.
    pub fn decode(r: &mut Reader) -> Result<Oxm, OfpError> {
        let at = r.position();
        let header = r.u32().map_err(|_| {
            bad_len(format!("OXM header truncated at offset {at}: {} bytes left", r.remaining()))
        })?;
        let class = (header >> 16) as u16;
        let field = ((header >> 9) & 0x7f) as u8;
        let has_mask = header & 0x100 != 0;
        let len = (header & 0xff) as usize;
        let left = r.remaining();
        let payload = r.bytes(len).map_err(|_| {
            bad_len(format!(
                "OXM TLV 0x{header:08x} at offset {at} has {len} payload bytes, {left} left"
            ))
        })?;
        match class {
            OXM_CLASS_BASIC => {
                let f = OxmField::from_u8(field).ok_or_else(|| {
                    OfpError::new(
                        ErrorKind::BAD_MATCH_BAD_FIELD,
                        format!("unknown OpenFlow basic OXM field {field}"),
                    )
                })?;
                if has_mask && !f.maskable() {
                    return Err(OfpError::new(
                        ErrorKind::BAD_MATCH_BAD_MASK,
                        format!("OXM field {} cannot be masked", f.name()),
                    ));
                }
                let want = f.value_len() * if has_mask { 2 } else { 1 };
                if len != want {
                    return Err(bad_len(format!(
                        "OXM field {}{} has length {len}, expected {want}",
                        f.name(),
                        if has_mask { " (masked)" } else { "" }
                    )));
                }
                let (value, mask) = payload.split_at(f.value_len());
                Oxm::from_bytes(f, value, has_mask.then_some(mask))
            }
            OXM_CLASS_EXPERIMENTER if len < 4 => Err(bad_len(format!(
                "experimenter OXM TLV has {len} payload bytes, fewer than its 4-byte experimenter id"
            ))),
            _ => Ok(Oxm::Other {
                class,
                field,
                has_mask,
                payload: payload.to_vec(),
            }),
        }
    }

    /// Builds a basic-class TLV from its value and optional mask in wire form.
    /// Errors: a mask on a non-maskable field is `OFPBMC_BAD_MASK`; a value or mask that
    /// is not exactly the field's width is `OFPBMC_BAD_LEN`.
    pub fn from_bytes(f: OxmField, value: &[u8], mask: Option<&[u8]>) -> Result<Oxm, OfpError> {
        if mask.is_some() && !f.maskable() {
            return Err(OfpError::new(
                ErrorKind::BAD_MATCH_BAD_MASK,
                format!("OXM field {} cannot be masked", f.name()),
            ));
        }
        let width = f.value_len();
        if value.len() != width || mask.is_some_and(|m| m.len() != width) {
            return Err(bad_len(format!(
                "OXM field {} is {width} bytes wide, got value of {} and mask of {} bytes",
                f.name(),
                value.len(),
                mask.map_or(0, <[u8]>::len)
            )));
        }
        Oxm::read_basic(f, &mut Reader::new(value), &mut mask.map(Reader::new))
            .map_err(|e| bad_len(format!("OXM field {}: {}", f.name(), e.detail)))
    }

    /// Reads the value (and mask) of `f` from readers that hold exactly their widths.
    fn read_basic<'a>(
        f: OxmField,
        v: &mut Reader<'a>,
        m: &mut Option<Reader<'a>>,
    ) -> Result<Oxm, OfpError> {
        use OxmField as F;
        Ok(match f {
            F::InPort => Oxm::InPort(v.u32()?),
            F::InPhyPort => Oxm::InPhyPort(v.u32()?),
            F::Metadata => Oxm::Metadata(v.u64()?, opt(m, Reader::u64)?),
            F::EthDst => Oxm::EthDst(v.mac()?, opt(m, Reader::mac)?),
            F::EthSrc => Oxm::EthSrc(v.mac()?, opt(m, Reader::mac)?),
            F::EthType => Oxm::EthType(v.u16()?),
            F::VlanVid => Oxm::VlanVid(v.u16()?, opt(m, Reader::u16)?),
            F::VlanPcp => Oxm::VlanPcp(v.u8()?),
            F::IpDscp => Oxm::IpDscp(v.u8()?),
            F::IpEcn => Oxm::IpEcn(v.u8()?),
            F::IpProto => Oxm::IpProto(v.u8()?),
            F::Ipv4Src => Oxm::Ipv4Src(v.ipv4()?, opt(m, Reader::ipv4)?),
            F::Ipv4Dst => Oxm::Ipv4Dst(v.ipv4()?, opt(m, Reader::ipv4)?),
            F::TcpSrc => Oxm::TcpSrc(v.u16()?),
            F::TcpDst => Oxm::TcpDst(v.u16()?),
            F::UdpSrc => Oxm::UdpSrc(v.u16()?),
            F::UdpDst => Oxm::UdpDst(v.u16()?),
            F::SctpSrc => Oxm::SctpSrc(v.u16()?),
            F::SctpDst => Oxm::SctpDst(v.u16()?),
            F::Icmpv4Type => Oxm::Icmpv4Type(v.u8()?),
            F::Icmpv4Code => Oxm::Icmpv4Code(v.u8()?),
            F::ArpOp => Oxm::ArpOp(v.u16()?),
            F::ArpSpa => Oxm::ArpSpa(v.ipv4()?, opt(m, Reader::ipv4)?),
            F::ArpTpa => Oxm::ArpTpa(v.ipv4()?, opt(m, Reader::ipv4)?),
            F::ArpSha => Oxm::ArpSha(v.mac()?, opt(m, Reader::mac)?),
            F::ArpTha => Oxm::ArpTha(v.mac()?, opt(m, Reader::mac)?),
            F::Ipv6Src => Oxm::Ipv6Src(v.ipv6()?, opt(m, Reader::ipv6)?),
            F::Ipv6Dst => Oxm::Ipv6Dst(v.ipv6()?, opt(m, Reader::ipv6)?),
            F::Ipv6Flabel => Oxm::Ipv6Flabel(v.u32()?, opt(m, Reader::u32)?),
            F::Icmpv6Type => Oxm::Icmpv6Type(v.u8()?),
            F::Icmpv6Code => Oxm::Icmpv6Code(v.u8()?),
            F::Ipv6NdTarget => Oxm::Ipv6NdTarget(v.ipv6()?),
            F::Ipv6NdSll => Oxm::Ipv6NdSll(v.mac()?),
            F::Ipv6NdTll => Oxm::Ipv6NdTll(v.mac()?),
            F::MplsLabel => Oxm::MplsLabel(v.u32()?),
            F::MplsTc => Oxm::MplsTc(v.u8()?),
            F::MplsBos => Oxm::MplsBos(v.u8()?),
            F::PbbIsid => Oxm::PbbIsid(u24(v)?, opt(m, u24)?),
            F::TunnelId => Oxm::TunnelId(v.u64()?, opt(m, Reader::u64)?),
            F::Ipv6Exthdr => Oxm::Ipv6Exthdr(v.u16()?, opt(m, Reader::u16)?),
            F::PbbUca => Oxm::PbbUca(v.u8()?),
        })
    }

    /// The basic field, its value and its mask at wire width; `None` for `Other`.
    fn parts(&self) -> Option<(OxmField, Val, Option<Val>)> {
        use OxmField as F;
        use Val as V;
        Some(match *self {
            Oxm::InPort(v) => (F::InPort, V::U32(v), None),
            Oxm::InPhyPort(v) => (F::InPhyPort, V::U32(v), None),
            Oxm::Metadata(v, m) => (F::Metadata, V::U64(v), m.map(V::U64)),
            Oxm::EthDst(v, m) => (F::EthDst, V::Mac(v), m.map(V::Mac)),
            Oxm::EthSrc(v, m) => (F::EthSrc, V::Mac(v), m.map(V::Mac)),
            Oxm::EthType(v) => (F::EthType, V::U16(v), None),
            Oxm::VlanVid(v, m) => (F::VlanVid, V::U16(v), m.map(V::U16)),
            Oxm::VlanPcp(v) => (F::VlanPcp, V::U8(v), None),
            Oxm::IpDscp(v) => (F::IpDscp, V::U8(v), None),
            Oxm::IpEcn(v) => (F::IpEcn, V::U8(v), None),
            Oxm::IpProto(v) => (F::IpProto, V::U8(v), None),
            Oxm::Ipv4Src(v, m) => (F::Ipv4Src, V::V4(v), m.map(V::V4)),
            Oxm::Ipv4Dst(v, m) => (F::Ipv4Dst, V::V4(v), m.map(V::V4)),
            Oxm::TcpSrc(v) => (F::TcpSrc, V::U16(v), None),
            Oxm::TcpDst(v) => (F::TcpDst, V::U16(v), None),
            Oxm::UdpSrc(v) => (F::UdpSrc, V::U16(v), None),
            Oxm::UdpDst(v) => (F::UdpDst, V::U16(v), None),
            Oxm::SctpSrc(v) => (F::SctpSrc, V::U16(v), None),
            Oxm::SctpDst(v) => (F::SctpDst, V::U16(v), None),
            Oxm::Icmpv4Type(v) => (F::Icmpv4Type, V::U8(v), None),
            Oxm::Icmpv4Code(v) => (F::Icmpv4Code, V::U8(v), None),
            Oxm::ArpOp(v) => (F::ArpOp, V::U16(v), None),
            Oxm::ArpSpa(v, m) => (F::ArpSpa, V::V4(v), m.map(V::V4)),
            Oxm::ArpTpa(v, m) => (F::ArpTpa, V::V4(v), m.map(V::V4)),
            Oxm::ArpSha(v, m) => (F::ArpSha, V::Mac(v), m.map(V::Mac)),
            Oxm::ArpTha(v, m) => (F::ArpTha, V::Mac(v), m.map(V::Mac)),
            Oxm::Ipv6Src(v, m) => (F::Ipv6Src, V::V6(v), m.map(V::V6)),
            Oxm::Ipv6Dst(v, m) => (F::Ipv6Dst, V::V6(v), m.map(V::V6)),
            Oxm::Ipv6Flabel(v, m) => (F::Ipv6Flabel, V::U32(v), m.map(V::U32)),
            Oxm::Icmpv6Type(v) => (F::Icmpv6Type, V::U8(v), None),
            Oxm::Icmpv6Code(v) => (F::Icmpv6Code, V::U8(v), None),
            Oxm::Ipv6NdTarget(v) => (F::Ipv6NdTarget, V::V6(v), None),
            Oxm::Ipv6NdSll(v) => (F::Ipv6NdSll, V::Mac(v), None),
            Oxm::Ipv6NdTll(v) => (F::Ipv6NdTll, V::Mac(v), None),
            Oxm::MplsLabel(v) => (F::MplsLabel, V::U32(v), None),
            Oxm::MplsTc(v) => (F::MplsTc, V::U8(v), None),
            Oxm::MplsBos(v) => (F::MplsBos, V::U8(v), None),
            Oxm::PbbIsid(v, m) => (F::PbbIsid, V::U24(v), m.map(V::U24)),
            Oxm::TunnelId(v, m) => (F::TunnelId, V::U64(v), m.map(V::U64)),
            Oxm::Ipv6Exthdr(v, m) => (F::Ipv6Exthdr, V::U16(v), m.map(V::U16)),
            Oxm::PbbUca(v) => (F::PbbUca, V::U8(v), None),
            Oxm::Other { .. } => return None,
        })
    }

    /// Writes one TLV. A value wider than its wire field (a `PBB_ISID` above 24 bits) is
    /// truncated to the wire width; an `Other` payload longer than 255 bytes (which no
    /// decoded TLV has) is cut at 255 so the length byte stays true.
    pub fn encode(&self, w: &mut Writer) {
        w.u32(self.header());
        match self.parts() {
            Some((_, v, m)) => {
                v.write(w);
                if let Some(m) = m {
                    m.write(w);
                }
            }
            None => {
                if let Oxm::Other { payload, .. } = self {
                    w.bytes(&payload[..payload.len().min(255)]);
                }
            }
        }
    }

    /// The basic field this TLV holds; `None` for [`Oxm::Other`].
    pub fn field(&self) -> Option<OxmField> {
        self.parts().map(|(f, _, _)| f)
    }

    /// The OXM class on the wire (`0x8000` for basic fields).
    pub fn class(&self) -> u16 {
        match self {
            Oxm::Other { class, .. } => *class,
            _ => OXM_CLASS_BASIC,
        }
    }

    /// Whether the TLV carries a mask (the `hasmask` bit).
    pub fn has_mask(&self) -> bool {
        match self {
            Oxm::Other { has_mask, .. } => *has_mask,
            _ => self.parts().is_some_and(|(_, _, m)| m.is_some()),
        }
    }

    /// Payload length as written in the header's `length` byte.
    fn payload_len(&self) -> usize {
        match self {
            Oxm::Other { payload, .. } => payload.len().min(255),
            _ => {
                self.parts().map_or(0, |(f, _, m)| f.value_len() * if m.is_some() { 2 } else { 1 })
            }
        }
    }

    /// Bytes this TLV takes on the wire, the 4-byte header included.
    pub fn wire_len(&self) -> usize {
        OXM_HEADER_LEN + self.payload_len()
    }

    /// The 32-bit OXM header as on the wire: `class << 16 | field << 9 | hasmask << 8 |
    /// length`.
    pub fn header(&self) -> u32 {
        let field = match self {
            Oxm::Other { field, .. } => *field & 0x7f,
            _ => self.field().map_or(0, |f| f as u8),
        };
        (u32::from(self.class()) << 16)
            | (u32::from(field) << 9)
            | (u32::from(self.has_mask()) << 8)
            | self.payload_len() as u32
    }

    /// The value as wire bytes. For [`Oxm::Other`]: the payload after the experimenter id
    /// (class `0xffff`), its first half when `has_mask` is set.
    pub fn value_bytes(&self) -> Vec<u8> {
        match self.parts() {
            Some((_, v, _)) => v.to_bytes(),
            None => self.other_halves().0.to_vec(),
        }
    }

    /// The mask as wire bytes, if the TLV has one. For [`Oxm::Other`] with `has_mask`:
    /// the second half of the payload after the experimenter id (class `0xffff`).
    pub fn mask_bytes(&self) -> Option<Vec<u8>> {
        match self.parts() {
            Some((_, _, m)) => m.map(Val::to_bytes),
            None => self.other_halves().1.map(<[u8]>::to_vec),
        }
    }

    /// Splits an `Other` payload into value and mask (empty for basic fields).
    fn other_halves(&self) -> (&[u8], Option<&[u8]>) {
        let Oxm::Other { class, has_mask, payload, .. } = self else {
            return (&[], None);
        };
        let body = match *class {
            OXM_CLASS_EXPERIMENTER => payload.get(4..).unwrap_or(&[]),
            _ => payload.as_slice(),
        };
        if *has_mask {
            let (v, m) = body.split_at(body.len() / 2);
            (v, Some(m))
        } else {
            (body, None)
        }
    }
}
