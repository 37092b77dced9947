//! `OFPT_GROUP_MOD` (OpenFlow 1.3): add, modify or delete a group and its buckets.
//!
//! Wire form: header, `command:u16, type:u8, pad, group_id:u32`, then buckets to the end;
//! a bucket is `len:u16, weight:u16, watch_port:u32, watch_group:u32, pad[4], actions`.

use crate::action::Action;

/// `ofp_group_mod_command`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupModCommand {
    Add,
    Modify,
    Delete,
    Unknown(u16),
}

impl GroupModCommand {
    pub fn from_u16(v: u16) -> Self {
        match v {
            0 => Self::Add,
            1 => Self::Modify,
            2 => Self::Delete,
            n => Self::Unknown(n),
        }
    }

    pub fn to_u16(self) -> u16 {
        match self {
            Self::Add => 0,
            Self::Modify => 1,
            Self::Delete => 2,
            Self::Unknown(n) => n,
        }
    }
}

/// `ofp_group_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GroupType {
    All,
    Select,
    Indirect,
    FastFailover,
    Unknown(u8),
}

impl GroupType {
    pub fn from_u8(v: u8) -> Self {
        match v {
            0 => Self::All,
            1 => Self::Select,
            2 => Self::Indirect,
            3 => Self::FastFailover,
            n => Self::Unknown(n),
        }
    }

    pub fn to_u8(self) -> u8 {
        match self {
            Self::All => 0,
            Self::Select => 1,
            Self::Indirect => 2,
            Self::FastFailover => 3,
            Self::Unknown(n) => n,
        }
    }
}

/// `ofp_bucket`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bucket {
    pub weight: u16,
    pub watch_port: u32,
    pub watch_group: u32,
    pub actions: Vec<Action>,
}

/// An `OFPT_GROUP_MOD` body.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GroupMod {
    pub command: GroupModCommand,
    pub group_type: GroupType,
    pub group_id: u32,
    pub buckets: Vec<Bucket>,
}
