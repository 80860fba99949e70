//! Binding crate: `warpgraph._core`.
use pyo3::prelude::*;

#[pymodule(gil_used = false)]
mod _core {
    use pyo3::prelude::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }

    #[pyfunction]
    fn increment(current: Option<i64>) -> i64 {
        warpgraph_core::version::increment(current)
    }
}
