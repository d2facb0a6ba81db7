//! A refused admin call on the wire: [`CoordError`] to a `Failure` message and back,
//! keeping what the gateway maps to an HBase exception (the kind and the table,
//! namespace or family it names).
//!
//! Owns: the two translations. Must not: decide what is retryable beyond what the
//! error itself says.

use super::pb;
use super::pb::failure::Kind;
use crate::coordinator::CoordError;

/// The wire form of `error`.
pub fn failure_of(error: &CoordError) -> pb::Failure {
    let named = |kind: Kind, subject: &str| pb::Failure {
        kind: kind as i32,
        message: error.to_string(),
        subject: subject.to_owned(),
        family: String::new(),
        retry: false,
    };
    match error {
        CoordError::TableNotFound(t) => named(Kind::TableNotFound, t),
        CoordError::TableExists(t) => named(Kind::TableExists, t),
        CoordError::TableDisabled(t) => named(Kind::TableDisabled, t),
        CoordError::TableNotDisabled(t) => named(Kind::TableNotDisabled, t),
        CoordError::NamespaceNotFound(n) => named(Kind::NamespaceNotFound, n),
        CoordError::NamespaceExists(n) => named(Kind::NamespaceExists, n),
        CoordError::NamespaceNotEmpty(n) => named(Kind::NamespaceNotEmpty, n),
        CoordError::NoSuchFamily { table, family } => pb::Failure {
            family: family.clone(),
            ..named(Kind::NoSuchFamily, table)
        },
        CoordError::InvalidArgument(_) => named(Kind::InvalidArgument, ""),
        CoordError::Remote { retry, .. } => pb::Failure {
            retry: *retry,
            ..named(Kind::Other, "")
        },
        // A deposed coordinator must not be asked again; the others may pass.
        CoordError::Deposed(_) | CoordError::Corrupt { .. } => named(Kind::Other, ""),
        _ => pb::Failure {
            retry: true,
            ..named(Kind::Other, "")
        },
    }
}

/// The error a `Failure` stands for. A kind this build does not know is kept as
/// its message.
pub fn error_of(failure: pb::Failure) -> CoordError {
    let pb::Failure {
        kind,
        message,
        subject,
        family,
        retry,
    } = failure;
    match Kind::try_from(kind) {
        Ok(Kind::TableNotFound) => CoordError::TableNotFound(subject),
        Ok(Kind::TableExists) => CoordError::TableExists(subject),
        Ok(Kind::TableDisabled) => CoordError::TableDisabled(subject),
        Ok(Kind::TableNotDisabled) => CoordError::TableNotDisabled(subject),
        Ok(Kind::NamespaceNotFound) => CoordError::NamespaceNotFound(subject),
        Ok(Kind::NamespaceExists) => CoordError::NamespaceExists(subject),
        Ok(Kind::NamespaceNotEmpty) => CoordError::NamespaceNotEmpty(subject),
        Ok(Kind::NoSuchFamily) => CoordError::NoSuchFamily {
            table: subject,
            family,
        },
        Ok(Kind::InvalidArgument) => CoordError::InvalidArgument(message),
        Ok(Kind::Other) | Err(_) => CoordError::Remote { message, retry },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_named_kind_survives_the_wire() {
        let errors = [
            CoordError::TableNotFound("t".into()),
            CoordError::TableExists("t".into()),
            CoordError::TableDisabled("ns:t".into()),
            CoordError::TableNotDisabled("t".into()),
            CoordError::NamespaceNotFound("ns".into()),
            CoordError::NamespaceExists("ns".into()),
            CoordError::NamespaceNotEmpty("ns".into()),
            CoordError::NoSuchFamily {
                table: "t".into(),
                family: "f".into(),
            },
            CoordError::InvalidArgument("bad name".into()),
        ];
        for e in errors {
            let back = error_of(failure_of(&e));
            assert_eq!(back.to_string(), e.to_string());
            assert_eq!(
                std::mem::discriminant(&back),
                std::mem::discriminant(&e),
                "{e}"
            );
        }
    }

    #[test]
    fn other_failures_keep_message_and_retry() {
        let back = error_of(failure_of(&CoordError::NoServers));
        assert!(
            matches!(&back, CoordError::Remote { retry: true, message } if message == "no regionserver is available")
        );
        let back = error_of(failure_of(&CoordError::Deposed("lease lapsed".into())));
        assert!(matches!(back, CoordError::Remote { retry: false, .. }));
        let unknown = pb::Failure {
            kind: 99,
            message: "from a newer build".into(),
            ..pb::Failure::default()
        };
        assert!(
            matches!(error_of(unknown), CoordError::Remote { message, retry: false } if message == "from a newer build")
        );
    }
}
