//! The routing phase of the parallel builds, the vector lanes against the portable twin in one
//! process: the blocked filter's one-hash placement (`route_one_hash`, 512 hashes a call, as
//! its build gathers them) and the classic filter's probe positions (`route_positions`, 256
//! keys a call, `k = 7`). A pass routes the same 65 536 hashes into lists cleared before it
//! (their room kept); passes run in the order L P P L, and a figure is the median over the
//! groups of a group's ratio (P₁ + P₂) ÷ (L₁ + L₂), with its interquartile range. The lanes'
//! lists are checked against the portable twin's first.
//!
//! The same program, with a third kernel, compared the lanes written with `#[target_feature]`
//! intrinsics against the inline-assembly kernels they replaced (`docs/design/simd.md`).
//!
//! ```sh
//! cargo run --release -p bloomlab-lab --example route_kernels [-- groups]
//! ```
//!
//! Needs AVX-512F and POPCNT (prints why not otherwise). The machine is shared: the spread
//! of the ratios says how much to trust a median.

use std::hint::black_box;
use std::time::Instant;

use bloomlab_conformance::stream::splitmix64 as splitmix;
use bloomlab_core::simd::{self, Routed};

const KEYS: usize = 1 << 16;

/// One way to route the whole input once.
type Pass<'a> = Box<dyn FnMut() + 'a>;

/// The median and interquartile range of `v`.
fn quartiles(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    (at(0.5), at(0.25), at(0.75))
}

/// ns per key of one pass.
fn time(pass: &mut Pass) -> f64 {
    let t = Instant::now();
    pass();
    t.elapsed().as_nanos() as f64 / KEYS as f64
}

/// Runs `groups` groups L P P L of (lanes, portable) and prints portable ÷ lanes.
fn compare(what: &str, groups: usize, mut passes: [Pass; 2]) {
    let (mut ratios, mut ns) = (Vec::new(), [0.0f64; 2]);
    for _ in 0..groups {
        let mut t = [0.0f64; 2];
        for i in [0, 1, 1, 0] {
            t[i] += time(&mut passes[i]);
        }
        ratios.push(t[1] / t[0]);
        for (n, t) in ns.iter_mut().zip(t) {
            *n += t / 2.0 / groups as f64;
        }
    }
    let (m, lo, hi) = quartiles(ratios);
    println!(
        "{what}: portable ÷ lanes {m:.2} [IQR {lo:.2}–{hi:.2}]; mean ns/key lanes {:.2}, \
         portable {:.2} ({groups} groups)",
        ns[0], ns[1]
    );
}

fn main() {
    let groups: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100);
    if !simd::routes_in_lanes(1, 1) {
        println!("this CPU lacks AVX-512F or POPCNT: no routing lanes to compare");
        return;
    }
    println!("vector paths: {}", simd::VectorPaths::detect());
    let mut seed = 42;
    let h1: Vec<u64> = (0..KEYS).map(|_| splitmix(&mut seed)).collect();
    let h2: Vec<u64> = (0..KEYS).map(|_| splitmix(&mut seed)).collect();
    // 10^7 keys at 1 % (9.92 bits a key, 512-bit blocks); the classic filter's bits for it.
    let (n, m, k) = (193_750u64, 95_850_584u64, 7u32);
    for owners in [2usize, 8] {
        let bounds = |limit: u64| -> Vec<u64> {
            (0..=owners as u64)
                .map(|t| t * limit / owners as u64)
                .collect()
        };
        let (blocks, bits) = (bounds(n), bounds(m));
        let one_hash = |lanes: bool, out: &mut Vec<Routed>| {
            out.iter_mut().for_each(Routed::clear);
            for c in h1.chunks(512) {
                let c = black_box(c);
                if lanes {
                    simd::route_one_hash(c, n, &blocks, out);
                } else {
                    simd::route_one_hash_portable(c, n, &blocks, out);
                }
            }
        };
        let positions = |lanes: bool, out: &mut Vec<Vec<u64>>| {
            out.iter_mut().for_each(Vec::clear);
            for (a, b) in h1.chunks(256).zip(h2.chunks(256)) {
                let (a, b) = (black_box(a), black_box(b));
                if lanes {
                    simd::route_positions(a, b, k, m, &bits, out);
                } else {
                    simd::route_positions_portable(a, b, k, m, &bits, out);
                }
            }
        };
        let mut lists: [Vec<Routed>; 2] = std::array::from_fn(|_| vec![Routed::default(); owners]);
        let mut pos: [Vec<Vec<u64>>; 2] = std::array::from_fn(|_| vec![Vec::new(); owners]);
        for (i, lanes) in [true, false].into_iter().enumerate() {
            one_hash(lanes, &mut lists[i]);
            positions(lanes, &mut pos[i]);
            pos[i].iter_mut().for_each(|l| l.sort_unstable());
        }
        assert!(lists[0] == lists[1], "same lists");
        assert!(pos[0] == pos[1], "same positions");
        let [l0, l1] = &mut lists;
        compare(
            &format!("route_one_hash, {owners} owners"),
            groups,
            [
                Box::new(|| one_hash(true, l0)),
                Box::new(|| one_hash(false, l1)),
            ],
        );
        let [p0, p1] = &mut pos;
        compare(
            &format!("route_positions (k = {k}), {owners} owners"),
            groups,
            [
                Box::new(|| positions(true, p0)),
                Box::new(|| positions(false, p1)),
            ],
        );
    }
}
