//! The reference classifier: every rule in a list, every lookup a full scan. Obviously
//! correct, used as the model the fast classifiers are tested against. Unlike the fast
//! classifiers it keeps every rule's match as given (masked), so [`LinearClassifier::find`]
//! can say which match won.

use super::{better, Classify};
use crate::key::{FlowKey, FlowMatch};

/// A rule; `m.key` is masked by `m.mask` (insert and remove mask the given key first).
struct Entry<T> {
    m: FlowMatch,
    priority: u16,
    seq: u64,
    value: T,
}

/// A linear-scan classifier.
pub struct LinearClassifier<T> {
    rules: Vec<Entry<T>>,
    next_seq: u64,
}

impl<T> Default for LinearClassifier<T> {
    fn default() -> Self {
        LinearClassifier { rules: Vec::new(), next_seq: 0 }
    }
}

impl<T> LinearClassifier<T> {
    pub fn new() -> Self {
        Self::default()
    }

    /// All rules with their priorities, in insertion order (matches by value, as
    /// [`TupleSpace::iter`](super::TupleSpace::iter) gives them).
    pub fn iter(&self) -> impl Iterator<Item = (FlowMatch, u16, &T)> {
        self.rules.iter().map(|e| (e.m, e.priority, &e.value))
    }

    /// The best matching rule for `key` with its match (what
    /// [`Classify::lookup`] returns, plus the match).
    pub fn find(&self, key: &FlowKey) -> Option<(&FlowMatch, u16, &T)> {
        let mut best: Option<&Entry<T>> = None;
        for e in &self.rules {
            if e.m.matches(key) && best.is_none_or(|b| better(e.priority, e.seq, b.priority, b.seq))
            {
                best = Some(e);
            }
        }
        best.map(|e| (&e.m, e.priority, &e.value))
    }

    fn normalized(m: &FlowMatch) -> FlowMatch {
        FlowMatch { key: m.key.masked(&m.mask), mask: m.mask }
    }
}

impl<T> Classify<T> for LinearClassifier<T> {
    fn insert(&mut self, m: FlowMatch, priority: u16, value: T) -> Option<T> {
        let m = Self::normalized(&m);
        if let Some(e) = self.rules.iter_mut().find(|e| e.priority == priority && e.m == m) {
            return Some(std::mem::replace(&mut e.value, value));
        }
        self.rules.push(Entry { m, priority, seq: self.next_seq, value });
        self.next_seq += 1;
        None
    }

    fn remove(&mut self, m: &FlowMatch, priority: u16) -> Option<T> {
        let m = &Self::normalized(m);
        let i = self.rules.iter().position(|e| e.priority == priority && e.m == *m)?;
        Some(self.rules.remove(i).value)
    }

    fn get(&self, m: &FlowMatch, priority: u16) -> Option<&T> {
        let m = &Self::normalized(m);
        self.rules.iter().find(|e| e.priority == priority && e.m == *m).map(|e| &e.value)
    }

    fn rules(&self) -> Box<dyn Iterator<Item = (FlowMatch, u16, &T)> + '_> {
        Box::new(self.iter())
    }

    fn lookup(&self, key: &FlowKey) -> Option<(u16, &T)> {
        self.find(key).map(|(_, p, v)| (p, v))
    }

    fn len(&self) -> usize {
        self.rules.len()
    }

    /// The masks of the rule found and of every rule that could have beaten it (any
    /// rule of a higher priority, or of the same priority inserted earlier): a key equal
    /// under their union is matched or not by each of them alike.
    fn consulted(&self, key: &FlowKey) -> FlowKey {
        let best = self.rules.iter().filter(|e| e.m.matches(key)).fold(
            None::<&Entry<T>>,
            |b, e| match b {
                Some(b) if !better(e.priority, e.seq, b.priority, b.seq) => Some(b),
                _ => Some(e),
            },
        );
        let mut mask = FlowKey::ZERO;
        for e in &self.rules {
            let may_beat = best
                .is_none_or(|b| std::ptr::eq(b, e) || better(e.priority, e.seq, b.priority, b.seq));
            if may_beat {
                mask = mask.union(&e.m.mask);
            }
        }
        mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Field;

    #[test]
    fn priority_then_insertion_order() {
        let mut c = LinearClassifier::new();
        let any = FlowMatch::ANY;
        let ip = FlowMatch::ANY.exact(Field::EthType, 0x0800);
        let ip2 = FlowMatch::ANY.exact(Field::IpProto, 6);
        assert_eq!(c.insert(any, 0, "miss"), None);
        assert_eq!(c.insert(ip, 10, "ip"), None);
        assert_eq!(c.insert(ip2, 10, "tcp"), None);
        let mut k = FlowKey::ZERO;
        assert_eq!(c.lookup(&k).map(|r| *r.1), Some("miss"));
        k.set(Field::EthType, 0x0800);
        k.set(Field::IpProto, 6);
        assert_eq!(c.lookup(&k).map(|r| *r.1), Some("ip"));
        assert_eq!(c.insert(ip, 10, "ip-again"), Some("ip"));
        assert_eq!(c.lookup(&k).map(|r| *r.1), Some("ip-again"));
        assert_eq!(c.remove(&ip, 10), Some("ip-again"));
        assert_eq!(c.lookup(&k).map(|r| *r.1), Some("tcp"));
        assert_eq!(c.len(), 2);
        assert_eq!(c.find(&k).map(|r| (*r.0, r.1)), Some((ip2, 10)));
    }

    #[test]
    fn key_bits_outside_the_mask_are_ignored() {
        let mut c = LinearClassifier::new();
        let mut m = FlowMatch::ANY.exact(Field::EthType, 0x0800);
        m.key.set(Field::IpProto, 6);
        assert_eq!(c.insert(m, 1, "ip"), None);
        let mut k = FlowKey::ZERO;
        k.set(Field::EthType, 0x0800);
        assert_eq!(c.lookup(&k), Some((1, &"ip")));
        let clean = FlowMatch::ANY.exact(Field::EthType, 0x0800);
        assert_eq!(c.iter().next().map(|r| r.0), Some(clean));
        assert_eq!(c.remove(&clean, 1), Some("ip"));
    }
}
