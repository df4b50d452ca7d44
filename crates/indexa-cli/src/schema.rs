//! `indexa schema` and the schema-change commands (`create-store`, `delete-store`,
//! `rename-store`, `create-index`, `delete-index`, `rename-index`).
//!
//! Each change is one versionchange transaction at the database's version + 1
//! (<https://www.w3.org/TR/IndexedDB-3/#upgrade-transaction-steps>): it applies whole or not
//! at all.

use std::io::Write;

use clap::Args;
use indexa::{
    value_to_text, Durability, KeyPath, Transaction, TransactionMode, Utf16String, Value,
};

use crate::error::{CliError, CmdResult};
use crate::keys::key_path_arg;
use crate::open::DataDir;
use crate::output::Lines;

/// `indexa schema`: print a database's schema.
#[derive(Debug, Clone, Args)]
pub struct SchemaArgs {
    /// The database.
    pub db: String,
}

/// `indexa create-store`.
#[derive(Debug, Clone, Args)]
pub struct CreateStoreArgs {
    /// The database (created when missing).
    pub db: String,
    /// The new object store's name.
    pub store: String,
    /// In-line keys at this key path (as for `import --key-path`).
    #[arg(long, value_name = "KEYPATH")]
    pub key_path: Option<String>,
    /// Give the store a key generator.
    #[arg(long)]
    pub auto_increment: bool,
}

/// `indexa delete-store`.
#[derive(Debug, Clone, Args)]
pub struct DeleteStoreArgs {
    /// The database.
    pub db: String,
    /// The object store to delete, with its records and indexes.
    pub store: String,
}

/// `indexa rename-store`.
#[derive(Debug, Clone, Args)]
pub struct RenameStoreArgs {
    /// The database.
    pub db: String,
    /// The object store.
    pub store: String,
    /// Its new name.
    pub new_name: String,
}

/// `indexa create-index`.
#[derive(Debug, Clone, Args)]
pub struct CreateIndexArgs {
    /// The database.
    pub db: String,
    /// The object store.
    pub store: String,
    /// The new index's name.
    pub index: String,
    /// Its key path (as for `import --key-path`).
    pub key_path: String,
    /// A unique index (ConstraintError, and no change, if existing records share a key).
    #[arg(long)]
    pub unique: bool,
    /// A multiEntry index (one entry per member of an array).
    #[arg(long)]
    pub multi_entry: bool,
}

/// `indexa delete-index`.
#[derive(Debug, Clone, Args)]
pub struct DeleteIndexArgs {
    /// The database.
    pub db: String,
    /// The object store.
    pub store: String,
    /// The index to delete.
    pub index: String,
}

/// `indexa rename-index`.
#[derive(Debug, Clone, Args)]
pub struct RenameIndexArgs {
    /// The database.
    pub db: String,
    /// The object store.
    pub store: String,
    /// The index.
    pub index: String,
    /// Its new name.
    pub new_name: String,
}

/// The text of a key path as `schema` prints it (and `--key-path` reads it).
fn key_path_text(kp: &KeyPath) -> String {
    if !kp.is_compound() && kp.strings()[0].is_empty() {
        return "''".to_owned();
    }
    match kp.to_value() {
        Value::String(_) if !kp.strings()[0].is_empty() && !kp.strings()[0].contains(',') => {
            kp.strings()[0].to_owned()
        }
        Value::Array(_) if kp.strings().len() > 1 => kp.strings().join(","),
        other => format!("'{}'", value_to_text(&other)),
    }
}

/// Quotes a name for a shell when it needs it.
fn shell_word(name: &str) -> String {
    let plain = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c));
    if plain {
        name.to_owned()
    } else {
        format!("'{}'", name.replace('\'', "'\\''"))
    }
}

/// A store or index name as `schema` and the shell's `.stores` print it: the name itself, or
/// for a name with a lone surrogate (which no command line can carry) its text form, a JSON
/// string (`"\uD800"`); the flag is true for the latter.
pub(crate) fn printed_name(name: &Utf16String) -> (String, bool) {
    match name.to_string() {
        Some(text) => (text, false),
        None => (value_to_text(&Value::String(name.clone())), true),
    }
}

/// Runs `indexa schema`: the commands that would recreate the schema, one per line, after a
/// comment line with the database's version. A line naming a store or index with a lone
/// surrogate is printed commented out (`# create-store …`), the name in its text form: no
/// command line can carry such a name (`dump` and `restore` keep it).
///
/// ```text
/// # database geo, version 3
/// create-store geo cities --key-path id --auto-increment
/// create-index geo cities by_country country --unique
/// ```
///
/// # Errors
/// `NotFoundError` for a missing database; engine and output errors.
pub fn schema<W: Write>(dir: &DataDir, a: &SchemaArgs, out: &mut Lines<W>) -> CmdResult {
    let db = dir.open_existing(&a.db)?;
    let tx = db.transaction_over_all_stores(TransactionMode::ReadOnly, Durability::Default)?;
    let name = shell_word(db.name());
    out.line(&format!("# database {name}, version {}", db.version()))?;
    for store_name in tx.object_store_names_utf16() {
        let store = tx.object_store(store_name.clone())?;
        let (store_word, store_odd) = printed_name(&store_name);
        let store_word = word(store_word, store_odd);
        let mut line = format!("create-store {name} {store_word}");
        if let Some(kp) = store.key_path()? {
            line.push_str(&format!(" --key-path {}", key_path_text(&kp)));
        }
        if store.auto_increment()? {
            line.push_str(" --auto-increment");
        }
        out.line(&commented_if(store_odd, line))?;
        for ix_name in store.index_names_utf16()? {
            let ix = store.index(ix_name.clone())?;
            let (ix_word, ix_odd) = printed_name(&ix_name);
            let mut line = format!(
                "create-index {name} {store_word} {} {}",
                word(ix_word, ix_odd),
                key_path_text(&ix.key_path()?)
            );
            if ix.unique()? {
                line.push_str(" --unique");
            }
            if ix.multi_entry()? {
                line.push_str(" --multi-entry");
            }
            out.line(&commented_if(store_odd || ix_odd, line))?;
        }
    }
    tx.commit()?;
    Ok(())
}

/// A printed name as a word of the command: quoted for a shell, unless it is the text form of
/// a name no command line can carry (its line is a comment).
fn word(printed: String, text_form: bool) -> String {
    if text_form {
        printed
    } else {
        shell_word(&printed)
    }
}

/// `line` as a comment when `commented`.
fn commented_if(commented: bool, line: String) -> String {
    if commented {
        format!("# {line}")
    } else {
        line
    }
}

/// Runs `change` in one versionchange transaction at the current version + 1. The database
/// must exist unless `create`.
fn upgrade(
    dir: &DataDir,
    db: &str,
    create: bool,
    change: impl FnOnce(&Transaction) -> Result<(), CliError>,
) -> CmdResult {
    let version = if create {
        DataDir::version_of(&dir.factory()?, db)?
    } else {
        dir.open_existing(db)?.version()
    };
    let mut outcome: Option<Result<(), CliError>> = None;
    let opened = dir.factory()?.open(db, Some(version + 1), |tx, _, _| {
        let result = change(tx);
        let failed = result.is_err();
        outcome = Some(result);
        if failed {
            Err(indexa::Error::Abort("the schema change failed".into()))
        } else {
            Ok(())
        }
    });
    match (outcome, opened) {
        (Some(Err(e)), _) => Err(e.into()),
        (_, Err(e)) => Err(e.into()),
        (Some(Ok(())), Ok(_)) => Ok(()),
        (None, Ok(_)) => Err(CliError::new(
            "AbortError",
            format!("database {db:?} was upgraded by another process meanwhile; nothing changed"),
        )
        .into()),
    }
}

/// Runs `indexa create-store`.
///
/// # Errors
/// As `createObjectStore`: `ConstraintError` if the store exists, `InvalidAccessError` for a
/// key generator with an empty or compound key path; `SyntaxError` for a bad key path.
pub fn create_store(dir: &DataDir, a: &CreateStoreArgs) -> CmdResult {
    let key_path = a.key_path.as_deref().map(key_path_arg).transpose()?;
    upgrade(dir, &a.db, true, |tx| {
        tx.create_object_store(&a.store, key_path, a.auto_increment)?;
        Ok(())
    })
}

/// Runs `indexa delete-store`.
///
/// # Errors
/// `NotFoundError` for a missing database or store.
pub fn delete_store(dir: &DataDir, a: &DeleteStoreArgs) -> CmdResult {
    upgrade(
        dir,
        &a.db,
        false,
        |tx| Ok(tx.delete_object_store(&a.store)?),
    )
}

/// Runs `indexa rename-store`.
///
/// # Errors
/// `NotFoundError` for a missing database or store; `ConstraintError` if the new name is
/// taken.
pub fn rename_store(dir: &DataDir, a: &RenameStoreArgs) -> CmdResult {
    upgrade(dir, &a.db, false, |tx| {
        Ok(tx.object_store(&a.store)?.rename(&a.new_name)?)
    })
}

/// Runs `indexa create-index`.
///
/// # Errors
/// `NotFoundError` for a missing database or store; `ConstraintError` if the index exists or
/// (`--unique`) records share an index key; `InvalidAccessError` for `--multi-entry` with a
/// compound key path; `SyntaxError` for a bad key path.
///
/// Warns (stderr) when the store has records but the key path matched none of them.
pub fn create_index(dir: &DataDir, a: &CreateIndexArgs) -> CmdResult {
    let key_path = key_path_arg(&a.key_path)?;
    let mut matched_nothing = false;
    upgrade(dir, &a.db, false, |tx| {
        let store = tx.object_store(&a.store)?;
        let index = store.create_index(&a.index, key_path, a.unique, a.multi_entry)?;
        matched_nothing = index.count(None)? == 0 && store.count(None)? > 0;
        Ok(())
    })?;
    if matched_nothing {
        let _ = writeln!(
            std::io::stderr().lock(),
            "indexa: warning: index {:?} (key path {}) matched no record of {}/{}",
            a.index,
            a.key_path,
            a.db,
            a.store
        );
    }
    Ok(())
}

/// Runs `indexa delete-index`.
///
/// # Errors
/// `NotFoundError` for a missing database, store or index.
pub fn delete_index(dir: &DataDir, a: &DeleteIndexArgs) -> CmdResult {
    upgrade(dir, &a.db, false, |tx| {
        Ok(tx.object_store(&a.store)?.delete_index(&a.index)?)
    })
}

/// Runs `indexa rename-index`.
///
/// # Errors
/// `NotFoundError` for a missing database, store or index; `ConstraintError` if the store
/// has an index with the new name.
pub fn rename_index(dir: &DataDir, a: &RenameIndexArgs) -> CmdResult {
    upgrade(dir, &a.db, false, |tx| {
        Ok(tx
            .object_store(&a.store)?
            .index(&a.index)?
            .rename(&a.new_name)?)
    })
}
