//! Binding crate: `warpgraph._core`, a private module behind the `warpgraph` Python facade.
//!
//! One directory per concern: `engine` (the per-run step machine and its graph spec),
//! `envelope` (checkpoint msgpack encoding), `savers` (the checkpoint savers' native parts),
//! plus the stand-alone `ids` functions and the stores' `vectors` ranking.
use pyo3::prelude::*;

mod engine;
mod envelope;
mod ids;
mod savers;
mod vectors;

#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    ids::register(m)?;
    envelope::register(m)?;
    engine::register(m)?;
    savers::register(m)?;
    vectors::register(m)?;
    Ok(())
}
