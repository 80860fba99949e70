//! The SQL savers' row preparation (`warpgraph.checkpoint._sql.codec`): serialized values
//! of a put's blobs and of a task's writes, and the metadata JSON, each in one crossing.
//!
//! Values go through the saver's serializer (`dumps`, its `dumps_typed`) unless `native`
//! says it is the default one; then exact builtins (None, str, int, float, bool, bytes,
//! and dicts / lists / tuples of them) are written here, to the same `(type, bytes)` its
//! `dumps_typed` gives, and anything else still goes to `dumps`.
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PySet, PyString, PyTuple,
};

use crate::envelope::try_pack;
use crate::savers::metadata::checkpoint_metadata;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(blob_rows, m)?)?;
    m.add_function(wrap_pyfunction!(write_rows, m)?)?;
    m.add_function(wrap_pyfunction!(metadata_json, m)?)?;
    Ok(())
}

/// A new Python bytes-like object holding `data`: a `bytearray` when `mutable` (what the
/// sqlite3 module binds as a blob directly; for `bytes` (and None) it first goes through
/// its adapter protocol, which formats and clears an AttributeError per parameter), else
/// `bytes`.
fn new_blob<'py>(py: Python<'py>, data: &[u8], mutable: bool) -> Bound<'py, PyAny> {
    if mutable {
        PyByteArray::new(py, data).into_any()
    } else {
        PyBytes::new(py, data).into_any()
    }
}

/// `dumps(value)`, written here when `native` and `value` is an exact builtin (then as a
/// `bytearray` when `mutable`: see `new_blob`).
fn dumps_one<'py>(
    value: &Bound<'py, PyAny>,
    dumps: &Bound<'py, PyAny>,
    native: bool,
    mutable: bool,
    buf: &mut Vec<u8>,
) -> PyResult<(Bound<'py, PyString>, Bound<'py, PyAny>)> {
    let py = value.py();
    if native {
        if value.is_none() {
            return Ok((intern!(py, "null").clone(), new_blob(py, b"", mutable)));
        }
        if value.is_exact_instance_of::<PyBytes>() {
            return Ok((intern!(py, "bytes").clone(), value.clone()));
        }
        buf.clear();
        if try_pack(buf, value) {
            return Ok((intern!(py, "msgpack").clone(), new_blob(py, buf, mutable)));
        }
    }
    dumps.call1((value,))?.extract()
}

/// `(channel, str(version), type, bytes)` for each channel of `new_versions` that has a
/// value in `values` (`codec.blob_rows`). `lists`: `(encode, thread, ns)`, whose
/// `encode(thread, ns, channel, version, value)` gives the typed value to store for each
/// exact `list` value (an append delta: `_sql.appends.Tails.dump`).
#[pyfunction]
#[pyo3(signature = (values, new_versions, dumps, native, lists=None))]
fn blob_rows<'py>(
    values: &Bound<'py, PyDict>,
    new_versions: &Bound<'py, PyDict>,
    dumps: &Bound<'py, PyAny>,
    native: bool,
    lists: Option<Lists<'py>>,
) -> PyResult<Bound<'py, PyList>> {
    blob_list(values, new_versions, dumps, native, lists.as_ref())
}

/// How a put's list values are stored: `(encode, thread, ns)` (see `blob_rows`).
pub(crate) type Lists<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyAny>);

/// `blob_rows`, for Rust callers.
pub(crate) fn blob_list<'py>(
    values: &Bound<'py, PyDict>,
    new_versions: &Bound<'py, PyDict>,
    dumps: &Bound<'py, PyAny>,
    native: bool,
    lists: Option<&Lists<'py>>,
) -> PyResult<Bound<'py, PyList>> {
    let py = values.py();
    let mut buf = Vec::new();
    let out = PyList::empty(py);
    for (channel, version) in new_versions.iter() {
        let Some(value) = values.get_item(&channel)? else {
            continue;
        };
        let (typ, data): (Bound<'py, PyString>, Bound<'py, PyAny>) = match lists {
            Some((encode, thread, ns)) if value.is_exact_instance_of::<PyList>() => encode
                .call1((thread, ns, &channel, &version, &value))?
                .extract()?,
            _ => dumps_one(&value, dumps, native, false, &mut buf)?,
        };
        let key = if version.is_exact_instance_of::<PyString>() {
            version
        } else {
            version.str()?.into_any()
        };
        out.append(PyTuple::new(py, [channel, key, typ.into_any(), data])?)?;
    }
    Ok(out)
}

/// The rows of a task's writes: `(regular, special)`, each row
/// `(thread, ns, checkpoint_id, task_id, idx, channel, type, bytes, task_path)`; idx is
/// the write's position, or its `idx_map` value (negative) for special channels, which
/// go to `special` (`codec.write_rows`), which replaces a task's earlier row, only when
/// every write is special: in a mixed list they are regular rows, inserted only if
/// absent (the first one stored wins, as LangGraph's savers have it). Values serialized
/// here come as `bytearray`
/// (only the SQLite saver inserts these rows: see `new_blob`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn write_rows<'py>(
    thread: &Bound<'py, PyAny>,
    ns: &Bound<'py, PyAny>,
    checkpoint_id: &Bound<'py, PyAny>,
    writes: &Bound<'py, PyAny>,
    task_id: &Bound<'py, PyAny>,
    task_path: &Bound<'py, PyAny>,
    idx_map: &Bound<'py, PyDict>,
    dumps: &Bound<'py, PyAny>,
    native: bool,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
    let ids = [thread, ns, checkpoint_id, task_id, task_path];
    write_rows_for(ids, writes, idx_map, dumps, native)
}

/// `write_rows`, for Rust callers: `ids` are (thread, ns, checkpoint_id, task_id,
/// task_path).
pub(crate) fn write_rows_for<'py>(
    ids: [&Bound<'py, PyAny>; 5],
    writes: &Bound<'py, PyAny>,
    idx_map: &Bound<'py, PyDict>,
    dumps: &Bound<'py, PyAny>,
    native: bool,
) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyList>)> {
    let [thread, ns, checkpoint_id, task_id, task_path] = ids;
    let py = writes.py();
    let mut buf = Vec::new();
    let regular = PyList::empty(py);
    let special = PyList::empty(py);
    for (pos, write) in writes.try_iter()?.enumerate() {
        let (channel, value): (Bound<'py, PyAny>, Bound<'py, PyAny>) = write?.extract()?;
        let (typ, data) = dumps_one(&value, dumps, native, true, &mut buf)?;
        let (idx, rows) = match idx_map.get_item(&channel)? {
            Some(i) => (i, &special),
            None => (pos.into_pyobject(py)?.into_any(), &regular),
        };
        rows.append(PyTuple::new(
            py,
            [
                thread.clone(),
                ns.clone(),
                checkpoint_id.clone(),
                task_id.clone(),
                idx,
                channel,
                typ.into_any(),
                data,
                task_path.clone(),
            ],
        )?)?;
    }
    if !regular.is_empty() && !special.is_empty() {
        for row in special.iter() {
            regular.append(row)?;
        }
        return Ok((regular, PyList::empty(py)));
    }
    Ok((regular, special))
}

/// `(json text, run_id)` of `get_checkpoint_metadata(config, metadata)` as the savers
/// store it (`json.dumps(..., ensure_ascii=False, separators=(",", ":"),
/// allow_nan=False)`; run_id as text, or None), or `(None, None)` when a value is not a
/// JSON builtin the writer here handles exactly (the caller then encodes it in Python,
/// which also gives the precise error).
#[pyfunction]
fn metadata_json<'py>(
    config: &Bound<'py, PyAny>,
    metadata: &Bound<'py, PyAny>,
    excluded: &Bound<'py, PySet>,
) -> PyResult<(Option<String>, Option<Bound<'py, PyAny>>)> {
    metadata_text(config, metadata, excluded)
}

/// `metadata_json`, for Rust callers.
pub(crate) fn metadata_text<'py>(
    config: &Bound<'py, PyAny>,
    metadata: &Bound<'py, PyAny>,
    excluded: &Bound<'py, PySet>,
) -> PyResult<(Option<String>, Option<Bound<'py, PyAny>>)> {
    let py = config.py();
    let merged = checkpoint_metadata(config, metadata, excluded)?;
    let mut out = String::with_capacity(128);
    if !json_value(&mut out, merged.as_any(), 0)? {
        return Ok((None, None));
    }
    let run_id = match merged.get_item(intern!(py, "run_id"))? {
        None => None,
        Some(r) if r.is_none() => None,
        Some(r) if r.is_exact_instance_of::<PyString>() => Some(r),
        Some(r) => Some(r.str()?.into_any()),
    };
    Ok((Some(out), run_id))
}

const JSON_MAX_DEPTH: usize = 64;

/// Appends `value` as JSON; false when it is not handled here (see `metadata_json`).
fn json_value(out: &mut String, value: &Bound<'_, PyAny>, depth: usize) -> PyResult<bool> {
    if depth > JSON_MAX_DEPTH {
        return Ok(false);
    }
    if value.is_none() {
        out.push_str("null");
    } else if let Ok(s) = value.cast_exact::<PyString>() {
        let Ok(s) = s.to_str() else { return Ok(false) };
        json_str(out, s);
    } else if value.is_exact_instance_of::<PyBool>() {
        out.push_str(if value.is_truthy()? { "true" } else { "false" });
    } else if value.is_exact_instance_of::<PyInt>() {
        match value.extract::<i64>() {
            Ok(i) => out.push_str(&i.to_string()),
            Err(_) => out.push_str(value.str()?.to_str()?),
        }
    } else if let Ok(f) = value.cast_exact::<PyFloat>() {
        if !f.value().is_finite() {
            return Ok(false); // allow_nan=False: Python raises the error
        }
        out.push_str(f.repr()?.to_str()?);
    } else if let Ok(d) = value.cast_exact::<PyDict>() {
        out.push('{');
        for (i, (k, v)) in d.iter().enumerate() {
            let Ok(k) = k.cast_exact::<PyString>() else {
                return Ok(false);
            };
            let Ok(k) = k.to_str() else { return Ok(false) };
            if i > 0 {
                out.push(',');
            }
            json_str(out, k);
            out.push(':');
            if !json_value(out, &v, depth + 1)? {
                return Ok(false);
            }
        }
        out.push('}');
    } else if value.is_exact_instance_of::<PyList>() || value.is_exact_instance_of::<PyTuple>() {
        out.push('[');
        for (i, item) in value.try_iter()?.enumerate() {
            if i > 0 {
                out.push(',');
            }
            if !json_value(out, &item?, depth + 1)? {
                return Ok(false);
            }
        }
        out.push(']');
    } else {
        return Ok(false);
    }
    Ok(true)
}

/// A JSON string as Python's encoder writes it with `ensure_ascii=False`.
fn json_str(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            out.push_str(&format!("\\u{b:04x}"));
        } else {
            out.push_str(esc);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}
