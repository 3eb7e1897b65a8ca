//! What bounds the parallel build: the same 10^7 keys inserted (1) by one thread into one
//! table with `insert_batch`, (2) by two threads, each inserting its half of the keys into a
//! table of its own of half the size with `insert_batch` (the memory traffic of a perfectly
//! split build, with no key hashed twice and no exchange), and (3) with `insert_parallel` into
//! one table. Tables pre-faulted and cleared before each round; one line per round.
//!
//! ```sh
//! cargo run --release -p bloomlab-lab --example blocked_parallel_halves [-- n rounds]
//! ```

use bloomlab_conformance::stream::splitmix64 as splitmix;
use std::time::Instant;

use bloomlab_blocked::BlockedBloomFilter;

fn main() -> bloomlab_core::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let n = args
        .get(1)
        .map_or(10_000_000, |s| s.parse::<f64>().expect("n") as u64);
    let rounds: usize = args.get(2).map_or(7, |s| s.parse().expect("rounds"));
    let mut s = 7;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut s)).collect();
    let (ka, kb) = keys.split_at(keys.len() / 2);
    let mut one = BlockedBloomFilter::with_fpr(n, 0.01)?;
    let mut ha = BlockedBloomFilter::with_fpr(n / 2, 0.01)?;
    let mut hb = BlockedBloomFilter::with_fpr(n / 2, 0.01)?;
    let mut par = BlockedBloomFilter::with_fpr(n, 0.01)?;
    // Fault every table in once.
    one.insert_batch(&keys);
    ha.insert_batch(ka);
    hb.insert_batch(kb);
    par.insert_batch(&keys);
    let per_key = |t: Instant| t.elapsed().as_secs_f64() * 1e9 / n as f64;
    for r in 0..rounds {
        for f in [&mut one, &mut ha, &mut hb, &mut par] {
            f.clear();
        }
        let t = Instant::now();
        one.insert_batch(&keys);
        let t1 = per_key(t);
        let t = Instant::now();
        std::thread::scope(|sc| {
            sc.spawn(|| ha.insert_batch(ka));
            hb.insert_batch(kb);
        });
        let t2 = per_key(t);
        let t = Instant::now();
        par.insert_parallel(&keys);
        let tp = per_key(t);
        println!(
            "round {r}: one thread {t1:.2} ns/key; two threads, a half-size table each {t2:.2} \
             (×{:.2}); insert_parallel {tp:.2} (×{:.2})",
            t1 / t2,
            t1 / tp
        );
    }
    assert_eq!(par, one, "insert_parallel is bit-identical to insert_batch");
    Ok(())
}
