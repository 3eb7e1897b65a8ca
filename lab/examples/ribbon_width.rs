//! Why w = 128: the fraction of seeds whose banding succeeds, for w = 64 and w = 128, as a
//! function of the slot overhead `m/n − 1`, at several n (equations of the second layout,
//! [`Layout::OneHash`], which every new filter uses).
//!
//! `cargo run --release -p bloomlab-lab --example ribbon_width [-- seeds]`
use bloomlab_core::hash::Xxh3Scheme;
use bloomlab_ribbon::band::{Banding, CoeffRow};
use bloomlab_ribbon::{Layout, hash_in, row_in};

fn success<W: CoeffRow>(n: u64, overhead: f64, seeds: u32) -> (u32, u64) {
    let hashes: Vec<_> = (0..n)
        .map(|i| hash_in(Layout::OneHash, &Xxh3Scheme, &i))
        .collect();
    let w = u64::from(W::BITS);
    let m = (((n as f64 * (1.0 + overhead)) as u64).div_ceil(w) * w).max(w);
    let starts = m - w + 1;
    let mut band = Banding::<W>::new(m as usize).unwrap();
    let mut ok = 0;
    for seed in 0..seeds {
        band.clear();
        if hashes.iter().all(|&h| {
            let (s, c, v) = row_in::<W>(Layout::OneHash, h, seed, starts);
            band.add(s, c, v)
        }) {
            ok += 1;
        }
    }
    (ok, m)
}

fn main() {
    // Arguments: seeds, then optionally a list of n and a list of overheads (comma-separated).
    let args: Vec<String> = std::env::args().collect();
    let seeds: u32 = args.get(1).map_or(40, |s| s.parse().unwrap());
    let list = |i: usize, default: &str| -> Vec<f64> {
        let s = args.get(i).map_or(default, |s| s.as_str());
        s.split(',').map(|x| x.parse().unwrap()).collect()
    };
    let ns = list(2, "1e3,1e4,1e5,1e6");
    let overheads = list(3, "0.02,0.03,0.04,0.05,0.06,0.08,0.10,0.12,0.15,0.20");
    println!("w\tn\toverhead\tslots/n\tsuccess");
    for &n in &ns {
        let n = n as u64;
        for &overhead in &overheads {
            let (ok, m) = success::<u64>(n, overhead, seeds);
            println!(
                "64\t{n}\t{overhead}\t{:.4}\t{ok}/{seeds}",
                m as f64 / n as f64
            );
            let (ok, m) = success::<u128>(n, overhead, seeds);
            println!(
                "128\t{n}\t{overhead}\t{:.4}\t{ok}/{seeds}",
                m as f64 / n as f64
            );
        }
    }
}
