//! Measures what issue 5 asks of the cuckoo filter, with fixed seeds:
//! load at first failure and keys lost, bits/item against `f/0.95` at three sizes, and
//! extension exercise 5 (bits/item of cuckoo vs classic at 0.1 %, 1 % and 3 %).
//!
//! `cargo run --release -p bloomlab-lab --example cuckoo_fill`

use std::time::Instant;

use bloomlab_classic::BloomFilter;
use bloomlab_core::{Error, Filter, math};
use bloomlab_cuckoo::{CuckooFilter, DESIGN_LOAD};

/// splitmix64: a fixed-seed stream of distinct-enough `u64` keys.
fn key(seed: u64, i: u64) -> u64 {
    let mut z = seed
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        .wrapping_add(i.wrapping_mul(0xbf58_476d_1ce4_e5b9));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Positives among `probes` keys that were never inserted (their own seed stream).
fn false_positives(f: &dyn Filter, probes: u64) -> u64 {
    (0..probes)
        .filter(|&i| f.might_contain_bytes(&key(0xdead_beef, i).to_le_bytes()))
        .count() as u64
}

fn main() -> Result<(), Error> {
    println!(
        "## Load at first failure (4-slot buckets, {} kicks, undo on failure)\n",
        bloomlab_cuckoo::MAX_KICKS
    );
    println!(
        "| n (design) | target | seed | load at first failure | offered after it | refused | final load | accepted | lost |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (n, p, seeds) in [
        (100_000u64, 0.01, 0..5u64),
        (1_000_000, 0.01, 0..3),
        (1_000_000, 0.001, 0..1),
        (1_000_000, 0.03, 0..1),
        (10_000_000, 0.01, 0..1),
    ] {
        for seed in seeds {
            let mut f = CuckooFilter::with_fpr(n, p)?;
            let mut accepted = Vec::with_capacity(n as usize + n as usize / 10);
            let mut first = None;
            let (mut offered_after, mut refused) = (0u64, 0u64);
            let mut i = 0u64;
            while offered_after < n / 100 {
                let k = key(seed, i);
                i += 1;
                match f.insert(&k) {
                    Ok(()) => accepted.push(k),
                    Err(Error::Full(_)) => {
                        refused += 1;
                        first.get_or_insert(f.load());
                    }
                    Err(e) => return Err(e),
                }
                if first.is_some() {
                    offered_after += 1;
                }
            }
            let lost = accepted.iter().filter(|k| !f.might_contain(*k)).count();
            println!(
                "| {n} | {p} | {seed} | {:.4} | {offered_after} | {refused} | {:.4} | {} | {lost} |",
                first.unwrap_or(f64::NAN),
                f.load(),
                accepted.len()
            );
        }
    }

    println!("\n## Bits/item against the formula f/0.95 (filled to the design load)\n");
    println!(
        "| n | target | f | formula f/0.95 | table bits/item | heap bits/item | expected FPR | measured FPR (10^6 probes) |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for n in [10_000u64, 1_000_000, 10_000_000] {
        for p in [0.001, 0.01, 0.03] {
            let mut f = CuckooFilter::with_fpr(n, p)?;
            for i in 0..n {
                f.insert(&key(7, i))?;
            }
            let fp = false_positives(&f, 1_000_000);
            println!(
                "| {n} | {p} | {} | {:.4} | {:.4} | {:.4} | {:.4} % | {:.4} % |",
                f.fingerprint_bits(),
                bloomlab_cuckoo::math::cuckoo_bits_per_item(f.fingerprint_bits(), DESIGN_LOAD),
                f.table_bits() as f64 / n as f64,
                f.bits_per_item(),
                100.0 * f.expected_fpr(),
                100.0 * fp as f64 / 1e6
            );
        }
    }

    println!("\n## Extension exercise 5: bits/item of cuckoo vs classic vs blocked (n = 10^6)\n");
    println!(
        "Blocked: the 512-bit formula (`math::blocked_bits_per_item`); `bench-harness run --experiments cuckoo-space` measures the blocked crate.\n"
    );
    println!(
        "| target | classic b/item | classic FPR | cuckoo b/item | cuckoo FPR | blocked b/item (formula) | classic b/item at cuckoo's FPR | fewer bits at the target | ns/lookup classic | ns/lookup cuckoo |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let n = 1_000_000u64;
    for p in [0.001, 0.01, 0.03] {
        let mut c = BloomFilter::with_fpr(n, p)?;
        let mut k = CuckooFilter::with_fpr(n, p)?;
        for i in 0..n {
            c.insert(&key(11, i));
            k.insert(&key(11, i))?;
        }
        let probes = 1_000_000u64;
        let t = Instant::now();
        let c_fp = false_positives(&c, probes);
        let c_ns = t.elapsed().as_nanos() as f64 / probes as f64;
        let t = Instant::now();
        let k_fp = false_positives(&k, probes);
        let k_ns = t.elapsed().as_nanos() as f64 / probes as f64;
        let k_rate = k_fp as f64 / probes as f64;
        let (blocked, _) = bloomlab_blocked::math::blocked_bits_per_item(p, 512)?;
        let winner = if k.bits_per_item() < c.bits_per_item() {
            "cuckoo"
        } else {
            "classic"
        };
        println!(
            "| {:.1} % | {:.2} | {:.4} % | {:.2} | {:.4} % | {:.2} | {:.2} | {winner} | {c_ns:.0} | {k_ns:.0} |",
            100.0 * p,
            c.bits_per_item(),
            100.0 * c_fp as f64 / probes as f64,
            k.bits_per_item(),
            100.0 * k_rate,
            blocked,
            math::classic_bits_per_item(k_rate)?
        );
    }

    println!("\n## Where cuckoo wins on space (formulas, bits/item at the target)\n");
    println!("| target | f | cuckoo f/0.95 | classic | blocked 512 | smallest |");
    println!("|---|---|---|---|---|---|");
    let mut p = 0.1f64;
    while p > 1e-6 {
        let f = bloomlab_cuckoo::math::cuckoo_fingerprint_bits(p, 4)?;
        let cuckoo = bloomlab_cuckoo::math::cuckoo_bits_per_item(f, DESIGN_LOAD);
        let classic = math::classic_bits_per_item(p)?;
        let (blocked, _) = bloomlab_blocked::math::blocked_bits_per_item(p, 512)?;
        let best = if cuckoo < classic.min(blocked) {
            "cuckoo"
        } else if classic <= blocked {
            "classic"
        } else {
            "blocked"
        };
        println!("| {p:.2e} | {f} | {cuckoo:.2} | {classic:.2} | {blocked:.2} | {best} |");
        p /= 10f64.powf(0.25);
    }
    Ok(())
}
