//! `merge` and `add`: filters changed as files, written atomically.

use std::io::Write;
use std::path::Path;

use bloomlab_sbbf::Sbbf;

use crate::keys::TypedKey;
use crate::{CliError, Loaded};

/// OR `b` into `a`: the same format and shape (and seed) only, else the reason.
pub(crate) fn merge(a: &mut Loaded, b: &Loaded) -> Result<(), CliError> {
    let refused = |e: bloomlab_core::Error| CliError::Invalid(format!("cannot merge: {e}"));
    match (a, b) {
        (Loaded::Ours(a), Loaded::Ours(b)) => {
            // The variant's own reason first (a counting filter has no exact union), then
            // whether the two match.
            if let Some(why) = a.declaration().no_union {
                return Err(CliError::Invalid(format!("cannot merge: {why}")));
            }
            a.union_in(b).map_err(refused)
        }
        (Loaded::Section(a), Loaded::Section(b)) => a.union(b).map_err(refused),
        (Loaded::Jvm(a), Loaded::Jvm(b)) => a.merge(b),
        (a, b) => Err(CliError::Invalid(format!(
            "cannot merge a {} with a {}",
            a.kind_name(),
            b.kind_name()
        ))),
    }
}

/// Insert one key. A Ribbon filter refuses (it is static); a full cuckoo filter says so.
pub(crate) fn insert(f: &mut Loaded, key: TypedKey<'_>) -> Result<(), CliError> {
    let full = |e: bloomlab_core::Error| CliError::Invalid(format!("the key did not fit: {e}"));
    match f {
        Loaded::Jvm(f) => {
            f.insert(key);
            Ok(())
        }
        Loaded::Section(f) => {
            key.with_bytes(|b| f.insert_bytes(b));
            Ok(())
        }
        Loaded::Ours(f) => {
            if !f.declaration().takes_inserts() {
                return Err(CliError::Invalid(format!(
                    "a {} filter is static: it is solved for its key set and takes no more keys; build it again",
                    f.declaration().name()
                )));
            }
            let target = f.as_filter_mut();
            match key.with_bytes(|b| target.insert_bytes(b)) {
                // The filter keeps no more copies of this key; it is unchanged and the key
                // tests positive, which is all a filter built from data needs.
                Err(bloomlab_core::Error::TooManyCopies(_)) => Ok(()),
                other => other.map_err(full),
            }
        }
    }
}

/// The bytes of a filter, in the form it was read in.
pub(crate) fn encode(f: &Loaded) -> Result<Vec<u8>, CliError> {
    match f {
        Loaded::Ours(f) => Ok(f.to_bytes()),
        Loaded::Jvm(f) => Ok(f.to_bytes()),
        Loaded::Section(f) => section_bytes(f),
    }
}

fn section_bytes(f: &Sbbf) -> Result<Vec<u8>, CliError> {
    f.to_parquet_bytes()
        .map_err(|e| CliError::Invalid(e.to_string()))
}

/// Write `bytes` to `path` atomically: a new file in the same directory, flushed to disk, then
/// renamed over `path`. On any error `path` is as it was (absent, or the old file) and no
/// temporary file is left behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let io = |e: std::io::Error| CliError::Io(format!("cannot write {}: {e}", path.display()));
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".bloomlab-").suffix(".tmp");
    // The mode a new file gets (0666 less the umask), or the one the file being replaced has,
    // rather than the temporary file's 0600.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map_or(0o666, |m| m.permissions().mode() & 0o7777);
        builder.permissions(std::fs::Permissions::from_mode(mode));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(io)?;
    tmp.write_all(bytes).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}
