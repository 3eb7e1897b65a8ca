//! Instruction counts per classic lookup, ours against fastbloom 0.17, for
//! `valgrind --tool=callgrind` (noise-free): run twice with different lookup counts and divide
//! the difference of the totals by the difference of the counts, so the build cancels.
//!
//! ```sh
//! cargo build --release -p bloomlab-lab --example classic_icount
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/classic_icount classic 100000 2000
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/classic_icount classic 200000 2000
//! ```
//!
//! Arguments: the filter, the number of lookups (half members, half not, interleaved), and
//! the design capacity `n` (1 % target; default 2 000, in L1). Filters: `classic` (xxh3-128,
//! id 1), `sip64` (keyed, id 4), `sip128` (keyed, id 2), `classic-batched` and
//! `sip64-batched` (the same through `might_contain_batch`), `classic-bytes` and
//! `sip64-bytes` (through `Filter::might_contain_bytes` of the 8 bytes, as the harness
//! calls), `fastbloom-fold` (fastbloom with
//! foldhash, fixed seed), `fastbloom-sip` (fastbloom's default SipHash-1-3), and `xxh3`,
//! `sip64-hash` (the hash alone, no probing).

use std::hint::black_box;

use bloomlab_classic::BloomFilter;
use bloomlab_core::Filter;
use bloomlab_core::hash::{HashScheme, Xxh3Scheme};
use bloomlab_keyed::{Sip64Scheme, SipScheme};

const SECRET: [u8; 16] = *b"bloomlab-harness";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map(String::as_str).unwrap_or("classic");
    let ops: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let n: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(2_000);
    // Members are 0..n; queries alternate a member and a key that was never inserted.
    let queries: Vec<u64> = (0..ops)
        .map(|i| {
            if i % 2 == 0 {
                (i / 2).wrapping_mul(0x9E37_79B9_7F4A_7C15) % n
            } else {
                (1 << 40) + i
            }
        })
        .collect();
    let mut hits = 0u64;
    macro_rules! ours {
        ($scheme:expr) => {{
            let mut f = BloomFilter::with_fpr_and_scheme(n, 0.01, $scheme).expect("sized");
            for i in 0..n {
                f.insert(&i);
            }
            for &k in &queries {
                hits += u64::from(f.might_contain(&black_box(k)));
            }
        }};
    }
    macro_rules! ours_bytes {
        ($scheme:expr) => {{
            let mut f = BloomFilter::with_fpr_and_scheme(n, 0.01, $scheme).expect("sized");
            for i in 0..n {
                f.insert(&i);
            }
            for &k in &queries {
                hits += u64::from(Filter::might_contain_bytes(&f, &black_box(k).to_le_bytes()));
            }
        }};
    }
    macro_rules! ours_batched {
        ($scheme:expr) => {{
            let mut f = BloomFilter::with_fpr_and_scheme(n, 0.01, $scheme).expect("sized");
            for i in 0..n {
                f.insert(&i);
            }
            let mut out = vec![false; queries.len()];
            f.might_contain_batch(black_box(&queries), &mut out)
                .expect("lengths");
            hits = out.iter().filter(|&&b| b).count() as u64;
        }};
    }
    macro_rules! fast {
        ($hasher:expr) => {{
            let mut f = fastbloom::BloomFilter::with_false_pos(0.01)
                .hasher($hasher)
                .expected_items(n as usize);
            for i in 0..n {
                f.insert(&i);
            }
            for &k in &queries {
                hits += u64::from(f.contains(&black_box(k)));
            }
        }};
    }
    match which {
        "classic" => ours!(Xxh3Scheme),
        "sip64" => ours!(Sip64Scheme::from_secret(SECRET)),
        "sip128" => ours!(SipScheme::from_secret(SECRET)),
        "classic-batched" => ours_batched!(Xxh3Scheme),
        "classic-bytes" => ours_bytes!(Xxh3Scheme),
        "sip64-bytes" => ours_bytes!(Sip64Scheme::from_secret(SECRET)),
        "sip64-batched" => ours_batched!(Sip64Scheme::from_secret(SECRET)),
        "fastbloom-fold" => fast!(foldhash::fast::FixedState::with_seed(1)),
        "fastbloom-sip" => fast!(fastbloom::DefaultHasher::seeded(&SECRET)),
        "xxh3" => {
            for &k in &queries {
                hits = hits.wrapping_add(Xxh3Scheme.hash(&black_box(k).to_le_bytes()).h1 & 1);
            }
        }
        "sip64-hash" => {
            let s = Sip64Scheme::from_secret(SECRET);
            for &k in &queries {
                hits = hits.wrapping_add(s.hash(&black_box(k).to_le_bytes()).h1 & 1);
            }
        }
        other => panic!("unknown filter {other}"),
    }
    println!("{which} {ops} {n} {hits}");
}
