//! peregrine's hot path: packet parsing to a flow key, the classifier, the multi-table
//! pipeline, groups, meters, counters, the exact-match cache and the tracer.
//!
//! It receives compiled rules ([`key::FlowMatch`], [`action::Action`]) from `switch`,
//! never wire-format types from `openflow`.

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod action;
pub mod cache;
pub mod classifier;
pub mod compose;
pub mod counters;
pub mod group;
pub mod intern;
pub mod key;
pub mod meter;
pub mod mirror;
pub mod normal;
pub mod packet;
pub mod parse;
pub mod pipeline;
pub mod port;
pub mod prefetch;
pub mod reap;
pub mod rewrite;
pub mod runtime;
pub mod trace;
