//! peregrine's hot path: packet parsing to a flow key, the classifier, the multi-table
//! pipeline, groups, meters, counters, the exact-match cache and the tracer.
//!
//! Not built yet: this crate is the subject of issue 4. It will receive compiled rules
//! from `switch`, never wire-format types from `openflow`.
