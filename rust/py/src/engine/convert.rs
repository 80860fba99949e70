//! Conversions between Python objects and core values: versions, version maps, task paths.

use std::collections::VecDeque;
use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::iter::{BoundListIterator, BoundTupleIterator};
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use warpgraph_core::apply::Run;
use warpgraph_core::error::CoreError;
use warpgraph_core::ids::{write_path, Element, PathElement};
use warpgraph_core::version::{null_version, py_gt, FastMap, OrdMap, Version, VersionMap};

use crate::envelope::sections::{self as env, Entry, SharedSections};

use super::channels::V;
use super::graphspec::SpecInner;

/// A Python int, float or str as a version.
pub fn version_from_py(v: &Bound<'_, PyAny>) -> PyResult<Version> {
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Version::Str(Arc::from(s.to_str()?)));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(Version::Int(v.extract()?));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(Version::Float(v.extract()?));
    }
    Err(PyTypeError::new_err(format!(
        "channel versions must be int, float or str, got {}: {}",
        v.get_type().name()?,
        v.repr()?
    )))
}

/// A version as a new Python object.
pub fn version_to_py(py: Python<'_>, v: &Version) -> PyResult<Py<PyAny>> {
    Ok(match v {
        Version::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Version::Float(f) => PyFloat::new(py, *f).into_any().unbind(),
        Version::Str(s) => PyString::new(py, s).into_any().unbind(),
    })
}

/// Whether two versions are the same value (strings: the same shared allocation).
fn same(a: &Version, b: &Version) -> bool {
    match (a, b) {
        (Version::Int(x), Version::Int(y)) => x == y,
        (Version::Float(x), Version::Float(y)) => x.to_bits() == y.to_bits(),
        (Version::Str(x), Version::Str(y)) => Arc::ptr_eq(x, y),
        _ => false,
    }
}

/// A dict key: the graph's interned channel or node name when known.
pub fn key_obj<'py>(py: Python<'py>, spec: &SpecInner, k: &str) -> Bound<'py, PyString> {
    if let Some(&c) = spec.graph.index.get(k) {
        return spec.chan_names[c].bind(py).clone();
    }
    if let Some(&n) = spec.graph.topology.node_index.get(k) {
        return spec.node_names[n].bind(py).clone();
    }
    PyString::new(py, k)
}

/// Python mirrors of `channel_versions` and `versions_seen`, kept in sync incrementally from
/// the run's change logs, so handing out a checkpoint costs a dict copy, not a rebuild.
///
/// The mirror dicts themselves are never handed out; `versions_seen` inner dicts are (shared
/// between checkpoints) and are therefore replaced, never mutated, when a node's entry changes.
/// It also keeps both mirrors' msgpack encoding, slot by slot (re-encoding only changed
/// slots), which `pack_checkpoint_envelope` copies for the checkpoints made from them (see
/// `envelope::sections`).
#[derive(Default)]
pub struct Mirror {
    cv: Option<Py<PyDict>>,
    cv_pos: usize,
    /// Per versions slot: the key object and the current (version, Python object).
    keys: Vec<Py<PyString>>,
    objs: Vec<(Version, Py<PyAny>)>,
    /// The last version converted (one next version is shared by all channels of a step).
    last: Option<(Version, Py<PyAny>)>,
    vs: Option<Py<PyDict>>,
    vs_pos: usize,
    /// `channel_versions` dicts handed out by create_checkpoint: (dict, log position, len).
    snaps: VecDeque<(Py<PyDict>, usize, usize)>,
    /// Per versions_seen slot: the key object in the mirror dict.
    vs_keys: Vec<Py<PyString>>,
    /// The envelope encodings of both mirrors, slot by slot.
    env: SharedSections,
    /// A reused buffer for one entry's encoding.
    enc: Vec<u8>,
    /// A reused buffer for the changed `versions_seen` slots.
    vs_changed: Vec<usize>,
}

const SNAPS: usize = 4;
const LOG_SLACK: usize = 1024;

impl Mirror {
    fn obj(&mut self, py: Python<'_>, v: &Version) -> PyResult<Py<PyAny>> {
        if let Some((lv, lo)) = &self.last {
            if same(lv, v) {
                return Ok(lo.clone_ref(py));
            }
        }
        let o = version_to_py(py, v)?;
        self.last = Some((v.clone(), o.clone_ref(py)));
        Ok(o)
    }

    /// A seen version of channel `name`: the channel's mirrored object when it is the same.
    /// (`chan`: the channel of that name, if any.)
    fn seen_obj(
        &mut self,
        py: Python<'_>,
        run: &Run<V>,
        chan: Option<usize>,
        v: &Version,
    ) -> PyResult<Py<PyAny>> {
        let slot = chan.and_then(|c| run.channel_slot(c));
        if let Some((ov, oo)) = slot.and_then(|s| self.objs.get(s)) {
            if same(ov, v) {
                return Ok(oo.clone_ref(py));
            }
        }
        self.obj(py, v)
    }

    fn set_slot(
        &mut self,
        py: Python<'_>,
        d: &Bound<'_, PyDict>,
        versions: &VersionMap,
        spec: &SpecInner,
        slot: usize,
    ) -> PyResult<()> {
        while self.objs.len() < slot {
            let s = self.objs.len();
            self.set_slot(py, d, versions, spec, s)?;
        }
        let v = versions.at(slot);
        if let Some((ov, _)) = self.objs.get(slot) {
            if same(ov, v) {
                return Ok(());
            }
        }
        let o = self.obj(py, v)?;
        if slot == self.objs.len() {
            let key = key_obj(py, spec, versions.key_at(slot));
            d.set_item(&key, &o)?;
            let mut enc = std::mem::take(&mut self.enc);
            let e = Entry::version(&key, o.bind(py), &mut enc);
            self.set_env(false, slot, e, &enc);
            self.enc = enc;
            self.keys.push(key.unbind());
            self.objs.push((v.clone(), o));
        } else {
            let key = self.keys[slot].bind(py);
            d.set_item(key, &o)?;
            let mut enc = std::mem::take(&mut self.enc);
            let e = Entry::version(key, o.bind(py), &mut enc);
            self.set_env(false, slot, e, &enc);
            self.enc = enc;
            self.objs[slot] = (v.clone(), o);
        }
        Ok(())
    }

    /// The up-to-date `channel_versions` mirror (never hand it out: copy it).
    pub fn versions<'py>(
        &mut self,
        py: Python<'py>,
        run: &Run<V>,
        spec: &SpecInner,
    ) -> PyResult<Bound<'py, PyDict>> {
        let versions = run.versions();
        let d = match (&self.cv, run.version_log.since(self.cv_pos)) {
            (Some(d), Some(changed)) => {
                let d = d.bind(py).clone();
                for &slot in changed {
                    self.set_slot(py, &d, versions, spec, slot)?;
                }
                d
            }
            _ => {
                self.keys.clear();
                self.objs.clear();
                self.keys.reserve(versions.len());
                self.objs.reserve(versions.len());
                self.clear_env(false, versions.len());
                let d = PyDict::new(py);
                for slot in 0..versions.len() {
                    self.set_slot(py, &d, versions, spec, slot)?;
                }
                self.cv = Some(d.clone().unbind());
                d
            }
        };
        self.cv_pos = run.version_log.pos();
        Ok(d)
    }

    fn inner_dict<'py>(
        &mut self,
        py: Python<'py>,
        run: &Run<V>,
        spec: &SpecInner,
        m: &VersionMap,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in m.iter() {
            // (one name lookup for both the key and the shared version object)
            let chan = spec.graph.index.get(k).copied();
            let o = self.seen_obj(py, run, chan, v)?;
            match chan {
                Some(c) => d.set_item(spec.chan_names[c].bind(py), o)?,
                None => d.set_item(key_obj(py, spec, k), o)?,
            }
        }
        Ok(d)
    }

    /// The up-to-date `versions_seen` mirror (never hand it out: copy it). Sync it before
    /// [`Mirror::versions`] so seen pre-bump versions share the mirrored objects.
    pub fn seen<'py>(
        &mut self,
        py: Python<'py>,
        run: &Run<V>,
        spec: &SpecInner,
    ) -> PyResult<Bound<'py, PyDict>> {
        let seen = run.seen();
        let mut slots = std::mem::take(&mut self.vs_changed);
        let changed = run.seen_log.since(self.vs_pos).map(|c| {
            slots.clear();
            slots.extend_from_slice(c);
            if slots.len() > 1 {
                slots.sort_unstable();
                slots.dedup();
            }
            slots
        });
        // Slots past the mirrored ones must be exactly the new ones (appended in order).
        let known = self.vs_keys.len();
        let changed = changed.filter(|s| {
            known <= seen.len()
                && s.iter().all(|&x| x < seen.len())
                && s.iter().filter(|&&x| x >= known).count() == seen.len() - known
        });
        let d = match (&self.vs, changed) {
            (Some(d), Some(slots)) => {
                let d = d.bind(py).clone();
                for &slot in &slots {
                    self.set_seen_slot(py, &d, run, spec, slot)?;
                }
                self.vs_changed = slots; // (kept for the next call)
                d
            }
            _ => {
                let d = PyDict::new(py);
                self.vs_keys.clear();
                self.vs_keys.reserve(seen.len());
                self.clear_env(true, seen.len());
                for slot in 0..seen.len() {
                    self.set_seen_slot(py, &d, run, spec, slot)?;
                }
                self.vs = Some(d.clone().unbind());
                d
            }
        };
        self.vs_pos = run.seen_log.pos();
        Ok(d)
    }

    /// Sets `versions_seen` slot `slot` (at most one past the last) of mirror dict `d`.
    fn set_seen_slot(
        &mut self,
        py: Python<'_>,
        d: &Bound<'_, PyDict>,
        run: &Run<V>,
        spec: &SpecInner,
        slot: usize,
    ) -> PyResult<()> {
        let seen = run.seen();
        let inner = self.inner_dict(py, run, spec, seen.at(slot))?;
        if slot >= self.vs_keys.len() {
            self.vs_keys
                .push(key_obj(py, spec, seen.key_at(slot)).unbind());
        }
        let key = self.vs_keys[slot].bind(py);
        d.set_item(key, &inner)?;
        let mut enc = std::mem::take(&mut self.enc);
        let e = Entry::seen(key, &inner, &mut enc);
        self.set_env(true, slot, e, &enc);
        self.enc = enc;
        Ok(())
    }

    fn set_env(&self, seen: bool, slot: usize, e: Option<Entry>, bytes: &[u8]) {
        let mut s = env::lock(&self.env);
        s.gen += 1;
        let _ = if seen { &mut s.vs } else { &mut s.cv }.set(slot, e, bytes);
    }

    /// Empties a section, making room for the `n` slots about to be set.
    fn clear_env(&self, seen: bool, n: usize) {
        let mut s = env::lock(&self.env);
        s.gen += 1;
        let sec = if seen { &mut s.vs } else { &mut s.cv };
        sec.clear();
        sec.reserve(n, 64);
    }

    /// The encoded envelope sections of the mirrors.
    pub fn sections(&self) -> &SharedSections {
        &self.env
    }

    /// Registers the envelope entries of a checkpoint's `channel_versions` and
    /// `versions_seen` (copies of the synced mirrors) for `pack_checkpoint_envelope`.
    pub fn register_envelope(&self, versions: &Bound<'_, PyDict>, seen: &Bound<'_, PyDict>) {
        let (gen, cv_ok, vs_ok) = {
            let s = env::lock(&self.env);
            (
                s.gen,
                s.cv.len() == versions.len(),
                s.vs.len() == seen.len(),
            )
        };
        if cv_ok {
            env::register(versions, &self.env, gen, false);
        }
        if vs_ok {
            env::register(seen, &self.env, gen, true);
        }
    }

    /// Remembers a `channel_versions` dict handed out in a checkpoint.
    pub fn remember(&mut self, d: &Bound<'_, PyDict>, run: &Run<V>) {
        self.snaps
            .push_back((d.clone().unbind(), run.version_log.pos(), d.len()));
        if self.snaps.len() > SNAPS {
            self.snaps.pop_front();
        }
    }

    /// `get_new_channel_versions(previous, current)`: O(changes) when `previous` is a
    /// checkpoint's `channel_versions` this engine handed out, else one pass with identity
    /// shortcuts.
    pub fn new_versions<'py>(
        &mut self,
        py: Python<'py>,
        run: &Run<V>,
        spec: &SpecInner,
        previous: &Bound<'py, PyDict>,
    ) -> Result<Bound<'py, PyDict>, CoreError<PyErr>> {
        let cur = self.versions(py, run, spec).map_err(CoreError::External)?;
        if previous.is_empty() {
            return cur.copy().map_err(CoreError::External);
        }
        let versions = run.versions();
        let null = null_version(versions);
        let fast = self
            .snaps
            .iter()
            .find(|(d, _, len)| d.bind(py).is(previous) && *len == previous.len())
            .filter(|_| run.versions_homogeneous())
            .and_then(|(_, pos, _)| run.version_log.since(*pos));
        let slots: Vec<usize> = match fast {
            Some(changed) => {
                let mut s = changed.to_vec();
                s.sort_unstable();
                s.dedup();
                s
            }
            None => (0..versions.len()).collect(),
        };
        let out = PyDict::new(py);
        for slot in slots {
            let key = self.keys[slot].bind(py);
            let (v, obj) = &self.objs[slot];
            let pv = previous.get_item(key).map_err(CoreError::External)?;
            let old = match &pv {
                Some(p) if p.is(obj) => continue,
                Some(p) => Some(version_from_py(p).map_err(CoreError::External)?),
                None => null.clone(),
            };
            if py_gt(Some(v), old.as_ref())? {
                out.set_item(key, obj).map_err(CoreError::External)?;
            }
        }
        Ok(out)
    }

    /// Bounds the change logs: readers that fall too far behind rebuild from scratch.
    pub fn trim_logs(&mut self, run: &mut Run<V>) {
        let limit = LOG_SLACK + run.versions().len();
        if run.version_log.len() > limit {
            let oldest = self.snaps.iter().map(|s| s.1).min().unwrap_or(usize::MAX);
            run.version_log.trim(oldest.min(self.cv_pos));
            if run.version_log.len() > limit {
                self.snaps.clear();
                self.cv = None;
                let end = run.version_log.pos();
                run.version_log.trim(end);
            }
        }
        let limit = LOG_SLACK + run.seen().len();
        if run.seen_log.len() > limit {
            run.seen_log.trim(self.vs_pos);
            if run.seen_log.len() > limit {
                self.vs = None;
                let end = run.seen_log.pos();
                run.seen_log.trim(end);
            }
        }
    }
}

fn key_str<'a>(k: &'a Bound<'_, PyAny>, what: &str) -> PyResult<&'a str> {
    match k.cast::<PyString>() {
        Ok(s) => s.to_str(),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{what}: expected str, got {}",
            k.repr()?
        ))),
    }
}

/// Shared strings a checkpoint's version maps can reuse instead of allocating: the graph's
/// channel names (keys) and the versions read so far (a `versions_seen` entry usually
/// holds the channel's current version).
pub struct KnownKeys<'a> {
    pub names: &'a [Arc<str>],
    pub index: &'a FastMap<Arc<str>, usize>,
    pub versions: Option<&'a VersionMap>,
}

impl KnownKeys<'_> {
    fn insert(&self, m: &mut VersionMap, key: &str, v: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Ok(s) = v.cast::<PyString>() {
            let text = s.to_str()?;
            let shared = match self.versions.and_then(|vs| vs.get(key)) {
                Some(Version::Str(cur)) if **cur == *text => cur.clone(),
                _ => Arc::from(text),
            };
            return self.put(m, key, Version::Str(shared));
        }
        self.put(m, key, version_from_py(v)?)
    }

    fn put(&self, m: &mut VersionMap, key: &str, v: Version) -> PyResult<()> {
        match self.index.get(key) {
            Some(&c) => m.insert_arc(&self.names[c], v),
            None => m.insert(key, v),
        };
        Ok(())
    }
}

fn as_dict<'a, 'py>(d: &'a Bound<'py, PyAny>, what: &str) -> PyResult<&'a Bound<'py, PyDict>> {
    d.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a dict, got {}",
            d.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })
}

/// `{channel: version}` from a dict (order kept), sharing `known`'s strings where they
/// match.
pub fn version_map_from_py_known(
    d: &Bound<'_, PyAny>,
    what: &str,
    known: &KnownKeys<'_>,
) -> PyResult<VersionMap> {
    let d = as_dict(d, what)?;
    let mut m = VersionMap::with_capacity(d.len());
    for (k, v) in d.iter() {
        known.insert(&mut m, key_str(&k, what)?, &v)?;
    }
    Ok(m)
}

/// `{node: {channel: version}}` from a dict (two levels, order kept), sharing `known`'s
/// strings where they match.
pub fn seen_from_py(d: &Bound<'_, PyAny>, known: &KnownKeys<'_>) -> PyResult<OrdMap<VersionMap>> {
    let d = d
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("versions_seen must be a dict"))?;
    let mut m = OrdMap::with_capacity(d.len());
    for (k, v) in d.iter() {
        m.insert(
            key_str(&k, "versions_seen")?,
            version_map_from_py_known(&v, "versions_seen entries", known)?,
        );
    }
    Ok(m)
}

/// A Python task path element (a tuple or list of them, an int, anything else by `str()`),
/// as `warpgraph_core::ids::write_path` walks it.
pub struct PyPath<'py>(pub Bound<'py, PyAny>);

/// A tuple's or list's items.
pub enum PyPathItems<'py> {
    Tuple(BoundTupleIterator<'py>),
    List(BoundListIterator<'py>),
}

impl<'py> Iterator for PyPathItems<'py> {
    type Item = PyResult<PyPath<'py>>;
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            PyPathItems::Tuple(it) => it.next(),
            PyPathItems::List(it) => it.next(),
        }
        .map(|x| Ok(PyPath(x)))
    }
}

impl<'py> PathElement for PyPath<'py> {
    type Error = PyErr;
    type Items = PyPathItems<'py>;
    fn element(&self) -> PyResult<Element<PyPathItems<'py>>> {
        let v = &self.0;
        if let Ok(t) = v.cast::<PyTuple>() {
            return Ok(Element::Seq(PyPathItems::Tuple(t.iter())));
        }
        if let Ok(l) = v.cast::<PyList>() {
            return Ok(Element::Seq(PyPathItems::List(l.iter())));
        }
        if v.is_instance_of::<PyBool>() {
            return Ok(Element::Int(i64::from(v.is_truthy()?)));
        }
        if v.is_instance_of::<PyInt>() {
            return Ok(match v.extract::<i64>() {
                Ok(i) => Element::Int(i),
                // beyond 64 bits: its value's decimal digits, as `int.__repr__` writes them
                Err(_) => {
                    let digits = v.py().get_type::<PyInt>().call_method1("__repr__", (v,))?;
                    Element::BigInt(digits.extract()?)
                }
            });
        }
        Ok(Element::Text)
    }
    fn write_text(&self, out: &mut String) -> PyResult<()> {
        out.push_str(self.0.str()?.to_str()?);
        Ok(())
    }
}

/// Appends LangGraph's `task_path_str` form of a task path (or path element) to `out`:
/// `"~" + ", ".join(...)` for tuples and lists, ints zero-padded to width 10, else `str()`.
pub fn write_path_key(v: &Bound<'_, PyAny>, out: &mut String) -> PyResult<()> {
    write_path(&PyPath(v.clone()), out)
}

/// Extracts a list of str from any iterable of str, naming `what` on error.
pub fn str_list(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<String>> {
    if v.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a sequence of str, not a str"
        )));
    }
    let mut out = Vec::new();
    for item in v
        .try_iter()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a sequence of str")))?
    {
        let item = item?;
        out.push(key_str(&item, what)?.to_owned());
    }
    Ok(out)
}
