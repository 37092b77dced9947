//! The statistics request and reply of every OpenFlow version (1.0's `OFPT_STATS_*`,
//! 1.3's `OFPT_MULTIPART_*`): `type:u16, flags:u16` (1.3: then `pad[4]`), then a body of
//! that type to the end of the message. [`Stats`] is that header over each version's
//! body vocabulary ([`StatsBody`]), which decodes and encodes the body by type.

use crate::error::OfpError;
use crate::header::OFP10_VERSION;
use crate::wire::{Reader, Writer};

/// The bodies of one version's statistics messages (requests or replies).
pub trait StatsBody: Sized {
    /// The OpenFlow version whose bodies these are.
    const VERSION: u8;

    /// The body's statistics type number.
    fn stats_type(&self) -> u16;

    /// Reads a body of type `ty`; `r` holds exactly its bytes ([`Stats::decode`] checks
    /// that the body used them all up).
    fn decode_body(ty: u16, r: &mut Reader) -> Result<Self, OfpError>;

    /// Writes the body.
    fn encode_body(&self, w: &mut Writer);
}

/// A statistics request or reply (module comment).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stats<B> {
    /// `OFPSF_REQ_*` / `OFPSF_REPLY_*` (1.3: `OFPMPF_*`) flags: more parts follow.
    pub flags: u16,
    pub body: B,
}

impl<B: StatsBody> Stats<B> {
    /// Reads the header and the body (everything after the OpenFlow header), which
    /// must fill `r` (`OFPBRC_BAD_LEN` otherwise: bytes after a fixed body or a list).
    pub fn decode(r: &mut Reader) -> Result<Self, OfpError> {
        let ty = r.u16()?;
        let flags = r.u16()?;
        if B::VERSION != OFP10_VERSION {
            r.skip(4)?;
        }
        let body = B::decode_body(ty, r)?;
        r.expect_end(format_args!("statistics body of type {ty}"))?;
        Ok(Stats { flags, body })
    }

    /// Writes the header and the body.
    pub fn encode(&self, w: &mut Writer) {
        w.u16(self.body.stats_type());
        w.u16(self.flags);
        if B::VERSION != OFP10_VERSION {
            w.zeros(4);
        }
        self.body.encode_body(w);
    }
}
