//! Instructions per lookup of the blocked filter, our split-block filter and sbbf-rs-safe, in
//! the loop shape the harness times: the keys are 8-byte little-endian `u64`s read as byte
//! slices from one buffer, each entry hashes them through its public byte API (ours
//! `might_contain_bytes`, sbbf-rs-safe xxh3-64 then `contains_hash`, as its README and the
//! harness's adapter do; `sbbf-rs-parquet` xxHash64 as Parquet hashes), and the hits are
//! summed. Every loop is its own `#[inline(never)]` function, monomorphised over the filter.
//!
//! valgrind's callgrind counts instructions, not seconds, so the figure repeats whatever else
//! the machine runs. Run with no argument, the program runs itself twice under callgrind per
//! entry (10^5 and 2·10^5 lookups after the same build) and prints the difference of the totals
//! divided by 10^5: instructions per lookup, the loop included, set-up cancelled.
//!
//! ```sh
//! cargo build --release -p bloomlab-lab --example lookup_icount
//! target/release/examples/lookup_icount            # needs valgrind on the PATH
//! target/release/examples/lookup_icount blocked 100000   # one entry, one count (for perf, gdb)
//! ```
//!
//! The filters hold `N` = 10^6 keys at 1 % (`N` from the environment variable `ICOUNT_N`).
//! valgrind does not offer AVX-512 to the program, so the blocked filter runs its AVX2 kernel
//! there; the counts are those of an AVX2-only core.

use std::hint::black_box;
use std::process::Command;

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_core::Filter;
use bloomlab_sbbf::Sbbf;
use xxhash_rust::xxh3::xxh3_64;
use xxhash_rust::xxh64::xxh64;

const ENTRIES: [&str; 4] = ["blocked", "sbbf", "sbbf-rs", "sbbf-rs-parquet"];

fn n() -> u64 {
    std::env::var("ICOUNT_N")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .map_or(1_000_000, |x| x as u64)
}

/// The probe stream: `ops` keys, half of them members, as 8-byte slices of one buffer.
fn probes(n: u64, ops: u64) -> Vec<u8> {
    (0..ops)
        .flat_map(|i| {
            let k = if i % 2 == 0 { i % n } else { (1 << 40) + i };
            k.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes()
        })
        .collect()
}

fn member(i: u64) -> [u8; 8] {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes()
}

#[inline(never)]
fn loop_ours<F: Filter>(f: &F, keys: &[u8]) -> u64 {
    let mut hits = 0u64;
    keys.chunks_exact(8)
        .for_each(|k| hits += u64::from(f.might_contain_bytes(black_box(k))));
    hits
}

#[inline(never)]
fn loop_sbbf_rs(f: &sbbf_rs_safe::Filter, keys: &[u8], parquet: bool) -> u64 {
    let mut hits = 0u64;
    if parquet {
        keys.chunks_exact(8)
            .for_each(|k| hits += u64::from(f.contains_hash(xxh64(black_box(k), 0))));
    } else {
        keys.chunks_exact(8)
            .for_each(|k| hits += u64::from(f.contains_hash(xxh3_64(black_box(k)))));
    }
    hits
}

/// Build `entry`'s filter over `n` keys, then time `ops` lookups; returns the hits.
fn run(entry: &str, n: u64, ops: u64) -> u64 {
    let keys = probes(n, ops);
    match entry {
        "blocked" => {
            let mut f = BlockedBloomFilter::with_fpr(n, 0.01).expect("sized");
            (0..n).for_each(|i| {
                f.insert(&member(i)[..]);
            });
            loop_ours(&f, &keys)
        }
        "sbbf" => {
            let mut f = Sbbf::with_fpr(n, 0.01).expect("sized");
            (0..n).for_each(|i| {
                f.insert_bytes(&member(i));
            });
            loop_ours(&f, &keys)
        }
        "sbbf-rs" | "sbbf-rs-parquet" => {
            let parquet = entry == "sbbf-rs-parquet";
            let bits = Sbbf::with_fpr(n, 0.01).expect("sized").params().table_bits;
            let mut f = sbbf_rs_safe::Filter::new(bits as usize, 1);
            for i in 0..n {
                let m = member(i);
                f.insert_hash(if parquet { xxh64(&m, 0) } else { xxh3_64(&m) });
            }
            loop_sbbf_rs(&f, &keys, parquet)
        }
        other => panic!("unknown entry {other}; one of {ENTRIES:?}"),
    }
}

/// Total instructions of this program running `entry` with `ops` lookups, under callgrind.
fn collected(entry: &str, ops: u64) -> u64 {
    let exe = std::env::current_exe().expect("own path");
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(exe)
        .args([entry, &ops.to_string()])
        .output()
        .expect("valgrind on the PATH");
    let err = String::from_utf8_lossy(&out.stderr);
    err.lines()
        .find_map(|l| l.split("Collected :").nth(1))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("no total in callgrind's output:\n{err}"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let (Some(entry), Some(ops)) = (args.get(1), args.get(2)) {
        let hits = run(entry, n(), ops.parse().expect("a count"));
        println!("{entry} {ops} {hits}");
        return;
    }
    println!(
        "instructions per lookup (callgrind), n = {}, 1 %, 8-byte keys",
        n()
    );
    for entry in ENTRIES {
        let (a, b) = (collected(entry, 100_000), collected(entry, 200_000));
        println!("{entry:>16} {:>7.1}", (b as f64 - a as f64) / 100_000.0);
    }
}
