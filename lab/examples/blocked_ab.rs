//! Blocked filter against sbbf-rs-safe, finely interleaved: the two alternate every chunk of
//! 16 384 operations (in the order A B B A, so drift within a pair cancels; each lookup pass
//! on a chunk of its own, so no pass finds the blocks an earlier one brought into cache), and
//! a figure is the median over all chunk pairs of the ratio blocked ÷ sbbf-rs. With
//! `--atomic`, also the atomic filter's lookups against the owned filter's, the same way; with
//! `--absolute`, also each filter's fastest whole lookup pass in ns. Finer than `speed.rs`'s
//! whole-pass rounds, so a burst of noise from elsewhere on the machine spoils a few pairs,
//! not a whole round: meant for a machine that is busy.
//!
//! ```sh
//! cargo run --release -p bloomlab-lab --example blocked_ab -- 2000 100000 10000000
//! ```
//!
//! Both filters have the same bits (the blocked filter's at a 1 % target); sbbf-rs is given
//! xxh3-64 of the key's 8 little-endian bytes, as in the harness. Lookups: half members, half
//! non-members, in random order. Inserts: the same keys into a fresh filter of each kind, chunk
//! by chunk.

use bloomlab_conformance::stream::{half_members, splitmix64 as splitmix};
use std::hint::black_box;
use std::time::Instant;

use bloomlab_blocked::{AtomicBlockedBloomFilter, BlockedBloomFilter};
use xxhash_rust::xxh3::xxh3_64;

const CHUNK: usize = 16_384;

fn ns(f: impl FnOnce() -> u64) -> f64 {
    let t = Instant::now();
    black_box(f());
    t.elapsed().as_nanos() as f64
}

fn median(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let q = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    (q(0.5), q(0.25), q(0.75))
}

/// Per-pair ratios A ÷ B of lookup time: A B B A over four chunks of `queries`, each pass on
/// a chunk of its own (a filter passing twice over one chunk finds the second time the blocks
/// the first brought in — at 10^7, 16 384 blocks are 1 MiB, inside L2 — which biased the
/// earlier "A B B A on one chunk" against A).
fn paired(queries: &[u64], a: impl Fn(&[u64]) -> u64, b: impl Fn(&[u64]) -> u64) -> Vec<f64> {
    let chunks: Vec<&[u64]> = queries.chunks_exact(CHUNK).collect();
    let mut out = Vec::new();
    for _rep in 0..(16_000_000 / queries.len()).max(1) {
        for q in chunks.chunks_exact(4) {
            let a1 = ns(|| a(q[0]));
            let b1 = ns(|| b(q[1]));
            let b2 = ns(|| b(q[2]));
            let a2 = ns(|| a(q[3]));
            out.push((a1 + a2) / (b1 + b2));
        }
    }
    out
}

fn main() {
    let atomic = std::env::args().any(|a| a == "--atomic");
    let absolute = std::env::args().any(|a| a == "--absolute");
    let sizes: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<f64>().ok().map(|x| x as u64))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![2_000, 100_000, 10_000_000]
    } else {
        sizes
    };
    for n in sizes {
        let mut seed = n;
        let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut seed)).collect();
        let mut blocked = BlockedBloomFilter::with_fpr(n, 0.01).expect("sized");
        let mut sbbf = sbbf_rs_safe::Filter::new(blocked.bits() as usize, 1);
        // Inserts, chunk by chunk into both (A B B A per pair of chunks).
        let mut ins = Vec::new();
        let chunks: Vec<&[u64]> = keys.chunks(CHUNK.min(keys.len())).collect();
        for pair in chunks.chunks(2) {
            let (a, b) = (pair[0], pair.get(1).copied());
            let t_a1 = ns(|| {
                a.iter()
                    .map(|k| u64::from(blocked.insert(black_box(k))))
                    .sum()
            });
            let t_b1 = ns(|| {
                a.iter()
                    .map(|k| u64::from(sbbf.insert_hash(xxh3_64(&black_box(*k).to_le_bytes()))))
                    .sum()
            });
            ins.push(t_a1 / t_b1);
            if let Some(b) = b {
                let t_b2 = ns(|| {
                    b.iter()
                        .map(|k| u64::from(sbbf.insert_hash(xxh3_64(&black_box(*k).to_le_bytes()))))
                        .sum()
                });
                let t_a2 = ns(|| {
                    b.iter()
                        .map(|k| u64::from(blocked.insert(black_box(k))))
                        .sum()
                });
                ins.push(t_a2 / t_b2);
            }
        }
        // Lookups: half members.
        let queries: Vec<u64> =
            half_members(&keys, (n as usize).clamp(CHUNK * 4, 4_000_000), &mut seed);
        let look_a = |q: &[u64]| {
            q.iter()
                .map(|k| u64::from(blocked.might_contain(black_box(k))))
                .sum::<u64>()
        };
        let look_b = |q: &[u64]| {
            q.iter()
                .map(|k| u64::from(sbbf.contains_hash(xxh3_64(&black_box(*k).to_le_bytes()))))
                .sum::<u64>()
        };
        let (ha, hb) = (look_a(&queries), look_b(&queries));
        if absolute {
            // The fastest of 20 whole passes of each, for the machine's state this process
            // runs in (both filters' times move together between states).
            let (mut ta, mut tb) = (f64::MAX, f64::MAX);
            for _ in 0..20 {
                ta = ta.min(ns(|| look_a(&queries)));
                tb = tb.min(ns(|| look_b(&queries)));
            }
            let q = queries.len() as f64;
            println!(
                "n = {n}: fastest pass blocked {:.2} ns, sbbf-rs {:.2} ns per lookup (ratio {:.3})",
                ta / q,
                tb / q,
                ta / tb
            );
        }
        let look = paired(&queries, look_a, look_b);
        if atomic {
            // The atomic filter with the same bits, against the owned one.
            let shared = AtomicBlockedBloomFilter::try_from(blocked.clone()).expect("OneHash");
            let look_s = |q: &[u64]| {
                q.iter()
                    .map(|k| u64::from(shared.might_contain(black_box(k))))
                    .sum::<u64>()
            };
            assert_eq!(look_s(&queries), ha, "the same bits give the same answers");
            let (r, r25, r75) = median(paired(&queries, look_s, look_a));
            println!("n = {n}: lookup atomic ÷ owned blocked {r:.3} [IQR {r25:.3}–{r75:.3}]");
        }
        let (l, l25, l75) = median(look.clone());
        let (i, i25, i75) = median(ins);
        println!(
            "n = {n}: lookup blocked ÷ sbbf-rs {l:.3} [IQR {l25:.3}–{l75:.3}] over {} pairs (hits {ha} / {hb}); insert {i:.3} [IQR {i25:.3}–{i75:.3}]",
            look.len()
        );
    }
}
