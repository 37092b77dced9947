//! Sharing equal immutable values: an [`Interner`] hands out one `Arc` for every value
//! equal to one it holds, so a million rules with the same instructions hold one copy.

use std::collections::HashSet;
use std::hash::Hash;
use std::sync::Arc;

/// A set of shared values. Invariant: it holds at most one of each value. A value no one
/// else holds any more (its only `Arc` is the set's) is dropped by a sweep, run when the
/// set has doubled since the last one, so each insert costs amortised O(1) and the set
/// stays within twice the values in use (plus [`Interner::MIN_SWEEP`]).
#[derive(Debug)]
pub struct Interner<T: ?Sized> {
    set: HashSet<Arc<T>>,
    sweep_at: usize,
}

impl<T: ?Sized> Default for Interner<T> {
    fn default() -> Self {
        Interner { set: HashSet::new(), sweep_at: 0 }
    }
}

impl<T: ?Sized> Clone for Interner<T> {
    fn clone(&self) -> Self {
        Interner { set: self.set.clone(), sweep_at: self.sweep_at }
    }
}

impl<T: ?Sized + Hash + Eq> Interner<T> {
    /// The least size at which the set is swept.
    pub const MIN_SWEEP: usize = 1024;

    /// Points `v` at the set's copy of an equal value, adding `v` if none is there.
    pub fn share(&mut self, v: &mut Arc<T>) {
        if let Some(known) = self.set.get(v) {
            if !Arc::ptr_eq(known, v) {
                *v = known.clone();
            }
            return;
        }
        if self.set.len() >= self.sweep_at.max(Self::MIN_SWEEP) {
            self.set.retain(|a| Arc::strong_count(a) > 1);
            self.set.shrink_to_fit();
            self.sweep_at = 2 * self.set.len();
        }
        self.set.insert(v.clone());
    }

    /// The shared copy of `v` (a clone of it added if new).
    pub fn get(&mut self, v: &T) -> Arc<T>
    where
        T: Clone,
    {
        match self.set.get(v) {
            Some(known) => known.clone(),
            None => {
                let mut a = Arc::new(v.clone());
                self.share(&mut a);
                a
            }
        }
    }

    /// How many values the set holds (some perhaps no longer used elsewhere).
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_share_and_unused_ones_are_swept() {
        let mut i: Interner<Vec<u32>> = Interner::default();
        let a = i.get(&vec![1, 2]);
        let b = i.get(&vec![1, 2]);
        assert!(Arc::ptr_eq(&a, &b));
        let mut c = Arc::new(vec![1, 2]);
        i.share(&mut c);
        assert!(Arc::ptr_eq(&a, &c));
        drop((a, b, c));
        let kept: Vec<Arc<Vec<u32>>> = (0..10u32).map(|n| i.get(&vec![n])).collect();
        for n in 100..5000u32 {
            i.get(&vec![n]);
        }
        assert!(i.len() < 2 * Interner::<Vec<u32>>::MIN_SWEEP, "{}", i.len());
        for k in &kept {
            assert!(Arc::ptr_eq(k, &i.get(k)), "a value in use was dropped");
        }
    }
}
