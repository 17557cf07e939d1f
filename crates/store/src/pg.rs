//! The PostgreSQL backend, for many workers on many machines: connecting, the statement cache,
//! and the [`Db`] hooks; every query is shared (`crate::db`). Workers claim matches and builds
//! with `FOR UPDATE SKIP LOCKED`, so any number of them claim at once.

use std::collections::HashMap;
use std::time::Duration;

use postgres::types::{ToSql, Type};
use postgres::{Client, Config, GenericClient, NoTls, Statement};

use crate::db::{args, BlobSize, Conn, Db, Row, Tx, Value};
use crate::{redact_url, schema, StoreError};

/// Key of the advisory lock that serialises schema migrations of concurrent starters.
const MIGRATION_LOCK: i64 = 0x6b61_6b65_6869_6b69; // "kakehiki"

/// A results store in a PostgreSQL database.
pub struct PgStore {
    client: Client,
    /// Statements prepared on this connection (see [`Statements`]).
    statements: Statements,
}

/// Most statements a connection keeps prepared (more are prepared for each use).
const PREPARED_MAX: usize = 256;

fn err(context: &'static str) -> impl FnOnce(postgres::Error) -> StoreError {
    move |source| StoreError::Postgres { context, source }
}

/// Statements prepared on a connection, by their text, once: running one again skips
/// PostgreSQL's parsing and planning and a round trip (what a page's few queries mostly cost).
/// Prepared statements outlive the transaction they were prepared in.
#[derive(Default)]
struct Statements(HashMap<String, Statement>);

impl Statements {
    fn get(
        &mut self,
        client: &mut impl GenericClient,
        sql: &str,
        context: &'static str,
    ) -> Result<Statement, StoreError> {
        if let Some(st) = self.0.get(sql) {
            return Ok(st.clone());
        }
        let st = client.prepare(sql).map_err(err(context))?;
        if self.0.len() < PREPARED_MAX {
            self.0.insert(sql.to_string(), st.clone());
        }
        Ok(st)
    }
}

/// `value` as the type PostgreSQL gave the statement's parameter: an integer as `SMALLINT`,
/// `INTEGER` (when it fits) or `BOOLEAN` where the statement wants one, anything else as is (a
/// mismatch is then the driver's error).
/// Every argument bound as the type of the statement's parameter it fills.
fn bind_all<'a>(args: &[Value<'a>], st: &Statement) -> Vec<Box<dyn ToSql + Sync + 'a>> {
    args.iter()
        .zip(st.params())
        .map(|(a, ty)| bind(a, ty))
        .collect()
}

fn bind<'a>(value: &Value<'a>, ty: &Type) -> Box<dyn ToSql + Sync + 'a> {
    match *value {
        Value::Int(n) => match *ty {
            Type::INT2 => match i16::try_from(n) {
                Ok(n) => Box::new(n),
                Err(_) => Box::new(n),
            },
            Type::INT4 => match i32::try_from(n) {
                Ok(n) => Box::new(n),
                Err(_) => Box::new(n),
            },
            Type::BOOL => Box::new(n != 0),
            _ => Box::new(n),
        },
        Value::Real(x) => Box::new(x),
        Value::Text(s) => Box::new(s),
        Value::Blob(b) => Box::new(b),
    }
}

fn execute(
    client: &mut impl GenericClient,
    statements: &mut Statements,
    context: &'static str,
    sql: &str,
    args: &[Value<'_>],
) -> Result<u64, StoreError> {
    let st = statements.get(client, sql, context)?;
    let bound = bind_all(args, &st);
    let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b.as_ref()).collect();
    client.execute(&st, &refs).map_err(err(context))
}

fn query<T>(
    client: &mut impl GenericClient,
    statements: &mut Statements,
    context: &'static str,
    sql: &str,
    args: &[Value<'_>],
    mut read: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    let st = statements.get(client, sql, context)?;
    let bound = bind_all(args, &st);
    let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b.as_ref()).collect();
    let rows = client.query(&st, &refs).map_err(err(context))?;
    rows.iter().map(|r| read(&Row::pg(r, context))).collect()
}

impl PgStore {
    /// Connect to `url` (`postgres://user:password@host:port/database` or the key=value form)
    /// and bring the schema up to date. Without a `connect_timeout` in the URL, connecting gives
    /// up after 10 seconds.
    pub fn connect(url: &str) -> Result<Self, StoreError> {
        let shown = redact_url(url);
        let mut config: Config = url.parse().map_err(|source| StoreError::BadUrl {
            url: shown.clone(),
            source,
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        config.application_name("kakehiki");
        let client = config
            .connect(NoTls)
            .map_err(|source| StoreError::Connect { url: shown, source })?;
        let mut store = PgStore {
            client,
            statements: Statements::default(),
        };
        store.migrate()?;
        Ok(store)
    }

    fn migrate(&mut self) -> Result<(), StoreError> {
        let mut tx = self.begin("starting the schema migration")?;
        tx.execute(
            "locking the schema for migration",
            "SELECT pg_advisory_xact_lock($1)",
            args![MIGRATION_LOCK],
        )?;
        schema::migrate(tx, "BYTEA")
    }
}

impl Conn for PgStore {
    fn execute(
        &mut self,
        context: &'static str,
        sql: &str,
        args: &[Value<'_>],
    ) -> Result<u64, StoreError> {
        execute(&mut self.client, &mut self.statements, context, sql, args)
    }

    fn query<T>(
        &mut self,
        context: &'static str,
        sql: &str,
        args: &[Value<'_>],
        read: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        query(
            &mut self.client,
            &mut self.statements,
            context,
            sql,
            args,
            read,
        )
    }

    fn execute_batch(&mut self, context: &'static str, sql: &str) -> Result<(), StoreError> {
        self.client.batch_execute(sql).map_err(err(context))
    }
}

/// A transaction on PostgreSQL, preparing its statements in its connection's cache.
pub struct PgTx<'a> {
    tx: postgres::Transaction<'a>,
    statements: &'a mut Statements,
}

impl Conn for PgTx<'_> {
    fn execute(
        &mut self,
        context: &'static str,
        sql: &str,
        args: &[Value<'_>],
    ) -> Result<u64, StoreError> {
        execute(&mut self.tx, self.statements, context, sql, args)
    }

    fn query<T>(
        &mut self,
        context: &'static str,
        sql: &str,
        args: &[Value<'_>],
        read: impl FnMut(&Row<'_>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        query(&mut self.tx, self.statements, context, sql, args, read)
    }

    fn execute_batch(&mut self, context: &'static str, sql: &str) -> Result<(), StoreError> {
        self.tx.batch_execute(sql).map_err(err(context))
    }
}

impl Tx for PgTx<'_> {
    fn commit(self, context: &'static str) -> Result<(), StoreError> {
        self.tx.commit().map_err(err(context))
    }
}

impl Db for PgStore {
    const BACKEND: &'static str = "postgresql";
    /// By the database's clock: one clock for all workers, whatever their own clocks say.
    const NOW_MS: &'static str = "(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";
    /// `SUM` of bigints is a numeric on PostgreSQL: cast back.
    const BLOB_SIZE: BlobSize = BlobSize {
        len: "octet_length",
        int: "::BIGINT",
    };
    const FOR_UPDATE: &'static str = "FOR UPDATE";

    type Tx<'a> = PgTx<'a>;

    fn begin(&mut self, context: &'static str) -> Result<PgTx<'_>, StoreError> {
        let tx = self.client.transaction().map_err(err(context))?;
        Ok(PgTx {
            tx,
            statements: &mut self.statements,
        })
    }

    fn skip_locked(table: &str) -> String {
        format!("FOR UPDATE OF {table} SKIP LOCKED")
    }

    fn schema_version(&self) -> i64 {
        // Connecting migrates: the schema is always the latest.
        schema::MIGRATIONS.len() as i64
    }

    fn hold_run_lock(&mut self, _holder: &str) -> Result<(), StoreError> {
        // The queue hands each match to one runner; any number of coordinators may share it.
        Ok(())
    }
}
