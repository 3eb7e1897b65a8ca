//! Many small filters out of cache (the harness's many-filters case: one 10^4-key filter per
//! table file, all of them together larger than the last-level cache, each query to a random
//! filter), taken apart by what stands around the blocked kernel: the handle's size, the
//! kernel, and where the tables lie. Every entry answers the same queries, each from its own
//! tables (so no entry finds lines another brought in), each entry's tables built in a loop
//! of their own (so they lie together in memory, as the harness's do):
//!
//! - `sbbf-rs`: a `Vec<sbbf_rs_safe::Filter>` sized to the same target (the split-block
//!   formula, as the harness sizes it), xxh3-64 of the key's bytes, `contains_hash`;
//! - `blocked`: a `Vec<BlockedBloomFilter>`, `might_contain` (the harness's entry);
//! - `h32-avx512`: a 32-byte handle per filter (the table as a slice, the `InlineKernel`, and
//!   a word standing for the filter's pointer to the rest), the block by fastrange of
//!   xxh3-64's high half, the inline kernel on its low half — the blocked filter's lookup
//!   without the filter around it;
//! - `h64-avx512`: the same handle padded to 64 bytes (the handle's size alone);
//! - `h32-avx2`: the 32-byte handle with the AVX2 inline kernel;
//! - `h32-vec`: `h32-avx512` with each table a `Vec<Line>` (the allocator's 64-byte aligned
//!   path, as sbbf-rs-safe allocates) instead of `zeroed_lines`'s `calloc`;
//! - `h32-called`: `h32-avx512` with the block's placement and the kernel behind a call per
//!   lookup (`#[inline(never)]`, as sbbf-rs-safe calls its kernel), the hash in the loop;
//! - `h32-scalar`: the 32-byte handle with the portable kernel unrolled for `k`
//!   (`local_contains_unrolled`: no vector register, so no `vzeroupper`).
//!
//! Chunks of 16 384 queries, one per entry in order and then in reverse order; a figure is
//! the median over the groups of the ratio to `sbbf-rs`, with its interquartile range. Two
//! loop shapes: `lab` (each key a `u64`, its 8 bytes a fixed-length array: the hash's length
//! is known to the compiler) and `harness` (the harness's: the filter indexes in one array,
//! the keys' bytes in another, each key a slice through `black_box`, each answer stored).
//!
//! ```sh
//! cargo run --release -p bloomlab-lab --example many_filters_handles -- [MiB per entry, default 64] [groups, default 40] [lab|harness, default lab]
//! ```

// The timed loops index several arrays by one counter, as the harness's loop does.
#![allow(clippy::needless_range_loop)]

use std::hint::black_box;
use std::time::Instant;

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_core::Filter;
use bloomlab_core::simd::{self, InlineKernel, Line, LocalKernel, zeroed_lines};
use xxhash_rust::xxh3::xxh3_64;

const KEYS_PER: u64 = 10_000;
const TARGET: f64 = 0.01;
const CHUNK: usize = 16_384;

/// Key `i` of filter `f`: a bijective mix of `(f, i)`, so members and non-members (indexes at
/// or past `KEYS_PER`) are distinct.
fn key(f: u64, i: u64) -> u64 {
    let mut z = ((f << 32) | i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn quartiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    (q(0.5), q(0.25), q(0.75))
}

/// The block of a hash among `blocks`: fastrange of the high half, as the blocked filter's
/// current layout places it.
fn place(h: u64, blocks: usize) -> usize {
    (((h >> 32) * blocks as u64) >> 32) as usize
}

/// A 32-byte filter handle: the table, the inline kernel and a word standing for the
/// pointer to the rest (the blocked filter's layout).
#[derive(Clone, Copy)]
#[repr(C)]
struct H32 {
    lines: &'static [Line],
    fast: InlineKernel,
    _rest: usize,
}

/// [`H32`] padded to 64 bytes.
#[derive(Clone, Copy)]
#[repr(C)]
struct H64 {
    h: H32,
    _pad: [u64; 4],
}

const _: () = assert!(size_of::<H32>() == 32 && size_of::<H64>() == 64);

/// The block and inline kernel of [`H32::contains_bytes`] behind a call (as sbbf-rs's
/// kernel is: an out-of-line function per lookup), the hash in the caller.
#[inline(never)]
fn called_kernel(lines: &[Line], fast: InlineKernel, h: u64) -> bool {
    let block = &lines[place(h, lines.len())].0;
    fast.contains(block, h as u32).unwrap_or(false)
}

impl H32 {
    #[inline(always)]
    fn contains(&self, x: u64) -> bool {
        self.contains_bytes(&x.to_le_bytes())
    }

    #[inline(always)]
    fn contains_bytes(&self, key: &[u8]) -> bool {
        let h = xxh3_64(key);
        let block = &self.lines[place(h, self.lines.len())].0;
        self.fast.contains(block, h as u32).unwrap_or(false)
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mib: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(64);
    let groups: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(40);
    let shape = args.next().unwrap_or_else(|| "lab".into());
    let probe = BlockedBloomFilter::with_fpr(KEYS_PER, TARGET).expect("sized");
    let (blocks, k) = (probe.blocks() as usize, probe.hashes());
    let k_probes = k;
    let sbbf_bits = bloomlab_sbbf::math::sbbf_blocks(
        KEYS_PER,
        bloomlab_sbbf::math::sbbf_bits_per_item(TARGET).expect("p"),
    )
    .expect("size")
        * 256;
    let count = (mib << 20) / (blocks * 64);
    let k512 = LocalKernel::detect(k);
    let k2 = LocalKernel::avx2(k);
    println!(
        "{count} filters of {KEYS_PER} keys at {} % per entry ({mib} MiB of blocked tables); {blocks} blocks, k = {k}; inline kernels {} and {}; sbbf-rs: {} bytes; handles: BlockedBloomFilter {} B, sbbf_rs_safe::Filter {} B",
        TARGET * 100.0,
        InlineKernel::of(k512).name(),
        InlineKernel::of(k2).name(),
        sbbf_bits / 8,
        size_of::<BlockedBloomFilter>(),
        size_of::<sbbf_rs_safe::Filter>(),
    );
    assert!(
        simd::local_contains_unrolled(&[u64::MAX; 8], 1, k).is_some(),
        "an unrolled arm for k = {k}"
    );
    // One table set per handle entry, each built by the kernel's insert (the same bits).
    let tables = |kernel: LocalKernel| -> Vec<&'static [Line]> {
        (0..count as u64)
            .map(|f| {
                let mut t = zeroed_lines(blocks).expect("memory");
                for i in 0..KEYS_PER {
                    let h = xxh3_64(&key(f, i).to_le_bytes());
                    kernel.insert(&mut t[place(h, blocks)].0, h as u32, k);
                }
                let t: &'static [Line] = Box::leak(Box::new(t));
                t
            })
            .collect()
    };
    // The same, each table a `Vec<Line>`'s allocation (64-byte aligned: the allocator's
    // aligned path, as sbbf-rs-safe's buffers) instead of `zeroed_lines`'s `calloc`.
    let tables_vec = |kernel: LocalKernel| -> Vec<&'static [Line]> {
        (0..count as u64)
            .map(|f| {
                let mut t = vec![Line::default(); blocks];
                for i in 0..KEYS_PER {
                    let h = xxh3_64(&key(f, i).to_le_bytes());
                    kernel.insert(&mut t[place(h, blocks)].0, h as u32, k);
                }
                let t: &'static [Line] = Vec::leak(t);
                t
            })
            .collect()
    };
    let mut ours = Vec::with_capacity(count);
    let mut sbbf = Vec::with_capacity(count);
    // Each entry's filters built in a loop of their own, so that each entry's tables lie
    // together in memory (as the harness builds them), not interleaved with another entry's.
    for f in 0..count as u64 {
        let mut b = BlockedBloomFilter::with_fpr(KEYS_PER, TARGET).expect("sized");
        for i in 0..KEYS_PER {
            b.insert(&key(f, i));
        }
        ours.push(b);
    }
    for f in 0..count as u64 {
        let mut s = sbbf_rs_safe::Filter::new(sbbf_bits as usize, 1);
        for i in 0..KEYS_PER {
            s.insert_hash(xxh3_64(&key(f, i).to_le_bytes()));
        }
        sbbf.push(s);
    }
    let h32_512: Vec<H32> = tables(k512)
        .into_iter()
        .map(|lines| H32 {
            lines,
            fast: InlineKernel::of(k512),
            _rest: 0,
        })
        .collect();
    let h64_512: Vec<H64> = tables(k512)
        .into_iter()
        .map(|lines| H64 {
            h: H32 {
                lines,
                fast: InlineKernel::of(k512),
                _rest: 0,
            },
            _pad: [0; 4],
        })
        .collect();
    let h32_vec: Vec<H32> = tables_vec(k512)
        .into_iter()
        .map(|lines| H32 {
            lines,
            fast: InlineKernel::of(k512),
            _rest: 0,
        })
        .collect();
    let h32_call: Vec<H32> = tables(k512)
        .into_iter()
        .map(|lines| H32 {
            lines,
            fast: InlineKernel::of(k512),
            _rest: 0,
        })
        .collect();
    let h32_2: Vec<H32> = tables(k2)
        .into_iter()
        .map(|lines| H32 {
            lines,
            fast: InlineKernel::of(k2),
            _rest: 0,
        })
        .collect();
    let scalar: Vec<&'static [Line]> = tables(LocalKernel::portable());
    // Queries: (filter, key) pairs, half members, in random filter order.
    let mut state = 0x4D41_4E59u64;
    let mut next = || bloomlab_core::hash::splitmix64(&mut state);
    let entries = 8;
    let total = CHUNK * 2 * entries * groups;
    let queries: Vec<(u32, u64)> = (0..total)
        .map(|j| {
            let f = next() % count as u64;
            let i = if j % 2 == 0 {
                next() % KEYS_PER
            } else {
                KEYS_PER + (next() >> 34)
            };
            (f as u32, key(f, i))
        })
        .collect();
    type Run<'a> = Box<dyn Fn(&[(u32, u64)]) -> u64 + 'a>;
    let runs: Vec<(&str, Run)> = vec![
        (
            "sbbf-rs",
            Box::new(|q: &[(u32, u64)]| {
                q.iter()
                    .map(|&(f, x)| {
                        u64::from(
                            sbbf[f as usize].contains_hash(xxh3_64(&black_box(x).to_le_bytes())),
                        )
                    })
                    .sum()
            }),
        ),
        (
            "blocked",
            Box::new(|q: &[(u32, u64)]| {
                q.iter()
                    .map(|&(f, x)| u64::from(ours[f as usize].might_contain(black_box(&x))))
                    .sum()
            }),
        ),
        (
            "h32-avx512",
            Box::new(|q: &[(u32, u64)]| {
                q.iter()
                    .map(|&(f, x)| u64::from(h32_512[f as usize].contains(black_box(x))))
                    .sum()
            }),
        ),
        (
            "h64-avx512",
            Box::new(|q: &[(u32, u64)]| {
                q.iter()
                    .map(|&(f, x)| u64::from(h64_512[f as usize].h.contains(black_box(x))))
                    .sum()
            }),
        ),
        (
            "h32-avx2",
            Box::new(|q: &[(u32, u64)]| {
                q.iter()
                    .map(|&(f, x)| u64::from(h32_2[f as usize].contains(black_box(x))))
                    .sum()
            }),
        ),
        (
            "h32-vec",
            Box::new(|q: &[(u32, u64)]| {
                q.iter()
                    .map(|&(f, x)| u64::from(h32_vec[f as usize].contains(black_box(x))))
                    .sum()
            }),
        ),
        (
            "h32-called",
            Box::new(|q: &[(u32, u64)]| {
                q.iter()
                    .map(|&(f, x)| {
                        let h = &h32_call[f as usize];
                        u64::from(called_kernel(
                            h.lines,
                            h.fast,
                            xxh3_64(&black_box(x).to_le_bytes()),
                        ))
                    })
                    .sum()
            }),
        ),
        (
            "h32-scalar",
            Box::new(|q: &[(u32, u64)]| {
                q.iter()
                    .map(|&(f, x)| {
                        let h = xxh3_64(&black_box(x).to_le_bytes());
                        let t = scalar[f as usize];
                        let hit =
                            simd::local_contains_unrolled(&t[place(h, t.len())].0, h as u32, k);
                        u64::from(hit.unwrap_or(false))
                    })
                    .sum()
            }),
        ),
    ];
    assert_eq!(runs.len(), entries);
    // Every entry finds every member.
    let members: Vec<(u32, u64)> = queries.iter().step_by(2).take(CHUNK).copied().collect();
    for (name, run) in &runs {
        assert_eq!(run(&members), CHUNK as u64, "{name}: no false negative");
    }
    let mut ns = vec![vec![0.0f64; groups]; entries];
    if shape == "harness" {
        // The harness's loop shape: the filter indexes in one array, the keys' bytes in
        // another, each key passed as a slice through `black_box` (its length unknown to the
        // compiler), each answer stored.
        let which: Vec<u32> = queries.iter().map(|q| q.0).collect();
        let bytes: Vec<u8> = queries.iter().flat_map(|q| q.1.to_le_bytes()).collect();
        let stride = black_box(8usize);
        let mut answers = vec![false; CHUNK];
        macro_rules! harness_loop {
            ($base:expr, $look:expr) => {{
                let look = $look;
                let t = Instant::now();
                for j in 0..CHUNK {
                    let q = $base + j;
                    let f = which[q] as usize;
                    answers[j] = look(f, black_box(&bytes[q * stride..(q + 1) * stride]));
                }
                black_box(&answers);
                t.elapsed().as_nanos() as f64
            }};
        }
        for g in 0..groups {
            let order = (0..entries).chain((0..entries).rev());
            for (slot, e) in order.enumerate() {
                let base = (g * 2 * entries + slot) * CHUNK;
                ns[e][g] += match e {
                    0 => {
                        harness_loop!(base, |f: usize, k: &[u8]| sbbf[f].contains_hash(xxh3_64(k)))
                    }
                    1 => harness_loop!(base, |f: usize, k: &[u8]| ours[f].might_contain_bytes(k)),
                    2 => harness_loop!(base, |f: usize, k: &[u8]| h32_512[f].contains_bytes(k)),
                    3 => harness_loop!(base, |f: usize, k: &[u8]| h64_512[f].h.contains_bytes(k)),
                    4 => harness_loop!(base, |f: usize, k: &[u8]| h32_2[f].contains_bytes(k)),
                    5 => harness_loop!(base, |f: usize, k: &[u8]| h32_vec[f].contains_bytes(k)),
                    6 => harness_loop!(base, |f: usize, k: &[u8]| {
                        let h = &h32_call[f];
                        called_kernel(h.lines, h.fast, xxh3_64(k))
                    }),
                    _ => harness_loop!(base, |f: usize, k: &[u8]| {
                        let h = xxh3_64(k);
                        let t = scalar[f];
                        simd::local_contains_unrolled(&t[place(h, t.len())].0, h as u32, k_probes)
                            .unwrap_or(false)
                    }),
                };
            }
        }
    }
    for (g, group) in queries.chunks_exact(CHUNK * 2 * entries).enumerate() {
        if shape == "harness" {
            break;
        }
        let order = (0..entries).chain((0..entries).rev());
        for (e, chunk) in order.zip(group.chunks_exact(CHUNK)) {
            let t = Instant::now();
            black_box(runs[e].1(chunk));
            ns[e][g] += t.elapsed().as_nanos() as f64;
        }
    }
    let per = (2 * CHUNK * groups) as f64;
    for (e, (name, _)) in runs.iter().enumerate() {
        let ratios: Vec<f64> = (0..groups).map(|g| ns[0][g] / ns[e][g]).collect();
        let (m, lo, hi) = quartiles(ratios);
        println!(
            "{name:>11}: {:5.1} ns per lookup; sbbf-rs ÷ {name}: {m:.3} [IQR {lo:.3}–{hi:.3}] over {groups} groups",
            ns[e].iter().sum::<f64>() / per
        );
    }
}
