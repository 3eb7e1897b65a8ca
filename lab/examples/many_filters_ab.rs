//! The harness's many-filters case (the LSM read path: one small filter per table file, all of
//! them together far larger than the last-level cache), blocked filter against sbbf-rs-safe,
//! finely interleaved, to tell apart what the out-of-cache gap between the two is made of.
//! Three entries answer the same queries — a random filter each, half members:
//!
//! - `blocked`: a `Vec<BlockedBloomFilter>`, `might_contain` (the harness's entry);
//! - `sbbf-rs`: a `Vec<sbbf_rs_safe::Filter>` sized to meet the same target (the split-block
//!   formula, as the harness sizes it), xxh3-64 of the key's bytes, `contains_hash`;
//! - `raw`: our blocked kernel on a bare table per filter (a `Lines`), the same number of
//!   blocks, `k` and kernel as `blocked`, placed by xxh3-64 as `sbbf-rs` is, without the
//!   filter's struct (its bits are not the blocked filter's: only the cost is compared).
//!
//! Chunks of 16 384 queries in the order B S R R S B (each pass on a chunk of its own, so no
//! pass finds lines an earlier one brought in); a figure is the median over the groups of the
//! ratio to `sbbf-rs`, with its interquartile range. It also prints each entry's in-memory
//! size per filter, which decides how many filter headers share a cache line.
//!
//! ```sh
//! cargo run --release -p bloomlab-lab --example many_filters_ab -- [MiB per entry, default 520]
//! ```

use std::hint::black_box;
use std::time::Instant;

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_core::simd::{Lines, LocalKernel, zeroed_lines};
use xxhash_rust::xxh3::xxh3_64;

const KEYS_PER: u64 = 10_000;
const TARGET: f64 = 0.01;
const CHUNK: usize = 16_384;
const GROUPS: usize = 60;

/// Key `i` of filter `f`: a bijective mix of `(f, i)`, so members and non-members (indexes at
/// or past `KEYS_PER`) are distinct.
fn key(f: u64, i: u64) -> u64 {
    let mut z = ((f << 32) | i).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn ns(f: impl FnOnce() -> u64) -> f64 {
    let t = Instant::now();
    black_box(f());
    t.elapsed().as_nanos() as f64
}

fn quartiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    (q(0.5), q(0.25), q(0.75))
}

/// The raw table's block of a hash: fastrange on the high half, as the blocked filter's
/// current layout places it.
fn place(h: u64, blocks: usize) -> usize {
    (((h >> 32) * blocks as u64) >> 32) as usize
}

fn main() {
    let mib: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(520);
    let budget = mib << 20;
    let probe = BlockedBloomFilter::with_fpr(KEYS_PER, TARGET).expect("sized");
    let (blocks, k) = (probe.blocks() as usize, probe.hashes());
    let kernel = LocalKernel::detect(k);
    let sbbf_bits = bloomlab_sbbf::math::sbbf_blocks(
        KEYS_PER,
        bloomlab_sbbf::math::sbbf_bits_per_item(TARGET).expect("p"),
    )
    .expect("size")
        * 256;
    let count = budget / (blocks * 64);
    println!(
        "{count} filters of {KEYS_PER} keys at {} % per entry ({mib} MiB of blocked tables); blocked: {blocks} blocks, k = {k}, kernel {}; sbbf-rs: {} bytes",
        TARGET * 100.0,
        kernel.name(),
        sbbf_bits / 8
    );
    println!(
        "size per filter: BlockedBloomFilter {} B, sbbf_rs_safe::Filter {} B, Lines {} B",
        std::mem::size_of::<BlockedBloomFilter>(),
        std::mem::size_of::<sbbf_rs_safe::Filter>(),
        std::mem::size_of::<Lines>()
    );
    let mut ours = Vec::with_capacity(count);
    let mut sbbf = Vec::with_capacity(count);
    let mut raw: Vec<Lines> = Vec::with_capacity(count);
    for f in 0..count as u64 {
        let mut b = BlockedBloomFilter::with_fpr(KEYS_PER, TARGET).expect("sized");
        let mut s = sbbf_rs_safe::Filter::new(sbbf_bits as usize, 1);
        let mut r = zeroed_lines(blocks).expect("memory");
        for i in 0..KEYS_PER {
            let x = key(f, i);
            b.insert(&x);
            let h = xxh3_64(&x.to_le_bytes());
            s.insert_hash(h);
            kernel.insert(&mut r[place(h, blocks)].0, h as u32, k);
        }
        ours.push(b);
        sbbf.push(s);
        raw.push(r);
    }
    // Queries: (filter, key) pairs, half members, in random filter order.
    let mut state = 0x4D41_4E59u64;
    let mut next = || bloomlab_core::hash::splitmix64(&mut state);
    let total = CHUNK * 6 * GROUPS;
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
    let run_b = |q: &[(u32, u64)]| {
        q.iter()
            .map(|&(f, x)| u64::from(ours[f as usize].might_contain(black_box(&x))))
            .sum::<u64>()
    };
    let run_s = |q: &[(u32, u64)]| {
        q.iter()
            .map(|&(f, x)| {
                u64::from(sbbf[f as usize].contains_hash(xxh3_64(&black_box(x).to_le_bytes())))
            })
            .sum::<u64>()
    };
    let run_r = |q: &[(u32, u64)]| {
        q.iter()
            .map(|&(f, x)| {
                let h = xxh3_64(&black_box(x).to_le_bytes());
                let t = &raw[f as usize];
                u64::from(kernel.contains(&t[place(h, blocks)].0, h as u32, k))
            })
            .sum::<u64>()
    };
    // Every entry finds every member.
    let members: Vec<(u32, u64)> = queries.iter().step_by(2).take(CHUNK).copied().collect();
    for run in [&run_b as &dyn Fn(&[(u32, u64)]) -> u64, &run_s, &run_r] {
        assert_eq!(run(&members), CHUNK as u64, "no false negative");
    }
    let (mut b_s, mut r_s, mut b_r) = (Vec::new(), Vec::new(), Vec::new());
    let mut abs = [0.0f64; 3];
    for g in queries.chunks_exact(CHUNK * 6) {
        let c: Vec<&[(u32, u64)]> = g.chunks_exact(CHUNK).collect();
        let (b1, s1, r1) = (ns(|| run_b(c[0])), ns(|| run_s(c[1])), ns(|| run_r(c[2])));
        let (r2, s2, b2) = (ns(|| run_r(c[3])), ns(|| run_s(c[4])), ns(|| run_b(c[5])));
        b_s.push((b1 + b2) / (s1 + s2));
        r_s.push((r1 + r2) / (s1 + s2));
        b_r.push((b1 + b2) / (r1 + r2));
        for (a, t) in abs.iter_mut().zip([b1 + b2, s1 + s2, r1 + r2]) {
            *a += t;
        }
    }
    let per = (2 * CHUNK * GROUPS) as f64;
    println!(
        "mean ns per lookup: blocked {:.1}, sbbf-rs {:.1}, raw {:.1}",
        abs[0] / per,
        abs[1] / per,
        abs[2] / per
    );
    for (name, v) in [
        ("blocked ÷ sbbf-rs", b_s),
        ("raw ÷ sbbf-rs", r_s),
        ("blocked ÷ raw", b_r),
    ] {
        let (m, lo, hi) = quartiles(v);
        println!("{name}: {m:.3} [IQR {lo:.3}–{hi:.3}] over {GROUPS} groups");
    }
}
