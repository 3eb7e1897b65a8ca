//! Throughput of the 64-bit SipHash-2-4 of 8-byte keys: one key at a time (the scheme's
//! `hash64`, siphasher inlined) against eight keys per call in vector lanes
//! (`bloomlab_core::simd::sip24_x8`, AVX-512 or AVX2 as the CPU has them, and the AVX2
//! path forced), in one process. Each round hashes the same 4 096 keys once with every
//! method, in a fixed rotating order; reported: the median and range over rounds of ns per
//! key, and of each round's ratio to one-at-a-time.
//!
//! ```text
//! cargo run --release -p bloomlab-lab --example sip_lanes
//! ```

use std::hint::black_box;
use std::time::Instant;

use bloomlab_core::hash::HashScheme;
use bloomlab_core::simd;
use bloomlab_keyed::Sip64Scheme;

const KEYS: usize = 4096;
const ROUNDS: usize = 41;
const PASSES: usize = 16;

/// A way to hash a slice of keys into a slice of outputs.
type Method<'a> = (&'a str, &'a dyn Fn(&[u64], &mut [u64]));

fn median(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn main() {
    let secret = *b"bloomlab-harness";
    let scheme = Sip64Scheme::from_secret(secret);
    let k0 = u64::from_le_bytes(secret[..8].try_into().unwrap());
    let k1 = u64::from_le_bytes(secret[8..].try_into().unwrap());
    let words: Vec<u64> = (0..KEYS as u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5555)
        .collect();
    // The lanes give what the scheme gives.
    for c in words.chunks_exact(8) {
        let c: &[u64; 8] = c.try_into().unwrap();
        let want = c.map(|w| scheme.hash64(&w.to_le_bytes()));
        assert_eq!(simd::sip24_x8(k0, k1, c), want);
    }
    let mut out = vec![0u64; KEYS];
    let methods: [Method; 4] = [
        ("one key at a time (siphasher, inlined)", &|w, o| {
            for (o, w) in o.iter_mut().zip(w) {
                *o = scheme.hash64(&black_box(*w).to_le_bytes());
            }
        }),
        ("sip24_x8 (widest path)", &|w, o| {
            for (o, w) in o.chunks_exact_mut(8).zip(w.chunks_exact(8)) {
                o.copy_from_slice(&simd::sip24_x8(k0, k1, black_box(w.try_into().unwrap())));
            }
        }),
        ("sip24_x8, AVX2 path", &|w, o| {
            for (o, w) in o.chunks_exact_mut(8).zip(w.chunks_exact(8)) {
                let w = black_box(w.try_into().unwrap());
                o.copy_from_slice(&simd::sip24_x8_avx2(k0, k1, w).unwrap_or([0; 8]));
            }
        }),
        ("portable lanes (one at a time, our rounds)", &|w, o| {
            for (o, w) in o.chunks_exact_mut(8).zip(w.chunks_exact(8)) {
                o.copy_from_slice(&simd::sip24_x8_portable(
                    k0,
                    k1,
                    black_box(w.try_into().unwrap()),
                ));
            }
        }),
    ];
    let mut ns = vec![Vec::new(); methods.len()];
    for r in 0..ROUNDS {
        let mut t = [0f64; 4];
        for j in 0..methods.len() {
            let m = (j + r) % methods.len();
            let s = Instant::now();
            for _ in 0..PASSES {
                (methods[m].1)(&words, &mut out);
                black_box(&out);
            }
            t[m] = s.elapsed().as_secs_f64() * 1e9 / (KEYS * PASSES) as f64;
        }
        for m in 0..methods.len() {
            ns[m].push(t[m]);
        }
    }
    println!(
        "AVX-512F: {}, AVX2: {}",
        simd::has_avx512f(),
        simd::has_avx2()
    );
    for m in 0..methods.len() {
        let (med, lo, hi) = median(&mut ns[m].clone());
        let mut ratio: Vec<f64> = ns[m].iter().zip(&ns[0]).map(|(a, b)| a / b).collect();
        let (rm, rl, rh) = median(&mut ratio);
        println!(
            "{:<45} {med:6.2} ns/key [{lo:.2}–{hi:.2}]   ÷ one at a time {rm:.3} [{rl:.3}–{rh:.3}]",
            methods[m].0
        );
    }
}
