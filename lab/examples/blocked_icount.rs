//! Instruction counts per operation, for `valgrind --tool=callgrind` (noise-free): run it
//! twice with different operation counts and divide the difference of the totals by the
//! difference of the counts, so set-up cost cancels.
//!
//! ```sh
//! cargo build --release -p bloomlab-lab --example blocked_icount
//! valgrind --tool=callgrind target/release/examples/blocked_icount lookup 100000
//! valgrind --tool=callgrind target/release/examples/blocked_icount lookup 200000
//! ```
//!
//! Operations (filters of 2 000 keys at 1 %, so in L1): `lookup`, `insert`, `batch`
//! (`might_contain_batch`), `sbbf-lookup`, `sbbf-insert`, `classic-lookup`, `atomic-lookup`,
//! `atomic-insert` ([`AtomicBlockedBloomFilter`]).

use std::hint::black_box;

use bloomlab_blocked::{AtomicBlockedBloomFilter, BlockedBloomFilter};
use bloomlab_classic::BloomFilter;
use xxhash_rust::xxh3::xxh3_64;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let op = args.get(1).map(String::as_str).unwrap_or("lookup");
    let ops: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let n = 2_000u64;
    let mut blocked = BlockedBloomFilter::with_fpr(n, 0.01).expect("sized");
    let mut classic = BloomFilter::with_fpr(n, 0.01).expect("sized");
    let mut sbbf = sbbf_rs_safe::Filter::new(blocked.bits() as usize, 1);
    for i in 0..n {
        blocked.insert(&i);
        classic.insert(&i);
        sbbf.insert_hash(xxh3_64(&i.to_le_bytes()));
    }
    let keys: Vec<u64> = (0..ops)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let mut hits = 0u64;
    match op {
        "lookup" => {
            for k in &keys {
                hits += u64::from(blocked.might_contain(black_box(k)));
            }
        }
        "insert" => {
            for k in &keys {
                hits += u64::from(blocked.insert(black_box(k)));
            }
        }
        "batch" => {
            let mut out = vec![false; keys.len()];
            blocked
                .might_contain_batch(&keys, &mut out)
                .expect("lengths");
            hits = out.iter().filter(|&&b| b).count() as u64;
        }
        "sbbf-lookup" => {
            for k in &keys {
                hits += u64::from(sbbf.contains_hash(xxh3_64(&black_box(*k).to_le_bytes())));
            }
        }
        "sbbf-insert" => {
            for k in &keys {
                hits += u64::from(sbbf.insert_hash(xxh3_64(&black_box(*k).to_le_bytes())));
            }
        }
        "atomic-lookup" => {
            let atomic = AtomicBlockedBloomFilter::try_from(blocked.clone()).expect("Local32");
            for k in &keys {
                hits += u64::from(atomic.might_contain(black_box(k)));
            }
        }
        "atomic-insert" => {
            let atomic = AtomicBlockedBloomFilter::try_from(blocked.clone()).expect("Local32");
            for k in &keys {
                hits += u64::from(atomic.insert(black_box(k)));
            }
        }
        "classic-lookup" => {
            for k in &keys {
                hits += u64::from(classic.might_contain(black_box(k)));
            }
        }
        other => panic!("unknown operation {other}"),
    }
    println!("{op} {ops} {hits}");
}
