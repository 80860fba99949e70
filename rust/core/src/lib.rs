//! warpgraph-core: the Pregel super-step bookkeeping of warpgraph, free of Python.
pub mod version;
