//! The blocked filter's one-round lookup kernels side by side in one process: the AVX-512
//! one (the probed words fetched by one 16-lane permute of the line) and the AVX2 one (two
//! permutes and a blend), each in the filter's lookup loop — XXH3-64 of the key's 8 bytes,
//! the block from the high half, the kernel on the low half — over the same blocks, with
//! sbbf-rs-safe (same bits, xxh3-64 of the same bytes) beside them. Passes of 16 384
//! lookups in the order A B S S B A (each on a chunk of its own); a figure is the median of
//! the per-group ratios with its interquartile range. Then each inline (`asm!`) lookup
//! and insert kernel against its `#[target_feature]` intrinsics twin
//! ([`LocalKernel::contains_called`], [`LocalKernel::insert_called`]), which the loop,
//! compiled without AVX2, calls: A B B A, "called ÷ inline".
//!
//! ```sh
//! cargo run --release -p bloomlab-lab --example blocked_kernels [-- k]
//! ```
//!
//! 9.92 bits/item (the 1 % target) with `k` probes (default 6, the 1 % target's; 10 is the
//! 0.1 % target's, run by the two-round kernels), half members. Needs AVX2. On a CPU without
//! AVX-512F both kernels are the AVX2 one, so "AVX-512 ÷ AVX2" reads the noise of the
//! measurement (it should be 1) and the AVX2 ÷ sbbf-rs figures are the ones to read.

use bloomlab_conformance::stream::{half_members, splitmix64 as splitmix};
use std::hint::black_box;
use std::time::Instant;

use bloomlab_core::simd::{LocalKernel, zeroed_lines};
use xxhash_rust::xxh3::xxh3_64;

const CHUNK: usize = 16_384;

fn main() {
    let k: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(6);
    let (wide, narrow) = (LocalKernel::detect(k), LocalKernel::avx2(k));
    if narrow.name() != "avx2" {
        println!("this CPU lacks AVX2: nothing to compare");
        return;
    }
    if wide.name() != "avx512" {
        println!("no AVX-512F: both kernels are the AVX2 one (A ÷ B is a noise check)");
    }
    for n in [2_000u64, 100_000, 10_000_000] {
        let blocks = ((n as f64 * 9.92) / 512.0).ceil() as usize;
        let mut lines = zeroed_lines(blocks).expect("memory");
        let mut sbbf = sbbf_rs_safe::Filter::new(blocks * 512, 1);
        let place = |h: u64| (((h >> 32) * blocks as u64) >> 32) as usize;
        let mut seed = n;
        let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut seed)).collect();
        for key in &keys {
            let h = xxh3_64(&key.to_le_bytes());
            wide.insert(&mut lines[place(h)].0, h as u32, k);
            sbbf.insert_hash(h);
        }
        let queries: Vec<u64> =
            half_members(&keys, (n as usize).clamp(1 << 18, 1 << 22), &mut seed);
        let ours = |kernel: LocalKernel, q: &[u64]| -> (u64, f64) {
            let t = Instant::now();
            let hits: u64 = q
                .iter()
                .map(|key| {
                    let h = xxh3_64(&black_box(*key).to_le_bytes());
                    u64::from(kernel.contains(&lines[place(h)].0, h as u32, k))
                })
                .sum();
            (
                black_box(hits),
                t.elapsed().as_nanos() as f64 / q.len() as f64,
            )
        };
        let theirs = |q: &[u64]| -> f64 {
            let t = Instant::now();
            let hits: u64 = q
                .iter()
                .map(|key| u64::from(sbbf.contains_hash(xxh3_64(&black_box(*key).to_le_bytes()))))
                .sum();
            black_box(hits);
            t.elapsed().as_nanos() as f64 / q.len() as f64
        };
        assert_eq!(
            ours(wide, &queries).0,
            ours(narrow, &queries).0,
            "same answers"
        );
        let (mut w_n, mut w_s, mut n_s) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..(8_000_000 / queries.len()).max(2) {
            for q in queries.chunks_exact(6 * CHUNK) {
                let a1 = ours(wide, &q[..CHUNK]).1;
                let b1 = ours(narrow, &q[CHUNK..2 * CHUNK]).1;
                let s1 = theirs(&q[2 * CHUNK..3 * CHUNK]);
                let s2 = theirs(&q[3 * CHUNK..4 * CHUNK]);
                let b2 = ours(narrow, &q[4 * CHUNK..5 * CHUNK]).1;
                let a2 = ours(wide, &q[5 * CHUNK..]).1;
                w_n.push((a1 + a2) / (b1 + b2));
                w_s.push((a1 + a2) / (s1 + s2));
                n_s.push((b1 + b2) / (s1 + s2));
            }
        }
        // Each inline (`asm!`) lookup kernel against its `#[target_feature]` intrinsics twin,
        // which this loop (compiled without AVX2) calls: A B B A, the same chunks.
        let called = |kernel: LocalKernel, q: &[u64]| -> (u64, f64) {
            let t = Instant::now();
            let hits: u64 = q
                .iter()
                .map(|key| {
                    let h = xxh3_64(&black_box(*key).to_le_bytes());
                    u64::from(kernel.contains_called(&lines[place(h)].0, h as u32, k))
                })
                .sum();
            (
                black_box(hits),
                t.elapsed().as_nanos() as f64 / q.len() as f64,
            )
        };
        let mut called_ratios = Vec::new();
        for kernel in [wide, narrow] {
            assert_eq!(
                called(kernel, &queries).0,
                ours(kernel, &queries).0,
                "same answers"
            );
            let mut r = Vec::new();
            for _ in 0..(4_000_000 / queries.len()).max(2) {
                for q in queries.chunks_exact(4 * CHUNK) {
                    let a1 = ours(kernel, &q[..CHUNK]).1;
                    let b1 = called(kernel, &q[CHUNK..2 * CHUNK]).1;
                    let b2 = called(kernel, &q[2 * CHUNK..3 * CHUNK]).1;
                    let a2 = ours(kernel, &q[3 * CHUNK..]).1;
                    r.push((b1 + b2) / (a1 + a2));
                }
            }
            called_ratios.push((kernel.name(), r));
        }
        let show = |r: &mut Vec<f64>| {
            r.sort_by(f64::total_cmp);
            let at = |p: f64| r[((r.len() - 1) as f64 * p).round() as usize];
            format!("{:.3} [IQR {:.3}–{:.3}]", at(0.5), at(0.25), at(0.75))
        };
        // Inserts: the keys into fresh tables of each kind, two chunks at a time, each table
        // taking both in the order A B S | S B A. Below 2^19 keys the stream goes on past
        // the `n` keys (more keys of the same generator), so that the small tables, which
        // fill up, still give 16 groups: the kernels cost the same on a full block (no
        // branch on the bits).
        let mut more = seed;
        let stream: Vec<u64> = keys
            .iter()
            .copied()
            .chain((keys.len()..1 << 19).map(|_| splitmix(&mut more)))
            .collect();
        let fresh = || zeroed_lines(blocks).expect("memory");
        let (mut ta, mut tb) = (fresh(), fresh());
        let mut tc = sbbf_rs_safe::Filter::new(blocks * 512, 1);
        let insert = |kernel: LocalKernel, t: &mut [bloomlab_core::simd::Line], q: &[u64]| {
            let start = Instant::now();
            let new: u64 = q
                .iter()
                .map(|key| {
                    let h = xxh3_64(&black_box(*key).to_le_bytes());
                    u64::from(kernel.insert(&mut t[place(h)].0, h as u32, k))
                })
                .sum();
            black_box(new);
            start.elapsed().as_nanos() as f64
        };
        let mut insert_sbbf = |q: &[u64]| {
            let start = Instant::now();
            let new: u64 = q
                .iter()
                .map(|key| u64::from(tc.insert_hash(xxh3_64(&black_box(*key).to_le_bytes()))))
                .sum();
            black_box(new);
            start.elapsed().as_nanos() as f64
        };
        let (mut iw_n, mut iw_s, mut in_s) = (Vec::new(), Vec::new(), Vec::new());
        for q in stream.chunks_exact(2 * CHUNK) {
            let (c0, c1) = q.split_at(CHUNK);
            let (a0, b0, s0) = (
                insert(wide, &mut ta, c0),
                insert(narrow, &mut tb, c0),
                insert_sbbf(c0),
            );
            let (s1, b1, a1) = (
                insert_sbbf(c1),
                insert(narrow, &mut tb, c1),
                insert(wide, &mut ta, c1),
            );
            iw_n.push((a0 + a1) / (b0 + b1));
            iw_s.push((a0 + a1) / (s0 + s1));
            in_s.push((b0 + b1) / (s0 + s1));
        }
        assert!(
            ta.iter().zip(tb.iter()).all(|(x, y)| x.0 == y.0),
            "same bits"
        );
        // Each inline insert kernel against its intrinsics twin, called: fresh tables, the
        // same chunks, A B | B A.
        let insert_called =
            |kernel: LocalKernel, t: &mut [bloomlab_core::simd::Line], q: &[u64]| {
                let start = Instant::now();
                let new: u64 = q
                    .iter()
                    .map(|key| {
                        let h = xxh3_64(&black_box(*key).to_le_bytes());
                        u64::from(kernel.insert_called(&mut t[place(h)].0, h as u32, k))
                    })
                    .sum();
                black_box(new);
                start.elapsed().as_nanos() as f64
            };
        let mut insert_ratios = Vec::new();
        for kernel in [wide, narrow] {
            let (mut t1, mut t2) = (fresh(), fresh());
            let mut r = Vec::new();
            for q in stream.chunks_exact(2 * CHUNK) {
                let (c0, c1) = q.split_at(CHUNK);
                let (a0, b0) = (
                    insert(kernel, &mut t1, c0),
                    insert_called(kernel, &mut t2, c0),
                );
                let (b1, a1) = (
                    insert_called(kernel, &mut t2, c1),
                    insert(kernel, &mut t1, c1),
                );
                r.push((b0 + b1) / (a0 + a1));
            }
            assert!(
                t1.iter().zip(t2.iter()).all(|(x, y)| x.0 == y.0),
                "same bits"
            );
            insert_ratios.push((kernel.name(), r));
        }
        if !iw_n.is_empty() {
            println!(
                "k = {k}, n = {n}: insert AVX-512 ÷ AVX2 {}; insert AVX-512 ÷ sbbf-rs {}; insert AVX2 ÷ sbbf-rs {} ({} groups)",
                show(&mut iw_n),
                show(&mut iw_s),
                show(&mut in_s),
                iw_n.len()
            );
        }
        for (name, r) in &mut insert_ratios {
            let groups = r.len();
            println!(
                "k = {k}, n = {n}: insert {name} called ÷ inline {} ({groups} groups)",
                show(r)
            );
        }
        for (name, r) in &mut called_ratios {
            let groups = r.len();
            println!(
                "k = {k}, n = {n}: lookup {name} called ÷ inline {} ({groups} groups)",
                show(r)
            );
        }
        println!(
            "k = {k}, n = {n}: AVX-512 ÷ AVX2 {}; AVX-512 ÷ sbbf-rs {}; AVX2 ÷ sbbf-rs {} ({} groups)",
            show(&mut w_n),
            show(&mut w_s),
            show(&mut n_s),
            w_n.len()
        );
    }
}
