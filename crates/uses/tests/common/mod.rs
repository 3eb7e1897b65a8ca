//! What the scenario tests share.

use bloomlab_uses::lsm::LsmConfig;
use tempfile::TempDir;

/// A fresh directory for the table files, and an LSM scenario whose filters target 1 %:
/// `tables` tables of `keys_per_table` keys, `lookups` lookups of present keys and as many of
/// absent ones, a filter cache of `cache_fraction` of all filters' bytes, seed `seed`.
pub fn lsm_at_one_percent(
    tables: usize,
    keys_per_table: usize,
    lookups: u64,
    cache_fraction: f64,
    seed: u64,
) -> (TempDir, LsmConfig) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = LsmConfig {
        tables,
        keys_per_table,
        lookups,
        fpr: 0.01,
        cache_fraction,
        seed,
    };
    (dir, cfg)
}
