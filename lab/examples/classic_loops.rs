//! The classic filter's single-lookup loops side by side out of cache: the filter's own
//! `might_contain` (past 2 MiB of bits the textbook loop: stop at the first zero bit), the
//! loop it replaced (two probes read together, one branch, then the rest branch-free), every
//! probe read without a branch — the last two each over its own copy of the same bits, so
//! that no loop finds lines another fetched — the textbook loop over a table built with one
//! XXH3-64 per key and the stride derived from it by a multiply (another scheme, its own
//! table), and fastbloom 0.17 given foldhash (the same design, its own table of the same
//! size). Queries half members; each group of five chunks of 32 768 queries gives one chunk to
//! each of the five, in an order that rotates from group to group; a figure is the median of
//! the per-group ratios to fastbloom, with its interquartile range.
//!
//! ```sh
//! cargo run --release -p bloomlab-lab --example classic_loops [-- n ...]   # default 10^7, 3·10^7
//! ```

mod loops;

use bloomlab_classic::BloomFilter;
use bloomlab_core::bits::BitArray;
use bloomlab_core::hash::{HashScheme, KeyHash, Xxh3Scheme};
use loops::{
    branch_free, keys_and_queries, ratios, rotate, show, sizes, textbook, timed, two_then_rest,
};

fn main() {
    for n in sizes(&[10_000_000, 30_000_000]) {
        let (keys, queries) = keys_and_queries(n);
        let mut ours = BloomFilter::with_fpr(n, 0.01).expect("size");
        keys.iter().for_each(|key| {
            ours.insert(key);
        });
        let (m, k) = (ours.bit_array().len(), ours.hashes());
        let mut fb = fastbloom::BloomFilter::with_num_bits(m as usize)
            .hasher(foldhash::fast::FixedState::with_seed(7))
            .hashes(k);
        keys.iter().for_each(|key| {
            fb.insert(key);
        });
        // Two more copies of the same bits, one per loop written out here.
        let (copy_t, copy_b) = (ours.bit_array().clone(), ours.bit_array().clone());
        // The same bits' size and k, built with one XXH3-64 per key and the stride derived from
        // it by a multiply (an experiment: another scheme, so its own table).
        let cheap = |key: u64| {
            let x = Xxh3Scheme.hash64(&key.to_le_bytes());
            KeyHash::new(x, x.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
        };
        let mut copy_c = BitArray::new(m).expect("size");
        for key in &keys {
            for i in cheap(*key).positions(k, m) {
                copy_c.set(i);
            }
        }
        let scheme = Xxh3Scheme;
        let hash = |key: u64| scheme.hash(&key.to_le_bytes());
        let time = |q: &[u64], which: usize| match which {
            0 => timed(q, |x| ours.might_contain(&x)),
            1 => timed(q, |x| two_then_rest(&copy_t, hash(x), k)),
            2 => timed(q, |x| branch_free(&copy_b, hash(x), k)),
            3 => timed(q, |x| textbook(&copy_c, cheap(x), k)),
            _ => timed(q, |x| fb.contains(&x)),
        };
        let ns = rotate(&queries, 5, 3, time);
        for (w, name) in ["this filter", "two-then-rest", "branch-free", "xxh3-64 tb"]
            .iter()
            .enumerate()
        {
            let mut r = ratios(&ns, w, 4);
            println!(
                "n = {n}: {name:<12} ÷ fastbloom {} ({} groups)",
                show(&mut r),
                r.len()
            );
        }
    }
}
