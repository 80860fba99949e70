//! The SQLite C API, reached at run time through a library the process has loaded already.
//!
//! The writer must use the very SQLite the interpreter's `sqlite3` module uses: SQLite's
//! POSIX locks are per process, and a second copy of the library in one process does not
//! see the first one's open files (closing a file in one copy drops the other's locks:
//! "multiple copies of SQLite linked into the same application" in SQLite's list of ways
//! to corrupt a database). So nothing is linked here: [`Api::load`] looks the functions up
//! through the `_sqlite3` extension module's handle, whose dependencies are searched the
//! way its own references were bound, and the caller checks that it is the same copy.
use std::ffi::{c_char, c_int, c_void, CStr, CString};

#[repr(C)]
pub struct RawDb {
    _private: [u8; 0],
}
#[repr(C)]
pub struct RawStmt {
    _private: [u8; 0],
}

pub const SQLITE_OK: c_int = 0;
pub const SQLITE_ROW: c_int = 100;
pub const SQLITE_DONE: c_int = 101;
pub const SQLITE_NULL: c_int = 5;
pub const SQLITE_OPEN_READWRITE: c_int = 0x0000_0002;
pub const SQLITE_OPEN_URI: c_int = 0x0000_0040;
pub const SQLITE_OPEN_NOMUTEX: c_int = 0x0000_8000;

type Destructor = Option<unsafe extern "C" fn(*mut c_void)>;
/// `int (*)(void *arg, sqlite3 *db, const char *schema, int frames)`
pub type WalHook =
    Option<unsafe extern "C" fn(*mut c_void, *mut RawDb, *const c_char, c_int) -> c_int>;

/// Declares the [`Api`] table: one field per C function, each looked up by its name.
macro_rules! api {
    ($($name:ident: fn($($arg:ty),*) -> $ret:ty;)*) => {
        /// The SQLite functions the writer calls, from one loaded copy of the library.
        #[allow(non_snake_case)]
        pub struct Api {
            $(pub $name: unsafe extern "C" fn($($arg),*) -> $ret,)*
        }

        impl Api {
            /// # Safety
            /// `handle` is a live `dlopen` handle.
            #[cfg(unix)]
            unsafe fn resolve(handle: *mut c_void) -> Result<Api, String> {
                Ok(Api {
                    $($name: {
                        let name = concat!(stringify!($name), "\0");
                        let sym = libc::dlsym(handle, name.as_ptr().cast());
                        if sym.is_null() {
                            return Err(format!("symbol {} not found", stringify!($name)));
                        }
                        std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> $ret>(sym)
                    },)*
                })
            }
        }
    };
}

api! {
    sqlite3_libversion_number: fn() -> c_int;
    sqlite3_memory_used: fn() -> i64;
    sqlite3_open_v2: fn(*const c_char, *mut *mut RawDb, c_int, *const c_char) -> c_int;
    sqlite3_close_v2: fn(*mut RawDb) -> c_int;
    sqlite3_busy_timeout: fn(*mut RawDb, c_int) -> c_int;
    sqlite3_errmsg: fn(*mut RawDb) -> *const c_char;
    sqlite3_changes: fn(*mut RawDb) -> c_int;
    sqlite3_prepare_v2: fn(*mut RawDb, *const c_char, c_int, *mut *mut RawStmt, *mut *const c_char) -> c_int;
    sqlite3_finalize: fn(*mut RawStmt) -> c_int;
    sqlite3_reset: fn(*mut RawStmt) -> c_int;
    sqlite3_clear_bindings: fn(*mut RawStmt) -> c_int;
    sqlite3_step: fn(*mut RawStmt) -> c_int;
    sqlite3_bind_null: fn(*mut RawStmt, c_int) -> c_int;
    sqlite3_bind_int64: fn(*mut RawStmt, c_int, i64) -> c_int;
    sqlite3_bind_text: fn(*mut RawStmt, c_int, *const c_char, c_int, Destructor) -> c_int;
    sqlite3_bind_blob: fn(*mut RawStmt, c_int, *const c_void, c_int, Destructor) -> c_int;
    sqlite3_column_type: fn(*mut RawStmt, c_int) -> c_int;
    sqlite3_column_text: fn(*mut RawStmt, c_int) -> *const u8;
    sqlite3_column_bytes: fn(*mut RawStmt, c_int) -> c_int;
    sqlite3_wal_hook: fn(*mut RawDb, WalHook, *mut c_void) -> *mut c_void;
}

impl Api {
    /// The API of the SQLite that `library` (a shared object, e.g. the `_sqlite3` module's
    /// file; None: the main program) uses. With `only_loaded`, the object must be in the
    /// process already (`RTLD_NOLOAD`: nothing new is loaded). Each library is opened once
    /// and never closed, so the functions stay valid for the life of the process.
    pub fn load(library: Option<&str>, only_loaded: bool) -> Result<&'static Api, String> {
        use std::collections::HashMap;
        use std::sync::{Mutex, OnceLock};
        static LOADED: OnceLock<Mutex<HashMap<Option<String>, &'static Api>>> = OnceLock::new();
        let mut loaded = LOADED
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let key = library.map(str::to_owned);
        if let Some(api) = loaded.get(&key) {
            return Ok(api);
        }
        let api: &'static Api = Box::leak(Box::new(open(library, only_loaded)?));
        loaded.insert(key, api);
        Ok(api)
    }
}

#[cfg(unix)]
fn open(library: Option<&str>, only_loaded: bool) -> Result<Api, String> {
    let path = library
        .map(|p| CString::new(p).map_err(|_| format!("library path {p:?} holds a NUL")))
        .transpose()?;
    let mut flags = libc::RTLD_NOW | libc::RTLD_LOCAL;
    if only_loaded {
        flags |= libc::RTLD_NOLOAD;
    }
    // SAFETY: dlopen/dlsym are given NUL-terminated names; the symbols' signatures are
    // SQLite's stable C API
    unsafe {
        let handle = libc::dlopen(
            path.as_ref().map_or(std::ptr::null(), |p| p.as_ptr()),
            flags,
        );
        if handle.is_null() {
            let why = libc::dlerror();
            let why = if why.is_null() {
                "unknown error".to_owned()
            } else {
                CStr::from_ptr(why).to_string_lossy().into_owned()
            };
            return Err(format!("cannot open {library:?}: {why}"));
        }
        Api::resolve(handle)
    }
}

#[cfg(not(unix))]
fn open(library: Option<&str>, _only_loaded: bool) -> Result<Api, String> {
    Err(format!(
        "cannot open {library:?}: loading SQLite at run time needs a Unix system"
    ))
}
