//! The atomic filter's single-thread cost against the ordinary filter (and fastbloom's
//! `AtomicBloomFilter` with foldhash), insert throughput with 1 and 2 threads, and the
//! parallel build against the sequential one — as ratios within rounds, the contenders'
//! passes interleaved (the machine is shared and noisy).
//!
//! ```sh
//! cargo run --release -p bloomlab-blocked --example concurrent               # n = 10^6, 10^7
//! ROUNDS=9 cargo run --release -p bloomlab-blocked --example concurrent -- 10000000
//! ```

use bloomlab_conformance::stream::splitmix64 as splitmix;
use std::hint::black_box;
use std::time::Instant;

use bloomlab_blocked::{AtomicBlockedBloomFilter, BlockedBloomFilter, available_threads};

fn time(ops: usize, f: impl FnOnce() -> u64) -> f64 {
    let t = Instant::now();
    black_box(f());
    t.elapsed().as_nanos() as f64 / ops as f64
}

fn median(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[0], v[v.len() / 2], v[v.len() - 1])
}

fn main() {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7);
    let ns: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let ns = if ns.is_empty() {
        vec![1_000_000, 10_000_000]
    } else {
        ns
    };
    let threads = available_threads();
    println!("cores available: {threads}; rounds: {rounds}");
    for n in ns {
        let mut s = 42u64;
        let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut s)).collect();
        let queries: Vec<u64> = (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    keys[i]
                } else {
                    splitmix(&mut s)
                }
            })
            .collect();
        let mut owned = BlockedBloomFilter::with_fpr(n as u64, 0.01).unwrap();
        owned.insert_batch(&keys);
        let atomic = AtomicBlockedBloomFilter::try_from(owned.clone()).unwrap();
        let fb = fastbloom::AtomicBloomFilter::with_false_pos(0.01)
            .hasher(foldhash::fast::FixedState::with_seed(0))
            .expected_items(n);
        keys.iter().for_each(|k| {
            let _ = fb.insert(k);
        });
        let mut r: Vec<Vec<f64>> = vec![Vec::new(); 8];
        for round in 0..rounds {
            let mut order: Vec<usize> = (0..6).collect();
            order.rotate_left(round % 6);
            let mut t = [0.0; 6];
            for &c in &order {
                t[c] = match c {
                    0 => time(n, || {
                        queries.iter().filter(|k| owned.might_contain(*k)).count() as u64
                    }),
                    1 => time(n, || {
                        queries.iter().filter(|k| atomic.might_contain(*k)).count() as u64
                    }),
                    2 => time(n, || {
                        queries.iter().filter(|k| fb.contains(*k)).count() as u64
                    }),
                    3 => {
                        let mut f = BlockedBloomFilter::with_fpr(n as u64, 0.01).unwrap();
                        let x = time(n, || {
                            keys.iter().for_each(|k| {
                                let _ = f.insert(k);
                            });
                            f.len()
                        });
                        black_box(&f);
                        x
                    }
                    5 => {
                        let f = fastbloom::AtomicBloomFilter::with_false_pos(0.01)
                            .hasher(foldhash::fast::FixedState::with_seed(0))
                            .expected_items(n);
                        time(n, || {
                            keys.iter().for_each(|k| {
                                f.insert(k);
                            });
                            1
                        })
                    }
                    _ => {
                        let f = AtomicBlockedBloomFilter::with_fpr(n as u64, 0.01).unwrap();
                        time(n, || {
                            keys.iter().for_each(|k| {
                                let _ = f.insert(k);
                            });
                            f.len()
                        })
                    }
                };
            }
            r[0].push(t[1] / t[0]);
            r[1].push(t[2] / t[1]);
            r[2].push(t[4] / t[3]);
            r[7].push(t[5] / t[4]);
            // Build: sequential insert_batch vs insert_parallel, and atomic with 2 threads.
            let mut b = [0.0; 3];
            let mut order: Vec<usize> = (0..3).collect();
            order.rotate_left(round % 3);
            for &c in &order {
                b[c] = match c {
                    0 => {
                        let mut f = BlockedBloomFilter::with_fpr(n as u64, 0.01).unwrap();
                        time(n, || {
                            f.insert_batch(&keys);
                            f.len()
                        })
                    }
                    1 => {
                        let mut f = BlockedBloomFilter::with_fpr(n as u64, 0.01).unwrap();
                        time(n, || {
                            f.insert_parallel(&keys);
                            f.len()
                        })
                    }
                    _ => {
                        let f = AtomicBlockedBloomFilter::with_fpr(n as u64, 0.01).unwrap();
                        time(n, || {
                            std::thread::scope(|s| {
                                for run in keys.chunks(n.div_ceil(2)) {
                                    let f = &f;
                                    s.spawn(move || {
                                        run.iter().for_each(|k| {
                                            let _ = f.insert(k);
                                        })
                                    });
                                }
                            });
                            f.len()
                        })
                    }
                };
            }
            r[3].push(b[0] / b[1]);
            r[4].push(t[4] / b[2]);
            r[5].push(b[0]);
            r[6].push(b[1]);
        }
        let show = |name: &str, v: &Vec<f64>| {
            let (lo, mid, hi) = median(v.clone());
            println!("n = {n:>9}  {name:<44} {mid:6.3}  ({lo:.3}–{hi:.3})");
        };
        show("atomic lookup ÷ blocked lookup", &r[0]);
        show("fastbloom-atomic lookup ÷ atomic lookup", &r[1]);
        show("atomic insert ÷ blocked insert", &r[2]);
        show("fastbloom-atomic insert ÷ atomic insert", &r[7]);
        show("build: insert_batch ÷ insert_parallel", &r[3]);
        show("atomic inserts: 2 threads' rate ÷ 1 thread's", &r[4]);
        show("build ns/key, insert_batch (1 thread)", &r[5]);
        show("build ns/key, insert_parallel", &r[6]);
    }
}
