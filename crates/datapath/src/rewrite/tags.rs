//! Push and pop of VLAN tags, MPLS label stack entries and PBB service instance tags.
//!
//! Placement follows OpenFlow 1.3 (section 5.12.1, "existing fields that may be copied
//! into new fields on push actions"):
//!
//! - push_vlan inserts the new outermost tag right after the source MAC. Its VID and PCP
//!   are copied from the tag that was outermost, or zero (DEI is always zero).
//!   The parser reads at most two tags (the inner one only with TPID 0x8100), so a push
//!   or pop that moves a tag into or out of that view re-parses the frame.
//! - push_mpls inserts the new outermost label stack entry after the Ethernet header and
//!   any VLAN tags, and sets the ethertype there. Label and TC are copied from the entry
//!   that was outermost, or zero; bottom-of-stack is set when there was no stack; the TTL
//!   is copied from the old outermost entry, else from the IPv4 TTL / IPv6 hop limit,
//!   else zero.
//! - pop_mpls removes the outermost entry and writes the action's ethertype.
//! - push_pbb puts an 802.1ah I-TAG in front of the whole frame: the backbone MACs are
//!   the customer MACs, then the action's ethertype (0x88e7), the I-TAG TCI (I-PCP from
//!   the outermost VLAN tag's PCP, I-SID from an existing I-TAG, else zero), then the
//!   original frame from its destination MAC on.
//! - pop_pbb removes everything in front of the customer frame: backbone MACs, any
//!   backbone VLAN tags and the I-TAG.

use headers::ethertype::{is_mpls, is_vlan};
use headers::{ethernet, ipv4, ipv6, mpls, pbb, vlan};
use headers::{MplsEntry, PbbItag, VlanTag};

use super::{be16, clear_l3, eth_type, ethertype, put, reparse, RewriteError};
use crate::key::{Field, FlowKey};
use crate::packet::{Layers, Packet};

use RewriteError::MissingHeader;

/// Length of an Ethernet header (two MACs and an ethertype).
const ETH_LEN: usize = ethernet::HEADER_LEN;
/// Offset of the ethertype, or of the first tag, in an Ethernet frame.
const AFTER_MACS: usize = ethernet::ADDRS_LEN;
/// Length of an ethertype field.
const ETHERTYPE_LEN: usize = ethernet::field::ETHERTYPE.end - ethernet::field::ETHERTYPE.start;
/// Bytes push_pbb adds: ethertype, I-TAG TCI, customer MACs.
const PBB_PUSH_LEN: usize = ETHERTYPE_LEN + pbb::ITAG_LEN + ethernet::ADDRS_LEN;

/// Moves every offset at or after `from` by `by` bytes (positive: later).
#[inline]
fn shift(layers: &mut Layers, from: u16, by: i32) {
    let mv = |o: &mut u16| {
        if *o >= from {
            *o = (i32::from(*o) + by) as u16;
        }
    };
    if let Some(o) = layers.vlan.as_mut() {
        mv(o);
    }
    if let Some(o) = layers.mpls.as_mut() {
        mv(o);
    }
    mv(&mut layers.ethertype);
    if let Some(o) = layers.l3.as_mut() {
        mv(o);
    }
    if let Some(o) = layers.l4.as_mut() {
        mv(o);
    }
}

/// Where the ethertype is behind one VLAN tag, and behind two.
const ONE_TAG: usize = AFTER_MACS + vlan::TAG_LEN;
const TWO_TAGS: usize = AFTER_MACS + 2 * vlan::TAG_LEN;

/// Sets the key's VLAN fields from a TCI.
#[inline]
fn key_vlan(key: &mut FlowKey, tci: Option<u16>) {
    match tci {
        Some(tci) => {
            key.set(Field::VlanVid, 0x1000 | u128::from(tci & 0x0fff));
            key.set(Field::VlanPcp, u128::from(tci >> 13));
        }
        None => {
            key.set(Field::VlanVid, 0);
            key.set(Field::VlanPcp, 0);
        }
    }
}

/// Sets the key's MPLS fields from a label stack entry.
#[inline]
fn key_mpls(key: &mut FlowKey, lse: u32) {
    let lse = MplsEntry::new(lse.to_be_bytes());
    key.set(Field::MplsLabel, u128::from(lse.label()));
    key.set(Field::MplsTc, u128::from(lse.tc()));
    key.set(Field::MplsBos, u128::from(lse.bos()));
}

pub(super) fn push_vlan(
    pkt: &mut Packet,
    key: &mut FlowKey,
    layers: &mut Layers,
    tpid: u16,
) -> Result<(), RewriteError> {
    let data = pkt.data();
    if data.len() < ETH_LEN {
        return Err(MissingHeader);
    }
    // The new tag copies the outermost one's VID and PCP (DEI zero).
    let tci = match layers.vlan {
        Some(v) => {
            let tag = VlanTag::new_checked_at(data, usize::from(v)).ok_or(MissingHeader)?;
            tag.tci() & !vlan::DEI
        }
        None => 0,
    };
    // The parser reads at most two tags, the inner one only with TPID 0x8100. The new
    // tag leaves the rest of the frame read as before when it is the only tag, or when
    // it goes on top of a single 0x8100 tag; otherwise what follows it is read anew.
    let same_rest = is_vlan(tpid)
        && match usize::from(layers.ethertype) {
            AFTER_MACS => true,
            ONE_TAG => ethernet::ethertype_at(data, AFTER_MACS) == Some(ethertype::VLAN),
            _ => false,
        };
    if let Some(mut tag) = VlanTag::new_checked_mut(pkt.insert(AFTER_MACS, vlan::TAG_LEN)) {
        tag.set_tpid(tpid);
        tag.set_tci(tci);
    }
    if !same_rest {
        reparse(pkt, key, layers);
        return Ok(());
    }
    shift(layers, AFTER_MACS as u16, vlan::TAG_LEN as i32);
    layers.vlan = Some(AFTER_MACS as u16);
    key_vlan(key, Some(tci));
    Ok(())
}

pub(super) fn pop_vlan(
    pkt: &mut Packet,
    key: &mut FlowKey,
    layers: &mut Layers,
) -> Result<(), RewriteError> {
    let v = layers.vlan.ok_or(MissingHeader)?;
    let at = usize::from(v);
    if pkt.len() < at + vlan::TAG_LEN {
        return Err(MissingHeader);
    }
    pkt.remove(at, vlan::TAG_LEN);
    // Padding adds bytes the parser may now read (a frame cut short by its sender).
    let padded = pad_to_minimum(pkt);
    // One or two tags in front of an ethertype that is not a TPID: the inner tag (TPID
    // 0x8100), if any, becomes the outer one and the rest reads as before. A TPID left
    // after the tags (a third tag, or an S-tag inside an S-tag) now reads as a tag.
    let same_rest =
        !is_vlan(eth_type(key)) && matches!(usize::from(layers.ethertype), ONE_TAG | TWO_TAGS);
    if !same_rest || padded {
        reparse(pkt, key, layers);
        return Ok(());
    }
    shift(layers, v + 1, -(vlan::TAG_LEN as i32));
    if layers.ethertype > v {
        let tci = VlanTag::new_checked_at(pkt.data(), at).map_or(0, |t| t.tci());
        key_vlan(key, Some(tci));
    } else {
        layers.vlan = None;
        key_vlan(key, None);
    }
    Ok(())
}

pub(super) fn push_mpls(
    pkt: &mut Packet,
    key: &mut FlowKey,
    layers: &mut Layers,
    ether: u16,
) -> Result<(), RewriteError> {
    let data = pkt.data();
    let et_at = usize::from(layers.ethertype);
    let at = et_at + ETHERTYPE_LEN;
    if data.len() < ETH_LEN || data.len() < at || et_at < AFTER_MACS {
        return Err(MissingHeader);
    }
    let lse = match layers.mpls {
        Some(m) => {
            let outer = MplsEntry::new_checked_at(data, usize::from(m)).ok_or(MissingHeader)?;
            outer.word() & !mpls::BOS
        }
        None => {
            let ttl = match (eth_type(key), layers.l3) {
                (ethertype::IPV4, Some(l3)) => data.get(usize::from(l3) + ipv4::field::TTL),
                (ethertype::IPV6, Some(l3)) => data.get(usize::from(l3) + ipv6::field::HOP_LIMIT),
                _ => None,
            };
            mpls::BOS | u32::from(ttl.copied().unwrap_or(0))
        }
    };
    pkt.insert(at, mpls::ENTRY_LEN).copy_from_slice(&lse.to_be_bytes());
    // The ethertype lies before the insertion point, so it did not move.
    let _ = put(pkt.data_mut(), et_at, &ether.to_be_bytes());
    if !is_mpls(ether) {
        reparse(pkt, key, layers);
        return Ok(());
    }
    layers.mpls = Some(at as u16);
    layers.l3 = None;
    layers.l4 = None;
    key.set(Field::EthType, u128::from(ether));
    key_mpls(key, lse);
    clear_l3(key);
    // An I-TAG the ethertype named is now below the stack, where the parser stops.
    key.set(Field::PbbIsid, 0);
    key.set(Field::PbbUca, 0);
    Ok(())
}

pub(super) fn pop_mpls(
    pkt: &mut Packet,
    key: &mut FlowKey,
    layers: &mut Layers,
    ether: u16,
) -> Result<(), RewriteError> {
    let m = layers.mpls.ok_or(MissingHeader)?;
    let at = usize::from(m);
    let et_at = usize::from(layers.ethertype);
    if pkt.len() < at + mpls::ENTRY_LEN || et_at + ETHERTYPE_LEN > at {
        return Err(MissingHeader);
    }
    pkt.remove(at, mpls::ENTRY_LEN);
    let _ = put(pkt.data_mut(), et_at, &ether.to_be_bytes());
    match MplsEntry::new_checked_at(pkt.data(), at) {
        Some(lse) if is_mpls(ether) => {
            key.set(Field::EthType, u128::from(ether));
            key_mpls(key, lse.word());
        }
        _ => {
            trim_padding(pkt, at, ether);
            pad_to_minimum(pkt);
            reparse(pkt, key, layers)
        }
    }
    Ok(())
}

/// The shortest Ethernet frame without its FCS.
pub(crate) const MIN_FRAME: usize = 60;

/// Pads a frame that a pop made shorter than the Ethernet minimum with zeros, as a NIC
/// would on the wire (veth and AF_XDP send frames as they are); true if it did.
fn pad_to_minimum(pkt: &mut Packet) -> bool {
    let len = pkt.len();
    if len < MIN_FRAME {
        pkt.insert(len, MIN_FRAME - len).fill(0);
        true
    } else {
        false
    }
}

/// Drops the Ethernet padding after the IP packet that starts at `l3` (a short MPLS
/// frame is padded to the minimum length; once the label is gone the old padding would
/// be the wrong length), so that the frame can be padded afresh. Nothing changes unless
/// the IP header's length is sane and shorter than what follows `l3`.
fn trim_padding(pkt: &mut Packet, l3: usize, ether: u16) {
    let data = pkt.data();
    let ip_len = match ether {
        ethertype::IPV4 => be16(data, l3 + ipv4::field::LENGTH.start)
            .map(usize::from)
            .filter(|&n| n >= ipv4::HEADER_LEN),
        ethertype::IPV6 => be16(data, l3 + ipv6::field::PAYLOAD_LEN.start)
            .map(|n| usize::from(n) + ipv6::HEADER_LEN),
        _ => None,
    };
    if let Some(n) = ip_len {
        if l3 + n < data.len() {
            pkt.truncate(l3 + n);
        }
    }
}

pub(super) fn push_pbb(
    pkt: &mut Packet,
    key: &mut FlowKey,
    layers: &mut Layers,
    ether: u16,
) -> Result<(), RewriteError> {
    let data = pkt.data();
    if data.len() < ETH_LEN {
        return Err(MissingHeader);
    }
    let isid = if eth_type(key) == ethertype::PBB {
        let at = usize::from(layers.ethertype) + ETHERTYPE_LEN;
        PbbItag::new_checked_at(data, at).ok_or(MissingHeader)?.isid()
    } else {
        0
    };
    // The outermost tag's PCP: the top 3 bits of its TCI's first byte.
    let pcp = match layers.vlan {
        Some(v) => {
            let tci_hi = *data.get(usize::from(v) + vlan::field::TCI.start).ok_or(MissingHeader)?;
            u32::from(tci_hi >> (vlan::PCP_SHIFT - 8))
        }
        None => 0,
    };
    let itag = (pcp << pbb::PCP_SHIFT) | isid;
    pkt.insert(AFTER_MACS, PBB_PUSH_LEN);
    let data = pkt.data_mut();
    // The customer MACs go behind the new ethertype and I-TAG.
    data.copy_within(0..AFTER_MACS, AFTER_MACS + ETHERTYPE_LEN + pbb::ITAG_LEN);
    let _ = put(data, AFTER_MACS, &ether.to_be_bytes());
    let _ = put(data, AFTER_MACS + ETHERTYPE_LEN, &itag.to_be_bytes());
    reparse(pkt, key, layers);
    Ok(())
}

pub(super) fn pop_pbb(
    pkt: &mut Packet,
    key: &mut FlowKey,
    layers: &mut Layers,
) -> Result<(), RewriteError> {
    if eth_type(key) != ethertype::PBB {
        return Err(MissingHeader);
    }
    let customer = usize::from(layers.ethertype) + ETHERTYPE_LEN + pbb::ITAG_LEN;
    if pkt.len() < customer + ETH_LEN {
        return Err(MissingHeader);
    }
    pkt.remove(0, customer);
    pad_to_minimum(pkt);
    reparse(pkt, key, layers);
    Ok(())
}
