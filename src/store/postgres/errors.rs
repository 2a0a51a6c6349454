//! What PostgreSQL's errors mean to Souk.

use crate::store::DbError;

/// The [`DbError`] that a `tokio-postgres` error means.
pub(super) fn map_error(e: tokio_postgres::Error) -> DbError {
    use tokio_postgres::error::SqlState;
    if let Some(db) = e.as_db_error() {
        let constraint = db.constraint().unwrap_or_default().to_owned();
        if *db.code() == SqlState::UNIQUE_VIOLATION {
            return DbError::UniqueViolation(constraint);
        }
        if *db.code() == SqlState::FOREIGN_KEY_VIOLATION {
            return DbError::ForeignKeyViolation(constraint);
        }
        // Deadlock detected (40P01), the serialization failure (40001) of a stricter
        // isolation level, and a lock waited for past the operator's `lock_timeout`
        // (55P03): the server rolled the transaction back as a whole.
        if *db.code() == SqlState::T_R_DEADLOCK_DETECTED
            || *db.code() == SqlState::T_R_SERIALIZATION_FAILURE
            || *db.code() == SqlState::LOCK_NOT_AVAILABLE
        {
            return DbError::Contention(format!("{}: {}", db.code().code(), db.message()));
        }
        // A lost connection, a server out of disk, memory or connections (53000-53300; not
        // 53400, a limit the statement itself exceeds, which a retry meets again), and one
        // that takes no writes (25006: a standby after a failover,
        // `default_transaction_read_only`): the database's state, not a fault of the
        // request, and nothing was written.
        let code = db.code().code();
        // A statement the server stopped (57014): past its `statement_timeout` (a heavy
        // read, whose request had its 408 already), or cancelled by an operator
        // (`pg_cancel_backend`). Nothing of the request's was written.
        if *db.code() == SqlState::QUERY_CANCELED {
            return DbError::Unavailable(format!("{code}: {}", db.message()));
        }
        if connection_lost(&e)
            || ["53000", "53100", "53200", "53300"].contains(&code)
            || *db.code() == SqlState::READ_ONLY_SQL_TRANSACTION
        {
            return DbError::Unavailable(format!("{code}: {}", db.message()));
        }
        return DbError::Other(format!("{}: {}", db.code().code(), db.message()));
    }
    if e.is_closed() {
        return DbError::Unavailable(e.to_string());
    }
    DbError::Other(e.to_string())
}

/// Whether `e` says that the connection is gone: no answer of the server's (closed,
/// broken), or its ending the connection with a connection exception (08) or its going
/// away (57P: shut down, restarting, our connection terminated). The next request gets a
/// new connection.
pub(super) fn connection_lost(e: &tokio_postgres::Error) -> bool {
    e.as_db_error().is_none_or(|db| {
        let code = db.code().code();
        code.starts_with("08") || code.starts_with("57P")
    })
}
