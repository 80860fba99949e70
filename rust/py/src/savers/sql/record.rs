//! The SQL savers' checkpoint record (see `sql::codec::encode`) in its two written forms:
//! a dict for a serializer, or the msgpack bytes ormsgpack would make of that dict.
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use super::codec::{compacted_dict, full_versions, split_version, Delta, Pair, StateParts};
use crate::envelope::try_pack;
use warpgraph_core::envelope;

/// How a record stores its versions and inline values.
pub(crate) enum Body<'py> {
    /// Against the base: the version delta, inline values set (`(type, bytes)`) and
    /// dropped.
    Delta(Delta<'py>, Vec<Pair<'py>>, Vec<Bound<'py, PyAny>>),
    /// In full: the state's `(cv, vs, inline)`.
    Full(StateParts<'py>),
}

/// A checkpoint record before it is written as a dict or as msgpack bytes. Keys, in
/// order: v, id, ts, u (updated_channels, if any), x (other checkpoint keys, if any),
/// then c, cd, s, sk, sd, i, ix for a delta (the empty ones left out but c) or c, s, i
/// (i only if non-empty) in full.
pub(crate) struct Record<'py> {
    pub head: Vec<(&'static str, Bound<'py, PyAny>)>,
    pub body: Body<'py>,
}

impl<'py> Record<'py> {
    pub fn to_dict(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        for (k, v) in &self.head {
            out.set_item(*k, v)?;
        }
        match &self.body {
            Body::Delta(d, set_i, del_i) => {
                out.set_item("c", compacted_dict(py, &d.set_cv)?)?;
                if !d.del_cv.is_empty() {
                    out.set_item("cd", PyList::new(py, &d.del_cv)?)?;
                }
                if !d.set_vs.is_empty() {
                    let s = PyDict::new(py);
                    for (node, entries) in &d.set_vs {
                        s.set_item(node, compacted_dict(py, entries)?)?;
                    }
                    out.set_item("s", s)?;
                }
                if !d.del_vs_keys.is_empty() {
                    let sk = PyDict::new(py);
                    for (node, keys) in &d.del_vs_keys {
                        sk.set_item(node, PyList::new(py, keys)?)?;
                    }
                    out.set_item("sk", sk)?;
                }
                if !d.del_vs.is_empty() {
                    out.set_item("sd", PyList::new(py, &d.del_vs)?)?;
                }
                if !set_i.is_empty() {
                    out.set_item("i", inline_lists(py, set_i.iter().cloned())?)?;
                }
                if !del_i.is_empty() {
                    out.set_item("ix", PyList::new(py, del_i)?)?;
                }
            }
            Body::Full((cv, vs, inline)) => {
                let (c, s) = full_versions(cv, vs)?;
                out.set_item("c", c)?;
                out.set_item("s", s)?;
                if !inline.is_empty() {
                    out.set_item("i", inline_lists(py, inline.iter())?)?;
                }
            }
        }
        Ok(out)
    }

    /// The msgpack bytes `ormsgpack.packb(self.to_dict())` gives, written directly; None
    /// when a value is not an exact builtin (the caller serializes the dict instead).
    pub fn to_bytes(&self) -> Option<Vec<u8>> {
        let mut buf = Vec::with_capacity(256);
        let w = &mut buf;
        let n_body = match &self.body {
            Body::Delta(d, set_i, del_i) => {
                1 + usize::from(!d.del_cv.is_empty())
                    + usize::from(!d.set_vs.is_empty())
                    + usize::from(!d.del_vs_keys.is_empty())
                    + usize::from(!d.del_vs.is_empty())
                    + usize::from(!set_i.is_empty())
                    + usize::from(!del_i.is_empty())
            }
            Body::Full((_, _, inline)) => 2 + usize::from(!inline.is_empty()),
        };
        envelope::write_map_header(w, self.head.len() + n_body).ok()?;
        for (k, v) in &self.head {
            key(w, k)?;
            pack(w, v)?;
        }
        match &self.body {
            Body::Delta(d, set_i, del_i) => {
                key(w, "c")?;
                versions_map(w, d.set_cv.len(), d.set_cv.iter().cloned())?;
                if !d.del_cv.is_empty() {
                    key(w, "cd")?;
                    array(w, &d.del_cv)?;
                }
                if !d.set_vs.is_empty() {
                    key(w, "s")?;
                    envelope::write_map_header(w, d.set_vs.len()).ok()?;
                    for (node, entries) in &d.set_vs {
                        pack(w, node)?;
                        versions_map(w, entries.len(), entries.iter().cloned())?;
                    }
                }
                if !d.del_vs_keys.is_empty() {
                    key(w, "sk")?;
                    envelope::write_map_header(w, d.del_vs_keys.len()).ok()?;
                    for (node, keys) in &d.del_vs_keys {
                        pack(w, node)?;
                        array(w, keys)?;
                    }
                }
                if !d.del_vs.is_empty() {
                    key(w, "sd")?;
                    array(w, &d.del_vs)?;
                }
                if !set_i.is_empty() {
                    key(w, "i")?;
                    envelope::write_map_header(w, set_i.len()).ok()?;
                    for (k, v) in set_i {
                        pack(w, k)?;
                        pack(w, v)?;
                    }
                }
                if !del_i.is_empty() {
                    key(w, "ix")?;
                    array(w, del_i)?;
                }
            }
            Body::Full((cv, vs, inline)) => {
                key(w, "c")?;
                versions_map(w, cv.len(), cv.iter())?;
                key(w, "s")?;
                envelope::write_map_header(w, vs.len()).ok()?;
                for (node, seen) in vs.iter() {
                    pack(w, &node)?;
                    let seen = seen.cast_into::<PyDict>().ok()?;
                    versions_map(w, seen.len(), seen.iter())?;
                }
                if !inline.is_empty() {
                    key(w, "i")?;
                    pack(w, inline.as_any())?;
                }
            }
        }
        Some(buf)
    }
}

fn key(w: &mut Vec<u8>, k: &str) -> Option<()> {
    envelope::write_str(w, k).ok()
}

fn pack(w: &mut Vec<u8>, v: &Bound<'_, PyAny>) -> Option<()> {
    try_pack(w, v).then_some(())
}

fn array(w: &mut Vec<u8>, items: &[Bound<'_, PyAny>]) -> Option<()> {
    envelope::write_array_header(w, items.len()).ok()?;
    items.iter().try_for_each(|k| pack(w, k))
}

/// A map of `key: version`, each version written compacted (see `compact`).
fn versions_map<'py>(
    w: &mut Vec<u8>,
    n: usize,
    entries: impl Iterator<Item = Pair<'py>>,
) -> Option<()> {
    envelope::write_map_header(w, n).ok()?;
    for (k, v) in entries {
        pack(w, &k)?;
        let split = match v.cast_exact::<PyString>() {
            Ok(s) => split_version(s.to_str().ok()?),
            Err(_) => None,
        };
        match split {
            Some((n, r)) => {
                envelope::write_array_header(w, 2).ok()?;
                match i64::try_from(n) {
                    Ok(i) => envelope::write_i64(w, i),
                    Err(_) => envelope::write_u64(w, n),
                }
                envelope::write_f64(w, r);
            }
            None => pack(w, &v)?,
        }
    }
    Some(())
}

fn inline_lists<'py>(
    py: Python<'py>,
    pairs: impl Iterator<Item = (Bound<'py, PyAny>, Bound<'py, PyAny>)>,
) -> PyResult<Bound<'py, PyDict>> {
    let out = PyDict::new(py);
    for (k, v) in pairs {
        out.set_item(
            k,
            PyList::new(py, v.try_iter()?.collect::<PyResult<Vec<_>>>()?)?,
        )?;
    }
    Ok(out)
}
