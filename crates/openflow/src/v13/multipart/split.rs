//! Splitting a long multipart reply into messages that each fit in 65535 bytes.
//!
//! List bodies are cut between elements, greedily: each part holds as many elements as
//! fit in `max_body` encoded bytes. An element that alone exceeds `max_body` gets a part
//! of its own (elements are never cut). An experimenter body is cut between bytes of its
//! data, each part repeating the experimenter header, so concatenating the parts' data
//! gives back the data. Other bodies that are not lists (desc, aggregate, features) and
//! empty lists come back as a single part, so every reply yields at least one message.

use super::{
    Experimenter, MultipartReply, MultipartReplyBody, MULTIPART_HEADER_LEN, OFPMPF_REPLY_MORE,
};
use crate::header::HEADER_LEN;
use crate::v10::stats::chunk;

/// The largest body (after the OpenFlow and multipart headers) one message can carry.
pub const MAX_REPLY_BODY: usize = u16::MAX as usize - HEADER_LEN - MULTIPART_HEADER_LEN;
/// `ofp_experimenter_multipart_header`: experimenter and exp_type.
const EXPERIMENTER_HEADER_LEN: usize = 8;

impl MultipartReplyBody {
    /// Splits a list body into parts whose bodies each encode (for a frame of
    /// `version`) to at most `max_body` bytes (see the module comment for the
    /// exceptions); concatenating the parts' lists gives back the original list.
    pub fn split(self, version: u8, max_body: usize) -> Vec<MultipartReplyBody> {
        use MultipartReplyBody as B;
        let m = max_body;
        let v = version;
        match self {
            B::Flow(l) => chunk(l, m, |x, w| x.encode(v, w), B::Flow),
            B::Table(l) => chunk(l, m, |x, w| x.encode(v, w), B::Table),
            B::PortStats(l) => chunk(l, m, |x, w| x.encode(v, w), B::PortStats),
            B::Queue(l) => chunk(l, m, |x, w| x.encode(v, w), B::Queue),
            B::Group(l) => chunk(l, m, |x, w| x.encode(w), B::Group),
            B::GroupDesc(l) => chunk(l, m, |x, w| x.encode(w), B::GroupDesc),
            B::Meter(l) => chunk(l, m, |x, w| x.encode(w), B::Meter),
            B::MeterConfig(l) => chunk(l, m, |x, w| x.encode(w), B::MeterConfig),
            B::TableFeatures(l) => chunk(l, m, |x, w| x.encode(w), B::TableFeatures),
            B::PortDesc(l) => chunk(l, m, |x, w| x.encode(v, w), B::PortDesc),
            B::TableDesc(l) => chunk(l, m, |x, w| x.encode(w), B::TableDesc),
            B::QueueDesc(l) => chunk(l, m, |x, w| x.encode(w), B::QueueDesc),
            B::FlowMonitor(l) => chunk(l, m, |x, w| x.encode(w), B::FlowMonitor),
            B::Experimenter(Experimenter { experimenter, exp_type, data }) => {
                let room = m.saturating_sub(EXPERIMENTER_HEADER_LEN).max(1);
                if data.len() <= room {
                    return vec![B::Experimenter(Experimenter { experimenter, exp_type, data })];
                }
                data.chunks(room)
                    .map(|c| {
                        B::Experimenter(Experimenter { experimenter, exp_type, data: c.to_vec() })
                    })
                    .collect()
            }
            other @ (B::Desc(_) | B::Aggregate(_) | B::GroupFeatures(_) | B::MeterFeatures(_)) => {
                vec![other]
            }
        }
    }
}

impl MultipartReply {
    /// Splits the reply into messages whose bodies each encode (for a frame of
    /// `version`) to at most `max_body` bytes ([`MAX_REPLY_BODY`] makes every whole
    /// message fit in 65535 bytes). All but the last carry [`OFPMPF_REPLY_MORE`]; the
    /// last keeps `self.flags`.
    pub fn split(self, version: u8, max_body: usize) -> Vec<MultipartReply> {
        let flags = self.flags;
        let bodies = self.body.split(version, max_body);
        let last = bodies.len().saturating_sub(1);
        bodies
            .into_iter()
            .enumerate()
            .map(|(i, body)| MultipartReply {
                flags: if i == last { flags } else { flags | OFPMPF_REPLY_MORE },
                body,
            })
            .collect()
    }

    /// [`Self::split`] at the largest size one message of `version` allows.
    pub fn into_messages(self, version: u8) -> Vec<MultipartReply> {
        self.split(version, MAX_REPLY_BODY)
    }
}
