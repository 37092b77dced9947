//! Splitting a long 1.0 stats reply into messages that each fit in 65535 bytes, and the
//! greedy list chunking that 1.3's multipart reply split uses too.
//!
//! List bodies (flow, table, port, queue) are cut between entries, greedily: each part
//! holds as many entries as fit in `max_body` encoded bytes. An entry that alone exceeds
//! `max_body` gets a part of its own (entries are never cut). Bodies that are not lists
//! (desc, aggregate, vendor) and empty lists come back as a single part, so every reply
//! yields at least one message.

use super::{StatsReply, StatsReplyBody, OFPSF_REPLY_MORE};
use crate::header::{HEADER_LEN, OFP10_VERSION};
use crate::wire::Writer;

/// The length of a stats reply's own header (`type:u16, flags:u16`).
const STATS_HEADER_LEN: usize = 4;

/// The largest stats-reply body (after the OpenFlow header and the stats reply's
/// `type, flags`) one message can carry.
pub const MAX_REPLY_BODY: usize = u16::MAX as usize - HEADER_LEN - STATS_HEADER_LEN;

/// Groups `items` into runs whose encodings (by `enc`) each total at most `max` bytes,
/// in order, and wraps each run with `wrap`. An item larger than `max` gets a run of its
/// own; there is always at least one run (empty when `items` is).
pub(crate) fn chunk<T, B>(
    items: Vec<T>,
    max: usize,
    enc: impl Fn(&T, &mut Writer),
    wrap: impl Fn(Vec<T>) -> B,
) -> Vec<B> {
    let mut runs = Vec::new();
    let mut cur = Vec::new();
    let mut cur_len = 0;
    let mut scratch = Writer::new();
    for item in items {
        scratch.buf.clear();
        enc(&item, &mut scratch);
        let n = scratch.len();
        if !cur.is_empty() && cur_len + n > max {
            runs.push(wrap(std::mem::take(&mut cur)));
            cur_len = 0;
        }
        cur_len += n;
        cur.push(item);
    }
    if !cur.is_empty() || runs.is_empty() {
        runs.push(wrap(cur));
    }
    runs
}

impl StatsReply {
    /// Splits the reply into replies whose bodies each encode to at most `max_body`
    /// bytes ([`MAX_REPLY_BODY`] makes every whole message fit in 65535 bytes; see the
    /// module comment for the exceptions); concatenating the parts' lists gives back the
    /// original list. All but the last carry [`OFPSF_REPLY_MORE`]; the last keeps
    /// `self.flags`.
    pub fn split(self, max_body: usize) -> Vec<StatsReply> {
        use StatsReplyBody as B;
        let m = max_body;
        let bodies = match self.body {
            B::Flow(v) => chunk(v, m, |x, w| x.encode(OFP10_VERSION, w), B::Flow),
            B::Table(v) => chunk(v, m, |x, w| x.encode(OFP10_VERSION, w), B::Table),
            B::Port(v) => chunk(v, m, |x, w| x.encode(OFP10_VERSION, w), B::Port),
            B::Queue(v) => chunk(v, m, |x, w| x.encode(OFP10_VERSION, w), B::Queue),
            B::PortDesc(v) => chunk(v, m, |x, w| x.encode(OFP10_VERSION, w), B::PortDesc),
            other @ (B::Desc(_) | B::Aggregate(_) | B::Vendor(_)) => vec![other],
        };
        let last = bodies.len() - 1;
        bodies
            .into_iter()
            .enumerate()
            .map(|(i, body)| StatsReply {
                flags: if i < last { self.flags | OFPSF_REPLY_MORE } else { self.flags },
                body,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::strategy::arb_stats_reply;
    use super::super::{PortStats, QueueStats, TableStats};
    use super::*;
    use proptest::prelude::*;

    /// The encoded length of a reply's body (after `type, flags`).
    fn body_len(r: &StatsReply) -> usize {
        let mut w = Writer::new();
        r.encode(OFP10_VERSION, &mut w);
        w.len() - STATS_HEADER_LEN
    }

    /// The number of entries of a list body; `None` for the others.
    fn entries(b: &StatsReplyBody) -> Option<usize> {
        match b {
            StatsReplyBody::Flow(v) => Some(v.len()),
            StatsReplyBody::Table(v) => Some(v.len()),
            StatsReplyBody::Port(v) => Some(v.len()),
            StatsReplyBody::Queue(v) => Some(v.len()),
            StatsReplyBody::PortDesc(v) => Some(v.len()),
            _ => None,
        }
    }

    proptest! {
        #[test]
        fn split_respects_limit_flags_and_order(s in arb_stats_reply(), max_body in 20usize..300) {
            let parts = s.clone().split(max_body);
            prop_assert!(!parts.is_empty());
            let mut joined = Writer::new();
            for (i, p) in parts.iter().enumerate() {
                prop_assert_eq!(p.body.type_code(), s.body.type_code());
                let n = body_len(p);
                let single = entries(&p.body) == Some(1);
                prop_assert!(n <= max_body || single || entries(&p.body).is_none(),
                    "part {} of {} bytes", i, n);
                if i + 1 < parts.len() {
                    prop_assert_eq!(p.flags, s.flags | OFPSF_REPLY_MORE);
                    prop_assert!(entries(&p.body).unwrap_or(0) > 0);
                } else {
                    prop_assert_eq!(p.flags, s.flags);
                }
                let mut w = Writer::new();
                p.encode(OFP10_VERSION, &mut w);
                joined.bytes(&w.buf[STATS_HEADER_LEN..]);
            }
            let mut whole = Writer::new();
            s.encode(OFP10_VERSION, &mut whole);
            prop_assert_eq!(&joined.buf[..], &whole.buf[STATS_HEADER_LEN..]);
            if entries(&s.body).is_none() {
                prop_assert_eq!(parts, vec![s]);
            }
        }
    }

    #[test]
    fn split_is_greedy_between_entries() {
        // Table entries are 64 bytes: two fit in 130, the fifth is alone in the last part.
        let tables: Vec<TableStats> =
            (0..5).map(|i| TableStats { table_id: i, ..TableStats::default() }).collect();
        let parts = StatsReply { flags: 0, body: StatsReplyBody::Table(tables.clone()) }.split(130);
        let want = [&tables[0..2], &tables[2..4], &tables[4..5]];
        assert_eq!(parts.len(), want.len());
        for (i, (p, w)) in parts.iter().zip(want).enumerate() {
            assert_eq!(p.body, StatsReplyBody::Table(w.to_vec()));
            assert_eq!(p.flags, if i < 2 { OFPSF_REPLY_MORE } else { 0 });
        }
    }

    #[test]
    fn oversized_entries_stand_alone_and_empty_lists_stay_whole() {
        let big = PortStats::default();
        let parts = StatsReply {
            flags: OFPSF_REPLY_MORE,
            body: StatsReplyBody::Port(vec![big.clone(); 3]),
        }
        .split(50);
        assert_eq!(
            parts,
            vec![StatsReply { flags: OFPSF_REPLY_MORE, body: StatsReplyBody::Port(vec![big]) }; 3]
        );
        let empty = StatsReply { flags: 0, body: StatsReplyBody::Queue(Vec::<QueueStats>::new()) };
        assert_eq!(empty.clone().split(10), vec![empty]);
    }

    #[test]
    fn max_reply_body_is_the_most_one_message_carries() {
        let vendor = |n: usize| {
            let reply = StatsReply {
                flags: 0,
                // The vendor id is the first 4 bytes of the body.
                body: StatsReplyBody::Vendor(crate::v10::stats::VendorStats {
                    vendor: 1,
                    data: vec![0; n - 4],
                }),
            };
            crate::Frame::v10(1, crate::v10::Message::StatsReply(reply)).encode()
        };
        let bytes = vendor(MAX_REPLY_BODY).expect("a full body fits");
        assert_eq!(bytes.len(), usize::from(u16::MAX));
        assert!(vendor(MAX_REPLY_BODY + 1).is_err());
    }
}
