//! The router's configuration: shards, catalog, placement strategy (issue 5, "Config file").

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::placement::Strategy;

/// Where a shard or the catalog lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    /// A SQLite database file (created when missing).
    Sqlite(PathBuf),
    /// A PostgreSQL database, as a `postgres://` (or `postgresql://`) URL.
    Postgres(String),
}

impl Location {
    /// Parses `sqlite:PATH` (PATH relative to `base_dir` unless absolute) or a `postgres://` /
    /// `postgresql://` URL. `${VAR}` anywhere in the text is replaced by the environment
    /// variable `VAR`.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for another scheme, an empty path, or an unset variable.
    pub fn parse(text: &str, base_dir: &Path) -> Result<Location> {
        let text = expand_env(text)?;
        if let Some(path) = text.strip_prefix("sqlite:") {
            if path.is_empty() {
                return Err(Error::config("sqlite: needs a file path"));
            }
            let path = Path::new(path);
            Ok(Location::Sqlite(if path.is_absolute() {
                path.to_path_buf()
            } else {
                base_dir.join(path)
            }))
        } else if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Ok(Location::Postgres(text))
        } else {
            Err(Error::config(format!(
                "{text:?} is neither sqlite:PATH nor a postgres:// URL"
            )))
        }
    }
}

/// Replaces each `${NAME}` by the value of the environment variable `NAME`.
fn expand_env(text: &str) -> Result<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| Error::config(format!("unclosed ${{ in {text:?}")))?;
        let name = &after[..end];
        let value = std::env::var(name).map_err(|_| {
            Error::config(format!(
                "environment variable {name:?} used in {text:?} is not set"
            ))
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The catalog: where the id→shard mapping, the coordinator's sequences and the round-robin
/// rotation live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogConfig {
    /// The catalog database; default `sqlite:catalog.db` next to the config file.
    pub location: Location,
    /// When true, `next_id` takes ids from the catalog's atomic sequences (seed 004, "With a
    /// ShardCoordinator … configured"); when false it returns the cross-shard maximum plus one.
    /// Default false.
    pub coordinator: bool,
    /// Ids taken from the coordinator per call and served locally, from 1 to 2^53 (default 1:
    /// every `next_id` is one coordinator call). Only used with `coordinator = true`.
    pub lease: u64,
}

/// A parsed configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// How new keys are placed; default [`Strategy::Hash`].
    pub strategy: Strategy,
    /// The catalog.
    pub catalog: CatalogConfig,
    /// The shards by name, in file order (the order `hash` placement and fan-out use).
    pub shards: IndexMap<String, Location>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    strategy: Option<String>,
    catalog: Option<RawCatalog>,
    #[serde(default)]
    shards: IndexMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCatalog {
    url: Option<String>,
    coordinator: Option<bool>,
    lease: Option<i64>,
}

impl Config {
    /// Reads and parses a TOML configuration file; relative `sqlite:` paths are taken relative to
    /// the file's directory.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] when the file cannot be read or is not valid (see
    /// [`Config::from_toml`]).
    pub fn from_file(path: &Path) -> Result<Config> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::config(format!("cannot read {}: {e}", path.display())))?;
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        Config::from_toml(&text, base)
    }

    /// Parses the TOML text of a configuration:
    ///
    /// ```toml
    /// strategy = "hash"                 # "hash" (default), "round-robin" or "random"
    /// [catalog]
    /// url = "sqlite:catalog.db"         # default; or a postgres:// URL
    /// coordinator = true                # default false
    /// lease = 1                         # default 1, at least 1
    /// [shards]                          # name = "sqlite:PATH" or a postgres:// URL
    /// db-east = "sqlite:east.db"
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] for TOML syntax errors, unknown keys, wrong value types, an
    /// unknown strategy, a lease outside 1..=2^53, or a bad location.
    pub fn from_toml(text: &str, base_dir: &Path) -> Result<Config> {
        let raw: RawConfig = toml::from_str(text).map_err(|e| Error::config(e.message()))?;
        let strategy = match raw.strategy.as_deref() {
            None => Strategy::Hash,
            Some(name) => name.parse()?,
        };
        let raw_catalog = raw.catalog.unwrap_or(RawCatalog {
            url: None,
            coordinator: None,
            lease: None,
        });
        let location = Location::parse(
            raw_catalog.url.as_deref().unwrap_or("sqlite:catalog.db"),
            base_dir,
        )?;
        let lease = raw_catalog.lease.unwrap_or(1);
        if !(1..=crate::catalog::MAX_ID as i64).contains(&lease) {
            return Err(Error::config(format!(
                "lease must be between 1 and 2^53, got {lease}"
            )));
        }
        let shards = raw
            .shards
            .into_iter()
            .map(|(name, url)| {
                let location = Location::parse(&url, base_dir)?;
                Ok((name, location))
            })
            .collect::<Result<IndexMap<_, _>>>()?;
        Ok(Config {
            strategy,
            catalog: CatalogConfig {
                location,
                coordinator: raw_catalog.coordinator.unwrap_or(false),
                lease: lease.unsigned_abs(),
            },
            shards,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_order() {
        let config = Config::from_toml(
            "[shards]\nzeta = \"sqlite:z.db\"\nalpha = \"sqlite:/abs/a.db\"\n",
            Path::new("/etc/indexa"),
        )
        .unwrap();
        assert_eq!(config.strategy, Strategy::Hash);
        assert_eq!(
            config.catalog,
            CatalogConfig {
                location: Location::Sqlite(PathBuf::from("/etc/indexa/catalog.db")),
                coordinator: false,
                lease: 1,
            }
        );
        let names: Vec<&str> = config.shards.keys().map(String::as_str).collect();
        assert_eq!(names, ["zeta", "alpha"]);
        assert_eq!(
            config.shards["alpha"],
            Location::Sqlite(PathBuf::from("/abs/a.db"))
        );
    }

    #[test]
    fn environment_variables_in_urls() {
        std::env::set_var("INDEXA_SHARD_CONFIG_TEST_PORT", "5433");
        let config = Config::from_toml(
            "strategy = \"round-robin\"\n[catalog]\nurl = \"postgres://u@h:${INDEXA_SHARD_CONFIG_TEST_PORT}/c\"\ncoordinator = true\nlease = 100\n",
            Path::new("."),
        )
        .unwrap();
        assert_eq!(config.strategy, Strategy::RoundRobin);
        assert_eq!(
            config.catalog.location,
            Location::Postgres("postgres://u@h:5433/c".into())
        );
        assert!(config.catalog.coordinator);
        assert_eq!(config.catalog.lease, 100);
    }

    #[test]
    fn bad_configs() {
        for text in [
            "strategy = \"sideways\"",
            "[catalog]\nlease = 0",
            "[catalog]\nlease = 9007199254740993",
            "[catalog]\nlease = \"many\"",
            "[catalog]\nurl = \"mysql://x\"",
            "[shards]\na = \"sqlite:\"",
            "[shards]\na = \"postgres://h:${INDEXA_SHARD_SURELY_UNSET_VARIABLE}/d\"",
            "[shards]\na = 3",
            "unknown = 1",
            "[shards",
        ] {
            let err = Config::from_toml(text, Path::new(".")).unwrap_err();
            assert_eq!(err.code(), "INVALID_CONFIG", "{text}");
        }
    }
}
