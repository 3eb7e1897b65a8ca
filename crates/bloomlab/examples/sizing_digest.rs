//! Every filter's sizing over a grid of item counts and target FPRs, one line per filter and
//! grid point: its size, parameters, expected FPR (to 12 significant digits: an estimate, where
//! `libm` and std may differ in the last bits) and a digest of its bytes.
//!
//! Built without the `std` feature, the sizing formulas take their `f64` functions from `libm`
//! (`bloomlab::math::float`); with it, from std. `.ci/cross nostd` runs it both ways and
//! requires the two outputs to be identical:
//!
//! ```sh
//! V=classic,blocked,sbbf,counting,cuckoo,scalable,ribbon,expandable
//! cargo run -q -p bloomlab --example sizing_digest --no-default-features --features $V > libm.txt
//! cargo run -q -p bloomlab --example sizing_digest --no-default-features --features $V,std > std.txt
//! cmp libm.txt std.txt
//! ```
//!
//! (The example itself always has std; only the library's build differs.)

use bloomlab::{
    BlockedBloomFilter, BloomFilter, CountingBloomFilter, CuckooFilter, Declared, ExpandableFilter,
    Filter, HashScheme, Result, RibbonFilter, Sbbf, ScalableBloomFilter, Xxh3Scheme,
};

/// Keys inserted into the filters whose size follows the keys (scalable, expandable) and the
/// one built from its keys (Ribbon): at most this many.
const MAX_KEYS: u64 = 20_000;

/// One filter's line: its size, expected FPR, parameters and a digest of its bytes.
fn line<F: Filter + Declared>(name: &str, f: Result<F>) -> String {
    match f {
        Ok(f) => format!(
            "{name} size={} fpr={:.12e} {:?} bytes={:016x}",
            Filter::size_in_bytes(&f),
            Filter::expected_fpr(&f),
            Filter::params(&f),
            Xxh3Scheme.hash64(&Declared::to_bytes(&f))
        ),
        Err(e) => format!("{name} error: {e}"),
    }
}

/// `f` after each of the keys `0..keys` was inserted (an insert the filter refuses is
/// skipped).
fn filled<F: Filter>(f: Result<F>, keys: u64) -> Result<F> {
    f.map(|mut f| {
        for i in 0..keys {
            let _ = (&mut f as &mut dyn Filter).insert(&i);
        }
        f
    })
}

fn main() {
    let ns = [
        1u64, 2, 7, 10, 100, 999, 1000, 4096, 12_345, 100_000, 1_000_000,
    ];
    let ps = [
        0.5, 0.25, 0.1, 0.05, 0.02, 0.01, 0.005, 0.003, 0.001, 1e-4, 1e-5, 1e-6, 1e-9,
    ];
    for &n in &ns {
        let keys = n.min(MAX_KEYS);
        for &p in &ps {
            let scalable = ScalableBloomFilter::with_fpr(keys.div_ceil(8), p);
            let lines = [
                line("classic", BloomFilter::with_fpr(n, p)),
                line("blocked", BlockedBloomFilter::with_fpr(n, p)),
                line("sbbf", Sbbf::with_fpr(n, p)),
                line("sbbf-parquet-sized", Sbbf::with_fpr_parquet_sized(n, p)),
                line("counting", CountingBloomFilter::with_fpr(n, p)),
                line("cuckoo", CuckooFilter::with_fpr(n, p)),
                line("scalable", filled(scalable, keys)),
                line("expandable", filled(ExpandableFilter::new(p), keys)),
                line("ribbon", RibbonFilter::build(0..keys, p)),
            ];
            for l in lines {
                println!("n={n} p={p} {l}");
            }
        }
    }
}
