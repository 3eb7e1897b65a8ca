//! How long the blocked filter's sizing takes across targets: `math::blocked_bits_per_item_exact`
//! (what `BlockedBloomFilter::with_fpr` spends nearly all its time in) for p from 0.5 down
//! to 10^-26, each the fastest of five calls, with the bits/item and k it finds (or that
//! the target was refused: below about 3·10^-25 no density up to 4096 bits/item reaches it).
//!
//! ```sh
//! cargo run --release -p bloomlab-lab --example blocked_sizing
//! ```

use std::time::Instant;

fn main() {
    let mut p = 0.5f64;
    println!("| p | bits/item | k | µs (fastest of 5) |\n|---|---|---|---|");
    while p > 1e-26 {
        let mut best = f64::MAX;
        let mut found = None;
        for _ in 0..5 {
            let t = Instant::now();
            found = bloomlab_blocked::math::blocked_bits_per_item_exact(p, 512).ok();
            best = best.min(t.elapsed().as_secs_f64() * 1e6);
        }
        match found {
            Some((d, k)) => println!("| {p:.2e} | {d:.4} | {k} | {best:.1} |"),
            None => println!("| {p:.2e} | refused | | {best:.1} |"),
        }
        p /= 10f64.sqrt();
    }
}
