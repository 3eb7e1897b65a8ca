//! What `classic_loops` and `keyed_loops` share: the keys and queries, the lookup loops
//! written out beside the filter's own, and the driver that times the loops chunk by chunk in
//! rotating order.

// Each example uses some of the loops.
#![allow(dead_code)]

use bloomlab_conformance::stream::{half_members, splitmix64 as splitmix};
use std::hint::black_box;
use std::time::Instant;

use bloomlab_core::bits::BitArray;
use bloomlab_core::hash::KeyHash;

/// Queries per timed chunk.
pub const CHUNK: usize = 32_768;

/// The sizes given on the command line, or `default`.
pub fn sizes(default: &[u64]) -> Vec<u64> {
    let ns: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse::<f64>().ok().map(|x| x as u64))
        .collect();
    if ns.is_empty() { default.to_vec() } else { ns }
}

/// `n` random keys and 4 000 000 queries, half of them members, both from a seed of `n`.
pub fn keys_and_queries(n: u64) -> (Vec<u64>, Vec<u64>) {
    let mut seed = n;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut seed)).collect();
    let queries = half_members(&keys, 4_000_000, &mut seed);
    (keys, queries)
}

/// The textbook loop: the probes in order, stopping at the first zero bit.
#[inline(always)]
pub fn textbook(bits: &BitArray, h: KeyHash, k: u32) -> bool {
    h.positions(k, bits.len()).all(|i| bits.get(i))
}

/// Two probes read together, one branch, then the rest branch-free.
#[inline(always)]
pub fn two_then_rest(bits: &BitArray, h: KeyHash, k: u32) -> bool {
    let mut p = h.positions(k, bits.len());
    let first = p.next().is_none_or(|i| bits.get(i)) & p.next().is_none_or(|i| bits.get(i));
    first && p.fold(true, |all, i| all & bits.get(i))
}

/// Every probe read and ANDed, no branch.
#[inline(always)]
pub fn branch_free(bits: &BitArray, h: KeyHash, k: u32) -> bool {
    h.positions(k, bits.len())
        .fold(true, |all, i| all & bits.get(i))
}

/// Hits of `contains` over `q`, and the ns per query it took.
#[inline(always)]
pub fn timed(q: &[u64], contains: impl Fn(u64) -> bool) -> (f64, u64) {
    let t = Instant::now();
    let hits: u64 = q.iter().map(|&x| u64::from(contains(black_box(x)))).sum();
    (
        t.elapsed().as_nanos() as f64 / q.len() as f64,
        black_box(hits),
    )
}

/// Time `loops` loops (`time(chunk, which)`, as [`timed`]): each group of `loops` chunks of
/// the queries gives one chunk to each, in an order that rotates from group to group (whole
/// cycles of the rotation only, so each loop runs in each place equally often). First, on the
/// last chunk (not timed), asserts that every loop finds all its members (half the chunk) and
/// loops `1..same` as many hits as loop 0. Returns each loop's ns per query, group by group.
pub fn rotate(
    queries: &[u64],
    loops: usize,
    same: usize,
    time: impl Fn(&[u64], usize) -> (f64, u64),
) -> Vec<Vec<f64>> {
    let (queries, check) = queries.split_at(queries.len() - CHUNK);
    let want = time(check, 0).1;
    for which in 0..loops {
        let hits = time(check, which).1;
        assert!(hits >= CHUNK as u64 / 2, "loop {which}: a member missed");
        if which < same {
            assert_eq!(hits, want, "loop {which}: other answers than loop 0");
        }
    }
    let groups = queries.len() / (loops * CHUNK) / loops * loops;
    let mut ns = vec![Vec::new(); loops];
    for (c, q) in queries.chunks_exact(loops * CHUNK).take(groups).enumerate() {
        for j in 0..loops {
            let which = (j + c) % loops;
            ns[which].push(time(&q[j * CHUNK..(j + 1) * CHUNK], which).0);
        }
    }
    ns
}

/// Each group's ratio of loop `a`'s time to loop `b`'s.
pub fn ratios(ns: &[Vec<f64>], a: usize, b: usize) -> Vec<f64> {
    ns[a].iter().zip(&ns[b]).map(|(x, y)| x / y).collect()
}

/// Median and interquartile range.
pub fn show(v: &mut [f64]) -> String {
    v.sort_by(f64::total_cmp);
    let at = |p: f64| v[((v.len() - 1) as f64 * p).round() as usize];
    format!("{:.3} [IQR {:.3}–{:.3}]", at(0.5), at(0.25), at(0.75))
}
