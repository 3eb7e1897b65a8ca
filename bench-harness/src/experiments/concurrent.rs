//! Concurrent inserts and parallel builds at 10^7 keys: insert throughput of the atomic
//! filters (ours and fastbloom's) with 1 and 2 threads sharing one filter, and build ns/key of
//! the blocked and classic filters with one thread (`insert_batch`) against all
//! cores (`insert_parallel`), with the blocked build's split reference beside it (two threads,
//! each inserting half the keys into a half-size table of its own with `insert_batch`: what
//! the machine gives two threads of this build's memory traffic when no key has to move;
//! `insert_parallel` hashes its keys in vector lanes where `insert_batch` hashes one at a time,
//! so it can beat the reference). Wall-clock figures; beside each, the process CPU time, so that on
//! a loaded machine (where the second core is not ours to take) the work a parallel run adds
//! can be told from the time it could not get.
//!
//! # Paired rounds
//! Each speed-up is the median over [`ROUNDS`] rounds of a ratio taken within one round: the
//! one-thread and the all-cores variant run A B B A (each a fresh filter), and the round's
//! speed-up is (A₁ + A₂) ÷ (B₁ + B₂), so a drift of the machine's speed during the four
//! builds cancels to first order. Ours and fastbloom's atomic inserts run as one group of
//! four, 1-thread ours, fastbloom's, 2-thread ours, fastbloom's and back, so ours ÷ fastbloom's
//! (with 1 and with 2 threads) is a paired ratio too; the order of the groups is rotated
//! each round. Pairing matters here: on a shared machine one thread's `insert_batch` of 10^7
//! keys can take half as long again from one build to the next, in stretches of seconds (the
//! share of the table a shared L3 holds at the time), and a ratio of medians taken over
//! separate builds then misreports the speed-up (`docs/design/harness.md`).
use crate::error::Error;
use std::time::Instant;

use bloomlab_blocked::{AtomicBlockedBloomFilter, BlockedBloomFilter, available_threads};
use bloomlab_classic::BloomFilter;

use crate::adapters::concurrent::FastBloomAtomic;
use crate::control;
use crate::control::process_cpu_ns;
use crate::keys::KeySet;
use crate::schema::{Axis, Experiment, NamedRatio, Point, Series};
use crate::stats::{Interval, median_interval};

use super::Context;

/// Keys of every measurement (the 10^7), or the design capacity if larger; see
/// [`keys_for`].
pub const KEYS: u64 = 10_000_000;

/// Design capacities below this are smoke runs (the harness's own tests): the experiment
/// then measures 100× the capacity instead of [`KEYS`], so that it runs every step — both
/// builds of each filter, the bit-identity check — in well under a second rather than in a
/// minute.
pub const SMOKE_BELOW: u64 = 10_000;

/// The keys measured for design capacity `n`.
pub fn keys_for(n: u64) -> u64 {
    if n < SMOKE_BELOW {
        n.max(1) * 100
    } else {
        n.max(KEYS)
    }
}
/// Paired rounds (see *Paired rounds*); each figure is the median over them, with a
/// bootstrap 95 % interval ([`median_interval`]; for so few rounds, close to their range).
/// About 8 s each at 10^7 keys on the development machine.
pub const ROUNDS: usize = 7;
const P: f64 = 0.01;

/// (wall ns/key, CPU ns/key) of `f` over `n` keys.
fn timed(n: usize, f: impl FnOnce()) -> (f64, f64) {
    let (cpu, wall) = (process_cpu_ns(), Instant::now());
    f();
    let w = wall.elapsed().as_nanos() as f64 / n as f64;
    (w, (process_cpu_ns() - cpu) as f64 / n as f64)
}

/// Run `insert(key)` over `keys` split into `threads` contiguous runs, one thread each.
fn shared_inserts(keys: &[u64], threads: usize, insert: impl Fn(u64) + Sync) {
    std::thread::scope(|s| {
        for run in keys.chunks(keys.len().div_ceil(threads)) {
            let insert = &insert;
            s.spawn(move || run.iter().for_each(|&k| insert(k)));
        }
    });
}

/// Build or fill a fresh filter with variant `v` (see `measure`), timed: (wall, CPU) ns/key.
/// Each build records its set-bit count in `check`.
fn measure_variant(
    v: usize,
    n: usize,
    keys: &[u64],
    seed: u64,
    check: &mut Vec<(&'static str, u64)>,
) -> Result<(f64, f64), bloomlab_core::Error> {
    Ok(match v {
        0 => {
            let mut f = BlockedBloomFilter::with_fpr(n as u64, P)?;
            let t = timed(n, || f.insert_batch(keys));
            check.push(("blocked insert_batch", f.count_ones()));
            t
        }
        1 => {
            let mut f = BlockedBloomFilter::with_fpr(n as u64, P)?;
            let t = timed(n, || {
                f.insert_parallel(keys);
            });
            check.push(("blocked insert_parallel", f.count_ones()));
            t
        }
        2 => {
            let mut f = BloomFilter::with_fpr(n as u64, P)?;
            let t = timed(n, || f.insert_batch(keys));
            check.push(("classic insert_batch", f.bit_array().count_ones()));
            t
        }
        3 => {
            let mut f = BloomFilter::with_fpr(n as u64, P)?;
            let t = timed(n, || {
                f.insert_parallel(keys);
            });
            check.push(("classic insert_parallel", f.bit_array().count_ones()));
            t
        }
        4 | 5 => {
            let f = AtomicBlockedBloomFilter::with_fpr(n as u64, P)?;
            let threads = if v == 4 { 1 } else { 2 };
            let t = timed(n, || {
                shared_inserts(keys, threads, |k| {
                    f.insert(&k);
                })
            });
            check.push(("blocked-atomic", f.count_ones()));
            t
        }
        8 | 9 => {
            let f = AtomicBlockedBloomFilter::with_fpr(n as u64, P)?;
            let threads = if v == 8 { 1 } else { 2 };
            let t = timed(n, || {
                std::thread::scope(|s| {
                    for run in keys.chunks(n.div_ceil(threads)) {
                        let f = &f;
                        s.spawn(move || f.insert_batch(run));
                    }
                })
            });
            check.push(("blocked-atomic batch", f.count_ones()));
            t
        }
        10 => {
            // A split of one build over two threads with nothing to exchange: each thread
            // inserts its half of the keys into a half-size table of its own with
            // insert_batch — no key hashed twice, no exchange, no merge, the same random
            // read-modify-writes.
            let half = keys.len() / 2;
            let mut a = BlockedBloomFilter::with_fpr(half as u64, P)?;
            let mut b = BlockedBloomFilter::with_fpr((keys.len() - half) as u64, P)?;
            let (ka, kb) = keys.split_at(half);
            timed(n, || {
                std::thread::scope(|s| {
                    s.spawn(|| b.insert_batch(kb));
                    a.insert_batch(ka);
                })
            })
        }
        _ => {
            let f = FastBloomAtomic::new(n as u64, P, seed);
            let threads = if v == 6 { 1 } else { 2 };
            timed(n, || {
                shared_inserts(keys, threads, |k| f.insert_shared(&k.to_le_bytes()))
            })
        }
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Run the experiment, on a thread free to use every core (the harness pins its measuring
/// thread to one CPU, and threads inherit the pin).
pub fn run(ctx: &Context) -> Result<Experiment, Error> {
    std::thread::scope(|s| {
        s.spawn(|| {
            let unpinned = control::unpin_current_thread();
            measure(ctx, unpinned)
        })
        .join()
        .map_err(|_| Error::measurement("the measuring thread panicked"))?
    })
}

// Variants: 0 / 1 the blocked build (one thread, all cores), 2 / 3 the classic build, 4 / 5
// atomic inserts (1 and 2 threads), 6 / 7 fastbloom's atomic inserts, 8 / 9 atomic batched
// inserts, 10 the blocked build's split reference (two threads, a half-size table each).
// A round runs every group once, each in its order and then reversed — A B B A for a pair;
// ours and fastbloom's atomic inserts together, 4 6 5 7 7 5 6 4 — so that every variant
// of a group sits at the same mean position and a linear drift of the machine's speed
// cancels from every ratio taken inside it, the speed-ups and ours ÷ fastbloom's alike.
const VARIANTS: usize = 11;
const GROUPS: [&[usize]; 4] = [&[0, 1, 10], &[2, 3], &[4, 6, 5, 7], &[8, 9]];
// Speed-ups, one thread ÷ all cores (the last: one thread ÷ the split reference), in the
// order of the series below, each with the name it is recorded under.
const PAIRS: [(usize, usize, &str); 6] = [
    (0, 1, "blocked build: insert_batch ÷ insert_parallel"),
    (2, 3, "classic build: insert_batch ÷ insert_parallel"),
    (4, 5, "blocked-atomic inserts: 1 thread ÷ 2 threads"),
    (8, 9, "blocked-atomic insert_batch: 1 thread ÷ 2 threads"),
    (6, 7, "fastbloom-atomic inserts: 1 thread ÷ 2 threads"),
    (0, 10, "blocked build: insert_batch ÷ the split reference"),
];
// Ours ÷ fastbloom's atomic inserts, with 1 and with 2 threads; the blocked parallel
// build ÷ its split reference.
const VERSUS: [(usize, usize, &str); 3] = [
    (
        4,
        6,
        "blocked-atomic ÷ fastbloom-atomic insert time, 1 thread",
    ),
    (
        5,
        7,
        "blocked-atomic ÷ fastbloom-atomic insert time, 2 threads",
    ),
    (
        1,
        10,
        "blocked build: insert_parallel ÷ the split reference",
    ),
];

fn measure(ctx: &Context, unpinned: bool) -> Result<Experiment, Error> {
    let n = usize::try_from(keys_for(ctx.n)).map_err(|_| Error::measurement("too many keys"))?;
    let keys = KeySet::new(ctx.seed, n, 0).members;
    let cores = available_threads();
    let load_before = control::load_average();
    let r = rounds(n, &keys, ctx.seed)?;
    check_builds(&r.check)?;
    // Every paired ratio's median and interval, computed once, recorded under its name.
    let speedup: Vec<Interval> = r.speedup.iter().map(|v| median_interval(v)).collect();
    let versus: Vec<Interval> = r.versus.iter().map(|v| median_interval(v)).collect();
    let ratios = PAIRS
        .iter()
        .map(|p| p.2)
        .zip(&speedup)
        .chain(VERSUS.iter().map(|p| p.2).zip(&versus))
        .map(|(name, &ratio)| NamedRatio {
            name: name.into(),
            ratio,
        })
        .collect();
    Ok(Experiment {
        ratios,
        ..Experiment::new(
            "concurrent",
            format!("Concurrent inserts and parallel builds, n = {n}, {cores} cores"),
            description(n, cores, unpinned, load_before),
            (
                Axis::linear("threads"),
                Axis::linear("ns per key (wall clock)"),
            ),
            all_series(&r, &speedup, &versus, cores),
        )
    })
}

/// Every variant's times and every pair's ratios, round by round.
struct Rounds {
    /// Per variant, per run: wall and CPU ns per key.
    wall: Vec<Vec<f64>>,
    cpu: Vec<Vec<f64>>,
    /// Per pair, per round: (A₁ + A₂) ÷ (B₁ + B₂) of wall time, and (B₁ + B₂) ÷ (A₁ + A₂) of
    /// CPU time (the work the all-cores run does, as a multiple of one thread's).
    speedup: Vec<Vec<f64>>,
    work: Vec<Vec<f64>>,
    /// Per [`VERSUS`] pair, per round: the time ratio.
    versus: Vec<Vec<f64>>,
    /// Each build's label and set-bit count.
    check: Vec<(&'static str, u64)>,
}

/// Run the [`ROUNDS`] rounds.
fn rounds(n: usize, keys: &[u64], seed: u64) -> Result<Rounds, Error> {
    let mut wall = vec![Vec::new(); VARIANTS];
    let mut cpu = vec![Vec::new(); VARIANTS];
    // Per pair, per round: (A₁ + A₂) ÷ (B₁ + B₂) of wall time, and (B₁ + B₂) ÷ (A₁ + A₂) of CPU
    // time (the work the all-cores run does, as a multiple of one thread's).
    let mut speedup = vec![Vec::new(); PAIRS.len()];
    let mut work = vec![Vec::new(); PAIRS.len()];
    let mut versus = vec![Vec::new(); VERSUS.len()];
    let mut check = Vec::new();
    for round in 0..ROUNDS {
        // This round's two runs of each variant, added: (wall, CPU).
        let mut sum = [(0.0, 0.0); VARIANTS];
        for i in 0..GROUPS.len() {
            let group = GROUPS[(i + round * 3) % GROUPS.len()]; // the order rotated each round
            for &v in group.iter().chain(group.iter().rev()) {
                let t = measure_variant(v, n, keys, seed, &mut check)?;
                wall[v].push(t.0);
                cpu[v].push(t.1);
                sum[v] = (sum[v].0 + t.0, sum[v].1 + t.1);
            }
        }
        for (p, &(one, all, _)) in PAIRS.iter().enumerate() {
            speedup[p].push(sum[one].0 / sum[all].0);
            work[p].push(sum[all].1 / sum[one].1);
        }
        for (p, &(ours, theirs, _)) in VERSUS.iter().enumerate() {
            versus[p].push(sum[ours].0 / sum[theirs].0);
        }
    }
    Ok(Rounds {
        wall,
        cpu,
        speedup,
        work,
        versus,
        check,
    })
}

/// Every blocked build holds the same bits, and so does every classic one.
fn check_builds(check: &[(&'static str, u64)]) -> Result<(), Error> {
    for name in ["blocked", "classic"] {
        let ones: Vec<u64> = check
            .iter()
            .filter(|(l, _)| l.starts_with(name))
            .map(|&(_, o)| o)
            .collect();
        if ones.windows(2).any(|w| w[0] != w[1]) {
            return Err(Error::measurement(format!(
                "{name}: builds differ in their bits: {ones:?}"
            )));
        }
    }
    Ok(())
}

/// One speed-up's series: one thread and all cores, with the figures in its note.
fn series_of(
    r: &Rounds,
    speedup: &[Interval],
    (label, filter, peer): (&str, &str, bool),
    p: usize,
    x_all: f64,
) -> Series {
    let med = |v: usize| (median(r.wall[v].clone()), median(r.cpu[v].clone()));
    let (one, all, _) = PAIRS[p];
    let ((w1, c1), (wn, cn)) = (med(one), med(all));
    let s = speedup[p];
    let wk = median(r.work[p].clone());
    Series {
        label: label.into(),
        filter: filter.into(),
        peer,
        points: vec![
            Point {
                x: 1.0,
                y: w1,
                theory: None,
                ci: None,
                x_ci: None,
            },
            Point {
                x: x_all,
                y: wn,
                theory: None,
                ci: None,
                x_ci: None,
            },
        ],
        note: format!(
            "wall {w1:.1} → {wn:.1} ns/key; paired speed-up {:.2}x [{:.2}–{:.2}] over \
             {ROUNDS} rounds; CPU {c1:.1} → {cn:.1} ns/key (the parallel run does {wk:.2}x \
             the work)",
            s.mid, s.lo, s.hi
        ),
    }
}

/// The six series, with the paired ratios against the split reference and fastbloom's
/// atomic inserts in their notes.
fn all_series(r: &Rounds, speedup: &[Interval], versus: &[Interval], cores: usize) -> Vec<Series> {
    let series_of = |label: &str, filter: &str, peer: bool, p: usize, x_all: f64| {
        series_of(r, speedup, (label, filter, peer), p, x_all)
    };
    // Ours ÷ fastbloom's atomic inserts, paired within the rounds, for both series' notes.
    let versus_note = {
        let [one, two] = [versus[0], versus[1]];
        format!(
            "; blocked-atomic ÷ fastbloom-atomic insert time, paired within the rounds: \
             {:.2}x [{:.2}–{:.2}] with 1 thread, {:.2}x [{:.2}–{:.2}] with 2",
            one.mid, one.lo, one.hi, two.mid, two.lo, two.hi
        )
    };
    let mut series = vec![
        series_of(
            "blocked build: insert_batch vs insert_parallel",
            "blocked",
            false,
            0,
            cores as f64,
        ),
        series_of(
            "classic build: insert_batch vs insert_parallel",
            "classic",
            false,
            1,
            cores as f64,
        ),
        series_of(
            "blocked-atomic: inserts from 1 and 2 threads",
            "blocked-atomic",
            false,
            2,
            2.0,
        ),
        series_of(
            "blocked-atomic insert_batch: from 1 and 2 threads",
            "blocked-atomic",
            false,
            3,
            2.0,
        ),
        series_of(
            "fastbloom-atomic: inserts from 1 and 2 threads",
            "fastbloom-atomic",
            true,
            4,
            2.0,
        ),
        series_of(
            "blocked build: insert_batch vs the split reference (two threads, a half-size table each)",
            "blocked",
            false,
            5,
            2.0,
        ),
    ];
    // The parallel build against its split reference, in the same rounds, on both blocked series.
    let reference = versus[2];
    for s in series
        .iter_mut()
        .filter(|s| s.label.starts_with("blocked build"))
    {
        s.note.push_str(&format!(
            "; insert_parallel ÷ the split reference, time paired within the rounds: \
             {:.2}x [{:.2}–{:.2}]",
            reference.mid, reference.lo, reference.hi
        ));
    }
    for s in series
        .iter_mut()
        .filter(|s| s.filter.ends_with("-atomic") && !s.label.contains("batch"))
    {
        s.note.push_str(&versus_note);
    }
    series
}

/// The experiment's description: what was measured, how, and the load around it.
fn description(n: usize, cores: usize, unpinned: bool, load_before: Option<f64>) -> String {
    let load = |l: Option<f64>| l.map_or_else(|| "unknown".into(), |l| format!("{l:.2}"));
    format!(
        "{n} random u64 keys at a 1 % target; {cores} cores available \
         (std::thread::available_parallelism, measured on a thread {} the harness's \
         one-CPU pin); 1-minute load average {} before and {} after. \
         Build ns/key (wall clock) with one thread and with insert_parallel (all cores; \
         blocked: each core hashes its share of the keys, eight at a time in vector lanes \
         where the CPU has AVX-512, and hands each key to the core \
         that owns its block's share of the table, in batches; classic: the same with each \
         key's k bit positions handed to the core that owns their words; both bit-identical, checked here by the set-bit counts), and \
         inserts into one shared atomic filter from 1 and \
         2 threads (contiguous runs of keys). Beside the blocked build, its split reference: \
         two threads each inserting its half of the keys into a half-size table of its own \
         with insert_batch (no key hashed twice, no exchange, the same random \
         read-modify-writes), in the same rounds (insert_batch, insert_parallel, the reference, \
         and back): insert_parallel ÷ the reference sets the cost of moving keys to their \
         owners against the lanes' faster hashing (below 1: the lanes save more). Each speed-up: the median over {ROUNDS} \
         rounds of (A1 + A2) / (B1 + B2) with the one-thread (A) and all-cores (B) runs \
         in the order A B B A, [a bootstrap 95 % interval]; ours and fastbloom's atomic \
         inserts run as one group, 1-thread ours, fastbloom's, 2-thread ours, fastbloom's, \
         then the same reversed, so their ratio is paired the same way; the order of the \
         groups rotated each round; ns/key: medians over the rounds. Process CPU time \
         beside each: on a loaded machine the wall-clock gain is capped by the cores \
         other processes hold, the CPU time shows the extra work a parallel run does.",
        if unpinned {
            "freed from"
        } else {
            "still under"
        },
        load(load_before),
        load(control::load_average()),
    )
}
