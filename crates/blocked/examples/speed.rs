//! Speed of the blocked filter against the best peers, as ratios measured in one process with
//! the contenders' passes interleaved (the machine is shared and noisy; absolute ns are not
//! stable, ratios within one round are).
//!
//! ```sh
//! cargo run --release -p bloomlab-blocked --example speed                    # n = 2 000, 10^5, 10^6, 10^7
//! cargo run --release -p bloomlab-blocked --example speed -- 100000 1000000  # chosen n
//! ROUNDS=21 cargo run --release -p bloomlab-blocked --example speed           # more rounds
//! ```
//!
//! Contenders, all at a 1 % target, the same random `u64` keys, queries half members and
//! half non-members in random order:
//! - **blocked** (`might_contain`, one key at a time) and **blocked batched**
//!   (`might_contain_batch`); inserts one at a time and with `insert_batch`;
//! - **sbbf-rs** (`sbbf-rs-safe` 0.3, AVX2 split-block filter), given xxh3-64 of the key's 8
//!   little-endian bytes and sized at exactly the blocked filter's bits;
//! - **xorf BinaryFuse8** (static, built from the keys; lookups only);
//! - **fastbloom** 0.17 with foldhash (the fast hasher its docs show) and with its default
//!   hasher (SipHash-1-3);
//! - **classic** (`bloomlab-classic`) at the same target.
//!
//! Each round runs every contender once, in an order shuffled per round with a fixed seed;
//! a figure is the median over rounds, with the range (min–max) beside it, and each ratio is
//! taken within a round before its median and range. `with_fpr` is timed per call: the
//! median of 50 calls whose tables are all kept (fresh memory each time), and of 1 000 calls
//! each dropping its table before the next (the allocator may reuse, and must clear, it).

use bloomlab_conformance::stream::{half_members, splitmix64 as splitmix};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_classic::BloomFilter;
use xorf::Filter as _;
use xxhash_rust::xxh3::xxh3_64;

const P: f64 = 0.01;
/// Rounds per n: 7, or the `ROUNDS` environment variable.
fn rounds() -> usize {
    std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7)
}

/// ns per operation of `f`, which performs `ops` operations.
fn time(ops: usize, f: impl FnOnce() -> u64) -> f64 {
    let t = Instant::now();
    black_box(f());
    t.elapsed().as_nanos() as f64 / ops as f64
}

fn median_range(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

/// sbbf-rs-safe hashes nothing itself: it takes a 64-bit hash, here xxh3-64 of the key's 8
/// little-endian bytes (what its own docs and benches do).
fn sbbf_hash(k: u64) -> u64 {
    xxh3_64(&k.to_le_bytes())
}

fn run(n: u64) -> Result<(), bloomlab_core::Error> {
    let queries_len = (n as usize).clamp(200_000, 4_000_000);
    let mut x = 0x5eed ^ n;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut x)).collect();
    let queries: Vec<u64> = half_members(&keys, queries_len, &mut x);

    let mut blocked = BlockedBloomFilter::with_fpr(n, P)?;
    let bits = blocked.bits();
    let mut blocked_b = blocked.clone();
    let mut sbbf = sbbf_rs_safe::Filter::new(bits as usize, 1); // exactly `bits` bits
    let mut classic = BloomFilter::with_fpr(n, P)?;
    let mut fast_fold = fastbloom::BloomFilter::with_false_pos(P)
        .hasher(foldhash::fast::RandomState::default())
        .expected_items(n as usize);
    let mut fast_sip = fastbloom::BloomFilter::with_false_pos(P).expected_items(n as usize);
    let fuse = xorf::BinaryFuse8::try_from(&keys).expect("distinct random keys");
    let mut out = vec![false; queries.len()];
    let (mut out2, mut out3, mut out4) = (out.clone(), out.clone(), out.clone());

    type Pass<'a> = Box<dyn FnMut() -> f64 + 'a>;
    let nk = keys.len();
    let nq = queries.len();
    let mut t: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
    let rounds = rounds();
    for round in 0..rounds {
        // Inserts (each rebuilds its filter from empty), then lookups on the built filters.
        let mut inserts: Vec<(&'static str, Pass)> = vec![
            (
                "insert blocked",
                Box::new(|| {
                    blocked.clear();
                    time(nk, || {
                        keys.iter().map(|k| u64::from(blocked.insert(k))).sum()
                    })
                }),
            ),
            (
                "insert blocked batched",
                Box::new(|| {
                    blocked_b.clear();
                    time(nk, || {
                        blocked_b.insert_batch(&keys);
                        blocked_b.len()
                    })
                }),
            ),
            (
                "insert sbbf-rs",
                Box::new(|| {
                    sbbf.reset();
                    time(nk, || {
                        keys.iter()
                            .map(|&k| u64::from(sbbf.insert_hash(sbbf_hash(k))))
                            .sum()
                    })
                }),
            ),
            (
                "insert classic",
                Box::new(|| {
                    classic.clear();
                    time(nk, || {
                        keys.iter().map(|k| u64::from(classic.insert(k))).sum()
                    })
                }),
            ),
            (
                "insert fastbloom foldhash",
                Box::new(|| {
                    fast_fold.clear();
                    time(nk, || {
                        keys.iter().map(|k| u64::from(fast_fold.insert(k))).sum()
                    })
                }),
            ),
            (
                "insert fastbloom sip",
                Box::new(|| {
                    fast_sip.clear();
                    time(nk, || {
                        keys.iter().map(|k| u64::from(fast_sip.insert(k))).sum()
                    })
                }),
            ),
        ];
        shuffle(&mut inserts, round as u64);
        for (name, pass) in &mut inserts {
            let v = pass();
            t.entry(name).or_default().push(v);
        }
        drop(inserts);
        let mut lookups: Vec<(&'static str, Pass)> = vec![
            (
                "lookup blocked",
                Box::new(|| {
                    time(nq, || {
                        queries
                            .iter()
                            .map(|k| u64::from(blocked.might_contain(k)))
                            .sum()
                    })
                }),
            ),
            (
                "lookup blocked batched",
                Box::new(|| {
                    time(nq, || {
                        blocked.might_contain_batch(&queries, &mut out).unwrap();
                        out.iter().map(|&b| u64::from(b)).sum()
                    })
                }),
            ),
            (
                "lookup blocked batched D=8",
                Box::new(|| time(nq, || at::<8>(&blocked, &queries, &mut out2))),
            ),
            (
                "lookup blocked batched D=16",
                Box::new(|| time(nq, || at::<16>(&blocked, &queries, &mut out3))),
            ),
            (
                "lookup blocked batched D=64",
                Box::new(|| time(nq, || at::<64>(&blocked, &queries, &mut out4))),
            ),
            (
                "lookup sbbf-rs",
                Box::new(|| {
                    time(nq, || {
                        queries
                            .iter()
                            .map(|&k| u64::from(sbbf.contains_hash(sbbf_hash(k))))
                            .sum()
                    })
                }),
            ),
            (
                "lookup xorf BinaryFuse8",
                Box::new(|| {
                    time(nq, || {
                        queries.iter().map(|k| u64::from(fuse.contains(k))).sum()
                    })
                }),
            ),
            (
                "lookup classic",
                Box::new(|| {
                    time(nq, || {
                        queries
                            .iter()
                            .map(|k| u64::from(classic.might_contain(k)))
                            .sum()
                    })
                }),
            ),
            (
                "lookup fastbloom foldhash",
                Box::new(|| {
                    time(nq, || {
                        queries
                            .iter()
                            .map(|k| u64::from(fast_fold.contains(k)))
                            .sum()
                    })
                }),
            ),
            (
                "lookup fastbloom sip",
                Box::new(|| {
                    time(nq, || {
                        queries
                            .iter()
                            .map(|k| u64::from(fast_sip.contains(k)))
                            .sum()
                    })
                }),
            ),
            (
                // Each table kept until all 50 calls are done, so none reuses memory a
                // previous one freed: what a program's first filters of this size cost
                // (the allocator hands out fresh zero pages).
                "with_fpr, tables kept (µs)",
                Box::new(|| {
                    let mut kept = Vec::with_capacity(50);
                    let mut v: Vec<f64> = (0..50)
                        .map(|i| {
                            let t = Instant::now();
                            let f = BlockedBloomFilter::with_fpr(n, P / (1.0 + f64::from(i % 3)))
                                .unwrap();
                            let us = t.elapsed().as_nanos() as f64 / 1000.0;
                            kept.push(f);
                            us
                        })
                        .collect();
                    drop(kept);
                    v.sort_by(f64::total_cmp);
                    v[v.len() / 2]
                }),
            ),
            (
                // Each table dropped before the next call: after large frees, glibc may serve
                // the next table from the reused memory, which it must clear.
                "with_fpr, each dropped (µs)",
                Box::new(|| {
                    let mut v: Vec<f64> = (0..1000)
                        .map(|i| {
                            let t = Instant::now();
                            black_box(BlockedBloomFilter::with_fpr(
                                n,
                                P / (1.0 + f64::from(i % 3)),
                            ))
                            .unwrap();
                            t.elapsed().as_nanos() as f64 / 1000.0
                        })
                        .collect();
                    v.sort_by(f64::total_cmp);
                    v[v.len() / 2]
                }),
            ),
        ];
        shuffle(&mut lookups, 1000 + round as u64);
        for (name, pass) in &mut lookups {
            let v = pass();
            t.entry(name).or_default().push(v);
        }
    }

    println!(
        "\nn = {n}: blocked {:.2} bits/item, k = {}, {} KiB; {} queries, {rounds} rounds",
        bits as f64 / n as f64,
        blocked.hashes(),
        bits / 8 / 1024,
        queries.len()
    );
    println!("{:<28} {:>9} {:>18}", "ns/op", "median", "range");
    for (name, v) in &t {
        let (m, lo, hi) = median_range(v.clone());
        println!("{name:<28} {m:>9.2} {:>18}", format!("{lo:.2}–{hi:.2}"));
    }
    let ratio = |a: &str, b: &str| {
        let r: Vec<f64> = t[a].iter().zip(&t[b]).map(|(x, y)| x / y).collect();
        median_range(r)
    };
    println!(
        "{:<48} {:>7} {:>14}",
        "ratio (within each round)", "median", "range"
    );
    for (a, b) in [
        ("lookup blocked", "lookup sbbf-rs"),
        ("lookup blocked batched", "lookup sbbf-rs"),
        ("lookup blocked batched D=8", "lookup sbbf-rs"),
        ("lookup blocked batched D=16", "lookup sbbf-rs"),
        ("lookup blocked batched D=64", "lookup sbbf-rs"),
        ("insert blocked", "insert sbbf-rs"),
        ("insert blocked batched", "insert sbbf-rs"),
        ("lookup blocked", "lookup xorf BinaryFuse8"),
        ("lookup classic", "lookup fastbloom foldhash"),
        ("insert classic", "insert fastbloom foldhash"),
        ("lookup blocked", "lookup fastbloom sip"),
    ] {
        let (m, lo, hi) = ratio(a, b);
        println!(
            "{:<48} {m:>7.3} {:>14}",
            format!("{a} / {b}"),
            format!("{lo:.3}–{hi:.3}")
        );
    }
    Ok(())
}

/// Batched lookups at prefetch distance `D` (the default is `bloomlab_blocked::BATCH`).
fn at<const D: usize>(f: &BlockedBloomFilter, keys: &[u64], out: &mut [bool]) -> u64 {
    f.might_contain_batch_at::<_, D>(keys, out).unwrap();
    out.iter().map(|&b| u64::from(b)).sum()
}

/// Fisher–Yates with a SplitMix64 stream from `seed` (a fixed order per round).
fn shuffle<T>(v: &mut [T], seed: u64) {
    let mut s = seed;
    for i in (1..v.len()).rev() {
        let j = (splitmix(&mut s) % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
}

fn main() -> Result<(), bloomlab_core::Error> {
    let ns: Vec<u64> = std::env::args()
        .skip(1)
        .map(|s| s.parse().expect("each argument must be an integer n"))
        .collect();
    let ns = if ns.is_empty() {
        vec![2_000, 100_000, 1_000_000, 10_000_000]
    } else {
        ns
    };
    println!(
        "blocked filter speed, 1 % target; AVX2 kernels: {}",
        bloomlab_core::simd::has_avx2()
    );
    for n in ns {
        run(n)?;
    }
    Ok(())
}
