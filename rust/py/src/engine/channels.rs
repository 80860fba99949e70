//! The core's channel machines instantiated with Python values: the classes registered by
//! `_core.init`, the `ValueOps` over `Py<PyAny>`, and checkpoint (de)serialisation of states.

use std::sync::{Arc, RwLock};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySet, PyTuple, PyType};
use warpgraph_core::channel::{Barrier, ChannelSpec, Kind, State, ValueOps};
use warpgraph_core::error::CoreError;

pub type V = Py<PyAny>;

/// The Python classes and sentinels the binding needs, registered once by `_core.init`.
pub struct Classes {
    pub missing: V,
    pub send_type: V,
    pub overwrite_type: V,
    pub invalid_update_error: V,
    pub empty_channel_error: V,
    pub last_value: V,
    pub last_value_after_finish: V,
    pub ephemeral_value: V,
    pub binop: V,
    pub topic: V,
    pub barrier: V,
    pub barrier_after_finish: V,
    pub any_value: V,
    pub untracked_value: V,
}

static CLASSES: RwLock<Option<Arc<Classes>>> = RwLock::new(None);

/// Registers the classes (a later call replaces them for specs built afterwards).
pub fn set_classes(c: Classes) {
    let mut g = CLASSES.write().unwrap_or_else(|e| e.into_inner());
    *g = Some(Arc::new(c));
}

/// The registered classes; imports `warpgraph.pregel._engine` (which calls `init`) if needed.
pub fn classes(py: Python<'_>) -> PyResult<Arc<Classes>> {
    let current = || CLASSES.read().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some(c) = current() {
        return Ok(c);
    }
    let _ = py.import("warpgraph.pregel._engine");
    current().ok_or_else(|| {
        pyo3::exceptions::PyRuntimeError::new_err(
            "warpgraph._core.init(...) must be called before building a GraphSpec",
        )
    })
}

/// `ValueOps` over Python objects.
pub struct PyOps<'py> {
    pub py: Python<'py>,
    pub cls: &'py Classes,
}

fn truthy(r: PyResult<Bound<'_, PyAny>>) -> PyResult<bool> {
    r?.is_truthy()
}

impl<'py> PyOps<'py> {
    pub fn is_missing(&self, v: &Bound<'py, PyAny>) -> bool {
        v.is(self.cls.missing.bind(self.py))
    }

    fn is_empty_channel_error(&self, e: &PyErr) -> bool {
        e.is_instance(self.py, self.cls.empty_channel_error.bind(self.py))
    }
}

impl ValueOps for PyOps<'_> {
    type V = V;
    type Err = PyErr;

    fn clone_value(&self, v: &V) -> V {
        v.clone_ref(self.py)
    }

    fn none(&self) -> V {
        self.py.None()
    }

    fn reduce(&self, op: &V, acc: &V, update: &V) -> PyResult<V> {
        op.call1(self.py, (acc.bind(self.py), update.bind(self.py)))
    }

    fn overwrite_value(&self, v: &V) -> PyResult<Option<V>> {
        let py = self.py;
        let b = v.bind(py);
        if b.is_instance(self.cls.overwrite_type.bind(py))? {
            return Ok(Some(b.getattr(intern!(py, "value"))?.unbind()));
        }
        if let Ok(d) = b.cast::<PyDict>() {
            let key = intern!(py, "__overwrite__");
            if d.len() == 1 {
                if let Some(inner) = d.get_item(key)? {
                    return Ok(Some(inner.unbind()));
                }
            }
            if let Some(t) = d.get_item(intern!(py, "type"))? {
                if t.eq(key)? {
                    if let Some(inner) = d.get_item(intern!(py, "value"))? {
                        return Ok(Some(inner.unbind()));
                    }
                }
            }
        }
        Ok(None)
    }

    fn flatten_into(&self, v: &V, out: &mut Vec<V>) -> PyResult<()> {
        let b = v.bind(self.py);
        if let Ok(list) = b.cast::<PyList>() {
            out.extend(list.iter().map(Bound::unbind));
        } else {
            out.push(v.clone_ref(self.py));
        }
        Ok(())
    }

    fn name_index(
        &self,
        names: &[V],
        names_obj: &V,
        lookup: Option<&V>,
        v: &V,
    ) -> PyResult<Option<usize>> {
        let py = self.py;
        let b = v.bind(py);
        // Membership with the collection's own semantics (a set raises for unhashable values).
        if !names_obj.bind(py).contains(b)? {
            return Ok(None);
        }
        if let Some(d) = lookup.and_then(|d| d.bind(py).cast::<PyDict>().ok()) {
            if let Some(i) = d.get_item(b)? {
                return Ok(Some(i.extract()?));
            }
        }
        for (i, n) in names.iter().enumerate() {
            if n.bind(py).is(b) || n.bind(py).eq(b)? {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    fn unknown_name_message(&self, key: &str, v: &V, names: &V) -> String {
        let s = |o: &V| {
            o.bind(self.py)
                .str()
                .map(|s| s.to_string())
                .unwrap_or_default()
        };
        format!("At key '{key}': Value {} not in {}", s(v), s(names))
    }

    fn custom_update(&self, ch: &V, values: &[V]) -> PyResult<bool> {
        let py = self.py;
        let arg = if values.is_empty() {
            PyTuple::empty(py).into_any()
        } else {
            PyList::new(py, values.iter().map(|v| v.bind(py)))?.into_any()
        };
        truthy(ch.bind(py).call_method1(intern!(py, "update"), (arg,)))
    }

    fn custom_consume(&self, ch: &V) -> PyResult<bool> {
        truthy(ch.bind(self.py).call_method0(intern!(self.py, "consume")))
    }

    fn custom_finish(&self, ch: &V) -> PyResult<bool> {
        truthy(ch.bind(self.py).call_method0(intern!(self.py, "finish")))
    }

    fn custom_is_available(&self, ch: &V) -> PyResult<bool> {
        truthy(
            ch.bind(self.py)
                .call_method0(intern!(self.py, "is_available")),
        )
    }

    fn custom_get(&self, ch: &V) -> PyResult<Option<V>> {
        match ch.bind(self.py).call_method0(intern!(self.py, "get")) {
            Ok(v) => Ok(Some(v.unbind())),
            Err(e) if self.is_empty_channel_error(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn custom_copy(&self, ch: &V) -> PyResult<V> {
        Ok(ch
            .bind(self.py)
            .call_method0(intern!(self.py, "copy"))?
            .unbind())
    }
}

fn attr<'py>(
    spec: &Bound<'py, PyAny>,
    name: &Bound<'py, pyo3::types::PyString>,
) -> PyResult<Bound<'py, PyAny>> {
    spec.getattr(name)
}

/// Builds the core description of one channel from its Python spec object.
pub fn channel_spec(
    py: Python<'_>,
    cls: &Classes,
    name: &str,
    spec: &Bound<'_, PyAny>,
) -> PyResult<ChannelSpec<V>> {
    let t = spec.get_type();
    let is = |c: &V| t.is(c.bind(py));
    let key = match spec.getattr(intern!(py, "key")) {
        Ok(k) => k.str()?.to_string(),
        Err(_) => name.to_string(),
    };
    let flag = |n: &str| -> PyResult<bool> { spec.getattr(n)?.is_truthy() };
    let kind = if is(&cls.last_value) {
        Kind::LastValue
    } else if is(&cls.last_value_after_finish) {
        Kind::LastValueAfterFinish
    } else if is(&cls.ephemeral_value) {
        Kind::Ephemeral {
            guard: flag("guard")?,
        }
    } else if is(&cls.untracked_value) {
        Kind::Untracked {
            guard: flag("guard")?,
        }
    } else if is(&cls.any_value) {
        Kind::AnyValue
    } else if is(&cls.topic) {
        Kind::Topic {
            accumulate: flag("accumulate")?,
        }
    } else if is(&cls.binop) {
        let op = attr(spec, intern!(py, "operator"))?.unbind();
        let value = attr(spec, intern!(py, "value"))?;
        let initial = if value.is(cls.missing.bind(py)) {
            None
        } else {
            Some(value.unbind())
        };
        Kind::BinOp { op, initial }
    } else if is(&cls.barrier) || is(&cls.barrier_after_finish) {
        let names_obj = attr(spec, intern!(py, "names"))?;
        let names = names_obj
            .try_iter()?
            .map(|n| n.map(Bound::unbind))
            .collect::<PyResult<Vec<_>>>()?;
        // name -> position, when every name is hashable (else the linear scan is used).
        let index = PyDict::new(py);
        let mut hashable = true;
        for (i, n) in names.iter().enumerate() {
            if index.set_item(n.bind(py), i).is_err() {
                hashable = false;
                break;
            }
        }
        Kind::Barrier {
            names,
            lookup: hashable.then(|| index.into_any().unbind()),
            names_obj: names_obj.unbind(),
            after_finish: is(&cls.barrier_after_finish),
        }
    } else {
        Kind::Custom {
            spec: spec.clone().unbind(),
        }
    };
    Ok(ChannelSpec { key, kind })
}

/// `typ()` for a fresh run: immutable initial values are shared, containers re-created.
fn fresh_initial(py: Python<'_>, v: &V) -> V {
    let b = v.bind(py);
    if b.is_exact_instance_of::<PyList>() {
        return PyList::empty(py).into_any().unbind();
    }
    if b.is_exact_instance_of::<PyDict>() {
        return PyDict::new(py).into_any().unbind();
    }
    if b.is_exact_instance_of::<PySet>() {
        return PySet::empty(py).map_or_else(|_| v.clone_ref(py), |s| s.into_any().unbind());
    }
    let immutable = b.is_none()
        || b.is_exact_instance_of::<pyo3::types::PyInt>()
        || b.is_exact_instance_of::<pyo3::types::PyFloat>()
        || b.is_exact_instance_of::<pyo3::types::PyString>()
        || b.is_exact_instance_of::<pyo3::types::PyBool>()
        || b.is_exact_instance_of::<PyTuple>()
        || b.is_exact_instance_of::<pyo3::types::PyFrozenSet>()
        || b.is_exact_instance_of::<pyo3::types::PyBytes>();
    if immutable {
        return v.clone_ref(py);
    }
    let typ: Bound<'_, PyType> = b.get_type();
    typ.call0().map_or_else(|_| v.clone_ref(py), Bound::unbind)
}

fn pair<'py>(v: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let items: Vec<Bound<'py, PyAny>> = v.try_iter()?.collect::<PyResult<_>>()?;
    match <[_; 2]>::try_from(items) {
        Ok([a, b]) => Ok((a, b)),
        Err(items) => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "expected a (value, finished) pair in the checkpoint, got {} items",
            items.len()
        ))),
    }
}

/// A `_DeltaSnapshot` blob (written while the field was a DeltaChannel): its `.value` counts.
fn is_delta_snapshot(v: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(v.get_type().name()? == "_DeltaSnapshot" && v.hasattr(intern!(v.py(), "value"))?)
}

/// `spec.from_checkpoint(value)`; `value` is `None` when the checkpoint has no entry.
pub fn restore(
    ops: &PyOps<'_>,
    spec: &ChannelSpec<V>,
    value: Option<&Bound<'_, PyAny>>,
) -> PyResult<State<V>> {
    let py = ops.py;
    let value = value.filter(|v| !ops.is_missing(v));
    Ok(match (&spec.kind, value) {
        (Kind::Custom { spec: obj }, v) => {
            let arg = v
                .cloned()
                .unwrap_or_else(|| ops.cls.missing.bind(py).clone());
            State::Custom(
                obj.bind(py)
                    .call_method1(intern!(py, "from_checkpoint"), (arg,))?
                    .unbind(),
            )
        }
        (Kind::BinOp { initial, .. }, None) => {
            State::Value(initial.as_ref().map(|v| fresh_initial(py, v)))
        }
        (Kind::Untracked { .. }, _) | (_, None) => spec.empty_state(ops),
        (Kind::LastValueAfterFinish, Some(v)) => {
            let (value, finished) = pair(v)?;
            State::Deferred {
                value: Some(value.unbind()),
                finished: finished.is_truthy()?,
            }
        }
        (Kind::Topic { .. }, Some(v)) => {
            let src = if v.is_instance_of::<PyTuple>() {
                v.get_item(1)?
            } else {
                v.clone()
            };
            State::Topic(
                src.try_iter()?
                    .map(|x| x.map(Bound::unbind))
                    .collect::<PyResult<_>>()?,
            )
        }
        (
            Kind::Barrier {
                names,
                names_obj,
                lookup,
                after_finish,
            },
            Some(v),
        ) => {
            let (seen_obj, finished) = if *after_finish {
                let (s, f) = pair(v)?;
                (s, f.is_truthy()?)
            } else {
                (v.clone(), false)
            };
            // A restored set object is kept (copied at checkpoint time) like LangGraph keeps it.
            let base = seen_obj
                .is_exact_instance_of::<PySet>()
                .then(|| seen_obj.clone().unbind());
            let items = seen_obj.try_iter()?.map(|item| item.map(Bound::unbind));
            let names = (&names[..], names_obj, lookup.as_ref());
            State::Barrier(Barrier::restore(names, items, finished, base, ops)?)
        }
        (Kind::BinOp { .. }, Some(v)) if is_delta_snapshot(v)? => {
            State::Value(Some(v.getattr(intern!(py, "value"))?.unbind()))
        }
        (_, Some(v)) => State::Value(Some(v.clone().unbind())),
    })
}

/// `channel.checkpoint()`; `None` stands for `MISSING`.
pub fn checkpoint(ops: &PyOps<'_>, spec: &ChannelSpec<V>, state: &State<V>) -> PyResult<Option<V>> {
    let py = ops.py;
    Ok(match (&spec.kind, state) {
        (Kind::Untracked { .. }, _) => None,
        (_, State::Value(v)) => v.as_ref().map(|v| v.clone_ref(py)),
        (_, State::Deferred { value, finished }) => match value {
            Some(v) => Some(
                PyTuple::new(
                    py,
                    [
                        v.bind(py).clone(),
                        pyo3::types::PyBool::new(py, *finished)
                            .to_owned()
                            .into_any(),
                    ],
                )?
                .into_any()
                .unbind(),
            ),
            None => None,
        },
        (_, State::Topic(items)) => Some(
            PyList::new(py, items.iter().map(|v| v.bind(py)))?
                .into_any()
                .unbind(),
        ),
        (
            Kind::Barrier {
                names,
                after_finish,
                ..
            },
            State::Barrier(b),
        ) => {
            let ck = b.checkpoint(names, *after_finish);
            // Insert in LangGraph's insertion order so the set iterates the same way; a restored
            // set is copied (a copy keeps its table layout) and the later names added to it.
            let set = match ck.base {
                Some(b) => b
                    .bind(py)
                    .call_method0(intern!(py, "copy"))?
                    .cast_into::<PySet>()?,
                None => PySet::empty(py)?,
            };
            for n in ck.added() {
                set.add(n.bind(py))?;
            }
            match ck.finished {
                Some(finished) => Some(
                    PyTuple::new(
                        py,
                        [
                            set.into_any(),
                            pyo3::types::PyBool::new(py, finished).to_owned().into_any(),
                        ],
                    )?
                    .into_any()
                    .unbind(),
                ),
                None => Some(set.into_any().unbind()),
            }
        }
        (_, State::Custom(ch)) => {
            let v = ch.bind(py).call_method0(intern!(py, "checkpoint"))?;
            if ops.is_missing(&v) {
                None
            } else {
                Some(v.unbind())
            }
        }
        (_, State::Barrier(_)) => None,
    })
}

/// `channel.get()` as a Python object (topics yield a fresh list).
pub fn get(
    ops: &PyOps<'_>,
    spec: &ChannelSpec<V>,
    state: &State<V>,
) -> Result<V, CoreError<PyErr>> {
    match spec.get(state, ops)? {
        Some(v) => Ok(v),
        None => match state {
            State::Topic(items) => {
                let py = ops.py;
                Ok(PyList::new(py, items.iter().map(|v| v.bind(py)))
                    .map_err(CoreError::External)?
                    .into_any()
                    .unbind())
            }
            _ => Err(CoreError::EmptyChannel),
        },
    }
}
