//! The PostgreSQL backend: the IndexedDB databases of one PostgreSQL database, shared by
//! every process and host that opens the same URL.
//!
//! Each IndexedDB database is a schema `idb_<id>` (`id` from the catalog, never the name)
//! holding the same tables as a SQLite file, keys as `bytea` in the order-preserving key
//! encoding (PostgreSQL compares `bytea` bytewise, shorter first on a common prefix, as
//! SQLite compares BLOBs). The catalog `indexa.catalog` maps each name (its WTF-8 bytes, a
//! query parameter, never part of SQL text) to its id, version and layout versions. The
//! layout is documented in `docs/format.md`.
//!
//! Readwrite and versionchange transactions take a transaction-scoped advisory lock per
//! database, so they run one at a time across processes and hosts; readonly transactions read
//! one `REPEATABLE READ` snapshot. Uses the blocking `postgres` client (the synchronous
//! wrapper over tokio-postgres, which the shard router uses).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, Config, NoTls, Statement};

use crate::backend::{DatabaseRow, IndexRow, IndexStep, Rows, StorageConnection, StoreRow};
use crate::error::{Error, Result};
use crate::key_encoding::KEY_ENCODING_VERSION;
use crate::key_range::EncodedRange;
use crate::utf16::Utf16String;
use crate::value_codec::{wtf8_to_units, VALUE_FORMAT_VERSION};

/// Version of the PostgreSQL layout below (catalog and per-database tables).
pub(crate) const LAYOUT_VERSION: i32 = 1;

/// The first key of every advisory lock Indexa takes (the second is a database id, or 0 for
/// the catalog), so they stay apart from other applications' locks on the same server.
const LOCK_CLASS: i32 = 0x1DBA;

const CATALOG: &str = "
CREATE SCHEMA IF NOT EXISTS indexa;
CREATE TABLE IF NOT EXISTS indexa.catalog (
    id INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name BYTEA NOT NULL UNIQUE,
    version BIGINT NOT NULL,
    layout_version INTEGER NOT NULL,
    key_encoding_version INTEGER NOT NULL,
    value_format_version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS indexa.versionchange (
    database_id INTEGER PRIMARY KEY,
    serial BIGINT NOT NULL,
    backend_pid INTEGER NOT NULL,
    owner BIGINT NOT NULL,
    old_version BIGINT NOT NULL,
    new_version BIGINT
);
";

/// The tables of one database, created in its own schema (on the search path).
const TABLES: &str = "
CREATE TABLE object_store (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name BYTEA NOT NULL UNIQUE,
    key_path TEXT,
    key_path_is_array BOOLEAN NOT NULL,
    auto_increment BOOLEAN NOT NULL,
    current_number BIGINT NOT NULL
);
CREATE TABLE object_store_index (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    object_store_id BIGINT NOT NULL,
    name BYTEA NOT NULL,
    key_path TEXT NOT NULL,
    key_path_is_array BOOLEAN NOT NULL,
    is_unique BOOLEAN NOT NULL,
    multi_entry BOOLEAN NOT NULL,
    UNIQUE (object_store_id, name)
);
CREATE TABLE record (
    object_store_id BIGINT NOT NULL,
    key BYTEA NOT NULL,
    value BYTEA NOT NULL,
    PRIMARY KEY (object_store_id, key)
);
CREATE TABLE index_entry (
    index_id BIGINT NOT NULL,
    key BYTEA NOT NULL,
    primary_key BYTEA NOT NULL,
    PRIMARY KEY (index_id, key, primary_key)
);
";

/// Maps a PostgreSQL failure to the spec's error: a full disk is `QuotaExceededError`,
/// anything else (a lost connection, a server restart) `UnknownError`. The message is the
/// server's or the client's, which never carries the password.
fn pg_error(e: postgres::Error) -> Error {
    match e.code() {
        Some(code) if *code == SqlState::DISK_FULL => {
            Error::QuotaExceeded(format!("the PostgreSQL server's disk is full: {e}"))
        }
        // A server's error says what happened in its message (e.g. "terminating connection
        // due to administrator command"); the client's own Display shows only "db error".
        _ => match e.as_db_error() {
            Some(db) => Error::Unknown(format!(
                "PostgreSQL failure: {} {}: {}",
                db.severity(),
                db.code().code(),
                db.message()
            )),
            None => Error::Unknown(format!("PostgreSQL failure: {e}")),
        },
    }
}

trait PgResult<T> {
    fn pg(self) -> Result<T>;
}

impl<T> PgResult<T> for std::result::Result<T, postgres::Error> {
    fn pg(self) -> Result<T> {
        self.map_err(pg_error)
    }
}

/// A PostgreSQL server and database, as a `postgres://` URL names them: the place of a
/// factory's IndexedDB databases.
pub(crate) struct Server {
    config: Config,
    /// The URL without its password, for messages.
    shown: String,
    /// A connection for catalog work (listing, deleting), made when first needed.
    catalog: Mutex<Option<Client>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// The scheme of `text` when it starts as a URL does (`scheme://`; RFC 3986, section 3.1:
/// a letter, then letters, digits, `+`, `-` or `.`), as written.
pub(crate) fn url_scheme(text: &str) -> Option<&str> {
    let (scheme, _) = text.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

/// `": "` and the cause of client error `e`, or nothing when it has none. The client's own
/// message is general ("invalid connection string", "error performing TLS handshake"); the
/// cause says what went wrong ("invalid value for option `sslmode`", "server does not
/// support TLS").
fn cause_of(e: &postgres::Error) -> String {
    std::error::Error::source(e)
        .map(|c| format!(": {c}"))
        .unwrap_or_default()
}

/// Whether `url` names a PostgreSQL server: its scheme is `postgres` or `postgresql`, in
/// any case (schemes are case-insensitive, RFC 3986 section 3.1).
pub(crate) fn is_url(url: &str) -> bool {
    url_scheme(url)
        .is_some_and(|s| s.eq_ignore_ascii_case("postgres") || s.eq_ignore_ascii_case("postgresql"))
}

impl Server {
    /// Reads a `postgres://user[:password]@host[:port]/dbname[?sslmode=…]` URL and makes
    /// sure the catalog exists.
    ///
    /// # Errors
    /// [`Error::Syntax`] for a URL that is not a PostgreSQL URL; [`Error::Unknown`] when the
    /// server cannot be reached or refuses the login. Neither message holds the password.
    pub fn new(url: &str) -> Result<Server> {
        // The client reads the scheme in lower case only.
        let lowered = match url_scheme(url) {
            Some(scheme) => format!("{}{}", scheme.to_ascii_lowercase(), &url[scheme.len()..]),
            None => url.to_string(),
        };
        let config: Config = lowered.parse().map_err(|e: postgres::Error| {
            // The cause names the option ("invalid value for option `sslmode`"). libpq's
            // verify-ca and verify-full are not the client's values; `require` verifies as
            // verify-full does (see `tls_config`).
            let cause = cause_of(&e);
            let hint = if cause.contains("`sslmode`") {
                " (sslmode is disable, prefer or require; require checks the server's \
                 certificate and host name, as libpq's verify-full does)"
            } else {
                ""
            };
            Error::Syntax(format!(
                "{} is not a valid PostgreSQL URL: {e}{cause}{hint}",
                without_password(url)
            ))
        })?;
        let server = Server {
            config,
            shown: without_password(url),
            catalog: Mutex::new(None),
        };
        server.with_catalog(|client| {
            let mut tx = client.transaction().pg()?;
            tx.execute("SELECT pg_advisory_xact_lock($1, 0)", &[&LOCK_CLASS])
                .pg()?;
            tx.batch_execute(CATALOG).pg()?;
            tx.commit().pg()
        })?;
        Ok(server)
    }

    /// The same server with no catalog connection of its own, for whatever outlives the
    /// factory that made this one (the process's listener): a factory's catalog connection
    /// closes with the factory.
    pub fn without_catalog(&self) -> Server {
        Server {
            config: self.config.clone(),
            shown: self.shown.clone(),
            catalog: Mutex::new(None),
        }
    }

    /// The URL without its password.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// A new client, with TLS when the URL's `sslmode` is `require` (a `prefer` or
    /// `disable` URL connects without it); see [`tls_config`].
    pub(crate) fn connect(&self) -> Result<Client> {
        let result = match self.config.get_ssl_mode() {
            postgres::config::SslMode::Disable | postgres::config::SslMode::Prefer => {
                self.config.connect(NoTls)
            }
            _ => {
                let tls = tls_config().map_err(|e| {
                    Error::Unknown(format!("cannot set up TLS for {}: {e}", self.shown))
                })?;
                self.config
                    .connect(tokio_postgres_rustls::MakeRustlsConnect::new(tls))
            }
        };
        result.map_err(|e| {
            Error::Unknown(format!(
                "cannot connect to {}: {e}{}",
                self.shown,
                cause_of(&e)
            ))
        })
    }

    /// Runs `f` on the catalog connection, connecting again once when the connection was
    /// lost (a server restart).
    fn with_catalog<R>(&self, f: impl Fn(&mut Client) -> Result<R>) -> Result<R> {
        let mut slot = self.catalog.lock().unwrap_or_else(|p| p.into_inner());
        if !slot.as_ref().is_some_and(|c| !c.is_closed()) {
            *slot = Some(self.connect()?);
        }
        let client = slot.as_mut().expect("connected above");
        match f(client) {
            Err(_) if client.is_closed() || client.simple_query("").is_err() => {
                *slot = Some(self.connect()?);
                f(slot.as_mut().expect("connected above"))
            }
            other => other,
        }
    }

    /// The id of database `name`, creating its catalog row (version 0) and schema when it
    /// has none.
    pub fn database_id(&self, name: &Utf16String) -> Result<i32> {
        self.with_catalog(|client| {
            let mut tx = client.transaction().pg()?;
            tx.execute("SELECT pg_advisory_xact_lock($1, 0)", &[&LOCK_CLASS])
                .pg()?;
            let wtf8 = name.to_wtf8();
            if let Some(row) = tx
                .query_opt("SELECT id FROM indexa.catalog WHERE name = $1", &[&wtf8])
                .pg()?
            {
                return Ok(row.get(0));
            }
            let id: i32 = tx
                .query_one(
                    "INSERT INTO indexa.catalog (name, version, layout_version, key_encoding_version, value_format_version) VALUES ($1, 0, $2, $3, $4) RETURNING id",
                    &[
                        &wtf8,
                        &LAYOUT_VERSION,
                        &(KEY_ENCODING_VERSION as i32),
                        &i32::from(VALUE_FORMAT_VERSION),
                    ],
                )
                .pg()?
                .get(0);
            tx.batch_execute(&format!(
                "CREATE SCHEMA {schema}; SET LOCAL search_path TO {schema}; {TABLES}",
                schema = schema_name(id)
            ))
            .pg()?;
            tx.commit().pg()?;
            Ok(id)
        })
    }

    /// Every database with its version (those at version 0 included), by name.
    pub fn databases(&self) -> Result<Vec<(Utf16String, u64)>> {
        self.with_catalog(|client| {
            let rows = client
                .query("SELECT name, version FROM indexa.catalog", &[])
                .pg()?;
            let mut out = rows
                .iter()
                .map(|r| {
                    let version: i64 = r.get(1);
                    Ok((name_from_bytes(r.get(0))?, version.max(0) as u64))
                })
                .collect::<Result<Vec<_>>>()?;
            out.sort();
            Ok(out)
        })
    }

    /// The version of database `name`, `None` when it does not exist.
    pub fn version(&self, name: &Utf16String) -> Result<Option<u64>> {
        self.with_catalog(|client| {
            let row = client
                .query_opt(
                    "SELECT version FROM indexa.catalog WHERE name = $1",
                    &[&name.to_wtf8()],
                )
                .pg()?;
            Ok(row.map(|r| r.get::<_, i64>(0).max(0) as u64))
        })
    }

    /// The id of database `name`; `None` when it does not exist.
    pub fn existing_id(&self, name: &Utf16String) -> Result<Option<i32>> {
        self.with_catalog(|client| {
            let row = client
                .query_opt(
                    "SELECT id FROM indexa.catalog WHERE name = $1",
                    &[&name.to_wtf8()],
                )
                .pg()?;
            Ok(row.map(|r| r.get(0)))
        })
    }

    /// Deletes the database with catalog id `id` (its schema and catalog row), waiting for a
    /// running readwrite transaction of it to end; returns its version (0 when it did not
    /// exist). A database created under the same name since is another id, left alone.
    pub fn delete(&self, id: i32) -> Result<u64> {
        self.with_catalog(|client| {
            let mut tx = client.transaction().pg()?;
            tx.execute("SELECT pg_advisory_xact_lock($1, 0)", &[&LOCK_CLASS])
                .pg()?;
            let Some(row) = tx
                .query_opt("SELECT version FROM indexa.catalog WHERE id = $1", &[&id])
                .pg()?
            else {
                return Ok(0);
            };
            let version: i64 = row.get(0);
            tx.execute("SELECT pg_advisory_xact_lock($1, $2)", &[&LOCK_CLASS, &id])
                .pg()?;
            tx.batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {} CASCADE",
                schema_name(id)
            ))
            .pg()?;
            tx.execute("DELETE FROM indexa.catalog WHERE id = $1", &[&id])
                .pg()?;
            tx.execute(
                "DELETE FROM indexa.versionchange WHERE database_id = $1",
                &[&id],
            )
            .pg()?;
            tx.commit().pg()?;
            Ok(version.max(0) as u64)
        })
    }

    /// A connection to the database with catalog id `id`.
    pub fn open(self: &Arc<Self>, id: i32) -> Result<crate::backend::Connection> {
        let client = self.connect_to(id)?;
        Ok(Box::new(PgConnection {
            server: self.clone(),
            id,
            client: RefCell::new(client),
            statements: RefCell::new(HashMap::new()),
        }))
    }

    /// A client whose search path is the schema of database `id`.
    fn connect_to(&self, id: i32) -> Result<Client> {
        let mut client = self.connect()?;
        client
            .batch_execute(&format!("SET search_path TO {}", schema_name(id)))
            .pg()?;
        Ok(client)
    }
}

/// The TLS settings of `sslmode=require` connections: rustls with the ring provider (no
/// system OpenSSL), verifying the server's certificate against the system's trusted
/// certificates as `rustls-native-certs` finds them (the platform's store, or the files
/// `SSL_CERT_FILE` / `SSL_CERT_DIR` name). Read once per process.
fn tls_config() -> std::result::Result<rustls::ClientConfig, String> {
    static CONFIG: OnceLock<std::result::Result<rustls::ClientConfig, String>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let found = rustls_native_certs::load_native_certs();
            let mut roots = rustls::RootCertStore::empty();
            roots.add_parsable_certificates(found.certs);
            if roots.is_empty() {
                return Err(format!(
                    "no trusted certificates found on this system (set SSL_CERT_FILE){}",
                    found
                        .errors
                        .first()
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default()
                ));
            }
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            Ok(rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| e.to_string())?
                .with_root_certificates(roots)
                .with_no_client_auth())
        })
        .clone()
}

/// The schema of the database with catalog id `id` (an integer: nothing a user wrote).
fn schema_name(id: i32) -> String {
    format!("idb_{id}")
}

/// `url` with every password replaced by `***`: the one after the user (`user:***@`) and
/// every `password` query parameter (`?password=***`, its name percent-decoded as the
/// client does). The user part ends at the first `@`, as the client parses it, so a
/// password holding an unencoded `@` shows the rest of itself as the host the client will
/// connect to — which it is.
fn without_password(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let (scheme, rest) = url.split_at(scheme_end + 3);
    let rest = match rest.split_once('@') {
        Some((credentials, after)) => match credentials.split_once(':') {
            Some((user, _)) => format!("{user}:***@{after}"),
            None => rest.to_string(),
        },
        None => rest.to_string(),
    };
    format!("{scheme}{}", without_password_parameters(&rest))
}

/// `text` with the value of every `password=` parameter (after `?` or `&`) replaced by
/// `***`.
fn without_password_parameters(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(['?', '&']) {
        out.push_str(&rest[..=start]);
        rest = &rest[start + 1..];
        let end = rest.find(['?', '&']).unwrap_or(rest.len());
        let parameter = &rest[..end];
        match parameter.split_once('=') {
            Some((key, _)) if percent_decoded(key).eq_ignore_ascii_case(b"password") => {
                out.push_str(key);
                out.push_str("=***");
            }
            _ => out.push_str(parameter),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The bytes of `text` with its `%XX` escapes decoded (a `%` not followed by two hex digits
/// stays as it is).
fn percent_decoded(text: &str) -> Vec<u8> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%')
            .then(|| bytes.get(i + 1..i + 3))
            .flatten()
            .filter(|hex| hex.iter().all(u8::is_ascii_hexdigit))
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    out
}

/// Reads a name stored as its WTF-8 bytes.
fn name_from_bytes(bytes: Vec<u8>) -> Result<Utf16String> {
    wtf8_to_units(&bytes).ok_or_else(|| Error::Unknown("a stored name is not valid WTF-8".into()))
}

/// A connection to one IndexedDB database on a PostgreSQL server, connecting again at the
/// start of a transaction when the server was restarted.
struct PgConnection {
    server: Arc<Server>,
    id: i32,
    client: RefCell<Client>,
    /// Statements prepared on this client, by SQL text.
    statements: RefCell<HashMap<String, Statement>>,
}

/// Query parameters, in `$n` order.
#[derive(Default)]
struct Params(Vec<Box<dyn ToSql + Sync>>);

impl Params {
    /// Adds a parameter and returns its placeholder.
    fn push(&mut self, value: impl ToSql + Sync + 'static) -> String {
        self.0.push(Box::new(value));
        format!("${}", self.0.len())
    }

    fn refs(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.0.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect()
    }
}

/// Appends `AND column op $n` for a bound.
fn bound_condition(
    sql: &mut String,
    params: &mut Params,
    column: &str,
    bound: &std::ops::Bound<Vec<u8>>,
    inclusive: &str,
    strict: &str,
) {
    match bound {
        std::ops::Bound::Unbounded => {}
        std::ops::Bound::Included(b) => {
            let p = params.push(b.clone());
            sql.push_str(&format!(" AND {column} {inclusive} {p}"));
        }
        std::ops::Bound::Excluded(b) => {
            let p = params.push(b.clone());
            sql.push_str(&format!(" AND {column} {strict} {p}"));
        }
    }
}

fn range_conditions(sql: &mut String, params: &mut Params, column: &str, range: &EncodedRange) {
    bound_condition(sql, params, column, &range.lower, ">=", ">");
    bound_condition(sql, params, column, &range.upper, "<=", "<");
}

impl PgConnection {
    fn statement(&self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.statements.borrow().get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.borrow_mut().prepare(sql).pg()?;
        self.statements
            .borrow_mut()
            .insert(sql.to_string(), s.clone());
        Ok(s)
    }

    fn query(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<postgres::Row>> {
        let s = self.statement(sql)?;
        self.client.borrow_mut().query(&s, params).pg()
    }

    fn execute(&self, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Result<u64> {
        let s = self.statement(sql)?;
        self.client.borrow_mut().execute(&s, params).pg()
    }

    fn batch(&self, sql: &str) -> Result<()> {
        self.client.borrow_mut().batch_execute(sql).pg()
    }

    /// Starts a writing transaction holding the database's advisory lock, waiting for it
    /// (`pg_advisory_xact_lock`) or, unless `wait`, not (`pg_try_advisory_xact_lock`, which
    /// answers at once: `false`, and no transaction, when another session holds it).
    fn begin_writing(&self, durable: bool, wait: bool) -> Result<bool> {
        self.begin("BEGIN")?;
        let params: [&(dyn ToSql + Sync); 2] = [&LOCK_CLASS, &self.id];
        let locked = if wait {
            self.execute("SELECT pg_advisory_xact_lock($1, $2)", &params)
                .map(|_| true)
        } else {
            self.query("SELECT pg_try_advisory_xact_lock($1, $2)", &params)
                .map(|rows| rows.first().is_some_and(|r| r.get::<_, bool>(0)))
        }
        .and_then(|locked| {
            if locked && !durable {
                self.batch("SET LOCAL synchronous_commit TO off")?;
            }
            Ok(locked)
        });
        if !matches!(locked, Ok(true)) {
            self.rollback();
        }
        locked
    }

    /// Starts a transaction with `begin`, connecting again once when the connection was
    /// lost since the last one (a server restart).
    fn begin(&self, begin: &str) -> Result<()> {
        let first = self.client.borrow_mut().batch_execute(begin);
        match first {
            Ok(()) => Ok(()),
            // A session the server ended answers with a FATAL error first, and only the
            // next use finds the connection closed.
            Err(e) if e.is_closed() || self.client.borrow_mut().batch_execute("").is_err() => {
                *self.client.borrow_mut() = self.server.connect_to(self.id)?;
                self.statements.borrow_mut().clear();
                self.batch(begin)
            }
            Err(e) => Err(pg_error(e)),
        }
    }

    /// Rows (key[, primary key][, value]) as `out` holds them, appended to `out`.
    fn rows_to_rows(rows: Vec<postgres::Row>, mut out: Rows) -> Rows {
        let (with_primary_key, with_value) = out.holds();
        for r in &rows {
            let value_at = 1 + usize::from(with_primary_key);
            out.push(
                r.get(0),
                if with_primary_key { r.get(1) } else { &[] },
                if with_value { r.get(value_at) } else { &[] },
            );
        }
        out.shrink_to_fit();
        out
    }
}

impl StorageConnection for PgConnection {
    fn begin_read(&self) -> Result<()> {
        self.begin("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
    }

    fn begin_write(&self, durable: bool) -> Result<()> {
        self.begin_writing(durable, true).map(|_| ())
    }

    fn try_begin_write(&self, durable: bool) -> Result<bool> {
        self.begin_writing(durable, false)
    }

    fn commit(&self) -> Result<()> {
        self.batch("COMMIT")
    }

    fn rollback(&self) {
        let _ = self.client.borrow_mut().batch_execute("ROLLBACK");
    }

    fn savepoint(&self) -> Result<()> {
        self.batch("SAVEPOINT request")
    }

    fn release_savepoint(&self) -> Result<()> {
        self.batch("RELEASE SAVEPOINT request")
    }

    fn rollback_to_savepoint(&self) -> Result<()> {
        self.batch("ROLLBACK TO SAVEPOINT request; RELEASE SAVEPOINT request")
    }

    fn initialize(&self, name: &Utf16String) -> Result<DatabaseRow> {
        let rows = self.query(
            "SELECT name, version, layout_version, key_encoding_version, value_format_version FROM indexa.catalog WHERE id = $1",
            &[&self.id],
        )?;
        let Some(row) = rows.first() else {
            return Err(Error::Unknown(format!(
                "database {name:?} was deleted while it was being opened"
            )));
        };
        let (layout, keys, values): (i32, i32, i32) = (row.get(2), row.get(3), row.get(4));
        if layout != LAYOUT_VERSION
            || keys != KEY_ENCODING_VERSION as i32
            || values != VALUE_FORMAT_VERSION as i32
        {
            return Err(Error::Unknown(format!(
                "database has layout version {layout} (keys {keys}, values {values}); this build reads {LAYOUT_VERSION} (keys {KEY_ENCODING_VERSION}, values {VALUE_FORMAT_VERSION})"
            )));
        }
        let stored = name_from_bytes(row.get(0))?;
        if stored != *name {
            return Err(Error::Unknown(format!(
                "database schema belongs to database {stored:?}, not {name:?}"
            )));
        }
        Ok(DatabaseRow {
            name: stored,
            version: row.get::<_, i64>(1).max(0) as u64,
        })
    }

    fn read_version(&self) -> Result<u64> {
        let rows = self.query(
            "SELECT version FROM indexa.catalog WHERE id = $1",
            &[&self.id],
        )?;
        match rows.first() {
            Some(r) => Ok(r.get::<_, i64>(0).max(0) as u64),
            None => Err(Error::Unknown(
                "the database was deleted by another connection".into(),
            )),
        }
    }

    fn write_version(&self, version: u64) -> Result<()> {
        let v = i64::try_from(version)
            .map_err(|_| Error::Type(format!("version {version} is too large")))?;
        self.execute(
            "UPDATE indexa.catalog SET version = $2 WHERE id = $1",
            &[&self.id, &v],
        )?;
        Ok(())
    }

    fn load_stores(&self) -> Result<Vec<StoreRow>> {
        self.query(
            "SELECT id, name, key_path, key_path_is_array, auto_increment FROM object_store",
            &[],
        )?
        .into_iter()
        .map(|r| {
            let key_path: Option<String> = r.get(2);
            let is_array: bool = r.get(3);
            Ok(StoreRow {
                id: r.get(0),
                name: name_from_bytes(r.get(1))?,
                key_path: key_path.map(|k| (k, is_array)),
                auto_increment: r.get(4),
            })
        })
        .collect()
    }

    fn load_indexes(&self) -> Result<Vec<IndexRow>> {
        self.query(
            "SELECT id, object_store_id, name, key_path, key_path_is_array, is_unique, multi_entry FROM object_store_index",
            &[],
        )?
        .into_iter()
        .map(|r| {
            Ok(IndexRow {
                id: r.get(0),
                store_id: r.get(1),
                name: name_from_bytes(r.get(2))?,
                key_path: (r.get(3), r.get(4)),
                unique: r.get(5),
                multi_entry: r.get(6),
            })
        })
        .collect()
    }

    fn insert_store(
        &self,
        name: &Utf16String,
        key_path: Option<(&str, bool)>,
        auto_increment: bool,
    ) -> Result<i64> {
        let rows = self.query(
            "INSERT INTO object_store (name, key_path, key_path_is_array, auto_increment, current_number) VALUES ($1, $2, $3, $4, 1) RETURNING id",
            &[
                &name.to_wtf8(),
                &key_path.map(|k| k.0),
                &key_path.is_some_and(|k| k.1),
                &auto_increment,
            ],
        )?;
        Ok(rows[0].get(0))
    }

    fn delete_store(&self, store_id: i64) -> Result<()> {
        self.execute(
            "DELETE FROM index_entry WHERE index_id IN (SELECT id FROM object_store_index WHERE object_store_id = $1)",
            &[&store_id],
        )?;
        self.execute(
            "DELETE FROM object_store_index WHERE object_store_id = $1",
            &[&store_id],
        )?;
        self.execute(
            "DELETE FROM record WHERE object_store_id = $1",
            &[&store_id],
        )?;
        self.execute("DELETE FROM object_store WHERE id = $1", &[&store_id])?;
        Ok(())
    }

    fn rename_store(&self, store_id: i64, name: &Utf16String) -> Result<()> {
        self.execute(
            "UPDATE object_store SET name = $2 WHERE id = $1",
            &[&store_id, &name.to_wtf8()],
        )?;
        Ok(())
    }

    fn insert_index(
        &self,
        store_id: i64,
        name: &Utf16String,
        key_path: (&str, bool),
        unique: bool,
        multi_entry: bool,
    ) -> Result<i64> {
        let rows = self.query(
            "INSERT INTO object_store_index (object_store_id, name, key_path, key_path_is_array, is_unique, multi_entry) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
            &[
                &store_id,
                &name.to_wtf8(),
                &key_path.0,
                &key_path.1,
                &unique,
                &multi_entry,
            ],
        )?;
        Ok(rows[0].get(0))
    }

    fn delete_index(&self, index_id: i64) -> Result<()> {
        self.execute("DELETE FROM index_entry WHERE index_id = $1", &[&index_id])?;
        self.execute("DELETE FROM object_store_index WHERE id = $1", &[&index_id])?;
        Ok(())
    }

    fn rename_index(&self, index_id: i64, name: &Utf16String) -> Result<()> {
        self.execute(
            "UPDATE object_store_index SET name = $2 WHERE id = $1",
            &[&index_id, &name.to_wtf8()],
        )?;
        Ok(())
    }

    fn read_current_number(&self, store_id: i64) -> Result<u64> {
        let rows = self.query(
            "SELECT current_number FROM object_store WHERE id = $1",
            &[&store_id],
        )?;
        let row = rows
            .first()
            .ok_or_else(|| Error::Unknown(format!("object store {store_id} is not stored")))?;
        Ok(row.get::<_, i64>(0).max(0) as u64)
    }

    fn write_current_number(&self, store_id: i64, n: u64) -> Result<()> {
        self.execute(
            "UPDATE object_store SET current_number = $2 WHERE id = $1",
            &[&store_id, &(n as i64)],
        )?;
        Ok(())
    }

    fn read_record(
        &self,
        store_id: i64,
        key: &[u8],
        read: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<bool> {
        let rows = self.query(
            "SELECT value FROM record WHERE object_store_id = $1 AND key = $2",
            &[&store_id, &key],
        )?;
        match rows.first() {
            Some(row) => read(row.get(0)).map(|()| true),
            None => Ok(false),
        }
    }

    fn record_exists(&self, store_id: i64, key: &[u8]) -> Result<bool> {
        Ok(!self
            .query(
                "SELECT 1 FROM record WHERE object_store_id = $1 AND key = $2",
                &[&store_id, &key],
            )?
            .is_empty())
    }

    fn put_record(&self, store_id: i64, key: &[u8], value: &[u8]) -> Result<()> {
        self.execute(
            "INSERT INTO record (object_store_id, key, value) VALUES ($1, $2, $3) ON CONFLICT (object_store_id, key) DO UPDATE SET value = excluded.value",
            &[&store_id, &key, &value],
        )?;
        Ok(())
    }

    fn insert_record(&self, store_id: i64, key: &[u8], value: &[u8]) -> Result<()> {
        self.execute(
            "INSERT INTO record (object_store_id, key, value) VALUES ($1, $2, $3)",
            &[&store_id, &key, &value],
        )?;
        Ok(())
    }

    fn clear_records(&self, store_id: i64, index_ids: &[i64]) -> Result<()> {
        self.execute(
            "DELETE FROM record WHERE object_store_id = $1",
            &[&store_id],
        )?;
        self.execute(
            "DELETE FROM index_entry WHERE index_id = ANY($1)",
            &[&index_ids],
        )?;
        Ok(())
    }

    fn select_records(
        &self,
        store_id: i64,
        range: &EncodedRange,
        descending: bool,
        limit: u32,
        with_values: bool,
    ) -> Result<Rows> {
        let mut params = Params::default();
        let mut sql = format!(
            "SELECT key{} FROM record WHERE object_store_id = {}",
            if with_values { ", value" } else { "" },
            params.push(store_id)
        );
        range_conditions(&mut sql, &mut params, "key", range);
        sql.push_str(if descending {
            " ORDER BY key DESC"
        } else {
            " ORDER BY key"
        });
        if limit > 0 {
            sql.push_str(&format!(" LIMIT {}", params.push(i64::from(limit))));
        }
        let rows = self.query(&sql, &params.refs())?;
        Ok(Self::rows_to_rows(rows, Rows::new(false, with_values)))
    }

    fn count_records(&self, store_id: i64, range: &EncodedRange) -> Result<u64> {
        let mut params = Params::default();
        let mut sql = format!(
            "SELECT COUNT(*) FROM record WHERE object_store_id = {}",
            params.push(store_id)
        );
        range_conditions(&mut sql, &mut params, "key", range);
        Ok(self.query(&sql, &params.refs())?[0].get::<_, i64>(0) as u64)
    }

    fn delete_records(&self, store_id: i64, range: &EncodedRange) -> Result<()> {
        let mut params = Params::default();
        let mut sql = format!(
            "DELETE FROM record WHERE object_store_id = {}",
            params.push(store_id)
        );
        range_conditions(&mut sql, &mut params, "key", range);
        self.execute(&sql, &params.refs())?;
        Ok(())
    }

    fn step_store(
        &self,
        store_id: i64,
        range: &EncodedRange,
        descending: bool,
        after: Option<&[u8]>,
        target: Option<&[u8]>,
        with_value: bool,
        limit: u32,
    ) -> Result<Rows> {
        let (strict, inclusive) = if descending { ("<", "<=") } else { (">", ">=") };
        let mut params = Params::default();
        let mut sql = format!(
            "SELECT key{} FROM record WHERE object_store_id = {}",
            if with_value { ", value" } else { "" },
            params.push(store_id)
        );
        range_conditions(&mut sql, &mut params, "key", range);
        if let Some(a) = after {
            let p = params.push(a.to_vec());
            sql.push_str(&format!(" AND key {strict} {p}"));
        }
        if let Some(t) = target {
            let p = params.push(t.to_vec());
            sql.push_str(&format!(" AND key {inclusive} {p}"));
        }
        let p = params.push(i64::from(limit.max(1)));
        sql.push_str(&if descending {
            format!(" ORDER BY key DESC LIMIT {p}")
        } else {
            format!(" ORDER BY key LIMIT {p}")
        });
        let rows = self.query(&sql, &params.refs())?;
        Ok(Self::rows_to_rows(rows, Rows::new(false, with_value)))
    }

    fn index_key_taken(&self, index_id: i64, key: &[u8], primary_key: &[u8]) -> Result<bool> {
        Ok(!self
            .query(
                "SELECT 1 FROM index_entry WHERE index_id = $1 AND key = $2 AND primary_key <> $3 LIMIT 1",
                &[&index_id, &key, &primary_key],
            )?
            .is_empty())
    }

    fn insert_index_entries(&self, primary_key: &[u8], entries: &[(i64, &[u8])]) -> Result<()> {
        for (index_id, key) in entries {
            self.execute(
                "INSERT INTO index_entry (index_id, key, primary_key) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                &[index_id, key, &primary_key],
            )?;
        }
        Ok(())
    }

    fn delete_index_entry(&self, index_id: i64, key: &[u8], primary_key: &[u8]) -> Result<()> {
        self.execute(
            "DELETE FROM index_entry WHERE index_id = $1 AND key = $2 AND primary_key = $3",
            &[&index_id, &key, &primary_key],
        )?;
        Ok(())
    }

    fn select_index_entries(
        &self,
        index_id: i64,
        store_id: i64,
        range: &EncodedRange,
        descending: bool,
        unique: bool,
        limit: u32,
        with_values: bool,
    ) -> Result<Rows> {
        let mut params = Params::default();
        let mut inner = format!(
            "SELECT {}key, primary_key FROM index_entry WHERE index_id = {}",
            if unique { "DISTINCT ON (key) " } else { "" },
            params.push(index_id)
        );
        range_conditions(&mut inner, &mut params, "key", range);
        if unique {
            inner.push_str(" ORDER BY key, primary_key");
        }
        let order = if descending {
            " ORDER BY e.key DESC, e.primary_key DESC"
        } else {
            " ORDER BY e.key, e.primary_key"
        };
        let mut sql = if with_values {
            let p = params.push(store_id);
            format!(
                "SELECT e.key, e.primary_key, r.value FROM ({inner}) e JOIN record r ON r.object_store_id = {p} AND r.key = e.primary_key{order}"
            )
        } else {
            format!("SELECT e.key, e.primary_key FROM ({inner}) e{order}")
        };
        if limit > 0 {
            sql.push_str(&format!(" LIMIT {}", params.push(i64::from(limit))));
        }
        let rows = self.query(&sql, &params.refs())?;
        Ok(Self::rows_to_rows(rows, Rows::new(true, with_values)))
    }

    fn count_index_entries(&self, index_id: i64, range: &EncodedRange) -> Result<u64> {
        let mut params = Params::default();
        let mut sql = format!(
            "SELECT COUNT(*) FROM index_entry WHERE index_id = {}",
            params.push(index_id)
        );
        range_conditions(&mut sql, &mut params, "key", range);
        Ok(self.query(&sql, &params.refs())?[0].get::<_, i64>(0) as u64)
    }

    fn step_index(
        &self,
        index_id: i64,
        store_id: i64,
        range: &EncodedRange,
        descending: bool,
        step: &IndexStep<'_>,
        with_value: bool,
        limit: u32,
    ) -> Result<Rows> {
        let (strict, inclusive) = if descending { ("<", "<=") } else { (">", ">=") };
        let mut params = Params::default();
        let mut sql = String::from("SELECT e.key, e.primary_key");
        if with_value {
            let p = params.push(store_id);
            sql.push_str(&format!(", r.value FROM index_entry e JOIN record r ON r.object_store_id = {p} AND r.key = e.primary_key"));
        } else {
            sql.push_str(" FROM index_entry e");
        }
        sql.push_str(&format!(" WHERE e.index_id = {}", params.push(index_id)));
        range_conditions(&mut sql, &mut params, "e.key", range);
        if let Some((k, pk)) = step.after {
            let (k, pk) = (params.push(k.to_vec()), params.push(pk.to_vec()));
            sql.push_str(&format!(" AND (e.key, e.primary_key) {strict} ({k}, {pk})"));
        }
        if let Some(k) = step.after_key {
            let k = params.push(k.to_vec());
            sql.push_str(&format!(" AND e.key {strict} {k}"));
        }
        if let Some(k) = step.target {
            let k = params.push(k.to_vec());
            match step.target_primary_key {
                Some(pk) => {
                    let pk = params.push(pk.to_vec());
                    sql.push_str(&format!(
                        " AND (e.key, e.primary_key) {inclusive} ({k}, {pk})"
                    ));
                }
                None => sql.push_str(&format!(" AND e.key {inclusive} {k}")),
            }
        }
        let p = params.push(i64::from(limit.max(1)));
        sql.push_str(&if descending {
            format!(" ORDER BY e.key DESC, e.primary_key DESC LIMIT {p}")
        } else {
            format!(" ORDER BY e.key, e.primary_key LIMIT {p}")
        });
        let rows = self.query(&sql, &params.refs())?;
        Ok(Self::rows_to_rows(rows, Rows::new(true, with_value)))
    }

    fn first_entry_with_key(
        &self,
        index_id: i64,
        store_id: i64,
        key: &[u8],
        with_value: bool,
    ) -> Result<Rows> {
        let rows = if with_value {
            self.query(
                "SELECT e.key, e.primary_key, r.value FROM index_entry e JOIN record r ON r.object_store_id = $3 AND r.key = e.primary_key WHERE e.index_id = $1 AND e.key = $2 ORDER BY e.primary_key LIMIT 1",
                &[&index_id, &key, &store_id],
            )?
        } else {
            self.query(
                "SELECT e.key, e.primary_key FROM index_entry e WHERE e.index_id = $1 AND e.key = $2 ORDER BY e.primary_key LIMIT 1",
                &[&index_id, &key],
            )?
        };
        Ok(Self::rows_to_rows(rows, Rows::new(true, with_value)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sslmode_the_client_lacks_says_which_ones_there_are() {
        let err = Server::new("postgres://u:secret@h/d?sslmode=verify-full").unwrap_err();
        assert_eq!(
            (err.name(), err.message()),
            (
                "SyntaxError",
                "postgres://u:***@h/d?sslmode=verify-full is not a valid PostgreSQL URL: \
                 invalid connection string: invalid value for option `sslmode` (sslmode is \
                 disable, prefer or require; require checks the server's certificate and \
                 host name, as libpq's verify-full does)"
            )
        );
    }

    #[test]
    fn urls_are_shown_without_their_password() {
        assert_eq!(
            without_password("postgres://alice:s3cret@db.example:5432/app?sslmode=require"),
            "postgres://alice:***@db.example:5432/app?sslmode=require"
        );
        assert_eq!(
            without_password("postgres://alice@db.example/app"),
            "postgres://alice@db.example/app"
        );
        assert_eq!(
            without_password("postgresql://db.example:5432/app"),
            "postgresql://db.example:5432/app"
        );
        assert_eq!(
            without_password("postgres://pwuser@127.0.0.1:54331/mine?password=wrongsecret"),
            "postgres://pwuser@127.0.0.1:54331/mine?password=***"
        );
        assert_eq!(
            without_password(
                "postgres://u@h/d?sslmode=bogus&pass%77ord=a%26b&application_name=x&password="
            ),
            "postgres://u@h/d?sslmode=bogus&pass%77ord=***&application_name=x&password=***"
        );
        // The client takes the user part up to the first `@`: the host it connects to is
        // "ss@db.example", and the message shows that.
        assert_eq!(
            without_password("postgres://alice:p@ss@db.example/app"),
            "postgres://alice:***@ss@db.example/app"
        );
        // Even a password parameter the client reads as part of the user name is masked.
        assert_eq!(
            without_password("postgres://db.example/app?password=se@cret"),
            "postgres://db.example/app?password=***"
        );
    }
}
