//! LSM read path at full size: 8 table files with 200 000 keys each in a temporary folder,
//! every filter variant at 1 % (per-table Ribbon filters included), lookups of present and absent keys; writes
//! `results/uses/lsm_read_path.md`.
//!
//! `cargo run --release -p bloomlab-uses --example lsm_read_path`

use bloomlab_uses::lsm::{self, FilterChoice, LsmConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let base = LsmConfig {
        tables: 8,
        keys_per_table: 200_000,
        lookups: 200_000,
        fpr: 0.01,
        cache_fraction: 1.0,
        seed: 42,
    };
    let mut out = format!(
        "# LSM read path\n\n{} table files × {} random `u64` keys, {} lookups of present keys and {} of absent keys, filters at {} % FPR stored inside each table file and loaded through one shared LRU cache.\nCommand: `cargo run --release -p bloomlab-uses --example lsm_read_path`.\n\n",
        base.tables,
        base.keys_per_table,
        base.lookups,
        base.lookups,
        base.fpr * 100.0
    );
    // With the cache at half the filters' size every lookup reloads filters from disk, so
    // that case runs fewer lookups (its figures are per lookup either way).
    for (fraction, lookups) in [(1.0, base.lookups), (0.5, 5_000)] {
        let cfg = LsmConfig {
            cache_fraction: fraction,
            lookups,
            ..base
        };
        let reports = FilterChoice::ALL
            .iter()
            .filter(|&&c| fraction == 1.0 || c != FilterChoice::NoFilter)
            .map(|&c| lsm::run(dir.path(), c, &cfg))
            .collect::<Result<Vec<_>, _>>()?;
        out.push_str(&format!(
            "## Shared filter cache sized for {:.0} % of all filters ({lookups} lookups of each kind)\n\n{}\n",
            fraction * 100.0,
            lsm::markdown(&reports)
        ));
    }
    out.push_str("Block reads saved per MiB: the reads a filter avoids per absent lookup (the covering tables minus the reads it lets through), divided by the MiB of all tables' filters. Tables are written once, so each filter can be a static one built from the table's whole key set: the Ribbon filter (RocksDB's choice for its large levels) needs the fewest bits per key at the same FPR and so saves the most reads per MiB.\n\n");
    out.push_str("Absent keys: without a filter every table whose key range covers the key is read; with one, a block is read only on a false positive, so reads per absent lookup approach tables × FPR. With the cache at half the filters' size, LRU meets a cyclic access pattern (every lookup asks every table) and reloads filters from disk on most lookups: size the shared cache for the filters it must hold.\n");
    let path = bloomlab_uses::write_result("lsm_read_path.md", &out)?;
    println!("{out}\nwritten to {}", path.display());
    Ok(())
}
