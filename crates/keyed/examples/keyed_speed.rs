//! Keyed lookups against the crate people use for hostile keys, in one process.
//!
//! Filters: fastbloom 0.17 with its default hasher (SipHash-1-3 under a random 128-bit key),
//! our classic filter unkeyed (xxh3), keyed with scheme id 2 ([`SipScheme`], 128-bit
//! SipHash-2-4) and keyed with scheme id 4 ([`Sip64Scheme`], 64-bit SipHash-2-4 + remix); and
//! the blocked filter the same three ways. Each is built for `n` 8-byte keys at a 1 % target,
//! then queried with a fixed, shuffled mix of members and non-members.
//!
//! Every round runs one lookup pass of every filter, in an order shuffled per round with a
//! fixed seed, so the filters share the machine's noise. Reported: the median and range over
//! rounds of ns per lookup, and of each round's ratio of two filters' times.
//!
//! ```text
//! cargo run --release -p bloomlab-keyed --example keyed_speed
//! cargo run --release -p bloomlab-keyed --example keyed_speed -- --sizes 100000 --rounds 5
//! ```

use std::hint::black_box;
use std::time::Instant;

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_classic::BloomFilter;
use bloomlab_core::hash::HashScheme;
use bloomlab_keyed::{Sip64Scheme, SipScheme};
use clap::Parser;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Parser, Debug)]
#[command(about = "Keyed vs unkeyed lookup speed, passes interleaved in one process")]
struct Args {
    /// Filter sizes (design capacity n), comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [100_000u64, 1_000_000, 10_000_000])]
    sizes: Vec<u64>,
    /// Target FPR.
    #[arg(long, default_value_t = 0.01)]
    fpr: f64,
    /// Fraction of queries that are members.
    #[arg(long, default_value_t = 0.5)]
    members: f64,
    /// Lookups per pass.
    #[arg(long, default_value_t = 1 << 18)]
    queries: usize,
    /// Rounds (one pass of every filter each).
    #[arg(long, default_value_t = 31)]
    rounds: usize,
    /// Only run filters whose name contains one of these (comma-separated).
    #[arg(long, value_delimiter = ',')]
    only: Option<Vec<String>>,
    /// Also time each hash alone, as a dependency chain (its latency).
    #[arg(long)]
    splits: bool,
    /// Seed for keys, queries and the pass order.
    #[arg(long, default_value_t = 16)]
    seed: u64,
}

/// Hash latency alone: each key is xored with the previous hash, so the hashes form one
/// dependency chain and the pass measures the time from a key to its hash (what a lookup that
/// mispredicts its early exit pays before its first probe can load).
struct Chain<H: Fn(u64) -> u64>(H, &'static str);
impl<H: Fn(u64) -> u64> Subject for Chain<H> {
    fn name(&self) -> &'static str {
        self.1
    }
    fn pass(&self, queries: &[u64]) -> u64 {
        let mut prev = 0u64;
        for &q in queries {
            prev = (self.0)(q ^ (prev >> 63));
        }
        prev >> 63
    }
}

/// The blocked filter's batched lookup (hash [`bloomlab_blocked::BATCH`] keys ahead and
/// prefetch their blocks), timed over the whole pass.
struct Batched<S: HashScheme>(BlockedBloomFilter<S>, &'static str);
impl<S: HashScheme> Subject for Batched<S> {
    fn name(&self) -> &'static str {
        self.1
    }
    fn pass(&self, queries: &[u64]) -> u64 {
        let mut out = vec![false; queries.len()];
        self.0.might_contain_batch(queries, &mut out).unwrap();
        out.iter().filter(|&&o| o).count() as u64
    }
}

/// One filter under test: a lookup pass over `queries` returns the positives.
trait Subject {
    fn name(&self) -> &'static str;
    fn pass(&self, queries: &[u64]) -> u64;
}

struct Fast(fastbloom::BloomFilter, &'static str);
impl Subject for Fast {
    fn name(&self) -> &'static str {
        self.1
    }
    fn pass(&self, queries: &[u64]) -> u64 {
        queries.iter().filter(|q| self.0.contains(*q)).count() as u64
    }
}

struct Classic<S: HashScheme>(BloomFilter<S>, &'static str);
impl<S: HashScheme> Subject for Classic<S> {
    fn name(&self) -> &'static str {
        self.1
    }
    fn pass(&self, queries: &[u64]) -> u64 {
        queries.iter().filter(|q| self.0.might_contain(*q)).count() as u64
    }
}

struct Blocked<S: HashScheme>(BlockedBloomFilter<S>, &'static str);
impl<S: HashScheme> Subject for Blocked<S> {
    fn name(&self) -> &'static str {
        self.1
    }
    fn pass(&self, queries: &[u64]) -> u64 {
        queries.iter().filter(|q| self.0.might_contain(*q)).count() as u64
    }
}

fn build(args: &Args, n: u64, keys: &[u64]) -> Vec<Box<dyn Subject>> {
    let p = args.fpr;
    let old = SipScheme::random().expect("OS randomness");
    let new = Sip64Scheme::random().expect("OS randomness");
    let mut out: Vec<Box<dyn Subject>> = Vec::new();
    let want = |name: &str| {
        args.only
            .as_ref()
            .is_none_or(|o| o.iter().any(|w| name.contains(w.as_str())))
    };
    if want("fastbloom-sip13") {
        let mut f = fastbloom::BloomFilter::with_false_pos(p).expected_items(n as usize);
        keys.iter().for_each(|k| {
            f.insert(k);
        });
        out.push(Box::new(Fast(f, "fastbloom-sip13")));
    }
    macro_rules! ours {
        ($name:literal, $wrap:ident, $ty:ident, $scheme:expr) => {
            if want($name) {
                let mut f = $ty::with_fpr_and_scheme(n, p, $scheme).unwrap();
                keys.iter().for_each(|k| {
                    f.insert(k);
                });
                out.push(Box::new($wrap(f, $name)));
            }
        };
    }
    ours!("classic", Classic, BloomFilter, bloomlab_core::Xxh3Scheme);
    ours!("classic-sip128 (id 2)", Classic, BloomFilter, old.clone());
    ours!("classic-sip64 (id 4)", Classic, BloomFilter, new.clone());
    ours!(
        "blocked",
        Blocked,
        BlockedBloomFilter,
        bloomlab_core::Xxh3Scheme
    );
    ours!(
        "blocked-sip128 (id 2)",
        Blocked,
        BlockedBloomFilter,
        old.clone()
    );
    ours!(
        "blocked-sip64 (id 4)",
        Blocked,
        BlockedBloomFilter,
        new.clone()
    );
    ours!(
        "blocked batched",
        Batched,
        BlockedBloomFilter,
        bloomlab_core::Xxh3Scheme
    );
    ours!(
        "blocked-sip128 (id 2) batched",
        Batched,
        BlockedBloomFilter,
        old.clone()
    );
    ours!(
        "blocked-sip64 (id 4) batched",
        Batched,
        BlockedBloomFilter,
        new.clone()
    );
    if args.splits {
        let (o, n) = (old, new);
        let xxh3 = bloomlab_core::Xxh3Scheme;
        let sip13 = fastbloom::DefaultHasher::seeded(&[7; 16]);
        out.push(Box::new(Chain(
            move |q| xxh3.hash(&q.to_le_bytes()).h1,
            "hash latency xxh3-128",
        )));
        out.push(Box::new(Chain(
            move |q| o.hash(&q.to_le_bytes()).h1,
            "hash latency sip128 (id 2)",
        )));
        let n2 = n.clone();
        out.push(Box::new(Chain(
            move |q| n.sip64(&q.to_le_bytes()),
            "hash latency sip64 (id 4, h1)",
        )));
        out.push(Box::new(Chain(
            move |q| n2.hash(&q.to_le_bytes()).h2,
            "hash latency sip64 (id 4, h2)",
        )));
        out.push(Box::new(Chain(
            move |q| std::hash::BuildHasher::hash_one(&sip13, q),
            "hash latency fastbloom sip13",
        )));
    }
    out
}

fn median_and_range(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    let med = if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    };
    (med, v[0], v[v.len() - 1])
}

fn main() {
    let args = Args::parse();
    println!(
        "# keyed lookups: target {} %, {} % members, {} lookups per pass, {} rounds, seed {}",
        100.0 * args.fpr,
        100.0 * args.members,
        args.queries,
        args.rounds,
        args.seed
    );
    for &n in &args.sizes {
        let mut rng = ChaCha8Rng::seed_from_u64(args.seed ^ n);
        let keys: Vec<u64> = (0..n).map(|_| rng.random()).collect();
        let members = (args.queries as f64 * args.members).round() as usize;
        let mut queries: Vec<u64> = (0..members)
            .map(|_| keys[rng.random_range(0..keys.len())])
            .collect();
        // Random 64-bit non-members: a collision with n ≤ 10^7 keys has probability < 10^-5.
        queries.extend((members..args.queries).map(|_| rng.random::<u64>()));
        queries.shuffle(&mut rng);

        let subjects = build(&args, n, &keys);
        let mut times = vec![Vec::new(); subjects.len()];
        let mut positives = vec![0u64; subjects.len()];
        let mut order: Vec<usize> = (0..subjects.len()).collect();
        // One untimed warm-up pass each.
        for s in &subjects {
            black_box(s.pass(black_box(&queries)));
        }
        for _ in 0..args.rounds {
            order.shuffle(&mut rng);
            for &i in &order {
                let t = Instant::now();
                let pos = black_box(subjects[i].pass(black_box(&queries)));
                times[i].push(t.elapsed().as_nanos() as f64 / queries.len() as f64);
                positives[i] = pos;
            }
        }

        println!("\n## n = {n}");
        println!("| filter | ns/lookup median | range | positives |");
        println!("|---|---|---|---|");
        for (i, s) in subjects.iter().enumerate() {
            let (med, lo, hi) = median_and_range(times[i].clone());
            if s.name().starts_with("hash") {
                println!("| {} | {med:.1} | {lo:.1}–{hi:.1} | |", s.name());
                continue;
            }
            // Every member is a hit; non-members add about the FPR.
            assert!(
                positives[i] >= members as u64,
                "{}: a false negative",
                s.name()
            );
            println!(
                "| {} | {med:.1} | {lo:.1}–{hi:.1} | {:.3} % of non-members |",
                s.name(),
                100.0 * (positives[i] - members as u64) as f64 / (args.queries - members) as f64
            );
        }
        let find = |name: &str| subjects.iter().position(|s| s.name() == name);
        let pairs = [
            ("classic-sip64 (id 4)", "fastbloom-sip13"),
            ("classic-sip64 (id 4)", "classic"),
            ("classic-sip64 (id 4)", "classic-sip128 (id 2)"),
            ("classic-sip128 (id 2)", "fastbloom-sip13"),
            ("blocked-sip64 (id 4)", "blocked"),
            ("blocked-sip64 (id 4)", "fastbloom-sip13"),
            ("blocked-sip64 (id 4) batched", "blocked batched"),
            ("blocked-sip64 (id 4) batched", "blocked-sip64 (id 4)"),
            (
                "blocked-sip64 (id 4) batched",
                "blocked-sip128 (id 2) batched",
            ),
            ("blocked-sip64 (id 4) batched", "fastbloom-sip13"),
        ];
        println!("\n| ratio (per round) | median | range |");
        println!("|---|---|---|");
        for (a, b) in pairs {
            if let (Some(a_i), Some(b_i)) = (find(a), find(b)) {
                let ratios = times[a_i]
                    .iter()
                    .zip(&times[b_i])
                    .map(|(x, y)| x / y)
                    .collect();
                let (med, lo, hi) = median_and_range(ratios);
                println!("| {a} / {b} | {med:.2}× | {lo:.2}–{hi:.2} |");
            }
        }
    }
}
