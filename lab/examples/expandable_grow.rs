//! Grow from a small start and print bits/item, the FPR bound and a measured FPR at every
//! doubling, and the mean of bits/item over 8 log-spaced points per doubling (table bits, as
//! `Filter::bits_per_item`): `cargo run --release -p bloomlab-lab --example expandable_grow --
//! 1000 1000000 0.01`.

use bloomlab_core::Filter;
use bloomlab_expandable::ExpandableFilter;

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("numbers: start end target"))
        .collect();
    let (start, end, p) = match args[..] {
        [s, e, p] => (s as u64, e as u64, p),
        _ => (1000, 1_000_000, 0.01),
    };
    let mut f = ExpandableFilter::with_fpr(start, p).expect("valid parameters");
    let mut next = start;
    let mut sample = start as f64;
    let (mut sum, mut points) = (0.0, 0u32);
    let probes = 200_000u64;
    println!("items\tlevel\tW\tF\tbits/item\tload\tbound\tformula\tmeasured\tstash");
    for i in 0..end {
        f.insert(&i).expect("grows");
        if (i + 1) as f64 >= sample {
            sum += f.bits_per_item();
            points += 1;
            sample *= 2f64.powf(1.0 / 8.0);
        }
        if i + 1 == next || i + 1 == end {
            let fp = (0..probes)
                .filter(|j| f.might_contain(&(u64::MAX - j)))
                .count() as f64
                / probes as f64;
            println!(
                "{}\t{}\t{}\t{}\t{:.2}\t{:.3}\t{:.5}\t{:.5}\t{:.5}\t{}",
                i + 1,
                f.level(),
                f.slot_bits(),
                f.fingerprint_bits(),
                f.bits_per_item(),
                f.load(),
                f.fpr_bound(),
                f.expected_fpr(),
                fp,
                f.stash_len()
            );
            next *= 2;
        }
    }
    println!(
        "mean bits/item over {points} log-spaced points: {:.2}",
        sum / f64::from(points)
    );
    assert!((0..end).all(|i| f.might_contain(&i)), "false negative");
}
