//! The harness's errors: one enum, a variant for each kind of failure, so a caller can tell
//! a bad argument from an unreadable file or a filter that refused its parameters (and the
//! plots' and the HTML report's own errors, [`PlotError`] and [`ReportError`]). The
//! command prints the message (`error: …`) and exits with status 1.

use std::path::PathBuf;

/// What can go wrong in the harness.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A value or request the harness cannot act on: a malformed number, an unknown filter
    /// or experiment, an empty list, a size too large for this machine.
    #[error("{0}")]
    Usage(String),
    /// A file or directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A CSV table could not be written.
    #[error("{path}: {source}")]
    Csv {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: csv::Error,
    },
    /// A results file the harness cannot use: unreadable, not a results file, or of a
    /// schema version it does not read.
    #[error("{0}")]
    Results(String),
    /// One of our filters refused the parameters asked of it.
    #[error(transparent)]
    Filter(#[from] bloomlab_core::Error),
    /// No measured structure meets the needs given to `recommend`; the message names, for
    /// each variant, the needs that ruled it out.
    #[error("{0}")]
    Refused(String),
    /// A peer's filter refused the parameters asked of it (the crate's own message).
    #[error("{0}")]
    Peer(String),
    /// A measurement could not be made, or found what must not happen (builds of one filter
    /// that differ, a measuring thread that panicked).
    #[error("{0}")]
    Measurement(String),
    /// `repeat` could not start one of its runs, or the run failed.
    #[error("{0}")]
    Run(String),
    /// The results could not be serialized.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A plot could not be drawn or written.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// The HTML report could not be written.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// The command ran but failed its own check (`compare --fail-above`); carries its report.
    #[error("{0}")]
    Failed(String),
}

impl Error {
    /// [`Error::Usage`] with this message.
    pub fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }

    /// [`Error::Measurement`] with this message.
    pub fn measurement(msg: impl Into<String>) -> Self {
        Error::Measurement(msg.into())
    }

    /// An [`Error::Io`] maker for `path`, for `map_err`.
    pub fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
        move |source| Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// An [`Error::Csv`] maker for `path`, for `map_err`.
    pub fn csv(path: &std::path::Path) -> impl FnOnce(csv::Error) -> Error + '_ {
        move |source| Error::Csv {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// What went wrong drawing a plot.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The plotting library refused (a backend or font error).
    #[error("plot: {0}")]
    Draw(String),
    /// A file or directory could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// What went wrong writing the report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Drawing a plot failed.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// The template did not render.
    #[error("report template: {0}")]
    Template(#[from] minijinja::Error),
    /// A results file could not be read.
    #[error(transparent)]
    Results(Box<Error>),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}
