//! Lookups of an expandable filter grown from n/1024 to n keys beside a cuckoo filter built
//! for n, both through `might_contain` on u64 keys (half members), in interleaved rounds:
//! `cargo run --release -p bloomlab-lab --example expandable_lookup_prof -- 1e7 0.01`.
//! With a third argument `exp` (or `cuc`) it runs only the expandable (or cuckoo) filter's
//! lookups, for `perf`.

use std::hint::black_box;
use std::time::Instant;

use bloomlab_cuckoo::CuckooFilter;
use bloomlab_expandable::ExpandableFilter;

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51afd7ed558ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ceb9fe1a85ec53);
    x ^ (x >> 33)
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let n: u64 = a[0].parse::<f64>().unwrap() as u64;
    let p: f64 = a[1].parse().unwrap();
    let mode = a.get(2).cloned().unwrap_or_default();
    let rounds: usize = a.get(3).map(|s| s.parse().unwrap()).unwrap_or(11);
    let keys: Vec<u64> = (0..n).map(|i| mix(i ^ 0x1234_5678)).collect();
    let t = Instant::now();
    let mut e = ExpandableFilter::with_fpr(n / 1024, p).unwrap();
    for k in &keys {
        e.insert(k).unwrap();
    }
    eprintln!(
        "grown in {:.1}s: level {} split {} W {} stash {} load {:.3} bytes {}",
        t.elapsed().as_secs_f64(),
        e.level(),
        e.split_buckets(),
        e.slot_bits(),
        e.stash_len(),
        e.load(),
        e.table().size_in_bytes()
    );
    let mut c = CuckooFilter::with_fpr(n, p).unwrap();
    for k in &keys {
        c.insert(k).unwrap();
    }
    eprintln!("cuckoo bytes {}", c.table().size_in_bytes());
    let stream: Vec<u64> = (0..1u64 << 20)
        .map(|i| {
            let x = mix(i ^ 0xabcdef);
            if x & 1 == 0 {
                keys[(x >> 1) as usize % keys.len()]
            } else {
                mix(x) | 1
            }
        })
        .collect();
    if mode == "exp" {
        let mut s = 0;
        for _ in 0..rounds {
            s += stream.iter().filter(|k| e.might_contain(*k)).count();
        }
        black_box(s);
        return;
    }
    if mode == "cuc" {
        let mut s = 0;
        for _ in 0..rounds {
            s += stream.iter().filter(|k| c.might_contain(*k)).count();
        }
        black_box(s);
        return;
    }
    let mut r = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let se = stream.iter().filter(|k| e.might_contain(*k)).count();
        let te = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let sc = stream.iter().filter(|k| c.might_contain(*k)).count();
        let tc = t.elapsed().as_secs_f64();
        black_box((se, sc));
        r.push(te / tc);
        eprintln!(
            "{:.1} / {:.1} ns  {:.3}",
            te * 1e9 / stream.len() as f64,
            tc * 1e9 / stream.len() as f64,
            te / tc
        );
    }
    r.sort_by(f64::total_cmp);
    println!("median expandable/cuckoo {:.3}", r[r.len() / 2]);
}
