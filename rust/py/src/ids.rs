//! Stand-alone functions: task ids, task path strings, uuid6, the step clock, xxh3 hashing.
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyList, PyString, PyTuple};

use warpgraph_core::ids::{self, PathPart};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(task_path_str, m)?)?;
    m.add_function(wrap_pyfunction!(task_id, m)?)?;
    m.add_function(wrap_pyfunction!(uuid6, m)?)?;
    m.add_function(wrap_pyfunction!(utc_now, m)?)?;
    m.add_function(wrap_pyfunction!(xxh3_128_hexdigest, m)?)?;
    Ok(())
}

// ---------------------------------------------------------------- task paths and ids

fn to_path_part(obj: &Bound<'_, PyAny>) -> PyResult<PathPart> {
    if obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<PyList>() {
        let children = obj
            .try_iter()?
            .map(|c| to_path_part(&c?))
            .collect::<PyResult<Vec<_>>>()?;
        Ok(PathPart::Tuple(children))
    } else if obj.is_instance_of::<PyInt>() {
        match obj.extract::<i64>() {
            Ok(i) => Ok(PathPart::Int(i)),
            // beyond 64 bits: let Python format it exactly as `f"{x:010d}"`
            Err(_) => Ok(PathPart::Str(
                obj.call_method1("__format__", ("010d",))?.extract()?,
            )),
        }
    } else {
        Ok(PathPart::Str(obj.str()?.to_str()?.to_owned()))
    }
}

/// LangGraph's `task_path_str`: the sort key of a task path.
#[pyfunction]
fn task_path_str(path: &Bound<'_, PyAny>) -> PyResult<String> {
    Ok(ids::path_part_str(&to_path_part(path)?))
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
