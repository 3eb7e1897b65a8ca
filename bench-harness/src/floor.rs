//! The memory floor: the cost of one independent random 64-byte read over a buffer as large
//! as the filter. A lookup that touches one cache line cannot beat it without batching.

use crate::control::ThreadClock;
use crate::stats::median;
use std::hint::black_box;

/// Median ns per independent random cache-line read over `bytes` bytes (at least 4 KiB).
pub fn random_read_ns(bytes: usize, reads: usize, passes: usize, seed: u64) -> f64 {
    let lines = bytes.div_ceil(64).max(64);
    // 8 u64 per 64-byte line; touch every page so the buffer is really there.
    let buf: Vec<u64> = (0..lines * 8).map(|i| i as u64).collect();
    let offsets = line_offsets(lines, reads, seed);
    let mut times = Vec::with_capacity(passes);
    for _ in 0..passes.max(1) {
        let start = ThreadClock::start();
        let mut sum = 0u64;
        for &o in &offsets {
            // Independent loads: the address never depends on an earlier load.
            sum = sum.wrapping_add(buf[o as usize * 8]);
        }
        black_box(sum);
        times.push(start.elapsed().as_nanos() as f64 / reads as f64);
    }
    median(&times)
}

/// `reads` random line indexes in `0..lines` (splitmix64 from `seed`, then a multiply-shift
/// into range).
pub fn line_offsets(lines: usize, reads: usize, seed: u64) -> Vec<u32> {
    let mut x = seed | 1;
    (0..reads)
        .map(|_| {
            // splitmix64
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (((z >> 32) * lines as u64) >> 32) as u32
        })
        .collect()
}

/// A random cyclic permutation of `0..lines` (Sattolo's algorithm): `next[i]` is the line
/// after `i`, and following it from any line visits every line once before returning.
pub fn chase_cycle(lines: usize, seed: u64) -> Vec<usize> {
    let mut next: Vec<usize> = (0..lines).collect();
    let mut x = seed | 1;
    for i in (1..lines).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let j = (x % i as u64) as usize;
        next.swap(i, j);
    }
    next
}

/// Median ns per *dependent* random cache-line read (a pointer chase through a random cycle
/// over `bytes` bytes): the latency one lookup pays when nothing overlaps it.
pub fn dependent_read_ns(bytes: usize, reads: usize, passes: usize, seed: u64) -> f64 {
    let lines = bytes.div_ceil(64).max(64);
    // One cycle through every line, each line's first word holds the next.
    let next = chase_cycle(lines, seed);
    let mut buf = vec![0u64; lines * 8];
    for (i, &n) in next.iter().enumerate() {
        buf[i * 8] = n as u64;
    }
    drop(next);
    let mut times = Vec::with_capacity(passes);
    let mut at = 0usize;
    for _ in 0..passes.max(1) {
        let start = ThreadClock::start();
        for _ in 0..reads {
            at = buf[at * 8] as usize;
        }
        black_box(at);
        times.push(start.elapsed().as_nanos() as f64 / reads as f64);
    }
    median(&times)
}
