//! `SqliteWriter`: the SQLite saver's group-commit thread, which commits without the GIL.
//!
//! Operations arrive already serialized and encoded (`SqliteCore.native_items`), as rows of
//! plain values, and are copied into Rust on the submitting thread. The thread commits
//! them in batches on its own connection (`warpgraph_core::sqlite`), on the interpreter's
//! own SQLite library, so it runs while the submitting thread keeps the GIL. It takes the
//! GIL only to report: when a batch holds futures or markers to resolve, and when a batch
//! needs the saver's general path (a fence that did not hold, an id stored again, an SQL
//! error): then it rolls back and hands the batch's prepared steps to `fallback`, whose
//! per-step results (a value, or an exception) decide each operation's outcome. A second
//! thread and connection checkpoint the write-ahead log beside it (`Checkpointer`), so
//! that runs do not wait for that copy (about 8 ms per 1,000 frames on a small VM).
//!
//! The queue, the thread's loop and its timing are `warpgraph_core::sqlite::group`'s; this
//! module converts the items and reports batches to Python.
use std::time::Duration;

use pyo3::exceptions::{PyBaseException, PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyInt, PyList, PyString, PyTuple};
use warpgraph_core::sqlite::{
    Api, BatchWriter, Checkpointer, Connection, GroupCommit, Op, Queued, Sql, SqliteStore, Table,
    Timing, Value,
};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SqliteWriter>()?;
    m.add_function(wrap_pyfunction!(sqlite_library, m)?)?;
    // the item format with a writes op's fence (a build without it would store fenced
    // writes unchecked: the saver then keeps its Python writer and path)
    m.add("SQLITE_WRITES_FENCE", true)?;
    Ok(())
}

fn load(library: Option<&str>) -> PyResult<&'static Api> {
    Api::load(library, true).map_err(PyRuntimeError::new_err)
}

/// `(sqlite3_libversion_number(), sqlite3_memory_used())` of the SQLite that `library` (an
/// already loaded shared object; None: the main program) uses.
#[pyfunction]
#[pyo3(signature = (library=None))]
fn sqlite_library(library: Option<&str>) -> PyResult<(i32, i64)> {
    let api = load(library)?;
    // SAFETY: both are argument-less, thread-safe SQLite functions
    unsafe {
        Ok((
            (api.sqlite3_libversion_number)(),
            (api.sqlite3_memory_used)(),
        ))
    }
}

/// A queued operation with what reporting it needs.
struct Entry {
    seq: u64,
    /// The rows (taken by the thread when it inserts them; a marker has none).
    op: Option<Op>,
    /// The saver's prepared step (what `fallback` runs); None only for a marker, which is
    /// resolved once everything queued before it is committed.
    step: Option<Py<PyAny>>,
    /// A future (`set_result` on success) or a failure sink; either gets `set_exception`.
    target: Option<Py<PyAny>>,
    /// The target is a future, resolved on success with `result` (None: Python's None).
    notify: bool,
    result: Option<Py<PyAny>>,
    /// The pushed item: it holds the str and bytes objects the rows borrow (`values`).
    _keep: Py<PyAny>,
}

impl Queued for Entry {
    type Op = Op;
    fn seq(&self) -> u64 {
        self.seq
    }
    fn take_op(&mut self) -> Option<Op> {
        self.op.take()
    }
    fn is_marker(&self) -> bool {
        self.step.is_none()
    }
    fn wants_report(&self) -> bool {
        self.notify && self.target.is_some()
    }
}

/// `v` seconds as a duration, or a ValueError naming `name`.
fn seconds(name: &str, v: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(v).map_err(|_| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "{name} must be a number of seconds >= 0, not {v}"
        ))
    })
}

#[pyclass(module = "warpgraph._core", frozen)]
pub struct SqliteWriter {
    group: GroupCommit<Entry>,
}

#[pymethods]
impl SqliteWriter {
    /// Opens `path` (an existing database; `uri`: a "file:" URI) on the SQLite of
    /// `library`, prepares `sql` = (head, checkpoint, blob, write, write_replace), runs
    /// each of `pragmas` and starts the thread.
    #[new]
    #[pyo3(signature = (library, path, uri, busy_timeout_ms, pragmas, sql, fallback, max_batch, linger, window, wal_autocheckpoint, spin=0.0))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        library: Option<&str>,
        path: &str,
        uri: bool,
        busy_timeout_ms: i32,
        pragmas: Vec<String>,
        sql: (String, String, String, String, String),
        fallback: Py<PyAny>,
        max_batch: usize,
        linger: f64,
        window: f64,
        wal_autocheckpoint: i32,
        spin: f64,
    ) -> PyResult<SqliteWriter> {
        if max_batch < 1 {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "max_batch must be >= 1, not {max_batch}"
            )));
        }
        let timing = Timing {
            linger: seconds("linger", linger)?,
            window: seconds("window", window)?,
            max_batch,
            wal_autocheckpoint,
            spin: seconds("spin", spin)?,
        };
        let api = load(library)?;
        let err = |e: warpgraph_core::sqlite::SqlError| PyRuntimeError::new_err(e.to_string());
        let open = || -> Result<Connection, warpgraph_core::sqlite::SqlError> {
            let mut conn = Connection::open(api, path, uri)?;
            conn.busy_timeout(busy_timeout_ms)?;
            for pragma in &pragmas {
                conn.execute(pragma)?;
            }
            Ok(conn)
        };
        let mut conn = open().map_err(err)?;
        // the log is checkpointed beside the writer (`Checkpointer`), or else by the thread
        // after it reports (`SqliteStore::after_round`), never inside a commit that a run
        // waits for
        let checkpointer = if wal_autocheckpoint > 0 {
            conn.track_wal();
            open().ok().and_then(|c| Checkpointer::start(c).ok())
        } else {
            None
        };
        let (head, checkpoint, blob, write, write_replace) = sql;
        let sql = Sql {
            head,
            checkpoint,
            blob,
            write,
            write_replace,
        };
        let writer = BatchWriter::new(conn, &sql).map_err(err)?;
        let store = SqliteStore {
            writer,
            checkpointer,
            wal_autocheckpoint,
        };
        let group = GroupCommit::start(
            "warpgraph-sqlite-writer",
            store,
            timing,
            move |store: &mut SqliteStore, batch, rolled_back| {
                Python::attach(|py| report(py, &mut store.writer, &fallback, batch, rolled_back))
            },
        )
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the writer: {e}")))?;
        Ok(SqliteWriter { group })
    }

    /// Queues items, in order: `("put", seq, fence, expected, checkpoint_row, blob_rows,
    /// depends_on, step, target, notify, result)` (fence: whether the put expects a head;
    /// notify: the target is a future, resolved with result), `("writes", seq, rows,
    /// replace_rows, step, target, notify, fence)` or `("marker", seq, future or None)` (None:
    /// somebody `wait`s for it). A writes op's fence: None, or `(thread, ns, expected)`
    /// (the head of (thread, ns) must be expected). Rows are tuples of None / int / str /
    /// bytes / bytearray.
    fn push(&self, items: &Bound<'_, PyList>) -> PyResult<()> {
        let mut entries = Vec::with_capacity(items.len());
        for item in items.iter() {
            entries.push(entry(item.cast::<PyTuple>()?)?);
        }
        self.group
            .push(entries)
            .map_err(|_| PyRuntimeError::new_err("the SQLite writer is closed"))
    }

    /// Waits (without the GIL) until every operation up to `seq` has its outcome; false on
    /// timeout (seconds; None: no limit) or when the thread ended before. Spins first, for
    /// at most the writer's `spin` (within the timeout), then sleeps.
    #[pyo3(signature = (seq, timeout=None))]
    fn wait(&self, py: Python<'_>, seq: u64, timeout: Option<f64>) -> PyResult<bool> {
        let limit = timeout.map(|t| seconds("timeout", t)).transpose()?;
        Ok(py.detach(|| self.group.wait(seq, limit)))
    }

    /// The largest seq up to which every operation has its outcome.
    #[getter]
    fn committed(&self) -> u64 {
        self.group.committed()
    }

    /// Transactions committed so far.
    #[getter]
    fn batches(&self) -> u64 {
        self.group.batches()
    }

    /// Whether the thread still runs.
    #[getter]
    fn alive(&self) -> bool {
        self.group.alive()
    }

    #[getter]
    fn closed(&self) -> bool {
        self.group.closed()
    }

    /// Lets the thread commit what is queued, then stop; waits for it unless called from
    /// the thread itself (e.g. a finalizer run while it reports).
    fn close(&self, py: Python<'_>) {
        self.group.close();
        if self.group.on_thread() {
            return;
        }
        // the thread may need the GIL to report its last batch
        py.detach(|| self.group.join());
    }
}
// (dropping the writer closes its group without joining: the thread finishes what is
// queued on its own)

/// # Safety (of the rows it borrows)
/// The entry keeps `item` alive, and with it every str and bytes object its rows borrow;
/// those are immutable.
fn entry(item: &Bound<'_, PyTuple>) -> PyResult<Entry> {
    let kind = item.get_item(0)?;
    let kind = kind.cast::<PyString>()?.to_str()?;
    let seq: u64 = item.get_item(1)?.extract()?;
    let opt = |i: usize| -> PyResult<Option<Py<PyAny>>> {
        let v = item.get_item(i)?;
        Ok((!v.is_none()).then(|| v.unbind()))
    };
    match kind {
        "put" => {
            let expected_head = if item.get_item(2)?.is_truthy()? {
                Some(item.get_item(3)?.extract()?)
            } else {
                None
            };
            Ok(Entry {
                seq,
                op: Some(Op {
                    seq,
                    checkpoint: Some(values(&item.get_item(4)?)?),
                    expected_head,
                    fence_key: None,
                    rows: rows(&item.get_item(5)?, Table::Blob)?,
                    depends_on: item.get_item(6)?.extract()?,
                }),
                step: opt(7)?,
                target: opt(8)?,
                notify: item.get_item(9)?.is_truthy()?,
                result: opt(10)?,
                _keep: item.clone().into_any().unbind(),
            })
        }
        "writes" => {
            let mut rows_ = rows(&item.get_item(2)?, Table::Write)?;
            rows_.extend(rows(&item.get_item(3)?, Table::WriteReplace)?);
            // (thread, ns, expected head) of a fenced writes op, else None
            let fence = item.get_item(7)?;
            let (fence_key, expected_head) = if fence.is_none() {
                (None, None)
            } else {
                let fence = fence.cast::<PyTuple>()?;
                let key = values(&fence.get_slice(0, 2))?;
                (Some(key), Some(fence.get_item(2)?.extract()?))
            };
            Ok(Entry {
                seq,
                op: Some(Op {
                    seq,
                    rows: rows_,
                    fence_key,
                    expected_head,
                    ..Op::default()
                }),
                step: opt(4)?,
                target: opt(5)?,
                notify: item.get_item(6)?.is_truthy()?,
                result: None,
                _keep: item.clone().into_any().unbind(),
            })
        }
        "marker" => Ok(Entry {
            seq,
            op: None,
            step: None,
            target: opt(2)?,
            notify: true,
            result: None,
            _keep: item.clone().into_any().unbind(),
        }),
        other => Err(PyTypeError::new_err(format!(
            "unknown writer item {other:?}"
        ))),
    }
}

fn rows(list: &Bound<'_, PyAny>, table: Table) -> PyResult<Vec<(Table, Vec<Value>)>> {
    let mut out = Vec::new();
    for row in list.try_iter()? {
        out.push((table, values(&row?)?));
    }
    Ok(out)
}

fn values(row: &Bound<'_, PyAny>) -> PyResult<Vec<Value>> {
    let row = row.cast::<PyTuple>()?;
    let mut out = Vec::with_capacity(row.len());
    for v in row.iter() {
        out.push(if v.is_none() {
            Value::Null
        } else if let Ok(s) = v.cast_exact::<PyString>() {
            // SAFETY: an exact str is immutable and its UTF-8 form (cached in the object)
            // lives as long as it does; the entry keeps the row, hence the str, alive
            unsafe { Value::borrowed(s.to_str()?.as_bytes(), true) }
        } else if let Ok(b) = v.cast_exact::<PyBytes>() {
            // SAFETY: as above, for an exact (immutable) bytes object
            unsafe { Value::borrowed(b.as_bytes(), false) }
        } else if let Ok(b) = v.cast_exact::<PyByteArray>() {
            Value::Blob(b.to_vec()) // (mutable: copied)
        } else if v.is_exact_instance_of::<PyInt>() {
            Value::Int(v.extract()?)
        } else {
            return Err(PyTypeError::new_err(format!(
                "a writer row holds a {}",
                v.get_type().name()?
            )));
        });
    }
    Ok(out)
}

/// Resolves a batch's targets (a marker's with None, a future's with its result). When
/// the batch was rolled back, first runs its steps through `fallback`: each step's result,
/// or exception, is then its operation's outcome.
fn report(
    py: Python<'_>,
    writer: &mut BatchWriter,
    fallback: &Py<PyAny>,
    batch: Vec<Entry>,
    rolled_back: bool,
) {
    let mut outcomes: Vec<Bound<'_, PyAny>> = Vec::new();
    if rolled_back {
        let steps: Vec<Bound<'_, PyAny>> = batch
            .iter()
            .filter_map(|e| e.step.as_ref().map(|s| s.bind(py).clone()))
            .collect();
        let n = steps.len();
        let got = PyList::new(py, steps)
            .and_then(|steps| fallback.bind(py).call1((steps,)))
            .and_then(|r| r.try_iter()?.collect::<PyResult<Vec<_>>>())
            .and_then(|r| {
                if r.len() == n {
                    Ok(r)
                } else {
                    Err(PyRuntimeError::new_err(format!(
                        "the writer's fallback gave {} results for {n} operations",
                        r.len()
                    )))
                }
            });
        outcomes = match got {
            Ok(r) => r,
            Err(err) => vec![err.into_value(py).into_bound(py).into_any(); n],
        };
    }
    let base_exc = py.get_type::<PyBaseException>();
    let mut outcomes = outcomes.into_iter();
    for e in batch {
        let marker = e.step.is_none();
        let outcome = if rolled_back && !marker {
            outcomes.next()
        } else {
            None
        };
        let failed = outcome
            .as_ref()
            .is_some_and(|o| o.is_instance(&base_exc).unwrap_or(false));
        if failed {
            writer.mark_failed(e.seq);
        }
        let Some(target) = e.target else { continue };
        let target = target.bind(py);
        let call = if failed {
            target.call_method1("set_exception", (outcome.expect("failed"),))
        } else if marker {
            target.call_method1("set_result", (py.None(),))
        } else if e.notify {
            let value = outcome.or_else(|| e.result.map(|r| r.into_bound(py)));
            target.call_method1(
                "set_result",
                (value.unwrap_or_else(|| py.None().into_bound(py)),),
            )
        } else {
            continue; // a sink: told only of failures
        };
        if let Err(err) = call {
            // e.g. a future cancelled meanwhile: nobody waits for it
            err.write_unraisable(py, Some(target));
        }
    }
}
