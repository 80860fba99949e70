//! Group commit for the SQLite saver without the interpreter: a connection on the
//! process's own SQLite library (`ffi`, `conn`) and the transaction of a batch of already
//! encoded operations (`batch`), and a thread that checkpoints the write-ahead log beside
//! the writer (`checkpointer`), and the bounded spin of its short waits (`spin`). The
//! binding runs it on a thread that never takes the GIL in the usual case.
pub mod batch;
pub mod checkpointer;
pub mod conn;
pub mod ffi;
pub mod spin;

pub use batch::{BatchWriter, Fallback, Op, Sql, Table};
pub use checkpointer::Checkpointer;
pub use conn::{Connection, SqlError, Value};
pub use ffi::Api;
pub use spin::spin_until;

#[cfg(test)]
mod tests;
