//! The switch configuration of OpenFlow 1.0 (`OFPT_GET_CONFIG_REPLY`, `OFPT_SET_CONFIG`):
//! `flags:u16, miss_send_len:u16`, the layout and flags 1.3 has. The features reply has
//! one type for every version, [`crate::model::FeaturesReply`].

/// `ofp_switch_config` and its `ofp_config_flags` are the same in 1.0 as in 1.3.
pub use crate::v13::switch_config::{config_flags, SwitchConfig};
