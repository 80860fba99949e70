//! The SQLite saver (`warpgraph.checkpoint.sqlite`): a list of operations made into the
//! writer's items in one crossing, and the group-commit writer thread that commits them.
use pyo3::prelude::*;

mod items;
mod put;
mod writer;

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    items::register(m)?;
    writer::register(m)?;
    Ok(())
}
