//! `GraphSpec` (a compiled graph's channels and nodes) and `_core.init`.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use warpgraph_core::apply::{Graph, SKIPPED_WRITE_KEYS};
use warpgraph_core::channel::ChannelSpec;
use warpgraph_core::error::CoreError;
use warpgraph_core::triggers::{name_index, ReadSpec, Topology};
use warpgraph_core::version::{FastMap, Version, VersionMap};

use super::channels::{self, Classes, V};
use super::convert::{str_list, version_from_py};
use super::errors;

pub(crate) const TASKS: &str = "__pregel_tasks";
pub(crate) const PUSH: &str = "__pregel_push";
pub(crate) const PULL: &str = "__pregel_pull";

pub(crate) struct SpecInner {
    pub(crate) cls: Arc<Classes>,
    pub(crate) graph: Graph<V>,
    pub(crate) tasks_channel: Option<usize>,
    /// Interned channel and node names (dict keys, task names).
    pub(crate) chan_names: Vec<Py<PyString>>,
    /// `{channel name: index}`: looks names up by Python's cached str hash (names such as
    /// a big join's barrier channel can be kilobytes long).
    pub(crate) chan_dict: Py<PyDict>,
    /// `{id(name object): index}` for the interned node names held in `node_names` (the
    /// task names apply_writes gets back are these very objects).
    pub(crate) node_ptr: FastMap<usize, usize>,
    /// Channels named like a write key `apply_writes` skips.
    pub(crate) chan_skipped: Vec<bool>,
    pub(crate) node_names: Vec<Py<PyString>>,
    pub(crate) pull_paths: Vec<Py<PyTuple>>,
    pub(crate) pull_triggers: Vec<Py<PyTuple>>,
    pub(crate) push_trigger: Py<PyTuple>,
    /// The channel spec objects and node tuples as given.
    pub(crate) channels: Py<PyDict>,
    pub(crate) nodes: Py<PyDict>,
    /// Per node: `{channel name: None}` over the channels it reads, in read order, built
    /// on first use; a node's input dict is a copy with the values filled in (no per-key
    /// insertion or resizing).
    pub(crate) input_templates: Vec<PyOnceLock<Py<PyDict>>>,
    /// Per node reading at least `INPUT_DICT_MIN` channels: the index of its read list
    /// among the distinct such lists (nodes reading the same channels share an input
    /// cache in each engine); `input_groups` is their number.
    pub(crate) input_group: Vec<Option<usize>>,
    pub(crate) input_groups: usize,
}

/// Nodes reading at least this many channels get their input dict from a template or
/// an engine's input cache instead of one insertion per key.
pub(crate) const INPUT_DICT_MIN: usize = 8;

impl SpecInner {
    /// The index of channel `name`.
    pub(crate) fn channel_of(&self, name: &Bound<'_, PyString>) -> PyResult<Option<usize>> {
        match self.chan_dict.bind(name.py()).get_item(name)? {
            Some(i) => Ok(Some(i.extract()?)),
            None => Ok(None),
        }
    }
}

/// A compiled graph's channels and nodes, built once per graph.
#[pyclass(module = "warpgraph._core", frozen)]
pub struct GraphSpec {
    pub(crate) inner: Arc<SpecInner>,
}

fn read_spec(
    index: &FastMap<Arc<str>, usize>,
    node: &str,
    read: &Bound<'_, PyAny>,
) -> PyResult<ReadSpec> {
    if let Ok(s) = read.cast::<PyString>() {
        return Ok(ReadSpec::One(index.get(s.to_str()?).copied()));
    }
    let names = str_list(read, &format!("read channels of node '{node}'"))?;
    Ok(ReadSpec::Many(
        names
            .iter()
            .filter_map(|n| index.get(n.as_str()).copied())
            .collect(),
    ))
}

#[pymethods]
impl GraphSpec {
    #[new]
    fn new(
        py: Python<'_>,
        channels: &Bound<'_, PyDict>,
        nodes: &Bound<'_, PyDict>,
    ) -> PyResult<Self> {
        let cls = channels::classes(py)?;
        let mut names: Vec<Arc<str>> = Vec::with_capacity(channels.len());
        let mut specs: Vec<ChannelSpec<V>> = Vec::with_capacity(channels.len());
        for (k, spec) in channels.iter() {
            let name = k
                .cast::<PyString>()
                .map_err(|_| {
                    PyTypeError::new_err(format!(
                        "channel names must be str, got {}",
                        k.repr().map(|r| r.to_string()).unwrap_or_default()
                    ))
                })?
                .to_str()?
                .to_owned();
            specs.push(channels::channel_spec(py, &cls, &name, &spec)?);
            names.push(Arc::from(name.as_str()));
        }
        let index = name_index(&names);
        let mut node_list = Vec::with_capacity(nodes.len());
        for (k, v) in nodes.iter() {
            let name = k
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("node names must be str"))?
                .to_str()?
                .to_owned();
            let (triggers, read): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
                v.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "node '{name}' must be given as a (triggers, read channels) tuple"
                    ))
                })?;
            let triggers = str_list(&triggers, &format!("triggers of node '{name}'"))?;
            let read = read_spec(&index, &name, &read)?;
            node_list.push((name, triggers, read));
        }
        let topology = Topology::new(&index, names.len(), node_list)
            .map_err(|e| errors::to_py(py, &cls, e))?;
        let node_names = topology
            .nodes
            .iter()
            .map(|n| PyString::intern(py, &n.name).unbind())
            .collect::<Vec<_>>();
        let chan_names = names
            .iter()
            .map(|n| PyString::intern(py, n).unbind())
            .collect::<Vec<_>>();
        let chan_dict = PyDict::new(py);
        for (i, n) in chan_names.iter().enumerate() {
            chan_dict.set_item(n.bind(py), i)?;
        }
        let node_ptr = node_names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_ptr() as usize, i))
            .collect();
        let chan_skipped = names
            .iter()
            .map(|n| SKIPPED_WRITE_KEYS.contains(&&**n))
            .collect();
        let pull = PyString::intern(py, PULL);
        let pull_paths = node_names
            .iter()
            .map(|n| PyTuple::new(py, [pull.clone(), n.bind(py).clone()]).map(Bound::unbind))
            .collect::<PyResult<_>>()?;
        let pull_triggers = topology
            .nodes
            .iter()
            .map(|n| {
                PyTuple::new(
                    py,
                    n.sorted_triggers.iter().map(|t| PyString::intern(py, t)),
                )
                .map(Bound::unbind)
            })
            .collect::<PyResult<_>>()?;
        let tasks_channel = index.get(TASKS).copied();
        let graph = Graph::new(names, specs, topology);
        let n_nodes = graph.topology.nodes.len();
        let mut lists: HashMap<&[usize], usize> = HashMap::new();
        let input_group: Vec<Option<usize>> = graph
            .topology
            .nodes
            .iter()
            .map(|node| match &node.read {
                ReadSpec::Many(cs) if cs.len() >= INPUT_DICT_MIN => {
                    let next = lists.len();
                    Some(*lists.entry(cs.as_slice()).or_insert(next))
                }
                _ => None,
            })
            .collect();
        let input_groups = lists.len();
        Ok(GraphSpec {
            inner: Arc::new(SpecInner {
                cls,
                graph,
                tasks_channel,
                chan_names,
                chan_dict: chan_dict.unbind(),
                node_ptr,
                chan_skipped,
                node_names,
                pull_paths,
                pull_triggers,
                push_trigger: PyTuple::new(py, [PUSH])?.unbind(),
                channels: channels.copy()?.unbind(),
                nodes: nodes.copy()?.unbind(),
                input_templates: (0..n_nodes).map(|_| PyOnceLock::new()).collect(),
                input_group,
                input_groups,
            }),
        })
    }

    /// The channel specs (a fresh dict).
    #[getter]
    fn channels<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.inner.channels.bind(py).copy()
    }

    /// The nodes as given: `{name: (triggers, read channels)}` (a fresh dict).
    #[getter]
    fn nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.inner.nodes.bind(py).copy()
    }

    /// LangGraph's `trigger_to_nodes`: `{channel: [node, ...]}` in node order (a fresh dict).
    #[getter]
    fn trigger_to_nodes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let graph = &self.inner.graph;
        let out = PyDict::new(py);
        for (n, node) in graph.topology.nodes.iter().enumerate() {
            for &c in &node.triggers {
                let key = &*graph.names[c];
                let list = match out.get_item(key)? {
                    Some(l) => l.cast_into::<PyList>()?,
                    None => {
                        let l = PyList::empty(py);
                        out.set_item(key, &l)?;
                        l
                    }
                };
                list.append(self.inner.node_names[n].bind(py))?;
            }
        }
        Ok(out)
    }
    /// The PULL tasks of a stored checkpoint, without restoring it in an Engine: the
    /// indices, in node order, of the nodes that fire (LangGraph's `_triggers`, the
    /// Engine's own `Topology::fires`) given the checkpoint's `channel_versions` and
    /// `versions_seen` and `available` (a container of the names of the channels that hold
    /// a value), less those whose single read channel holds none (as `prepare_next_tasks`
    /// skips them). Every node is considered (a snapshot's rule: no updated channels); only
    /// trigger channels' versions are read; versions that do not compare raise TypeError.
    fn firing_nodes(
        &self,
        channel_versions: &Bound<'_, PyDict>,
        versions_seen: &Bound<'_, PyDict>,
        available: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<usize>> {
        let py = channel_versions.py();
        let spec = &*self.inner;
        let graph = &spec.graph;
        let topo = &graph.topology;
        let Some((_, first)) = channel_versions.iter().next() else {
            return Ok(Vec::new()); // no versions: nothing ever fires
        };
        let null = version_from_py(&first)?.null_of();
        let n = graph.names.len();
        let mut versions: Vec<Option<Version>> = vec![None; n];
        let mut avail = vec![false; n];
        for c in (0..n).filter(|&c| topo.is_trigger(c)) {
            let name = spec.chan_names[c].bind(py);
            if let Some(v) = channel_versions.get_item(name)? {
                versions[c] = Some(version_from_py(&v)?);
            }
            avail[c] = available.contains(name)?;
        }
        let reads = |c: usize| -> PyResult<bool> {
            Ok(avail[c]
                || (!topo.is_trigger(c) && available.contains(spec.chan_names[c].bind(py))?))
        };
        let mut out = Vec::new();
        let mut seen; // (the node's seen versions of its triggers)
        for (i, node) in topo.nodes.iter().enumerate() {
            let node_seen = match versions_seen.get_item(spec.node_names[i].bind(py))? {
                None => None,
                Some(d) => {
                    let d = d.cast::<PyDict>()?;
                    seen = VersionMap::with_capacity(node.triggers.len());
                    for &c in &node.triggers {
                        if let Some(v) = d.get_item(spec.chan_names[c].bind(py))? {
                            seen.insert_arc(&graph.names[c], version_from_py(&v)?);
                        }
                    }
                    Some(&seen)
                }
            };
            let fires = topo
                .fires(
                    i,
                    &graph.names,
                    |c| versions[c].as_ref(),
                    node_seen,
                    &null,
                    |c| Ok::<bool, CoreError<PyErr>>(avail[c]),
                )
                .map_err(|e| errors::to_py(py, &spec.cls, e))?;
            let gets_input = match node.read {
                ReadSpec::One(None) => false,
                ReadSpec::One(Some(c)) => reads(c)?,
                ReadSpec::Many(_) => true,
            };
            if fires && gets_input {
                out.push(i);
            }
        }
        Ok(out)
    }
}

const KINDS: &[&str] = &[
    "LastValue",
    "LastValueAfterFinish",
    "EphemeralValue",
    "BinaryOperatorAggregate",
    "Topic",
    "NamedBarrierValue",
    "NamedBarrierValueAfterFinish",
    "AnyValue",
    "UntrackedValue",
];

/// `_core.init(...)`: registers the Python classes the engine needs.
#[pyfunction]
#[pyo3(signature = (*, missing, send_type, overwrite_type, invalid_update_error, empty_channel_error, channel_types, fast_paths=true))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn init(
    missing: Py<PyAny>,
    send_type: Py<PyAny>,
    overwrite_type: Py<PyAny>,
    invalid_update_error: Py<PyAny>,
    empty_channel_error: Py<PyAny>,
    channel_types: &Bound<'_, PyDict>,
    fast_paths: bool,
) -> PyResult<()> {
    // fast_paths=False (WARPGRAPH_FAST_PATHS=0): envelopes are always encoded from the dicts
    crate::envelope::sections::set_enabled(fast_paths);
    // A kind left out is never matched: such channels run through the generic custom path.
    let py = channel_types.py();
    let get = |k: &str| -> PyResult<Py<PyAny>> {
        Ok(channel_types
            .get_item(k)?
            .map_or_else(|| py.None(), Bound::unbind))
    };
    for (k, _) in channel_types.iter() {
        let k: String = k.extract()?;
        if !KINDS.contains(&k.as_str()) {
            return Err(PyKeyError::new_err(format!(
                "init: unknown channel kind {k:?} in channel_types"
            )));
        }
    }
    channels::set_classes(Classes {
        missing,
        send_type,
        overwrite_type,
        invalid_update_error,
        empty_channel_error,
        last_value: get("LastValue")?,
        last_value_after_finish: get("LastValueAfterFinish")?,
        ephemeral_value: get("EphemeralValue")?,
        binop: get("BinaryOperatorAggregate")?,
        topic: get("Topic")?,
        barrier: get("NamedBarrierValue")?,
        barrier_after_finish: get("NamedBarrierValueAfterFinish")?,
        any_value: get("AnyValue")?,
        untracked_value: get("UntrackedValue")?,
    });
    Ok(())
}
