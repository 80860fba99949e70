//! Checkpoint envelope sections prepared by the engine.
//!
//! The engine's [`Sections`] hold the msgpack encoding of its `channel_versions` and
//! `versions_seen` mirrors, entry by entry in slot order, kept current from the run's change
//! logs (only changed slots are re-encoded; the contiguous bytes are spliced). Each
//! checkpoint the engine creates registers its two dicts here with the sections' generation.
//! When `pack_checkpoint_envelope` meets a registered dict it copies the section's bytes if
//! (1) the generation is unchanged, so the engine still holds strong references to every
//! object the bytes were encoded from (an address cannot have been reused), and (2) the dict
//! holds exactly those objects by identity, in order (`versions_seen` inner dicts item by
//! item). Every compared object is an immutable exact `str`/`int`/`float` or a dict checked
//! item by item, so a dict replaced, mutated or reordered in any way fails the check and is
//! encoded normally: the bytes are always what encoding the dict would produce. No Python
//! code runs during the check.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::seen::{immutable_scalar, snapshot};
use warpgraph_core::envelope;

/// Whether the engine's envelope sections and the seen cache are used at all: off when
/// the package runs with `WARPGRAPH_FAST_PATHS=0` (`_core.init(fast_paths=False)`, once at
/// import), so every envelope is encoded from the dict it is given.
static ENABLED: AtomicBool = AtomicBool::new(true);

pub(crate) fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The encoding of one entry (`key: version`, or `node: {channel: version}`) and the
/// objects it was encoded from (strong references).
pub(crate) struct Entry {
    key: Py<PyAny>,
    val: Py<PyAny>,
    /// A `versions_seen` entry's inner dict items, in order (empty for versions).
    items: Vec<(Py<PyAny>, Py<PyAny>)>,
}

/// An entry slot; `None` when the objects cannot be encoded here (never matches).
pub(crate) type Slot = Option<Entry>;

impl Entry {
    /// `key: val` for `channel_versions` (both immutable scalars).
    /// `bytes` (a caller's reused buffer, cleared here) receives the encoding.
    pub(crate) fn version(
        key: &Bound<'_, PyAny>,
        val: &Bound<'_, PyAny>,
        bytes: &mut Vec<u8>,
    ) -> Slot {
        let (k, v) = (key.as_ptr(), val.as_ptr());
        bytes.clear();
        // SAFETY: both are live (borrowed through `Bound`) and the GIL is held.
        unsafe {
            if !immutable_scalar(k) || !immutable_scalar(v) {
                return None;
            }
            super::fast_pack(bytes, k, 2).ok()?;
            super::fast_pack(bytes, v, 2).ok()?;
        }
        Some(Entry {
            key: key.clone().unbind(),
            val: val.clone().unbind(),
            items: Vec::new(),
        })
    }

    /// `key: d` for `versions_seen` (`d` an exact dict of immutable scalars).
    /// (`bytes` as for [`Entry::version`].)
    pub(crate) fn seen(key: &Bound<'_, PyAny>, d: &Bound<'_, PyDict>, bytes: &mut Vec<u8>) -> Slot {
        let py = key.py();
        let (k, dp) = (key.as_ptr(), d.as_ptr());
        // SAFETY: both are live (borrowed through `Bound`) and the GIL is held; `d` is
        // checked to be an exact dict before it is walked.
        unsafe {
            if !immutable_scalar(k) || ffi::Py_TYPE(dp) != std::ptr::addr_of_mut!(ffi::PyDict_Type)
            {
                return None;
            }
            let items = snapshot(py, dp)?;
            bytes.clear();
            super::fast_pack(bytes, k, 2).ok()?;
            envelope::write_map_header(bytes, items.len()).ok()?;
            for (ik, iv) in &items {
                super::fast_pack(bytes, ik.as_ptr(), 3).ok()?;
                super::fast_pack(bytes, iv.as_ptr(), 3).ok()?;
            }
            Some(Entry {
                key: key.clone().unbind(),
                val: d.clone().into_any().unbind(),
                items,
            })
        }
    }
}

/// One dict's entries, contiguous: bytes, object addresses, inner item addresses.
#[derive(Default)]
pub(crate) struct Section {
    /// The owners of the objects (and their bytes), per slot.
    slots: Vec<Slot>,
    bytes: Vec<u8>,
    /// End offset in `bytes` of each slot's encoding.
    ends: Vec<usize>,
    /// `(key, value)` addresses per slot.
    ptrs: Vec<(usize, usize)>,
    /// Inner dict item addresses (k, v, k, v, ...) and each slot's end offset in it.
    items: Vec<usize>,
    item_ends: Vec<usize>,
    /// Slots whose entry is `None`.
    bad: usize,
    /// A reused buffer for a replaced slot's item addresses.
    scratch: Vec<usize>,
}

fn splice<T: Copy>(buf: &mut Vec<T>, ends: &mut [usize], slot: usize, new: &[T]) {
    let start = if slot == 0 { 0 } else { ends[slot - 1] };
    let end = ends[slot];
    buf.splice(start..end, new.iter().copied());
    if new.len() != end - start {
        for e in &mut ends[slot..] {
            *e = *e + new.len() - (end - start);
        }
    }
}

impl Section {
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    pub(crate) fn clear(&mut self) {
        *self = Section::default();
    }

    /// Makes room for `n` more slots of about `bytes_each` encoded bytes.
    pub(crate) fn reserve(&mut self, n: usize, bytes_each: usize) {
        self.slots.reserve(n);
        self.ends.reserve(n);
        self.ptrs.reserve(n);
        self.item_ends.reserve(n);
        self.bytes.reserve(n * bytes_each);
    }

    /// Sets slot `slot` (at most one past the last; else the section is cleared and false
    /// returned) to entry `e`, encoded as `bytes` (ignored when `e` is `None`).
    pub(crate) fn set(&mut self, slot: usize, e: Slot, bytes: &[u8]) -> bool {
        if slot > self.slots.len() {
            self.clear();
            return false;
        }
        let ptrs = e.as_ref().map_or((0, 0), |e| {
            (e.key.as_ptr() as usize, e.val.as_ptr() as usize)
        });
        let item_ptrs = e
            .as_ref()
            .map_or(&[][..], |e| &e.items[..])
            .iter()
            .flat_map(|(k, v)| [k.as_ptr() as usize, v.as_ptr() as usize]);
        let bytes: &[u8] = if e.is_some() { bytes } else { &[] };
        if slot == self.slots.len() {
            self.bytes.extend_from_slice(bytes);
            self.ends.push(self.bytes.len());
            self.items.extend(item_ptrs);
            self.item_ends.push(self.items.len());
            self.ptrs.push(ptrs);
            self.slots.push(None);
        } else {
            let mut items = std::mem::take(&mut self.scratch);
            items.clear();
            items.extend(item_ptrs);
            splice(&mut self.bytes, &mut self.ends, slot, bytes);
            splice(&mut self.items, &mut self.item_ends, slot, &items);
            self.scratch = items;
            self.ptrs[slot] = ptrs;
            if self.slots[slot].is_none() {
                self.bad -= 1;
            }
        }
        if e.is_none() {
            self.bad += 1;
        }
        self.slots[slot] = e;
        true
    }

    /// Appends the encoding of dict `d` if it holds exactly this section's objects.
    ///
    /// # Safety
    /// `d` must be a live exact dict and the GIL held; the objects of `slots` must be the
    /// ones the addresses were taken from (held since).
    unsafe fn pack(&self, buf: &mut Vec<u8>, d: *mut ffi::PyObject, inner: bool) -> bool {
        let n = self.slots.len();
        if self.bad != 0 || ffi::PyDict_Size(d) as usize != n {
            return false;
        }
        let mut pos: ffi::Py_ssize_t = 0;
        let mut k: *mut ffi::PyObject = std::ptr::null_mut();
        let mut v: *mut ffi::PyObject = std::ptr::null_mut();
        let mut item_start = 0;
        for (i, &(ek, ev)) in self.ptrs.iter().enumerate() {
            if ffi::PyDict_Next(d, &mut pos, &mut k, &mut v) == 0
                || k as usize != ek
                || v as usize != ev
            {
                return false;
            }
            if inner {
                let want = &self.items[item_start..self.item_ends[i]];
                item_start = self.item_ends[i];
                // `v` is the very dict the entry snapshotted (an exact dict)
                if ffi::PyDict_Size(v) as usize * 2 != want.len() {
                    return false;
                }
                let mut ipos: ffi::Py_ssize_t = 0;
                let mut ik: *mut ffi::PyObject = std::ptr::null_mut();
                let mut iv: *mut ffi::PyObject = std::ptr::null_mut();
                for pair in want.chunks_exact(2) {
                    if ffi::PyDict_Next(v, &mut ipos, &mut ik, &mut iv) == 0
                        || ik as usize != pair[0]
                        || iv as usize != pair[1]
                    {
                        return false;
                    }
                }
            }
        }
        if envelope::write_map_header(buf, n).is_err() {
            return false;
        }
        buf.extend_from_slice(&self.bytes);
        true
    }
}

/// An engine's two sections; `gen` moves whenever either changes.
#[derive(Default)]
pub(crate) struct Sections {
    pub(crate) gen: u64,
    pub(crate) cv: Section,
    pub(crate) vs: Section,
}

/// Shared between an engine and the records of its checkpoints.
pub(crate) type SharedSections = Arc<Mutex<Sections>>;

pub(crate) fn lock(s: &SharedSections) -> MutexGuard<'_, Sections> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// Appends the encoding of a `channel_versions` (`seen` false) or `versions_seen` dict the
/// engine copied from its synced mirror in the current call, straight from the section:
/// nothing can have changed the dict or its objects since (no Python code ran), so the
/// identity check of [`pack_registered`] is not needed. False (nothing written) when a
/// slot could not be encoded here or the sizes differ.
pub(crate) fn pack_fresh(
    sections: &SharedSections,
    seen: bool,
    len: usize,
    buf: &mut Vec<u8>,
) -> bool {
    if !enabled() {
        return false;
    }
    let s = lock(sections);
    let sec = if seen { &s.vs } else { &s.cv };
    if sec.bad != 0 || sec.slots.len() != len || envelope::write_map_header(buf, len).is_err() {
        return false;
    }
    buf.extend_from_slice(&sec.bytes);
    true
}

/// [`pack_fresh`] without the section's bytes: the map header only, and the length of the
/// bytes [`fresh_bytes`] gives for the caller to write after it; None (nothing written)
/// when [`pack_fresh`] would write nothing.
pub(crate) fn pack_fresh_header(
    sections: &SharedSections,
    seen: bool,
    len: usize,
    buf: &mut Vec<u8>,
) -> Option<usize> {
    if !enabled() {
        return None;
    }
    let s = lock(sections);
    let sec = if seen { &s.vs } else { &s.cv };
    if sec.bad != 0 || sec.slots.len() != len || envelope::write_map_header(buf, len).is_err() {
        return None;
    }
    Some(sec.bytes.len())
}

/// The encoded entries of the mirror's `versions_seen` (`seen`) or `channel_versions`.
pub(crate) fn fresh_bytes(s: &Sections, seen: bool) -> &[u8] {
    if seen {
        &s.vs.bytes
    } else {
        &s.cv.bytes
    }
}

/// One checkpoint's `channel_versions` or `versions_seen` dict.
struct Record {
    dict: Py<PyDict>,
    sections: SharedSections,
    gen: u64,
    seen: bool,
}

/// Records of the last checkpoints created (newest last).
static RECORDS: Mutex<Vec<Record>> = Mutex::new(Vec::new());
/// Two records per checkpoint: enough for a few interleaved runs.
const KEEP: usize = 16;
/// How many dicts were packed from registered sections (for tests).
pub(crate) static HITS: AtomicU64 = AtomicU64::new(0);

/// Registers a checkpoint's `channel_versions` (`seen` false) or `versions_seen` dict,
/// copied from the mirror `sections` describe at generation `gen`.
pub(crate) fn register(dict: &Bound<'_, PyDict>, sections: &SharedSections, gen: u64, seen: bool) {
    if !enabled() {
        return;
    }
    let rec = Record {
        dict: dict.clone().unbind(),
        sections: sections.clone(),
        gen,
        seen,
    };
    let evicted = match RECORDS.try_lock() {
        Ok(mut g) => {
            g.push(rec);
            (g.len() > KEEP).then(|| g.remove(0))
        }
        Err(_) => Some(rec),
    };
    // Released with the lock free.
    drop(evicted);
}

/// Appends the encoding of `d` (a dict value at depth 1) if it is a registered dict that
/// still holds exactly its section's objects; returns whether it did (`buf` untouched if
/// not).
///
/// # Safety
/// `d` must be a live object and the GIL held.
pub(crate) unsafe fn pack_registered(buf: &mut Vec<u8>, d: *mut ffi::PyObject) -> bool {
    if !enabled() || ffi::Py_TYPE(d) != std::ptr::addr_of_mut!(ffi::PyDict_Type) {
        return false;
    }
    let Ok(g) = RECORDS.try_lock() else {
        return false;
    };
    let Some(rec) = g.iter().rev().find(|r| r.dict.as_ptr() == d) else {
        return false;
    };
    let Ok(s) = rec.sections.try_lock() else {
        return false;
    };
    if s.gen != rec.gen {
        return false;
    }
    let start = buf.len();
    let ok = if rec.seen {
        s.vs.pack(buf, d, true)
    } else {
        s.cv.pack(buf, d, false)
    };
    if !ok {
        buf.truncate(start);
        return false;
    }
    HITS.fetch_add(1, Ordering::Relaxed);
    true
}

#[cfg(test)]
mod tests {
    use super::splice;

    #[test]
    fn splice_replaces_a_slot_and_moves_later_ends() {
        // slots "ab", "c", "def"
        let mut buf = b"abcdef".to_vec();
        let mut ends = vec![2, 3, 6];
        splice(&mut buf, &mut ends, 1, b"XYZ");
        assert_eq!((&buf[..], &ends[..]), (&b"abXYZdef"[..], &[2, 5, 8][..]));
        splice(&mut buf, &mut ends, 0, b"");
        assert_eq!((&buf[..], &ends[..]), (&b"XYZdef"[..], &[0, 3, 6][..]));
        splice(&mut buf, &mut ends, 2, b"q");
        assert_eq!((&buf[..], &ends[..]), (&b"XYZq"[..], &[0, 3, 4][..]));
    }
}
