//! One lookup of each design as a function of its own (`#[inline(never)]`), for reading the
//! compiled kernels and for static throughput analysis of targets we cannot run: the blocked
//! filter's inline kernel with its block chosen by fastrange, our split-block kernel the same
//! way, and sbbf-rs-safe's `contains_hash` (its run-time chosen kernel, a call through a trait
//! object). `docs/design/simd.md` gives the commands that cross-compile it for aarch64 and feed
//! each function's body to `llvm-mca` for Neoverse cores.
//!
//! ```sh
//! cargo build --release -p bloomlab-lab --example kernel_asm --target aarch64-unknown-linux-gnu
//! ```
//!
//! Run natively it checks that the three answer like their portable definitions on a few
//! keys, so the functions stay honest.

use std::hint::black_box;

use bloomlab_core::simd::{
    self, InlineKernel, Lines, LocalKernel, PARQUET_SALTS, SplitBlockKernel,
};

/// The blocked filter's inline lookup: block by fastrange of the hash's high half, the inline
/// kernel on the low half (`None` where no inline kernel serves `k`).
#[inline(never)]
pub fn blocked_lookup(lines: &Lines, fast: InlineKernel, x: u64) -> Option<bool> {
    fast.contains(&lines.fastrange((x >> 32) as u32).0, x as u32)
}

/// Our split-block lookup: Parquet's block choice, the chosen kernel.
#[inline(never)]
pub fn split_lookup(blocks: &[[u32; 8]], kernel: SplitBlockKernel, x: u64) -> bool {
    let i = (((x >> 32) * blocks.len() as u64) >> 32) as usize;
    kernel.contains(&blocks[i], x as u32, &PARQUET_SALTS)
}

/// sbbf-rs-safe's lookup of a pre-computed hash.
#[inline(never)]
pub fn sbbf_rs_lookup(f: &sbbf_rs_safe::Filter, x: u64) -> bool {
    f.contains_hash(x)
}

fn main() {
    let k = 6;
    let mut lines = simd::zeroed_lines(64).expect("64 lines");
    let kernel = LocalKernel::detect(k);
    let fast = InlineKernel::of(kernel);
    let mut blocks = vec![[0u32; 8]; 128];
    let split = SplitBlockKernel::detect();
    let mut sbbf_rs = sbbf_rs_safe::Filter::new(128 * 256, 1);
    let keys: Vec<u64> = (1..=200u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    for &x in &keys[..100] {
        kernel.insert(&mut lines.fastrange_mut((x >> 32) as u32).0, x as u32, k);
        let i = (((x >> 32) * blocks.len() as u64) >> 32) as usize;
        simd::split_block_insert_scalar(&mut blocks[i], x as u32, &PARQUET_SALTS);
        sbbf_rs.insert_hash(x);
    }
    let mut hits = [0u32; 3];
    for &x in &keys {
        let line = &lines.fastrange((x >> 32) as u32).0;
        let want = simd::local_contains_scalar(line, x as u32, k);
        if let Some(hit) = blocked_lookup(black_box(&lines), fast, x) {
            assert_eq!(hit, want);
        }
        hits[0] += u32::from(want);
        let hit = split_lookup(black_box(&blocks), split, x);
        let i = (((x >> 32) * blocks.len() as u64) >> 32) as usize;
        assert_eq!(
            hit,
            simd::split_block_contains_scalar(&blocks[i], x as u32, &PARQUET_SALTS)
        );
        hits[1] += u32::from(hit);
        hits[2] += u32::from(sbbf_rs_lookup(black_box(&sbbf_rs), x));
    }
    println!(
        "inline kernel {}, split-block kernel {}; hits over 100 members and 100 others: {hits:?}",
        fast.name(),
        split.name()
    );
}
