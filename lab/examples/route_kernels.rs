//! The routing phase of the parallel builds, kernel against kernel in one process: the
//! blocked filter's one-hash placement (`route_one_hash`, 512 hashes a call, as its build
//! gathers them) and the classic filter's probe positions (`route_positions`, 256 keys a call,
//! `k = 7`), each through the inline-assembly kernels and the `#[target_feature]` intrinsics
//! ones, with the portable twin beside them. A pass routes the same 65 536 hashes into lists
//! cleared before it (their room kept); passes run in the order A B P P B A, and a figure is
//! the median over the groups of a group's ratio (B₁ + B₂) ÷ (A₁ + A₂), with its interquartile
//! range. Every kernel's lists are checked against the portable twin's first.
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
use bloomlab_core::simd::{self, RouteKernel, Routed};

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

/// Runs `groups` groups A B P P B A of (asm, intrinsics, portable) and prints intrinsics ÷
/// asm and portable ÷ intrinsics.
fn compare(what: &str, groups: usize, mut passes: [Pass; 3]) {
    let (mut b_a, mut p_b, mut ns) = (Vec::new(), Vec::new(), [0.0f64; 3]);
    for _ in 0..groups {
        let mut t = [0.0f64; 3];
        for i in [0, 1, 2, 2, 1, 0] {
            t[i] += time(&mut passes[i]);
        }
        b_a.push(t[1] / t[0]);
        p_b.push(t[2] / t[1]);
        for (n, t) in ns.iter_mut().zip(t) {
            *n += t / 2.0 / groups as f64;
        }
    }
    let (m, lo, hi) = quartiles(b_a);
    let (pm, plo, phi) = quartiles(p_b);
    println!(
        "{what}: intrinsics ÷ asm {m:.3} [IQR {lo:.3}–{hi:.3}]; portable ÷ intrinsics {pm:.2} \
         [IQR {plo:.2}–{phi:.2}]; ns/key asm {:.2}, intrinsics {:.2}, portable {:.2} \
         ({groups} groups)",
        ns[0], ns[1], ns[2]
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
        // The same lists each kernel fills, checked against the portable twin's.
        let one_hash = |kernel: Option<RouteKernel>, out: &mut Vec<Routed>| {
            out.iter_mut().for_each(Routed::clear);
            for c in h1.chunks(512) {
                let c = black_box(c);
                match kernel {
                    Some(kernel) => {
                        assert!(simd::route_kernel_one_hash(kernel, c, n, &blocks, out))
                    }
                    None => simd::route_one_hash_portable(c, n, &blocks, out),
                }
            }
        };
        let positions = |kernel: Option<RouteKernel>, out: &mut Vec<Vec<u64>>| {
            out.iter_mut().for_each(Vec::clear);
            for (a, b) in h1.chunks(256).zip(h2.chunks(256)) {
                let (a, b) = (black_box(a), black_box(b));
                match kernel {
                    Some(kernel) => {
                        assert!(simd::route_kernel_positions(kernel, a, b, k, m, &bits, out))
                    }
                    None => simd::route_positions_portable(a, b, k, m, &bits, out),
                }
            }
        };
        let kernels = [Some(RouteKernel::Asm), Some(RouteKernel::Intrinsics), None];
        let mut lists: [Vec<Routed>; 3] = std::array::from_fn(|_| vec![Routed::default(); owners]);
        let mut pos: [Vec<Vec<u64>>; 3] = std::array::from_fn(|_| vec![Vec::new(); owners]);
        for i in 0..3 {
            one_hash(kernels[i], &mut lists[i]);
            positions(kernels[i], &mut pos[i]);
            pos[i].iter_mut().for_each(|l| l.sort_unstable());
        }
        assert!(lists[0] == lists[2] && lists[1] == lists[2], "same lists");
        assert!(pos[0] == pos[2] && pos[1] == pos[2], "same positions");
        let [l0, l1, l2] = &mut lists;
        compare(
            &format!("route_one_hash, {owners} owners"),
            groups,
            [
                Box::new(|| one_hash(kernels[0], l0)),
                Box::new(|| one_hash(kernels[1], l1)),
                Box::new(|| one_hash(kernels[2], l2)),
            ],
        );
        let [p0, p1, p2] = &mut pos;
        compare(
            &format!("route_positions (k = {k}), {owners} owners"),
            groups,
            [
                Box::new(|| positions(kernels[0], p0)),
                Box::new(|| positions(kernels[1], p1)),
                Box::new(|| positions(kernels[2], p2)),
            ],
        );
    }
}
