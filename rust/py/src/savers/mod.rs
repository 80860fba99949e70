//! The checkpoint savers' native parts: the metadata every saver records, the SQL savers'
//! codec and rows, and the SQLite saver's items and group-commit writer.
use pyo3::prelude::*;

pub(crate) mod metadata;
pub(crate) mod sql;
pub(crate) mod sqlite;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    sql::codec::register(m)?;
    metadata::register(m)?;
    sql::rows::register(m)?;
    sqlite::register(m)?;
    Ok(())
}
