//! Group commit for the SQLite saver without the interpreter: a connection on the
//! process's own SQLite library (`ffi`, `conn`), the transaction of a batch of already
//! encoded operations (`batch`), the thread that queues operations and commits them in
//! batches by its timing policy (`group`), a thread that checkpoints the write-ahead log
//! beside the writer (`checkpointer`), and the bounded spin of its short waits (`spin`).
//! The binding runs the group's thread, which takes the GIL only to report.
pub mod batch;
pub mod checkpointer;
pub mod conn;
pub mod ffi;
pub mod group;
pub mod spin;

pub use batch::{BatchWriter, Fallback, Op, Sql, Table};
pub use checkpointer::Checkpointer;
pub use conn::{Connection, SqlError, Value};
pub use ffi::Api;
pub use group::{Closed, GroupCommit, Queued, SqliteStore, Store, Timing};
pub use spin::spin_until;

#[cfg(test)]
mod tests;
