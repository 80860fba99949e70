//! Engine internals shared by its methods: reads, task inputs, PUSH tasks, task writes.

use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple};
use warpgraph_core::apply::{TaskWrites, Trigger, SKIPPED_WRITE_KEYS};
use warpgraph_core::error::CoreError;
use warpgraph_core::ids::{task_id_from_bytes, task_path_str};
use warpgraph_core::triggers::ReadSpec;

use super::convert::path_part;
use super::errors;
use super::graphspec::PUSH;
use super::pychannel::{self, PyOps, V};
use super::Engine;

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
            None => pychannel::get(&ops, spec, &self.run.states[c]),
            Some(vals) => {
                let mut copy = spec.copy_state(&self.run.states[c], &ops)?;
                spec.update(&mut copy, vals, &ops)?;
                pychannel::get(&ops, spec, &copy)
            }
        }
    }

    pub(crate) fn available(&self, py: Python<'_>, c: usize) -> Result<bool, CoreErr> {
        self.spec.graph.channels[c].is_available(&self.run.states[c], &self.ops(py))
    }

    /// A PULL task's input: `None` when the node gets no task.
    pub(crate) fn node_input(&self, py: Python<'_>, n: usize) -> Result<Option<V>, CoreErr> {
        match &self.spec.graph.topology.nodes[n].read {
            ReadSpec::One(None) => Ok(None),
            ReadSpec::One(Some(c)) => {
                if self.available(py, *c)? {
                    self.read_one(py, *c, None).map(Some)
                } else {
                    Ok(None)
                }
            }
            ReadSpec::Many(cs) => {
                let d = PyDict::new(py);
                for &c in cs {
                    if self.available(py, c)? {
                        let v = self.read_one(py, c, None)?;
                        d.set_item(self.spec.chan_names[c].bind(py), v)
                            .map_err(CoreError::External)?;
                    }
                }
                Ok(Some(d.into_any().unbind()))
            }
        }
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
            let id = task_id_from_bytes(
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
                    PyString::new(py, &id).into_any(),
                    node_obj,
                    path.into_any(),
                    self.spec.push_trigger.bind(py).clone().into_any(),
                    arg,
                ],
            )?);
        }
        Ok(())
    }

    /// One `(name, path, triggers, writes)` task; the path's sort key only when `sort`.
    pub(crate) fn task_writes(
        &self,
        py: Python<'_>,
        task: &Bound<'_, PyAny>,
        sort: bool,
    ) -> PyResult<TaskWrites<V>> {
        let (name, path, triggers, writes): (
            Bound<'_, PyAny>,
            Bound<'_, PyAny>,
            Bound<'_, PyAny>,
            Bound<'_, PyAny>,
        ) = task.extract().map_err(|_| {
            PyTypeError::new_err(
                "apply_writes: each task must be a (name, path, triggers, writes) tuple",
            )
        })?;
        let name_s = match name.cast::<PyString>() {
            Ok(s) => s.to_str()?.to_owned(),
            Err(_) => name.str()?.to_str()?.to_owned(),
        };
        let sort_key = if sort {
            match path_part(&path)? {
                warpgraph_core::ids::PathPart::Tuple(parts) => task_path_str(&parts),
                other => warpgraph_core::ids::path_part_str(&other),
            }
        } else {
            String::new()
        };
        let triggers = self.triggers(&triggers)?;
        let mut out = Vec::new();
        for w in writes.try_iter()? {
            let w = w?;
            let (chan, value): (Bound<'_, PyAny>, Bound<'_, PyAny>) =
                w.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "writes of task '{name_s}' must be (channel, value) tuples"
                    ))
                })?;
            let chan_py = chan.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "task '{name_s}' wrote to a non-str channel {}",
                    chan.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })?;
            let chan_s = chan_py.to_str()?;
            if chan_s.starts_with("__") && SKIPPED_WRITE_KEYS.contains(&chan_s) {
                continue;
            }
            match self.spec.channel_of(chan_py)? {
                Some(c) => out.push((c, value.unbind())),
                None => log_warning(
                    py,
                    format!("Task {name_s} with path {} wrote to unknown channel {chan_s}, ignoring it.", path.str()?),
                )?,
            }
        }
        Ok(TaskWrites {
            name: name_s,
            sort_key,
            triggers,
            writes: out,
        })
    }

    /// Task trigger names resolved to channels (a str is rejected like any non-sequence).
    fn triggers(&self, v: &Bound<'_, PyAny>) -> PyResult<Vec<Trigger>> {
        const WHAT: &str = "task triggers";
        if v.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(format!(
                "{WHAT} must be a sequence of str, not a str"
            )));
        }
        let mut out = Vec::new();
        for item in v
            .try_iter()
            .map_err(|_| PyTypeError::new_err(format!("{WHAT} must be a sequence of str")))?
        {
            let item = item?;
            let s = item.cast::<PyString>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "{WHAT}: expected str, got {}",
                    item.repr().map(|r| r.to_string()).unwrap_or_default()
                ))
            })?;
            out.push(match self.spec.channel_of(s)? {
                Some(c) => Trigger::Channel(c),
                None => Trigger::Other(s.to_str()?.to_owned()),
            });
        }
        Ok(out)
    }
}
