//! Errors of the Thrift1 handler and how each reaches the client.
//!
//! Owns: [`Thrift1Error`] and its translation into what HBase's Thrift1 server
//! answers: a declared `IOError` (message starting with the Java exception class
//! HBase would name, so scripts that grep for it keep working), `IllegalArgument`,
//! `AlreadyExists`, or a `TApplicationException` INTERNAL_ERROR where HBase lets an
//! unchecked Java exception escape.
//! Must not: decide which calls fail (the call modules do), or build wire messages
//! (the generated processor does).

use tabula_thrift::hbase::{AlreadyExists, IOError, IllegalArgument};
use thrift::{ApplicationError, ApplicationErrorKind};

use crate::backend::BackendError;

/// Why a Thrift1 call failed.
#[derive(Debug, thiserror::Error)]
pub enum Thrift1Error {
    /// The backend refused or failed; mapped by kind.
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// A request HBase rejects with `IllegalArgument` (it catches the Java
    /// IllegalArgumentException). Calls that do not declare IllegalArgument send it
    /// as an IOError instead.
    #[error("{0}")]
    IllegalArgument(String),
    /// A request HBase fails with an unchecked Java exception: the client receives a
    /// TApplicationException INTERNAL_ERROR naming the problem.
    #[error("{0}")]
    Internal(String),
    /// A request HBase fails with a DoNotRetryIOException.
    #[error("{0}")]
    DoNotRetry(String),
    /// A plain `java.io.IOException` with this message.
    #[error("{0}")]
    Io(String),
    /// createTable on a name in use.
    #[error("table name already in use")]
    AlreadyExists,
    /// A scanner id that is unknown, closed or expired.
    #[error("scanner ID is invalid")]
    InvalidScanner,
    /// Some rows of a multi-row write failed; the others were written.
    #[error("{failed} of {total} rows failed, first: {first}")]
    Rows {
        first: BackendError,
        failed: usize,
        total: usize,
    },
}

/// Result type of the handler's calls.
pub type Thrift1Result<T> = Result<T, Thrift1Error>;

/// Methods whose IDL declares `2: IllegalArgument ia`.
const DECLARES_ILLEGAL_ARGUMENT: &[&str] = &[
    "createTable",
    "mutateRow",
    "mutateRowTs",
    "mutateRows",
    "mutateRowsTs",
    "atomicIncrement",
    "scannerGet",
    "scannerGetList",
    "scannerClose",
    "checkAndPut",
];

/// Java class names HBase puts at the start of IOError messages.
mod class {
    pub const IO: &str = "java.io.IOException";
    pub const DO_NOT_RETRY: &str = "org.apache.hadoop.hbase.DoNotRetryIOException";
    pub const TABLE_NOT_FOUND: &str = "org.apache.hadoop.hbase.TableNotFoundException";
    pub const TABLE_EXISTS: &str = "org.apache.hadoop.hbase.TableExistsException";
    pub const TABLE_NOT_ENABLED: &str = "org.apache.hadoop.hbase.TableNotEnabledException";
    pub const TABLE_NOT_DISABLED: &str = "org.apache.hadoop.hbase.TableNotDisabledException";
    pub const NAMESPACE_NOT_FOUND: &str = "org.apache.hadoop.hbase.NamespaceNotFoundException";
    pub const NAMESPACE_EXISTS: &str = "org.apache.hadoop.hbase.NamespaceExistException";
    pub const CONSTRAINT: &str = "org.apache.hadoop.hbase.constraint.ConstraintException";
    pub const NO_SUCH_FAMILY: &str =
        "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException";
    pub const UNKNOWN_REGION: &str = "org.apache.hadoop.hbase.UnknownRegionException";
}

/// The IOError message HBase's server would send for a backend error.
pub fn io_message(error: &BackendError) -> String {
    match error {
        BackendError::TableNotFound(t) => format!("{}: {t}", class::TABLE_NOT_FOUND),
        BackendError::TableExists(t) => format!("{}: {t}", class::TABLE_EXISTS),
        BackendError::TableDisabled(t) => format!("{}: {t} is disabled", class::TABLE_NOT_ENABLED),
        BackendError::TableNotDisabled(t) => {
            format!("{}: {t} is enabled", class::TABLE_NOT_DISABLED)
        }
        BackendError::NamespaceNotFound(n) => format!("{}: {n}", class::NAMESPACE_NOT_FOUND),
        BackendError::NamespaceExists(n) => format!("{}: {n}", class::NAMESPACE_EXISTS),
        BackendError::NamespaceNotEmpty(n) => format!(
            "{}: only empty namespaces can be removed; namespace {n} still has tables",
            class::CONSTRAINT
        ),
        BackendError::NoSuchFamily { table, family } => format!(
            "{}: Column family {family} does not exist in table {table}",
            class::NO_SUCH_FAMILY
        ),
        BackendError::InvalidArgument(m) | BackendError::BadFilter(m) => {
            format!("{}: {m}", class::DO_NOT_RETRY)
        }
        BackendError::RegionNotFound(m) => format!("{}: {m}", class::UNKNOWN_REGION),
        BackendError::Io { message, retry } => {
            let class = if *retry {
                class::IO
            } else {
                class::DO_NOT_RETRY
            };
            format!("{class}: {message}")
        }
    }
}

fn io_error(message: String, can_retry: bool) -> thrift::Error {
    IOError::new(message, can_retry).into()
}

fn internal(method: &str, detail: &str) -> thrift::Error {
    thrift::Error::Application(ApplicationError::new(
        ApplicationErrorKind::InternalError,
        format!("Internal error processing {method}: {detail}"),
    ))
}

impl Thrift1Error {
    /// What the client of `method` receives for this error.
    pub fn into_thrift(self, method: &str) -> thrift::Error {
        match self {
            Thrift1Error::Backend(BackendError::BadFilter(m)) => internal(method, &m),
            Thrift1Error::Backend(BackendError::TableExists(_)) if method == "createTable" => {
                AlreadyExists::new("table name already in use".to_string()).into()
            }
            Thrift1Error::Backend(e) => {
                let retry = e.can_retry();
                io_error(io_message(&e), retry)
            }
            Thrift1Error::IllegalArgument(m) => {
                if DECLARES_ILLEGAL_ARGUMENT.contains(&method) {
                    IllegalArgument::new(m).into()
                } else {
                    io_error(format!("{}: {m}", class::DO_NOT_RETRY), false)
                }
            }
            Thrift1Error::InvalidScanner => {
                let m = "scanner ID is invalid".to_string();
                if DECLARES_ILLEGAL_ARGUMENT.contains(&method) {
                    IllegalArgument::new(m).into()
                } else {
                    io_error(format!("{}: {m}", class::DO_NOT_RETRY), false)
                }
            }
            Thrift1Error::Rows {
                first,
                failed,
                total,
            } => {
                let retry = first.can_retry();
                let message = if total <= 1 {
                    io_message(&first)
                } else {
                    format!(
                        "{} ({failed} of {total} rows failed; the other rows were written)",
                        io_message(&first)
                    )
                };
                io_error(message, retry)
            }
            Thrift1Error::Internal(m) => internal(method, &m),
            Thrift1Error::DoNotRetry(m) => io_error(format!("{}: {m}", class::DO_NOT_RETRY), false),
            Thrift1Error::Io(m) => io_error(format!("{}: {m}", class::IO), false),
            Thrift1Error::AlreadyExists => {
                if method == "createTable" {
                    AlreadyExists::new("table name already in use".to_string()).into()
                } else {
                    io_error(
                        format!("{}: table name already in use", class::TABLE_EXISTS),
                        false,
                    )
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io_of(e: thrift::Error) -> IOError {
        match e {
            thrift::Error::User(u) => match u.downcast::<IOError>() {
                Ok(io) => *io,
                Err(other) => panic!("not an IOError: {other:?}"),
            },
            other => panic!("not a user error: {other:?}"),
        }
    }

    fn app_of(e: thrift::Error) -> ApplicationError {
        match e {
            thrift::Error::Application(a) => a,
            other => panic!("not an application error: {other:?}"),
        }
    }

    #[test]
    fn table_errors_name_the_java_exception() {
        let e =
            io_of(Thrift1Error::from(BackendError::TableNotFound("t1".into())).into_thrift("get"));
        assert_eq!(
            e.message.as_deref(),
            Some("org.apache.hadoop.hbase.TableNotFoundException: t1")
        );
        assert_eq!(e.can_retry, Some(false));
        let e =
            io_of(Thrift1Error::from(BackendError::TableDisabled("t1".into())).into_thrift("get"));
        assert!(e
            .message
            .unwrap_or_default()
            .starts_with("org.apache.hadoop.hbase.TableNotEnabledException: t1"));
        let e = io_of(
            Thrift1Error::from(BackendError::NoSuchFamily {
                table: "t".into(),
                family: "zz".into(),
            })
            .into_thrift("get"),
        );
        let m = e.message.unwrap_or_default();
        assert!(
            m.starts_with("org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException: "),
            "{m}"
        );
        assert!(m.contains("zz") && m.contains('t'));
    }

    #[test]
    fn retryable_io_errors_say_so() {
        let e = io_of(
            Thrift1Error::from(BackendError::Io {
                message: "tablet moving".into(),
                retry: true,
            })
            .into_thrift("get"),
        );
        assert_eq!(e.can_retry, Some(true));
        assert_eq!(
            e.message.as_deref(),
            Some("java.io.IOException: tablet moving")
        );
    }

    #[test]
    fn bad_filters_are_internal_errors_naming_the_problem() {
        let a = app_of(
            Thrift1Error::from(BackendError::BadFilter(
                "Filter Name Foo not supported".into(),
            ))
            .into_thrift("scannerOpenWithScan"),
        );
        assert_eq!(a.kind, ApplicationErrorKind::InternalError);
        assert_eq!(
            a.message,
            "Internal error processing scannerOpenWithScan: Filter Name Foo not supported"
        );
    }

    #[test]
    fn illegal_argument_only_where_declared() {
        match Thrift1Error::InvalidScanner.into_thrift("scannerGet") {
            thrift::Error::User(u) => {
                let ia = u
                    .downcast::<IllegalArgument>()
                    .map_err(|_| "not IA")
                    .unwrap();
                assert_eq!(ia.message.as_deref(), Some("scanner ID is invalid"));
            }
            other => panic!("{other:?}"),
        }
        let e = io_of(Thrift1Error::IllegalArgument("bad".into()).into_thrift("get"));
        assert_eq!(
            e.message.as_deref(),
            Some("org.apache.hadoop.hbase.DoNotRetryIOException: bad")
        );
    }

    #[test]
    fn table_exists_is_already_exists_for_create_table() {
        match Thrift1Error::from(BackendError::TableExists("t".into())).into_thrift("createTable") {
            thrift::Error::User(u) => {
                let ae = u.downcast::<AlreadyExists>().map_err(|_| "not AE").unwrap();
                assert_eq!(ae.message.as_deref(), Some("table name already in use"));
            }
            other => panic!("{other:?}"),
        }
    }
}
