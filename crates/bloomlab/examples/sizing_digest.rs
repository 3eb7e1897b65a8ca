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
    BlockedBloomFilter, BloomFilter, CountingBloomFilter, CuckooFilter, ExpandableFilter, Filter,
    HashScheme, Result, RibbonFilter, Sbbf, ScalableBloomFilter, Xxh3Scheme,
};

/// Keys inserted into the filters whose size follows the keys (scalable, expandable) and the
/// one built from its keys (Ribbon): at most this many.
const MAX_KEYS: u64 = 20_000;

fn line(name: &str, f: Result<(Box<dyn Filter>, Vec<u8>)>) -> String {
    match f {
        Ok((f, bytes)) => format!(
            "{name} size={} fpr={:.12e} {:?} bytes={:016x}",
            f.size_in_bytes(),
            f.expected_fpr(),
            f.params(),
            Xxh3Scheme.hash64(&bytes)
        ),
        Err(e) => format!("{name} error: {e}"),
    }
}

fn boxed<F: Filter + 'static>(
    f: Result<F>,
    bytes: impl Fn(&F) -> Vec<u8>,
) -> Result<(Box<dyn Filter>, Vec<u8>)> {
    f.map(|f| {
        let b = bytes(&f);
        (Box::new(f) as Box<dyn Filter>, b)
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
            let lines = [
                line(
                    "classic",
                    boxed(BloomFilter::with_fpr(n, p), |f| f.to_bytes()),
                ),
                line(
                    "blocked",
                    boxed(BlockedBloomFilter::with_fpr(n, p), |f| f.to_bytes()),
                ),
                line("sbbf", boxed(Sbbf::with_fpr(n, p), |f| f.to_bytes())),
                line(
                    "sbbf-parquet-sized",
                    boxed(Sbbf::with_fpr_parquet_sized(n, p), |f| f.to_bytes()),
                ),
                line(
                    "counting",
                    boxed(CountingBloomFilter::with_fpr(n, p), |f| f.to_bytes()),
                ),
                line(
                    "cuckoo",
                    boxed(CuckooFilter::with_fpr(n, p), |f| f.to_bytes()),
                ),
                line(
                    "scalable",
                    boxed(
                        ScalableBloomFilter::with_fpr(keys.div_ceil(8), p).map(|mut f| {
                            (0..keys).for_each(|i| {
                                let _ = f.insert(&i);
                            });
                            f
                        }),
                        |f| f.to_bytes(),
                    ),
                ),
                line(
                    "expandable",
                    boxed(
                        ExpandableFilter::new(p).map(|mut f| {
                            (0..keys).for_each(|i| {
                                let _ = f.insert(&i);
                            });
                            f
                        }),
                        |f| f.to_bytes(),
                    ),
                ),
                line(
                    "ribbon",
                    boxed(RibbonFilter::build(0..keys, p), |f| f.to_bytes()),
                ),
            ];
            for l in lines {
                println!("n={n} p={p} {l}");
            }
        }
    }
}
