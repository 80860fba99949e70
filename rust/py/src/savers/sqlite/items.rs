//! The native writer's items for a list of operations in one crossing
//! (`SqliteCore.native_items`): for the usual ones, the config's ids, the parent's and
//! skip-delta base's version states from the cache or the queued puts, the put in one
//! crossing (`put::put_tuple`) or the writes' rows (`sql::rows::write_rows_for`), and
//! the new state queued.
//!
//! An operation that is not the usual case stops the walk and goes back to Python by
//! index. A parent or base state neither cached nor queued is read from the database
//! there, into the cache, and the walk goes on from that op. Any other one is made by
//! the general path (`SqliteCore.native_item`: `prepare`, `put_rows`): an op of another
//! type, a config or id that is not a plain dict or str, a put the native put declines
//! (a value the serializer rejects, a metadata entry left to `json`: the general path
//! names what is wrong). Both paths make the same items.
use pyo3::exceptions::PyTypeError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyList, PySet, PyString, PyTuple, PyType};

use super::put::{put_tuple, Target};
use crate::savers::sql::rows::write_rows_for;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SqliteItems>()?;
    Ok(())
}

/// What a `SqliteCore` with the default serializer gives its native items: its cache
/// and queued states (the very dicts, shared) and the constants its Python path passes.
#[pyclass(module = "warpgraph._core", frozen)]
pub struct SqliteItems {
    /// `_states` (an OrderedDict: a hit moves to its end) and `_pending`.
    states: Py<PyDict>,
    pending: Py<PyDict>,
    dumps: Py<PyAny>,
    excluded: Py<PySet>,
    inline_max: usize,
    core_keys: Py<PyAny>,
    idx_map: Py<PyDict>,
    /// `VersionsState`, `PutOp`, `WritesOp`.
    state_cls: Py<PyAny>,
    put_cls: Py<PyType>,
    writes_cls: Py<PyType>,
    no_expectation: Py<PyAny>,
    expected_key: Py<PyString>,
    /// `encode(thread, ns, channel, version, value)` of the list values (append deltas),
    /// or None.
    lists: Option<Py<PyAny>>,
}

/// Why the walk stopped at an op.
enum Stop {
    /// Python's general path makes its item.
    General,
    /// A parent or base state is neither cached nor queued: Python reads it from the
    /// database into the cache, then calls again.
    Unknown,
}

type Found<'py> = Result<Bound<'py, PyTuple>, Stop>;

/// Where an item's outcome goes: a failure sink, or a future (`want_result`: given the
/// op's result).
struct Report<'a, 'py> {
    target: &'a Bound<'py, PyAny>,
    want_result: bool,
}

/// A version state found without the database, with the seq it is queued with (if it is).
type Known<'py> = (Bound<'py, PyAny>, Option<Bound<'py, PyAny>>);

#[pymethods]
impl SqliteItems {
    /// `caches`: `(_states, _pending)`; `encoding`: `(dumps, excluded metadata keys,
    /// inline_max, core keys, WRITES_IDX_MAP)`; `classes`: `(VersionsState, PutOp,
    /// WritesOp)`; `fence`: `(NO_EXPECTATION, the config key of an expected head)`;
    /// `lists`: the list encoder or None.
    #[new]
    #[pyo3(signature = (caches, encoding, classes, fence, lists=None))]
    fn new(
        caches: (Py<PyDict>, Py<PyDict>),
        encoding: (Py<PyAny>, Py<PySet>, usize, Py<PyAny>, Py<PyDict>),
        classes: (Py<PyAny>, Py<PyType>, Py<PyType>),
        fence: (Py<PyAny>, Py<PyString>),
        lists: Option<Py<PyAny>>,
    ) -> Self {
        let (states, pending) = caches;
        let (dumps, excluded, inline_max, core_keys, idx_map) = encoding;
        let (state_cls, put_cls, writes_cls) = classes;
        let (no_expectation, expected_key) = fence;
        SqliteItems {
            states,
            pending,
            dumps,
            excluded,
            inline_max,
            core_keys,
            idx_map,
            state_cls,
            put_cls,
            writes_cls,
            no_expectation,
            expected_key,
            lists,
        }
    }

    /// Appends to `items` the items of `ops[start..]` (seqs `seq + index + 1`, failures
    /// reported to `target`, a future given the op's result when `want_result`) until
    /// one needs Python: returns its index and whether it only needs states read from the
    /// database (`Stop::Unknown`), or `(len(ops), False)`.
    fn extend<'py>(
        &self,
        ops: &Bound<'py, PyList>,
        start: usize,
        seq: u64,
        target: &Bound<'py, PyAny>,
        want_result: bool,
        items: &Bound<'py, PyList>,
    ) -> PyResult<(usize, bool)> {
        let py = ops.py();
        let to = Report {
            target,
            want_result,
        };
        for i in start..ops.len() {
            let op = ops.get_item(i)?;
            let op_seq = seq + i as u64 + 1;
            let ty = op.get_type();
            let found = if ty.is(self.writes_cls.bind(py)) {
                self.writes_item(&op, op_seq, &to)?
            } else if ty.is(self.put_cls.bind(py)) {
                self.put_item(&op, op_seq, &to)?
            } else {
                Err(Stop::General)
            };
            match found {
                Ok(item) => items.append(item)?,
                Err(stop) => return Ok((i, matches!(stop, Stop::Unknown))),
            }
        }
        Ok((ops.len(), false))
    }
}

/// A config's `(configurable, thread, ns, checkpoint_id)` when they are plain: a dict,
/// a str thread id, a str (or absent / empty) namespace and a str or absent id.
type Ids<'py> = (
    Bound<'py, PyDict>,
    Bound<'py, PyString>,
    Bound<'py, PyString>,
    Option<Bound<'py, PyString>>,
);

fn plain_ids<'py>(config: &Bound<'py, PyAny>) -> PyResult<Option<Ids<'py>>> {
    let py = config.py();
    let Ok(config) = config.cast::<PyDict>() else {
        return Ok(None);
    };
    let Some(conf) = config.get_item(intern!(py, "configurable"))? else {
        return Ok(None);
    };
    let Ok(conf) = conf.cast_into::<PyDict>() else {
        return Ok(None);
    };
    let str_of =
        |key: &Bound<'py, PyString>| -> PyResult<Result<Option<Bound<'py, PyString>>, ()>> {
            match conf.get_item(key)? {
                None => Ok(Ok(None)),
                Some(v) if v.is_none() => Ok(Ok(None)),
                Some(v) => Ok(v.cast_into_exact::<PyString>().map(Some).map_err(|_| ())),
            }
        };
    let Ok(Some(thread)) = str_of(intern!(py, "thread_id"))? else {
        return Ok(None);
    };
    let ns = match str_of(intern!(py, "checkpoint_ns"))? {
        Ok(Some(ns)) => ns,
        Ok(None) => intern!(py, "").clone(),
        Err(()) => return Ok(None),
    };
    let Ok(cid) = str_of(intern!(py, "checkpoint_id"))? else {
        return Ok(None);
    };
    Ok(Some((conf, thread, ns, cid)))
}

impl SqliteItems {
    /// `("writes", seq, regular, special, step, target, want_result, fence)`.
    fn writes_item<'py>(
        &self,
        op: &Bound<'py, PyAny>,
        seq: u64,
        to: &Report<'_, 'py>,
    ) -> PyResult<Found<'py>> {
        let py = op.py();
        let Some((_, thread, ns, Some(cid))) = plain_ids(&op.getattr(intern!(py, "config"))?)?
        else {
            return Ok(Err(Stop::General));
        };
        if cid.to_str()?.is_empty() {
            return Ok(Err(Stop::General)); // (Python names the error)
        }
        let ids = [
            thread.as_any(),
            ns.as_any(),
            cid.as_any(),
            &op.getattr(intern!(py, "task_id"))?,
            &op.getattr(intern!(py, "task_path"))?,
        ];
        let writes = op.getattr(intern!(py, "writes"))?;
        let rows = write_rows_for(
            ids,
            &writes,
            self.idx_map.bind(py),
            self.dumps.bind(py),
            true,
        );
        let (regular, special) = match rows {
            Ok(r) => r,
            Err(e) if e.is_instance_of::<PyTypeError>(py) => {
                return Ok(Err(Stop::General)); // (the precise error there)
            }
            Err(e) => return Err(e),
        };
        // a fenced op's (thread, ns, expected head), as `SqliteCore.prepare` makes it
        let expected = op.getattr(intern!(py, "expected_head"))?;
        let fence = if expected.is(self.no_expectation.bind(py)) {
            py.None().into_bound(py)
        } else {
            PyTuple::new(py, [thread.into_any(), ns.into_any(), expected])?.into_any()
        };
        let step = PyTuple::new(py, [&regular, &special, &fence])?;
        let item = PyTuple::new(
            py,
            [
                intern!(py, "writes").clone().into_any(),
                PyInt::new(py, seq).into_any(),
                regular.into_any(),
                special.into_any(),
                step.into_any(),
                to.target.clone(),
                PyBool::new(py, to.want_result).to_owned().into_any(),
                fence,
            ],
        )?;
        Ok(Ok(item))
    }

    /// The version state of checkpoint `cid` when cached (a hit moves to the cache's end,
    /// as `_cached` does) or queued: `(state, seq it was queued with)`.
    fn known<'py>(&self, key: &Bound<'py, PyTuple>) -> PyResult<Option<Known<'py>>> {
        let py = key.py();
        let states = self.states.bind(py);
        let queued = self.pending.bind(py).get_item(key)?;
        let seq = match &queued {
            Some(q) => Some(q.cast::<PyTuple>()?.get_item(0)?),
            None => None,
        };
        if let Some(state) = states.get_item(key)? {
            states.call_method1(intern!(py, "move_to_end"), (key,))?;
            return Ok(Some((state, seq)));
        }
        match queued {
            Some(q) => Ok(Some((q.cast::<PyTuple>()?.get_item(1)?, seq))),
            None => Ok(None),
        }
    }

    /// `("put", seq, fenced, expected, row, rows, depends_on, step, target, want_result,
    /// its config if want_result)`.
    fn put_item<'py>(
        &self,
        op: &Bound<'py, PyAny>,
        seq: u64,
        to: &Report<'_, 'py>,
    ) -> PyResult<Found<'py>> {
        let py = op.py();
        let python = Ok(Err(Stop::General));
        let checkpoint = op.getattr(intern!(py, "checkpoint"))?;
        let new_versions = op.getattr(intern!(py, "new_versions"))?;
        let (Ok(checkpoint), Ok(new_versions)) = (
            checkpoint.cast_exact::<PyDict>(),
            new_versions.cast_exact::<PyDict>(),
        ) else {
            return python;
        };
        let config = op.getattr(intern!(py, "config"))?;
        let Some((conf, thread, ns, parent_id)) = plain_ids(&config)? else {
            return python;
        };
        // the parent's state and its skip-delta base's (`parent_and_base`)
        let mut parent = None;
        let mut depends_on = None;
        let mut base = None;
        if let Some(pid) = parent_id
            .as_ref()
            .filter(|p| p.to_str().is_ok_and(|s| !s.is_empty()))
        {
            let key = PyTuple::new(py, [&thread, &ns, pid])?;
            let Some((state, queued)) = self.known(&key)? else {
                return Ok(Err(Stop::Unknown));
            };
            depends_on = queued;
            let depth: i64 = state.getattr(intern!(py, "depth"))?.extract()?;
            let mut want = depth + 1;
            want -= want & -want;
            let mut b = state.clone();
            loop {
                let b_depth: i64 = b.getattr(intern!(py, "depth"))?.extract()?;
                let b_id = b.getattr(intern!(py, "base_id"))?;
                if b_depth <= want || b_id.is_none() {
                    break;
                }
                let key = PyTuple::new(py, [thread.as_any(), ns.as_any(), &b_id])?;
                let Some((next, _)) = self.known(&key)? else {
                    return Ok(Err(Stop::Unknown));
                };
                b = next;
            }
            parent = Some(state);
            base = Some(b);
        }
        let put_target = Target {
            thread: &thread,
            ns: &ns,
            parent_id: parent_id.clone().map(Bound::into_any),
        };
        let got = put_tuple(
            &put_target,
            checkpoint,
            new_versions,
            &config,
            &op.getattr(intern!(py, "metadata"))?,
            self.excluded.bind(py),
            self.dumps.bind(py),
            (parent, base),
            self.inline_max,
            self.core_keys.bind(py),
            self.lists.as_ref().map(|l| l.bind(py)),
        )?;
        let Some(got) = got else {
            return Ok(Err(Stop::General));
        };
        // (blobs, metadata, run_id, cv, vs, inline, depth, base_id, row, rows)
        let part = |i: usize| got.get_item(i);
        let cid = checkpoint
            .get_item(intern!(py, "id"))?
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err("id"))?;
        let no_expectation = self.no_expectation.bind(py);
        let mut expected = op.getattr(intern!(py, "expected_head"))?;
        if expected.is(no_expectation) {
            expected = conf
                .get_item(self.expected_key.bind(py))?
                .unwrap_or_else(|| no_expectation.clone());
        }
        let fenced = !expected.is(no_expectation);
        let none = || py.None().into_bound(py);
        let step = PyTuple::new(
            py,
            [
                thread.clone().into_any(),
                ns.clone().into_any(),
                cid.clone(),
                parent_id.map_or_else(none, Bound::into_any),
                checkpoint.clone().into_any(),
                part(0)?,
                part(1)?,
                part(2)?,
                expected.clone(),
                new_versions.clone().into_any(),
            ],
        )?;
        let state = self.state_cls.bind(py).call1((
            &cid,
            part(6)?,
            part(7)?,
            part(3)?,
            part(4)?,
            part(5)?,
        ))?;
        let result = if to.want_result {
            // `codec.config_of(thread, ns, cid)`
            let conf = PyDict::new(py);
            conf.set_item(intern!(py, "thread_id"), &thread)?;
            conf.set_item(intern!(py, "checkpoint_ns"), &ns)?;
            conf.set_item(intern!(py, "checkpoint_id"), &cid)?;
            let config = PyDict::new(py);
            config.set_item(intern!(py, "configurable"), conf)?;
            config.into_any()
        } else {
            none()
        };
        let item = PyTuple::new(
            py,
            [
                intern!(py, "put").clone().into_any(),
                PyInt::new(py, seq).into_any(),
                PyBool::new(py, fenced).to_owned().into_any(),
                if fenced { expected } else { none() },
                part(8)?,
                part(9)?,
                depends_on.unwrap_or_else(none),
                step.into_any(),
                to.target.clone(),
                PyBool::new(py, to.want_result).to_owned().into_any(),
                result,
            ],
        )?;
        // queued: (stored again: the dict stays in seq order)
        let pending = self.pending.bind(py);
        let key = PyTuple::new(py, [thread.into_any(), ns.into_any(), cid])?;
        if pending.contains(&key)? {
            pending.del_item(&key)?;
        }
        pending.set_item(key, (PyInt::new(py, seq), state))?;
        Ok(Ok(item))
    }
}
