//! warpgraph-core: the Pregel super-step bookkeeping of warpgraph, free of Python.
//!
//! Channel values are opaque to this crate (generic `V`); the binding crate instantiates the
//! algorithms with Python objects, the tests with plain Rust values.

pub mod apply;
pub mod channel;
pub mod clock;
pub mod digits;
pub mod envelope;
pub mod error;
pub mod ids;
pub mod saver_version;
pub mod sqlite;
pub mod triggers;
pub mod uuid6;
pub mod version;
