//! TTL actions: set and decrement of the MPLS and IP TTL, and the copies between the
//! outermost MPLS entry and the header below it.
//!
//! A decrement of a TTL that is 0 or 1 fails with [`RewriteError::InvalidTtl`] and
//! leaves the packet alone. copy_ttl_out/in move the TTL between the outermost MPLS entry
//! and the next one in, which is the next label stack entry, or below the bottom of the
//! stack the IPv4 TTL (with its header checksum) / IPv6 hop limit, recognised by the IP
//! version nibble. IP-in-IP copies are not done (the key has no inner IP header):
//! without an MPLS stack they fail with [`RewriteError::MissingHeader`].

use headers::{ipv4, ipv6, mpls, MplsEntry};

use super::checksum;
use super::{eth_type, ethertype, RewriteError};
use crate::key::{Field, FlowKey};
use crate::packet::{Layers, Packet};

use RewriteError::{InvalidTtl, MissingHeader};

/// Where a TTL byte is, and the checksummed IPv4 header containing it, if any.
#[derive(Clone, Copy)]
struct TtlAt {
    at: usize,
    ipv4: Option<usize>,
}

impl TtlAt {
    fn get(self, data: &[u8]) -> Result<u8, RewriteError> {
        data.get(self.at).copied().ok_or(MissingHeader)
    }

    fn set(self, data: &mut [u8], v: u8) -> Result<(), RewriteError> {
        match self.ipv4 {
            Some(l3) => {
                if l3 + ipv4::HEADER_LEN > data.len() {
                    return Err(MissingHeader);
                }
                let d = checksum::write(data, l3, self.at, &[v]).ok_or(MissingHeader)?;
                checksum::update(data, l3 + ipv4::field::CHECKSUM.start, d);
            }
            None => *data.get_mut(self.at).ok_or(MissingHeader)? = v,
        }
        Ok(())
    }
}

/// The outermost IP header's TTL, per the key.
fn nw_ttl(key: &FlowKey, layers: &Layers) -> Result<TtlAt, RewriteError> {
    let l3 = usize::from(layers.l3.ok_or(MissingHeader)?);
    match eth_type(key) {
        ethertype::IPV4 => Ok(TtlAt { at: l3 + ipv4::field::TTL, ipv4: Some(l3) }),
        ethertype::IPV6 => Ok(TtlAt { at: l3 + ipv6::field::HOP_LIMIT, ipv4: None }),
        _ => Err(MissingHeader),
    }
}

/// The outermost MPLS entry's TTL.
fn mpls_ttl(layers: &Layers) -> Result<TtlAt, RewriteError> {
    let m = usize::from(layers.mpls.ok_or(MissingHeader)?);
    Ok(TtlAt { at: m + mpls::field::TTL, ipv4: None })
}

/// The TTL of the header just inside the outermost MPLS entry.
fn inner_ttl(data: &[u8], layers: &Layers) -> Result<TtlAt, RewriteError> {
    let m = usize::from(layers.mpls.ok_or(MissingHeader)?);
    let lse = MplsEntry::new_checked_at(data, m).ok_or(MissingHeader)?;
    let next = m + mpls::ENTRY_LEN;
    if !lse.bos() {
        return Ok(TtlAt { at: next + mpls::field::TTL, ipv4: None });
    }
    // Below the stack: IPv4 (with an IHL of at least 5) or IPv6, by the version nibble.
    let first = data.get(next + ipv4::field::VER_IHL).copied();
    match first.map(|b| b >> 4) {
        Some(ipv4::VERSION)
            if first.is_some_and(|b| usize::from(b & 0x0f) * 4 >= ipv4::HEADER_LEN) =>
        {
            Ok(TtlAt { at: next + ipv4::field::TTL, ipv4: Some(next) })
        }
        Some(ipv6::VERSION) => Ok(TtlAt { at: next + ipv6::field::HOP_LIMIT, ipv4: None }),
        _ => Err(MissingHeader),
    }
}

/// Decrements the TTL at `t`, refusing to reach zero.
fn dec(data: &mut [u8], t: TtlAt) -> Result<u8, RewriteError> {
    let v = t.get(data)?;
    if v <= 1 {
        return Err(InvalidTtl);
    }
    t.set(data, v - 1)?;
    Ok(v - 1)
}

pub(super) fn set_mpls_ttl(pkt: &mut Packet, layers: &Layers, v: u8) -> Result<(), RewriteError> {
    mpls_ttl(layers)?.set(pkt.data_mut(), v)
}

pub(super) fn dec_mpls_ttl(pkt: &mut Packet, layers: &Layers) -> Result<(), RewriteError> {
    dec(pkt.data_mut(), mpls_ttl(layers)?).map(|_| ())
}

pub(super) fn set_nw_ttl(
    pkt: &mut Packet,
    key: &mut FlowKey,
    layers: &Layers,
    v: u8,
) -> Result<(), RewriteError> {
    nw_ttl(key, layers)?.set(pkt.data_mut(), v)?;
    key.set(Field::IpTtl, u128::from(v));
    Ok(())
}

pub(super) fn dec_nw_ttl(
    pkt: &mut Packet,
    key: &mut FlowKey,
    layers: &Layers,
) -> Result<(), RewriteError> {
    let v = dec(pkt.data_mut(), nw_ttl(key, layers)?)?;
    key.set(Field::IpTtl, u128::from(v));
    Ok(())
}

pub(super) fn copy_ttl_out(pkt: &mut Packet, layers: &Layers) -> Result<(), RewriteError> {
    let data = pkt.data_mut();
    let outer = mpls_ttl(layers)?;
    let v = inner_ttl(data, layers)?.get(data)?;
    outer.get(data)?;
    outer.set(data, v)
}

pub(super) fn copy_ttl_in(pkt: &mut Packet, layers: &Layers) -> Result<(), RewriteError> {
    let data = pkt.data_mut();
    let v = mpls_ttl(layers)?.get(data)?;
    inner_ttl(data, layers)?.set(data, v)
}
