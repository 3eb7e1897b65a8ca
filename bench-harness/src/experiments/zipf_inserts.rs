//! Zipf inserts (issue: hot keys): every dynamic filter fed a stream of inserts with repeats,
//! Zipf-skewed with exponent 1.1 over a universe of `U = 10·n` keys (at most 10^6), `10·U`
//! inserts (10^7 in the default run): the few hottest keys arrive hundreds of thousands of
//! times, most keys a few times, about 44 % of the universe never.
//!
//! Each filter takes the stream twice, each time into a fresh filter (fixed-size filters sized
//! for `U`, growing ones starting at `U/8` as everywhere in the harness):
//!
//! - `insert`: every event inserted, as a naive "seen" filter or a multiset does;
//! - `if-absent`: an event inserted only if the filter answers "absent" (one lookup, then at
//!   most one insert: what `insert_unique` does).
//!
//! Measured per filter and mode: the live heap bytes after each tenth of the stream ÷ the
//! bytes of the same filter holding only the distinct keys seen so far (inserted once each, in
//! the order they first came: the plotted series, the last point the headline), ns per insert
//! over the stream (thread CPU time), ns per lookup afterwards (10^6 lookups, half distinct
//! members, half non-members), inserts refused, and false negatives (keys with an accepted
//! insert that test negative; must be 0). A stream whose inserts pass [`BUDGET`] of CPU time
//! or whose filter passes [`MEMORY_BUDGET`] is cut there and says so (a structure whose
//! inserts of a repeated key cost time or memory in the number of copies).

use crate::error::Error;
use std::time::Duration;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Zipf};

use crate::adapters::{Built, Entry, Spec};
use crate::alloc::net_bytes_signed;
use crate::control::ThreadClock;
use crate::schema::{Axis, Experiment, NamedRatio, Point, Series};
use crate::stats::Interval;

use super::Context;

/// The experiment's name (`--experiments zipf-inserts`).
pub const NAME: &str = "zipf-inserts";
/// Zipf exponent of the insert stream.
pub const EXPONENT: f64 = 1.1;
/// Target FPR of every filter.
pub const TARGET: f64 = 0.01;
/// Largest universe of distinct keys.
pub const MAX_UNIVERSE: usize = 1_000_000;
/// Inserts per key of the universe.
pub const INSERTS_PER_KEY: usize = 10;
/// Points per stream (bytes ratio after each tenth).
pub const CHECKPOINTS: usize = 10;
/// Lookups timed after the stream.
pub const LOOKUPS: usize = 200_000;
/// Time (the thread's CPU time, so a loaded machine does not cut sooner) one filter's
/// stream may take before it is cut.
pub const BUDGET: Duration = Duration::from_secs(4);
/// Live heap bytes one filter may reach before its stream is cut (a structure that grows
/// with every repeat).
pub const MEMORY_BUDGET: i64 = 512 << 20;
/// Inserts between two looks at the clock.
const CHUNK: usize = 1 << 14;

/// The filters fed the stream (when selected): every dynamic variant of ours that deletes or
/// grows, the blocked filter as the Bloom family's reference, and the dynamic peers that
/// delete or grow.
pub const FILTERS: &[&str] = &[
    "blocked",
    "counting",
    "cuckoo",
    "scalable",
    "expandable",
    "growable-bloom",
    "cuckoofilter",
    "scalable-cuckoo",
    "qfilter",
    "qfilter-resizing",
];

/// Added with `--full`: the other Bloom filters that take inserts.
pub const MORE: &[&str] = &["classic", "fastbloom", "bloomfilter"];

/// Filters not fed the `insert` stream, and why (they take the `if-absent` one).
pub const SKIP_INSERT: &[(&str, &str)] = &[(
    "scalable-cuckoo",
    "scalable_cuckoo_filter 0.5 inserts into its newest stage and adds a stage of twice the \
     capacity whenever an insert there fails; a key held 8 times fails there, so repeats of \
     the hottest key double the filter again and again (in a trial at 10^5 keys its heap \
     passed 23 GB and the process was killed)",
)];

/// How each event reaches the filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every event inserted.
    Insert,
    /// Inserted only if the filter answers "absent".
    IfAbsent,
}

impl Mode {
    /// Label in the series.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Insert => "insert",
            Mode::IfAbsent => "if-absent",
        }
    }
}

/// Key of rank `r` (0-based) of the universe, or a non-member for `r ≥ U`: a bijective mix of
/// `seed + r`, so distinct ranks give distinct keys.
pub fn key(seed: u64, r: u64) -> u64 {
    let mut z = seed.wrapping_add(r).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The stream: ranks in insert order, the distinct ranks in the order they first came, and
/// how many distinct ranks had come by the end of each tenth.
#[derive(Clone, Debug)]
pub struct Stream {
    /// Keys of the universe by rank.
    pub keys: Vec<u64>,
    /// Ranks in insert order.
    pub ranks: Vec<u32>,
    /// Distinct ranks in the order of their first insert.
    pub first: Vec<u32>,
    /// Distinct ranks seen by the end of each of the [`CHECKPOINTS`] segments.
    pub distinct_at: Vec<usize>,
}

impl Stream {
    /// `inserts` Zipf(`EXPONENT`) draws over `universe` ranks, from `seed`.
    pub fn new(seed: u64, universe: usize, inserts: usize) -> Result<Stream, Error> {
        let zipf = Zipf::new(universe as f64, EXPONENT).map_err(|e| Error::usage(e.to_string()))?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5A1F);
        let ranks: Vec<u32> = (0..inserts)
            .map(|_| (zipf.sample(&mut rng) as u32).clamp(1, universe as u32) - 1)
            .collect();
        let mut seen = vec![false; universe];
        let (mut first, mut distinct_at) = (Vec::new(), Vec::new());
        for (i, &r) in ranks.iter().enumerate() {
            if !std::mem::replace(&mut seen[r as usize], true) {
                first.push(r);
            }
            if (i + 1) % segment(inserts) == 0 || i + 1 == inserts {
                distinct_at.push(first.len());
            }
        }
        distinct_at.truncate(CHECKPOINTS);
        Ok(Stream {
            keys: (0..universe as u64).map(|r| key(seed, r)).collect(),
            ranks,
            first,
            distinct_at,
        })
    }
}

fn segment(inserts: usize) -> usize {
    inserts.div_ceil(CHECKPOINTS).max(1)
}

/// One filter's stream in one mode.
#[derive(Clone, Debug, PartialEq)]
pub struct Fed {
    /// Bytes after each segment ÷ the distinct-only filter's bytes at the same point.
    pub ratios: Vec<(usize, f64)>,
    /// Live heap bytes at the end of the stream (or where it was cut).
    pub bytes: usize,
    /// The distinct-only filter's bytes at that point.
    pub distinct_bytes: usize,
    /// Inserts made (the whole stream unless cut).
    pub inserts: usize,
    /// ns per event (an insert, or a lookup and maybe an insert) over the stream.
    pub ns_per_insert: f64,
    /// ns per lookup afterwards.
    pub lookup_ns: f64,
    /// Inserts refused.
    pub refused: u64,
    /// Of those, inserts of a key with no accepted insert before (a full table, or a key
    /// that other entries already answer for).
    pub refused_new: u64,
    /// New keys skipped because the filter said "maybe present" (`if-absent` only).
    pub skipped_new: u64,
    /// Keys with an accepted insert that test negative.
    pub false_negatives: u64,
    /// The stream was cut at [`BUDGET`].
    pub cut: bool,
}

/// Feed `stream` to a fresh filter of `e` in `mode`; `None` for a static entry.
pub fn feed(e: &Entry, stream: &Stream, mode: Mode, seed: u64) -> Option<Result<Fed, Error>> {
    let universe = stream.keys.len();
    let spec = Spec {
        n: universe as u64,
        fpr: TARGET,
        seed,
    };
    let (made, mut heap) = net_bytes_signed(|| e.new_empty(&spec));
    let mut f = match made? {
        Ok(f) => f,
        Err(err) => return Some(Err(err)),
    };
    let (reference, mut ref_heap) = net_bytes_signed(|| e.new_empty(&spec));
    let mut reference = match reference? {
        Ok(f) => f,
        Err(err) => return Some(Err(err)),
    };
    let mut accepted = vec![false; universe];
    let mut present = vec![false; universe];
    let (mut refused, mut skipped_new, mut done, mut cpu) = (0u64, 0u64, 0usize, Duration::ZERO);
    let mut refused_new = 0u64;
    let mut ratios = Vec::new();
    let (mut ref_done, mut cut) = (0usize, false);
    let seg = segment(stream.ranks.len());
    for (c, &distinct) in stream.distinct_at.iter().enumerate() {
        let end = ((c + 1) * seg).min(stream.ranks.len());
        while done < end && !cut {
            let upto = (done + CHUNK).min(end);
            let ranks = &stream.ranks[done..upto];
            let (t, grew) = net_bytes_signed(|| {
                let clock = ThreadClock::start();
                for &r in ranks {
                    let k = stream.keys[r as usize].to_le_bytes();
                    let ok = match mode {
                        Mode::Insert => f.insert(&k),
                        Mode::IfAbsent => {
                            if f.contains(&k) {
                                skipped_new += u64::from(!present[r as usize]);
                                present[r as usize] = true;
                                continue;
                            }
                            f.insert(&k)
                        }
                    };
                    refused_new += u64::from(!ok && !accepted[r as usize]);
                    accepted[r as usize] |= ok;
                    present[r as usize] = true;
                    refused += u64::from(!ok);
                }
                clock.elapsed()
            });
            cpu += t;
            heap += grew;
            done = upto;
            cut = (cpu > BUDGET || heap > MEMORY_BUDGET) && done < stream.ranks.len();
        }
        // The distinct-only filter: the keys that had come by this point, once each.
        let distinct = if cut {
            present.iter().filter(|&&p| p).count()
        } else {
            distinct
        };
        let ((), grew) = net_bytes_signed(|| {
            for &r in &stream.first[ref_done..distinct] {
                reference.insert(&stream.keys[r as usize].to_le_bytes());
            }
        });
        ref_heap += grew;
        ref_done = distinct;
        ratios.push((done, heap.max(0) as f64 / ref_heap.max(1) as f64));
        if cut {
            break;
        }
    }
    drop(reference);
    let (lookup_ns, _) = time_lookups(f.as_ref(), stream, ref_done, seed);
    let false_negatives = stream.first[..ref_done]
        .iter()
        .filter(|&&r| accepted[r as usize] && !f.contains(&stream.keys[r as usize].to_le_bytes()))
        .count() as u64;
    Some(Ok(Fed {
        ratios,
        bytes: heap.max(0) as usize,
        distinct_bytes: ref_heap.max(0) as usize,
        inserts: done,
        ns_per_insert: cpu.as_nanos() as f64 / done.max(1) as f64,
        lookup_ns,
        refused,
        refused_new,
        skipped_new,
        false_negatives,
        cut,
    }))
}

/// ns per lookup over [`LOOKUPS`] queries alternating between a distinct key of the first
/// `distinct` to come (uniformly) and a non-member; and the hits.
fn time_lookups(f: &dyn Built, stream: &Stream, distinct: usize, seed: u64) -> (f64, u64) {
    use rand::Rng;
    let universe = stream.keys.len() as u64;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x100C);
    let queries: Vec<[u8; 8]> = (0..LOOKUPS)
        .map(|j| {
            let k = if j % 2 == 0 && distinct > 0 {
                stream.keys[stream.first[rng.random_range(0..distinct)] as usize]
            } else {
                key(seed, universe + rng.random_range(0..1u64 << 40))
            };
            k.to_le_bytes()
        })
        .collect();
    let clock = ThreadClock::start();
    let hits = queries
        .iter()
        .filter(|q| f.contains(std::hint::black_box(&q[..])))
        .count() as u64;
    let t = clock.elapsed();
    (
        t.as_nanos() as f64 / LOOKUPS as f64,
        std::hint::black_box(hits),
    )
}

fn note(fed: &Fed, mode: Mode) -> String {
    let mut v = vec![
        format!(
            "{} bytes at the end vs {} for the distinct keys alone ({:.3}x)",
            fed.bytes,
            fed.distinct_bytes,
            fed.bytes as f64 / fed.distinct_bytes.max(1) as f64
        ),
        format!("{:.1} ns per insert", fed.ns_per_insert),
        format!(
            "{:.1} ns per lookup afterwards (50 % members)",
            fed.lookup_ns
        ),
        format!(
            "{} inserts refused ({} of keys with no accepted insert yet)",
            fed.refused, fed.refused_new
        ),
        format!("{} false negatives", fed.false_negatives),
    ];
    if mode == Mode::IfAbsent {
        v.push(format!(
            "{} new keys skipped as maybe present (false positives)",
            fed.skipped_new
        ));
    }
    if fed.cut {
        v.push(format!(
            "cut after {} inserts: the stream passed {} s of CPU time or {} MiB",
            fed.inserts,
            BUDGET.as_secs(),
            MEMORY_BUDGET >> 20
        ));
    }
    v.join("; ")
}

/// Run the experiment.
pub fn run(ctx: &Context) -> Result<Experiment, Error> {
    let n = usize::try_from(ctx.n).map_err(|_| Error::measurement("design capacity too large"))?;
    let universe = (10 * n).clamp(1, MAX_UNIVERSE);
    let inserts = INSERTS_PER_KEY * universe;
    let stream = Stream::new(ctx.seed, universe, inserts)?;
    let chosen = ctx
        .entries
        .iter()
        .filter(|e| FILTERS.contains(&e.info.name) || (ctx.full && MORE.contains(&e.info.name)));
    let (mut series, mut ratios) = (Vec::new(), Vec::new());
    for e in chosen {
        for mode in [Mode::Insert, Mode::IfAbsent] {
            if mode == Mode::Insert && SKIP_INSERT.iter().any(|(n, _)| *n == e.info.name) {
                continue;
            }
            let Some(fed) = feed(e, &stream, mode, ctx.seed) else {
                continue;
            };
            let fed = fed?;
            if !e.info.peer {
                let end = fed.bytes as f64 / fed.distinct_bytes.max(1) as f64;
                ratios.push(NamedRatio {
                    name: format!(
                        "{} ({}): bytes at the end / bytes of the distinct keys",
                        e.info.name,
                        mode.name()
                    ),
                    ratio: Interval::exact(end),
                });
            }
            series.push(Series {
                label: format!(
                    "{}{} ({})",
                    e.info.name,
                    if e.info.peer { " (peer)" } else { "" },
                    mode.name()
                ),
                filter: e.info.name.into(),
                peer: e.info.peer,
                points: fed
                    .ratios
                    .iter()
                    .map(|&(x, y)| Point {
                        x: x as f64,
                        y,
                        theory: None,
                        ci: None,
                        x_ci: None,
                    })
                    .collect(),
                note: note(&fed, mode),
            });
        }
    }
    Ok(Experiment {
        ratios,
        ..Experiment::new(
            NAME,
            format!(
                "Zipf inserts: memory with repeats, {inserts} inserts (s = {EXPONENT}) over {universe} keys"
            ),
            format!(
                "Each filter takes {inserts} inserts drawn Zipf(s = {EXPONENT}) over {universe} \
             distinct keys ({} of them come, the hottest {} times) at a 1 % target, twice: \
             every event inserted (insert) and an event inserted only if the filter answers \
             absent (if-absent). y = live heap bytes after each tenth of the stream / bytes of \
             the same filter holding only the distinct keys seen so far. The notes give ns per \
             insert, ns per lookup afterwards, inserts refused and false negatives (keys with \
             an accepted insert that test negative). A stream is cut at {} s of CPU time or \
             {} MiB. \
             Not fed the insert stream: {}.",
                stream.first.len(),
                stream.ranks.iter().filter(|&&r| r == 0).count(),
                BUDGET.as_secs(),
                MEMORY_BUDGET >> 20,
                SKIP_INSERT
                    .iter()
                    .map(|(n, why)| format!("{n} ({why})"))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            (
                Axis::linear("inserts so far"),
                Axis::linear("bytes / bytes of the distinct keys alone"),
            ),
            series,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_repeats_and_counts_its_distinct_keys() {
        let s = Stream::new(7, 10_000, 100_000).unwrap();
        assert_eq!(s.ranks.len(), 100_000);
        assert_eq!(s.distinct_at.len(), CHECKPOINTS);
        assert_eq!(*s.distinct_at.last().unwrap(), s.first.len());
        assert!(s.distinct_at.windows(2).all(|w| w[0] <= w[1]));
        // Rank 0 is the hottest: about 1 / H(10^4, 1.1) of the draws, H ≈ 7.3.
        let hot = s.ranks.iter().filter(|&&r| r == 0).count();
        assert!((11_000..16_000).contains(&hot), "{hot}");
        let mut distinct = s.first.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), s.first.len());
        assert!(s.first.len() < 10_000);
    }
}
