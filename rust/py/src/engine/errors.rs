//! The single conversion of core errors into Python exceptions.

use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use warpgraph_core::error::CoreError;

use super::channels::Classes;

fn instantiate<'py>(
    py: Python<'py>,
    cls: &Py<PyAny>,
    args: Bound<'py, pyo3::types::PyTuple>,
) -> PyErr {
    match cls.bind(py).call1(args) {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// Maps a core error to the Python exception LangGraph raises; Python errors pass through.
pub fn to_py(py: Python<'_>, cls: &Classes, e: CoreError<PyErr>) -> PyErr {
    match e {
        CoreError::External(e) => e,
        CoreError::InvalidUpdate(m) => match pyo3::types::PyTuple::new(py, [m]) {
            Ok(args) => instantiate(py, &cls.invalid_update_error, args),
            Err(e) => e,
        },
        CoreError::EmptyChannel => instantiate(
            py,
            &cls.empty_channel_error,
            pyo3::types::PyTuple::empty(py),
        ),
        CoreError::VersionType(m) => PyTypeError::new_err(m),
        CoreError::UnknownChannel(c) => PyKeyError::new_err(c),
        CoreError::InvalidArgument(m) => PyValueError::new_err(m),
        CoreError::Id(e) => PyValueError::new_err(e.message),
    }
}
