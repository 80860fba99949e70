//! The error type of the core layer.
//!
//! `E` is the error type of the value operations supplied by the embedder (a Python exception
//! in the binding); it passes through the core untouched as [`CoreError::External`].

use std::fmt;

use crate::ids::IdError;

/// Every failure the core algorithms can report.
#[derive(Debug)]
pub enum CoreError<E = std::convert::Infallible> {
    /// LangGraph's `InvalidUpdateError`, with its exact message.
    InvalidUpdate(String),
    /// LangGraph's `EmptyChannelError` (raised with no message).
    EmptyChannel,
    /// A `TypeError` from comparing or incrementing versions, with Python's message.
    VersionType(String),
    /// A name that is not a channel (`KeyError(name)`).
    UnknownChannel(String),
    /// A malformed argument (`ValueError`), the message names what is wrong.
    InvalidArgument(String),
    /// A malformed checkpoint id.
    Id(IdError),
    /// An error raised by an embedder operation (e.g. a Python reducer), passed through.
    External(E),
}

impl<E> From<IdError> for CoreError<E> {
    fn from(e: IdError) -> Self {
        CoreError::Id(e)
    }
}

impl<E: fmt::Display> fmt::Display for CoreError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CoreError::InvalidUpdate(m) => write!(f, "InvalidUpdateError: {m}"),
            CoreError::EmptyChannel => f.write_str("EmptyChannelError"),
            CoreError::VersionType(m) => write!(f, "TypeError: {m}"),
            CoreError::UnknownChannel(c) => write!(f, "KeyError: {c:?}"),
            CoreError::InvalidArgument(m) => write!(f, "ValueError: {m}"),
            CoreError::Id(e) => write!(f, "ValueError: {e}"),
            CoreError::External(e) => write!(f, "{e}"),
        }
    }
}

impl<E: fmt::Debug + fmt::Display> std::error::Error for CoreError<E> {}

/// Result alias of the core layer.
pub type CoreResult<T, E = std::convert::Infallible> = Result<T, CoreError<E>>;

/// The troubleshooting suffix LangGraph's `create_error_message` appends.
pub fn with_error_code(message: &str, code: &str) -> String {
    format!(
        "{message}\nFor troubleshooting, visit: https://docs.langchain.com/oss/python/langgraph/errors/{code}"
    )
}

/// Error code of concurrent-update errors.
pub const INVALID_CONCURRENT_GRAPH_UPDATE: &str = "INVALID_CONCURRENT_GRAPH_UPDATE";
