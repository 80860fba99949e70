//! A SQLite connection owned by one thread: prepared statements kept for its lifetime,
//! parameters bound without copying (they outlive each statement's run).
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::fmt;
use std::sync::atomic::{AtomicI32, Ordering};

use super::ffi::{
    Api, RawDb, RawStmt, SQLITE_DONE, SQLITE_NULL, SQLITE_OK, SQLITE_OPEN_NOMUTEX,
    SQLITE_OPEN_READWRITE, SQLITE_OPEN_URI, SQLITE_ROW,
};

/// A bound parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Text(String),
    Blob(Vec<u8>),
    /// Text (UTF-8) or blob bytes owned elsewhere (e.g. by an immutable Python object the
    /// embedder keeps alive): see [`Value::borrowed`].
    Borrowed {
        ptr: *const u8,
        len: usize,
        text: bool,
    },
}

// SAFETY: a `Borrowed` value is only read, and `Value::borrowed`'s caller keeps its bytes
// valid and unchanged while the value exists, whichever thread holds it
unsafe impl Send for Value {}

impl Value {
    /// Bytes that are not copied.
    ///
    /// # Safety
    /// `bytes` must stay valid and unchanged for as long as the value (or a clone of it)
    /// exists; with `text`, they must be UTF-8.
    pub unsafe fn borrowed(bytes: &[u8], text: bool) -> Value {
        Value::Borrowed {
            ptr: bytes.as_ptr(),
            len: bytes.len(),
            text,
        }
    }
}

/// A failed SQLite call: its result code and the connection's message.
#[derive(Debug, Clone, PartialEq)]
pub struct SqlError {
    pub code: c_int,
    pub message: String,
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (SQLite code {})", self.message, self.code)
    }
}

impl std::error::Error for SqlError {}

/// Index of a statement prepared on a [`Connection`].
#[derive(Debug, Clone, Copy)]
pub struct Stmt(usize);

pub struct Connection {
    api: &'static Api,
    db: *mut RawDb,
    stmts: Vec<*mut RawStmt>,
    /// Frames in the write-ahead log after the last commit (see `track_wal`).
    wal_frames: Box<AtomicI32>,
}

// SAFETY: the connection is opened with SQLITE_OPEN_NOMUTEX and used by one thread at a
// time (it is moved into the writer's thread, never shared)
unsafe impl Send for Connection {}

impl Connection {
    /// Opens an existing database read-write (`uri`: `path` is a "file:" URI).
    pub fn open(api: &'static Api, path: &str, uri: bool) -> Result<Connection, SqlError> {
        let c_path = CString::new(path).map_err(|_| SqlError {
            code: 21, // SQLITE_MISUSE
            message: format!("database path {path:?} holds a NUL"),
        })?;
        let mut flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
        if uri {
            flags |= SQLITE_OPEN_URI;
        }
        let mut db = std::ptr::null_mut();
        // SAFETY: valid C string and out pointer; a handle is returned even on failure
        let rc =
            unsafe { (api.sqlite3_open_v2)(c_path.as_ptr(), &mut db, flags, std::ptr::null()) };
        let conn = Connection {
            api,
            db,
            stmts: Vec::new(),
            wal_frames: Box::new(AtomicI32::new(0)),
        };
        if rc != SQLITE_OK {
            return Err(conn.error(rc));
        }
        Ok(conn)
    }

    fn error(&self, code: c_int) -> SqlError {
        let message = if self.db.is_null() {
            "out of memory".to_owned()
        } else {
            // SAFETY: db is open; errmsg returns a NUL-terminated string owned by SQLite
            unsafe { CStr::from_ptr((self.api.sqlite3_errmsg)(self.db)) }
                .to_string_lossy()
                .into_owned()
        };
        SqlError { code, message }
    }

    pub fn busy_timeout(&mut self, ms: i32) -> Result<(), SqlError> {
        // SAFETY: db is open
        let rc = unsafe { (self.api.sqlite3_busy_timeout)(self.db, ms) };
        self.check(rc)
    }

    fn check(&self, rc: c_int) -> Result<(), SqlError> {
        if rc == SQLITE_OK {
            Ok(())
        } else {
            Err(self.error(rc))
        }
    }

    /// Counts the write-ahead log's frames after each commit (`wal_frames`) instead of
    /// checkpointing it automatically in the commit: the owner checkpoints when it suits
    /// it (`execute("PRAGMA wal_checkpoint(PASSIVE)")`), e.g. after telling waiters.
    pub fn track_wal(&mut self) {
        unsafe extern "C" fn hook(
            arg: *mut c_void,
            _db: *mut RawDb,
            _schema: *const c_char,
            frames: c_int,
        ) -> c_int {
            // SAFETY: arg is the connection's boxed counter, alive while the hook is set
            unsafe { (*arg.cast::<AtomicI32>()).store(frames, Ordering::Relaxed) };
            SQLITE_OK
        }
        let arg: *const AtomicI32 = &*self.wal_frames;
        // SAFETY: db is open; the counter outlives the connection's use of the hook (it is
        // dropped with the connection, after close)
        unsafe { (self.api.sqlite3_wal_hook)(self.db, Some(hook), arg.cast_mut().cast()) };
    }

    /// Frames in the write-ahead log after the last commit (with `track_wal`).
    pub fn wal_frames(&self) -> i32 {
        self.wal_frames.load(Ordering::Relaxed)
    }

    /// Prepares `sql` (one statement) for the connection's lifetime.
    pub fn prepare(&mut self, sql: &str) -> Result<Stmt, SqlError> {
        let len = c_int::try_from(sql.len()).map_err(|_| SqlError {
            code: 18, // SQLITE_TOOBIG
            message: "statement too long".to_owned(),
        })?;
        let mut stmt = std::ptr::null_mut();
        // SAFETY: sql/len describe valid UTF-8; out pointers are valid
        let rc = unsafe {
            (self.api.sqlite3_prepare_v2)(
                self.db,
                sql.as_ptr().cast(),
                len,
                &mut stmt,
                std::ptr::null_mut(),
            )
        };
        self.check(rc)?;
        if stmt.is_null() {
            return Err(SqlError {
                code: 21,
                message: format!("no statement in {sql:?}"),
            });
        }
        self.stmts.push(stmt);
        Ok(Stmt(self.stmts.len() - 1))
    }

    /// Runs a statement without parameters (BEGIN, COMMIT, PRAGMA ...), discarding rows.
    pub fn execute(&mut self, sql: &str) -> Result<(), SqlError> {
        let stmt = self.prepare(sql)?;
        let out = self.run(stmt, &[]).map(|_| ());
        let raw = self.stmts.pop().expect("just prepared");
        debug_assert_eq!(stmt.0, self.stmts.len());
        // SAFETY: raw was prepared on this connection and is not used again
        unsafe { (self.api.sqlite3_finalize)(raw) };
        out
    }

    /// Binds `params` to `stmt` and steps it to the end; returns the rows it changed.
    pub fn run(&mut self, stmt: Stmt, params: &[Value]) -> Result<usize, SqlError> {
        let raw = self.bind(stmt, params)?;
        let mut rc;
        loop {
            // SAFETY: raw is a live statement of this connection
            rc = unsafe { (self.api.sqlite3_step)(raw) };
            if rc != SQLITE_ROW {
                break;
            }
        }
        let out = if rc == SQLITE_DONE {
            // SAFETY: db is open
            Ok(usize::try_from(unsafe { (self.api.sqlite3_changes)(self.db) }).unwrap_or(0))
        } else {
            Err(self.error(rc))
        };
        self.release(raw);
        out
    }

    /// The first column of `stmt`'s first row as text (None: NULL or no row).
    pub fn query_text(&mut self, stmt: Stmt, params: &[Value]) -> Result<Option<String>, SqlError> {
        let raw = self.bind(stmt, params)?;
        // SAFETY: raw is a live statement of this connection; the column text is read
        // before the statement is reset
        let out = unsafe {
            match (self.api.sqlite3_step)(raw) {
                SQLITE_ROW if (self.api.sqlite3_column_type)(raw, 0) == SQLITE_NULL => Ok(None),
                SQLITE_ROW => {
                    let ptr = (self.api.sqlite3_column_text)(raw, 0);
                    let n = usize::try_from((self.api.sqlite3_column_bytes)(raw, 0)).unwrap_or(0);
                    if ptr.is_null() {
                        Err(self.error(7)) // SQLITE_NOMEM
                    } else {
                        let bytes = std::slice::from_raw_parts(ptr, n);
                        Ok(Some(String::from_utf8_lossy(bytes).into_owned()))
                    }
                }
                SQLITE_DONE => Ok(None),
                rc => Err(self.error(rc)),
            }
        };
        self.release(raw);
        out
    }

    fn bind(&mut self, stmt: Stmt, params: &[Value]) -> Result<*mut RawStmt, SqlError> {
        let raw = self.stmts[stmt.0];
        let api = self.api;
        for (i, value) in params.iter().enumerate() {
            let i = c_int::try_from(i + 1).unwrap_or(c_int::MAX);
            // SAFETY: raw is live; text/blob pointers stay valid until `release` resets the
            // statement (SQLITE_STATIC: no copy), and `params` outlives this call's run
            let rc = unsafe {
                match value {
                    Value::Null => (api.sqlite3_bind_null)(raw, i),
                    Value::Int(n) => (api.sqlite3_bind_int64)(raw, i, *n),
                    Value::Text(s) => match c_int::try_from(s.len()) {
                        Ok(n) => (api.sqlite3_bind_text)(raw, i, s.as_ptr().cast(), n, None),
                        Err(_) => 18,
                    },
                    Value::Blob(b) => match c_int::try_from(b.len()) {
                        Ok(n) => {
                            (api.sqlite3_bind_blob)(raw, i, b.as_ptr().cast::<c_void>(), n, None)
                        }
                        Err(_) => 18,
                    },
                    // (borrowed bytes: valid while the value exists, see `Value::borrowed`)
                    Value::Borrowed { ptr, len, text } => match c_int::try_from(*len) {
                        Ok(n) if *text => (api.sqlite3_bind_text)(raw, i, ptr.cast(), n, None),
                        Ok(n) => (api.sqlite3_bind_blob)(raw, i, ptr.cast(), n, None),
                        Err(_) => 18,
                    },
                }
            };
            if rc != SQLITE_OK {
                let err = self.error(rc);
                self.release(raw);
                return Err(err);
            }
        }
        Ok(raw)
    }

    fn release(&self, raw: *mut RawStmt) {
        // SAFETY: raw is a live statement of this connection
        unsafe {
            (self.api.sqlite3_reset)(raw);
            (self.api.sqlite3_clear_bindings)(raw);
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // SAFETY: each statement and the handle belong to this connection, used no more
        unsafe {
            for raw in self.stmts.drain(..) {
                (self.api.sqlite3_finalize)(raw);
            }
            if !self.db.is_null() {
                (self.api.sqlite3_close_v2)(self.db);
            }
        }
    }
}
