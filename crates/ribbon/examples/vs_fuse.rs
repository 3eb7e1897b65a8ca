//! Ribbon against xorf's BinaryFuse8 in one process: build ns/key and lookup ns/op, the two
//! filters' passes interleaved round by round; prints each round's ratio and the median and
//! range over rounds, plus bits/key and measured FPR. Ribbon's batched lookup
//! ([`RibbonFilter::count_contained`], prefetching) runs just before the two single-key
//! passes of each round and is compared with BinaryFuse8's single-key pass (xorf has no
//! batched lookup).
//!
//! `cargo run --release -p bloomlab-ribbon --example vs_fuse [-- n rounds target]`
//! (defaults: 10^7 keys, 7 rounds, 1 % target).
use bloomlab_conformance::stream::{half_members, splitmix64 as splitmix};
use std::hint::black_box;
use std::time::Instant;

use bloomlab_ribbon::RibbonFilter;
use xorf::{BinaryFuse8, Filter as _};

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u64 = args
        .get(1)
        .map_or(10_000_000, |s| s.parse::<f64>().unwrap() as u64);
    let rounds: usize = args.get(2).map_or(7, |s| s.parse().unwrap());
    let target: f64 = args.get(3).map_or(0.01, |s| s.parse().unwrap());
    let mut st = 42u64;
    let keys: Vec<u64> = (0..n).map(|_| splitmix(&mut st)).collect();
    // Lookups: 2·10^6 keys, half members, in random order.
    let lookups: Vec<u64> = half_members(&keys, 2_000_000, &mut st);
    let (mut build_ratio, mut lookup_ratio) = (Vec::new(), Vec::new());
    let (mut batch_ratio, mut rbl) = (Vec::new(), Vec::new());
    let (mut rb, mut fb, mut rl, mut fl) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    println!(
        "round\tribbon build ns/key\tfuse8 build ns/key\tratio\tribbon ns/lookup\tfuse8 ns/lookup\tratio\tribbon batch ns/lookup\tratio"
    );
    let mut last = None;
    for round in 0..rounds {
        // Alternate which filter goes first so neither always runs on a warmer machine.
        let ribbon_first = round % 2 == 0;
        let mut tr = 0.0;
        let mut tf = 0.0;
        let mut ribbon = None;
        let mut fuse = None;
        for pass in 0..2 {
            if (pass == 0) == ribbon_first {
                let t = Instant::now();
                ribbon = Some(RibbonFilter::build(&keys, target).unwrap());
                tr = t.elapsed().as_nanos() as f64 / n as f64;
            } else {
                let t = Instant::now();
                fuse = Some(BinaryFuse8::try_from(&keys[..]).unwrap());
                tf = t.elapsed().as_nanos() as f64 / n as f64;
            }
        }
        let (ribbon, fuse) = (ribbon.unwrap(), fuse.unwrap());
        let mut qr = 0.0;
        let mut qf = 0.0;
        let t = Instant::now();
        black_box(ribbon.count_contained(&lookups));
        let qb = t.elapsed().as_nanos() as f64 / lookups.len() as f64;
        for pass in 0..2 {
            if (pass == 0) == ribbon_first {
                let t = Instant::now();
                let hits = lookups.iter().filter(|k| ribbon.might_contain(*k)).count();
                qr = t.elapsed().as_nanos() as f64 / lookups.len() as f64;
                black_box(hits);
            } else {
                let t = Instant::now();
                let hits = lookups.iter().filter(|k| fuse.contains(*k)).count();
                qf = t.elapsed().as_nanos() as f64 / lookups.len() as f64;
                black_box(hits);
            }
        }
        println!(
            "{round}\t{tr:.1}\t{tf:.1}\t{:.2}\t{qr:.1}\t{qf:.1}\t{:.2}\t{qb:.1}\t{:.2}",
            tr / tf,
            qr / qf,
            qb / qf
        );
        batch_ratio.push(qb / qf);
        rbl.push(qb);
        build_ratio.push(tr / tf);
        lookup_ratio.push(qr / qf);
        rb.push(tr);
        fb.push(tf);
        rl.push(qr);
        fl.push(qf);
        last = Some((ribbon, fuse));
    }
    let range = |v: &[f64]| {
        let lo = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = v.iter().cloned().fold(0.0, f64::max);
        format!("{lo:.2}–{hi:.2}")
    };
    println!(
        "build ribbon/fuse8: median {:.2} (range {}), ns/key ribbon {:.1} fuse8 {:.1}",
        median(&mut build_ratio.clone()),
        range(&build_ratio),
        median(&mut rb),
        median(&mut fb)
    );
    println!(
        "lookup ribbon/fuse8: median {:.2} (range {}), ns/op ribbon {:.1} fuse8 {:.1}",
        median(&mut lookup_ratio.clone()),
        range(&lookup_ratio),
        median(&mut rl),
        median(&mut fl)
    );
    println!(
        "batched lookup ribbon/fuse8: median {:.2} (range {}), ns/op ribbon {:.1}",
        median(&mut batch_ratio.clone()),
        range(&batch_ratio),
        median(&mut rbl)
    );
    let (ribbon, fuse) = last.unwrap();
    let probes = 2_000_000u64;
    let mut fp_r = 0u64;
    let mut fp_f = 0u64;
    for _ in 0..probes {
        let k = splitmix(&mut st);
        fp_r += u64::from(ribbon.might_contain(&k));
        fp_f += u64::from(fuse.contains(&k));
    }
    let eps_r = fp_r as f64 / probes as f64;
    let eps_f = fp_f as f64 / probes as f64;
    let bpk_r = ribbon.bits_per_item();
    let bpk_f = fuse.fingerprints.len() as f64 * 8.0 / n as f64;
    println!(
        "ribbon: r = {}, {bpk_r:.3} bits/key, ε = {:.4} % (2^-r = {:.4} %), bits / log2(1/ε) = {:.3}, seed {}",
        ribbon.result_bits(),
        eps_r * 100.0,
        ribbon.expected_fpr() * 100.0,
        bpk_r / (1.0 / eps_r).log2(),
        ribbon.seed()
    );
    println!(
        "fuse8: {bpk_f:.3} bits/key, ε = {:.4} %, bits / log2(1/ε) = {:.3}",
        eps_f * 100.0,
        bpk_f / (1.0 / eps_f).log2()
    );
}
