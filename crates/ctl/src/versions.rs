//! OpenFlow versions: the `-O`/`--protocols` list, the hello `peregrine ctl` sends, and
//! the version negotiation with the switch's hello (OpenFlow 1.3.5 §6.3.1).
//!
//! `peregrine ctl` speaks OpenFlow 1.0 and 1.3. Unlike ovs-ofctl, whose default is 1.0
//! only, it offers both unless `-O` narrows it, and uses what the switch picks: a
//! switch that knows 1.3 gets 1.3. The offer is a 1.3 hello with a version bitmap; when
//! only 1.0 is allowed it is a plain 1.0 hello. The agreed version is the highest one
//! both bitmaps hold, or, when the peer sends no bitmap, the lower of the two header
//! versions, which must then be one we allow.

use openflow::v13::{Hello, Message as M13};
use openflow::{Frame, Message, OFP10_VERSION, OFP13_VERSION};

/// The versions a run may use, ascending, never empty, each 1 or 4.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Versions(Vec<u8>);

impl Default for Versions {
    fn default() -> Self {
        Versions(vec![OFP10_VERSION, OFP13_VERSION])
    }
}

impl Versions {
    /// Parses `OpenFlow13`, `OpenFlow10,OpenFlow13`, ... (case does not matter).
    pub fn parse(s: &str) -> Result<Versions, String> {
        let mut v = Vec::new();
        for name in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let n = match name.to_ascii_lowercase().as_str() {
                "openflow10" => OFP10_VERSION,
                "openflow13" => OFP13_VERSION,
                "openflow11" | "openflow12" | "openflow14" | "openflow15" => {
                    return Err(format!(
                        "{name}: this OpenFlow version is not supported \
                         (peregrine ctl speaks OpenFlow10 and OpenFlow13)"
                    ))
                }
                _ => {
                    return Err(format!(
                        "{name}: unknown OpenFlow version (use OpenFlow10, OpenFlow13 \
                         or both, comma separated)"
                    ))
                }
            };
            if !v.contains(&n) {
                v.push(n);
            }
        }
        if v.is_empty() {
            return Err("-O needs at least one OpenFlow version".into());
        }
        v.sort_unstable();
        Ok(Versions(v))
    }

    pub fn allows(&self, v: u8) -> bool {
        self.0.contains(&v)
    }

    pub fn max(&self) -> u8 {
        self.0.last().copied().unwrap_or(OFP13_VERSION)
    }

    /// The hello to send.
    pub fn hello(&self, xid: u32) -> Frame {
        if self.0 == [OFP10_VERSION] {
            Frame::v10(xid, openflow::v10::Message::Hello(Vec::new()))
        } else {
            Frame::v13(xid, M13::Hello(Hello::with_versions(&self.0)))
        }
    }

    /// The version agreed with a peer whose hello is `peer`, or why there is none
    /// (the wording of Open vSwitch's vconn).
    pub fn negotiate(&self, peer: &Frame) -> Result<u8, String> {
        let bitmap = match &peer.message {
            Message::V13(M13::Hello(h)) => h.versions(),
            _ => None,
        };
        let chosen = match &bitmap {
            Some(theirs) => self.0.iter().rev().find(|v| theirs.contains(v)).copied(),
            None => Some(self.max().min(peer.version)).filter(|v| self.allows(*v)),
        };
        chosen.ok_or_else(|| {
            let ours = names(&self.0);
            let theirs = match bitmap {
                Some(b) => names(&b),
                None => format!("version 0x{:02x}", peer.version),
            };
            format!("version negotiation failed (we support {ours}, peer supports {theirs})")
        })
    }
}

fn names(vs: &[u8]) -> String {
    let list: Vec<String> = vs.iter().map(|v| format!("0x{v:02x}")).collect();
    if list.len() == 1 {
        format!("version {}", list[0])
    } else {
        format!("versions {}", list.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_protocol_lists() {
        assert_eq!(Versions::parse("OpenFlow13").unwrap().0, vec![4]);
        assert_eq!(Versions::parse("OpenFlow13,OpenFlow10").unwrap().0, vec![1, 4]);
        assert_eq!(Versions::parse("openflow10").unwrap().0, vec![1]);
        assert!(Versions::parse("OpenFlow14").unwrap_err().contains("not supported"));
        assert!(Versions::parse("OF13").unwrap_err().contains("unknown"));
        assert!(Versions::parse("").is_err());
        assert_eq!(Versions::default().0, vec![1, 4]);
    }

    #[test]
    fn hello_carries_the_offer() {
        let h = Versions::default().hello(1);
        assert_eq!(h.version, 4);
        match &h.message {
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
        let both = Versions::default();
        let only13 = Versions::parse("OpenFlow13").unwrap();
        let only10 = Versions::parse("OpenFlow10").unwrap();
        let bitmap = |vs: &[u8]| Frame::v13(1, M13::Hello(Hello::with_versions(vs)));
        let plain10 = Frame::v10(1, openflow::v10::Message::Hello(vec![]));
        let plain13 = Frame::v13(1, M13::Hello(Hello { elements: vec![] }));
        assert_eq!(both.negotiate(&bitmap(&[1, 4])), Ok(4));
        assert_eq!(both.negotiate(&bitmap(&[1])), Ok(1));
        assert_eq!(both.negotiate(&plain10), Ok(1));
        assert_eq!(both.negotiate(&plain13), Ok(4));
        assert_eq!(only10.negotiate(&plain13), Ok(1));
        let e = only13.negotiate(&plain10).unwrap_err();
        assert_eq!(
            e,
            "version negotiation failed (we support version 0x04, peer supports version 0x01)"
        );
        let e = only10.negotiate(&bitmap(&[4, 5])).unwrap_err();
        assert!(e.contains("peer supports versions 0x04, 0x05"), "{e}");
    }
}
