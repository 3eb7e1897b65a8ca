//! Speed of the blocked filter against the memory floor, the classic filter and fastbloom, as
//! ratios measured in one run (the machine is shared and noisy; absolute ns are not stable).
//!
//! ```sh
//! cargo run --release -p bloomlab-blocked --example speed            # 10^7 items, 1 %
//! cargo run --release -p bloomlab-blocked --example speed -- 1000000  # another n
//! ```
//!
//! - **floor**: one independent random 64-byte read over a buffer as large as the blocked
//!   filter (no hashing, no compare): what a one-cache-line lookup cannot beat unbatched.
//! - **lookup**: `might_contain` on a u64 key (8 little-endian bytes, hashed with xxh3-128),
//!   half members and half non-members, in random order.
//! - **batched**: `might_contain_batch` over the same queries.
//! - **insert**: building the filter from the n keys, one `insert` at a time and with
//!   `insert_batch`.
//! - classic (`bloomlab-classic`) and fastbloom 0.17 at the same n and target, the same keys.
//!
//! Every figure is the median of 5 passes; passes interleave the contenders so that a burst of
//! noise from other processes hits all of them.

use std::hint::black_box;
use std::time::Instant;

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_classic::BloomFilter;

const P: f64 = 0.01;
const PASSES: usize = 5;

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// ns per call of `f`, which performs `ops` operations.
fn time(ops: usize, f: impl FnOnce() -> u64) -> f64 {
    let t = Instant::now();
    black_box(f());
    t.elapsed().as_nanos() as f64 / ops as f64
}

fn at<const D: usize>(f: &BlockedBloomFilter, keys: &[u64], out: &mut [bool]) -> u64 {
    f.might_contain_batch_at::<_, D>(keys, out).unwrap();
    out.iter().map(|&b| u64::from(b)).sum()
}

fn main() -> Result<(), bloomlab_core::Error> {
    let n: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("n must be an integer"))
        .unwrap_or(10_000_000);
    let queries_len = (n as usize).min(4_000_000);
    let mut x = 0x5eed;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut x)).collect();
    // Half members, half fresh keys (non-members but for a ≈ n/2^64 chance), shuffled by
    // drawing members at random positions.
    let queries: Vec<u64> = (0..queries_len)
        .map(|i| {
            let r = splitmix(&mut x);
            if i % 2 == 0 {
                keys[(r % n) as usize]
            } else {
                r
            }
        })
        .collect();

    let mut blocked = BlockedBloomFilter::with_fpr(n, P)?;
    let mut blocked_b = blocked.clone();
    let mut classic = BloomFilter::with_fpr(n, P)?;
    let mut fast = fastbloom::BloomFilter::with_false_pos(P).expected_items(n as usize);
    let bytes = blocked.bits() as usize / 8;
    let mut small = BlockedBloomFilter::with_fpr(4_096, P)?; // 5 KiB: stays in L1/L2
    small.insert_batch(&keys[..4_096.min(keys.len())]);

    // The floor's buffer: as large as the blocked filter, every page touched.
    let lines = bytes.div_ceil(64).max(64);
    let buf: Vec<u64> = (0..lines * 8).map(|i| i as u64).collect();
    let offsets: Vec<u32> = (0..queries_len)
        .map(|_| (((splitmix(&mut x) >> 32) * lines as u64) >> 32) as u32)
        .collect();

    let mut t: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
    let mut push = |name: &'static str, v: f64| t.entry(name).or_default().push(v);
    for pass in 0..PASSES {
        // Inserts: rebuild from empty each pass.
        blocked.clear();
        blocked_b.clear();
        classic.clear();
        fast.clear();
        let nk = keys.len();
        push(
            "insert floor",
            time(nk, || {
                // A read-modify-write of a random line, like an insert's.
                let mut b = buf.clone();
                let mut s = 0u64;
                for (i, k) in keys.iter().enumerate() {
                    let o = ((((k >> 32) * lines as u64) >> 32) as usize) * 8;
                    b[o] |= 1 << (i & 63);
                    s = s.wrapping_add(1);
                }
                s + b[0]
            }),
        );
        push(
            "blocked insert",
            time(nk, || {
                keys.iter().map(|k| u64::from(blocked.insert(k))).sum()
            }),
        );
        push(
            "blocked insert_batch",
            time(nk, || {
                blocked_b.insert_batch(&keys);
                blocked_b.len()
            }),
        );
        push(
            "classic insert",
            time(nk, || {
                keys.iter().map(|k| u64::from(classic.insert(k))).sum()
            }),
        );
        push(
            "fastbloom insert",
            time(nk, || keys.iter().map(|k| u64::from(fast.insert(k))).sum()),
        );
        assert_eq!(
            blocked, blocked_b,
            "batched inserts must equal single inserts"
        );

        // Lookups.
        let q = queries.len();
        push(
            "floor",
            time(q, || {
                let mut s = 0u64;
                for &o in &offsets {
                    s = s.wrapping_add(buf[o as usize * 8]);
                }
                s
            }),
        );
        let mut out = vec![false; q];
        push(
            "blocked lookup",
            time(q, || {
                queries
                    .iter()
                    .map(|k| u64::from(blocked.might_contain(black_box(k))))
                    .sum()
            }),
        );
        push(
            "blocked batched",
            time(q, || {
                blocked.might_contain_batch(&queries, &mut out).unwrap();
                out.iter().map(|&b| u64::from(b)).sum()
            }),
        );
        push(
            "classic lookup",
            time(q, || {
                queries
                    .iter()
                    .map(|k| u64::from(classic.might_contain(black_box(k))))
                    .sum()
            }),
        );
        push(
            "fastbloom lookup",
            time(q, || {
                queries
                    .iter()
                    .map(|k| u64::from(fast.contains(black_box(k))))
                    .sum()
            }),
        );
        // What a lookup costs without cache misses: hashing alone, and the whole lookup on a
        // filter small enough to stay in L1/L2 (same queries).
        push(
            "hash only (xxh3-128)",
            time(q, || {
                queries
                    .iter()
                    .map(|k| blocked.hash_key(black_box(k)).h1 & 1)
                    .sum()
            }),
        );
        push(
            "blocked lookup, in-cache filter",
            time(q, || {
                queries
                    .iter()
                    .map(|k| u64::from(small.might_contain(black_box(k))))
                    .sum()
            }),
        );
        // Lookups in flight: the batched lookup at prefetch distances 1–32.
        push(
            "batched, prefetch distance 1",
            time(q, || at::<1>(&blocked, &queries, &mut out)),
        );
        push(
            "batched, prefetch distance 2",
            time(q, || at::<2>(&blocked, &queries, &mut out)),
        );
        push(
            "batched, prefetch distance 4",
            time(q, || at::<4>(&blocked, &queries, &mut out)),
        );
        push(
            "batched, prefetch distance 8",
            time(q, || at::<8>(&blocked, &queries, &mut out)),
        );
        push(
            "batched, prefetch distance 16",
            time(q, || at::<16>(&blocked, &queries, &mut out)),
        );
        if pass == 0 {
            let single: Vec<bool> = queries.iter().map(|k| blocked.might_contain(k)).collect();
            assert_eq!(single, out, "batched answers must equal single answers");
        }
    }
    let m: std::collections::BTreeMap<&str, f64> =
        t.into_iter().map(|(k, v)| (k, median(v))).collect();

    println!(
        "n = {n}, target {:.0} %, {} lookups per pass (half members), median of {PASSES} passes",
        P * 100.0,
        queries.len()
    );
    println!(
        "blocked: {} blocks ({:.1} MiB, {:.2} bits/item, k = {}); classic: {:.2} bits/item, k = {}; fastbloom: {:.2} bits/item, k = {}\n",
        blocked.blocks(),
        bytes as f64 / f64::from(1 << 20),
        blocked.bits() as f64 / n as f64,
        blocked.hashes(),
        classic.bits() as f64 / n as f64,
        classic.hashes(),
        fast.num_bits() as f64 / n as f64,
        fast.num_hashes(),
    );
    println!("| operation | ns/op |");
    println!("|---|---|");
    for (k, v) in &m {
        println!("| {k} | {v:.1} |");
    }
    let r = |a: &str, b: &str| m[a] / m[b];
    println!("\n| ratio | measured | target |");
    println!("|---|---|---|");
    println!(
        "| blocked lookup / floor | {:.2} | ≤ 1.5 |",
        r("blocked lookup", "floor")
    );
    println!(
        "| fastbloom lookup / blocked lookup | {:.2} | ≥ 3 |",
        r("fastbloom lookup", "blocked lookup")
    );
    println!(
        "| blocked batched / floor | {:.2} | ≤ 1.0 |",
        r("blocked batched", "floor")
    );
    println!(
        "| blocked insert / floor | {:.2} | ≤ 1.5 |",
        r("blocked insert", "floor")
    );
    println!(
        "| blocked insert_batch / floor | {:.2} | ≤ 1.5 |",
        r("blocked insert_batch", "floor")
    );
    println!(
        "| classic lookup / blocked lookup | {:.2} | — |",
        r("classic lookup", "blocked lookup")
    );
    println!(
        "| hash only / floor | {:.2} | — |",
        r("hash only (xxh3-128)", "floor")
    );
    println!(
        "| in-cache lookup / floor | {:.2} | — |",
        r("blocked lookup, in-cache filter", "floor")
    );
    println!(
        "\n(insert floor, a random read-modify-write per key including the buffer copy: {:.1} ns)",
        m["insert floor"]
    );
    Ok(())
}
