//! Conversions between Python objects and core values: versions, version maps, task paths.

use std::collections::HashMap;
use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use warpgraph_core::ids::PathPart;
use warpgraph_core::version::{OrdMap, Version, VersionMap};

use super::graphspec::SpecInner;

/// A Python int, float or str as a version.
pub fn version_from_py(v: &Bound<'_, PyAny>) -> PyResult<Version> {
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Version::Str(Arc::from(s.to_str()?)));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(Version::Int(v.extract()?));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(Version::Float(v.extract()?));
    }
    Err(PyTypeError::new_err(format!(
        "channel versions must be int, float or str, got {}: {}",
        v.get_type().name()?,
        v.repr()?
    )))
}

/// Converts versions to Python, sharing one `str` object per distinct version string and
/// reusing the graph's interned channel / node names as dict keys.
#[derive(Default)]
pub struct VersionCache<'a> {
    strs: HashMap<usize, Py<PyAny>>,
    spec: Option<&'a SpecInner>,
}

impl<'a> VersionCache<'a> {
    pub fn for_spec(spec: &'a SpecInner) -> Self {
        VersionCache {
            strs: HashMap::new(),
            spec: Some(spec),
        }
    }

    /// A dict key: the interned channel or node name when known.
    pub fn key<'py>(&self, py: Python<'py>, k: &str) -> Bound<'py, PyString> {
        if let Some(spec) = self.spec {
            if let Some(&c) = spec.graph.index.get(k) {
                return spec.chan_names[c].bind(py).clone();
            }
            if let Some(&n) = spec.graph.topology.node_index.get(k) {
                return spec.node_names[n].bind(py).clone();
            }
        }
        PyString::new(py, k)
    }

    pub fn version(&mut self, py: Python<'_>, v: &Version) -> PyResult<Py<PyAny>> {
        Ok(match v {
            Version::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
            Version::Float(f) => PyFloat::new(py, *f).into_any().unbind(),
            Version::Str(s) => {
                let key = Arc::as_ptr(s) as *const u8 as usize;
                self.strs
                    .entry(key)
                    .or_insert_with(|| PyString::new(py, s).into_any().unbind())
                    .clone_ref(py)
            }
        })
    }

    pub fn map_to_py<'py>(
        &mut self,
        py: Python<'py>,
        m: &VersionMap,
    ) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in m.iter() {
            d.set_item(self.key(py, k), self.version(py, v)?)?;
        }
        Ok(d)
    }
}

fn key_str(k: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    match k.cast::<PyString>() {
        Ok(s) => Ok(s.to_str()?.to_owned()),
        Err(_) => Err(PyTypeError::new_err(format!(
            "{what}: expected str, got {}",
            k.repr()?
        ))),
    }
}

/// `{channel: version}` from a dict (order kept).
pub fn version_map_from_py(d: &Bound<'_, PyAny>, what: &str) -> PyResult<VersionMap> {
    let d = d.cast::<PyDict>().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a dict, got {}",
            d.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let mut m = VersionMap::new();
    for (k, v) in d.iter() {
        m.insert(&key_str(&k, what)?, version_from_py(&v)?);
    }
    Ok(m)
}

/// `{node: {channel: version}}` from a dict (two levels, order kept).
pub fn seen_from_py(d: &Bound<'_, PyAny>) -> PyResult<OrdMap<VersionMap>> {
    let d = d
        .cast::<PyDict>()
        .map_err(|_| PyTypeError::new_err("versions_seen must be a dict"))?;
    let mut m = OrdMap::new();
    for (k, v) in d.iter() {
        m.insert(
            &key_str(&k, "versions_seen")?,
            version_map_from_py(&v, "versions_seen entries")?,
        );
    }
    Ok(m)
}

pub fn seen_to_py<'py>(
    py: Python<'py>,
    cache: &mut VersionCache,
    m: &OrdMap<VersionMap>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in m.iter() {
        let key = cache.key(py, k);
        d.set_item(key, cache.map_to_py(py, v)?)?;
    }
    Ok(d)
}

/// A task path element as LangGraph's `task_path_str` sees it.
pub fn path_part(v: &Bound<'_, PyAny>) -> PyResult<PathPart> {
    if let Ok(t) = v.cast::<PyTuple>() {
        return Ok(PathPart::Tuple(
            t.iter().map(|x| path_part(&x)).collect::<PyResult<_>>()?,
        ));
    }
    if let Ok(l) = v.cast::<PyList>() {
        return Ok(PathPart::Tuple(
            l.iter().map(|x| path_part(&x)).collect::<PyResult<_>>()?,
        ));
    }
    if v.is_instance_of::<PyBool>() {
        return Ok(PathPart::Int(i64::from(v.is_truthy()?)));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(PathPart::Int(v.extract()?));
    }
    Ok(PathPart::Str(v.str()?.to_str()?.to_owned()))
}

/// Extracts a list of str from any iterable of str, naming `what` on error.
pub fn str_list(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<String>> {
    if v.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a sequence of str, not a str"
        )));
    }
    let mut out = Vec::new();
    for item in v
        .try_iter()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a sequence of str")))?
    {
        let item = item?;
        out.push(key_str(&item, what)?);
    }
    Ok(out)
}
