//! Datasets: the files a list of paths, directories and globs names, and running a command
//! over them in parallel with each file's result kept apart.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::CliError;

/// The files named by `paths`, in order, each once: a file as it is; a directory, every
/// `*.parquet` file under it (recursively, sorted by path); a pattern with `*`, `?` or `[`,
/// the files it matches (sorted). A path that names nothing, or a pattern or directory that
/// yields no file, is an error.
pub fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, CliError> {
    let mut out = Vec::new();
    for p in paths {
        let before = out.len();
        let text = p.to_string_lossy();
        if p.is_dir() {
            walk(p, &mut out)?;
        } else if p.exists() {
            out.push(p.clone());
        } else if text.contains(['*', '?', '[']) {
            glob_into(&text, &mut out)?;
        } else {
            return Err(CliError::Io(format!(
                "cannot read {}: no such file or directory",
                p.display()
            )));
        }
        if out.len() == before {
            return Err(CliError::Invalid(format!(
                "{}: no file here (a directory is searched for *.parquet files)",
                p.display()
            )));
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(p.clone()));
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), CliError> {
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(dir).follow_links(true) {
        let entry =
            entry.map_err(|e| CliError::Io(format!("cannot read {}: {e}", dir.display())))?;
        let parquet = entry.path().extension().is_some_and(|x| x == "parquet");
        if entry.file_type().is_file() && parquet {
            found.push(entry.into_path());
        }
    }
    found.sort();
    out.extend(found);
    Ok(())
}

fn glob_into(pattern: &str, out: &mut Vec<PathBuf>) -> Result<(), CliError> {
    let paths = glob::glob(pattern)
        .map_err(|e| CliError::Invalid(format!("bad pattern {pattern:?}: {e}")))?;
    let mut found = Vec::new();
    for p in paths {
        let p = p.map_err(|e| CliError::Io(format!("cannot read {}: {e}", e.path().display())))?;
        if p.is_file() {
            found.push(p);
        }
    }
    found.sort();
    out.extend(found);
    Ok(())
}

/// Whether the paths name one plain file (no directory, no pattern): the commands then keep
/// their single-file output.
pub fn is_single_file(paths: &[PathBuf]) -> bool {
    paths.len() == 1 && paths[0].is_file()
}

/// Runs for at least this many files get a progress bar (on a terminal only).
const PROGRESS_FROM: usize = 16;

/// Run `work` on every file, on up to `threads` threads, and hand each result to `emit` in the
/// files' order as soon as it and every earlier one are done (so at most the results of the
/// files in flight are held). A file's error does not stop the others. Returns how many
/// failed.
pub fn each_file<T: Send>(
    files: &[PathBuf],
    work: impl Fn(&Path) -> Result<T, CliError> + Sync,
    mut emit: impl FnMut(&Path, Result<T, CliError>) -> Result<(), CliError>,
) -> Result<usize, CliError> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len())
        .max(1);
    let bar = progress(files.len());
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::sync_channel::<(usize, Result<T, CliError>)>(threads * 2);
    let mut failed = 0;
    std::thread::scope(|s| -> Result<(), CliError> {
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, work) = (&next, &work);
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= files.len() {
                        break;
                    }
                    let r = work(&files[i]);
                    if tx.send((i, r)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut pending = std::collections::BTreeMap::new();
        let mut due = 0;
        for (i, r) in rx {
            pending.insert(i, r);
            while let Some(r) = pending.remove(&due) {
                failed += usize::from(r.is_err());
                bar.inc(1);
                let emitted = emit(&files[due], r);
                due += 1;
                if emitted.is_err() {
                    // Stop the workers: they see the closed channel.
                    next.store(files.len(), Ordering::Relaxed);
                    return emitted;
                }
            }
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    Ok(failed)
}

fn progress(n: usize) -> ProgressBar {
    if n < PROGRESS_FROM || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(n as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} files {elapsed}") {
        bar.set_style(style);
    }
    bar
}

/// Write one file's error line to `err`: `PATH: message` (the message names the file already
/// when it came from reading it).
pub fn report(err: &mut dyn Write, path: &Path, e: &CliError) -> Result<(), CliError> {
    let text = e.to_string();
    let shown = path.display().to_string();
    let line = if text.contains(&shown) {
        format!("bloomlab: {text}\n")
    } else {
        format!("bloomlab: {shown}: {text}\n")
    };
    err.write_all(line.as_bytes())
        .map_err(|e| CliError::Io(format!("cannot write the error output: {e}")))
}
