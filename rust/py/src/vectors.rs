//! Similarity ranking for the stores' vector search: each candidate's best cosine
//! similarity to a query over its packed vectors, and the top of the ranking.
use std::cmp::Ordering;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cosine_top, m)?)?;
    Ok(())
}

fn cosine(query: &[f64], query_norm: f64, vector: &[u8]) -> f64 {
    let mut dot = 0.0;
    let mut squares = 0.0;
    for (q, raw) in query.iter().zip(vector.chunks_exact(8)) {
        let mut word = [0u8; 8];
        word.copy_from_slice(raw);
        let v = f64::from_ne_bytes(word);
        dot += q * v;
        squares += v * v;
    }
    let other = squares.sqrt();
    if query_norm == 0.0 || other == 0.0 {
        0.0
    } else {
        dot / (query_norm * other)
    }
}

/// `cosine_top(query, packed, k)`: `packed` holds per candidate `None` (no vectors, not
/// ranked) or bytes of its vectors, consecutive native float64 arrays of `len(query)`
/// values. Returns `[(position, score)]` of the `k` best candidates, best first, ties in
/// position order; a score is the candidate's best cosine similarity (0.0 against an
/// all-zero vector), summed in the order Python's `sum(map(mul, q, v))` sums.
#[pyfunction]
fn cosine_top(
    query: Vec<f64>,
    packed: &Bound<'_, PyList>,
    k: usize,
) -> PyResult<Vec<(usize, f64)>> {
    let width = query.len() * 8;
    if width == 0 {
        return Err(PyValueError::new_err(
            "cosine_top: the query vector is empty",
        ));
    }
    let query_norm = query.iter().map(|x| x * x).sum::<f64>().sqrt();
    let mut scored: Vec<(usize, f64)> = Vec::with_capacity(packed.len());
    for (pos, entry) in packed.iter().enumerate() {
        if entry.is_none() {
            continue;
        }
        let bytes = entry.cast::<PyBytes>()?.as_bytes();
        if bytes.is_empty() || bytes.len() % width != 0 {
            return Err(PyValueError::new_err(format!(
                "cosine_top: candidate {pos} has {} bytes of vectors, not a multiple of \
                 {width} (float64 vectors of the query's {} dimensions)",
                bytes.len(),
                query.len()
            )));
        }
        let best = bytes
            .chunks_exact(width)
            .map(|v| cosine(&query, query_norm, v))
            .fold(f64::NEG_INFINITY, f64::max);
        scored.push((pos, best));
    }
    scored.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(Ordering::Equal)
            .then(a.0.cmp(&b.0))
    });
    scored.truncate(k);
    Ok(scored)
}
