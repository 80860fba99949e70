//! Memoised msgpack encodings of `versions_seen` entries for `pack_checkpoint_envelope`.
//!
//! Successive checkpoints of a run share most inner `versions_seen[node]` dicts (the engine
//! replaces a node's dict when its entry changes, never mutates it). Each encoded inner dict
//! is remembered with a snapshot of its `(key, value)` objects; when the same dict comes back
//! holding the very same immutable objects in the same order, its bytes are copied instead of
//! re-encoded (a dict is remembered from the second time it is met). The snapshot holds
//! strong references, so an object's address can never be reused while it is remembered,
//! and a dict mutated in any way fails the comparison and is encoded afresh. The bytes are
//! therefore always what encoding would produce.

use std::sync::Mutex;

use pyo3::ffi;
use pyo3::prelude::*;

use warpgraph_core::version::FastMap;

/// One remembered `key: inner dict` pair of `versions_seen`.
struct Entry {
    /// Keeps the dict alive so its address identifies it.
    _dict: Py<PyAny>,
    /// The key it was encoded under (a strong reference).
    key: Py<PyAny>,
    /// Its `(key, value)` objects in iteration order (strong references).
    items: Vec<(Py<PyAny>, Py<PyAny>)>,
    bytes: Vec<u8>,
}

/// Two generations: entries used since the last flip live in `cur`; a flip drops the ones
/// not used since the flip before. Bounds memory to about `2 * FLIP_AT` entries.
#[derive(Default)]
pub(crate) struct SeenCache {
    cur: FastMap<usize, Entry>,
    old: FastMap<usize, Entry>,
    /// Evicted entries, released only after encoding (a dict mutated since it was
    /// remembered may hold anything, whose `__del__` must not run mid-walk).
    dead: Vec<Entry>,
    dead_maps: Vec<FastMap<usize, Entry>>,
    /// Ids of dicts met once and not remembered: a dict is remembered the second time it is
    /// met, so dicts encoded only once (short runs) cost a set insert, not a snapshot. Only a
    /// heuristic (an id may be reused by another dict): remembering is always correct.
    pending: FastMap<usize, ()>,
}

const FLIP_AT: usize = 4096;

static CACHE: Mutex<Option<SeenCache>> = Mutex::new(None);

/// Runs `f` with the shared cache (`None` when it is busy: another thread or a re-entrant
/// call; encoding then just proceeds without it).
pub(crate) fn with_cache<R>(f: impl FnOnce(Option<&mut SeenCache>) -> R) -> R {
    if !super::sections::enabled() {
        return f(None);
    }
    let (r, dead) = match CACHE.try_lock() {
        Ok(mut g) => {
            let c = g.get_or_insert_with(SeenCache::default);
            let r = f(Some(c));
            let dead = (
                std::mem::take(&mut c.dead),
                std::mem::take(&mut c.dead_maps),
            );
            (r, dead)
        }
        Err(_) => (f(None), Default::default()),
    };
    // Released with the lock free: a __del__ may pack another envelope.
    drop(dead);
    r
}

/// Whether `obj` is of an immutable exact type whose encoding depends only on its identity.
///
/// # Safety
/// `obj` must be a live object and the GIL held.
pub(super) unsafe fn immutable_scalar(obj: *mut ffi::PyObject) -> bool {
    let ty = ffi::Py_TYPE(obj);
    ty == std::ptr::addr_of_mut!(ffi::PyUnicode_Type)
        || ty == std::ptr::addr_of_mut!(ffi::PyLong_Type)
        || ty == std::ptr::addr_of_mut!(ffi::PyFloat_Type)
        || ty == std::ptr::addr_of_mut!(ffi::PyBool_Type)
        || obj == ffi::Py_None()
}

impl SeenCache {
    /// Appends the encoding of the pair `k: d` (`d` an exact dict) to `buf`: the remembered
    /// bytes when `d` still holds the same objects under the same key object, else
    /// `encode(buf)`'s output (remembered when the key and every item of `d` are immutable
    /// scalars).
    ///
    /// # Safety
    /// `k` and `d` must be live, `d` an exact dict, and the GIL held; `encode` must append
    /// exactly the encoding of `k` followed by that of `d`, or fail.
    pub(crate) unsafe fn pack_pair<E>(
        &mut self,
        py: Python<'_>,
        buf: &mut Vec<u8>,
        k: *mut ffi::PyObject,
        d: *mut ffi::PyObject,
        encode: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let id = d as usize;
        let hit = match self.cur.get(&id) {
            Some(e) => Some(e),
            None => match self.old.remove(&id) {
                Some(e) => {
                    self.cur.insert(id, e);
                    self.cur.get(&id)
                }
                None => None,
            },
        };
        if let Some(e) = hit {
            if e.key.as_ptr() == k && same_items(d, &e.items) {
                buf.extend_from_slice(&e.bytes);
                return Ok(());
            }
            if let Some(e) = self.cur.remove(&id) {
                self.dead.push(e);
            }
        }
        let start = buf.len();
        encode(buf)?;
        if self.pending.remove(&id).is_none() {
            if self.pending.len() >= FLIP_AT {
                self.pending.clear();
            }
            self.pending.insert(id, ());
            return Ok(());
        }
        if !immutable_scalar(k) {
            return Ok(());
        }
        if let Some(items) = snapshot(py, d) {
            if self.cur.len() >= FLIP_AT {
                let old = std::mem::replace(&mut self.old, std::mem::take(&mut self.cur));
                self.dead_maps.push(old);
            }
            self.cur.insert(
                id,
                Entry {
                    _dict: Py::from_borrowed_ptr(py, d),
                    key: Py::from_borrowed_ptr(py, k),
                    items,
                    bytes: buf[start..].to_vec(),
                },
            );
        }
        Ok(())
    }
}

/// Whether dict `d` holds exactly `items` (same objects, same order).
///
/// # Safety
/// `d` must be a live dict and the GIL held.
pub(super) unsafe fn same_items(d: *mut ffi::PyObject, items: &[(Py<PyAny>, Py<PyAny>)]) -> bool {
    if ffi::PyDict_Size(d) as usize != items.len() {
        return false;
    }
    let mut pos: ffi::Py_ssize_t = 0;
    let mut k: *mut ffi::PyObject = std::ptr::null_mut();
    let mut v: *mut ffi::PyObject = std::ptr::null_mut();
    for (ek, ev) in items {
        if ffi::PyDict_Next(d, &mut pos, &mut k, &mut v) == 0
            || k != ek.as_ptr()
            || v != ev.as_ptr()
        {
            return false;
        }
    }
    true
}

/// Strong references to `d`'s keys and values, if all are immutable scalars.
///
/// # Safety
/// `d` must be a live dict and the GIL held.
pub(super) unsafe fn snapshot(
    py: Python<'_>,
    d: *mut ffi::PyObject,
) -> Option<Vec<(Py<PyAny>, Py<PyAny>)>> {
    let mut items = Vec::with_capacity(ffi::PyDict_Size(d) as usize);
    let mut pos: ffi::Py_ssize_t = 0;
    let mut k: *mut ffi::PyObject = std::ptr::null_mut();
    let mut v: *mut ffi::PyObject = std::ptr::null_mut();
    while ffi::PyDict_Next(d, &mut pos, &mut k, &mut v) != 0 {
        if !immutable_scalar(k) || !immutable_scalar(v) {
            return None;
        }
        items.push((Py::from_borrowed_ptr(py, k), Py::from_borrowed_ptr(py, v)));
    }
    Some(items)
}
