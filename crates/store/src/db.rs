//! One interface over both databases, so that each store query is written once
//! (`queries.rs`, `ladder_play.rs`, `ladder_builds.rs`) and serves both backends.
//!
//! * SQL is written with PostgreSQL's numbered placeholders `$1`, `$2`, ...; SQLite is given
//!   the same text with `?1`, `?2`, ... ([`sqlite_placeholders`], the one place they differ).
//! * Parameters are [`Value`]s (build a list with `args![...]`); PostgreSQL binds each as the
//!   type the statement's parameter has (an integer as `INTEGER` or `BIGINT`), SQLite as is.
//! * Rows are read through [`Row::get`], which reads an integer of any width as `i64` and a
//!   boolean from an integer or a boolean column.
//! * A transaction is [`Db::begin`] and [`Tx::commit`]; dropping it rolls it back.
//! * What really differs between the databases is a hook of [`Db`]: the current time, the
//!   size of a blob, row locks (`FOR UPDATE`, `SKIP LOCKED`: a SQLite write transaction excludes
//!   every other writer), the run lock, the schema version an old read-only file has.
//!
//! [`Db`] is public only inside this private module: it seals the blanket implementations of
//! [`crate::Store`], [`crate::LadderPlay`] and [`crate::LadderBuilds`] to the two backends.

use std::borrow::Cow;

use crate::StoreError;

/// A statement parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Int(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
}

impl From<i64> for Value<'_> {
    fn from(n: i64) -> Self {
        Value::Int(n)
    }
}

impl From<bool> for Value<'_> {
    fn from(b: bool) -> Self {
        Value::Int(i64::from(b))
    }
}

impl From<f64> for Value<'_> {
    fn from(x: f64) -> Self {
        Value::Real(x)
    }
}

impl<'a> From<&'a str> for Value<'a> {
    fn from(s: &'a str) -> Self {
        Value::Text(s)
    }
}

impl<'a> From<&'a String> for Value<'a> {
    fn from(s: &'a String) -> Self {
        Value::Text(s)
    }
}

impl<'a> From<&'a [u8]> for Value<'a> {
    fn from(b: &'a [u8]) -> Self {
        Value::Blob(b)
    }
}

impl<'a> From<&'a Vec<u8>> for Value<'a> {
    fn from(b: &'a Vec<u8>) -> Self {
        Value::Blob(b)
    }
}

/// The parameters of a statement: `args![ladder, to_db(version), &text]`.
macro_rules! args {
    () => {
        &[] as &[$crate::db::Value<'_>]
    };
    ($($v:expr),+ $(,)?) => {
        &[$($crate::db::Value::from($v)),*][..]
    };
}
pub(crate) use args;

/// A count of attempts as the database keeps it (`INTEGER`: capped, never wrapped).
pub(crate) fn attempts_db(n: u32) -> i64 {
    i64::from(n.min(i32::MAX as u32))
}

/// `sql` with PostgreSQL's placeholders `$n` written as SQLite's `?n` (outside string literals).
/// SQLite would take `$1` as a parameter *named* `$1`, numbered by first appearance.
pub(crate) fn sqlite_placeholders(sql: &str) -> Cow<'_, str> {
    if !sql.contains('$') {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            quoted = !quoted;
        }
        if c == '$' && !quoted && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('?');
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// How a backend measures blobs: its byte length of a blob (`length`, `octet_length`) and what
/// makes a sum of them a 64-bit integer (nothing on SQLite; `::BIGINT` on PostgreSQL, whose
/// `SUM` of bigints is a numeric).
pub struct BlobSize {
    pub len: &'static str,
    pub int: &'static str,
}

/// One row of a result, with the context its errors name.
pub struct Row<'a> {
    row: RowOf<'a>,
    context: &'static str,
}

enum RowOf<'a> {
    Sqlite(&'a rusqlite::Row<'a>),
    Pg(&'a postgres::Row),
}

impl<'a> Row<'a> {
    pub(crate) fn sqlite(row: &'a rusqlite::Row<'a>, context: &'static str) -> Self {
        Row {
            row: RowOf::Sqlite(row),
            context,
        }
    }

    pub(crate) fn pg(row: &'a postgres::Row, context: &'static str) -> Self {
        Row {
            row: RowOf::Pg(row),
            context,
        }
    }

    /// Column `i`. A value of another type or an unexpected NULL (a database this version did
    /// not write) is an error naming the context, not a panic.
    pub fn get<T: FromColumn>(&self, i: usize) -> Result<T, StoreError> {
        let context = self.context;
        match self.row {
            RowOf::Sqlite(r) => {
                T::from_sqlite(r, i).map_err(|source| StoreError::Sqlite { context, source })
            }
            RowOf::Pg(r) => {
                T::from_pg(r, i).map_err(|source| StoreError::Postgres { context, source })
            }
        }
    }
}

/// A type a column is read as, on either database.
pub trait FromColumn: Sized {
    fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Self>;
    fn from_pg(row: &postgres::Row, i: usize) -> Result<Self, postgres::Error>;
}

/// Types both drivers read alike.
macro_rules! same_column {
    ($($t:ty),*) => {$(
        impl FromColumn for $t {
            fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Self> {
                row.get(i)
            }
            fn from_pg(row: &postgres::Row, i: usize) -> Result<Self, postgres::Error> {
                row.try_get(i)
            }
        }
    )*};
}
same_column!(String, Option<String>, f64, Vec<u8>);

/// The PostgreSQL type of column `i` (`None` past the last column: `try_get` says so).
fn pg_type(row: &postgres::Row, i: usize) -> Option<&postgres::types::Type> {
    row.columns().get(i).map(|c| c.type_())
}

/// Integers of any width (`INTEGER` columns, `COUNT(*)`, `BIGINT`s), as SQLite has only one.
impl FromColumn for i64 {
    fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Self> {
        row.get(i)
    }
    fn from_pg(row: &postgres::Row, i: usize) -> Result<Self, postgres::Error> {
        use postgres::types::Type;
        match pg_type(row, i) {
            Some(&Type::INT2) => row.try_get::<_, i16>(i).map(i64::from),
            Some(&Type::INT4) => row.try_get::<_, i32>(i).map(i64::from),
            _ => row.try_get(i),
        }
    }
}

impl FromColumn for Option<i64> {
    fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Self> {
        row.get(i)
    }
    fn from_pg(row: &postgres::Row, i: usize) -> Result<Self, postgres::Error> {
        use postgres::types::Type;
        match pg_type(row, i) {
            Some(&Type::INT2) => row.try_get::<_, Option<i16>>(i).map(|n| n.map(i64::from)),
            Some(&Type::INT4) => row.try_get::<_, Option<i32>>(i).map(|n| n.map(i64::from)),
            _ => row.try_get(i),
        }
    }
}

/// A truth value: a boolean expression (`x IS NOT NULL`) is an integer on SQLite.
impl FromColumn for bool {
    fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Self> {
        row.get(i)
    }
    fn from_pg(row: &postgres::Row, i: usize) -> Result<Self, postgres::Error> {
        match pg_type(row, i) {
            Some(&postgres::types::Type::BOOL) => row.try_get(i),
            _ => i64::from_pg(row, i).map(|n| n != 0),
        }
    }
}

/// Running statements, on a connection or in a transaction.
pub trait Conn {
    /// Run `sql` with `args`; the number of rows it changed.
    fn execute(
        &mut self,
        context: &'static str,
        sql: &str,
        args: &[Value<'_>],
    ) -> Result<u64, StoreError>;

    /// Every row of `sql` with `args`, each read by `read`.
    fn query<T>(
        &mut self,
        context: &'static str,
        sql: &str,
        args: &[Value<'_>],
        read: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError>;

    /// Run statements without parameters, separated by semicolons (the schema's migrations).
    fn execute_batch(&mut self, context: &'static str, sql: &str) -> Result<(), StoreError>;

    /// The first row of `sql`, if there is one (a lookup by key: there is at most one).
    fn query_opt<T>(
        &mut self,
        context: &'static str,
        sql: &str,
        args: &[Value<'_>],
        read: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        Ok(self.query(context, sql, args, read)?.into_iter().next())
    }

    /// The row of `sql`, which always has one (an aggregate, a `RETURNING` of an upsert).
    fn query_one<T>(
        &mut self,
        context: &'static str,
        sql: &str,
        args: &[Value<'_>],
        read: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.query_opt(context, sql, args, read)?
            .ok_or_else(|| StoreError::Corrupt(format!("no row while {context}")))
    }
}

/// A transaction: rolled back when dropped uncommitted.
pub trait Tx: Conn {
    fn commit(self, context: &'static str) -> Result<(), StoreError>;
}

/// A backend: a connection, the transactions it begins, and the hooks where the SQL or the
/// behaviour of the two databases really differs.
pub trait Db: Conn + Send {
    /// `sqlite` or `postgresql`.
    const BACKEND: &'static str;

    /// The current time in milliseconds since the epoch, by the database's clock (on
    /// PostgreSQL one clock for every worker, whatever their own clocks say).
    const NOW_MS: &'static str;

    /// How the database measures blobs.
    const BLOB_SIZE: BlobSize;

    /// What locks the rows a transaction reads to change them (`FOR UPDATE`). SQLite needs
    /// nothing: its write transaction excludes every other writer from the start.
    const FOR_UPDATE: &'static str;

    type Tx<'a>: Tx
    where
        Self: 'a;

    /// Begin a transaction that writes (on SQLite `BEGIN IMMEDIATE`: it takes the write lock
    /// first, so its reads are not made stale by another writer).
    fn begin(&mut self, context: &'static str) -> Result<Self::Tx<'_>, StoreError>;

    /// What makes a query picking a row to claim skip the rows other transactions hold
    /// (`FOR UPDATE OF {table} SKIP LOCKED`, so many workers claim at once without waiting for
    /// each other; nothing on SQLite).
    fn skip_locked(table: &str) -> String;

    /// The schema version of the database: older than the latest only for a SQLite file of an
    /// older version opened read-only.
    fn schema_version(&self) -> i64;

    /// [`crate::Store::lock_run`].
    fn hold_run_lock(&mut self, holder: &str) -> Result<(), StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_renumbered_for_sqlite_outside_literals() {
        assert_eq!(
            sqlite_placeholders("UPDATE t SET a = $3, b = '$1' WHERE c = $1 AND d = $12"),
            "UPDATE t SET a = ?3, b = '$1' WHERE c = ?1 AND d = ?12"
        );
        assert!(matches!(
            sqlite_placeholders("SELECT 1"),
            Cow::Borrowed("SELECT 1")
        ));
    }

    #[test]
    fn attempts_are_capped_not_wrapped() {
        assert_eq!(attempts_db(3), 3);
        assert_eq!(attempts_db(u32::MAX), i64::from(i32::MAX));
    }
}
