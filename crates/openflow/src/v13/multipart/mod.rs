//! OpenFlow 1.3 and 1.4 multipart requests and replies (`OFPT_MULTIPART_REQUEST` /
//! `_REPLY`).
//!
//! After the 8-byte OpenFlow header both carry `type:u16, flags:u16, pad[4]` and then a
//! body whose layout the type selects ([`mp_type`]). [`MultipartRequestBody`] and
//! [`MultipartReplyBody`] have one variant per OpenFlow 1.4.1 type (1.3.5's and 1.4's
//! table description, queue description and flow monitor); the structures of the bodies
//! live in the submodules named after what they describe. Decoding and encoding take
//! the frame's version: 1.4 gives port and queue counters a length and properties
//! ([`crate::model::PortStats`]) and flow statistics an importance.
//!
//! Decoding rules:
//! - a type number the frame's version does not define is `OFPBRC_BAD_MULTIPART` (the
//!   1.4 types in a 1.3 frame included);
//! - the body must fill the message exactly: trailing bytes after a fixed body, a list
//!   element cut short, or an element `length` below its fixed part or beyond the
//!   message are `OFPBRC_BAD_LEN`;
//! - errors inside nested structures keep their own kind (a bad match stays
//!   `OFPET_BAD_MATCH`, a bad table-features property `OFPTFFC_*`, a bad action
//!   `OFPBAC_*`).
//!
//! A long list reply is sent as several messages: [`MultipartReply::split`] cuts it into
//! parts that each fit one message, flagged [`OFPMPF_REPLY_MORE`] on all but the last.

pub mod desc;
pub mod flow;
pub mod flow_monitor;
pub mod group;
pub mod meter;
pub mod port_stats;
pub mod queue_desc;
mod split;
pub mod table;

#[cfg(test)]
pub(crate) mod strategy;
#[cfg(test)]
mod tests;

pub use desc::Desc;
pub use flow::{AggregateStats, FlowStats, FlowStatsRequest};
pub use flow_monitor::{
    monitor_flags, FlowMonitorCommand, FlowMonitorRequest, FlowUpdate, FlowUpdateFull,
    FullUpdateEvent,
};
pub use group::{BucketCounter, GroupDesc, GroupFeatures, GroupStats};
pub use meter::{MeterBandStats, MeterConfig, MeterFeatures, MeterStats};
pub use port_stats::{OpticalPortStats, PortStats, PortStatsProp, QueueStats};
pub use queue_desc::{QueueDesc, QueueDescProp};
pub use split::MAX_REPLY_BODY;
pub use table::TableStats;

use crate::error::{ErrorKind, OfpError};
use crate::header::{OFP13_VERSION, OFP14_VERSION};
use crate::v13::port::Port;
use crate::v13::switch_config::TableDesc;
use crate::v13::table_features::TableFeatures;
pub use crate::v13::Experimenter;
use crate::wire::{Reader, Writer};

/// `OFPMPF_REQ_MORE`: more request messages follow.
pub const OFPMPF_REQ_MORE: u16 = 1;
/// `OFPMPF_REPLY_MORE`: more reply messages follow.
pub const OFPMPF_REPLY_MORE: u16 = 1;
/// Length of the multipart header after the OpenFlow header (`type, flags, pad[4]`).
pub const MULTIPART_HEADER_LEN: usize = 8;

spec_table! {
    /// `ofp_multipart_type` numbers (1.3's, then 1.4's from `TABLE_DESC`).
    pub mod mp_type: u16 as numbers {
        DESC, FLOW, AGGREGATE, TABLE, PORT_STATS, QUEUE, GROUP, GROUP_DESC, GROUP_FEATURES,
        METER, METER_CONFIG, METER_FEATURES, TABLE_FEATURES, PORT_DESC, TABLE_DESC, QUEUE_DESC,
        FLOW_MONITOR,
        EXPERIMENTER = 0xffff,
    }
}

/// The spec's name of a multipart type (`OFPMP_FLOW`), if 1.3 or 1.4 defines it.
pub fn type_name(ty: u16) -> Option<&'static str> {
    use mp_type as t;
    Some(match ty {
        t::DESC => "OFPMP_DESC",
        t::FLOW => "OFPMP_FLOW",
        t::AGGREGATE => "OFPMP_AGGREGATE",
        t::TABLE => "OFPMP_TABLE",
        t::PORT_STATS => "OFPMP_PORT_STATS",
        t::QUEUE => "OFPMP_QUEUE",
        t::GROUP => "OFPMP_GROUP",
        t::GROUP_DESC => "OFPMP_GROUP_DESC",
        t::GROUP_FEATURES => "OFPMP_GROUP_FEATURES",
        t::METER => "OFPMP_METER",
        t::METER_CONFIG => "OFPMP_METER_CONFIG",
        t::METER_FEATURES => "OFPMP_METER_FEATURES",
        t::TABLE_FEATURES => "OFPMP_TABLE_FEATURES",
        t::PORT_DESC => "OFPMP_PORT_DESC",
        t::TABLE_DESC => "OFPMP_TABLE_DESC",
        t::QUEUE_DESC => "OFPMP_QUEUE_DESC",
        t::FLOW_MONITOR => "OFPMP_FLOW_MONITOR",
        t::EXPERIMENTER => "OFPMP_EXPERIMENTER",
        _ => return None,
    })
}

fn bad_multipart(ty: u16) -> OfpError {
    OfpError::new(ErrorKind::BAD_REQUEST_BAD_MULTIPART, format!("unknown multipart type {ty}"))
}

pub(crate) use crate::wire::take_sized;

/// An `OFPT_MULTIPART_REQUEST` body (after the OpenFlow header): the statistics header
/// of every version ([`crate::model::Stats`]) over 1.3's and 1.4's request bodies.
pub type MultipartRequest = crate::model::Stats<MultipartRequestBody>;

/// The type-specific part of a multipart request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MultipartRequestBody {
    Desc,
    Flow(FlowStatsRequest),
    Aggregate(FlowStatsRequest),
    Table,
    /// `ofp_port_stats_request` (`OFPP_ANY` for all ports).
    PortStats {
        port_no: u32,
    },
    /// `ofp_queue_stats_request` (`OFPP_ANY`, `OFPQ_ALL` wildcards).
    Queue {
        port_no: u32,
        queue_id: u32,
    },
    /// `ofp_group_stats_request` (`OFPG_ALL` for all groups).
    Group {
        group_id: u32,
    },
    GroupDesc,
    GroupFeatures,
    /// `ofp_meter_multipart_request` (`OFPM_ALL` for all meters).
    Meter {
        meter_id: u32,
    },
    MeterConfig {
        meter_id: u32,
    },
    MeterFeatures,
    /// Empty: a query; otherwise the controller's desired table configuration.
    TableFeatures(Vec<TableFeatures>),
    PortDesc,
    /// OpenFlow 1.4 on: every table's description.
    TableDesc,
    /// OpenFlow 1.4 on: `ofp_queue_desc_request` (`OFPP_ANY`, `OFPQ_ALL` wildcards).
    QueueDesc {
        port_no: u32,
        queue_id: u32,
    },
    /// OpenFlow 1.4 on: a monitor to add, change or remove.
    FlowMonitor(FlowMonitorRequest),
    /// `ofp_experimenter_multipart_header` and the bytes after it: the layout of an
    /// `OFPT_EXPERIMENTER` body.
    Experimenter(Experimenter),
}

impl MultipartRequestBody {
    /// The `ofp_multipart_type` number.
    pub fn multipart_type(&self) -> u16 {
        use mp_type as t;
        match self {
            Self::Desc => t::DESC,
            Self::Flow(_) => t::FLOW,
            Self::Aggregate(_) => t::AGGREGATE,
            Self::Table => t::TABLE,
            Self::PortStats { .. } => t::PORT_STATS,
            Self::Queue { .. } => t::QUEUE,
            Self::Group { .. } => t::GROUP,
            Self::GroupDesc => t::GROUP_DESC,
            Self::GroupFeatures => t::GROUP_FEATURES,
            Self::Meter { .. } => t::METER,
            Self::MeterConfig { .. } => t::METER_CONFIG,
            Self::MeterFeatures => t::METER_FEATURES,
            Self::TableFeatures(_) => t::TABLE_FEATURES,
            Self::PortDesc => t::PORT_DESC,
            Self::TableDesc => t::TABLE_DESC,
            Self::QueueDesc { .. } => t::QUEUE_DESC,
            Self::FlowMonitor(_) => t::FLOW_MONITOR,
            Self::Experimenter(_) => t::EXPERIMENTER,
        }
    }

    /// The spec's name of the type (`OFPMP_FLOW`).
    pub fn name(&self) -> &'static str {
        type_name(self.multipart_type()).unwrap_or("OFPMP_UNKNOWN")
    }

    /// Reads the body of type `ty` in a frame of `version`; `r` must hold exactly the
    /// body. The 1.4 types are `OFPBRC_BAD_MULTIPART` before 1.4.
    pub fn decode(version: u8, ty: u16, r: &mut Reader) -> Result<Self, OfpError> {
        use mp_type as t;
        if version < OFP14_VERSION && matches!(ty, t::TABLE_DESC | t::QUEUE_DESC | t::FLOW_MONITOR)
        {
            return Err(bad_multipart(ty));
        }
        Ok(match ty {
            t::DESC => Self::Desc,
            t::FLOW => Self::Flow(FlowStatsRequest::decode(r)?),
            t::AGGREGATE => Self::Aggregate(FlowStatsRequest::decode(r)?),
            t::TABLE => Self::Table,
            t::PORT_STATS => {
                let port_no = r.u32()?;
                r.skip(4)?;
                Self::PortStats { port_no }
            }
            t::QUEUE => Self::Queue { port_no: r.u32()?, queue_id: r.u32()? },
            t::GROUP => {
                let group_id = r.u32()?;
                r.skip(4)?;
                Self::Group { group_id }
            }
            t::GROUP_DESC => Self::GroupDesc,
            t::GROUP_FEATURES => Self::GroupFeatures,
            t::METER => {
                let meter_id = r.u32()?;
                r.skip(4)?;
                Self::Meter { meter_id }
            }
            t::METER_CONFIG => {
                let meter_id = r.u32()?;
                r.skip(4)?;
                Self::MeterConfig { meter_id }
            }
            t::METER_FEATURES => Self::MeterFeatures,
            t::TABLE_FEATURES => Self::TableFeatures(TableFeatures::decode_list(r)?),
            t::PORT_DESC => Self::PortDesc,
            t::TABLE_DESC => Self::TableDesc,
            t::QUEUE_DESC => Self::QueueDesc { port_no: r.u32()?, queue_id: r.u32()? },
            t::FLOW_MONITOR => Self::FlowMonitor(FlowMonitorRequest::decode(r)?),
            t::EXPERIMENTER => Self::Experimenter(Experimenter::decode(r)?),
            _ => return Err(bad_multipart(ty)),
        })
    }

    /// Writes the body (without the multipart header). Every request body has the same
    /// layout in 1.3 and 1.4, so `_version` only mirrors [`Self::decode`].
    pub fn encode(&self, _version: u8, w: &mut Writer) {
        match self {
            Self::Desc
            | Self::Table
            | Self::GroupDesc
            | Self::GroupFeatures
            | Self::MeterFeatures
            | Self::PortDesc
            | Self::TableDesc => {}
            Self::Flow(f) | Self::Aggregate(f) => f.encode(w),
            Self::PortStats { port_no } => {
                w.u32(*port_no);
                w.zeros(4);
            }
            Self::Queue { port_no, queue_id } | Self::QueueDesc { port_no, queue_id } => {
                w.u32(*port_no);
                w.u32(*queue_id);
            }
            Self::FlowMonitor(m) => m.encode(w),
            Self::Group { group_id: id }
            | Self::Meter { meter_id: id }
            | Self::MeterConfig { meter_id: id } => {
                w.u32(*id);
                w.zeros(4);
            }
            Self::TableFeatures(tables) => tables.iter().for_each(|t| t.encode(w)),
            Self::Experimenter(e) => e.encode(w),
        }
    }
}

impl MultipartRequest {
    /// The stateless checks a switch makes before serving the request: a flow,
    /// aggregate or flow-monitor request's match is consistent (its own
    /// `OFPET_BAD_MATCH` kinds), and table-features requests name real tables with
    /// valid properties (`OFPTFFC_*`).
    pub fn validate(&self) -> Result<(), OfpError> {
        match &self.body {
            MultipartRequestBody::Flow(f) | MultipartRequestBody::Aggregate(f) => {
                f.match_.validate()
            }
            MultipartRequestBody::FlowMonitor(m) => m.match_.validate(),
            MultipartRequestBody::TableFeatures(tables) => {
                tables.iter().try_for_each(TableFeatures::validate)
            }
            _ => Ok(()),
        }
    }
}

/// An `OFPT_MULTIPART_REPLY` body (after the OpenFlow header): the statistics header
/// of every version ([`crate::model::Stats`]) over 1.3's and 1.4's reply bodies.
pub type MultipartReply = crate::model::Stats<MultipartReplyBody>;

stats_replies! {
    /// The type-specific part of a multipart reply.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum MultipartReplyBody: mp_type, OFP13_VERSION, bad_multipart, fn multipart_type {
        port PortStats = PORT_STATS;
        Group(Vec<GroupStats>) = GROUP list GroupStats,
        GroupDesc(Vec<GroupDesc>) = GROUP_DESC list GroupDesc,
        GroupFeatures(GroupFeatures) = GROUP_FEATURES plain GroupFeatures,
        Meter(Vec<MeterStats>) = METER list MeterStats,
        MeterConfig(Vec<MeterConfig>) = METER_CONFIG list MeterConfig,
        MeterFeatures(MeterFeatures) = METER_FEATURES plain MeterFeatures,
        TableFeatures(Vec<TableFeatures>) = TABLE_FEATURES tlvs TableFeatures,
        PortDesc(Vec<Port>) = PORT_DESC versioned Port,
        /// OpenFlow 1.4 on: every table's description.
        TableDesc(Vec<TableDesc>) = TABLE_DESC list TableDesc since OFP14_VERSION,
        /// OpenFlow 1.4 on: the queues' descriptions.
        QueueDesc(Vec<QueueDesc>) = QUEUE_DESC list QueueDesc since OFP14_VERSION,
        /// OpenFlow 1.4 on: flow updates.
        FlowMonitor(Vec<FlowUpdate>) = FLOW_MONITOR list FlowUpdate since OFP14_VERSION,
        /// `ofp_experimenter_multipart_header` and the bytes after it: the layout of an
        /// `OFPT_EXPERIMENTER` body.
        Experimenter(Experimenter) = EXPERIMENTER plain Experimenter,
    }
}

impl MultipartReplyBody {
    /// The spec's name of the type (`OFPMP_FLOW`).
    pub fn name(&self) -> &'static str {
        type_name(self.multipart_type()).unwrap_or("OFPMP_UNKNOWN")
    }

    /// The number of bytes [`Self::encode`] writes for `version`.
    pub fn encoded_len(&self, version: u8) -> usize {
        let mut w = Writer::new();
        self.encode(version, &mut w);
        w.len()
    }
}

// 1.3's and 1.4's request bodies as the bodies of the statistics header of every
// version (`crate::model::Stats`).
wire_by_methods!(StatsBody for MultipartRequestBody, crate::OFP13_VERSION);
