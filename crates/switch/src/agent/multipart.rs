//! The agent's answers to multipart (statistics) requests. A reply longer than one
//! message is split between list elements into several messages, all but the last
//! flagged `OFPMPF_REPLY_MORE` (OpenFlow 1.3.5 §7.3.5).
//!
//! A request flagged `OFPMPF_REQ_MORE` (a request spread over several messages, which
//! only a table-features set uses) is refused with `OFPBRC_MULTIPART_BUFFER_OVERFLOW`:
//! the switch does not gather request parts. Setting table features is refused with
//! `OFPTFFC_EPERM` (the tables' features are fixed).

use datapath::counters::MAX_RULES;
use openflow::action::port;
use openflow::instruction::Instruction;
use openflow::oxm::OxmField;
use openflow::v13::multipart::{
    MultipartReply, MultipartReplyBody as B, MultipartRequest, MultipartRequestBody as R,
    MAX_REPLY_BODY, OFPMPF_REPLY_MORE, OFPMPF_REQ_MORE,
};
use openflow::v13::table_features::{FeatureId, OxmId, TableFeatureProp, TableFeatures};
use openflow::v13::TableDesc;
use openflow::{v13, ErrorKind, OfpError};

use super::{Agent, SessionId};
use crate::flows::NUM_TABLES;

/// `OFPQ_ALL`.
const QUEUE_ALL: u32 = 0xffff_ffff;

impl Agent {
    /// The reply messages (already split) to `req`, or the error to send.
    pub(super) fn multipart(
        &mut self,
        id: SessionId,
        req: &MultipartRequest,
        version: u8,
        now: u64,
    ) -> Result<Vec<v13::Message>, OfpError> {
        if req.flags & OFPMPF_REQ_MORE != 0 {
            return Err(OfpError::new(
                ErrorKind::BAD_REQUEST_MULTIPART_BUFFER_OVERFLOW,
                "multipart requests spread over several messages are not gathered".to_string(),
            ));
        }
        // Statistics include the kernel tier's hits so far. Peregrine's own requests read
        // what they need themselves, as their OFPT_EXPERIMENTER form does (the fast-path
        // dump harvests on its own).
        if !matches!(req.body, R::Experimenter(_)) {
            self.sync_fast_path();
        }
        let dp = self.flows.datapath().clone();
        let body = match &req.body {
            R::Desc => B::Desc(self.cfg.desc.clone()),
            R::Flow(f) => B::Flow(self.flows.flow_stats(f, now)?),
            R::Aggregate(f) => B::Aggregate(self.flows.aggregate(f)?),
            R::Table => B::Table(self.flows.table_stats()),
            R::PortStats { port_no } => B::PortStats(self.ports.stats(&dp, *port_no, now)?),
            R::Queue { port_no, queue_id } => {
                if *port_no != port::ANY && !self.ports.contains(*port_no) {
                    return Err(OfpError::new(
                        ErrorKind::QUEUE_OP_FAILED_BAD_PORT,
                        format!("port {port_no} does not exist"),
                    ));
                }
                if *queue_id != QUEUE_ALL {
                    return Err(OfpError::new(
                        ErrorKind::QUEUE_OP_FAILED_BAD_QUEUE,
                        format!("queue {queue_id} does not exist (ports have no queues)"),
                    ));
                }
                B::Queue(Vec::new())
            }
            R::Group { group_id } => {
                let flows = self.flows.flows();
                B::Group(self.groups.stats(&dp, *group_id, now, |g| {
                    flows.iter().filter(|(_, _, e)| e.outputs_to_group(g)).count() as u32
                }))
            }
            R::GroupDesc => B::GroupDesc(self.groups.desc()),
            R::GroupFeatures => B::GroupFeatures(crate::groups::GroupTable::features()),
            R::Meter { meter_id } => {
                let flows = self.flows.flows();
                B::Meter(self.meters.stats(&dp, *meter_id, now, |m| {
                    flows
                        .iter()
                        .filter(|(_, _, e)| e.instructions.contains(&Instruction::Meter(m)))
                        .count() as u32
                }))
            }
            R::MeterConfig { meter_id } => B::MeterConfig(self.meters.config(*meter_id)),
            R::MeterFeatures => B::MeterFeatures(crate::meters::MeterTable::features()),
            R::TableFeatures(set) if set.is_empty() => B::TableFeatures(table_features(version)),
            R::TableFeatures(_) => {
                return Err(OfpError::new(
                    ErrorKind::TABLE_FEATURES_FAILED_EPERM,
                    "the tables' features cannot be changed".to_string(),
                ))
            }
            R::PortDesc => B::PortDesc(self.ports.desc()),
            // Tables neither evict nor send vacancy events.
            R::TableDesc => B::TableDesc(
                (0..NUM_TABLES as u8)
                    .map(|table_id| TableDesc { table_id, config: 0, properties: Vec::new() })
                    .collect(),
            ),
            R::QueueDesc { port_no, .. } => {
                if *port_no != port::ANY && !self.ports.contains(*port_no) {
                    return Err(OfpError::new(
                        ErrorKind::QUEUE_OP_FAILED_BAD_PORT,
                        format!("port {port_no} does not exist"),
                    ));
                }
                // Ports have no queues.
                B::QueueDesc(Vec::new())
            }
            R::FlowMonitor(m) => return self.flow_monitor(id, m, version),
            R::Experimenter(v13::Experimenter {
                experimenter: super::PEREGRINE_EXPERIMENTER,
                exp_type,
                data,
            }) => B::Experimenter(v13::Experimenter {
                experimenter: super::PEREGRINE_EXPERIMENTER,
                exp_type: *exp_type,
                data: self.extension_data(*exp_type, data, false, now)?,
            }),
            R::Experimenter(v13::Experimenter { experimenter, .. }) => {
                return Err(OfpError::new(
                    ErrorKind::BAD_REQUEST_BAD_EXPERIMENTER,
                    format!("experimenter {experimenter:#x} multipart is not supported"),
                ))
            }
        };
        Ok(split(body, version))
    }
}

/// Splits a reply body into messages of wire `version` that each fit in 64 KiB.
pub(crate) fn split(body: B, version: u8) -> Vec<v13::Message> {
    let parts = body.split(version, MAX_REPLY_BODY);
    let n = parts.len();
    parts
        .into_iter()
        .enumerate()
        .map(|(i, body)| {
            v13::Message::MultipartReply(MultipartReply {
                flags: if i + 1 < n { OFPMPF_REPLY_MORE } else { 0 },
                body,
            })
        })
        .collect()
}

/// What every table supports: all instructions, every action, every OXM field of the
/// connection's `version` (1.4 adds `PBB_UCA`) for matching (maskable ones with masks),
/// wildcarding and set-field, and goto to any later table.
fn table_features(version: u8) -> Vec<TableFeatures> {
    let instructions: Vec<FeatureId> = (1..=6).map(FeatureId::Type).collect();
    // Output .. pop-pbb, without the 1.1/1.2 numbers 1..=10 that 1.3 removed.
    let actions: Vec<FeatureId> = [0, 11, 12, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27]
        .into_iter()
        .map(FeatureId::Type)
        .collect();
    let fields = |masks: bool| -> Vec<OxmId> {
        let all: &[OxmField] =
            if version >= openflow::OFP14_VERSION { &OxmField::ALL14 } else { &OxmField::ALL };
        all.iter()
            .map(|f| OxmId::basic(*f as u8, masks && f.maskable(), f.value_len() as u8))
            .collect()
    };
    (0..NUM_TABLES as u8)
        .map(|t| {
            let next: Vec<u8> = (t.saturating_add(1)..NUM_TABLES as u8).collect();
            let mut properties = Vec::new();
            for miss in [false, true] {
                properties.push(TableFeatureProp::Instructions { miss, ids: instructions.clone() });
                properties.push(TableFeatureProp::NextTables { miss, tables: next.clone() });
                properties.push(TableFeatureProp::WriteActions { miss, ids: actions.clone() });
                properties.push(TableFeatureProp::ApplyActions { miss, ids: actions.clone() });
                properties.push(TableFeatureProp::WriteSetfield { miss, fields: fields(false) });
                properties.push(TableFeatureProp::ApplySetfield { miss, fields: fields(false) });
            }
            properties.push(TableFeatureProp::Match(fields(true)));
            properties.push(TableFeatureProp::Wildcards(fields(false)));
            TableFeatures {
                table_id: t,
                name: format!("table{t}"),
                metadata_match: u64::MAX,
                metadata_write: u64::MAX,
                config: 0,
                max_entries: MAX_RULES as u32,
                properties,
            }
        })
        .collect()
}
