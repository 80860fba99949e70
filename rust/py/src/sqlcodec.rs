//! The SQL savers' version codec (`warpgraph.checkpoint._sql.codec`): compact saver
//! versions and the skip-delta diff of `channel_versions` / `versions_seen`, done in one
//! crossing per checkpoint instead of a Python loop per entry.
//!
//! Semantics are those of the Python functions they replace: two versions are the same
//! when they are the same object, or of the same type and equal.
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyString};

use warpgraph_core::version::split_saver_version;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compact_version, m)?)?;
    m.add_function(wrap_pyfunction!(share_seen, m)?)?;
    m.add_function(wrap_pyfunction!(versions_delta, m)?)?;
    m.add_function(wrap_pyfunction!(full_versions, m)?)?;
    Ok(())
}

fn same_version(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<bool> {
    if a.is(b) {
        return Ok(true);
    }
    if !a.get_type().is(b.get_type()) {
        return Ok(false);
    }
    if let (Ok(x), Ok(y)) = (a.cast_exact::<PyString>(), b.cast_exact::<PyString>()) {
        return Ok(x.to_str()? == y.to_str()?);
    }
    a.eq(b)
}

fn compact<'py>(v: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(s) = v.cast_exact::<PyString>() {
        if let Some((n, r)) = split_saver_version(s.to_str()?) {
            let py = v.py();
            let n = n.into_pyobject(py)?.into_any();
            let r = PyFloat::new(py, r).into_any();
            return Ok(PyList::new(py, [n, r])?.into_any());
        }
    }
    Ok(v.clone())
}

/// A saver version `"{n:032}.{r:016}"` as `[n, r]` when that formats back to the same
/// string; any other value unchanged.
#[pyfunction]
fn compact_version<'py>(version: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    compact(version)
}

/// `versions_seen` for a new stored state: each node's entry is the parent's (immutable)
/// dict when it holds the same versions, else a fresh copy.
#[pyfunction]
fn share_seen<'py>(
    parent_vs: &Bound<'py, PyDict>,
    vs: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    let py = vs.py();
    let out = PyDict::new(py);
    for (node, seen) in vs.iter() {
        let seen = as_dict(seen)?;
        if let Some(old) = parent_vs.get_item(&node)? {
            if let Ok(old) = old.cast::<PyDict>() {
                if same_entries(old, &seen)? {
                    out.set_item(node, old)?;
                    continue;
                }
            }
        }
        out.set_item(node, seen.copy()?)?;
    }
    Ok(out)
}

/// `obj` itself when it is a dict, else `dict(obj)` (any mapping).
fn as_dict(obj: Bound<'_, PyAny>) -> PyResult<Bound<'_, PyDict>> {
    match obj.cast_into::<PyDict>() {
        Ok(d) => Ok(d),
        Err(e) => {
            let obj = e.into_inner();
            Ok(obj
                .py()
                .get_type::<PyDict>()
                .call1((obj,))?
                .cast_into::<PyDict>()?)
        }
    }
}

fn same_entries(a: &Bound<'_, PyDict>, b: &Bound<'_, PyDict>) -> PyResult<bool> {
    if a.is(b) {
        return Ok(true);
    }
    if a.len() != b.len() {
        return Ok(false);
    }
    for (k, v) in b.iter() {
        match a.get_item(&k)? {
            Some(old) if same_version(&old, &v)? => {}
            _ => return Ok(false),
        }
    }
    Ok(true)
}

type Delta<'py> = (
    Bound<'py, PyDict>,
    Bound<'py, PyList>,
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    Bound<'py, PyList>,
    usize,
);

/// What turns `(base_cv, base_vs)` into `(cv, vs)`, versions compacted:
/// `(set_cv, del_cv, set_vs, del_vs_keys, del_vs, size)`, size counting every entry.
#[pyfunction]
fn versions_delta<'py>(
    base_cv: &Bound<'py, PyDict>,
    base_vs: &Bound<'py, PyDict>,
    cv: &Bound<'py, PyDict>,
    vs: &Bound<'py, PyDict>,
) -> PyResult<Delta<'py>> {
    let py = cv.py();
    let set_cv = PyDict::new(py);
    let del_cv = PyList::empty(py);
    let set_vs = PyDict::new(py);
    let del_vs_keys = PyDict::new(py);
    let del_vs = PyList::empty(py);
    let mut size = 0usize;
    for (k, v) in cv.iter() {
        match base_cv.get_item(&k)? {
            Some(b) if same_version(&b, &v)? => {}
            _ => set_cv.set_item(k, compact(&v)?)?,
        }
    }
    size += set_cv.len();
    if base_cv.len() > cv.len() - set_cv.len() {
        for k in base_cv.keys() {
            if !cv.contains(&k)? {
                del_cv.append(k)?;
            }
        }
        size += del_cv.len();
    }
    for (node, seen) in vs.iter() {
        let seen = seen.cast_into::<PyDict>()?;
        let Some(old) = base_vs.get_item(&node)? else {
            let fresh = PyDict::new(py);
            for (k, v) in seen.iter() {
                fresh.set_item(k, compact(&v)?)?;
            }
            size += fresh.len();
            set_vs.set_item(node, fresh)?;
            continue;
        };
        if old.is(&seen) {
            continue;
        }
        let old = old.cast_into::<PyDict>()?;
        let changed = PyDict::new(py);
        for (k, v) in seen.iter() {
            match old.get_item(&k)? {
                Some(b) if same_version(&b, &v)? => {}
                _ => changed.set_item(k, compact(&v)?)?,
            }
        }
        let n_changed = changed.len();
        if n_changed > 0 {
            size += n_changed;
            set_vs.set_item(&node, changed)?;
        }
        if old.len() > seen.len() - n_changed {
            let gone = PyList::empty(py);
            for k in old.keys() {
                if !seen.contains(&k)? {
                    gone.append(k)?;
                }
            }
            if !gone.is_empty() {
                size += gone.len();
                del_vs_keys.set_item(node, gone)?;
            }
        }
    }
    if base_vs.len() > vs.len() - set_vs.len() {
        for k in base_vs.keys() {
            if !vs.contains(&k)? {
                del_vs.append(k)?;
            }
        }
        size += del_vs.len();
    }
    Ok((set_cv, del_cv, set_vs, del_vs_keys, del_vs, size))
}

/// `(channel_versions, versions_seen)` with every version compacted (fresh dicts).
#[pyfunction]
fn full_versions<'py>(
    cv: &Bound<'py, PyDict>,
    vs: &Bound<'py, PyDict>,
) -> PyResult<(Bound<'py, PyDict>, Bound<'py, PyDict>)> {
    let py = cv.py();
    let c = PyDict::new(py);
    for (k, v) in cv.iter() {
        c.set_item(k, compact(&v)?)?;
    }
    let s = PyDict::new(py);
    for (node, seen) in vs.iter() {
        let inner = PyDict::new(py);
        for (k, v) in seen.cast_into::<PyDict>()?.iter() {
            inner.set_item(k, compact(&v)?)?;
        }
        s.set_item(node, inner)?;
    }
    Ok((c, s))
}
