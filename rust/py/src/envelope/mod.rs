//! The checkpoint envelope: msgpack encoding and decoding of a checkpoint dict, with the
//! engine's prepared sections (`sections`) and memoised `versions_seen` entries (`seen`).
use pyo3::exceptions::{PyTypeError, PyValueError};
use std::cell::Cell;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use warpgraph_core::envelope::{self, Reader, Token};

pub(crate) mod sections;
mod seen;
use seen::SeenCache;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(pack_checkpoint_envelope, m)?)?;
    m.add_function(wrap_pyfunction!(unpack_checkpoint_envelope, m)?)?;
    m.add_function(wrap_pyfunction!(_envelope_cache_hits, m)?)?;
    Ok(())
}

// ---------------------------------------------------------------- envelope encoding

/// Smallest starting buffer size.
const PACK_CAPACITY_HINT: usize = 256;
/// Largest buffer kept for the next envelope (a bigger one is freed after use).
const PACK_KEEP_MAX: usize = 1 << 20;

thread_local! {
    /// The buffer envelopes are packed into on this thread, kept between calls: a run's
    /// envelopes grow a little at every step, and a fresh buffer sized after the last one
    /// regrew (and was allocated and freed) at nearly every step. Taken while in use, so a
    /// nested call (none is expected: no Python code runs while packing) gets its own.
    static PACK_BUF: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// A cleared buffer to pack into (the thread's kept one when free); give it back with
/// [`give_back`].
fn pack_buffer() -> Vec<u8> {
    let mut buf = PACK_BUF.with(Cell::take);
    buf.clear();
    if buf.capacity() < PACK_CAPACITY_HINT {
        buf.reserve(PACK_CAPACITY_HINT);
    }
    buf
}

/// Keeps `buf` for the next envelope (unless it is very large).
fn give_back(buf: Vec<u8>) {
    if buf.capacity() <= PACK_KEEP_MAX {
        PACK_BUF.with(|c| c.set(buf));
    }
}

struct PackError {
    message: String,
    /// Innermost first.
    path: Vec<String>,
}

impl PackError {
    fn new(message: String) -> Self {
        PackError {
            message,
            path: Vec::new(),
        }
    }

    fn at(mut self, segment: String) -> Self {
        self.path.push(segment);
        self
    }
}

fn key_repr(key: &Bound<'_, PyAny>) -> String {
    key.repr()
        .map(|r| r.to_string())
        .unwrap_or_else(|_| "<key>".to_string())
}

fn enc(r: Result<(), envelope::EncodeError>) -> Result<(), PackError> {
    r.map_err(|e| PackError::new(e.message))
}

fn pack_value(buf: &mut Vec<u8>, obj: &Bound<'_, PyAny>, depth: usize) -> Result<(), PackError> {
    if obj.is_none() {
        envelope::write_nil(buf);
    } else if let Ok(s) = obj.cast_exact::<PyString>() {
        let s = s
            .to_str()
            .map_err(|_| PackError::new("str is not valid UTF-8 (surrogates)".to_string()))?;
        enc(envelope::write_str(buf, s))?;
    } else if obj.is_exact_instance_of::<PyBool>() {
        envelope::write_bool(buf, obj.is_truthy().unwrap_or(false));
    } else if obj.is_exact_instance_of::<PyInt>() {
        if let Ok(i) = obj.extract::<i64>() {
            envelope::write_i64(buf, i);
        } else if let Ok(u) = obj.extract::<u64>() {
            envelope::write_u64(buf, u);
        } else {
            return Err(PackError::new("Integer exceeds 64-bit range".to_string()));
        }
    } else if let Ok(f) = obj.cast_exact::<PyFloat>() {
        envelope::write_f64(buf, f.value());
    } else if let Ok(d) = obj.cast_exact::<PyDict>() {
        if depth >= envelope::MAX_ENCODE_DEPTH {
            return Err(PackError::new(envelope::depth_error().message));
        }
        enc(envelope::write_map_header(buf, d.len()))?;
        for (k, v) in d.iter() {
            pack_value(buf, &k, depth + 1).map_err(|e| e.at(format!("<key {}>", key_repr(&k))))?;
            pack_value(buf, &v, depth + 1).map_err(|e| e.at(format!("[{}]", key_repr(&k))))?;
        }
    } else if obj.is_exact_instance_of::<PyList>() || obj.is_exact_instance_of::<PyTuple>() {
        if depth >= envelope::MAX_ENCODE_DEPTH {
            return Err(PackError::new(envelope::depth_error().message));
        }
        let n = obj.len().map_err(|e| PackError::new(e.to_string()))?;
        enc(envelope::write_array_header(buf, n))?;
        let items = obj.try_iter().map_err(|e| PackError::new(e.to_string()))?;
        for (i, item) in items.enumerate() {
            let item = item.map_err(|e| PackError::new(e.to_string()))?;
            pack_value(buf, &item, depth + 1).map_err(|e| e.at(format!("[{i}]")))?;
        }
    } else if let Ok(b) = obj.cast_exact::<PyBytes>() {
        enc(envelope::write_bin(buf, b.as_bytes()))?;
    } else {
        let name = obj
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_else(|_| "?".to_string());
        return Err(PackError::new(format!("unsupported type {name}")));
    }
    Ok(())
}

fn is_channel_values_key(k: &Bound<'_, PyAny>) -> bool {
    k.cast_exact::<PyString>()
        .ok()
        .and_then(|s| s.to_str().ok().map(|s| s == "channel_values"))
        .unwrap_or(false)
}

// The fast path below walks the object tree through raw CPython calls on borrowed
// references. It accepts only exact builtin types and calls no Python code (no __repr__,
// __index__, __del__, ...), so nothing can mutate or free the objects while it runs.
// Anything it does not handle makes it give up; the safe encoder above then produces the
// bytes or the precise error.

/// Marker: the fast path cannot encode this object (the safe encoder decides).
pub(crate) struct Unsupported;

/// The UTF-8 bytes of an exact `str`, or `None` if it has surrogates.
///
/// # Safety
/// `obj` must be a live exact `str` and the GIL held.
pub(crate) unsafe fn str_bytes<'a>(obj: *mut ffi::PyObject) -> Option<&'a [u8]> {
    let mut n: ffi::Py_ssize_t = 0;
    let p = ffi::PyUnicode_AsUTF8AndSize(obj, &mut n);
    if p.is_null() {
        ffi::PyErr_Clear();
        return None;
    }
    Some(std::slice::from_raw_parts(p.cast::<u8>(), n as usize))
}

/// # Safety
/// `obj` must be a live object and the GIL held.
pub(crate) unsafe fn fast_pack(
    buf: &mut Vec<u8>,
    obj: *mut ffi::PyObject,
    depth: usize,
) -> Result<(), Unsupported> {
    let ty = ffi::Py_TYPE(obj);
    let ok = |r: Result<(), envelope::EncodeError>| r.map_err(|_| Unsupported);
    if ty == std::ptr::addr_of_mut!(ffi::PyUnicode_Type) {
        ok(envelope::write_str_bytes(
            buf,
            str_bytes(obj).ok_or(Unsupported)?,
        ))
    } else if ty == std::ptr::addr_of_mut!(ffi::PyDict_Type) {
        if depth >= envelope::MAX_ENCODE_DEPTH {
            return Err(Unsupported);
        }
        ok(envelope::write_map_header(
            buf,
            ffi::PyDict_Size(obj) as usize,
        ))?;
        let mut pos: ffi::Py_ssize_t = 0;
        let mut k: *mut ffi::PyObject = std::ptr::null_mut();
        let mut v: *mut ffi::PyObject = std::ptr::null_mut();
        while ffi::PyDict_Next(obj, &mut pos, &mut k, &mut v) != 0 {
            fast_pack(buf, k, depth + 1)?;
            fast_pack(buf, v, depth + 1)?;
        }
        Ok(())
    } else if ty == std::ptr::addr_of_mut!(ffi::PyLong_Type) {
        let i = ffi::PyLong_AsLongLong(obj);
        if i == -1 && !ffi::PyErr_Occurred().is_null() {
            ffi::PyErr_Clear();
            let u = ffi::PyLong_AsUnsignedLongLong(obj);
            if u == u64::MAX && !ffi::PyErr_Occurred().is_null() {
                ffi::PyErr_Clear();
                return Err(Unsupported);
            }
            envelope::write_u64(buf, u);
        } else {
            envelope::write_i64(buf, i);
        }
        Ok(())
    } else if obj == ffi::Py_None() {
        envelope::write_nil(buf);
        Ok(())
    } else if ty == std::ptr::addr_of_mut!(ffi::PyBool_Type) {
        envelope::write_bool(buf, obj == ffi::Py_True());
        Ok(())
    } else if ty == std::ptr::addr_of_mut!(ffi::PyFloat_Type) {
        envelope::write_f64(buf, ffi::PyFloat_AsDouble(obj));
        Ok(())
    } else if ty == std::ptr::addr_of_mut!(ffi::PyList_Type)
        || ty == std::ptr::addr_of_mut!(ffi::PyTuple_Type)
    {
        if depth >= envelope::MAX_ENCODE_DEPTH {
            return Err(Unsupported);
        }
        let is_list = ty == std::ptr::addr_of_mut!(ffi::PyList_Type);
        let n = if is_list {
            ffi::PyList_Size(obj)
        } else {
            ffi::PyTuple_Size(obj)
        };
        ok(envelope::write_array_header(buf, n as usize))?;
        for i in 0..n {
            let item = if is_list {
                ffi::PyList_GetItem(obj, i)
            } else {
                ffi::PyTuple_GetItem(obj, i)
            };
            if item.is_null() {
                ffi::PyErr_Clear();
                return Err(Unsupported);
            }
            fast_pack(buf, item, depth + 1)?;
        }
        Ok(())
    } else if ty == std::ptr::addr_of_mut!(ffi::PyBytes_Type) {
        let p = ffi::PyBytes_AsString(obj);
        if p.is_null() {
            ffi::PyErr_Clear();
            return Err(Unsupported);
        }
        let n = ffi::PyBytes_Size(obj) as usize;
        ok(envelope::write_bin(
            buf,
            std::slice::from_raw_parts(p.cast::<u8>(), n),
        ))
    } else {
        Err(Unsupported)
    }
}

/// `obj` appended to `buf` as msgpack when the fast path handles it (exact builtin
/// types: the bytes ormsgpack writes for them); false (and `buf` unchanged) otherwise.
pub(crate) fn try_pack(buf: &mut Vec<u8>, obj: &Bound<'_, PyAny>) -> bool {
    let mark = buf.len();
    // SAFETY: `obj` is alive for the borrow and the GIL is held (`Bound`).
    if unsafe { fast_pack(buf, obj.as_ptr(), 0) }.is_ok() {
        return true;
    }
    buf.truncate(mark);
    false
}

/// `versions_seen` (an exact dict at depth 1) with its `node: inner dict` pairs memoised.
///
/// # Safety
/// `d` must be a live exact dict and the GIL held.
unsafe fn fast_pack_seen(
    py: Python<'_>,
    buf: &mut Vec<u8>,
    d: *mut ffi::PyObject,
    cache: &mut SeenCache,
) -> Result<(), Unsupported> {
    envelope::write_map_header(buf, ffi::PyDict_Size(d) as usize).map_err(|_| Unsupported)?;
    let mut pos: ffi::Py_ssize_t = 0;
    let mut k: *mut ffi::PyObject = std::ptr::null_mut();
    let mut v: *mut ffi::PyObject = std::ptr::null_mut();
    while ffi::PyDict_Next(d, &mut pos, &mut k, &mut v) != 0 {
        if ffi::Py_TYPE(v) == std::ptr::addr_of_mut!(ffi::PyDict_Type) {
            cache.pack_pair(py, buf, k, v, |b| {
                fast_pack(b, k, 2)?;
                fast_pack(b, v, 2)
            })?;
        } else {
            fast_pack(buf, k, 2)?;
            fast_pack(buf, v, 2)?;
        }
    }
    Ok(())
}

/// The fast path for a whole checkpoint (`channel_values` left out).
/// The engine's sections and the two dicts it just copied from them (see
/// [`sections::pack_fresh`]).
pub(crate) type Fresh<'a> = (
    &'a sections::SharedSections,
    *mut ffi::PyObject,
    *mut ffi::PyObject,
);

fn fast_pack_checkpoint(
    buf: &mut Vec<u8>,
    checkpoint: &Bound<'_, PyDict>,
    mut cache: Option<&mut SeenCache>,
    fresh: Option<Fresh<'_>>,
    mut defer: Option<&mut Vec<Deferred>>,
) -> Result<(), Unsupported> {
    let py = checkpoint.py();
    let d = checkpoint.as_ptr();
    // SAFETY: `d` is a live exact-or-sub dict (PyDict_Next accepts subclasses) and the GIL is
    // held through the `Bound`; keys and values are borrowed from it and nothing in the fast
    // path runs Python code that could mutate it.
    unsafe {
        let is_key = |k: *mut ffi::PyObject, name: &[u8]| {
            ffi::Py_TYPE(k) == std::ptr::addr_of_mut!(ffi::PyUnicode_Type)
                && str_bytes(k) == Some(name)
        };
        let is_skip = |k: *mut ffi::PyObject| is_key(k, b"channel_values");
        let mut pos: ffi::Py_ssize_t = 0;
        let mut k: *mut ffi::PyObject = std::ptr::null_mut();
        let mut v: *mut ffi::PyObject = std::ptr::null_mut();
        let mut n = ffi::PyDict_Size(d) as usize;
        while ffi::PyDict_Next(d, &mut pos, &mut k, &mut v) != 0 {
            if is_skip(k) {
                n -= 1;
            }
        }
        envelope::write_map_header(buf, n).map_err(|_| Unsupported)?;
        pos = 0;
        while ffi::PyDict_Next(d, &mut pos, &mut k, &mut v) != 0 {
            if is_skip(k) {
                continue;
            }
            fast_pack(buf, k, 1)?;
            if let Some((sections, cv, vs)) = fresh {
                if v == cv || v == vs {
                    let (seen, n) = (v == vs, ffi::PyDict_Size(v) as usize);
                    if let Some(later) = defer.as_deref_mut() {
                        // (the section's bytes are written by the caller, after its header)
                        if let Some(len) = sections::pack_fresh_header(sections, seen, n, buf) {
                            later.push((buf.len(), seen, len));
                            continue;
                        }
                    } else if sections::pack_fresh(sections, seen, n, buf) {
                        continue;
                    }
                }
            }
            if (is_key(k, b"channel_versions") || is_key(k, b"versions_seen"))
                && sections::pack_registered(buf, v)
            {
                continue;
            }
            match cache.as_deref_mut() {
                Some(c)
                    if ffi::Py_TYPE(v) == std::ptr::addr_of_mut!(ffi::PyDict_Type)
                        && is_key(k, b"versions_seen") =>
                {
                    fast_pack_seen(py, buf, v, c)?
                }
                _ => fast_pack(buf, v, 1)?,
            }
        }
    }
    Ok(())
}

/// `pack_checkpoint_envelope(checkpoint)` for a checkpoint the engine just created, its
/// two version dicts written from `fresh`'s sections; None when the fast path does not
/// apply (the caller then lets the saver encode it).
pub(crate) fn pack_fresh_checkpoint<'py>(
    checkpoint: &Bound<'py, PyDict>,
    fresh: Fresh<'_>,
) -> Option<Bound<'py, PyBytes>> {
    let mut buf = pack_buffer();
    let mut later: Vec<Deferred> = Vec::with_capacity(2);
    let out = fast_pack_checkpoint(&mut buf, checkpoint, None, Some(fresh), Some(&mut later))
        .ok()
        .and_then(|()| join_deferred(checkpoint.py(), &buf, &later, fresh.0));
    give_back(buf);
    out
}

/// Where a version dict's section goes in an envelope packed without it: (offset in the
/// packed bytes, `versions_seen`?, length of the section's bytes).
type Deferred = (usize, bool, usize);

/// The envelope: `head` (packed without the sections' bytes) with the sections' bytes
/// written at their offsets, straight into the new bytes object (the sections, most of
/// an envelope, are copied once); None if a section's length changed meanwhile.
fn join_deferred<'py>(
    py: Python<'py>,
    head: &[u8],
    later: &[Deferred],
    sections: &sections::SharedSections,
) -> Option<Bound<'py, PyBytes>> {
    let s = sections::lock(sections);
    let mut total = head.len();
    for &(_, seen, len) in later {
        if sections::fresh_bytes(&s, seen).len() != len {
            return None;
        }
        total += len;
    }
    // SAFETY: a new bytes object of `total` bytes (NULL contents: uninitialised), every
    // byte of which is written below before the object is handed out; the GIL is held.
    unsafe {
        let obj = ffi::PyBytes_FromStringAndSize(std::ptr::null(), total as ffi::Py_ssize_t);
        if obj.is_null() {
            ffi::PyErr_Clear();
            return None;
        }
        let out = ffi::PyBytes_AsString(obj).cast::<u8>();
        let mut o = 0;
        let mut copy = |part: &[u8]| {
            std::ptr::copy_nonoverlapping(part.as_ptr(), out.add(o), part.len());
            o += part.len();
        };
        let mut last = 0;
        for &(pos, seen, _) in later {
            copy(&head[last..pos]);
            copy(sections::fresh_bytes(&s, seen));
            last = pos;
        }
        copy(&head[last..]);
        debug_assert_eq!(o, total);
        Some(Bound::from_owned_ptr(py, obj).cast_into_unchecked())
    }
}

/// `ormsgpack.packb(checkpoint minus "channel_values", option=OPT_NON_STR_KEYS)`, natively.
#[pyfunction]
fn pack_checkpoint_envelope<'py>(
    py: Python<'py>,
    checkpoint: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut buf = pack_buffer();
    if seen::with_cache(|c| fast_pack_checkpoint(&mut buf, checkpoint, c, None, None)).is_ok() {
        let out = PyBytes::new(py, &buf);
        give_back(buf);
        return Ok(out);
    }
    buf.clear();
    let skip = checkpoint
        .iter()
        .filter(|(k, _)| is_channel_values_key(k))
        .count();
    let fail = |e: PackError| {
        let path: String = e.path.iter().rev().map(String::as_str).collect();
        PyTypeError::new_err(format!(
            "pack_checkpoint_envelope: {} at checkpoint{path}",
            e.message
        ))
    };
    envelope::write_map_header(&mut buf, checkpoint.len() - skip)
        .map_err(|e| fail(PackError::new(e.message)))?;
    for (k, v) in checkpoint.iter() {
        if is_channel_values_key(&k) {
            continue;
        }
        pack_value(&mut buf, &k, 1).map_err(|e| fail(e.at(format!("<key {}>", key_repr(&k)))))?;
        pack_value(&mut buf, &v, 1).map_err(|e| fail(e.at(format!("[{}]", key_repr(&k)))))?;
    }
    Ok(PyBytes::new(py, &buf))
}

/// How many `channel_versions` / `versions_seen` dicts `pack_checkpoint_envelope` copied
/// from the engine's prepared entries instead of encoding (a diagnostic for tests).
#[pyfunction]
fn _envelope_cache_hits() -> u64 {
    sections::HITS.load(std::sync::atomic::Ordering::Relaxed)
}

// ---------------------------------------------------------------- envelope decoding

enum UnpackError {
    Decode(envelope::DecodeError),
    Py(PyErr),
}

impl From<envelope::DecodeError> for UnpackError {
    fn from(e: envelope::DecodeError) -> Self {
        UnpackError::Decode(e)
    }
}

impl From<PyErr> for UnpackError {
    fn from(e: PyErr) -> Self {
        UnpackError::Py(e)
    }
}

fn unpack_value<'py>(
    py: Python<'py>,
    r: &mut Reader<'_>,
    depth: usize,
    as_key: bool,
) -> Result<Bound<'py, PyAny>, UnpackError> {
    let at = r.position();
    let token = r.next_token()?;
    let nested = |r: &Reader<'_>| -> Result<(), UnpackError> {
        if depth >= envelope::MAX_DECODE_DEPTH {
            return Err(r.error("msgpack nesting too deep").into());
        }
        Ok(())
    };
    Ok(match token {
        Token::Nil => py.None().into_bound(py),
        Token::Bool(b) => PyBool::new(py, b).to_owned().into_any(),
        Token::Int(i) => PyInt::new(py, i).into_any(),
        Token::UInt(u) => PyInt::new(py, u).into_any(),
        Token::Float(f) => PyFloat::new(py, f).into_any(),
        Token::Str(s) => PyString::new(py, s).into_any(),
        Token::Bin(b) => PyBytes::new(py, b).into_any(),
        Token::Array(n) => {
            nested(r)?;
            let mut items = Vec::with_capacity(n.min(r.remaining()));
            for _ in 0..n {
                items.push(unpack_value(py, r, depth + 1, as_key)?);
            }
            if as_key {
                PyTuple::new(py, items)?.into_any()
            } else {
                PyList::new(py, items)?.into_any()
            }
        }
        Token::Map(n) => {
            if as_key {
                return Err(envelope::DecodeError {
                    message: "a map cannot be a map key".to_string(),
                    offset: at,
                }
                .into());
            }
            nested(r)?;
            let d = PyDict::new(py);
            for _ in 0..n {
                let k = unpack_value(py, r, depth + 1, true)?;
                let v = unpack_value(py, r, depth + 1, false)?;
                d.set_item(k, v)?;
            }
            d.into_any()
        }
        Token::Ext(code, _) => {
            return Err(envelope::DecodeError {
                message: format!("unsupported msgpack extension type {code}"),
                offset: at,
            }
            .into())
        }
    })
}

/// Decodes a checkpoint envelope written by `pack_checkpoint_envelope` (or ormsgpack).
#[pyfunction]
fn unpack_checkpoint_envelope<'py>(py: Python<'py>, data: &[u8]) -> PyResult<Bound<'py, PyDict>> {
    let mut r = Reader::new(data);
    let invalid = |e: envelope::DecodeError| {
        PyValueError::new_err(format!("invalid checkpoint envelope: {e}"))
    };
    if !matches!(data.first(), Some(0x80..=0x8f | 0xde | 0xdf)) {
        return Err(invalid(r.error("expected a msgpack map")));
    }
    let value = match unpack_value(py, &mut r, 0, false) {
        Ok(v) => v,
        Err(UnpackError::Decode(e)) => return Err(invalid(e)),
        Err(UnpackError::Py(e)) => {
            return Err(PyValueError::new_err(format!(
                "invalid checkpoint envelope: {e}"
            )))
        }
    };
    if r.remaining() != 0 {
        return Err(invalid(r.error("trailing data after the msgpack value")));
    }
    value
        .cast_into::<PyDict>()
        .map_err(|_| invalid(r.error("expected a msgpack map")))
}
