//! Write a classic filter to a file, for `bloomlab inspect`.
//!
//! `cargo run --release -p bloomlab-uses --example make_filter -- FILE [CAPACITY] [INSERTS] [FPR] [blm1]`
//!
//! Defaults: capacity 100 000, inserts = capacity, FPR 0.01, checked `BLAB` format (`blm1`
//! writes the seed's layout instead). Insert more than the capacity to see `inspect` flag an
//! overfilled filter.

use bloomlab_classic::BloomFilter;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        return Err("usage: make_filter FILE [CAPACITY] [INSERTS] [FPR] [blm1]".into());
    };
    let capacity: u64 = args.get(1).map_or(Ok(100_000), |s| s.parse())?;
    let inserts: u64 = args.get(2).map_or(Ok(capacity), |s| s.parse())?;
    let fpr: f64 = args.get(3).map_or(Ok(0.01), |s| s.parse())?;
    let mut f = BloomFilter::with_fpr(capacity, fpr)?;
    for i in 0..inserts {
        f.insert(&format!("user:{i}"));
    }
    let bytes = if args.get(4).is_some_and(|s| s == "blm1") {
        f.to_blm1()?
    } else {
        f.to_bytes()
    };
    std::fs::write(path, &bytes)?;
    println!("wrote {} ({} bytes): {f:?}", path, bytes.len());
    Ok(())
}
