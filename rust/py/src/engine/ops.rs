//! Engine internals shared by its methods: reads, task inputs, PULL and PUSH tasks.

use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use warpgraph_core::channel::State;
use warpgraph_core::error::CoreError;
use warpgraph_core::ids::task_id_ascii;
use warpgraph_core::triggers::ReadSpec;

use super::channels::{self, PyOps, V};
use super::errors;
use super::graphspec::INPUT_DICT_MIN;
use super::graphspec::{PULL, PUSH};
use super::{Engine, InputCache};

pub(crate) type CoreErr = CoreError<PyErr>;

pub(crate) fn log_warning(py: Python<'_>, msg: String) -> PyResult<()> {
    static LOGGER: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let logger = LOGGER.get_or_try_init(py, || -> PyResult<_> {
        Ok(py
            .import("logging")?
            .call_method1("getLogger", ("warpgraph.pregel._algo",))?
            .unbind())
    })?;
    logger
        .bind(py)
        .call_method1(intern!(py, "warning"), (msg,))?;
    Ok(())
}

/// Python's `random.random()`, as the savers' `get_next_version` uses (so seeding `random`
/// reproduces LangGraph's version strings).
pub(crate) fn py_random(py: Python<'_>) -> PyResult<f64> {
    static RANDOM: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let f = RANDOM.get_or_try_init(py, || -> PyResult<_> {
        Ok(py.import("random")?.getattr("random")?.unbind())
    })?;
    f.call0(py)?.extract(py)
}

pub(crate) enum NextVersion<'py> {
    Int,
    Str,
    Call(Bound<'py, PyAny>),
}

/// A task id (36 ASCII bytes) as a Python str.
fn id_str<'py>(py: Python<'py>, id: &[u8; 36]) -> Bound<'py, PyString> {
    debug_assert!(id.is_ascii());
    // SAFETY: task ids are hex digits and dashes only (`task_id_ascii`), i.e. ASCII.
    PyString::new(py, unsafe { std::str::from_utf8_unchecked(id) })
}

impl Engine {
    pub(crate) fn ops<'a>(&'a self, py: Python<'a>) -> PyOps<'a> {
        PyOps {
            py,
            cls: &self.spec.cls,
        }
    }

    pub(crate) fn err(&self, py: Python<'_>, e: CoreErr) -> PyErr {
        errors::to_py(py, &self.spec.cls, e)
    }

    pub(crate) fn channel(&self, name: &str) -> PyResult<usize> {
        self.spec
            .graph
            .index
            .get(name)
            .copied()
            .ok_or_else(|| PyKeyError::new_err(name.to_owned()))
    }

    /// `get()` of channel `c`, optionally on a copy updated with `fresh` values first.
    pub(crate) fn read_one(
        &self,
        py: Python<'_>,
        c: usize,
        fresh: Option<Vec<V>>,
    ) -> Result<V, CoreErr> {
        let ops = self.ops(py);
        let spec = &self.spec.graph.channels[c];
        match fresh {
            None => channels::get(&ops, spec, &self.run.states[c]),
            Some(vals) => {
                let mut copy = spec.copy_state(&self.run.states[c], &ops)?;
                spec.update(&mut copy, vals, &ops)?;
                channels::get(&ops, spec, &copy)
            }
        }
    }

    pub(crate) fn available(&self, py: Python<'_>, c: usize) -> Result<bool, CoreErr> {
        self.spec.graph.channels[c].is_available(&self.run.states[c], &self.ops(py))
    }

    /// Channel `c`'s value if it is available (`get()` of an available channel).
    fn value_if_available(&self, py: Python<'_>, c: usize) -> Result<Option<V>, CoreErr> {
        match &self.run.states[c] {
            // Every kind with a plain value slot: available iff set, get() is the value.
            State::Value(v) => Ok(v.as_ref().map(|v| v.clone_ref(py))),
            _ if self.available(py, c)? => self.read_one(py, c, None).map(Some),
            _ => Ok(None),
        }
    }

    /// The channel indexes of the names in `select` (a sequence of str; names that are not
    /// channels are skipped), all checked before anything is read.
    pub(crate) fn select_indexes(&self, select: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
        const WHAT: &str = "select";
        let mut idx: Vec<usize> = Vec::with_capacity(8);
        let mut push = |item: &Bound<'_, PyAny>| -> PyResult<()> {
            let Ok(s) = item.cast::<PyString>() else {
                return Err(PyTypeError::new_err(format!(
                    "{WHAT}: expected str, got {}",
                    item.repr()?
                )));
            };
            if let Some(&c) = self.spec.graph.index.get(s.to_str()?) {
                idx.push(c);
            }
            Ok(())
        };
        match select.cast::<PyList>() {
            Ok(list) => {
                for item in list.iter() {
                    push(&item)?;
                }
            }
            Err(_) => {
                for item in select.try_iter().map_err(|_| {
                    PyTypeError::new_err(format!("{WHAT} must be a sequence of str"))
                })? {
                    push(&item?)?;
                }
            }
        }
        Ok(idx)
    }

    /// `read(select)` for a sequence `select` without fresh writes: `{name: value}` of the
    /// available channels among `select` (names that are not channels are skipped).
    pub(crate) fn read_many(
        &self,
        py: Python<'_>,
        select: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        let idx = self.select_indexes(select)?;
        let out = PyDict::new(py);
        for &c in &idx {
            let v = match &self.run.states[c] {
                State::Value(v) => v.as_ref().map(|v| v.clone_ref(py)),
                // get() decides (a custom channel may answer even when not available).
                _ => match self.read_one(py, c, None) {
                    Ok(v) => Some(v),
                    Err(CoreError::EmptyChannel) => None,
                    Err(e) => return Err(self.err(py, e)),
                },
            };
            if let Some(v) = v {
                out.set_item(self.spec.chan_names[c].bind(py), v)?;
            }
        }
        Ok(out.into_any().unbind())
    }

    /// A PULL task's input: `None` when the node gets no task.
    pub(crate) fn node_input(&self, py: Python<'_>, n: usize) -> Result<Option<V>, CoreErr> {
        match &self.spec.graph.topology.nodes[n].read {
            ReadSpec::One(None) => Ok(None),
            ReadSpec::One(Some(c)) => self.value_if_available(py, *c),
            ReadSpec::Many(cs) if cs.len() >= INPUT_DICT_MIN => {
                if let Some(g) = self.spec.input_group[n] {
                    if let Ok(mut caches) = self.inputs.try_lock() {
                        if let Some(d) = self.cached_input(py, &mut caches[g], cs)? {
                            return Ok(Some(d));
                        }
                    }
                }
                // all available (the usual case): fill a copy of the node's template
                let mut vals = Vec::with_capacity(cs.len());
                for &c in cs {
                    match self.value_if_available(py, c)? {
                        Some(v) => vals.push(v),
                        None => return self.input_dict(py, cs).map(Some),
                    }
                }
                let names = &self.spec.chan_names;
                let template = self.spec.input_templates[n]
                    .get_or_try_init(py, || -> PyResult<Py<PyDict>> {
                        let t = PyDict::new(py);
                        for &c in cs {
                            t.set_item(names[c].bind(py), py.None())?;
                        }
                        Ok(t.unbind())
                    })
                    .map_err(CoreError::External)?;
                let d = template.bind(py).copy().map_err(CoreError::External)?;
                for (&c, v) in cs.iter().zip(vals) {
                    d.set_item(names[c].bind(py), v)
                        .map_err(CoreError::External)?;
                }
                Ok(Some(d.into_any().unbind()))
            }
            ReadSpec::Many(cs) => self.input_dict(py, cs).map(Some),
        }
    }

    /// A copy of the input dict over `cs` kept in `cache`, brought up to date with the
    /// channels whose state changed since (rebuilt when one became available or
    /// unavailable, so the key order is always the read order); None when a channel is
    /// not a plain value slot (its get() may build a new object each read).
    fn cached_input(
        &self,
        py: Python<'_>,
        cache: &mut InputCache,
        cs: &[usize],
    ) -> Result<Option<V>, CoreErr> {
        let names = &self.spec.chan_names;
        let state_gen = &self.run.state_gen;
        if let InputCache::Built {
            dict,
            gens,
            present,
        } = cache
        {
            let d = dict.bind(py);
            let mut current = true;
            for (i, &c) in cs.iter().enumerate() {
                if gens[i] == state_gen[c] {
                    continue;
                }
                match &self.run.states[c] {
                    State::Value(Some(v)) if present[i] => {
                        d.set_item(names[c].bind(py), v.bind(py))
                            .map_err(CoreError::External)?;
                    }
                    State::Value(None) if !present[i] => {}
                    _ => {
                        current = false;
                        break;
                    }
                }
                gens[i] = state_gen[c];
            }
            if current {
                return Ok(Some(
                    d.copy().map_err(CoreError::External)?.into_any().unbind(),
                ));
            }
        } else if let InputCache::Never = cache {
            return Ok(None);
        }
        let d = PyDict::new(py);
        let mut present = Vec::with_capacity(cs.len());
        for &c in cs {
            match &self.run.states[c] {
                State::Value(Some(v)) => {
                    d.set_item(names[c].bind(py), v.bind(py))
                        .map_err(CoreError::External)?;
                    present.push(true);
                }
                State::Value(None) => present.push(false),
                _ => {
                    *cache = InputCache::Never;
                    return Ok(None);
                }
            }
        }
        let out = d.copy().map_err(CoreError::External)?.into_any().unbind();
        *cache = InputCache::Built {
            dict: d.unbind(),
            gens: cs.iter().map(|&c| state_gen[c]).collect(),
            present,
        };
        Ok(Some(out))
    }

    /// `{name: value}` of the available channels among `cs`, in order.
    fn input_dict(&self, py: Python<'_>, cs: &[usize]) -> Result<V, CoreErr> {
        let d = PyDict::new(py);
        for &c in cs {
            if let Some(v) = self.value_if_available(py, c)? {
                d.set_item(self.spec.chan_names[c].bind(py), v)
                    .map_err(CoreError::External)?;
            }
        }
        Ok(d.into_any().unbind())
    }

    /// The nodes whose PULL task fires now, into `out` (cleared first).
    pub(crate) fn firing_nodes_into(&self, py: Python<'_>, out: &mut Vec<usize>) -> PyResult<()> {
        self.run
            .firing_nodes_into(&self.spec.graph, &self.ops(py), out)
            .map_err(|e| self.err(py, e))
    }

    /// The PULL task of firing node `n` (`None` when it has no input).
    pub(crate) fn pull_task<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        ns: &[u8],
        parent_ns: &str,
        step_s: &str,
        v: i64,
    ) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let Some(input) = self.node_input(py, n).map_err(|e| self.err(py, e))? else {
            return Ok(None);
        };
        let node = &self.spec.graph.topology.nodes[n];
        let name = &*node.name;
        let joined;
        let checkpoint_ns = if parent_ns.is_empty() {
            name
        } else {
            joined = format!("{parent_ns}|{name}");
            joined.as_str()
        };
        let head = [checkpoint_ns, step_s, name, PULL];
        let trig = &node.sorted_triggers;
        let id = if trig.len() <= 4 {
            let mut buf = [""; 8];
            buf[..4].copy_from_slice(&head);
            for (slot, t) in buf[4..].iter_mut().zip(trig.iter()) {
                *slot = t;
            }
            task_id_ascii(ns, &buf[..4 + trig.len()], v)
        } else {
            let mut parts = head.to_vec();
            parts.extend(trig.iter().map(|t| &**t));
            task_id_ascii(ns, &parts, v)
        };
        PyTuple::new(
            py,
            [
                id_str(py, &id).into_any(),
                self.spec.node_names[n].bind(py).clone().into_any(),
                self.spec.pull_paths[n].bind(py).clone().into_any(),
                self.spec.pull_triggers[n].bind(py).clone().into_any(),
                input.into_bound(py),
            ],
        )
        .map(Some)
    }

    pub(crate) fn push_tasks<'py>(
        &self,
        py: Python<'py>,
        ns: &[u8],
        parent_ns: &str,
        step_s: &str,
        v: i64,
        out: &mut Vec<Bound<'py, PyTuple>>,
    ) -> PyResult<()> {
        let Some(tc) = self.spec.tasks_channel else {
            return Ok(());
        };
        if !self.available(py, tc).map_err(|e| self.err(py, e))? {
            return Ok(());
        }
        let packets = self.read_one(py, tc, None).map_err(|e| self.err(py, e))?;
        let send_type = self.spec.cls.send_type.bind(py);
        for (idx, packet) in packets.bind(py).try_iter()?.enumerate() {
            let packet = packet?;
            if !packet.is_instance(send_type)? {
                log_warning(
                    py,
                    format!(
                        "Ignoring invalid packet type {} in pending sends",
                        packet.get_type().str()?
                    ),
                )?;
                continue;
            }
            let node_obj = packet.getattr(intern!(py, "node"))?;
            let node = node_obj.str()?.to_str()?.to_owned();
            let known = node_obj.is_instance_of::<PyString>()
                && self
                    .spec
                    .graph
                    .topology
                    .node_index
                    .contains_key(node.as_str());
            if !known {
                log_warning(
                    py,
                    format!("Ignoring unknown node name {node} in pending sends"),
                )?;
                continue;
            }
            let checkpoint_ns = if parent_ns.is_empty() {
                node.clone()
            } else {
                format!("{parent_ns}|{node}")
            };
            let idx_s = idx.to_string();
            let id = task_id_ascii(
                ns,
                &[
                    checkpoint_ns.as_str(),
                    step_s,
                    node.as_str(),
                    PUSH,
                    idx_s.as_str(),
                ],
                v,
            );
            let path = PyTuple::new(
                py,
                [
                    intern!(py, "__pregel_push").clone().into_any(),
                    idx.into_pyobject(py)?.into_any(),
                    pyo3::types::PyBool::new(py, false).to_owned().into_any(),
                ],
            )?;
            let arg = packet.getattr(intern!(py, "arg"))?;
            out.push(PyTuple::new(
                py,
                [
                    id_str(py, &id).into_any(),
                    node_obj,
                    path.into_any(),
                    self.spec.push_trigger.bind(py).clone().into_any(),
                    arg,
                ],
            )?);
        }
        Ok(())
    }
}
