//! Threads: T threads querying one shared filter (`--threads T`), beside the same filter
//! queried by one thread. Read-only filters share `&filter` across threads as they are; the
//! atomic blocked filter is the one of ours built for sharing. Each thread queries its own
//! stream of distinct keys (half members); the aggregate is all threads' lookups over the wall
//! time from the first thread's start to the last one's end, so it counts what contention on
//! the memory system costs. On a 2-vCPU machine shared with other work, T above 2 measures
//! time-slicing, not parallelism; the figure says how many CPUs the process had.

use crate::error::Error;
use crate::keys::{KeyShape, Keys, Workload};
use crate::schema::{Axis, Experiment, NamedRatio, Point, Series};
use crate::stats::{Interval, median_interval};

use super::Context;

/// Entries of the default run: read-only filters and the atomic blocked filter.
pub const MAIN: &[&str] = &[
    "blocked",
    "classic",
    "sbbf",
    "ribbon",
    "fastbloom",
    "sbbf-rs",
    "xorf-bfuse8",
    "blocked-atomic",
];

/// Target FPR.
pub const TARGET: f64 = 0.01;

/// Timed rounds (each: one single-thread pass, one T-thread pass).
const ROUNDS: u32 = 7;

/// Run with `threads` threads at `n` keys, on a thread free to use every core (the harness
/// pins its measuring thread to one CPU, and threads inherit the pin).
pub fn run(ctx: &Context, threads: usize, n: u64) -> Result<Experiment, Error> {
    std::thread::scope(|s| {
        s.spawn(|| {
            crate::control::unpin_current_thread();
            measure(ctx, threads, n)
        })
        .join()
        .map_err(|_| Error::measurement("the measuring thread panicked"))?
    })
}

fn measure(ctx: &Context, threads: usize, n: u64) -> Result<Experiment, Error> {
    let (keys, streams, per_thread) = thread_streams(ctx, threads, n)?;
    let spec = ctx.spec(n, TARGET);
    let mut series = Vec::new();
    let mut ratios = Vec::new();
    for e in ctx.entries {
        if e.info.batched
            || e.info.equal_memory
            || e.info.kind == crate::adapters::Kind::Exact
            || (!ctx.full && !MAIN.contains(&e.info.name))
        {
            continue;
        }
        let built = e.build(&spec, &keys.members)?;
        let f = &built.filter;
        let (mut single, mut multi, mut scale) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let start = std::time::Instant::now();
            std::hint::black_box(f.time_lookups(&streams[0]));
            let one = streams[0].len() as f64 / start.elapsed().as_secs_f64() / 1e6;
            let start = std::time::Instant::now();
            std::thread::scope(|s| {
                for st in &streams {
                    s.spawn(move || std::hint::black_box(f.time_lookups(st)));
                }
            });
            let total: usize = streams.iter().map(|s| s.len()).sum();
            let all = total as f64 / start.elapsed().as_secs_f64() / 1e6;
            single.push(one);
            multi.push(all);
            scale.push(all / one);
        }
        let (s1, st): (Interval, Interval) = (median_interval(&single), median_interval(&multi));
        ratios.push(NamedRatio {
            name: format!(
                "{}: {threads} threads ÷ 1 thread, lookups per second",
                e.info.name
            ),
            ratio: median_interval(&scale),
        });
        series.push(series_of(e, &built, (s1, st), threads, per_thread));
    }
    Ok(Experiment {
        ratios,
        ..Experiment::new(
            "threads",
            format!(
                "{threads} threads querying one shared filter at n = {n}, 1 %: million lookups per second"
            ),
            format!(
                "One filter of {n} keys at 1 % per entry, queried by 1 thread and by {threads} threads at once (each its own stream of {per_thread} keys, half members), {ROUNDS} rounds alternating the two; y = million lookups per second in aggregate (wall clock), median and 95 % interval over the rounds; the process had {} CPUs.",
                std::thread::available_parallelism()
                    .map(|c| c.get())
                    .unwrap_or(1)
            ),
            (
                Axis::linear("threads"),
                Axis::linear("million lookups per second"),
            ),
            series,
        )
    })
}

/// The keys at `n`, and one lookup stream per thread (each half members, disjoint
/// non-members) of up to 10^5 keys, that length.
fn thread_streams(
    ctx: &Context,
    threads: usize,
    n: u64,
) -> Result<(Workload, Vec<Keys>, usize), Error> {
    let n_usize = usize::try_from(n).map_err(|_| Error::measurement("n too large"))?;
    let per_thread = n_usize.min(100_000);
    let keys = Workload::new(
        &KeyShape::U64,
        ctx.seed,
        n_usize,
        per_thread * threads + per_thread,
    )?;
    // One stream per thread, each half members, disjoint non-members.
    let mut streams = Vec::with_capacity(threads);
    for t in 0..threads {
        let (s, _) = keys.streams(ctx.seed ^ (t as u64 + 1), per_thread, &[50], None)?;
        streams.push(s.into_iter().next().expect("one mix"));
    }
    Ok((keys, streams, per_thread))
}

/// An entry's series: lookups per second from one thread and from `threads`.
fn series_of(
    e: &crate::adapters::Entry,
    built: &crate::adapters::Build,
    (s1, st): (Interval, Interval),
    threads: usize,
    per_thread: usize,
) -> Series {
    Series {
        label: e.info.name.into(),
        filter: e.info.name.into(),
        peer: e.info.peer,
        points: vec![
            Point {
                x: 1.0,
                y: s1.mid,
                theory: None,
                ci: Some(s1),
                x_ci: None,
            },
            Point {
                x: threads as f64,
                y: st.mid,
                theory: None,
                ci: Some(st),
                x_ci: None,
            },
        ],
        note: format!(
            "{} heap bytes; one shared filter, {threads} threads of {per_thread} lookups each",
            built.heap_bytes
        ),
    }
}
