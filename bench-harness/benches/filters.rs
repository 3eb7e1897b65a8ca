//! Criterion benches: insert, hit and miss for every registered filter at 1 % and 10^6 items,
//! hashing included. Every op runs over a stream of distinct keys (never one fixed key); the
//! timed loops are the harness's own monomorphised loops, so `cargo bench` and `run` agree.

#![forbid(unsafe_code)]

use std::time::Duration;

use bench_harness::adapters::{self, Spec};
use bench_harness::keys::{KeySet, Keys};
use criterion::{Criterion, criterion_group, criterion_main};

const N: usize = 1_000_000;

/// Time `iters` operations as passes over `stream`, chunk by chunk.
fn over_stream(iters: u64, stream: &Keys, mut pass: impl FnMut(&Keys) -> Duration) -> Duration {
    let mut left = iters as usize;
    let mut total = Duration::ZERO;
    while left > 0 {
        let chunk = left.min(stream.len());
        let part = if chunk == stream.len() {
            stream.clone()
        } else {
            stream.slice(0..chunk)
        };
        total += pass(&part);
        left -= chunk;
    }
    total
}

fn filters(c: &mut Criterion) {
    let keys = KeySet::new(0x5EED_B100, N, N);
    let hits = Keys::from_u64s(&keys.lookup_stream(1, N, 100));
    let misses = Keys::from_u64s(&keys.lookup_stream(1, N, 0));
    let members = Keys::from_u64s(&keys.members);
    let spec = Spec {
        n: N as u64,
        fpr: 0.01,
        seed: 0x5EED_B100,
    };
    for e in adapters::registry() {
        let name = if e.info.peer {
            format!("{} (peer)", e.info.name)
        } else {
            e.info.name.to_string()
        };
        let mut g = c.benchmark_group(format!("{name} @1% n=10^6"));
        g.sample_size(10)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2));
        g.bench_function("insert", |b| {
            b.iter_custom(|iters| {
                if e.info.dynamic {
                    over_stream(iters, &members, |chunk| {
                        e.time_inserts(&spec, chunk)
                            .expect("dynamic")
                            .expect("construct")
                    })
                } else {
                    // Static filters are built from the whole set: cost per key of builds.
                    let builds = (iters as usize).div_ceil(N).max(1);
                    let t: Duration = (0..builds)
                        .map(|_| e.build(&spec, &members).expect("build").elapsed)
                        .sum();
                    t.mul_f64(iters as f64 / (builds * N) as f64)
                }
            })
        });
        let built = e.build(&spec, &members).expect("build");
        g.bench_function("hit", |b| {
            b.iter_custom(|iters| over_stream(iters, &hits, |s| built.filter.time_lookups(s).0))
        });
        g.bench_function("miss", |b| {
            b.iter_custom(|iters| over_stream(iters, &misses, |s| built.filter.time_lookups(s).0))
        });
        g.finish();
    }
}

criterion_group!(benches, filters);
criterion_main!(benches);
