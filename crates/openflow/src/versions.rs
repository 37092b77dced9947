//! The OpenFlow versions one end of a connection allows, and version negotiation
//! (OpenFlow 1.3.5 §6.3.1), the same for the switch (`peregrine run --protocols`) and for
//! `peregrine ctl -O`.
//!
//! An offer is a hello: a 1.3 hello with a version bitmap, or a plain 1.0 hello when 1.0
//! is the only version allowed (a 1.0 peer knows no bitmap). The agreed version is the
//! highest one both bitmaps hold or, when the peer's hello has no bitmap, the lower of
//! the two header versions, which must then be one we allow. Names are Open vSwitch's
//! (`OpenFlow10`, `OpenFlow13`, `OpenFlow14`).

use crate::v13::{Hello, Message as M13};
use crate::{Frame, Message, OFP10_VERSION, OFP13_VERSION, OFP14_VERSION};

/// A set of wire versions, each one peregrine speaks (1.0, 1.3 and 1.4). Never empty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Versions(u32);

/// Every version peregrine speaks, with its name, ascending.
const KNOWN: [(u8, &str); 3] =
    [(OFP10_VERSION, "OpenFlow10"), (OFP13_VERSION, "OpenFlow13"), (OFP14_VERSION, "OpenFlow14")];

/// Versions of OpenFlow that exist but peregrine does not speak.
const UNSPOKEN: [&str; 3] = ["OpenFlow11", "OpenFlow12", "OpenFlow15"];

impl Default for Versions {
    /// Every version peregrine speaks.
    fn default() -> Self {
        Versions(KNOWN.iter().fold(0, |set, (v, _)| set | 1 << v))
    }
}

impl Versions {
    /// Parses a comma-separated list of names, `OpenFlow13` or `OpenFlow10,OpenFlow13`
    /// (case does not matter), saying what is wrong with a name that is not one.
    pub fn parse(s: &str) -> Result<Versions, String> {
        let mut set = 0u32;
        for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let known = KNOWN.iter().find(|(_, n)| n.eq_ignore_ascii_case(name));
            match known {
                Some((v, _)) => set |= 1 << v,
                None if UNSPOKEN.iter().any(|n| n.eq_ignore_ascii_case(name)) => {
                    return Err(format!(
                        "{name}: this OpenFlow version is not supported (peregrine speaks {})",
                        Versions::default()
                    ))
                }
                None => {
                    return Err(format!(
                        "{name}: unknown OpenFlow version (use {}, comma separated)",
                        Versions::default()
                    ))
                }
            }
        }
        if set == 0 {
            return Err("at least one OpenFlow version is needed".into());
        }
        Ok(Versions(set))
    }

    /// The wire versions, ascending.
    pub fn list(self) -> Vec<u8> {
        (0..32u8).filter(|v| self.allows(*v)).collect()
    }

    pub fn allows(self, v: u8) -> bool {
        v < 32 && self.0 & (1 << v) != 0
    }

    /// The highest version allowed.
    pub fn max(self) -> u8 {
        31 - self.0.leading_zeros() as u8
    }

    /// The hello offering these versions: its header carries the highest one.
    pub fn hello(self, xid: u32) -> Frame {
        if self.list() == [OFP10_VERSION] {
            Frame::v10(xid, crate::v10::Message::Hello(Vec::new()))
        } else {
            let hello = M13::Hello(Hello::with_versions(&self.list()));
            Frame { version: self.max(), xid, message: Message::V13(hello) }
        }
    }

    /// The version agreed with a peer whose hello is `peer`.
    pub fn negotiate(self, peer: &Frame) -> Result<u8, NoCommonVersion> {
        let bitmap = match &peer.message {
            Message::V13(M13::Hello(h)) => h.versions(),
            _ => None,
        };
        let chosen = match &bitmap {
            Some(theirs) => theirs.iter().rev().find(|v| self.allows(**v)).copied(),
            None => Some(self.max().min(peer.version)).filter(|v| self.allows(*v)),
        };
        chosen.ok_or(NoCommonVersion {
            ours: self,
            theirs: bitmap.unwrap_or_else(|| vec![peer.version]),
        })
    }
}

impl std::fmt::Display for Versions {
    /// The names, comma separated: `OpenFlow10,OpenFlow13`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> =
            KNOWN.iter().filter(|(v, _)| self.allows(*v)).map(|(_, n)| *n).collect();
        f.write_str(&names.join(","))
    }
}

/// A negotiation that failed: what we allow and what the peer offered (its bitmap, or
/// its header version when it sent none). Displayed in Open vSwitch's words.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoCommonVersion {
    pub ours: Versions,
    pub theirs: Vec<u8>,
}

impl NoCommonVersion {
    /// Both sides' versions: `we support version 0x04, peer supports version 0x01`.
    pub fn sides(&self) -> String {
        format!(
            "we support {}, peer supports {}",
            wire_names(&self.ours.list()),
            wire_names(&self.theirs)
        )
    }
}

impl std::fmt::Display for NoCommonVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "version negotiation failed ({})", self.sides())
    }
}

/// `version 0x04` or `versions 0x01, 0x04`.
fn wire_names(vs: &[u8]) -> String {
    let list: Vec<String> = vs.iter().map(|v| format!("0x{v:02x}")).collect();
    match list.len() {
        1 => format!("version {}", list[0]),
        _ => format!("versions {}", list.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_protocol_lists() {
        assert_eq!(Versions::parse("OpenFlow13").unwrap().list(), vec![4]);
        assert_eq!(Versions::parse("OpenFlow13,OpenFlow10").unwrap().list(), vec![1, 4]);
        assert_eq!(Versions::parse("openflow10").unwrap().list(), vec![1]);
        assert_eq!(Versions::parse(" OpenFlow10 , ").unwrap().list(), vec![1]);
        assert_eq!(Versions::parse("OpenFlow14,OpenFlow13").unwrap().list(), vec![4, 5]);
        let e = Versions::parse("OpenFlow15").unwrap_err();
        assert_eq!(
            e,
            "OpenFlow15: this OpenFlow version is not supported \
             (peregrine speaks OpenFlow10,OpenFlow13,OpenFlow14)"
        );
        assert!(Versions::parse("OF13").unwrap_err().contains("unknown"));
        assert!(Versions::parse("").is_err());
        assert!(Versions::parse(",").is_err());
        assert_eq!(Versions::default().list(), vec![1, 4, 5]);
        assert_eq!(Versions::default().to_string(), "OpenFlow10,OpenFlow13,OpenFlow14");
        assert_eq!(Versions::parse("OpenFlow10").unwrap().max(), 1);
    }

    #[test]
    fn hello_carries_the_offer() {
        let h = Versions::default().hello(1);
        assert_eq!(h.version, 5);
        match &h.message {
            Message::V13(M13::Hello(h)) => assert_eq!(h.versions(), Some(vec![1, 4, 5])),
            m => panic!("{m:?}"),
        }
        let h13 = Versions::parse("OpenFlow13,OpenFlow10").unwrap().hello(1);
        assert_eq!(h13.version, 4);
        match &h13.message {
            Message::V13(M13::Hello(h)) => assert_eq!(h.versions(), Some(vec![1, 4])),
            m => panic!("{m:?}"),
        }
        let h10 = Versions::parse("OpenFlow10").unwrap().hello(1);
        assert_eq!(h10.version, 1);
        let bytes = h10.encode().unwrap();
        assert_eq!(bytes.len(), 8);
    }

    #[test]
    fn negotiates_like_the_spec() {
        let all = Versions::default();
        let both = Versions::parse("OpenFlow10,OpenFlow13").unwrap();
        let only13 = Versions::parse("OpenFlow13").unwrap();
        let only10 = Versions::parse("OpenFlow10").unwrap();
        let bitmap = |vs: &[u8]| Frame::v13(1, M13::Hello(Hello::with_versions(vs)));
        let plain10 = Frame::v10(1, crate::v10::Message::Hello(vec![]));
        let plain13 = Frame::v13(1, M13::Hello(Hello { elements: vec![] }));
        assert_eq!(both.negotiate(&bitmap(&[1, 4])), Ok(4));
        assert_eq!(both.negotiate(&bitmap(&[1, 4, 5, 6])), Ok(4));
        assert_eq!(all.negotiate(&bitmap(&[1, 4, 5, 6])), Ok(5));
        assert_eq!(all.negotiate(&bitmap(&[1, 4])), Ok(4));
        assert_eq!(all.negotiate(&Frame { version: 6, ..plain13.clone() }), Ok(5));
        assert_eq!(all.negotiate(&plain13), Ok(4));
        assert_eq!(both.negotiate(&bitmap(&[1])), Ok(1));
        assert_eq!(both.negotiate(&plain10), Ok(1));
        assert_eq!(both.negotiate(&plain13), Ok(4));
        assert_eq!(only10.negotiate(&plain13), Ok(1));
        assert_eq!(only10.negotiate(&bitmap(&[1, 4])), Ok(1));
        let e = only13.negotiate(&plain10).unwrap_err();
        assert_eq!(e.theirs, vec![1]);
        assert_eq!(
            e.to_string(),
            "version negotiation failed (we support version 0x04, peer supports version 0x01)"
        );
        let e = only10.negotiate(&bitmap(&[4, 5])).unwrap_err();
        assert_eq!(e.theirs, vec![4, 5]);
        assert!(e.to_string().contains("peer supports versions 0x04, 0x05"), "{e}");
        // A header version we do not speak, below our highest: nothing in common.
        let plain12 = Frame { version: 3, ..plain13 };
        assert_eq!(both.negotiate(&plain12).unwrap_err().theirs, vec![3]);
        assert_eq!(all.negotiate(&plain12).unwrap_err().theirs, vec![3]);
    }
}
