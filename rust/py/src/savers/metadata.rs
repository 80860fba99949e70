//! `warpgraph.checkpoint.base.get_checkpoint_metadata` natively: every saver calls it once
//! per checkpoint, and in Python it cost more than encoding the metadata.
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyAnyMethods, PyDict, PyFloat, PyInt, PySet, PyString};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(checkpoint_metadata, m)?)?;
    Ok(())
}

/// `value.replace("\0", "")` for a str: the object itself when it is an exact str
/// without NUL (what CPython's `replace` returns then too).
fn strip_nul<'py>(value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(s) = value.cast_exact::<PyString>() {
        // (a str with surrogates has no UTF-8 view: `replace` below handles it)
        if s.to_str().is_ok_and(|t| !t.contains('\0')) {
            return Ok(value.clone());
        }
    }
    let py = value.py();
    value.call_method1(intern!(py, "replace"), ("\0", ""))
}

/// `metadata` plus the scalar entries of `config["metadata"]` and
/// `config["configurable"]` (see `get_checkpoint_metadata`).
#[pyfunction]
pub(crate) fn checkpoint_metadata<'py>(
    config: &Bound<'py, PyAny>,
    metadata: &Bound<'py, PyAny>,
    excluded: &Bound<'py, PySet>,
) -> PyResult<Bound<'py, PyDict>> {
    let py = config.py();
    let out = match metadata.cast::<PyDict>() {
        Ok(d) => d.copy()?,
        Err(_) => py
            .get_type::<PyDict>()
            .call1((metadata,))?
            .cast_into::<PyDict>()?,
    };
    let fixes: Vec<_> = out
        .iter()
        .filter(|(_, v)| v.is_instance_of::<PyString>())
        .filter_map(|(k, v)| match strip_nul(&v) {
            Ok(s) if s.is(&v) => None,
            r => Some(r.map(|s| (k, s))),
        })
        .collect::<PyResult<_>>()?;
    for (k, v) in fixes {
        out.set_item(k, v)?;
    }
    for name in [intern!(py, "metadata"), intern!(py, "configurable")] {
        let extra = match config.cast::<PyDict>() {
            Ok(d) => d.get_item(name)?,
            Err(_) => Some(config.call_method1(intern!(py, "get"), (name,))?),
        };
        let Some(extra) = extra else { continue };
        if !extra.is_truthy()? {
            continue;
        }
        match extra.cast::<PyDict>() {
            Ok(d) => {
                for (key, value) in d.iter() {
                    merge_one(&out, excluded, key, value)?;
                }
            }
            Err(_) => {
                let items = extra
                    .call_method0(intern!(py, "items"))?
                    .try_iter()?
                    .collect::<PyResult<Vec<_>>>()?;
                for item in items {
                    let (key, value): (Bound<'py, PyAny>, Bound<'py, PyAny>) = item.extract()?;
                    merge_one(&out, excluded, key, value)?;
                }
            }
        }
    }
    Ok(out)
}

/// One config entry into the metadata: skipped when the metadata has the key, it is
/// excluded or private (`__`-prefixed); str values (NULs stripped), ints and floats only.
fn merge_one<'py>(
    out: &Bound<'py, PyDict>,
    excluded: &Bound<'py, PySet>,
    key: Bound<'py, PyAny>,
    value: Bound<'py, PyAny>,
) -> PyResult<()> {
    let py = key.py();
    // an exact str key: the cheap private check first (a run's configurable is mostly
    // engine-internal keys); any other key: LangGraph's order (a key the metadata has or
    // that is excluded is skipped before `startswith` is called on it)
    let private = match key.cast_exact::<PyString>().map(|s| s.to_str()) {
        Ok(Ok(s)) => Some(s.starts_with("__")),
        _ => None,
    };
    if private == Some(true) || out.contains(&key)? || excluded.contains(&key)? {
        return Ok(());
    }
    if private.is_none()
        && key
            .call_method1(intern!(py, "startswith"), ("__",))?
            .is_truthy()?
    {
        return Ok(());
    }
    if value.is_instance_of::<PyString>() {
        out.set_item(key, strip_nul(&value)?)?;
    } else if value.is_instance_of::<PyInt>() || value.is_instance_of::<PyFloat>() {
        out.set_item(key, value)?;
    }
    Ok(())
}
