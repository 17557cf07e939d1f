//! The embedded SQLite backend (the default): opening the file, the run lock, and the
//! [`Db`] hooks; every query is shared (`crate::db`).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{params_from_iter, Connection, OpenFlags, TransactionBehavior};

use crate::db::{sqlite_placeholders, BlobSize, Conn, Db, Row, Tx, Value};
use crate::{schema, StoreError};

/// Current time in milliseconds since the epoch, computed by the database.
const NOW_MS: &str = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)";

/// A results store in one SQLite file.
pub struct SqliteStore {
    conn: Connection,
    /// The database file (`None` in memory).
    path: Option<PathBuf>,
    /// The run lock on `<file>.lock`, held while this store runs contests.
    run_lock: Option<File>,
    /// The schema version of the database (older than the latest only when opened read-only).
    schema: i64,
}

/// The file whose OS lock says a process is running contests on the database at `path`.
pub fn run_lock_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// `path` as an SQLite URI with `immutable=1` (percent-encoding what a URI path may not hold).
fn immutable_uri(path: &Path) -> String {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut uri = String::from("file:");
    for b in abs.to_string_lossy().bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(b as char)
            }
            other => uri.push_str(&format!("%{other:02X}")),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// Create an empty database file `0600` (a missing directory is left for SQLite to report).
fn create_private(path: &Path) -> std::io::Result<()> {
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::AlreadyExists | std::io::ErrorKind::NotFound
            ) =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
}

fn err(context: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    move |source| StoreError::Sqlite { context, source }
}

impl SqliteStore {
    /// schema up to date.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let open_err = |source| StoreError::OpenSqlite {
            path: path.display().to_string(),
            source,
        };
        // A new database is private (0600): SQLite gives its -wal and -shm files the mode of the
        // database file.
        if !path.exists() {
            create_private(path).map_err(|e| StoreError::Create {
                path: path.display().to_string(),
                source: e,
            })?;
        }
        let conn = Connection::open(path).map_err(open_err)?;
        let mut store = Self::init(conn).map_err(|e| match e {
            StoreError::Sqlite { source, .. } => open_err(source),
            other => other,
        })?;
        store.path = Some(path.to_path_buf());
        Ok(store)
    }

    /// Open the existing database at `path` read-only, for standings, replays and the web view:
    /// no file is created (a mistyped path is [`StoreError::NoDatabase`]), nothing is migrated,
    /// and it works in a directory the reader may not write (where SQLite cannot create the WAL
    /// index, the file is read as immutable).
    pub fn open_read_only(path: &Path) -> Result<Self, StoreError> {
        let shown = path.display().to_string();
        if !path.is_file() {
            return Err(StoreError::NoDatabase(shown));
        }
        let open_err = |source| StoreError::OpenSqlite {
            path: shown.clone(),
            source,
        };
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(open_err)?;
        conn.busy_timeout(Duration::from_secs(30))
            .map_err(open_err)?;
        let conn = match Self::stored_schema_version(&conn) {
            Ok(_) => conn,
            // A WAL database whose directory we cannot write (no -shm to create): read the
            // file as it is.
            Err(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly
                ) =>
            {
                drop(conn);
                Connection::open_with_flags(immutable_uri(path), flags).map_err(open_err)?
            }
            Err(source) => return Err(open_err(source)),
        };
        let version = Self::stored_schema_version(&conn).map_err(open_err)?;
        crate::schema::pending(version)?;
        conn.set_prepared_statement_cache_capacity(PREPARED_MAX);
        Ok(SqliteStore {
            conn,
            path: Some(path.to_path_buf()),
            run_lock: None,
            schema: version.unwrap_or(0),
        })
    }

    fn stored_schema_version(conn: &Connection) -> Result<Option<i64>, rusqlite::Error> {
        conn.query_row("SELECT MAX(version) FROM kk_schema", [], |r| r.get(0))
    }

    /// An in-memory database (tests).
    pub fn in_memory() -> Result<Self, StoreError> {
        let conn = Connection::open_in_memory().map_err(|source| StoreError::OpenSqlite {
            path: ":memory:".into(),
            source,
        })?;
        Self::init(conn)
    }

    fn init(conn: Connection) -> Result<Self, StoreError> {
        conn.busy_timeout(Duration::from_secs(30))
            .map_err(err("setting the busy timeout"))?;
        // WAL: readers (standings, the web view) never block the runner. synchronous=NORMAL in
        // WAL mode loses nothing when the process is killed; only a power loss may drop the
        // last transactions, never corrupt the file.
        // Switching a new file to WAL takes it whole and may answer "database is locked" at
        // once, without the busy handler, while another connection is opening the same new file:
        // the switch is tried again, within the same 30 s.
        let since = std::time::Instant::now();
        let _mode: String = loop {
            match conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)) {
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy
                        && since.elapsed() < Duration::from_secs(30) =>
                {
                    std::thread::sleep(Duration::from_millis(10));
                }
                r => break r.map_err(err("switching to WAL mode"))?,
            }
        };
        conn.execute_batch("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
            .map_err(err("setting pragmas"))?;
        conn.set_prepared_statement_cache_capacity(PREPARED_MAX);
        let mut store = SqliteStore {
            conn,
            path: None,
            run_lock: None,
            schema: 0,
        };
        store.migrate()?;
        Ok(store)
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        // An up-to-date database is only read: a reader opened while a contest is being stored
        // must not queue for the write lock (the migration below takes it).
        if let Ok(current) = Self::stored_schema_version(&self.conn) {
            if schema::pending(current)?.is_empty() {
                self.schema = current.unwrap_or(0);
                return Ok(());
            }
        }
        let tx = self.begin("starting the schema migration")?;
        schema::migrate(tx, "BLOB")?;
        self.schema = schema::MIGRATIONS.len() as i64;
        Ok(())
    }
}

impl rusqlite::ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match *self {
            Value::Int(n) => ValueRef::Integer(n),
            Value::Real(x) => ValueRef::Real(x),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
            Value::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

/// Statements are prepared once per connection (an LRU cache of this many, by their text).
const PREPARED_MAX: usize = 128;

fn execute(
    conn: &Connection,
    context: &'static str,
    sql: &str,
    args: &[Value<'_>],
) -> Result<u64, StoreError> {
    let mut stmt = conn
        .prepare_cached(&sqlite_placeholders(sql))
        .map_err(err(context))?;
    let n = stmt.execute(params_from_iter(args)).map_err(err(context))?;
    Ok(n as u64)
}

fn query<T>(
    conn: &Connection,
    context: &'static str,
    sql: &str,
    args: &[Value<'_>],
    mut read: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&sqlite_placeholders(sql))
        .map_err(err(context))?;
    let mut rows = stmt.query(params_from_iter(args)).map_err(err(context))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(err(context))? {
        out.push(read(&Row::sqlite(row, context))?);
    }
    Ok(out)
}

impl Conn for SqliteStore {
    fn execute(
        &mut self,
        context: &'static str,
        sql: &str,
        args: &[Value<'_>],
    ) -> Result<u64, StoreError> {
        execute(&self.conn, context, sql, args)
    }

    fn query<T>(
        &mut self,
        context: &'static str,
        sql: &str,
        args: &[Value<'_>],
        read: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        query(&self.conn, context, sql, args, read)
    }

    fn execute_batch(&mut self, context: &'static str, sql: &str) -> Result<(), StoreError> {
        self.conn.execute_batch(sql).map_err(err(context))
    }
}

/// A write transaction on SQLite (`BEGIN IMMEDIATE`).
pub struct SqliteTx<'a>(rusqlite::Transaction<'a>);

impl Conn for SqliteTx<'_> {
    fn execute(
        &mut self,
        context: &'static str,
        sql: &str,
        args: &[Value<'_>],
    ) -> Result<u64, StoreError> {
        execute(&self.0, context, sql, args)
    }

    fn query<T>(
        &mut self,
        context: &'static str,
        sql: &str,
        args: &[Value<'_>],
        read: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        query(&self.0, context, sql, args, read)
    }

    fn execute_batch(&mut self, context: &'static str, sql: &str) -> Result<(), StoreError> {
        self.0.execute_batch(sql).map_err(err(context))
    }
}

impl Tx for SqliteTx<'_> {
    fn commit(self, context: &'static str) -> Result<(), StoreError> {
        self.0.commit().map_err(err(context))
    }
}

impl Db for SqliteStore {
    const BACKEND: &'static str = "sqlite";
    const NOW_MS: &'static str = NOW_MS;
    const BLOB_SIZE: BlobSize = BlobSize {
        len: "length",
        int: "",
    };
    const FOR_UPDATE: &'static str = "";

    type Tx<'a> = SqliteTx<'a>;

    fn begin(&mut self, context: &'static str) -> Result<SqliteTx<'_>, StoreError> {
        self.conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map(SqliteTx)
            .map_err(err(context))
    }

    fn skip_locked(_table: &str) -> String {
        String::new()
    }

    fn schema_version(&self) -> i64 {
        self.schema
    }

    fn hold_run_lock(&mut self, holder: &str) -> Result<(), StoreError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if self.run_lock.is_some() {
            return Ok(());
        }
        let lock_path = run_lock_path(path);
        let lock_err = |source| StoreError::RunLock {
            path: path.display().to_string(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&lock_path)
            .map_err(lock_err)?;
        // A process being started at this moment (a bot, between its fork and its exec) may
        // still hold a copy of a descriptor a run that just ended had locked: a busy lock is
        // tried again for a moment before it is taken as another run's.
        let patience = std::time::Instant::now() + std::time::Duration::from_secs(1);
        let mut attempt = file.try_lock();
        while matches!(attempt, Err(TryLockError::WouldBlock))
            && std::time::Instant::now() < patience
        {
            std::thread::sleep(std::time::Duration::from_millis(20));
            attempt = file.try_lock();
        }
        match attempt {
            Ok(()) => {
                // Who holds it, for the message of a second run (best effort).
                let _ = file.set_len(0).and_then(|_| {
                    file.rewind()?;
                    file.write_all(holder.as_bytes())
                });
                self.run_lock = Some(file);
                Ok(())
            }
            Err(TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                let text = text.trim();
                Err(StoreError::RunInProgress {
                    path: path.display().to_string(),
                    holder: if text.is_empty() {
                        "a process that has not said who it is".into()
                    } else {
                        text.to_string()
                    },
                })
            }
            Err(TryLockError::Error(e)) => Err(lock_err(e)),
        }
    }
}
