//! Version change requests across factories and processes: the notice file.
//!
//! A deletion or an upgrade that has to wait for connections it cannot see (those of other
//! processes, and of other factories of its own process) announces itself in a small file
//! beside the database file, `<database file>-versionchange`; every process with the database
//! open watches that file (see `connection_lock`) and delivers the request to its connections
//! as the spec's `versionchange` event would be
//! (<https://www.w3.org/TR/IndexedDB-3/#upgrade-a-database>, "fire a version change event").
//! The file holds the latest request only; its layout is in `docs/format.md` ("Connections
//! across processes").

use std::fs::File;
use std::path::{Path, PathBuf};

/// A request to upgrade or delete a database, as delivered to the connections it waits for
/// (the spec's `IDBVersionChangeEvent` fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionChange {
    /// The database's version when the request was made.
    pub old_version: u64,
    /// The version asked for; `None` for a deletion.
    pub new_version: Option<u64>,
}

/// The suffix of the notice file's name (after the database file's name).
pub(crate) const NOTICE_SUFFIX: &str = "-versionchange";

/// The first 8 bytes of a notice.
const MAGIC: &[u8; 8] = b"IDXVCN1\n";

/// The size of a notice in bytes.
pub(crate) const NOTICE_LEN: usize = 56;

/// One announced request: the `serial`th since the notice file was created, by owner
/// `owner` of process `pid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Notice {
    pub serial: u64,
    pub pid: u64,
    pub owner: u64,
    pub change: VersionChange,
}

/// The path of the notice file of the database file `database`.
pub(crate) fn notice_path(database: &Path) -> PathBuf {
    let mut p = database.as_os_str().to_owned();
    p.push(NOTICE_SUFFIX);
    PathBuf::from(p)
}

/// 64-bit FNV-1a, to tell a notice read while it was being written.
fn checksum(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

impl Notice {
    /// The notice's bytes: magic, serial, pid, owner, old version, new version (0 for a
    /// deletion), checksum of the preceding 48 bytes; numbers as little-endian u64.
    pub fn encode(&self) -> [u8; NOTICE_LEN] {
        let mut out = [0u8; NOTICE_LEN];
        out[..8].copy_from_slice(MAGIC);
        let fields = [
            self.serial,
            self.pid,
            self.owner,
            self.change.old_version,
            self.change.new_version.unwrap_or(0),
        ];
        for (i, f) in fields.iter().enumerate() {
            out[8 + i * 8..16 + i * 8].copy_from_slice(&f.to_le_bytes());
        }
        let sum = checksum(&out[..48]);
        out[48..].copy_from_slice(&sum.to_le_bytes());
        out
    }

    /// The notice in `bytes`, or `None` when they are not a whole notice (an empty file, or
    /// one read while it was being written).
    pub fn decode(bytes: &[u8]) -> Option<Notice> {
        if bytes.len() < NOTICE_LEN || &bytes[..8] != MAGIC {
            return None;
        }
        let field = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[8 + i * 8..16 + i * 8]);
            u64::from_le_bytes(b)
        };
        if field(5) != checksum(&bytes[..48]) {
            return None;
        }
        Some(Notice {
            serial: field(0),
            pid: field(1),
            owner: field(2),
            change: VersionChange {
                old_version: field(3),
                new_version: Some(field(4)).filter(|&v| v != 0),
            },
        })
    }
}

/// The notice now in `file` (`None` when it holds none yet).
pub(crate) fn read_notice(file: &File) -> Option<Notice> {
    let mut bytes = [0u8; NOTICE_LEN];
    read_at(file, &mut bytes).ok()?;
    Notice::decode(&bytes)
}

/// Writes `notice` over the notice in `file`.
pub(crate) fn write_notice(file: &File, notice: &Notice) -> std::io::Result<()> {
    write_at(file, &notice.encode())
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8]) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, 0)
}

#[cfg(unix)]
fn write_at(file: &File, buf: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(buf, 0)
}

#[cfg(not(unix))]
fn read_at(file: &File, buf: &mut [u8]) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = file;
    f.seek(SeekFrom::Start(0))?;
    f.read_exact(buf)
}

#[cfg(not(unix))]
fn write_at(file: &File, buf: &[u8]) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = file;
    f.seek(SeekFrom::Start(0))?;
    f.write_all(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_round_trip_and_torn_ones_are_refused() {
        let n = Notice {
            serial: 3,
            pid: 4242,
            owner: 7,
            change: VersionChange {
                old_version: 1,
                new_version: Some(2),
            },
        };
        let bytes = n.encode();
        assert_eq!(&bytes[..8], b"IDXVCN1\n");
        assert_eq!(&bytes[8..16], &3u64.to_le_bytes());
        assert_eq!(Notice::decode(&bytes), Some(n));
        let deletion = Notice {
            change: VersionChange {
                old_version: 5,
                new_version: None,
            },
            ..n
        };
        assert_eq!(&deletion.encode()[40..48], &[0; 8]);
        assert_eq!(Notice::decode(&deletion.encode()), Some(deletion));
        let mut torn = bytes;
        torn[20] ^= 1;
        assert_eq!(Notice::decode(&torn), None);
        assert_eq!(Notice::decode(&[]), None);
    }
}
