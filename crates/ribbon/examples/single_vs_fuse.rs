//! Single lookups at 10^7 keys, three loops over the same chunks of 65 536 lookups (half
//! members) in rotating order: Ribbon through a call per key (`called`, how a caller that
//! does not inline the lookup runs it), Ribbon inlined into the loop (`inlined`, what
//! `might_contain` gives every caller now), and xorf's BinaryFuse8 inlined into its loop.
//! Each chunk reads one of `reps` independent copies of each filter in turn, so the filters
//! are not all in the shared L3 (as in the harness, which holds every filter of a run).
//! Prints the median and quartiles of the per-chunk ratios and of the ns per lookup.
//!
//! `cargo run --release -p bloomlab-ribbon --example single_vs_fuse [-- n reps rounds]`
//! (defaults: 10^7 keys, 6 copies, 20 rounds of 8 chunks).
use std::hint::black_box;
use std::time::Instant;

use bloomlab_ribbon::RibbonFilter;
use xorf::{BinaryFuse8, Filter as _};

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The lookup behind a call, as it ran before `might_contain` was always inlined.
#[inline(never)]
fn called(f: &RibbonFilter, k: &u64) -> bool {
    f.might_contain(k)
}

#[inline(never)]
fn pass_a(f: &RibbonFilter, ks: &[u64]) -> usize {
    ks.iter().filter(|k| called(f, k)).count()
}
#[inline(never)]
fn pass_b(f: &RibbonFilter, ks: &[u64]) -> usize {
    ks.iter().filter(|k| f.might_contain(*k)).count()
}
#[inline(never)]
fn pass_f(f: &BinaryFuse8, ks: &[u64]) -> usize {
    ks.iter().filter(|k| f.contains(*k)).count()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args
        .get(1)
        .map_or(10_000_000, |s| s.parse::<f64>().unwrap() as u64);
    let reps: usize = args.get(2).map_or(6, |s| s.parse().unwrap());
    let rounds: usize = args.get(3).map_or(20, |s| s.parse().unwrap());
    let mut st = 42u64;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut st)).collect();
    let r0 = RibbonFilter::build(&keys, 0.01).unwrap();
    let f0 = BinaryFuse8::try_from(&keys[..]).unwrap();
    let rs: Vec<RibbonFilter> = (0..reps).map(|_| r0.clone()).collect();
    let fs: Vec<BinaryFuse8> = (0..reps).map(|_| f0.clone()).collect();
    let chunk = 1 << 16;
    let lookups: Vec<u64> = (0..chunk * 8)
        .map(|i| {
            let r = splitmix(&mut st);
            if i % 2 == 0 {
                keys[(r % n) as usize]
            } else {
                r
            }
        })
        .collect();
    let (mut ab, mut bf, mut af) = (Vec::new(), Vec::new(), Vec::new());
    let (mut ta, mut tb, mut tf) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        for c in 0..8 {
            let ks = &lookups[c * chunk..(c + 1) * chunk];
            let i = (round * 8 + c) % reps;
            let mut t = [0f64; 3];
            let order: [usize; 3] = match (round + c) % 6 {
                0 => [0, 1, 2],
                1 => [1, 2, 0],
                2 => [2, 0, 1],
                3 => [2, 1, 0],
                4 => [1, 0, 2],
                _ => [0, 2, 1],
            };
            for &w in &order {
                let s = Instant::now();
                let h = match w {
                    0 => pass_a(&rs[i], ks),
                    1 => pass_b(&rs[i], ks),
                    _ => pass_f(&fs[i], ks),
                };
                black_box(h);
                t[w] = s.elapsed().as_nanos() as f64 / chunk as f64;
            }
            ab.push(t[0] / t[1]);
            bf.push(t[1] / t[2]);
            af.push(t[0] / t[2]);
            ta.push(t[0]);
            tb.push(t[1]);
            tf.push(t[2]);
        }
    }
    let med = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        format!(
            "{:.3} [{:.3}–{:.3}]",
            v[v.len() / 2],
            v[v.len() / 4],
            v[3 * v.len() / 4]
        )
    };
    println!(
        "n={n} reps={reps}: called/inlined {}  inlined/fuse {}  called/fuse {}",
        med(&mut ab),
        med(&mut bf),
        med(&mut af)
    );
    println!(
        "ns: called {} inlined {} fuse {}",
        med(&mut ta),
        med(&mut tb),
        med(&mut tf)
    );
}
