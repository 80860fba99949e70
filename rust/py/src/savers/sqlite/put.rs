//! The SQLite saver's put in one crossing (for `items`): the values
//! serialized (`sql::rows::blob_list`), the metadata as JSON (`sql::rows::metadata_text`),
//! the record encoded against the parent's versions (`sql::codec::encode`), and the rows
//! to insert, which the saver otherwise builds from those three in Python.
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyInt, PyList, PySet, PyString, PyTuple};

use crate::savers::sql::codec::{encode, StateParts};
use crate::savers::sql::rows::{blob_list, metadata_text, Lists};

/// The parts of a `codec.VersionsState` the encoder reads.
fn parts<'py>(state: &Bound<'py, PyAny>) -> PyResult<StateParts<'py>> {
    let py = state.py();
    Ok((
        state
            .getattr(intern!(py, "channel_versions"))?
            .cast_into()?,
        state.getattr(intern!(py, "versions_seen"))?.cast_into()?,
        state.getattr(intern!(py, "inline"))?.cast_into()?,
    ))
}

/// `x`, or the int 0 for None (how the SQLite rows bind a NULL text column: see
/// `_bulk._INSERT_CP`).
fn or_zero<'py>(py: Python<'py>, x: Option<Bound<'py, PyAny>>) -> Bound<'py, PyAny> {
    match x {
        Some(v) if !v.is_none() => v,
        _ => PyInt::new(py, 0).into_any(),
    }
}

/// Where a put goes: its thread, namespace and parent checkpoint id (None: none).
pub(crate) struct Target<'a, 'py> {
    pub thread: &'a Bound<'py, PyString>,
    pub ns: &'a Bound<'py, PyString>,
    pub parent_id: Option<Bound<'py, PyAny>>,
}

/// A put of the SQLite saver with the default serializer, as `SqliteCore.prepare`,
/// `encode_put`, `_bulk.checkpoint_row` and `_bulk.blob_rows_to_store` make it:
/// `(blobs, metadata, run_id, channel_versions, versions_seen, inline, depth, base_id,
/// checkpoint_row, blob_rows)`. `against`: the parent's and base's `VersionsState`s
/// (None: a full record). None when part of it needs the Python path: a value the
/// serializer rejects or a metadata entry left to `json` (that path also names what
/// cannot be serialized), a record that is not all builtins, or a checkpoint naming a
/// version that is neither its parent's nor new (`sql::codec::unsourced`: the general path
/// looks its value up).
#[allow(clippy::too_many_arguments)]
pub(crate) fn put_tuple<'py>(
    target: &Target<'_, 'py>,
    checkpoint: &Bound<'py, PyDict>,
    new_versions: &Bound<'py, PyDict>,
    config: &Bound<'py, PyAny>,
    metadata: &Bound<'py, PyAny>,
    excluded: &Bound<'py, PySet>,
    dumps: &Bound<'py, PyAny>,
    against: (Option<Bound<'py, PyAny>>, Option<Bound<'py, PyAny>>),
    inline_max: usize,
    core_keys: &Bound<'py, PyAny>,
    lists: Option<&Bound<'py, PyAny>>,
) -> PyResult<Option<Bound<'py, PyTuple>>> {
    let (thread, ns, parent_id) = (target.thread, target.ns, target.parent_id.clone());
    let (parent, base) = against;
    let py = checkpoint.py();
    let Some(values) = checkpoint.get_item(intern!(py, "channel_values"))? else {
        return Ok(None);
    };
    let Ok(values) = values.cast_into::<PyDict>() else {
        return Ok(None);
    };
    let lists: Option<Lists<'py>> =
        lists.map(|l| (l.clone(), thread.clone().into_any(), ns.clone().into_any()));
    let blobs = match blob_list(&values, new_versions, dumps, true, lists.as_ref()) {
        Ok(b) => b,
        Err(e) if e.is_instance_of::<PyTypeError>(py) => return Ok(None),
        Err(e) => return Err(e),
    };
    let (Some(meta), run_id) = metadata_text(config, metadata, excluded)? else {
        return Ok(None);
    };
    let parent_parts = parent.as_ref().map(parts).transpose()?;
    let base_parts = base.as_ref().map(parts).transpose()?;
    let enc = encode(
        checkpoint,
        parent_parts.as_ref(),
        base_parts.as_ref(),
        Some(blobs.as_any()),
        inline_max,
        core_keys,
        true,
        Some(new_versions),
    )?;
    if !enc.record.is_exact_instance_of::<PyByteArray>() || !enc.unsourced.is_empty() {
        return Ok(None);
    }
    let depth: i64 = match &parent {
        Some(p) => p.getattr(intern!(py, "depth"))?.extract::<i64>()? + 1,
        None => 0,
    };
    let base_id = match (&base, enc.diffed) {
        (Some(b), true) => Some(b.getattr(intern!(py, "checkpoint_id"))?),
        _ => None,
    };
    let cid = checkpoint
        .get_item(intern!(py, "id"))?
        .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err("id"))?;
    let meta = PyString::new(py, &meta);
    let row = PyTuple::new(
        py,
        [
            thread.clone().into_any(),
            ns.clone().into_any(),
            cid,
            or_zero(py, parent_id),
            or_zero(py, base_id.clone()),
            PyInt::new(py, depth).into_any(),
            or_zero(py, run_id.clone()),
            intern!(py, "msgpack").clone().into_any(),
            enc.record,
            meta.clone().into_any(),
        ],
    )?;
    let rows = PyList::empty(py);
    for b in blobs.iter() {
        let b = b.cast_into::<PyTuple>()?;
        if enc.inline.contains(b.get_item(0)?)? {
            continue;
        }
        let mut cells = vec![thread.clone().into_any(), ns.clone().into_any()];
        cells.extend(b.iter());
        rows.append(PyTuple::new(py, cells)?)?;
    }
    let none = || py.None().into_bound(py);
    Ok(Some(PyTuple::new(
        py,
        [
            blobs.into_any(),
            meta.into_any(),
            run_id.unwrap_or_else(none),
            enc.cv.into_any(),
            enc.vs.into_any(),
            enc.inline.into_any(),
            PyInt::new(py, depth).into_any(),
            base_id.unwrap_or_else(none),
            row.into_any(),
            rows.into_any(),
        ],
    )?))
}
