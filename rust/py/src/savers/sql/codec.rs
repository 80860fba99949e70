//! The SQL savers' version codec (`warpgraph.checkpoint._sql.codec`): compact saver
//! versions and the skip-delta diff of `channel_versions` / `versions_seen`, done in one
//! crossing per checkpoint instead of a Python loop per entry. The record it makes is
//! written by `record`.
//!
//! Semantics are those of the Python functions they replace: two versions are the same
//! when they are the same object, or of the same type and equal.
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyDict, PyFloat, PyList, PyString};

use super::record::{Body, Record};

use std::hash::Hasher;
use warpgraph_core::version::{split_saver_version, FxHasher};

/// The type of a stored append delta (`warpgraph.checkpoint._sql.appends.DELTA_TYPE`).
const DELTA_TYPE: &str = "wg-append";

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
    a.eq(b)
}

/// The entries of `new` that `base` lacks or holds a different value for (`same`), and
/// how many of `new`'s keys `base` has: `base` lost keys only when it has more than that
/// (see `lost_keys`), so its keys are scanned only then.
fn changed_entries<'py>(
    new: &Bound<'py, PyDict>,
    base: &Bound<'py, PyDict>,
    same: impl Fn(&Bound<'py, PyAny>, &Bound<'py, PyAny>) -> PyResult<bool>,
) -> PyResult<(Vec<Pair<'py>>, usize)> {
    if let Some(found) = changed_in_step(new, base, &same)? {
        return Ok(found);
    }
    let mut changed = Vec::new();
    let mut present = 0;
    for (k, v) in new.iter() {
        match base.get_item(&k)? {
            Some(old) => {
                present += 1;
                if !same(&old, &v)? {
                    changed.push((k, v));
                }
            }
            None => changed.push((k, v)),
        }
    }
    Ok((changed, present))
}

/// `changed_entries` without a lookup per key, when `new` starts with `base`'s keys as
/// the very same objects in the same order (the usual case: a checkpoint's dicts and its
/// parent's, both made by one engine, whose key objects are shared). One walk over both
/// in step; None as soon as the keys differ (then the caller looks them up).
fn changed_in_step<'py>(
    new: &Bound<'py, PyDict>,
    base: &Bound<'py, PyDict>,
    same: &impl Fn(&Bound<'py, PyAny>, &Bound<'py, PyAny>) -> PyResult<bool>,
) -> PyResult<Option<(Vec<Pair<'py>>, usize)>> {
    let py = new.py();
    let n_base = base.len();
    if new.len() < n_base {
        return Ok(None);
    }
    let mut changed = Vec::new();
    let mut walk_new = DictWalk::new(new);
    let mut walk_base = DictWalk::new(base);
    let mut seen = 0;
    while let Some((k, v)) = walk_new.next() {
        if seen < n_base {
            let Some((kb, vb)) = walk_base.next() else {
                return Ok(None); // (changed meanwhile)
            };
            if k != kb {
                return Ok(None);
            }
            seen += 1;
            if v == vb {
                continue;
            }
            // SAFETY: borrowed from live dict entries just read; owned from here on
            let (old, key, value) = unsafe {
                (
                    Bound::from_borrowed_ptr(py, vb),
                    Bound::from_borrowed_ptr(py, k),
                    Bound::from_borrowed_ptr(py, v),
                )
            };
            if !same(&old, &value)? {
                changed.push((key, value));
            }
        } else {
            // SAFETY: as above
            changed.push(unsafe {
                (
                    Bound::from_borrowed_ptr(py, k),
                    Bound::from_borrowed_ptr(py, v),
                )
            });
        }
    }
    Ok((seen == n_base).then_some((changed, n_base)))
}

/// A dict's entries as borrowed pointers (`PyDict_Next`). Each pair is valid until Python
/// code runs (which might change the dict): callers compare pointers, or take owned
/// references, before running any.
struct DictWalk {
    dict: *mut pyo3::ffi::PyObject,
    pos: pyo3::ffi::Py_ssize_t,
}

impl DictWalk {
    fn new(d: &Bound<'_, PyDict>) -> DictWalk {
        DictWalk {
            dict: d.as_ptr(),
            pos: 0,
        }
    }

    fn next(&mut self) -> Option<(*mut pyo3::ffi::PyObject, *mut pyo3::ffi::PyObject)> {
        let mut k = std::ptr::null_mut();
        let mut v = std::ptr::null_mut();
        // SAFETY: the dict is alive (the walker's creator holds it) and the GIL is held
        let got = unsafe { pyo3::ffi::PyDict_Next(self.dict, &mut self.pos, &mut k, &mut v) };
        (got != 0).then_some((k, v))
    }
}

/// The keys of `base` that `new` lacks, given how many of `new`'s keys `base` has.
fn lost_keys<'py>(
    base: &Bound<'py, PyDict>,
    new: &Bound<'py, PyDict>,
    present: usize,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let mut lost = Vec::new();
    if base.len() > present {
        for k in base.keys() {
            if !new.contains(&k)? {
                lost.push(k);
            }
        }
    }
    Ok(lost)
}

/// `split_saver_version(s)`, memoised: a version is compacted in every record whose
/// delta holds it (its own checkpoint's, the next one's versions_seen, full records), and
/// checking that `r` formats back exactly costs a shortest float formatting.
pub(crate) fn split_version(s: &str) -> Option<(u64, f64)> {
    const SLOTS: usize = 64;
    type Slot = Option<(Box<str>, Option<(u64, f64)>)>;
    thread_local! {
        static MEMO: std::cell::RefCell<Vec<Slot>> = std::cell::RefCell::new(vec![None; SLOTS]);
    }
    if s.len() > 64 {
        return split_saver_version(s);
    }
    let mut h = FxHasher::default();
    h.write(s.as_bytes());
    let slot = h.finish() as usize % SLOTS;
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if let Some((key, hit)) = &m[slot] {
            if **key == *s {
                return *hit;
            }
        }
        let got = split_saver_version(s);
        m[slot] = Some((s.into(), got));
        got
    })
}

fn compact<'py>(v: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if let Ok(s) = v.cast_exact::<PyString>() {
        if let Some((n, r)) = split_version(s.to_str()?) {
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
    if let Some((changed, _)) = changed_in_step(b, a, &same_version)? {
        return Ok(changed.is_empty());
    }
    for (k, v) in b.iter() {
        match a.get_item(&k)? {
            Some(old) if same_version(&old, &v)? => {}
            _ => return Ok(false),
        }
    }
    Ok(true)
}

pub(crate) type Pair<'py> = (Bound<'py, PyAny>, Bound<'py, PyAny>);

/// What turns a base `(cv, vs)` into another, versions as they are (compacted when
/// written): entries set or deleted in `channel_versions`, per node entries set
/// (`set_vs`; a node new to the base lists all its entries, maybe none) or deleted, and
/// nodes deleted.
pub(crate) struct Delta<'py> {
    pub set_cv: Vec<Pair<'py>>,
    pub del_cv: Vec<Bound<'py, PyAny>>,
    pub set_vs: Vec<(Bound<'py, PyAny>, Vec<Pair<'py>>)>,
    pub del_vs_keys: Vec<(Bound<'py, PyAny>, Vec<Bound<'py, PyAny>>)>,
    pub del_vs: Vec<Bound<'py, PyAny>>,
}

impl Delta<'_> {
    /// Entries the delta holds (the record's size measure).
    fn size(&self) -> usize {
        self.set_cv.len()
            + self.del_cv.len()
            + self.set_vs.iter().map(|(_, e)| e.len()).sum::<usize>()
            + self.del_vs_keys.iter().map(|(_, e)| e.len()).sum::<usize>()
            + self.del_vs.len()
    }
}

fn delta<'py>(
    base_cv: &Bound<'py, PyDict>,
    base_vs: &Bound<'py, PyDict>,
    cv: &Bound<'py, PyDict>,
    vs: &Bound<'py, PyDict>,
) -> PyResult<Delta<'py>> {
    let (set_cv, present) = changed_entries(cv, base_cv, same_version)?;
    let del_cv = lost_keys(base_cv, cv, present)?;
    let mut set_vs = Vec::new();
    let mut del_vs_keys = Vec::new();
    let mut nodes_present = 0;
    for (node, seen) in vs.iter() {
        let seen = seen.cast_into::<PyDict>()?;
        let Some(old) = base_vs.get_item(&node)? else {
            set_vs.push((node, seen.iter().collect()));
            continue;
        };
        nodes_present += 1;
        if old.is(&seen) {
            continue;
        }
        let old = old.cast_into::<PyDict>()?;
        let (changed, present) = changed_entries(&seen, &old, same_version)?;
        if !changed.is_empty() {
            set_vs.push((node.clone(), changed));
        }
        let gone = lost_keys(&old, &seen, present)?;
        if !gone.is_empty() {
            del_vs_keys.push((node, gone));
        }
    }
    Ok(Delta {
        set_cv,
        del_cv,
        set_vs,
        del_vs_keys,
        del_vs: lost_keys(base_vs, vs, nodes_present)?,
    })
}

pub(crate) fn compacted_dict<'py>(
    py: Python<'py>,
    entries: &[Pair<'py>],
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (k, v) in entries {
        out.set_item(k, compact(v)?)?;
    }
    Ok(out)
}

/// What turns `(base_cv, base_vs)` into `(cv, vs)`, versions compacted:
/// `(set_cv, del_cv, set_vs, del_vs_keys, del_vs, size)`, size counting every entry.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn versions_delta<'py>(
    base_cv: &Bound<'py, PyDict>,
    base_vs: &Bound<'py, PyDict>,
    cv: &Bound<'py, PyDict>,
    vs: &Bound<'py, PyDict>,
) -> PyResult<(
    Bound<'py, PyDict>,
    Bound<'py, PyList>,
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    Bound<'py, PyList>,
    usize,
)> {
    let py = cv.py();
    let d = delta(base_cv, base_vs, cv, vs)?;
    let set_vs = PyDict::new(py);
    for (node, entries) in &d.set_vs {
        set_vs.set_item(node, compacted_dict(py, entries)?)?;
    }
    let del_vs_keys = PyDict::new(py);
    for (node, keys) in &d.del_vs_keys {
        del_vs_keys.set_item(node, PyList::new(py, keys)?)?;
    }
    Ok((
        compacted_dict(py, &d.set_cv)?,
        PyList::new(py, &d.del_cv)?,
        set_vs,
        del_vs_keys,
        PyList::new(py, &d.del_vs)?,
        d.size(),
    ))
}

/// `(channel_versions, versions_seen)` with every version compacted (fresh dicts).
#[pyfunction]
pub(crate) fn full_versions<'py>(
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
pub type StateParts<'py> = (Bound<'py, PyDict>, Bound<'py, PyDict>, Bound<'py, PyDict>);

/// Whether the text key `vkey` of a blob row (`str(version)`) names version `v`.
fn names_version(v: &Bound<'_, PyAny>, vkey: &Bound<'_, PyAny>) -> PyResult<bool> {
    if let (Ok(a), Ok(b)) = (v.cast_exact::<PyString>(), vkey.cast_exact::<PyString>()) {
        return Ok(a.is(b) || a.to_str()? == b.to_str()?);
    }
    v.str()?.as_any().eq(vkey)
}

/// The parent's inline values, and the channels among them whose version changed in
/// `cv` (stale: the caller replaces or drops them).
fn inherited<'py>(
    cv: &Bound<'py, PyDict>,
    pcv: &Bound<'py, PyDict>,
    pinline: &Bound<'py, PyDict>,
    changed: &(Vec<Pair<'py>>, usize),
) -> PyResult<(Bound<'py, PyDict>, Vec<Bound<'py, PyAny>>)> {
    // `changed`: one pass over cv found the changed channels; when every parent channel
    // is still there (the usual case), the result is the parent's copy minus those
    let (changed, present) = changed;
    let inline = pinline.copy()?;
    if *present == pcv.len() {
        let mut stale = Vec::new();
        for (ch, _) in changed {
            if inline.contains(ch)? {
                stale.push(ch.clone());
            }
        }
        return Ok((inline, stale));
    }
    inline.clear();
    for (ch, value) in pinline.iter() {
        let (Some(v), Some(p)) = (cv.get_item(&ch)?, pcv.get_item(&ch)?) else {
            continue;
        };
        if same_version(&v, &p)? {
            inline.set_item(ch, value)?;
        }
    }
    Ok((inline, Vec::new()))
}

/// Values a checkpoint keeps in its record: the parent's small values whose version is
/// unchanged, then each written channel's new value when it is at most `inline_max` bytes
/// (`blobs`: `(channel, version key, type, bytes)` rows of this put). A new value takes
/// its channel's place in the parent's order, so the dicts of a run's checkpoints keep
/// one key order (which `changed_in_step` relies on).
fn inline_values<'py>(
    cv: &Bound<'py, PyDict>,
    parent: Option<(&StateParts<'py>, &(Vec<Pair<'py>>, usize))>,
    blobs: &Bound<'py, PyAny>,
    inline_max: usize,
) -> PyResult<Bound<'py, PyDict>> {
    let py = cv.py();
    let (inline, stale) = match parent {
        Some(((pcv, _, pinline), changed)) if !pinline.is_empty() => {
            inherited(cv, pcv, pinline, changed)?
        }
        _ => (PyDict::new(py), Vec::new()),
    };
    let mut renewed: Vec<Bound<'py, PyAny>> = Vec::new();
    for row in blobs.try_iter()? {
        let row = row?;
        let (ch, vkey, typ, data): (
            Bound<'py, PyAny>,
            Bound<'py, PyAny>,
            Bound<'py, PyAny>,
            Bound<'py, PyAny>,
        ) = row.extract()?;
        // (an append delta is never inline: a later delta reads its blob row)
        let keep = data.len()? <= inline_max
            && !typ.eq(DELTA_TYPE)?
            && match cv.get_item(&ch)? {
                Some(v) => names_version(&v, &vkey)?,
                None => false,
            };
        if keep {
            inline.set_item(&ch, (typ, data))?;
            if !stale.is_empty() {
                renewed.push(ch);
            }
        } else if inline.contains(&ch)? {
            inline.del_item(ch)?;
        }
    }
    'stale: for ch in stale {
        for r in &renewed {
            if r.is(&ch) || r.eq(&ch)? {
                continue 'stale;
            }
        }
        if inline.contains(&ch)? {
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

/// The SQL savers' record of a checkpoint (see `codec.encode_checkpoint`):
/// `(channel_versions, versions_seen, inline, diffed, record, unsourced)`: the state to
/// remember, whether the record is a delta against `base` (else it holds the full versions),
/// the record: a dict to serialize, or (`as_bytes`, when every value in it is an exact
/// builtin) the msgpack bytes ormsgpack would make of that dict, as a `bytearray` (the
/// sqlite3 module binds it without its adapter protocol). `core_keys`: the
/// checkpoint keys the record stores in its own fields (any other key goes to
/// `record["x"]`). With `new_versions` (the put's), also the channels whose version is neither the
/// parent's nor a new one (`unsourced`, else an empty list): their values were stored by
/// an earlier put, which the caller looks up (see `SqliteCore.encode_put`).
#[pyfunction]
#[pyo3(signature = (checkpoint, parent, base, blobs, inline_max, core_keys, as_bytes=false, new_versions=None))]
#[allow(clippy::type_complexity, clippy::too_many_arguments)]
fn encode_record<'py>(
    checkpoint: &Bound<'py, PyDict>,
    parent: Option<StateParts<'py>>,
    base: Option<StateParts<'py>>,
    blobs: Option<&Bound<'py, PyAny>>,
    inline_max: usize,
    core_keys: &Bound<'py, PyAny>,
    as_bytes: bool,
    new_versions: Option<Bound<'py, PyDict>>,
) -> PyResult<(
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    Bound<'py, PyDict>,
    bool,
    Bound<'py, PyAny>,
    Bound<'py, PyList>,
)> {
    let e = encode(
        checkpoint,
        parent.as_ref(),
        base.as_ref(),
        blobs,
        inline_max,
        core_keys,
        as_bytes,
        new_versions.as_ref(),
    )?;
    let unsourced = PyList::new(checkpoint.py(), e.unsourced)?;
    Ok((e.cv, e.vs, e.inline, e.diffed, e.record, unsourced))
}

/// The channels of `cv` whose version is neither the parent's nor the put's new one
/// (`new_versions`): a checkpoint that is not its parent's versions plus `new_versions`
/// (a copy, a fork saved under another parent). Their values were stored by an earlier
/// put of the thread, maybe only inline in its record. The usual put (the loop's) has
/// none: its changed channels, found in one walk over `cv` and the parent's in step,
/// are all new.
fn unsourced<'py>(
    changed: &[Pair<'py>],
    new_versions: &Bound<'py, PyDict>,
) -> PyResult<Vec<Bound<'py, PyAny>>> {
    let mut out = Vec::new();
    for (ch, v) in changed {
        match new_versions.get_item(ch)? {
            Some(n) if same_version(&n, v)? => {}
            _ => out.push(ch.clone()),
        }
    }
    Ok(out)
}

/// What `encode` makes of a checkpoint (see `encode_record`).
pub struct Encoded<'py> {
    pub cv: Bound<'py, PyDict>,
    pub vs: Bound<'py, PyDict>,
    pub inline: Bound<'py, PyDict>,
    pub diffed: bool,
    /// A `bytearray` (msgpack) or a dict to serialize.
    pub record: Bound<'py, PyAny>,
    /// With `new_versions`: the channels whose version is neither the parent's nor new
    /// (`unsourced`).
    pub unsourced: Vec<Bound<'py, PyAny>>,
}

/// `encode_record`, for Rust callers.
#[allow(clippy::too_many_arguments)] // (the arguments of `encode_record`, one to one)
pub fn encode<'py>(
    checkpoint: &Bound<'py, PyDict>,
    parent: Option<&StateParts<'py>>,
    base: Option<&StateParts<'py>>,
    blobs: Option<&Bound<'py, PyAny>>,
    inline_max: usize,
    core_keys: &Bound<'py, PyAny>,
    as_bytes: bool,
    new_versions: Option<&Bound<'py, PyDict>>,
) -> PyResult<Encoded<'py>> {
    let py = checkpoint.py();
    let get = |k: &Bound<'py, PyString>| -> PyResult<Bound<'py, PyAny>> {
        checkpoint
            .get_item(k)?
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(k.clone().unbind()))
    };
    let cv = as_dict(get(intern!(py, "channel_versions"))?)?.copy()?;
    let seen = get(intern!(py, "versions_seen"))?;
    let vs = match parent {
        Some((_, pvs, _)) => share_seen(pvs, &as_dict(seen)?)?,
        None => {
            let out = PyDict::new(py);
            for (k, v) in as_dict(seen)?.iter() {
                out.set_item(k, as_dict(v)?.copy()?)?;
            }
            out
        }
    };
    // the channels whose version changed from the parent's, found in one walk over both
    // (in step: see `changed_in_step`) when the inline values or `new_versions` need them
    let wants_changed =
        |p: &StateParts<'py>| new_versions.is_some() || (blobs.is_some() && !p.2.is_empty());
    let changed = match parent {
        Some(p) if wants_changed(p) => Some(changed_entries(&cv, &p.0, same_version)?),
        _ => None,
    };
    let unsourced = match (new_versions, &changed) {
        (Some(nv), Some((ch, _))) => unsourced(ch, nv)?,
        (Some(nv), None) => unsourced(&cv.iter().collect::<Vec<_>>(), nv)?,
        (None, _) => Vec::new(),
    };
    let inline = match blobs {
        Some(b) => inline_values(&cv, parent.zip(changed.as_ref()), b, inline_max)?,
        None => PyDict::new(py),
    };
    let mut head = vec![
        ("v", get(intern!(py, "v"))?),
        ("id", get(intern!(py, "id"))?),
        ("ts", get(intern!(py, "ts"))?),
    ];
    if let Some(u) = checkpoint.get_item(intern!(py, "updated_channels"))? {
        head.push(("u", u));
    }
    let extra = PyDict::new(py);
    for (k, v) in checkpoint.iter() {
        if !core_keys.contains(&k)? {
            extra.set_item(k, v)?;
        }
    }
    if !extra.is_empty() {
        head.push(("x", extra.into_any()));
    }
    let mut body = None;
    if let Some((bcv, bvs, binline)) = base {
        let d = delta(bcv, bvs, &cv, &vs)?;
        let (set_i, present) = changed_entries(&inline, binline, |b, v| Ok(b.is(v) || b.eq(v)?))?;
        let del_i = lost_keys(binline, &inline, present)?;
        let total = d.size() + set_i.len() + del_i.len();
        let full = state_size(&cv, &vs, &inline)?;
        if !(total * 2 >= full && full > 8) {
            body = Some(Body::Delta(d, set_i, del_i));
        }
    }
    let diffed = body.is_some();
    let record = Record {
        head,
        body: body.unwrap_or_else(|| Body::Full((cv.clone(), vs.clone(), inline.clone()))),
    };
    let out = match as_bytes.then(|| record.to_bytes()).flatten() {
        Some(bytes) => PyByteArray::new(py, &bytes).into_any(),
        None => record.to_dict(py)?.into_any(),
    };
    Ok(Encoded {
        cv,
        vs,
        inline,
        diffed,
        record: out,
        unsourced,
    })
}
