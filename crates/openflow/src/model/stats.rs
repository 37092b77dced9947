//! The statistics request and reply of every OpenFlow version (1.0's `OFPT_STATS_*`,
//! 1.3's `OFPT_MULTIPART_*`): `type:u16, flags:u16` (1.3: then `pad[4]`), then a body of
//! that type to the end of the message. [`Stats`] is that header over each version's
//! body vocabulary ([`StatsBody`]), which decodes and encodes the body by type and by
//! the frame's version (1.3 and 1.4 share one vocabulary whose layouts differ in places;
//! the version also says whether the header has its 4 pad bytes: all but 1.0 do).

use crate::error::OfpError;
use crate::header::OFP10_VERSION;
use crate::wire::{Reader, Writer};

/// The bodies of one version family's statistics messages (requests or replies).
pub trait StatsBody: Sized {
    /// The first OpenFlow version whose bodies these are (1.0's, or 1.3's for the
    /// vocabulary 1.3 and 1.4 share).
    const VERSION: u8;

    /// The body's statistics type number.
    fn stats_type(&self) -> u16;

    /// Reads a body of type `ty` in the layout of `version` (the frame's); `r` holds
    /// exactly its bytes ([`Stats::decode`] checks that the body used them all up).
    fn decode_body(version: u8, ty: u16, r: &mut Reader) -> Result<Self, OfpError>;

    /// Writes the body in the layout of `version`.
    fn encode_body(&self, version: u8, w: &mut Writer);
}

/// A statistics request or reply (module comment).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Stats<B> {
    /// `OFPSF_REQ_*` / `OFPSF_REPLY_*` (1.3: `OFPMPF_*`) flags: more parts follow.
    pub flags: u16,
    pub body: B,
}

impl<B: StatsBody> Stats<B> {
    /// Reads the header and the body (everything after the OpenFlow header of a frame
    /// of `version`), which must fill `r` (`OFPBRC_BAD_LEN` otherwise: bytes after a
    /// fixed body or a list).
    pub fn decode(version: u8, r: &mut Reader) -> Result<Self, OfpError> {
        let ty = r.u16()?;
        let flags = r.u16()?;
        if version != OFP10_VERSION {
            r.skip(4)?;
        }
        let body = B::decode_body(version, ty, r)?;
        r.expect_end(format_args!("statistics body of type {ty}"))?;
        Ok(Stats { flags, body })
    }

    /// Writes the header and the body in the layout of `version`.
    pub fn encode(&self, version: u8, w: &mut Writer) {
        w.u16(self.body.stats_type());
        w.u16(self.flags);
        if version != OFP10_VERSION {
            w.zeros(4);
        }
        self.body.encode_body(version, w);
    }
}
