//! The seed documents' real uses of approximate-membership filters, runnable and measured.
//!
//! - [`lsm`]: an LSM read path — sorted table files with their filter inside, one shared
//!   bounded filter cache, point lookups counting data-block reads.
//! - [`admission`]: one-hit-wonder cache admission (Maggs & Sitaraman 2015).
//! - [`dedup`]: per-user "already seen" filtering against exact sets.
//! - [`inspect`]: what a serialized filter is, and seed 003's audit checklist against it.
//! - [`any`]: decode a serialized filter of any variant.
//!
//! Each has an example under `examples/` that runs it at full size and writes its table to
//! `results/uses/`, and a smoke test at CI size.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod admission;
pub mod any;
pub mod dedup;
pub mod inspect;
pub mod lsm;
mod table;

/// Net heap bytes allocated while `f` runs, as counted by `global` — the binary's counting
/// global allocator (`#[global_allocator] static GLOBAL: &StatsAlloc<System> =
/// &INSTRUMENTED_SYSTEM;`). Allocations minus frees plus the net change of reallocations.
pub fn net_heap_bytes(
    global: &stats_alloc::StatsAlloc<std::alloc::System>,
    f: &mut dyn FnMut(),
) -> usize {
    let region = stats_alloc::Region::new(global);
    f();
    let c = region.change();
    (c.bytes_allocated as isize - c.bytes_deallocated as isize + c.bytes_reallocated).max(0)
        as usize
}

/// Write `text` to `results/uses/<name>` under the workspace root (or `$BLOOMLAB_RESULTS`),
/// creating the folder, and return the path written.
pub fn write_result(name: &str, text: &str) -> std::io::Result<std::path::PathBuf> {
    let root = std::env::var_os("BLOOMLAB_RESULTS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../results"));
    let dir = root.join("uses");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(name);
    std::fs::write(&path, text)?;
    Ok(path.canonicalize().unwrap_or(path))
}
