//! Which CPU runs what in a run: stated in every result, since a software switch's
//! numbers mean little without it.

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The CPUs of one run. Invariant: `dut` is what the DUT's workers (its forwarding
/// threads, or for a kernel DUT the CPUs its softirq work is steered to) are pinned
/// to; empty means unpinned. `sink: None` means the sink is unpinned.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pinning {
    /// The CPU the traffic generator is pinned to.
    pub generator: usize,
    /// The CPUs the DUT's workers are pinned to.
    pub dut: Vec<usize>,
    /// The CPU the sink is pinned to, if any.
    pub sink: Option<usize>,
}

impl Pinning {
    /// Every CPU named: the CPUs the benchmark itself uses.
    pub fn cpus(&self) -> BTreeSet<usize> {
        let mut s: BTreeSet<usize> = self.dut.iter().copied().collect();
        s.insert(self.generator);
        s.extend(self.sink);
        s
    }
}

fn cpu_list(f: &mut fmt::Formatter<'_>, cpus: &[usize]) -> fmt::Result {
    match cpus {
        [] => write!(f, "unpinned"),
        [one] => write!(f, "on CPU {one}"),
        many => {
            write!(f, "on CPUs ")?;
            for (i, c) in many.iter().enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{c}")?;
            }
            Ok(())
        }
    }
}

/// "generator on CPU 0, DUT workers on CPU 1" (", sink on CPU 0" when the sink is
/// pinned).
impl fmt::Display for Pinning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "generator on CPU {}, DUT workers ", self.generator)?;
        cpu_list(f, &self.dut)?;
        if let Some(s) = self.sink {
            write!(f, ", sink on CPU {s}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_cpus() {
        let p = Pinning { generator: 0, dut: vec![1], sink: None };
        assert_eq!(p.to_string(), "generator on CPU 0, DUT workers on CPU 1");
        assert_eq!(p.cpus().into_iter().collect::<Vec<_>>(), vec![0, 1]);
        let p = Pinning { generator: 0, dut: vec![2, 3], sink: Some(1) };
        assert_eq!(p.to_string(), "generator on CPU 0, DUT workers on CPUs 2, 3, sink on CPU 1");
        assert_eq!(p.cpus().into_iter().collect::<Vec<_>>(), vec![0, 1, 2, 3]);
        let p = Pinning { generator: 5, dut: vec![], sink: Some(5) };
        assert_eq!(p.to_string(), "generator on CPU 5, DUT workers unpinned, sink on CPU 5");
        let j = serde_json::to_string(&p).unwrap();
        assert_eq!(serde_json::from_str::<Pinning>(&j).unwrap(), p);
    }
}
