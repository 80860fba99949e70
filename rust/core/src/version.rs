//! Channel versions with Python's comparison semantics, LangGraph's two version schemes
//! (`increment`, and the savers' `"{n:032}.{random:016}"` strings, made in
//! `saver_version`) and an insertion-ordered name -> value map used for `channel_versions`
//! / `versions_seen`.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use crate::error::{CoreError, CoreResult};

/// A channel version: a Python `int`, `float` or `str`.
#[derive(Debug, Clone)]
pub enum Version {
    Int(i64),
    Float(f64),
    Str(Arc<str>),
}

impl PartialEq for Version {
    fn eq(&self, other: &Self) -> bool {
        matches!(compare(self, other), Some(Ordering::Equal))
    }
}

impl Version {
    /// Builds a string version.
    pub fn str(s: &str) -> Version {
        Version::Str(Arc::from(s))
    }

    /// Python's type name, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Version::Int(_) => "int",
            Version::Float(_) => "float",
            Version::Str(_) => "str",
        }
    }

    /// `type(self)()`: the null version of this version's type.
    pub fn null_of(&self) -> Version {
        match self {
            Version::Int(_) => Version::Int(0),
            Version::Float(_) => Version::Float(0.0),
            Version::Str(_) => Version::str(""),
        }
    }
}

fn type_name(v: Option<&Version>) -> &'static str {
    v.map_or("NoneType", Version::type_name)
}

fn int_float_cmp(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    // Exact for |i| < 2^53; beyond that compare via i128 after bounding the float.
    if (i.unsigned_abs()) < (1u64 << 53) {
        return (i as f64).partial_cmp(&f);
    }
    if f >= 9.3e18 {
        return Some(Ordering::Less);
    }
    if f <= -9.3e18 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    match (i as i128).cmp(&(t as i128)) {
        Ordering::Equal if f > t => Some(Ordering::Less),
        Ordering::Equal if f < t => Some(Ordering::Greater),
        o => Some(o),
    }
}

/// Orders two versions of comparable types (`None` when Python would raise TypeError or
/// the values are unordered, e.g. NaN).
fn compare(a: &Version, b: &Version) -> Option<Ordering> {
    match (a, b) {
        (Version::Int(x), Version::Int(y)) => Some(x.cmp(y)),
        (Version::Float(x), Version::Float(y)) => x.partial_cmp(y),
        (Version::Int(x), Version::Float(y)) => int_float_cmp(*x, *y),
        (Version::Float(x), Version::Int(y)) => int_float_cmp(*y, *x).map(Ordering::reverse),
        // Byte order of UTF-8 equals Python's code point order.
        (Version::Str(x), Version::Str(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        _ => None,
    }
}

fn comparable(a: &Version, b: &Version) -> bool {
    !matches!(
        (a, b),
        (Version::Str(_), Version::Int(_) | Version::Float(_))
            | (Version::Int(_) | Version::Float(_), Version::Str(_))
    )
}

/// Python's `a > b` where `None` stands for Python's `None`.
pub fn py_gt<E>(a: Option<&Version>, b: Option<&Version>) -> CoreResult<bool, E> {
    match (a, b) {
        (Some(x), Some(y)) if comparable(x, y) => {
            Ok(matches!(compare(x, y), Some(Ordering::Greater)))
        }
        _ => Err(CoreError::VersionType(format!(
            "'>' not supported between instances of '{}' and '{}'",
            type_name(a),
            type_name(b)
        ))),
    }
}

/// Python's `max(versions)`: the first of the greatest values (`None` if empty).
pub fn py_max<'a, E>(
    versions: impl IntoIterator<Item = &'a Version>,
) -> CoreResult<Option<&'a Version>, E> {
    let mut best: Option<&Version> = None;
    for v in versions {
        best = match best {
            None => Some(v),
            Some(b) => {
                if py_gt(Some(v), Some(b))? {
                    Some(v)
                } else {
                    Some(b)
                }
            }
        };
    }
    Ok(best)
}

/// LangGraph's `increment`: `None -> 1`, else `current + 1`.
pub fn increment<E>(current: Option<&Version>) -> CoreResult<Version, E> {
    match current {
        None => Ok(Version::Int(1)),
        Some(Version::Int(i)) => i.checked_add(1).map(Version::Int).ok_or_else(|| {
            CoreError::InvalidArgument(format!("version {i} is too large to increment"))
        }),
        Some(Version::Float(f)) => Ok(Version::Float(f + 1.0)),
        Some(Version::Str(_)) => Err(CoreError::VersionType(
            "can only concatenate str (not \"int\") to str".to_string(),
        )),
    }
}

/// The integer part of a saver version: the int itself, or `int(s.split(".")[0])`.
pub fn integer_part<E>(current: Option<&Version>) -> CoreResult<i128, E> {
    match current {
        None => Ok(0),
        Some(Version::Int(i)) => Ok(i128::from(*i)),
        Some(Version::Float(_)) => Err(CoreError::VersionType(
            "'float' object has no attribute 'split'".to_string(),
        )),
        Some(Version::Str(s)) => {
            let head = s.split('.').next().unwrap_or("");
            if head.bytes().all(|b| b.is_ascii_digit()) {
                if let Ok(n) = head.parse::<i128>() {
                    return Ok(n);
                }
            }
            let cleaned: String = head.trim().chars().filter(|c| *c != '_').collect();
            cleaned.parse::<i128>().map_err(|_| {
                CoreError::InvalidArgument(format!(
                    "invalid literal for int() with base 10: '{head}'"
                ))
            })
        }
    }
}

pub use crate::saver_version::{
    format_float_016, next_saver_version, py_float_repr, random_unit, split_saver_version,
};

/// A small, fast, non-cryptographic hasher (FxHash) for the name maps: their keys are graph
/// channel / node names, not attacker-chosen data.
#[derive(Debug, Default, Clone, Copy)]
pub struct FxHasher {
    hash: u64,
}

const FX_SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(FX_SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

/// A `HashMap` with [`FxHasher`].
pub type FastMap<K, T> = HashMap<K, T, BuildHasherDefault<FxHasher>>;

/// An insertion-ordered `str -> T` map (Python dict order), without removal. Small maps
/// (most `versions_seen` entries) are searched linearly; the hash index is built only once
/// the map outgrows [`SMALL`].
#[derive(Debug, Clone)]
pub struct OrdMap<T> {
    keys: Vec<Arc<str>>,
    vals: Vec<T>,
    index: Option<FastMap<Arc<str>, usize>>,
}

/// Size up to which an [`OrdMap`] has no hash index.
const SMALL: usize = 8;

impl<T> Default for OrdMap<T> {
    fn default() -> Self {
        OrdMap {
            keys: Vec::new(),
            vals: Vec::new(),
            index: None,
        }
    }
}

impl<T> OrdMap<T> {
    pub fn new() -> Self {
        Self::default()
    }
    /// An empty map with room for `n` entries.
    pub fn with_capacity(n: usize) -> Self {
        let mut index: Option<FastMap<Arc<str>, usize>> = None;
        if n > SMALL {
            let mut ix = FastMap::default();
            ix.reserve(n);
            index = Some(ix);
        }
        OrdMap {
            keys: Vec::with_capacity(n),
            vals: Vec::with_capacity(n),
            index,
        }
    }
    pub fn len(&self) -> usize {
        self.keys.len()
    }
    /// Makes room for `additional` more entries (the index, once built, too).
    pub fn reserve(&mut self, additional: usize) {
        self.keys.reserve(additional);
        self.vals.reserve(additional);
        if let Some(ix) = &mut self.index {
            ix.reserve(additional);
        }
    }
    /// Appends `key`, which the caller knows is not in the map. Returns the slot.
    pub fn push_absent(&mut self, key: Arc<str>, value: T) -> usize {
        debug_assert!(self.slot(&key).is_none());
        self.push_new(key, value)
    }
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
    /// Position of `key` (stable: entries are never removed).
    pub fn slot(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(ix) => ix.get(key).copied(),
            None => self.keys.iter().position(|k| **k == *key),
        }
    }
    pub fn get(&self, key: &str) -> Option<&T> {
        self.slot(key).map(|i| &self.vals[i])
    }
    pub fn get_mut(&mut self, key: &str) -> Option<&mut T> {
        self.slot(key).map(|i| &mut self.vals[i])
    }
    pub fn at(&self, slot: usize) -> &T {
        &self.vals[slot]
    }
    pub fn at_mut(&mut self, slot: usize) -> &mut T {
        &mut self.vals[slot]
    }
    /// The key at `slot`.
    pub fn key_at(&self, slot: usize) -> &Arc<str> {
        &self.keys[slot]
    }
    pub fn set_at(&mut self, slot: usize, value: T) {
        self.vals[slot] = value;
    }
    /// Inserts or replaces; a new key goes last. Returns the slot.
    pub fn insert(&mut self, key: &str, value: T) -> usize {
        if let Some(i) = self.slot(key) {
            self.vals[i] = value;
            return i;
        }
        self.push_new(Arc::from(key), value)
    }
    /// Like [`OrdMap::insert`] but reuses the caller's shared key.
    pub fn insert_arc(&mut self, key: &Arc<str>, value: T) -> usize {
        if let Some(i) = self.slot(key) {
            self.vals[i] = value;
            return i;
        }
        self.push_new(key.clone(), value)
    }
    fn push_new(&mut self, key: Arc<str>, value: T) -> usize {
        let slot = self.keys.len();
        match &mut self.index {
            Some(ix) => {
                ix.insert(key.clone(), slot);
            }
            None if slot >= SMALL => {
                let mut ix: FastMap<Arc<str>, usize> = FastMap::default();
                ix.reserve((slot * 2).max(self.keys.capacity()));
                for (i, k) in self.keys.iter().enumerate() {
                    ix.insert(k.clone(), i);
                }
                ix.insert(key.clone(), slot);
                self.index = Some(ix);
            }
            None => {}
        }
        self.keys.push(key);
        self.vals.push(value);
        slot
    }
    /// `setdefault(key, make())`, returning the value.
    pub fn entry_or_insert_with(&mut self, key: &str, make: impl FnOnce() -> T) -> &mut T {
        let i = match self.slot(key) {
            Some(i) => i,
            None => self.insert(key, make()),
        };
        &mut self.vals[i]
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.keys.iter().map(|k| &**k).zip(self.vals.iter())
    }
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.vals.iter()
    }
    pub fn first(&self) -> Option<&T> {
        self.vals.first()
    }
}

/// `{channel: version}` in dict order.
pub type VersionMap = OrdMap<Version>;

/// Python's `max(channel_versions.values())`, kept incrementally while every version is an
/// int or every version is a str (total orders where equal values are indistinguishable);
/// otherwise recomputed each time with Python's exact semantics (incl. its TypeErrors).
#[derive(Debug, Default, Clone)]
pub struct MaxCache {
    ints: usize,
    floats: usize,
    strs: usize,
    max: Option<Version>,
    valid: bool,
}

impl MaxCache {
    /// Counts the versions of `m`; the maximum is computed on first use.
    pub fn new(m: &VersionMap) -> Self {
        let mut c = MaxCache::default();
        for v in m.values() {
            c.count(v, true);
        }
        c
    }

    fn count(&mut self, v: &Version, add: bool) {
        let n = match v {
            Version::Int(_) => &mut self.ints,
            Version::Float(_) => &mut self.floats,
            Version::Str(_) => &mut self.strs,
        };
        if add {
            *n += 1;
        } else {
            *n -= 1;
        }
    }

    /// Whether all versions are of one totally ordered type (all int or all str).
    pub fn homogeneous(&self) -> bool {
        self.floats == 0 && (self.ints == 0 || self.strs == 0)
    }

    /// Records that a slot's version went from `old` to `new`.
    pub fn replace(&mut self, old: Option<&Version>, new: &Version) {
        if let Some(o) = old {
            self.count(o, false);
        }
        self.count(new, true);
        if !self.valid {
            return;
        }
        if !self.homogeneous() {
            self.valid = false;
            self.max = None;
            return;
        }
        match &self.max {
            None => self.max = Some(new.clone()),
            Some(m) => {
                if matches!(compare(new, m), Some(Ordering::Greater)) {
                    self.max = Some(new.clone());
                } else if old.is_some_and(|o| o == m) && new != m {
                    self.valid = false;
                }
            }
        }
    }

    /// The maximum of `m` (the map this cache tracks).
    pub fn get<E>(&mut self, m: &VersionMap) -> CoreResult<Option<Version>, E> {
        if !self.homogeneous() {
            return Ok(py_max(m.values())?.cloned());
        }
        if !self.valid {
            self.max = py_max(m.values())?.cloned();
            self.valid = true;
        }
        Ok(self.max.clone())
    }
}

/// `checkpoint_null_version`: `type(first version)()`, `None` when there are no versions.
pub fn null_version(versions: &VersionMap) -> Option<Version> {
    versions.first().map(Version::null_of)
}

/// `get_new_channel_versions(previous, current)`.
pub fn new_versions<E>(previous: &VersionMap, current: &VersionMap) -> CoreResult<VersionMap, E> {
    if previous.is_empty() {
        return Ok(current.clone());
    }
    let null = null_version(current);
    let mut out = VersionMap::new();
    for (k, v) in current.iter() {
        if py_gt(Some(v), previous.get(k).or(null.as_ref()))? {
            out.insert(k, v.clone());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    type R<T> = CoreResult<T>;

    #[test]
    fn increments() {
        assert!(matches!(increment::<()>(None), Ok(Version::Int(1))));
        assert!(matches!(
            increment::<()>(Some(&Version::Int(4))),
            Ok(Version::Int(5))
        ));
        assert!(matches!(
            increment::<()>(Some(&Version::str("a"))),
            Err(CoreError::VersionType(_))
        ));
    }

    #[test]
    fn python_ordering() {
        let gt = |a: &Version, b: &Version| -> R<bool> { py_gt(Some(a), Some(b)) };
        assert!(gt(&Version::Int(2), &Version::Int(1)).unwrap());
        assert!(!gt(&Version::Int(1), &Version::Float(1.0)).unwrap());
        assert!(gt(&Version::Float(1.5), &Version::Int(1)).unwrap());
        assert!(gt(&Version::str("b"), &Version::str("ab")).unwrap());
        assert!(!gt(&Version::str(""), &Version::str("")).unwrap());
        let err = gt(&Version::str("1"), &Version::Int(0)).unwrap_err();
        assert!(
            matches!(err, CoreError::VersionType(m) if m == "'>' not supported between instances of 'str' and 'int'")
        );
        assert!(py_gt::<()>(None, None).is_err());
        let vs = [Version::Int(1), Version::Float(3.0), Version::Int(3)];
        assert!(matches!(
            py_max::<()>(vs.iter()).unwrap(),
            Some(Version::Float(_))
        ));
        assert!(py_max::<()>([].iter()).unwrap().is_none());
    }

    #[test]
    fn ordered_map_and_new_versions() {
        let mut prev = VersionMap::new();
        let mut cur = VersionMap::new();
        cur.insert("b", Version::Int(2));
        cur.insert("a", Version::Int(1));
        assert_eq!(new_versions::<()>(&prev, &cur).unwrap().len(), 2);
        prev.insert("a", Version::Int(1));
        let nv = new_versions::<()>(&prev, &cur).unwrap();
        assert_eq!(nv.iter().map(|(k, _)| k).collect::<Vec<_>>(), vec!["b"]);
        cur.insert("b", Version::Int(5));
        assert_eq!(
            cur.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            vec!["b", "a"]
        );
        assert!(matches!(null_version(&cur), Some(Version::Int(0))));
    }

    #[test]
    fn max_cache_matches_python_max() {
        let mut m = VersionMap::new();
        let mut c = MaxCache::new(&m);
        let set = |m: &mut VersionMap, c: &mut MaxCache, k: &str, v: Version| {
            c.replace(m.get(k), &v);
            m.insert(k, v);
        };
        assert!(c.get::<()>(&m).unwrap().is_none());
        set(&mut m, &mut c, "a", Version::Int(3));
        set(&mut m, &mut c, "b", Version::Int(5));
        assert!(matches!(c.get::<()>(&m).unwrap(), Some(Version::Int(5))));
        // The maximum goes down (a callable next_version may do that): recomputed.
        set(&mut m, &mut c, "b", Version::Int(1));
        assert!(matches!(c.get::<()>(&m).unwrap(), Some(Version::Int(3))));
        // Mixed types: Python's max, including its TypeError.
        set(&mut m, &mut c, "c", Version::Float(3.5));
        assert!(matches!(c.get::<()>(&m).unwrap(), Some(Version::Float(_))));
        set(&mut m, &mut c, "d", Version::str("9"));
        assert!(matches!(c.get::<()>(&m), Err(CoreError::VersionType(_))));
        let mut s = VersionMap::new();
        s.insert("x", Version::str("2"));
        s.insert("y", Version::str("10"));
        assert!(
            matches!(MaxCache::new(&s).get::<()>(&s).unwrap(), Some(Version::Str(v)) if &*v == "2")
        );
    }

    #[test]
    fn ordered_map_grows_an_index() {
        let mut m: OrdMap<usize> = OrdMap::new();
        for i in 0..40 {
            assert_eq!(m.insert(&format!("k{i}"), i), i);
        }
        assert_eq!(m.insert("k3", 99), 3);
        let k7: Arc<str> = Arc::from("k7");
        assert_eq!(m.insert_arc(&k7, 70), 7);
        for i in 0..40 {
            let want = match i {
                3 => 99,
                7 => 70,
                _ => i,
            };
            assert_eq!(m.get(&format!("k{i}")), Some(&want));
            assert_eq!(m.slot(&format!("k{i}")), Some(i));
        }
        assert_eq!(m.get("k40"), None);
        assert_eq!(m.len(), 40);
        assert_eq!(m.iter().nth(5).map(|(k, _)| k), Some("k5"));
    }
}
