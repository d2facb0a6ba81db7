//! Errors of the Thrift2 handler and how each reaches the client.
//!
//! Owns: [`Thrift2Error`] and its translation into what HBase's Thrift2 server
//! answers: a declared `TIOError` carrying the bare exception message and
//! `canRetry`, a `TIllegalArgument` on the calls that declare it, or a
//! `TApplicationException` INTERNAL_ERROR where HBase lets an unchecked Java
//! exception escape (a filter string that does not parse).
//! Must not: decide which calls fail (the call modules do).

use tabula_thrift::hbase2::{TIOError, TIllegalArgument};
use thrift::{ApplicationError, ApplicationErrorKind};

use crate::backend::BackendError;

/// Why a Thrift2 call failed.
#[derive(Debug, thiserror::Error)]
pub enum Thrift2Error {
    /// The backend refused or failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// A request that can never succeed as sent (HBase's DoNotRetryIOException).
    #[error("{0}")]
    Invalid(String),
    /// A request HBase rejects with TIllegalArgument where the method declares it.
    #[error("{0}")]
    IllegalArgument(String),
    /// A request HBase fails with an unchecked exception (INTERNAL_ERROR).
    #[error("{0}")]
    Internal(String),
    /// A scanner id that is unknown, closed or expired.
    #[error("Invalid scanner Id")]
    InvalidScanner,
}

/// Result type of the handler's calls.
pub type Thrift2Result<T> = Result<T, Thrift2Error>;

/// Methods whose IDL declares `2: TIllegalArgument ia`.
const DECLARES_ILLEGAL_ARGUMENT: &[&str] = &["getScannerRows", "closeScanner"];

fn io_error(message: String, can_retry: bool) -> thrift::Error {
    TIOError::new(message, can_retry).into()
}

impl Thrift2Error {
    /// What the client of `method` receives for this error.
    pub fn into_thrift(self, method: &str) -> thrift::Error {
        match self {
            Thrift2Error::Backend(BackendError::BadFilter(m)) | Thrift2Error::Internal(m) => {
                thrift::Error::Application(ApplicationError::new(
                    ApplicationErrorKind::InternalError,
                    format!("Internal error processing {method}: {m}"),
                ))
            }
            Thrift2Error::Backend(e) => {
                let retry = e.can_retry();
                io_error(e.to_string(), retry)
            }
            Thrift2Error::Invalid(m) => io_error(m, false),
            Thrift2Error::IllegalArgument(m) => {
                if DECLARES_ILLEGAL_ARGUMENT.contains(&method) {
                    TIllegalArgument::new(m).into()
                } else {
                    io_error(m, false)
                }
            }
            Thrift2Error::InvalidScanner => {
                let m = "Invalid scanner Id".to_string();
                if DECLARES_ILLEGAL_ARGUMENT.contains(&method) {
                    TIllegalArgument::new(m).into()
                } else {
                    io_error(m, false)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user_error(e: thrift::Error) -> Box<dyn std::error::Error + Sync + Send> {
        match e {
            thrift::Error::User(u) => u,
            other => panic!("not a user error: {other:?}"),
        }
    }

    #[test]
    fn backend_errors_are_tioerrors_with_the_bare_message() {
        let e = Thrift2Error::from(BackendError::TableNotFound("t1".into())).into_thrift("get");
        let io = user_error(e)
            .downcast::<TIOError>()
            .map_err(|_| "not TIOError")
            .unwrap();
        assert_eq!(io.message.as_deref(), Some("table t1 does not exist"));
        assert_eq!(io.can_retry, Some(false));
        let e = Thrift2Error::from(BackendError::Io {
            message: "moving".into(),
            retry: true,
        })
        .into_thrift("put");
        let io = user_error(e)
            .downcast::<TIOError>()
            .map_err(|_| "not TIOError")
            .unwrap();
        assert_eq!(io.can_retry, Some(true));
    }

    #[test]
    fn illegal_argument_only_where_declared() {
        let e = Thrift2Error::InvalidScanner.into_thrift("getScannerRows");
        let ia = user_error(e)
            .downcast::<TIllegalArgument>()
            .map_err(|_| "not TIllegalArgument")
            .unwrap();
        assert_eq!(ia.message.as_deref(), Some("Invalid scanner Id"));
        let e = Thrift2Error::IllegalArgument("filterBytes".into()).into_thrift("get");
        assert!(user_error(e).downcast::<TIOError>().is_ok());
    }

    #[test]
    fn bad_filters_are_internal_errors() {
        match Thrift2Error::from(BackendError::BadFilter(
            "Filter Name X not supported".into(),
        ))
        .into_thrift("openScanner")
        {
            thrift::Error::Application(a) => {
                assert_eq!(a.kind, ApplicationErrorKind::InternalError);
                assert!(a.message.contains("Filter Name X not supported"));
            }
            other => panic!("{other:?}"),
        }
    }
}
