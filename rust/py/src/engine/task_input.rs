//! apply_writes' input: the `(name, path, triggers, writes)` tasks converted into reused
//! core buffers, with channel names resolved by object identity first.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use warpgraph_core::apply::{TaskWrites, Trigger, SKIPPED_WRITE_KEYS};
use warpgraph_core::version::FastMap;

use super::channels::V;
use super::convert::write_path_key;
use super::graphspec::SpecInner;
use super::ops::log_warning;
use super::Engine;

/// Channel name objects by identity: `{id(obj): (obj, channel)}`, seeded with the graph's
/// own name objects and extended with equal str objects met in tasks. Holding `obj` keeps
/// its id from being reused.
#[derive(Default)]
pub(crate) struct Aliases(FastMap<usize, (Py<PyString>, usize)>);

/// Bound on remembered aliases (reset when exceeded).
const MAX_ALIASES: usize = 4096;

impl Aliases {
    /// Seeds the graph's own names unless that was done (an Engine that never applies
    /// writes, such as a state snapshot's, never pays for it).
    pub(crate) fn seed_once(&mut self, py: Python<'_>, spec: &SpecInner) {
        if self.0.is_empty() {
            self.seed(py, spec);
        }
    }

    fn seed(&mut self, py: Python<'_>, spec: &SpecInner) {
        self.0.clear();
        self.0.reserve(spec.chan_names.len());
        for (c, n) in spec.chan_names.iter().enumerate() {
            self.0.insert(n.as_ptr() as usize, (n.clone_ref(py), c));
        }
    }

    /// The channel a name object stands for, by identity.
    #[inline]
    fn known(&self, obj: &Bound<'_, PyAny>) -> Option<usize> {
        self.0.get(&(obj.as_ptr() as usize)).map(|e| e.1)
    }

    /// The channel named `s` (by value), remembering exact str objects.
    fn resolve(&mut self, spec: &SpecInner, s: &Bound<'_, PyString>) -> PyResult<Option<usize>> {
        let c = spec.channel_of(s)?;
        if let Some(c) = c {
            if s.is_exact_instance_of::<PyString>() {
                if self.0.len() >= MAX_ALIASES + spec.chan_names.len() {
                    self.seed(s.py(), spec);
                }
                self.0.insert(s.as_ptr() as usize, (s.clone().unbind(), c));
            }
        }
        Ok(c)
    }
}

impl Engine {
    /// Fills `pool[..n]` from the tasks of apply_writes; returns `n`.
    pub(crate) fn fill_tasks(
        &self,
        py: Python<'_>,
        tasks: &Bound<'_, PyAny>,
        pool: &mut Vec<TaskWrites<V>>,
        aliases: &mut Aliases,
    ) -> PyResult<usize> {
        let mut fill = |i: usize, t: &Bound<'_, PyAny>, sort: bool| {
            if pool.len() <= i {
                pool.push(TaskWrites {
                    name: String::new(),
                    node: None,
                    sort_key: String::new(),
                    triggers: Vec::new(),
                    writes: Vec::new(),
                });
            }
            self.task_writes(py, t, sort, &mut pool[i], aliases)
        };
        if let Ok(list) = tasks.cast::<PyList>() {
            let sort = list.len() > 1;
            let mut n = 0;
            for t in list.iter() {
                fill(n, &t, sort)?;
                n += 1;
            }
            return Ok(n);
        }
        let items = tasks.try_iter()?.collect::<PyResult<Vec<_>>>()?;
        let sort = items.len() > 1;
        for (i, t) in items.iter().enumerate() {
            fill(i, t, sort)?;
        }
        Ok(items.len())
    }

    /// Fills `out` (a reused buffer) from one `(name, path, triggers, writes)` task; the
    /// path's sort key only when `sort`.
    pub(crate) fn task_writes(
        &self,
        py: Python<'_>,
        task: &Bound<'_, PyAny>,
        sort: bool,
        out: &mut TaskWrites<V>,
        aliases: &mut Aliases,
    ) -> PyResult<()> {
        let bad_task = || {
            PyTypeError::new_err(
                "apply_writes: each task must be a (name, path, triggers, writes) tuple",
            )
        };
        let t = task.cast::<PyTuple>().map_err(|_| bad_task())?;
        if t.len() != 4 {
            return Err(bad_task());
        }
        let name = t.get_borrowed_item(0)?;
        let path = t.get_borrowed_item(1)?;
        let triggers = t.get_borrowed_item(2)?;
        let writes = t.get_borrowed_item(3)?;
        out.name.clear();
        out.node = self.spec.node_ptr.get(&(name.as_ptr() as usize)).copied();
        match (out.node, name.cast::<PyString>()) {
            // (one of the graph's own node name objects: its text is at hand)
            (Some(n), _) => out.name.push_str(&self.spec.graph.topology.nodes[n].name),
            (None, Ok(s)) => out.name.push_str(s.to_str()?),
            (None, Err(_)) => out.name.push_str(name.str()?.to_str()?),
        }
        out.sort_key.clear();
        if sort {
            write_path_key(&path, &mut out.sort_key)?;
        }
        out.triggers.clear();
        self.triggers(&triggers, &mut out.triggers, aliases)?;
        out.writes.clear();
        match writes.cast::<PyList>() {
            Ok(list) => {
                for w in list.iter() {
                    self.task_write(py, &w, &out.name, &path, &mut out.writes, aliases)?;
                }
            }
            Err(_) => {
                for w in writes.try_iter()? {
                    self.task_write(py, &w?, &out.name, &path, &mut out.writes, aliases)?;
                }
            }
        }
        Ok(())
    }

    /// One `(channel, value)` write of task `name`, appended to `out` if it is routed.
    fn task_write(
        &self,
        py: Python<'_>,
        w: &Bound<'_, PyAny>,
        name: &str,
        path: &Bound<'_, PyAny>,
        out: &mut Vec<(usize, V)>,
        aliases: &mut Aliases,
    ) -> PyResult<()> {
        let bad = || {
            PyTypeError::new_err(format!(
                "writes of task '{name}' must be (channel, value) tuples"
            ))
        };
        let pair = w.cast::<PyTuple>().map_err(|_| bad())?;
        if pair.len() != 2 {
            return Err(bad());
        }
        let chan = pair.get_borrowed_item(0)?;
        let value = pair.get_borrowed_item(1)?;
        // The graph's own name objects: no string work at all.
        if let Some(c) = aliases.known(&chan) {
            if !self.spec.chan_skipped[c] {
                out.push((c, value.to_owned().unbind()));
            }
            return Ok(());
        }
        let chan_py = chan.cast::<PyString>().map_err(|_| {
            PyTypeError::new_err(format!(
                "task '{name}' wrote to a non-str channel {}",
                chan.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        let chan_s = chan_py.to_str()?;
        if chan_s.starts_with("__") && SKIPPED_WRITE_KEYS.contains(&chan_s) {
            return Ok(());
        }
        match aliases.resolve(&self.spec, &chan_py)? {
            Some(c) => out.push((c, value.to_owned().unbind())),
            None => log_warning(
                py,
                format!(
                    "Task {name} with path {} wrote to unknown channel {chan_s}, ignoring it.",
                    path.str()?
                ),
            )?,
        }
        Ok(())
    }

    /// Task trigger names resolved to channels (a str is rejected like any non-sequence).
    fn triggers(
        &self,
        v: &Bound<'_, PyAny>,
        out: &mut Vec<Trigger>,
        aliases: &mut Aliases,
    ) -> PyResult<()> {
        const WHAT: &str = "task triggers";
        if v.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(format!(
                "{WHAT} must be a sequence of str, not a str"
            )));
        }
        if let Ok(t) = v.cast::<PyTuple>() {
            for item in t.iter_borrowed() {
                out.push(self.trigger(&item, aliases)?);
            }
            return Ok(());
        }
        for item in v
            .try_iter()
            .map_err(|_| PyTypeError::new_err(format!("{WHAT} must be a sequence of str")))?
        {
            out.push(self.trigger(&item?, aliases)?);
        }
        Ok(())
    }

    fn trigger(&self, item: &Bound<'_, PyAny>, aliases: &mut Aliases) -> PyResult<Trigger> {
        if let Some(c) = aliases.known(item) {
            return Ok(Trigger::Channel(c));
        }
        let s = item.cast::<PyString>().map_err(|_| {
            PyTypeError::new_err(format!(
                "task triggers: expected str, got {}",
                item.repr().map(|r| r.to_string()).unwrap_or_default()
            ))
        })?;
        Ok(match aliases.resolve(&self.spec, s)? {
            Some(c) => Trigger::Channel(c),
            None => Trigger::Other(s.to_str()?.to_owned()),
        })
    }
}
