//! The keyed classic filter's single-lookup loops side by side out of cache, against fastbloom
//! 0.17's default (SipHash-1-3 under a random key; the same design): the filter's own
//! `might_contain` (past 2 MiB of bits the textbook loop, stopping at the first zero bit),
//! every probe read without a branch, and two probes read together then one branch, then the
//! rest branch-free — each over its own copy of the same bits (so no loop finds lines
//! another fetched), or with `SHARED=1` over the filter's own, all under [`Sip64Scheme`]. Queries half members; each group of four
//! chunks of 32 768 queries gives one chunk to each loop, in an order that rotates from group
//! to group; a figure is the median of the per-group ratios to fastbloom, with its
//! interquartile range.
//!
//! ```sh
//! cargo run --release -p bloomlab-lab --example keyed_loops [-- n ...]   # default 10^6, 10^7
//! ```

mod loops;

use bloomlab_classic::BloomFilter;
use bloomlab_core::hash::HashScheme;
use bloomlab_keyed::Sip64Scheme;
use loops::{branch_free, keys_and_queries, ratios, rotate, show, sizes, timed, two_then_rest};

fn main() {
    for n in sizes(&[1_000_000, 10_000_000]) {
        let (keys, queries) = keys_and_queries(n);
        let scheme = Sip64Scheme::from_secret(*b"keyed loops 2026");
        let mut ours = BloomFilter::with_fpr_and_scheme(n, 0.01, scheme.clone()).expect("size");
        keys.iter().for_each(|key| {
            ours.insert(key);
        });
        let (m, k) = (ours.bit_array().len(), ours.hashes());
        let mut fb = fastbloom::BloomFilter::with_num_bits(m as usize).hashes(k);
        keys.iter().for_each(|key| {
            fb.insert(key);
        });
        // `SHARED=1`: the three loops read the filter's own bits (23 MiB with fastbloom's at
        // 10^7, which the 32 MiB L3 can hold, as after the harness's warm-up pass); else each
        // its own copy.
        let shared = std::env::var("SHARED").is_ok_and(|v| v == "1");
        let copies = (!shared).then(|| (ours.bit_array().clone(), ours.bit_array().clone()));
        let (copy_b, copy_t) = match &copies {
            Some((b, t)) => (b, t),
            None => (ours.bit_array(), ours.bit_array()),
        };
        let hash = |key: u64| scheme.hash(&key.to_le_bytes());
        let time = |q: &[u64], which: usize| match which {
            0 => timed(q, |x| ours.might_contain(&x)),
            1 => timed(q, |x| branch_free(copy_b, hash(x), k)),
            2 => timed(q, |x| two_then_rest(copy_t, hash(x), k)),
            _ => timed(q, |x| fb.contains(&x)),
        };
        let ns = rotate(&queries, 4, 3, time);
        let names = [
            "this filter",
            "branch-free",
            "two-then-rest",
            "fastbloom-sip",
        ];
        for (w, name) in names[..3].iter().enumerate() {
            let mut r = ratios(&ns, w, 3);
            println!(
                "n = {n}: {name:<13} ÷ fastbloom-sip {} ({} groups)",
                show(&mut r),
                r.len()
            );
        }
        for (name, a) in names.iter().zip(&ns) {
            println!("n = {n}: {name:<13} ns/lookup {}", show(&mut a.clone()));
        }
    }
}
