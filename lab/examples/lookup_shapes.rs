//! Where the blocked filter's lookup loses time to sbbf-rs's, told apart by layout and by loop
//! shape. Four lookups over the same keys at a 1 % target, each hashing the key's bytes with
//! XXH3-64 (the blocked filter with its seeded XXH3-64):
//!
//! - `blocked`: `BlockedBloomFilter::might_contain` (the filter, its handle and its hash);
//! - `raw512`: the same 512-bit layout with no filter around it — a bare table
//!   ([`zeroed_lines`]) and the inline kernel ([`InlineKernel`]), the block by fastrange of the
//!   hash's high half, as the filter places it;
//! - `split256`: our split-block kernel ([`SplitBlockKernel`], the same inline-assembly style
//!   as `raw512`) on a bare table of 256-bit blocks sized as sbbf-rs's: the split-block layout,
//!   whose probes need no permute of the loaded block;
//! - `sbbf-rs`: sbbf-rs-safe's `contains_hash` (its AVX2 kernel, a call per key).
//!
//! Each in two loop shapes: `fixed`, the key an 8-byte array (the hash's length known to the
//! compiler), and `slice`, the key a slice of a byte buffer whose length the compiler does not
//! know (each lookup dispatches on the length, as with the harness's byte keys). Passes of
//! 16 384 lookups, half members, every entry and shape once per group in a rotating order; a
//! figure is the median over the groups of the ratio to sbbf-rs in the same shape, with its
//! interquartile range.
//!
//! ```sh
//! cargo run --release -p bloomlab-lab --example lookup_shapes -- [n ...]   # default 10000 100000
//! ```

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_conformance::stream::{half_members, splitmix64 as splitmix};
use bloomlab_core::simd::{
    InlineKernel, LocalKernel, PARQUET_SALTS, SplitBlockKernel, zeroed_lines,
};
use std::hint::black_box;
use std::time::Instant;
use xxhash_rust::xxh3::xxh3_64;

const CHUNK: usize = 16_384;
const GROUPS: usize = 40;
const ENTRIES: [&str; 4] = ["blocked", "raw512", "split256", "sbbf-rs"];
const SHAPES: [&str; 2] = ["fixed", "slice"];

/// Block `⌊(h >> 32) · blocks / 2^32⌋`: fastrange of the high half.
fn place(h: u64, blocks: usize) -> usize {
    (((h >> 32) * blocks as u64) >> 32) as usize
}

struct Tables {
    blocked: BlockedBloomFilter,
    raw: bloomlab_core::simd::Lines,
    fast: InlineKernel,
    k: u32,
    split: Vec<[u32; 8]>,
    split_kernel: SplitBlockKernel,
    sbbf: sbbf_rs_safe::Filter,
}

impl Tables {
    fn build(keys: &[u64]) -> Tables {
        let n = keys.len() as u64;
        let mut blocked = BlockedBloomFilter::with_fpr(n, 0.01).expect("sized");
        let (blocks, k) = (blocked.blocks() as usize, blocked.hashes());
        let kernel = LocalKernel::detect(k);
        let mut raw = zeroed_lines(blocks).expect("memory");
        let split_blocks = bloomlab_sbbf::math::sbbf_blocks(
            n,
            bloomlab_sbbf::math::sbbf_bits_per_item(0.01).expect("p"),
        )
        .expect("size") as usize;
        let mut split = vec![[0u32; 8]; split_blocks];
        let mut sbbf = sbbf_rs_safe::Filter::new(split_blocks * 256, 1);
        for key in keys {
            blocked.insert(key);
            let h = xxh3_64(&key.to_le_bytes());
            kernel.insert(&mut raw[place(h, blocks)].0, h as u32, k);
            bloomlab_core::simd::split_block_insert_scalar(
                &mut split[place(h, split_blocks)],
                h as u32,
                &PARQUET_SALTS,
            );
            sbbf.insert_hash(h);
        }
        Tables {
            blocked,
            raw,
            fast: InlineKernel::of(kernel),
            k,
            split,
            split_kernel: SplitBlockKernel::detect(),
            sbbf,
        }
    }

    /// Entry `e`'s answer for `key` (inlined into each pass's loop).
    #[inline(always)]
    fn contains(&self, e: usize, key: &[u8]) -> bool {
        match e {
            0 => self.blocked.might_contain(key),
            1 => {
                let h = xxh3_64(key);
                let block = &self.raw[place(h, self.raw.len())].0;
                self.fast
                    .contains(block, h as u32)
                    .unwrap_or_else(|| bloomlab_core::simd::local_contains(block, h as u32, self.k))
            }
            2 => {
                let h = xxh3_64(key);
                let block = &self.split[place(h, self.split.len())];
                self.split_kernel.contains(block, h as u32, &PARQUET_SALTS)
            }
            _ => self.sbbf.contains_hash(xxh3_64(key)),
        }
    }
}

/// One timed pass of entry `E` in one shape over `q`: hits, ns.
fn pass<const E: usize>(t: &Tables, shape: usize, q: &[u64], bytes: &[u8]) -> (u64, f64) {
    let start = Instant::now();
    let hits = if shape == 0 {
        q.iter()
            .map(|key| u64::from(t.contains(E, &black_box(*key).to_le_bytes())))
            .sum::<u64>()
    } else {
        let stride = black_box(8usize);
        bytes
            .chunks_exact(stride)
            .map(|key| u64::from(t.contains(E, black_box(key))))
            .sum::<u64>()
    };
    (black_box(hits), start.elapsed().as_nanos() as f64)
}

fn run(t: &Tables, e: usize, shape: usize, q: &[u64], bytes: &[u8]) -> (u64, f64) {
    match e {
        0 => pass::<0>(t, shape, q, bytes),
        1 => pass::<1>(t, shape, q, bytes),
        2 => pass::<2>(t, shape, q, bytes),
        _ => pass::<3>(t, shape, q, bytes),
    }
}

fn quartiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    (q(0.5), q(0.25), q(0.75))
}

fn main() {
    let sizes: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10_000, 100_000]
    } else {
        sizes
    };
    println!(
        "blocked inline kernel: {}; split-block kernel: {}",
        InlineKernel::of(LocalKernel::detect(6)).name(),
        SplitBlockKernel::detect().name()
    );
    for n in sizes {
        let mut seed = n ^ 0x5eed;
        let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut seed)).collect();
        let t = Tables::build(&keys);
        let cells = ENTRIES.len() * SHAPES.len();
        let queries = half_members(&keys, CHUNK * cells * GROUPS, &mut seed);
        let bytes: Vec<u8> = queries.iter().flat_map(|k| k.to_le_bytes()).collect();
        // Every entry finds every member in both shapes.
        for (e, entry) in ENTRIES.iter().enumerate() {
            for (shape, shape_name) in SHAPES.iter().enumerate() {
                let members: Vec<u64> = keys.iter().take(CHUNK).copied().collect();
                let mb: Vec<u8> = members.iter().flat_map(|k| k.to_le_bytes()).collect();
                let hits = run(&t, e, shape, &members, &mb).0;
                assert_eq!(hits, members.len() as u64, "{entry} {shape_name}");
            }
        }
        let mut ratios = vec![Vec::new(); cells];
        for g in 0..GROUPS {
            let mut ns = vec![0.0; cells];
            for slot in 0..cells {
                // A rotating order, each cell on a chunk of its own.
                let cell = (slot + g) % cells;
                let at = (g * cells + slot) * CHUNK;
                let (e, shape) = (cell / SHAPES.len(), cell % SHAPES.len());
                ns[cell] = run(
                    &t,
                    e,
                    shape,
                    &queries[at..at + CHUNK],
                    &bytes[8 * at..8 * (at + CHUNK)],
                )
                .1;
            }
            for (cell, r) in ratios.iter_mut().enumerate() {
                let base = (ENTRIES.len() - 1) * SHAPES.len() + cell % SHAPES.len();
                r.push(ns[cell] / ns[base]);
            }
        }
        println!(
            "n = {n}: time ÷ sbbf-rs's in the same loop shape, median [IQR] of {GROUPS} groups"
        );
        for (cell, r) in ratios.into_iter().enumerate() {
            let (m, lo, hi) = quartiles(r);
            println!(
                "  {:9} {:5}  {m:.3} [{lo:.3}–{hi:.3}]",
                ENTRIES[cell / SHAPES.len()],
                SHAPES[cell % SHAPES.len()]
            );
        }
    }
}
