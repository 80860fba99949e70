//! Binding crate: `warpgraph._core`, a private module behind the `warpgraph` Python facade.
use pyo3::prelude::*;

mod engine;
mod functions;
mod metadata;
mod sqlcodec;
mod sqlite_writer;
mod sqlitems;
mod sqlput;
mod sqlrecord;
mod sqlrows;
mod vectors;

#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    functions::register(m)?;
    engine::register(m)?;
    sqlcodec::register(m)?;
    metadata::register(m)?;
    sqlrows::register(m)?;
    sqlitems::register(m)?;
    sqlite_writer::register(m)?;
    vectors::register(m)?;
    Ok(())
}
