//! Flow statistics: the `OFPMP_FLOW` / `OFPMP_AGGREGATE` request body
//! (`ofp_flow_stats_request`, shared by both), the per-flow reply element
//! (`ofp_flow_stats`) and the aggregate reply (`ofp_aggregate_stats_reply`).

use crate::error::OfpError;
use crate::instruction::Instruction;
use crate::match13::Match;
use crate::wire::{Reader, Writer};

/// Fixed part of `ofp_flow_stats_request` before the match.
pub const FLOW_STATS_REQUEST_FIXED_LEN: usize = 32;
/// Fixed part of `ofp_flow_stats` before the match.
pub use crate::model::FLOW_STATS_FIXED_LEN;
/// Length of `ofp_aggregate_stats_reply`.
pub const AGGREGATE_STATS_LEN: usize = 24;

/// `ofp_flow_stats_request`: which flows an `OFPMP_FLOW` or `OFPMP_AGGREGATE` request
/// is about (`OFPTT_ALL`, `OFPP_ANY`, `OFPG_ANY` and a zero cookie mask select all).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FlowStatsRequest {
    pub table_id: u8,
    pub out_port: u32,
    pub out_group: u32,
    pub cookie: u64,
    pub cookie_mask: u64,
    pub match_: Match,
}

impl Default for FlowStatsRequest {
    /// Every flow of every table.
    fn default() -> Self {
        FlowStatsRequest {
            table_id: crate::v13::flow_mod::OFPTT_ALL,
            out_port: crate::action::port::ANY,
            out_group: crate::action::OFPG_ANY,
            cookie: 0,
            cookie_mask: 0,
            match_: Match::default(),
        }
    }
}

impl FlowStatsRequest {
    /// Reads the whole request body: `r` must end with the match.
    pub fn decode(r: &mut Reader) -> Result<FlowStatsRequest, OfpError> {
        let table_id = r.u8()?;
        r.skip(3)?;
        let out_port = r.u32()?;
        let out_group = r.u32()?;
        r.skip(4)?;
        let cookie = r.u64()?;
        let cookie_mask = r.u64()?;
        let match_ = Match::decode(r)?;
        r.expect_end("flow stats request body")?;
        Ok(FlowStatsRequest { table_id, out_port, out_group, cookie, cookie_mask, match_ })
    }

    pub fn encode(&self, w: &mut Writer) {
        w.u8(self.table_id);
        w.zeros(3);
        w.u32(self.out_port);
        w.u32(self.out_group);
        w.zeros(4);
        w.u64(self.cookie);
        w.u64(self.cookie_mask);
        self.match_.encode(w);
    }
}

/// `ofp_flow_stats` over 1.3's match and instructions: the flow-stats entry of every
/// version ([`crate::model::FlowStats`]).
pub type FlowStats = crate::model::FlowStats<Match, Vec<Instruction>>;

record! {
    /// `ofp_aggregate_stats_reply`: totals over the flows an aggregate request selected
    /// (`packet_count:u64, byte_count:u64, flow_count:u32, pad[4]`, 24 bytes, in 1.0 too).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct AggregateStats {
        pub packet_count: u64,
        pub byte_count: u64,
        pub flow_count: u32 [pad 4],
    }
}
