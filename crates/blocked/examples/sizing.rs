//! How long the blocked filter's sizing takes across targets: `math::blocked_bits_per_item_exact`
//! (what `BlockedBloomFilter::with_fpr` spends nearly all its time in) for p from 0.5 down
//! to 10^-15, each the fastest of five calls, with the bits/item and k it finds.
//!
//! ```sh
//! cargo run --release -p bloomlab-blocked --example sizing
//! ```

use std::time::Instant;

use bloomlab_core::math;

fn main() {
    let mut p = 0.5f64;
    println!("| p | bits/item | k | µs (fastest of 5) |\n|---|---|---|---|");
    while p > 1e-15 {
        let mut best = f64::MAX;
        let mut found = (0.0, 0);
        for _ in 0..5 {
            let t = Instant::now();
            found = math::blocked_bits_per_item_exact(p, 512).expect("reachable");
            best = best.min(t.elapsed().as_secs_f64() * 1e6);
        }
        println!("| {p:.2e} | {:.4} | {} | {best:.1} |", found.0, found.1);
        p /= 10f64.sqrt();
    }
}
