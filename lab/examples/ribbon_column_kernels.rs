//! The Ribbon lookup's column kernels side by side in one process: the filter's own query
//! path (hash, [`row_one_hash`], [`Blocks64::query_inline`]) run with two kernels,
//! alternating every 16 384 lookups (A B B A, each pass on a chunk of its own); a figure is
//! the median over all chunk pairs of B ÷ A, with its interquartile range. The pairs: the
//! AVX2 and the AVX-512 inline kernel, and each inline (`asm!`) kernel and its twin in
//! `#[target_feature]` intrinsics, which this lookup loop — compiled without AVX2 — calls
//! ([`ColumnKernel::called`]). Every answer is checked against `might_contain` first.
//!
//! ```sh
//! cargo run --release -p bloomlab-lab --example ribbon_column_kernels -- 1e5 1e6 1e7
//! ```
//!
//! Filters at a 1 % target (r = 7) over random `u64` keys; lookups half members, half
//! non-members. Needs a CPU with AVX2 and AVX-512 (`VPOPCNTDQ`); prints why not otherwise.

use bloomlab_conformance::stream::{half_members, splitmix64 as splitmix};
use std::hint::black_box;
use std::time::Instant;

use bloomlab_core::simd::ColumnKernel;
use bloomlab_ribbon::{RibbonFilter, WIDTH, row_one_hash};

const CHUNK: usize = 16_384;

/// Members among `keys` by the filter's query path with kernel `k`, and the ns per lookup.
fn pass(f: &RibbonFilter, k: ColumnKernel, keys: &[u64]) -> (usize, f64) {
    let k = k.for_width(f.result_bits() as usize).expect("r ≤ 32");
    let starts = f.num_slots() - (WIDTH - 1);
    let mask = u32::MAX >> (32 - f.result_bits());
    let t = Instant::now();
    let hits = keys
        .iter()
        .filter(|&&key| {
            let h = f.hash_key(&black_box(key));
            let (s, c, v) = row_one_hash::<u128>(h.h1, f.seed(), starts);
            f.columns().query_inline(k, s, c) == Some(v & mask)
        })
        .count();
    (hits, t.elapsed().as_nanos() as f64 / keys.len() as f64)
}

fn main() {
    let (Some(avx2), Some(avx512)) = (ColumnKernel::avx2(), ColumnKernel::avx512()) else {
        println!("this CPU lacks AVX2 or AVX-512 with VPOPCNTDQ: nothing to compare");
        return;
    };
    let sizes: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<f64>().ok().map(|x| x as u64))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![100_000, 1_000_000, 10_000_000]
    } else {
        sizes
    };
    for n in sizes {
        let mut seed = n;
        let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut seed)).collect();
        let f = RibbonFilter::build(keys.iter().copied(), 0.01).expect("built");
        let queries: Vec<u64> = half_members(&keys, 4_000_000, &mut seed);
        let want = queries.iter().filter(|q| f.might_contain(*q)).count();
        assert_eq!(
            pass(&f, avx2, &queries).0,
            want,
            "AVX2 answers as the filter"
        );
        assert_eq!(
            pass(&f, avx512, &queries).0,
            want,
            "AVX-512 answers as the filter"
        );
        for (name, x, y) in [
            ("AVX-512 ÷ AVX2", avx2, avx512),
            ("AVX-512 called ÷ inline", avx512, avx512.called()),
            ("AVX2 called ÷ inline", avx2, avx2.called()),
        ] {
            assert_eq!(pass(&f, y, &queries).0, want, "{name}: the same answers");
            let mut ratios = Vec::new();
            for _rep in 0..2 {
                for q in queries.chunks_exact(4 * CHUNK) {
                    let a1 = pass(&f, x, &q[..CHUNK]).1;
                    let b1 = pass(&f, y, &q[CHUNK..2 * CHUNK]).1;
                    let b2 = pass(&f, y, &q[2 * CHUNK..3 * CHUNK]).1;
                    let a2 = pass(&f, x, &q[3 * CHUNK..]).1;
                    ratios.push((b1 + b2) / (a1 + a2));
                }
            }
            ratios.sort_by(f64::total_cmp);
            let at = |p: f64| ratios[((ratios.len() - 1) as f64 * p).round() as usize];
            println!(
                "n = {n}: lookup {name} {:.3} [IQR {:.3}–{:.3}] over {} pairs",
                at(0.5),
                at(0.25),
                at(0.75),
                ratios.len()
            );
        }
    }
}
