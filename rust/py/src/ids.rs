//! Stand-alone functions: task ids, task path strings, uuid6, the step clock, xxh3 hashing.
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyString};

use warpgraph_core::ids;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(task_path_str, m)?)?;
    m.add_function(wrap_pyfunction!(task_id, m)?)?;
    m.add_function(wrap_pyfunction!(uuid6, m)?)?;
    m.add_function(wrap_pyfunction!(utc_now, m)?)?;
    m.add_function(wrap_pyfunction!(xxh3_128_hexdigest, m)?)?;
    Ok(())
}

// ---------------------------------------------------------------- task paths and ids

/// LangGraph's `task_path_str`: the sort key of a task path.
#[pyfunction]
fn task_path_str(path: &Bound<'_, PyAny>) -> PyResult<String> {
    let mut out = String::with_capacity(32);
    crate::engine::write_path_key(path, &mut out)?;
    Ok(out)
}

/// `datetime.now(timezone.utc).isoformat()` (checkpoint timestamps, one per step).
#[pyfunction]
fn utc_now() -> String {
    warpgraph_core::clock::utc_now_iso()
}

/// Task id over the checkpoint id bytes and the concatenated parts (xxh3 if v > 1, else sha1).
#[pyfunction]
#[pyo3(signature = (checkpoint_id, parts, v = 4))]
fn task_id(checkpoint_id: &str, parts: &Bound<'_, PyAny>, v: i64) -> PyResult<String> {
    let ns =
        ids::checkpoint_id_bytes(checkpoint_id).map_err(|e| PyValueError::new_err(e.message))?;
    let mut buf: Vec<u8> = Vec::with_capacity(128);
    for (i, part) in parts.try_iter()?.enumerate() {
        let part = part?;
        if let Ok(s) = part.cast::<PyString>() {
            buf.extend_from_slice(s.to_str()?.as_bytes());
        } else if let Ok(b) = part.cast::<PyBytes>() {
            buf.extend_from_slice(b.as_bytes());
        } else {
            return Err(PyTypeError::new_err(format!(
                "task_id parts must be str or bytes, got {} at index {i}",
                part.get_type().name()?
            )));
        }
    }
    Ok(ids::task_id_from_bytes(&ns, &[buf], v))
}

/// A fresh UUIDv6 checkpoint id (clock_seq = step; None -> random).
#[pyfunction]
#[pyo3(signature = (clock_seq = None))]
fn uuid6(clock_seq: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    let seq = match clock_seq {
        None => None,
        Some(obj) if obj.is_none() => None,
        Some(obj) => {
            if !obj.is_instance_of::<PyInt>() {
                return Err(PyTypeError::new_err(format!(
                    "clock_seq must be an int or None, got {}",
                    obj.get_type().name()?
                )));
            }
            match obj.extract::<i64>() {
                Ok(i) => Some(i),
                Err(_) => Some(obj.bitand(0x3FFF)?.extract::<i64>()?),
            }
        }
    };
    Ok(warpgraph_core::uuid6::uuid6(seq))
}

// ---------------------------------------------------------------- plain hashing

/// xxh3_128 of `data` as 32 lowercase hex digits (interrupt ids, namespace hashes).
#[pyfunction]
fn xxh3_128_hexdigest(data: &[u8]) -> String {
    warpgraph_core::ids::xxh3_128_hex(data)
}
