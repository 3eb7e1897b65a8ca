//! Lookups and inserts of the grown filter beside a cuckoo filter built for the final size,
//! timed in interleaved rounds within one process (medians of the per-round ratios):
//! `cargo run --release -p bloomlab-lab --example expandable_speed -- 1000 1024000 0.01`.

use std::hint::black_box;
use std::time::Instant;

use bloomlab_cuckoo::CuckooFilter;
use bloomlab_expandable::ExpandableFilter;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: start end target"))
        .collect();
    let (start, end, p) = match args[..] {
        [s, e, p] => (s as u64, e as u64, p),
        _ => (1000, 1_024_000, 0.01),
    };
    // Half members, half non-members, in a scrambled order.
    let probes: Vec<u64> = (0..1u64 << 20)
        .map(|i| {
            let x = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            if x >> 63 == 0 { x % end } else { x | 1 << 62 }
        })
        .collect();
    let (mut lookups, mut inserts) = (Vec::new(), Vec::new());
    let mut sink = 0usize;
    for _ in 0..5 {
        let t = Instant::now();
        let mut e = ExpandableFilter::with_fpr(start, p).expect("valid");
        for i in 0..end {
            e.insert(&i).expect("grows");
        }
        let te = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut c = CuckooFilter::with_fpr(end, p).expect("valid");
        for i in 0..end {
            c.insert(&i).expect("fits");
        }
        let tc = t.elapsed().as_secs_f64();
        inserts.push(te / tc);
        let t = Instant::now();
        sink += probes.iter().filter(|k| e.might_contain(*k)).count();
        let le = t.elapsed().as_secs_f64();
        let t = Instant::now();
        sink += probes.iter().filter(|k| c.might_contain(*k)).count();
        let lc = t.elapsed().as_secs_f64();
        lookups.push(le / lc);
        println!(
            "round: lookups {:.1} / {:.1} ns, inserts {:.1} / {:.1} ns",
            le * 1e9 / probes.len() as f64,
            lc * 1e9 / probes.len() as f64,
            te * 1e9 / end as f64,
            tc * 1e9 / end as f64
        );
    }
    black_box(sink);
    println!(
        "median ratios, expandable / cuckoo: lookups {:.2}, inserts {:.2}",
        median(lookups),
        median(inserts)
    );
}
