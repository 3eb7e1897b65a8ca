//! The counting filter against the classic filter at the same (n, p): memory and lookup cost,
//! as ratios measured in one run (the machine is shared and noisy).
//!
//! ```sh
//! cargo run --release -p bloomlab-counting --example counting_speed            # 10^7 items, 1 %
//! cargo run --release -p bloomlab-counting --example counting_speed -- 1000000  # another n
//! ```
//!
//! Lookups: u64 keys (8 little-endian bytes), half members and half non-members in random
//! order, results summed without branching. Every figure is the median of 5 interleaved passes.

use bloomlab_conformance::stream::{half_members, splitmix64 as splitmix};
use std::hint::black_box;
use std::time::Instant;

use bloomlab_classic::BloomFilter;
use bloomlab_core::Filter;
use bloomlab_counting::CountingBloomFilter;

const P: f64 = 0.01;
const PASSES: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time(ops: usize, f: impl FnOnce() -> u64) -> f64 {
    let t = Instant::now();
    black_box(f());
    t.elapsed().as_nanos() as f64 / ops as f64
}

fn main() -> Result<(), bloomlab_core::Error> {
    let n: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("n must be an integer"))
        .unwrap_or(10_000_000);
    let mut x = 0xc0_ffee;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut x)).collect();
    let queries: Vec<u64> = half_members(&keys, (n as usize).min(4_000_000), &mut x);
    let removals = &keys[..(n as usize / 10).max(1)];

    let mut counting = CountingBloomFilter::with_fpr(n, P)?;
    let mut classic = BloomFilter::with_fpr(n, P)?;
    let mut t: std::collections::BTreeMap<&str, Vec<f64>> = Default::default();
    let mut push = |name: &'static str, v: f64| t.entry(name).or_default().push(v);
    for _ in 0..PASSES {
        counting.clear();
        classic.clear();
        let nk = keys.len();
        push(
            "classic insert",
            time(nk, || {
                keys.iter()
                    .map(|k| u64::from(classic.insert(black_box(k))))
                    .sum()
            }),
        );
        push(
            "counting insert",
            time(nk, || {
                keys.iter()
                    .map(|k| u64::from(counting.insert(black_box(k))))
                    .sum()
            }),
        );
        let q = queries.len();
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
            "counting lookup",
            time(q, || {
                queries
                    .iter()
                    .map(|k| u64::from(counting.might_contain(black_box(k))))
                    .sum()
            }),
        );
        push(
            "counting remove + re-insert",
            time(removals.len(), || {
                let r = removals
                    .iter()
                    .map(|k| u64::from(counting.remove(black_box(k))))
                    .sum();
                for k in removals {
                    counting.insert(k);
                }
                r
            }),
        );
    }
    let m: std::collections::BTreeMap<&str, f64> =
        t.into_iter().map(|(k, v)| (k, median(v))).collect();
    let stats = counting.counter_stats();
    let (bc, bb) = (
        Filter::bits_per_item(&counting),
        Filter::bits_per_item(&classic),
    );
    println!(
        "n = {n}, target {:.0} %, {} lookups per pass (half members), median of {PASSES} passes",
        P * 100.0,
        queries.len()
    );
    println!(
        "counting: {} counters, k = {}, {:.1} MiB; classic: {} bits, {:.1} MiB; stuck counters: {} (model expects {:.2e})\n",
        counting.counters(),
        counting.hashes(),
        counting.size_in_bytes() as f64 / f64::from(1 << 20),
        classic.bits(),
        Filter::size_in_bytes(&classic) as f64 / f64::from(1 << 20),
        stats.saturated,
        counting.expected_saturated_counters()
    );
    println!("| operation | ns/op |");
    println!("|---|---|");
    for (k, v) in &m {
        println!("| {k} | {v:.1} |");
    }
    println!("\n| ratio | measured | target |");
    println!("|---|---|---|");
    println!(
        "| bits/item counting / classic | {:.3} ({bc:.2} / {bb:.2}) | 4 |",
        bc / bb
    );
    println!(
        "| lookup counting / classic | {:.2} | ≤ 1.5 |",
        m["counting lookup"] / m["classic lookup"]
    );
    println!(
        "| insert counting / classic | {:.2} | — |",
        m["counting insert"] / m["classic insert"]
    );
    Ok(())
}
