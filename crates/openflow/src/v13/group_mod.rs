//! `OFPT_GROUP_MOD` (OpenFlow 1.3): add, modify or delete a group and its buckets.
//!
//! Wire form: header, `command:u16, type:u8, pad, group_id:u32`, then buckets to the end;
//! a bucket is `len:u16, weight:u16, watch_port:u32, watch_group:u32, pad[4], actions`.
//!
//! A bucket length below 16 or past the end of the message is `OFPGMFC_BAD_BUCKET` (as
//! Open vSwitch answers; the spec names no code for it); errors inside the actions keep
//! the action codec's kinds. [`GroupMod::validate`] makes the stateless semantic checks.

use crate::action::{port as ofpp, Action, OFPG_ALL, OFPG_ANY, OFPG_MAX};
use crate::error::{ErrorKind, OfpError};
use crate::model::WireAction;
use crate::wire::{Reader, Writer};

wire_enum! {
    /// `ofp_group_mod_command`.
    pub enum GroupModCommand: u16 as from_u16 / to_u16 {
        Add = 0,
        Modify = 1,
        Delete = 2,
    }
}

wire_enum! {
    /// `ofp_group_type`.
    pub enum GroupType: u8 as from_u8 / to_u8 {
        All = 0,
        Select = 1,
        Indirect = 2,
        FastFailover = 3,
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

record! {
    /// An `OFPT_GROUP_MOD` body.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub struct GroupMod {
        pub command: GroupModCommand,
        pub group_type: GroupType [pad 1],
        pub group_id: u32,
        pub buckets: Vec<Bucket> [list],
    }
}

list_item_by_methods!(Bucket, strategy::arb_bucket());

/// Length of a bucket header (`ofp_bucket` without its actions).
pub const BUCKET_HEADER_LEN: usize = 16;

impl Bucket {
    /// Reads one bucket, checking its length against what is left of the message.
    pub fn decode(r: &mut Reader) -> Result<Bucket, OfpError> {
        let bad = |detail: String| OfpError::new(ErrorKind::GROUP_MOD_FAILED_BAD_BUCKET, detail);
        if r.remaining() < BUCKET_HEADER_LEN {
            return Err(bad(format!("buckets end with {} stray bytes", r.remaining())));
        }
        let len = r.peek_u16(0)? as usize;
        if len < BUCKET_HEADER_LEN || len > r.remaining() {
            return Err(bad(format!(
                "bucket length {len} is below 16 or past the {} bytes left",
                r.remaining()
            )));
        }
        let mut b = r.sub(len)?;
        b.skip(2)?;
        let weight = b.u16()?;
        let watch_port = b.u32()?;
        let watch_group = b.u32()?;
        b.skip(4)?;
        Ok(Bucket { weight, watch_port, watch_group, actions: Action::decode_list(&mut b)? })
    }

    pub fn encode(&self, w: &mut Writer) {
        let start = w.len();
        w.u16(0);
        w.u16(self.weight);
        w.u32(self.watch_port);
        w.u32(self.watch_group);
        w.zeros(4);
        Action::encode_list(&self.actions, w);
        w.patch_len16(start, start);
    }

    /// Whether the bucket names a port or group whose liveness it depends on.
    pub fn has_watch(&self) -> bool {
        self.watch_port != ofpp::ANY || self.watch_group != OFPG_ANY
    }
}

impl GroupMod {
    /// Stateless checks, in this order:
    /// - the command (`OFPGMFC_BAD_COMMAND`);
    /// - the group id: above `OFPG_MAX` is `OFPGMFC_INVALID_GROUP`, except `OFPG_ALL`
    ///   in a delete;
    /// - a delete must carry no buckets (1.3.5 prescribes `OFPGMFC_INVALID_GROUP`); its
    ///   type is ignored;
    /// - for add and modify: the type (`OFPGMFC_BAD_TYPE`); an indirect group must have
    ///   exactly one bucket (`OFPGMFC_INVALID_GROUP`); a nonzero weight outside a select
    ///   group is `OFPGMFC_INVALID_GROUP` (weights are defined only for select groups;
    ///   `OFPGMFC_WEIGHT_UNSUPPORTED` means a switch cannot do unequal select weights,
    ///   which is not this case; Open vSwitch answers `INVALID_GROUP` too); a watch port
    ///   in the unused range between `OFPP_MAX` and the reserved ports, or a watch group
    ///   above `OFPG_MAX` other than `OFPG_ANY`, is `OFPGMFC_BAD_WATCH`; a fast-failover
    ///   bucket watching nothing is `OFPGMFC_BAD_WATCH`; then each bucket's actions
    ///   ([`Action::validate_list`]).
    pub fn validate(&self) -> Result<(), OfpError> {
        let invalid =
            |detail: String| Err(OfpError::new(ErrorKind::GROUP_MOD_FAILED_INVALID_GROUP, detail));
        let bad_watch =
            |detail: String| Err(OfpError::new(ErrorKind::GROUP_MOD_FAILED_BAD_WATCH, detail));
        match self.command {
            GroupModCommand::Unknown(n) => {
                return Err(OfpError::new(
                    ErrorKind::GROUP_MOD_FAILED_BAD_COMMAND,
                    format!("group-mod command {n} is not defined"),
                ))
            }
            GroupModCommand::Delete => {
                if self.group_id > OFPG_MAX && self.group_id != OFPG_ALL {
                    return invalid(format!(
                        "group 0x{:08x} cannot be deleted (not a group or OFPG_ALL)",
                        self.group_id
                    ));
                }
                if !self.buckets.is_empty() {
                    return invalid("a group delete must not carry buckets".into());
                }
                return Ok(());
            }
            GroupModCommand::Add | GroupModCommand::Modify => {}
        }
        if self.group_id > OFPG_MAX {
            return invalid(format!("group id 0x{:08x} is above OFPG_MAX", self.group_id));
        }
        if let GroupType::Unknown(n) = self.group_type {
            return Err(OfpError::new(
                ErrorKind::GROUP_MOD_FAILED_BAD_TYPE,
                format!("group type {n} is not defined"),
            ));
        }
        if self.group_type == GroupType::Indirect && self.buckets.len() != 1 {
            return invalid(format!(
                "an indirect group needs exactly one bucket, not {}",
                self.buckets.len()
            ));
        }
        for (i, b) in self.buckets.iter().enumerate() {
            if b.weight != 0 && self.group_type != GroupType::Select {
                return invalid(format!(
                    "bucket {i} has weight {} but only select groups use weights",
                    b.weight
                ));
            }
            if b.watch_port > ofpp::MAX && b.watch_port < ofpp::IN_PORT {
                return bad_watch(format!(
                    "bucket {i} watches port 0x{:08x}, which is not a port",
                    b.watch_port
                ));
            }
            if b.watch_group > OFPG_MAX && b.watch_group != OFPG_ANY {
                return bad_watch(format!(
                    "bucket {i} watches group 0x{:08x}, which is not a group",
                    b.watch_group
                ));
            }
            if self.group_type == GroupType::FastFailover && !b.has_watch() {
                return bad_watch(format!(
                    "fast-failover bucket {i} watches neither a port nor a group"
                ));
            }
            Action::validate_list(&b.actions)?;
        }
        Ok(())
    }
}

/// proptest strategies for group mods.
#[cfg(test)]
pub(crate) mod strategy {
    use super::*;
    use crate::action::strategy::arb_action;
    use proptest::prelude::*;

    pub fn arb_bucket() -> impl Strategy<Value = Bucket> {
        (any::<u16>(), any::<u32>(), any::<u32>(), proptest::collection::vec(arb_action(), 0..3))
            .prop_map(|(weight, watch_port, watch_group, actions)| Bucket {
                weight,
                watch_port,
                watch_group,
                actions,
            })
    }

    pub fn arb_group_mod() -> impl Strategy<Value = GroupMod> {
        GroupMod::arb()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::encoded;

    fn output(port: u32) -> Action {
        Action::Output { port, max_len: 0 }
    }

    fn bucket(weight: u16, port: u32) -> Bucket {
        Bucket { weight, watch_port: ofpp::ANY, watch_group: OFPG_ANY, actions: vec![output(port)] }
    }

    /// An add of select group 1 with one bucket (weight 1, watch port 1, watch group
    /// 1, output:2), laid out by hand.
    fn spec_bytes() -> Vec<u8> {
        let mut b = vec![0, 0, 1, 0, 0, 0, 0, 1];
        b.extend_from_slice(&[0, 32, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0]);
        b.extend_from_slice(&[0, 0, 0, 16, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
        b
    }

    #[test]
    fn decodes_spec_bytes() {
        let bytes = spec_bytes();
        let g = GroupMod::decode(&mut Reader::new(&bytes)).unwrap();
        assert_eq!(
            g,
            GroupMod {
                command: GroupModCommand::Add,
                group_type: GroupType::Select,
                group_id: 1,
                buckets: vec![Bucket {
                    weight: 1,
                    watch_port: 1,
                    watch_group: 1,
                    actions: vec![output(2)],
                }],
            }
        );
        assert_eq!(encoded(|w| g.encode(w)), bytes);
    }

    #[test]
    fn bad_bucket_lengths() {
        for (len, cut) in [(15u8, 0usize), (48, 0), (32, 4)] {
            let mut b = spec_bytes();
            b[9] = len;
            b.truncate(b.len() - cut);
            let e = GroupMod::decode(&mut Reader::new(&b)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::GROUP_MOD_FAILED_BAD_BUCKET, "len {len} cut {cut}");
        }
        let mut b = spec_bytes();
        b.extend_from_slice(&[0; 8]);
        let e = GroupMod::decode(&mut Reader::new(&b)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::GROUP_MOD_FAILED_BAD_BUCKET);
        let e = GroupMod::decode(&mut Reader::new(&b[..7])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BAD_REQUEST_BAD_LEN);
    }

    fn select() -> GroupMod {
        GroupMod {
            command: GroupModCommand::Add,
            group_type: GroupType::Select,
            group_id: 1,
            buckets: vec![bucket(1, 1), bucket(2, 2)],
        }
    }

    #[test]
    fn validate_accepts() {
        assert!(select().validate().is_ok());
        let ff = GroupMod {
            group_type: GroupType::FastFailover,
            buckets: vec![
                Bucket { watch_port: 1, ..bucket(0, 1) },
                Bucket { watch_group: 7, ..bucket(0, 2) },
            ],
            ..select()
        };
        assert!(ff.validate().is_ok());
        let del_all = GroupMod {
            command: GroupModCommand::Delete,
            group_type: GroupType::Unknown(9),
            group_id: OFPG_ALL,
            buckets: vec![],
        };
        assert!(del_all.validate().is_ok());
        let indirect =
            GroupMod { group_type: GroupType::Indirect, buckets: vec![bucket(0, 1)], ..select() };
        assert!(indirect.validate().is_ok());
    }

    #[test]
    fn validate_errors() {
        let kind = |g: GroupMod| g.validate().unwrap_err().kind;
        assert_eq!(
            kind(GroupMod { command: GroupModCommand::Unknown(3), ..select() }),
            ErrorKind::GROUP_MOD_FAILED_BAD_COMMAND
        );
        assert_eq!(
            kind(GroupMod { group_type: GroupType::Unknown(4), ..select() }),
            ErrorKind::GROUP_MOD_FAILED_BAD_TYPE
        );
        for id in [OFPG_MAX + 1, OFPG_ALL, OFPG_ANY] {
            assert_eq!(
                kind(GroupMod { group_id: id, ..select() }),
                ErrorKind::GROUP_MOD_FAILED_INVALID_GROUP
            );
        }
        assert_eq!(
            kind(GroupMod {
                command: GroupModCommand::Delete,
                group_id: OFPG_ANY,
                buckets: vec![],
                ..select()
            }),
            ErrorKind::GROUP_MOD_FAILED_INVALID_GROUP
        );
        assert_eq!(
            kind(GroupMod { command: GroupModCommand::Delete, ..select() }),
            ErrorKind::GROUP_MOD_FAILED_INVALID_GROUP
        );
        for n in [0, 2] {
            let buckets = (0..n).map(|i| bucket(0, i + 1)).collect();
            assert_eq!(
                kind(GroupMod { group_type: GroupType::Indirect, buckets, ..select() }),
                ErrorKind::GROUP_MOD_FAILED_INVALID_GROUP,
                "{n} buckets"
            );
        }
        assert_eq!(
            kind(GroupMod { group_type: GroupType::All, ..select() }),
            ErrorKind::GROUP_MOD_FAILED_INVALID_GROUP
        );
        assert_eq!(
            kind(GroupMod {
                group_type: GroupType::FastFailover,
                buckets: vec![bucket(0, 1)],
                ..select()
            }),
            ErrorKind::GROUP_MOD_FAILED_BAD_WATCH
        );
        assert_eq!(
            kind(GroupMod {
                buckets: vec![Bucket { watch_port: ofpp::MAX + 1, ..bucket(1, 1) }],
                ..select()
            }),
            ErrorKind::GROUP_MOD_FAILED_BAD_WATCH
        );
        assert_eq!(
            kind(GroupMod {
                buckets: vec![Bucket { watch_group: OFPG_ALL, ..bucket(1, 1) }],
                ..select()
            }),
            ErrorKind::GROUP_MOD_FAILED_BAD_WATCH
        );
        // Bucket actions are validated: output to port 0 is not a port.
        assert_eq!(
            kind(GroupMod { buckets: vec![bucket(1, 0)], ..select() }),
            ErrorKind::BAD_ACTION_BAD_OUT_PORT
        );
    }

    roundtrip_tests! {
        roundtrip: strategy::arb_group_mod() => GroupMod;
    }
}
