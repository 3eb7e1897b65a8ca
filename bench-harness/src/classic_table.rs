//! The classic filter's table quoted in the README (`bench-harness classic-table`): n = 10^6
//! sequential `u64` keys, 10^6 non-member probes per row, and the overfill columns.

use std::fmt::Write as _;

use bloomlab_classic::BloomFilter;
use bloomlab_core::math;

/// Items per filter.
const N: u64 = 1_000_000;
/// Non-member probes per measurement (keys with the top bit set never collide with members).
const PROBES: u64 = 1_000_000;
const NON_MEMBER: u64 = 1 << 63;

fn measured_fpr(f: &BloomFilter) -> f64 {
    let pos = (0..PROBES)
        .filter(|i| f.might_contain(&(NON_MEMBER | i)))
        .count();
    pos as f64 / PROBES as f64
}

/// The table as Markdown.
pub fn table() -> Result<String, bloomlab_core::Error> {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "classic Bloom filter, n = {N}, {PROBES} non-member probes per row\n"
    );
    let _ = writeln!(
        s,
        "| target | bits/item | k | measured FPR | expected FPR | current FPR | size at 10^6 | FPR at 2× (theory) | FPR at 4× (theory) |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---|---|---|---|");
    for p in [0.001, 0.01, 0.03] {
        let mut f = BloomFilter::with_fpr(N, p)?;
        for i in 0..N {
            f.insert(&i);
        }
        let fpr = measured_fpr(&f);
        let (expected, current) = (f.expected_fpr(), f.current_fpr());
        let bits_per_item = f.bits() as f64 / N as f64;
        let mib = f.bits() as f64 / 8.0 / f64::from(1 << 20);
        let mut over = Vec::new();
        for load in [2, 4] {
            for i in f.len()..load * N {
                f.insert(&i);
            }
            over.push(format!(
                "{:.2} % ({:.2} %)",
                100.0 * measured_fpr(&f),
                100.0 * math::classic_fpr(f.bits(), f.hashes(), load * N)
            ));
        }
        let _ = writeln!(
            s,
            "| {:.1} % | {bits_per_item:.2} | {} | {:.4} % | {:.4} % | {:.4} % | {mib:.2} MiB | {} | {} |",
            100.0 * p,
            f.hashes(),
            100.0 * fpr,
            100.0 * expected,
            100.0 * current,
            over[0],
            over[1]
        );
    }
    Ok(s)
}
