//! Extension exercise 2, measured: start a scalable filter at `n0`, grow it to 1024·n0, and
//! at every doubling measure the compound FPR on 10^6 fresh non-members against the formula
//! and the target. Then bits/item and lookup time after growth against a classic filter
//! sized for the final `n` (ratios within one run).
//!
//! `cargo run --release -p bloomlab-scalable --example growth [n0]`

use std::time::Instant;

use bloomlab_classic::BloomFilter;
use bloomlab_core::{Error, Filter};
use bloomlab_scalable::{ScalableBloomFilter, ScalableConfig};

/// splitmix64 over (seed, i): a fixed-seed stream of distinct keys.
fn key(seed: u64, i: u64) -> u64 {
    let mut z = seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(i.wrapping_mul(0xbf58_476d_1ce4_e5b9));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const MEMBERS: u64 = 1;

fn main() -> Result<(), Error> {
    let n0: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("n0 must be an integer"))
        .unwrap_or(10_000);
    let p = 0.01;
    let probes = 1_000_000u64;
    for (growth, tightening) in [(2u32, 0.5), (2, 0.85)] {
        let config = ScalableConfig::new(n0, p)
            .growth(growth)
            .tightening(tightening);
        let mut f = ScalableBloomFilter::with_config(config)?;
        println!(
            "\n## Growth from n0 = {n0} to 1024·n0 (target {:.1} %, s = {growth}, r = {tightening})\n",
            100.0 * p
        );
        println!(
            "| growth | n | stages | formula (compound) | measured FPR (10^6 probes) | 5σ | target = bound | bits/item | classic sized for this n |"
        );
        println!("|---|---|---|---|---|---|---|---|---|");
        let mut inserted = 0u64;
        for doubling in 0..=10u32 {
            let n = n0 << doubling;
            while inserted < n {
                f.insert(&key(MEMBERS, inserted))?;
                inserted += 1;
            }
            let probe_seed = 101 + u64::from(doubling);
            let fp = (0..probes)
                .filter(|&i| f.might_contain(&key(probe_seed, i)))
                .count() as f64;
            let e = f.expected_fpr();
            let sigma = (probes as f64 * e * (1.0 - e)).sqrt();
            println!(
                "| {}× | {n} | {} | {:.4} % | {:.4} % | ±{:.4} % | {:.1} % | {:.2} | {:.2} |",
                1u64 << doubling,
                f.stages(),
                100.0 * e,
                100.0 * fp / probes as f64,
                100.0 * 5.0 * sigma / probes as f64,
                100.0 * p,
                f.bits_per_item(),
                bloomlab_core::math::classic_bits(n, p)? as f64 / n as f64
            );
        }
        let lost = (0..inserted)
            .filter(|&i| !f.might_contain(&key(MEMBERS, i)))
            .count();
        assert_eq!(lost, 0);

        // Lookups after growth vs a classic filter sized for the final n (same run).
        let mut classic = BloomFilter::with_fpr(inserted, p)?;
        for i in 0..inserted {
            classic.insert(&key(MEMBERS, i));
        }
        let lookups = 2_000_000u64;
        let time = |g: &dyn Filter, seed: u64| {
            let t = Instant::now();
            let hits = (0..lookups)
                .filter(|&i| g.might_contain_bytes(&key(seed, i).to_le_bytes()))
                .count();
            (t.elapsed().as_nanos() as f64 / lookups as f64, hits)
        };
        let (ns_s_neg, _) = time(&f, 999);
        let (ns_c_neg, _) = time(&classic, 999);
        let (ns_s_pos, hs) = time(&f, MEMBERS);
        let (ns_c_pos, hc) = time(&classic, MEMBERS);
        assert_eq!((hs, hc), (lookups as usize, lookups as usize));
        println!(
            "\nAfter growth to n = {inserted}: scalable {:.2} bits/item ({} stages) vs classic sized for n {:.2} \
             ({:.2}×); lookups: non-members {ns_s_neg:.0} ns vs {ns_c_neg:.0} ns ({:.2}×), members \
             {ns_s_pos:.0} ns vs {ns_c_pos:.0} ns ({:.2}×)",
            f.bits_per_item(),
            f.stages(),
            classic.bits_per_item(),
            f.bits_per_item() / classic.bits_per_item(),
            ns_s_neg / ns_c_neg,
            ns_s_pos / ns_c_pos
        );
    }
    Ok(())
}
