//! Errors of the page crate. Every message says what was wrong and where (a JSON path such as
//! `log.entries[3].response.status`, or a line and column); callers prefix the file name.

use thiserror::Error;

/// Why a page could not be imported, built or classified.
#[derive(Debug, Error)]
pub enum WebError {
    /// Not valid JSON (truncated, bad syntax).
    #[error("not valid JSON: {0}")]
    Json(String),
    /// Valid JSON of the wrong shape: a field missing or of the wrong type.
    #[error("{path}: {problem}")]
    Field {
        /// JSON path of the offending value.
        path: String,
        /// What was expected and what was found.
        problem: String,
    },
    /// Neither a HAR nor a DevTools log.
    #[error("{0}")]
    Format(String),
    /// The file holds no usable entries.
    #[error("{0}")]
    NoEntries(String),
    /// `--page` named a page the file does not have.
    #[error("no page {wanted:?} in this file (pages: {available})")]
    NoSuchPage {
        /// Requested id.
        wanted: String,
        /// Available ids.
        available: String,
    },
    /// A page that breaks the model's invariants.
    #[error("invalid page: {0}")]
    Invalid(String),
    /// A rules file that cannot be used.
    #[error("{0}")]
    Rules(String),
    /// Reading or writing a file failed.
    #[error("{0}")]
    Io(String),
}

/// A [`WebError`] with the file it came from, for command-line messages.
#[derive(Debug, Error)]
#[error("{file}: {error}")]
pub struct FileError {
    /// The file.
    pub file: String,
    /// What was wrong.
    pub error: WebError,
}
