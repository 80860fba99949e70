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
    m.add_function(wrap_pyfunction!(encode_record, m)?)?;
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

/// The parts of a stored checkpoint's versions state the encoder reads:
/// `(channel_versions, versions_seen, inline)`.
type StateParts<'py> = (Bound<'py, PyDict>, Bound<'py, PyDict>, Bound<'py, PyDict>);

/// Values a checkpoint keeps in its record: the parent's small values whose version is
/// unchanged, then each written channel's new value when it is at most `inline_max` bytes
/// (`blobs`: `(channel, version key, type, bytes)` rows of this put).
fn inline_values<'py>(
    cv: &Bound<'py, PyDict>,
    parent: Option<&StateParts<'py>>,
    blobs: &Bound<'py, PyAny>,
    inline_max: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let py = cv.py();
    let inline = PyDict::new(py);
    if let Some((pcv, _, pinline)) = parent {
        for (ch, value) in pinline.iter() {
            let (Some(v), Some(p)) = (cv.get_item(&ch)?, pcv.get_item(&ch)?) else {
                continue;
            };
            if same_version(&v, &p)? {
                inline.set_item(ch, value)?;
            }
        }
    }
    for row in blobs.try_iter()? {
        let row = row?;
        let (ch, vkey, typ, data): (
            Bound<'py, PyAny>,
            Bound<'py, PyAny>,
            Bound<'py, PyAny>,
            Bound<'py, PyAny>,
        ) = row.extract()?;
        let keep = data.len()? <= inline_max
            && match cv.get_item(&ch)? {
                Some(v) => v.str()?.as_any().eq(&vkey)?,
                None => false,
            };
        if keep {
            inline.set_item(ch, (typ, data))?;
        } else if inline.contains(&ch)? {
            inline.del_item(ch)?;
        }
    }
    Ok(inline)
}

fn state_size(
    cv: &Bound<'_, PyDict>,
    vs: &Bound<'_, PyDict>,
    inline: &Bound<'_, PyDict>,
) -> PyResult<usize> {
    let mut n = cv.len() + inline.len();
    for (_, seen) in vs.iter() {
        n += seen.len()?;
    }
    Ok(n)
}

fn inline_lists<'py>(
    py: Python<'py>,
    pairs: impl Iterator<Item = (Bound<'py, PyAny>, Bound<'py, PyAny>)>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (k, v) in pairs {
        out.set_item(
            k,
            PyList::new(py, v.try_iter()?.collect::<PyResult<Vec<_>>>()?)?,
        )?;
    }
    Ok(out)
}

/// The SQL savers' record of a checkpoint (see `codec.encode_checkpoint`):
/// `(channel_versions, versions_seen, inline, diffed, record)`: the state to remember,
/// whether the record is a delta against `base` (else it holds the full versions), and
/// the record dict to serialize. `core_keys`: the checkpoint keys the record stores in its
/// own fields (any other key goes to `record["x"]`).
#[pyfunction]
#[pyo3(signature = (checkpoint, parent, base, blobs, inline_max, core_keys))]
#[allow(clippy::type_complexity)]
fn encode_record<'py>(
    checkpoint: &Bound<'py, PyDict>,
    parent: Option<StateParts<'py>>,
    base: Option<StateParts<'py>>,
    blobs: Option<&Bound<'py, PyAny>>,
    inline_max: usize,
    core_keys: &Bound<'py, PyAny>,
) -> PyResult<(
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    bool,
    Bound<'py, PyDict>,
)> {
    let py = checkpoint.py();
    let get = |k: &str| -> PyResult<Bound<'py, PyAny>> {
        checkpoint
            .get_item(k)?
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(k.to_owned()))
    };
    let cv = as_dict(get("channel_versions")?)?.copy()?;
    let seen = get("versions_seen")?;
    let vs = match &parent {
        Some((_, pvs, _)) => share_seen(pvs, &as_dict(seen)?)?,
        None => {
            let out = PyDict::new(py);
            for (k, v) in as_dict(seen)?.iter() {
                out.set_item(k, as_dict(v)?.copy()?)?;
            }
            out
        }
    };
    let inline = match blobs {
        Some(b) => inline_values(&cv, parent.as_ref(), b, inline_max)?,
        None => PyDict::new(py),
    };
    let record = PyDict::new(py);
    record.set_item("v", get("v")?)?;
    record.set_item("id", get("id")?)?;
    record.set_item("ts", get("ts")?)?;
    if let Some(u) = checkpoint.get_item("updated_channels")? {
        record.set_item("u", u)?;
    }
    let extra = PyDict::new(py);
    for (k, v) in checkpoint.iter() {
        if !core_keys.contains(&k)? {
            extra.set_item(k, v)?;
        }
    }
    if !extra.is_empty() {
        record.set_item("x", extra)?;
    }
    if let Some((bcv, bvs, binline)) = &base {
        let (set_cv, del_cv, set_vs, del_vs_keys, del_vs, size) =
            versions_delta(bcv, bvs, &cv, &vs)?;
        let mut set_i = Vec::new();
        for (k, v) in inline.iter() {
            let same = match binline.get_item(&k)? {
                Some(b) => b.eq(&v)?,
                None => false,
            };
            if !same {
                set_i.push((k, v));
            }
        }
        let mut del_i = Vec::new();
        for k in binline.keys() {
            if !inline.contains(&k)? {
                del_i.push(k);
            }
        }
        let total = size + set_i.len() + del_i.len();
        let full = state_size(&cv, &vs, &inline)?;
        if !(total * 2 >= full && full > 8) {
            record.set_item("c", set_cv)?;
            if !del_cv.is_empty() {
                record.set_item("cd", del_cv)?;
            }
            if !set_vs.is_empty() {
                record.set_item("s", set_vs)?;
            }
            if !del_vs_keys.is_empty() {
                record.set_item("sk", del_vs_keys)?;
            }
            if !del_vs.is_empty() {
                record.set_item("sd", del_vs)?;
            }
            if !set_i.is_empty() {
                record.set_item("i", inline_lists(py, set_i.into_iter())?)?;
            }
            if !del_i.is_empty() {
                record.set_item("ix", PyList::new(py, del_i)?)?;
            }
            return Ok((cv, vs, inline, true, record));
        }
    }
    let (c, s) = full_versions(&cv, &vs)?;
    record.set_item("c", c)?;
    record.set_item("s", s)?;
    if !inline.is_empty() {
        record.set_item("i", inline_lists(py, inline.iter())?)?;
    }
    Ok((cv, vs, inline, false, record))
}
