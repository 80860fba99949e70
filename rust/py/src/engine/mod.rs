//! The per-run `Engine` pyclass (channels, versions, versions_seen) and the module entry.
//!
//! Each method does all of its work in Rust in one call; channel values stay Python objects.

mod channels;
mod convert;
mod errors;
mod graphspec;
mod ops;
mod task_input;

pub(crate) use convert::write_path_key;

use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString};
use warpgraph_core::apply::{Run, TaskWrites};
use warpgraph_core::error::CoreError;
use warpgraph_core::ids::checkpoint_id_bytes_into;
use warpgraph_core::triggers::should_interrupt;
use warpgraph_core::version::{self as ver, Version, VersionMap};

use channels::{PyOps, V};
use convert::{
    seen_from_py, str_list, version_from_py, version_map_from_py_known, version_to_py, KnownKeys,
    Mirror,
};
use graphspec::{GraphSpec, SpecInner};
use ops::{CoreErr, NextVersion};
use task_input::Aliases;

/// Per-run state: channel values, channel_versions, versions_seen, updated_channels.
#[pyclass(module = "warpgraph._core")]
pub struct Engine {
    pub(crate) spec: Arc<SpecInner>,
    pub(crate) run: Run<V>,
    pub(crate) mirror: Mirror,
    /// Reused per-task buffers of apply_writes.
    pool: Vec<TaskWrites<V>>,
    aliases: Aliases,
    /// prepare_next_tasks' reused state (locked with `try_lock` only: a re-entrant call
    /// works without it).
    prep: Mutex<PrepScratch>,
    /// Per input group (see `SpecInner::input_group`): the last input dict built and the
    /// channel state generations it reflects (`try_lock` only, like `prep`).
    pub(crate) inputs: Mutex<Vec<InputCache>>,
}

/// A node input dict kept current between steps; tasks get copies of it.
pub(crate) enum InputCache {
    /// Not built yet.
    Empty,
    /// A channel read is not a plain value slot: always built afresh.
    Never,
    Built {
        dict: Py<PyDict>,
        /// `state_gen` of each channel read, and whether it was available (a key).
        gens: Vec<u64>,
        present: Vec<bool>,
    },
}

/// The last checkpoint id decoded by prepare_next_tasks, its bytes, and a node buffer.
#[derive(Default)]
struct PrepScratch {
    /// The checkpoint id whose raw bytes are `bytes`.
    id: String,
    bytes: Vec<u8>,
    firing: Vec<usize>,
    /// `advance`'s id prefix and, when it has a whole number of valid hex digit pairs, its
    /// raw bytes (`prefix_ok`): an id `prefix + 12 hex digits` then decodes without a scan.
    prefix: String,
    prefix_bytes: Vec<u8>,
    prefix_ok: bool,
}

impl PrepScratch {
    /// Records `bytes` as the raw bytes of checkpoint id `id`.
    fn set_id(&mut self, id: &str, bytes: &[u8]) {
        self.id.clear();
        self.id.push_str(id);
        self.bytes.clear();
        self.bytes.extend_from_slice(bytes);
    }

    /// Records the raw bytes of `id` = `prefix` + `n` as 12 hex digits, if the prefix
    /// decodes on its own (else leaves the cache alone: the general decoding handles it).
    fn seed_hex12(&mut self, prefix: &str, n: u64, id: &str) {
        if self.prefix != prefix {
            self.prefix.clear();
            self.prefix.push_str(prefix);
            self.prefix_ok = checkpoint_id_bytes_into(prefix, &mut self.prefix_bytes).is_ok();
        }
        if !self.prefix_ok || self.id == id {
            return;
        }
        self.bytes.clear();
        self.bytes.extend_from_slice(&self.prefix_bytes);
        self.bytes.extend_from_slice(&n.to_be_bytes()[2..]);
        self.id.clear();
        self.id.push_str(id);
    }
}

#[pymethods]
impl Engine {
    #[new]
    #[pyo3(signature = (spec, checkpoint=None))]
    fn new<'py>(
        py: Python<'py>,
        spec: &Bound<'py, GraphSpec>,
        checkpoint: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Self> {
        let inner = spec.get().inner.clone();
        let ops = PyOps {
            py,
            cls: &inner.cls,
        };
        let cp = match checkpoint {
            Some(c) if !c.is_none() => Some(
                c.cast::<PyDict>()
                    .map_err(|_| PyTypeError::new_err("checkpoint must be a dict or None"))?
                    .clone(),
            ),
            _ => None,
        };
        let get = |k: &Bound<'py, PyString>| -> PyResult<Option<Bound<'py, PyAny>>> {
            match &cp {
                Some(d) => Ok(d.get_item(k)?.filter(|v| !v.is_none())),
                None => Ok(None),
            }
        };
        let values = get(intern!(py, "channel_values"))?;
        let values = match &values {
            Some(v) => Some(v.cast::<PyDict>().map_err(|_| {
                PyTypeError::new_err("checkpoint['channel_values'] must be a dict")
            })?),
            None => None,
        };
        let mut states = Vec::with_capacity(inner.graph.channels.len());
        for (i, ch) in inner.graph.channels.iter().enumerate() {
            let v = match values {
                Some(d) => d.get_item(inner.chan_names[i].bind(py))?,
                None => None,
            };
            states.push(channels::restore(&ops, ch, v.as_ref())?);
        }
        let mut known = KnownKeys {
            names: &inner.graph.names,
            index: &inner.graph.index,
            versions: None,
        };
        let versions = match get(intern!(py, "channel_versions"))? {
            Some(v) => version_map_from_py_known(&v, "checkpoint['channel_versions']", &known)?,
            None => VersionMap::new(),
        };
        known.versions = Some(&versions);
        let seen = match get(intern!(py, "versions_seen"))? {
            Some(v) => seen_from_py(&v, &known)?,
            None => ver::OrdMap::new(),
        };
        let updated: Vec<Arc<str>> = match get(intern!(py, "updated_channels"))? {
            Some(v) => str_list(&v, "checkpoint['updated_channels']")?
                .iter()
                .map(|s| Arc::from(s.as_str()))
                .collect(),
            None => Vec::new(),
        };
        let run = Run::new(&inner.graph, states, versions, seen, updated);
        let n_groups = inner.input_groups;
        Ok(Engine {
            spec: inner,
            run,
            mirror: Mirror::default(),
            pool: Vec::new(),
            aliases: Aliases::default(), // (seeded by the first apply_writes)
            prep: Mutex::new(PrepScratch::default()),
            inputs: Mutex::new((0..n_groups).map(|_| InputCache::Empty).collect()),
        })
    }

    /// A fresh copy of channel_versions.
    fn channel_versions<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.mirror.versions(py, &self.run, &self.spec)?.copy()
    }

    /// A fresh two-level copy of versions_seen.
    fn versions_seen<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let shared = self.mirror.seen(py, &self.run, &self.spec)?;
        let out = PyDict::new(py);
        for (k, inner) in shared.iter() {
            out.set_item(k, inner.cast_into::<PyDict>()?.copy()?)?;
        }
        Ok(out)
    }

    /// The channels updated by the last apply_writes (sorted).
    fn updated_channels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        match self.run.updated_channels() {
            Some(idx) => PyList::new(py, idx.iter().map(|&c| self.spec.chan_names[c].bind(py))),
            None => PyList::new(py, self.run.updated().iter().map(|s| &**s)),
        }
    }

    /// Whether `channel` has a value (False for names that are not channels).
    fn is_available(&self, py: Python<'_>, channel: &str) -> PyResult<bool> {
        match self.spec.graph.index.get(channel) {
            Some(&c) => self.available(py, c).map_err(|e| self.err(py, e)),
            None => Ok(false),
        }
    }

    /// Replaces the trigger hint for the next prepare_next_tasks (empty: full scan).
    fn set_updated_channels(&mut self, channels: &Bound<'_, PyAny>) -> PyResult<()> {
        let names: Vec<Arc<str>> = str_list(channels, "updated channels")?
            .iter()
            .map(|s| Arc::from(s.as_str()))
            .collect();
        let spec = self.spec.clone();
        self.run.set_updated(&spec.graph, names);
        Ok(())
    }

    /// Reads one channel (str) or the available ones of several (list); `fresh_writes` are
    /// applied to copies of the selected channels first.
    #[pyo3(signature = (select, fresh_writes=None))]
    fn read(
        &self,
        py: Python<'_>,
        select: &Bound<'_, PyAny>,
        fresh_writes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let no_fresh = match fresh_writes {
            None => true,
            Some(w) => w.is_none(),
        };
        if no_fresh && !select.is_instance_of::<PyString>() {
            return self.read_many(py, select);
        }
        let single = select.cast::<PyString>().ok();
        // A sequence skips names that are not channels (managed values, added by the caller).
        let idx = match single {
            Some(s) => vec![self.channel(s.to_str()?)?],
            None => self.select_indexes(select)?,
        };
        let mut fresh: Option<Vec<Vec<V>>> = None;
        if let Some(writes) = fresh_writes.filter(|w| !w.is_none()) {
            let mut groups: Vec<Vec<V>> = idx.iter().map(|_| Vec::new()).collect();
            for w in writes.try_iter()? {
                let (chan, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) = w?.extract()?;
                if let Ok(chan) = chan.cast::<PyString>() {
                    // (a selected name is a channel's, so it equals `chan` iff their
                    // channel indexes do)
                    if let Some(&c) = self.spec.graph.index.get(chan.to_str()?) {
                        for (j, _) in idx.iter().enumerate().filter(|(_, &i)| i == c) {
                            groups[j].push(value.clone().unbind());
                        }
                    }
                }
            }
            fresh = Some(groups);
        }
        let mut fresh_iter = fresh.map(Vec::into_iter);
        if single.is_some() {
            let vals = fresh_iter.as_mut().and_then(Iterator::next);
            return self.read_one(py, idx[0], vals).map_err(|e| self.err(py, e));
        }
        let out = PyDict::new(py);
        for &c in &idx {
            let vals = fresh_iter.as_mut().and_then(Iterator::next);
            match self.read_one(py, c, vals) {
                Ok(v) => out.set_item(self.spec.chan_names[c].bind(py), v)?,
                Err(CoreError::EmptyChannel) => {}
                Err(e) => return Err(self.err(py, e)),
            }
        }
        Ok(out.into_any().unbind())
    }

    /// `{k: channel.checkpoint()}` for versioned channels whose checkpoint is not MISSING.
    fn checkpoint_values<'py>(
        &mut self,
        py: Python<'py>,
        only: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let spec = self.spec.clone();
        let ops = PyOps { py, cls: &spec.cls };
        let out = PyDict::new(py);
        if let Some(keys) = only {
            // (the channels of `keys`, in their order: a channel without a value is left
            // out, as below; unknown names are versions of no channel of this graph;
            // iterated in place: `keys` is the engine's own new dict, not yet handed out)
            for (key, _) in keys.iter() {
                let Ok(name) = key.cast::<PyString>() else {
                    continue;
                };
                let Some(&i) = spec.graph.index.get(name.to_str()?) else {
                    continue;
                };
                if self.run.channel_slot(i).is_none() {
                    continue;
                }
                let ch = &spec.graph.channels[i];
                if let Some(v) = channels::checkpoint(&ops, ch, &self.run.states[i])? {
                    out.set_item(spec.chan_names[i].bind(py), v)?;
                }
            }
            return Ok(out); // (`maybe_valued` stays a superset until a full gathering)
        }
        let candidates = self.run.maybe_valued().to_vec();
        for i in candidates {
            if self.run.channel_slot(i).is_none() {
                continue;
            }
            let ch = &spec.graph.channels[i];
            if let Some(v) = channels::checkpoint(&ops, ch, &self.run.states[i])? {
                out.set_item(spec.chan_names[i].bind(py), v)?;
            }
        }
        self.run.prune_valued(&spec.graph);
        Ok(out)
    }

    /// The next step's tasks: `[(task_id, node, path, triggers, input)]`, PUSH tasks first.
    #[pyo3(signature = (checkpoint_id, parent_ns, step, v=4))]
    fn prepare_next_tasks<'py>(
        &self,
        py: Python<'py>,
        checkpoint_id: &str,
        parent_ns: &str,
        step: i64,
        v: i64,
    ) -> PyResult<Bound<'py, PyList>> {
        let mut guard = self.prep.try_lock().ok();
        let mut local = PrepScratch::default();
        let scratch = guard.as_deref_mut().unwrap_or(&mut local);
        if scratch.id != checkpoint_id {
            scratch.id.clear();
            if let Err(e) = checkpoint_id_bytes_into(checkpoint_id, &mut scratch.bytes) {
                // The cached id is now "": keep its bytes consistent (empty).
                scratch.bytes.clear();
                return Err(self.err(py, e.into()));
            }
            scratch.id.push_str(checkpoint_id);
        }
        let ns = &scratch.bytes[..];
        let firing = &mut scratch.firing;
        let mut step_s = String::with_capacity(20);
        warpgraph_core::digits::push_i64(&mut step_s, step);
        let step_s = step_s.as_str();
        self.firing_nodes_into(py, firing)?;
        let mut out = Vec::with_capacity(firing.len());
        self.push_tasks(py, ns, parent_ns, step_s, v, &mut out)?;
        for &n in firing.iter() {
            if let Some(t) = self.pull_task(py, n, ns, parent_ns, step_s, v)? {
                out.push(t);
            }
        }
        PyList::new(py, out)
    }

    /// One crossing for a step of a run without a saver: `apply_writes(tasks,
    /// next_version)`, then the next checkpoint id `id_prefix` + `step` as 12 hex digits
    /// (the loop's cheap uuid-shaped ids), then, if `step + 1 <= stop`,
    /// `prepare_next_tasks(new id, parent_ns, step + 1, v)` (else no tasks).
    /// Returns `(updated, new checkpoint id, next tasks)`.
    #[pyo3(signature = (tasks, next_version, id_prefix, parent_ns, step, stop, v=4))]
    #[allow(clippy::too_many_arguments)]
    fn advance<'py>(
        &mut self,
        py: Python<'py>,
        tasks: &Bound<'py, PyAny>,
        next_version: Option<&Bound<'py, PyAny>>,
        id_prefix: &str,
        parent_ns: &str,
        step: i64,
        stop: i64,
        v: i64,
    ) -> PyResult<(Bound<'py, PyList>, Bound<'py, PyString>, Bound<'py, PyList>)> {
        let updated = self.apply_writes(py, tasks, next_version)?;
        let n = (step & 0xFFFF_FFFF_FFFF) as u64;
        let id = warpgraph_core::ids::id_with_hex12(id_prefix, n);
        if step < stop {
            if let Ok(mut scratch) = self.prep.try_lock() {
                scratch.seed_hex12(id_prefix, n, &id);
            }
        }
        let next = if step < stop {
            self.prepare_next_tasks(py, &id, parent_ns, step + 1, v)?
        } else {
            PyList::empty(py)
        };
        Ok((updated, PyString::new(py, &id), next))
    }

    /// LangGraph's apply_writes over `[(name, path, triggers, writes)]`; returns the updated
    /// channel names (sorted). `next_version`: "int", "str", a callable or None.
    #[pyo3(signature = (tasks, next_version=None))]
    fn apply_writes<'py>(
        &mut self,
        py: Python<'py>,
        tasks: &Bound<'py, PyAny>,
        next_version: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let mode = match next_version {
            None => None,
            Some(n) if n.is_none() => None,
            Some(n) => match n.cast::<PyString>() {
                Ok(s) => match s.to_str()? {
                    "int" => Some(NextVersion::Int),
                    "str" => Some(NextVersion::Str),
                    other => {
                        return Err(pyo3::exceptions::PyValueError::new_err(format!(
                            "next_version must be 'int', 'str', a callable or None, got {other:?}"
                        )))
                    }
                },
                Err(_) if n.is_callable() => Some(NextVersion::Call(n.clone())),
                Err(_) => {
                    return Err(PyTypeError::new_err(
                        "next_version must be 'int', 'str', a callable or None",
                    ))
                }
            },
        };
        let mut pool = std::mem::take(&mut self.pool);
        let mut aliases = std::mem::take(&mut self.aliases);
        aliases.seed_once(py, &self.spec);
        let filled = self.fill_tasks(py, tasks, &mut pool, &mut aliases);
        self.aliases = aliases;
        let n = match filled {
            Ok(n) => n,
            Err(e) => {
                pool.iter_mut().for_each(|t| t.writes.clear());
                self.pool = pool;
                return Err(e);
            }
        };
        let next = mode.map(|m| {
            move |cur: Option<&Version>| -> Result<Option<Version>, CoreErr> {
                match m {
                    NextVersion::Int => ver::increment(cur).map(Some),
                    NextVersion::Str => {
                        let r = ops::py_random(py).map_err(CoreError::External)?;
                        ver::next_saver_version(cur, r).map(Some)
                    }
                    NextVersion::Call(f) => {
                        let arg = match cur {
                            Some(v) => version_to_py(py, v)
                                .map_err(CoreError::External)?
                                .into_bound(py),
                            None => py.None().into_bound(py),
                        };
                        let r = f.call1((arg, py.None())).map_err(CoreError::External)?;
                        if r.is_none() {
                            Ok(None)
                        } else {
                            version_from_py(&r).map(Some).map_err(CoreError::External)
                        }
                    }
                }
            }
        });
        let spec = self.spec.clone();
        let ops = PyOps { py, cls: &spec.cls };
        let updated = self
            .run
            .apply_writes(&spec.graph, &mut pool[..n], next, &ops)
            .map_err(|e| errors::to_py(py, &spec.cls, e))
            .and_then(|up| PyList::new(py, up.iter().map(|&c| spec.chan_names[c].bind(py))));
        pool[..n].iter_mut().for_each(|t| t.writes.clear());
        self.pool = pool;
        self.mirror.trim_logs(&mut self.run);
        updated
    }

    /// On resume: every channel's current version is marked as seen by `"__interrupt__"`.
    fn mark_interrupt_seen(&mut self) {
        let spec = self.spec.clone();
        self.run.mark_interrupt_seen(&spec.graph);
        self.mirror.trim_logs(&mut self.run);
    }

    /// LangGraph's should_interrupt; `tasks` are `(name, hidden)` pairs.
    fn should_interrupt(
        &self,
        py: Python<'_>,
        interrupt_nodes: &Bound<'_, PyAny>,
        tasks: Vec<(String, bool)>,
    ) -> PyResult<bool> {
        let nodes = match interrupt_nodes.cast::<PyString>() {
            Ok(s) if s.to_str()? == "*" => None,
            _ => Some(str_list(interrupt_nodes, "interrupt_nodes")?),
        };
        should_interrupt(
            self.run.versions(),
            self.run.seen(),
            nodes.as_deref(),
            &tasks,
        )
        .map_err(|e| self.err(py, e))
    }

    /// A new checkpoint dict (all fresh objects).
    #[pyo3(signature = (checkpoint_id, ts, updated_channels=None))]
    fn create_checkpoint<'py>(
        &mut self,
        py: Python<'py>,
        checkpoint_id: &str,
        ts: &str,
        updated_channels: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.new_checkpoint(py, checkpoint_id, ts, updated_channels, true)
    }

    /// `create_checkpoint` and, in the same call, its envelope: the bytes
    /// `pack_checkpoint_envelope` gives for it (None when that fast path does not apply).
    /// The version dicts are written from the mirrors' encoded sections without the
    /// identity check a later `pack_checkpoint_envelope` needs (so they are not registered
    /// for one): they are copies of the mirrors made in this call, before any Python code
    /// could see them.
    fn create_checkpoint_packed<'py>(
        &mut self,
        py: Python<'py>,
        checkpoint_id: &str,
        ts: &str,
        updated_channels: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyDict>, Option<Bound<'py, PyBytes>>)> {
        let d = self.new_checkpoint(py, checkpoint_id, ts, updated_channels, false)?;
        let envelope = self.pack_fresh(&d)?;
        Ok((d, envelope))
    }

    /// A step's checkpoint in one crossing: `(checkpoint_id, checkpoint, envelope,
    /// new_versions)` = `uuid6(step)`, `create_checkpoint_packed(id, utc_now(),
    /// updated_channels)` (with `envelope`, for a saver taking engine-encoded envelopes;
    /// else `create_checkpoint` and None) and `new_versions(previous)`.
    /// With `only_new`, the checkpoint's `channel_values` hold only the channels in
    /// `new_versions` (for a saver storing just those: the in-memory saver's packed puts),
    /// so the values of the other channels are not gathered into a dict every step.
    #[allow(clippy::type_complexity)]
    #[pyo3(signature = (step, updated_channels, previous, envelope=true, only_new=false))]
    fn next_checkpoint<'py>(
        &mut self,
        py: Python<'py>,
        step: i64,
        updated_channels: Option<&Bound<'py, PyAny>>,
        previous: &Bound<'py, PyAny>,
        envelope: bool,
        only_new: bool,
    ) -> PyResult<(
        String,
        Bound<'py, PyDict>,
        Option<Bound<'py, PyBytes>>,
        Bound<'py, PyDict>,
    )> {
        let (id, raw) = warpgraph_core::uuid6::uuid6_with_bytes(Some(step));
        if let Ok(mut scratch) = self.prep.try_lock() {
            // (the next prepare_next_tasks is for this id: no hex decode then)
            scratch.set_id(&id, &raw);
        }
        let ts = warpgraph_core::clock::utc_now_iso();
        if only_new {
            // (new versions first: they select the values; the mirror is brought up to
            // date by either call, so the order changes nothing else)
            let new = self.new_versions(py, previous)?;
            let d =
                self.new_checkpoint_of(py, &id, &ts, updated_channels, !envelope, Some(&new))?;
            let packed = if envelope { self.pack_fresh(&d)? } else { None };
            return Ok((id, d, packed, new));
        }
        let (cp, packed) = if envelope {
            self.create_checkpoint_packed(py, &id, &ts, updated_channels)?
        } else {
            (
                self.create_checkpoint(py, &id, &ts, updated_channels)?,
                None,
            )
        };
        let new = self.new_versions(py, previous)?;
        Ok((id, cp, packed, new))
    }

    /// get_new_channel_versions(previous, current channel_versions).
    fn new_versions<'py>(
        &mut self,
        py: Python<'py>,
        previous: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let prev = previous.cast::<PyDict>().map_err(|_| {
            PyTypeError::new_err(format!(
                "previous versions must be a dict, got {}",
                previous
                    .get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            ))
        })?;
        let spec = self.spec.clone();
        self.mirror
            .new_versions(py, &self.run, &spec, prev)
            .map_err(|e| errors::to_py(py, &spec.cls, e))
    }
}

impl Engine {
    /// `create_checkpoint`; `register`: make its version dicts known to
    /// `pack_checkpoint_envelope` (not needed when the caller packs it at once).
    fn new_checkpoint<'py>(
        &mut self,
        py: Python<'py>,
        checkpoint_id: &str,
        ts: &str,
        updated_channels: Option<&Bound<'py, PyAny>>,
        register: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        self.new_checkpoint_of(py, checkpoint_id, ts, updated_channels, register, None)
    }

    /// The envelope of a checkpoint `new_checkpoint` just made (unregistered), written
    /// from the mirrors' sections: `create_checkpoint_packed`'s second item.
    fn pack_fresh<'py>(&self, d: &Bound<'py, PyDict>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let py = d.py();
        let cv = d.get_item(intern!(py, "channel_versions"))?;
        let vs = d.get_item(intern!(py, "versions_seen"))?;
        Ok(match (cv, vs) {
            (Some(cv), Some(vs)) => crate::envelope::pack_fresh_checkpoint(
                d,
                (self.mirror.sections(), cv.as_ptr(), vs.as_ptr()),
            ),
            _ => None,
        })
    }

    /// `new_checkpoint`, its `channel_values` limited to the keys of `only` when given.
    fn new_checkpoint_of<'py>(
        &mut self,
        py: Python<'py>,
        checkpoint_id: &str,
        ts: &str,
        updated_channels: Option<&Bound<'py, PyAny>>,
        register: bool,
        only: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let seen = self.mirror.seen(py, &self.run, &self.spec)?.copy()?;
        let versions = self.mirror.versions(py, &self.run, &self.spec)?.copy()?;
        self.mirror.remember(&versions, &self.run);
        if register {
            self.mirror.register_envelope(&versions, &seen);
        }
        let d = PyDict::new(py);
        d.set_item(intern!(py, "v"), 4)?;
        d.set_item(intern!(py, "ts"), ts)?;
        d.set_item(intern!(py, "id"), checkpoint_id)?;
        d.set_item(
            intern!(py, "channel_values"),
            self.checkpoint_values(py, only)?,
        )?;
        d.set_item(intern!(py, "channel_versions"), versions)?;
        d.set_item(intern!(py, "versions_seen"), seen)?;
        match updated_channels.filter(|u| !u.is_none()) {
            Some(u) => d.set_item(intern!(py, "updated_channels"), sorted_names(u)?)?,
            None => d.set_item(intern!(py, "updated_channels"), py.None())?,
        }
        Ok(d)
    }
}

/// A new sorted list of the channel names `u`. An exact list of exact str (what the loop
/// passes) is copied and sorted by CPython, without a round trip through Rust strings;
/// anything else is checked by `str_list`. (Both orders are by code point.)
fn sorted_names<'py>(u: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyList>> {
    if let Ok(list) = u.cast_exact::<PyList>() {
        if list.iter().all(|n| n.is_exact_instance_of::<PyString>()) {
            let copy = PyList::new(u.py(), list.iter())?;
            copy.sort()?;
            return Ok(copy);
        }
    }
    let mut names = str_list(u, "updated_channels")?;
    names.sort();
    PyList::new(u.py(), names)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<GraphSpec>()?;
    m.add_class::<Engine>()?;
    m.add_function(wrap_pyfunction!(graphspec::init, m)?)?;
    Ok(())
}
