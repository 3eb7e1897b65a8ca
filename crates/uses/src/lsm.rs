//! An LSM read path (seeds 000 and 003): sorted table files, each with its filter stored
//! inside, all filters loaded through **one** shared, bounded cache, and point lookups that
//! count the data-block reads the filters save.
//!
//! # Table file layout (little-endian)
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `b"SST1"` |
//! | 4 | 4 | version = 1 |
//! | 8 | 8 | entries |
//! | 16 | 8 | filter length in bytes (0 = no filter) |
//! | 24 | 8 | data blocks |
//! | 32 | … | the filter, in its own checked byte format |
//! | … | … | data blocks: up to [`BLOCK_ENTRIES`] sorted `(key: u64, value: u64)` pairs each |
//! | … | 8 × blocks | fence index: the first key of every block |
//!
//! Opening a table reads its header and fence index (kept in memory, like an index block).
//! A lookup asks the table's filter (from the shared cache, loading it from the file on a
//! miss) and reads one data block only when the filter says "maybe".
//!
//! A blocked filter is queried **in place**: the cache keeps the filter's bytes exactly as
//! they were read from the table file, validated once on load
//! ([`BlockedFilterBytes`]), and every lookup answers
//! through a [`BlockedBloomFilterView`](bloomlab_blocked::BlockedBloomFilterView) of them —
//! no decoding into a second copy, as RocksDB's block cache keeps filter blocks. Other
//! variants are decoded into their owned form on load.
//!
//! A table is written once and never changes, so its filter can be static: RocksDB uses
//! Ribbon filters for its large levels. [`FilterChoice::Ribbon`] builds one per table from the
//! table's whole key set; [`LsmReport::reads_saved_per_mib`] compares the choices by the block
//! reads a filter saves per MiB of filter memory.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bloomlab_blocked::{BlockedBloomFilter, BlockedFilterBytes};
use bloomlab_classic::BloomFilter;
use bloomlab_core::Error;
use bloomlab_cuckoo::CuckooFilter;
use bloomlab_ribbon::RibbonFilter;
use lru::LruCache;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::any::AnyFilter;

/// Entries per data block: 256 × 16 bytes = one 4 KiB block.
pub const BLOCK_ENTRIES: usize = 256;
const MAGIC: [u8; 4] = *b"SST1";
const HEADER: u64 = 32;

/// Which filter each table carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FilterChoice {
    /// No filter: every table whose key range covers the key is read.
    NoFilter,
    /// A classic Bloom filter.
    Classic,
    /// A blocked (512-bit, one cache line per lookup) Bloom filter.
    Blocked,
    /// A cuckoo filter.
    Cuckoo,
    /// A Ribbon filter, built once from the table's whole key set.
    Ribbon,
}

impl FilterChoice {
    /// Every choice this build offers.
    pub const ALL: &'static [FilterChoice] = &[
        FilterChoice::NoFilter,
        FilterChoice::Classic,
        FilterChoice::Blocked,
        FilterChoice::Cuckoo,
        FilterChoice::Ribbon,
    ];

    /// Name for tables and reports.
    pub fn name(self) -> &'static str {
        match self {
            FilterChoice::NoFilter => "none",
            FilterChoice::Classic => "classic",
            FilterChoice::Blocked => "blocked",
            FilterChoice::Cuckoo => "cuckoo",
            FilterChoice::Ribbon => "ribbon",
        }
    }

    /// Build the serialized filter for a table's keys at target FPR `p`.
    pub fn build(self, keys: &[u64], p: f64) -> Result<Option<Vec<u8>>, Error> {
        let n = keys.len() as u64;
        Ok(match self {
            FilterChoice::NoFilter => None,
            FilterChoice::Classic => {
                let mut f = BloomFilter::with_fpr(n, p)?;
                f.extend(keys.iter());
                Some(f.to_bytes())
            }
            FilterChoice::Blocked => {
                let mut f = BlockedBloomFilter::with_fpr(n, p)?;
                f.extend(keys.iter());
                Some(f.to_bytes())
            }
            FilterChoice::Cuckoo => {
                let mut f = CuckooFilter::with_fpr(n, p)?;
                for k in keys {
                    f.insert(k)?;
                }
                Some(f.to_bytes())
            }
            FilterChoice::Ribbon => Some(RibbonFilter::build(keys, p)?.to_bytes()),
        })
    }
}

/// Write a table of `entries` (sorted by key, keys distinct) with an optional filter.
pub fn write_table(path: &Path, entries: &[(u64, u64)], filter: Option<&[u8]>) -> io::Result<()> {
    debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
    let blocks = entries.len().div_ceil(BLOCK_ENTRIES) as u64;
    let filter = filter.unwrap_or(&[]);
    let mut w = BufWriter::new(File::create(path)?);
    w.write_all(&MAGIC)?;
    w.write_all(&1u32.to_le_bytes())?;
    w.write_all(&(entries.len() as u64).to_le_bytes())?;
    w.write_all(&(filter.len() as u64).to_le_bytes())?;
    w.write_all(&blocks.to_le_bytes())?;
    w.write_all(filter)?;
    for (k, v) in entries {
        w.write_all(&k.to_le_bytes())?;
        w.write_all(&v.to_le_bytes())?;
    }
    for chunk in entries.chunks(BLOCK_ENTRIES) {
        w.write_all(&chunk[0].0.to_le_bytes())?;
    }
    w.flush()
}

fn bad(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// An open table: header and fence index in memory, data and filter on disk.
#[derive(Debug)]
pub struct Table {
    file: File,
    path: PathBuf,
    entries: u64,
    filter_len: u64,
    fences: Vec<u64>,
    last_key: u64,
}

impl Table {
    /// Open a table file, reading its header and fence index.
    pub fn open(path: &Path) -> io::Result<Table> {
        let mut file = File::open(path)?;
        let mut h = [0u8; HEADER as usize];
        file.read_exact(&mut h)?;
        let u64_at = |o: usize| u64::from_le_bytes(h[o..o + 8].try_into().expect("8 bytes"));
        if h[..4] != MAGIC || h[4..8] != 1u32.to_le_bytes() {
            return Err(bad(format!("{}: not an SST1 v1 table", path.display())));
        }
        let (entries, filter_len, blocks) = (u64_at(8), u64_at(16), u64_at(24));
        if blocks != entries.div_ceil(BLOCK_ENTRIES as u64) {
            return Err(bad("block count does not match entries"));
        }
        let data_end = HEADER
            .checked_add(filter_len)
            .and_then(|x| x.checked_add(entries.checked_mul(16)?))
            .ok_or_else(|| bad("sizes overflow"))?;
        let file_len = file.metadata()?.len();
        if file_len != data_end + 8 * blocks {
            return Err(bad("file length does not match its header"));
        }
        file.seek(SeekFrom::Start(data_end))?;
        let mut raw = vec![0u8; 8 * blocks as usize];
        file.read_exact(&mut raw)?;
        let fences: Vec<u64> = raw
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let last_key = if entries == 0 {
            0
        } else {
            let mut e = [0u8; 8];
            file.seek(SeekFrom::Start(data_end - 16))?;
            file.read_exact(&mut e)?;
            u64::from_le_bytes(e)
        };
        Ok(Table {
            file,
            path: path.to_path_buf(),
            entries,
            filter_len,
            fences,
            last_key,
        })
    }

    /// Read the serialized filter stored in the file.
    pub fn read_filter_bytes(&self) -> io::Result<Option<Vec<u8>>> {
        if self.filter_len == 0 {
            return Ok(None);
        }
        let mut f = &self.file;
        f.seek(SeekFrom::Start(HEADER))?;
        let mut b = vec![0u8; self.filter_len as usize];
        f.read_exact(&mut b)?;
        Ok(Some(b))
    }

    /// Whether `key` is inside this table's key range (the fence check that needs no I/O).
    pub fn covers(&self, key: u64) -> bool {
        self.entries > 0 && key >= self.fences[0] && key <= self.last_key
    }

    /// Read the one data block that could hold `key` and search it. One file read.
    pub fn read_and_search(&self, key: u64) -> io::Result<Option<u64>> {
        let block = self.fences.partition_point(|&f| f <= key).saturating_sub(1);
        let first = block * BLOCK_ENTRIES;
        let n = (self.entries as usize - first).min(BLOCK_ENTRIES);
        let mut buf = vec![0u8; n * 16];
        let mut f = &self.file;
        f.seek(SeekFrom::Start(
            HEADER + self.filter_len + 16 * first as u64,
        ))?;
        f.read_exact(&mut buf)?;
        let pairs: Vec<(u64, u64)> = buf
            .chunks_exact(16)
            .map(|c| {
                (
                    u64::from_le_bytes(c[..8].try_into().expect("8 bytes")),
                    u64::from_le_bytes(c[8..].try_into().expect("8 bytes")),
                )
            })
            .collect();
        Ok(pairs
            .binary_search_by_key(&key, |p| p.0)
            .ok()
            .map(|i| pairs[i].1))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Counters of one store's work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoStats {
    /// Point lookups served.
    pub lookups: u64,
    /// Data blocks read from table files.
    pub data_reads: u64,
    /// Filters read from table files into the cache (cache misses).
    pub filter_loads: u64,
    /// Filter requests answered from the cache.
    pub filter_cache_hits: u64,
    /// Tables whose key range covered a looked-up key (the block reads without filters).
    pub covering_tables: u64,
}

/// A filter as the cache holds it.
#[derive(Debug)]
pub enum CachedFilter {
    /// A blocked filter's bytes as read from the table file, validated once and queried in
    /// place through a view.
    InPlace(BlockedFilterBytes<Vec<u8>>),
    /// Any other filter, decoded.
    Decoded(AnyFilter),
}

impl CachedFilter {
    /// Decode `bytes` read from a table file: blocked filters stay as bytes.
    pub fn load(bytes: Vec<u8>) -> Result<Self, Error> {
        let h = crate::any::header(&bytes)?;
        if matches!(h.layout, crate::any::Layout::Envelope(_))
            && h.variant == bloomlab_core::Variant::Blocked
        {
            return Ok(CachedFilter::InPlace(BlockedFilterBytes::new(bytes)?));
        }
        Ok(CachedFilter::Decoded(AnyFilter::decode(&bytes)?.0))
    }

    /// `false`: `key` is definitely not in the table.
    pub fn might_contain(&self, key: u64) -> bool {
        match self {
            CachedFilter::InPlace(b) => b.view().might_contain(&key),
            CachedFilter::Decoded(f) => f.as_filter().might_contain(&key),
        }
    }
}

/// One cache for the filters of every table, bounded in bytes, least recently used first out.
#[derive(Debug)]
pub struct FilterCache {
    lru: LruCache<usize, (Arc<CachedFilter>, usize)>,
    bytes: usize,
    budget: usize,
}

impl FilterCache {
    /// A cache holding at most `budget` bytes of serialized filters (one filter larger than
    /// the budget is still admitted alone).
    pub fn new(budget: usize) -> Self {
        FilterCache {
            lru: LruCache::unbounded(),
            bytes: 0,
            budget,
        }
    }

    fn get_or_load(
        &mut self,
        table_id: usize,
        table: &Table,
        stats: &mut IoStats,
    ) -> io::Result<Option<Arc<CachedFilter>>> {
        if let Some((f, _)) = self.lru.get(&table_id) {
            stats.filter_cache_hits += 1;
            return Ok(Some(f.clone()));
        }
        let Some(bytes) = table.read_filter_bytes()? else {
            return Ok(None);
        };
        stats.filter_loads += 1;
        let len = bytes.len();
        let f = Arc::new(CachedFilter::load(bytes).map_err(|e| bad(e.to_string()))?);
        self.bytes += len;
        self.lru.put(table_id, (f.clone(), len));
        while self.bytes > self.budget && self.lru.len() > 1 {
            if let Some((_, (_, size))) = self.lru.pop_lru() {
                self.bytes -= size;
            }
        }
        Ok(Some(f))
    }

    /// Bytes currently cached.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

/// Tables newest-last plus the shared filter cache.
#[derive(Debug)]
pub struct Store {
    tables: Vec<Table>,
    cache: FilterCache,
    /// Work done so far.
    pub stats: IoStats,
}

impl Store {
    /// Open tables (oldest first) sharing one filter cache of `cache_budget` bytes.
    pub fn open(paths: &[PathBuf], cache_budget: usize) -> io::Result<Store> {
        Ok(Store {
            tables: paths
                .iter()
                .map(|p| Table::open(p))
                .collect::<io::Result<_>>()?,
            cache: FilterCache::new(cache_budget),
            stats: IoStats::default(),
        })
    }

    /// Point lookup, newest table first; stops at the first table holding the key.
    pub fn get(&mut self, key: u64) -> io::Result<Option<u64>> {
        self.stats.lookups += 1;
        for id in (0..self.tables.len()).rev() {
            let table = &self.tables[id];
            if !table.covers(key) {
                continue;
            }
            self.stats.covering_tables += 1;
            if let Some(f) = self.cache.get_or_load(id, table, &mut self.stats)?
                && !f.might_contain(key)
            {
                continue; // "definitely not": the block read is skipped
            }
            self.stats.data_reads += 1;
            if let Some(v) = table.read_and_search(key)? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    }
}

/// Settings of one read-path experiment.
#[derive(Clone, Copy, Debug)]
pub struct LsmConfig {
    /// Number of table files.
    pub tables: usize,
    /// Keys per table.
    pub keys_per_table: usize,
    /// Lookups of present keys and, separately, of absent keys.
    pub lookups: u64,
    /// Target FPR of every filter.
    pub fpr: f64,
    /// Shared filter cache budget as a fraction of all filters' bytes.
    pub cache_fraction: f64,
    /// Seed of keys and lookups.
    pub seed: u64,
}

/// What one experiment measured.
#[derive(Clone, Debug, PartialEq)]
pub struct LsmReport {
    /// The filter choice.
    pub filter: &'static str,
    /// Tables.
    pub tables: usize,
    /// Serialized filter bytes per key.
    pub filter_bits_per_key: f64,
    /// Data-block reads per lookup of an absent key.
    pub reads_per_absent: f64,
    /// What theory expects for absent keys: the sum of the tables' FPRs (tables × FPR).
    pub expected_reads_per_absent: f64,
    /// Data-block reads per lookup of a present key (1 = only the holder's block).
    pub reads_per_present: f64,
    /// Filter loads from disk per lookup (shared cache misses).
    pub filter_loads_per_lookup: f64,
    /// MiB of serialized filters over all tables.
    pub filter_mib: f64,
    /// Block reads the filters saved per absent lookup (covering tables minus reads), per MiB
    /// of filter: what the filter memory buys. `None` without filters.
    pub reads_saved_per_mib: Option<f64>,
    /// All present keys were found with their values.
    pub all_present_found: bool,
}

/// Write `cfg.tables` table files into `dir` with `choice` filters and measure lookups.
pub fn run(dir: &Path, choice: FilterChoice, cfg: &LsmConfig) -> Result<LsmReport, Error> {
    let io = |e: io::Error| Error::invalid("io", e.to_string());
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut all = std::collections::HashSet::new();
    let mut tables_keys = Vec::new();
    let mut paths = Vec::new();
    let mut filter_bytes = 0usize;
    let mut expected = 0.0;
    for t in 0..cfg.tables {
        let mut keys: Vec<u64> = Vec::with_capacity(cfg.keys_per_table);
        while keys.len() < cfg.keys_per_table {
            let k = rng.random::<u64>();
            if all.insert(k) {
                keys.push(k);
            }
        }
        keys.sort_unstable();
        let entries: Vec<(u64, u64)> = keys.iter().map(|&k| (k, value_of(k))).collect();
        let filter = choice.build(&keys, cfg.fpr)?;
        if let Some(b) = &filter {
            filter_bytes += b.len();
            let (f, _) = AnyFilter::decode(b)?;
            expected += f.as_filter().expected_fpr();
        } else {
            expected += 1.0;
        }
        let path = dir.join(format!("table-{t:03}.sst"));
        write_table(&path, &entries, filter.as_deref()).map_err(io)?;
        paths.push(path);
        tables_keys.push(keys);
    }
    let budget = (filter_bytes as f64 * cfg.cache_fraction) as usize;
    let mut store = Store::open(&paths, budget).map_err(io)?;

    let mut all_found = true;
    for _ in 0..cfg.lookups {
        let t = rng.random_range(0..cfg.tables);
        let k = tables_keys[t][rng.random_range(0..cfg.keys_per_table)];
        all_found &= store.get(k).map_err(io)? == Some(value_of(k));
    }
    let present = store.stats;
    let mut absent_lookups = 0;
    while absent_lookups < cfg.lookups {
        let k = rng.random::<u64>();
        if all.contains(&k) {
            continue;
        }
        absent_lookups += 1;
        if store.get(k).map_err(io)?.is_some() {
            all_found = false;
        }
    }
    let total = store.stats;
    let n = cfg.lookups as f64;
    let filter_mib = filter_bytes as f64 / (1u64 << 20) as f64;
    let saved = (total.covering_tables - present.covering_tables) as f64
        - (total.data_reads - present.data_reads) as f64;
    Ok(LsmReport {
        filter: choice.name(),
        tables: cfg.tables,
        filter_bits_per_key: filter_bytes as f64 * 8.0 / (cfg.tables * cfg.keys_per_table) as f64,
        reads_per_absent: (total.data_reads - present.data_reads) as f64 / n,
        expected_reads_per_absent: expected,
        reads_per_present: present.data_reads as f64 / n,
        filter_loads_per_lookup: total.filter_loads as f64 / (2.0 * n),
        filter_mib,
        reads_saved_per_mib: (filter_bytes > 0).then(|| saved / n / filter_mib),
        all_present_found: all_found,
    })
}

fn value_of(k: u64) -> u64 {
    k.rotate_left(17) ^ 0x5555_5555_5555_5555
}

/// Render reports as a Markdown table.
pub fn markdown(reports: &[LsmReport]) -> String {
    crate::table::markdown_table(
        [
            "filter",
            "filter bits/key",
            "filter MiB",
            "block reads per absent lookup",
            "expected (Σ FPR)",
            "block reads saved per absent lookup per MiB",
            "block reads per present lookup",
            "filter loads per lookup",
            "all found",
        ],
        reports.iter().map(|r| {
            [
                r.filter.to_string(),
                format!("{:.2}", r.filter_bits_per_key),
                format!("{:.3}", r.filter_mib),
                format!("{:.4}", r.reads_per_absent),
                format!("{:.4}", r.expected_reads_per_absent),
                r.reads_saved_per_mib
                    .map_or_else(|| "–".into(), |v| format!("{v:.3}")),
                format!("{:.4}", r.reads_per_present),
                format!("{:.4}", r.filter_loads_per_lookup),
                r.all_present_found.to_string(),
            ]
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per-table Ribbon filters: every present key found, absent lookups read a block only on
    /// a false positive (5σ of the Σ FPR count), and the filters are the smallest of the
    /// choices, so they save the most block reads per MiB.
    #[test]
    fn ribbon_tables_save_the_most_reads_per_mib() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = LsmConfig {
            tables: 4,
            keys_per_table: 20_000,
            lookups: 20_000,
            fpr: 0.01,
            cache_fraction: 1.0,
            seed: 5,
        };
        let ribbon = run(dir.path(), FilterChoice::Ribbon, &cfg).unwrap();
        assert!(ribbon.all_present_found, "{ribbon:?}");
        let n = cfg.lookups as f64;
        let (got, want) = (
            ribbon.reads_per_absent * n,
            ribbon.expected_reads_per_absent * n,
        );
        assert!((got - want).abs() <= 5.0 * want.sqrt(), "{ribbon:?}");
        assert!(ribbon.filter_bits_per_key < 8.0, "{ribbon:?}");
        for other in [FilterChoice::Blocked, FilterChoice::Cuckoo] {
            let r = run(dir.path(), other, &cfg).unwrap();
            assert!(
                ribbon.reads_saved_per_mib.unwrap() > r.reads_saved_per_mib.unwrap(),
                "{ribbon:?} {r:?}"
            );
        }
    }
}

#[cfg(test)]
mod view_tests {
    use super::*;

    /// A blocked filter is cached as the bytes of the table file and answers through the view
    /// exactly as the decoded filter does; damaged filter bytes are refused on load.
    #[test]
    fn blocked_filters_answer_in_place_from_the_table_file() {
        let dir = tempfile::tempdir().unwrap();
        let keys: Vec<u64> = (0..5_000u64).map(|i| i * 7 + 1).collect();
        let entries: Vec<(u64, u64)> = keys.iter().map(|&k| (k, value_of(k))).collect();
        let filter = FilterChoice::Blocked.build(&keys, 0.01).unwrap().unwrap();
        let path = dir.path().join("t.sst");
        write_table(&path, &entries, Some(&filter)).unwrap();
        let table = Table::open(&path).unwrap();
        let bytes = table.read_filter_bytes().unwrap().unwrap();
        let cached = CachedFilter::load(bytes.clone()).unwrap();
        assert!(matches!(cached, CachedFilter::InPlace(_)));
        let owned = BlockedBloomFilter::from_bytes(&bytes).unwrap();
        for k in 0..40_000u64 {
            assert_eq!(cached.might_contain(k), owned.might_contain(&k), "{k}");
        }
        assert!(keys.iter().all(|&k| cached.might_contain(k)));
        let mut damaged = bytes;
        damaged[40] ^= 1;
        assert!(CachedFilter::load(damaged).is_err());
        let classic = FilterChoice::Classic.build(&keys, 0.01).unwrap().unwrap();
        assert!(matches!(
            CachedFilter::load(classic).unwrap(),
            CachedFilter::Decoded(_)
        ));
        let mut store = Store::open(&[path], 1 << 20).unwrap();
        assert!(
            keys.iter()
                .all(|&k| store.get(k).unwrap() == Some(value_of(k)))
        );
        assert_eq!(store.stats.filter_loads, 1);
    }
}
