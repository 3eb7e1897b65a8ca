//! The driver: every selected filter × target FPR × size, measured the same way.
//!
//! # Interleaved measurement
//! At each size the driver builds every selected filter (every target of every tunable
//! entry, plus each fixed-parameter entry once) [`replicas`] times — each pass over all of
//! them in an order shuffled with a fixed seed — and keeps every build alive. Then come the
//! lookup rounds, [`Plan::lookup_passes`] of them: each round times one pass of every
//! (filter, mix) pair in a freshly shuffled order, using build `round % replicas` of each,
//! every timed pass right after an untimed warm-up pass of the same build over a stream of
//! other keys; if the thread was switched out anywhere in that pair, it is redone. A burst of
//! noise from elsewhere on the machine therefore lands on every filter alike, a ratio
//! between two filters is taken round by round (see [`crate::stats`]), and no timed pass
//! depends on what ran before it: at 10^6 a filter fits in L2 once warmed, and without the
//! warm-up how much of it the previous passes — or another process, while this thread was
//! switched out — had evicted moved its time by up to 2.5×.
//!
//! ## What varies between runs, and how the intervals cover it
//! Between runs every filter of a size moves together with the machine's speed, which ratios
//! cancel; what is left comes from where each build's pages landed and from what else shares
//! the caches. Hence [`replicas`] (several builds of each filter, resampled by a two-stage
//! bootstrap: builds, then rounds), the warm-up right before each timed pass, and the chunks
//! after a thread switch left out. On a loaded machine ratios still move with the load
//! (memory-bound filters lose more when another process shares the caches), so ±10 % between
//! runs needs a quiet machine with its last-level cache to itself. The runs that established
//! this are described in `docs/design/harness.md`; `results/repeatability.md` holds the
//! current repeatability figures.
//!
//! ## CPUs
//! The lookup rounds move across the CPUs the process may use (at most
//! [`crate::control::MAX_ROUND_CPUS`], and no more than there are whole blocks; the
//! session's home CPU first): round `r` runs on CPU `(r / replicas) mod c`, so every CPU
//! times every build; each round's CPU is recorded ([`Lookup::round_cpus`]), and every
//! figure is the geometric mean of the per-CPU medians (each CPU weighs the same; the
//! interval draws builds once per resample, as they are crossed with CPUs:
//! [`crate::stats::stratified_median_interval`]). Before, the thread stayed on the CPU it
//! started on, and which CPU a run started on moved its ratios by more than its intervals
//! allowed; the runs that showed it are described in `docs/design/harness.md`.
//!
//! Where memory does not allow every filter of one size at once (sizes at or above
//! [`Plan::split_at`], 10^8 in `--full`), the filters are grouped per target (fixed-parameter
//! entries join the group of the target nearest 1 %): ratios within a group stay paired, and
//! ratios across groups are unpaired (wider intervals). At 10^8 the largest group (the 1 %
//! target with the fixed-parameter entries, among them a 1.2 GiB `HashSet`) holds about
//! 5.3 GiB of filters, plus 0.9 GiB of keys and lookup streams: the heap bytes measured at
//! 10^7 (0.48 / 0.34 / 0.28 GiB per target at 0.1 / 1 / 3 %, 0.19 GiB fixed-parameter)
//! scaled by 10. Building every filter at once would need about 13 GiB.
//!
//! # Timing
//! Every time is read from the thread's CPU clock ([`crate::control::ThreadClock`]) with the
//! measuring thread pinned to one CPU at a time (see *CPUs*), and a lookup pass is timed in
//! chunks of [`crate::adapters::CHUNK`] keys; a chunk during which the thread was switched
//! out is left out (see [`crate::adapters::Built::time_pass`]). On the shared 2-core development machine
//! (load average 7–12 from other builds) 80–95 % of the chunks were clean.

use crate::error::Error;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use crate::adapters::{Build, Entry, Pass, Spec};
use crate::experiments;
use crate::floor::random_read_ns;
use crate::keys::{KeyShape, Keys, Workload};
use crate::labels::size_label;
use crate::schema::{Lookup, Phase, Results, Row, RunConfig, SCHEMA_VERSION, SizeFloor};
use crate::stats::{Z95, median_interval, rounds_interval, wilson};

/// What to run.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Sizes (items).
    pub sizes: Vec<u64>,
    /// Target FPRs.
    pub fprs: Vec<f64>,
    /// Key seed.
    pub seed: u64,
    /// `--full`: more mixes and sizes.
    pub full: bool,
    /// Non-member probes per FPR figure.
    pub fpr_probes: usize,
    /// Keys per timed lookup pass (capped by n).
    pub lookup_keys: usize,
    /// Interleaved timed rounds per lookup figure.
    pub lookup_passes: u32,
    /// From this size on, filters are interleaved per target instead of all together.
    pub split_at: u64,
    /// Experiments to run (names).
    pub experiments: Vec<String>,
    /// Design capacity for experiments.
    pub experiment_n: u64,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// What the keys look like (`--keys`).
    pub keys: KeyShape,
    /// Zipf exponent of the lookup streams (`--zipf`); `None`: uniform, distinct keys.
    pub zipf: Option<f64>,
    /// Threads querying one shared filter (`--threads`); `None`: single-thread figures only.
    pub threads: Option<usize>,
}

impl Plan {
    /// The quick default, a few minutes on two cores: 10^5 and 10^6 keys (in cache on every
    /// machine), and through the `many-filters` experiment an out-of-LLC point (filters
    /// totalling at least twice the detected LLC). 10^7, in cache on a 260 MiB L3 and the
    /// costliest size by far (every entry built twice at 10^7), is measured by `--full`.
    pub fn quick(seed: u64) -> Self {
        Plan {
            sizes: vec![100_000, 1_000_000],
            fprs: vec![0.001, 0.01, 0.03],
            seed,
            full: false,
            fpr_probes: 1_000_000,
            // Many short rounds rather than a few long ones: the median of 31 paired per-round
            // ratios is about 0.7× as uncertain as that of 15, for the same lookups in total.
            // Eight whole chunks per pass (it was 50 000 keys before each pass had its own
            // warm-up pass, which doubles the lookups; a short pass is also less often
            // interrupted, so fewer are redone).
            lookup_keys: 8 * crate::adapters::CHUNK,
            lookup_passes: 31,
            split_at: 100_000_000,
            experiments: experiments::names(),
            experiment_n: 100_000,
            progress: true,
            keys: KeyShape::U64,
            zipf: None,
            threads: None,
        }
    }

    /// `--full`: adds 10^7, 10^8 and the 25 % / 75 % mixes.
    pub fn full(seed: u64) -> Self {
        Plan {
            sizes: vec![100_000, 1_000_000, 10_000_000, 100_000_000],
            fpr_probes: 10_000_000,
            lookup_keys: 200_000,
            lookup_passes: 15,
            full: true,
            experiment_n: 1_000_000,
            ..Plan::quick(seed)
        }
    }

    /// Positive percentages measured.
    pub fn mixes(&self) -> Vec<u32> {
        if self.full {
            vec![0, 25, 50, 75, 100]
        } else {
            vec![0, 50, 100]
        }
    }
}

/// Independently allocated builds of every filter at size `n`, all kept alive and timed in
/// turn by the lookup rounds (round `r` times replica `r % replicas`): where a filter's pages
/// land (page colour, TLB reach, DRAM banks) moved one filter's ns/op by 4–7 % between two
/// builds at 10^7 in the same process, a difference that one build per run turns into an
/// unmeasured between-run spread. Every build is also a timed build pass. At 10^8 and above
/// one build per filter (memory); fewer at 10^7, where one build takes seconds.
pub fn replicas(n: u64) -> u32 {
    if n >= 100_000_000 {
        1
    } else if n >= 10_000_000 {
        2
    } else if n >= 1_000_000 {
        3
    } else {
        5
    }
}

/// Timed build passes at size `n` (one per replica).
pub fn build_passes(n: u64) -> u32 {
    replicas(n)
}

/// Memory floor at `bytes`, with a read count that keeps it quick.
fn floor_at(bytes: usize, seed: u64) -> f64 {
    random_read_ns(bytes, 500_000, 5, seed)
}

/// One filter at one target, inside an interleaving group.
struct Subject<'a> {
    entry: &'a Entry,
    spec: Spec,
    label: String,
    /// Independently allocated builds (see [`replicas`]); round `r` times replica `r % len`.
    built: Vec<Build>,
    failed: bool,
    build_ns: Vec<f64>,
    /// Per mix, per round: ns per lookup.
    times: Vec<Vec<f64>>,
    hits: Vec<u64>,
}

/// Attempts at one warm-up-and-pass pair before it is kept even though the thread was
/// switched out during it. Three: on the shared machine at load 4–6, a pair at 10^7 (about
/// 6 ms) is rarely uninterrupted, and sixteen attempts made one run take over 6 minutes.
pub const MAX_TRIES: u32 = 3;

/// Counts of the lookup passes of a run.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    /// Timed passes kept.
    passes: u64,
    /// Warm-up-and-pass attempts (≥ passes; the rest were redone).
    tries: u64,
    /// Passes kept although interrupted (after [`MAX_TRIES`] attempts).
    unclean: u64,
    /// Chunks of the kept passes timed without a switch, and all their chunks.
    clean_chunks: u64,
    chunks: u64,
}

impl Tally {
    /// Count a group's passes in.
    fn add(&mut self, c: &Tally) {
        self.passes += c.passes;
        self.tries += c.tries;
        self.unclean += c.unclean;
        self.clean_chunks += c.clean_chunks;
        self.chunks += c.chunks;
    }

    /// Record the run's share of clean chunks and of redone passes in its conditions.
    fn record(&self, c: &mut crate::control::Conditions) {
        c.clean_chunks_pct =
            (self.chunks > 0).then(|| self.clean_chunks as f64 * 100.0 / self.chunks as f64);
        c.redone_passes_pct =
            (self.tries > 0).then(|| (self.tries - self.passes) as f64 * 100.0 / self.tries as f64);
        c.unclean_passes = Some(self.unclean);
    }
}

/// The groups of one size: indexes into `(entry, target)` pairs; `None` target = fixed.
fn groups<'a>(entries: &'a [Entry], plan: &Plan, n: u64) -> Vec<Vec<(&'a Entry, Option<f64>)>> {
    let tunable: Vec<&Entry> = entries.iter().filter(|e| e.info.tunable).collect();
    let fixed: Vec<&Entry> = entries.iter().filter(|e| !e.info.tunable).collect();
    if n < plan.split_at {
        let mut g = Vec::new();
        for e in &tunable {
            for &p in &plan.fprs {
                g.push((*e, Some(p)));
            }
        }
        g.extend(fixed.iter().map(|e| (*e, None)));
        return vec![g];
    }
    let near = nearest_to_one_pct(&plan.fprs);
    plan.fprs
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let mut g: Vec<(&Entry, Option<f64>)> = tunable.iter().map(|e| (*e, Some(p))).collect();
            if i == near {
                g.extend(fixed.iter().map(|e| (*e, None)));
            }
            g
        })
        .collect()
}

fn nearest_to_one_pct(fprs: &[f64]) -> usize {
    let d = |p: f64| (p.ln() - 0.01f64.ln()).abs();
    (0..fprs.len())
        .min_by(|&a, &b| d(fprs[a]).total_cmp(&d(fprs[b])))
        .unwrap_or(0)
}

/// Keys touched by one subject at size `n` (the progress bar's unit, so its ETA scales).
fn work(plan: &Plan, n: u64) -> u64 {
    let mixes = plan.mixes().len() as u64;
    // Per round and mix: one untimed warm-up pass and one timed pass.
    let lookups =
        plan.lookup_keys.min(n as usize) as u64 * mixes * 2 * u64::from(plan.lookup_passes);
    n * u64::from(build_passes(n)) + lookups + plan.fpr_probes as u64
}

/// One size's keys: the workload (members and non-member probes), the timed streams (one
/// per mix) cut into the chunks a pass times one by one, and the warm-up stream.
struct SizeKeys {
    keys: Workload,
    streams: Vec<Vec<Keys>>,
    warm: Keys,
}

/// What the measurement of one group reads and adds to, beside the group itself.
struct GroupRun<'a> {
    plan: &'a Plan,
    n: u64,
    sk: &'a SizeKeys,
    bar: &'a ProgressBar,
}

fn measure_group(
    group: &[(&Entry, Option<f64>)],
    group_id: u32,
    g: &GroupRun,
    rng: &mut ChaCha8Rng,
    session: &crate::control::Session,
    phases: &mut Phases,
) -> (Vec<Row>, Tally) {
    let label = size_label(g.n);
    let mut subjects = subjects_of(group, g);
    let started = Mark::now();
    build_replicas(&mut subjects, g, rng);
    phases.add(format!("n = {label}: builds"), started);
    let started = Mark::now();
    let (tally, round_cpus) = lookup_rounds(&mut subjects, g, rng, session);
    session.return_home();
    phases.add(format!("n = {label}: lookup rounds"), started);
    let started = Mark::now();
    let probes =
        g.sk.keys
            .probes
            .slice(0..g.plan.fpr_probes.min(g.sk.keys.probes.len()));
    let mut rows = Vec::new();
    for s in subjects.iter_mut() {
        if s.failed || s.built.is_empty() {
            continue;
        }
        rows.push(row_of(s, g, &probes, group_id, &round_cpus));
    }
    phases.add(format!("n = {label}: FPR probes"), started);
    (rows, tally)
}

/// The group's subjects, nothing built yet.
fn subjects_of<'a>(group: &[(&'a Entry, Option<f64>)], g: &GroupRun) -> Vec<Subject<'a>> {
    let (n, mixes) = (g.n, g.plan.mixes().len());
    group
        .iter()
        .map(|&(entry, p)| Subject {
            entry,
            spec: Spec {
                n,
                fpr: p.unwrap_or(0.01),
                seed: g.plan.seed,
            },
            label: match p {
                Some(p) => format!("{} p={}% n={n}", entry.info.name, p * 100.0),
                None => format!("{} n={n}", entry.info.name),
            },
            built: Vec::new(),
            failed: false,
            build_ns: Vec::new(),
            times: vec![Vec::new(); mixes],
            hits: vec![0; mixes],
        })
        .collect()
}

/// Builds, interleaved: each pass builds every subject once, in a shuffled order, and keeps
/// the build as one more independently allocated replica.
fn build_replicas(subjects: &mut [Subject], g: &GroupRun, rng: &mut ChaCha8Rng) {
    let (members, bar) = (&g.sk.keys.members, g.bar);
    for _ in 0..replicas(g.n) {
        let mut order: Vec<usize> = (0..subjects.len()).collect();
        order.shuffle(rng);
        for i in order {
            let s = &mut subjects[i];
            if s.failed {
                continue;
            }
            bar.set_message(format!("build {}", s.label));
            match s.entry.build(&s.spec, members) {
                Ok(b) => {
                    s.build_ns
                        .push(b.elapsed.as_nanos() as f64 / members.len().max(1) as f64);
                    s.built.push(b);
                }
                Err(e) => {
                    bar.println(format!("skipped {}: {e}", s.label));
                    s.failed = true;
                    s.built.clear();
                }
            }
            bar.inc(g.n);
        }
    }
}

/// Lookups: rounds, each timing every (subject, mix) pair once in a freshly shuffled order;
/// round `r` uses replica `r % replicas` of every subject. Each timed pass comes right after
/// an untimed warm-up pass of the same build over the warm-up stream, so it starts from the
/// same cache state whatever ran before it (at 10^6 a filter fits in L2 once warmed). A
/// switch of the thread means another process has had the core and its caches: the pass
/// counts only its chunks before the first switch, and the pair is run again (up to
/// [`MAX_TRIES`] times; the share redone is recorded) when the switch came during the
/// warm-up or in the pass's first half. Returns the passes' tally and each round's CPU.
fn lookup_rounds(
    subjects: &mut [Subject],
    g: &GroupRun,
    rng: &mut ChaCha8Rng,
    session: &crate::control::Session,
) -> (Tally, Vec<usize>) {
    let (plan, n, bar) = (g.plan, g.n, g.bar);
    let mixes = plan.mixes();
    let pairs: Vec<(usize, usize)> = (0..subjects.len())
        .filter(|&i| !subjects[i].failed && !subjects[i].built.is_empty())
        .flat_map(|i| (0..mixes.len()).map(move |m| (i, m)))
        .collect();
    let mut tally = Tally::default();
    // Rounds move across the session's CPUs in blocks of `replicas` rounds, on no more CPUs
    // than there are whole blocks, so every CPU times every build; each round's CPU is
    // recorded (see *CPUs*).
    let block = replicas(n) as usize;
    let cpus = session.round_cpus();
    let cpus = &cpus[..cpus.len().min(plan.lookup_passes as usize / block)];
    let mut round_cpus = Vec::with_capacity(plan.lookup_passes as usize);
    for round in 0..plan.lookup_passes {
        if cpus.len() > 1 {
            crate::control::pin_to(cpus[(round as usize / block) % cpus.len()]);
        }
        // Where the round starts (the CPU asked for, unless the kernel refused the move).
        round_cpus.push(crate::control::current_cpu().unwrap_or(usize::MAX));
        bar.set_message(format!(
            "n={n}: lookup round {}/{} over {} filters",
            round + 1,
            plan.lookup_passes,
            pairs.len() / mixes.len().max(1)
        ));
        let mut order = pairs.clone();
        order.shuffle(rng);
        for (i, m) in order {
            let s = &mut subjects[i];
            let b = &s.built[round as usize % s.built.len()];
            let pass = warm_and_time(b, &g.sk.warm, &g.sk.streams[m], &mut tally);
            s.times[m].push(pass.ns_per_op);
            tally.clean_chunks += u64::from(pass.clean_chunks);
            tally.chunks += u64::from(pass.chunks);
            s.hits[m] = pass.hits;
            bar.inc(
                g.sk.streams[m].iter().map(Keys::len).sum::<usize>() as u64
                    + g.sk.warm.len() as u64,
            );
        }
    }
    (tally, round_cpus)
}

/// One warm-up pass over `warm` and one timed pass over `stream`, redone (up to
/// [`MAX_TRIES`] attempts) while the thread was switched out during the warm-up or the first
/// half of the pass.
fn warm_and_time(b: &Build, warm: &Keys, stream: &[Keys], tally: &mut Tally) -> Pass {
    let mut tries = 0;
    loop {
        tries += 1;
        let before = crate::control::context_switches();
        std::hint::black_box(b.filter.time_lookups(warm));
        let warmed = crate::control::context_switches();
        // Only the chunks before the first switch count (see `Built::time_pass`).
        let pass = b.filter.time_pass(stream);
        let clean = before.is_some() && before == warmed && 2 * pass.clean_chunks >= pass.chunks;
        if clean || before.is_none() || tries >= MAX_TRIES {
            tally.passes += 1;
            tally.tries += u64::from(tries);
            tally.unclean += u64::from(!clean);
            break pass;
        }
    }
}

/// A measured subject's row: its FPR over `probes` (one build), lookups, space and build
/// time. The subject's builds are freed.
fn row_of(
    s: &mut Subject,
    g: &GroupRun,
    probes: &Keys,
    group_id: u32,
    round_cpus: &[usize],
) -> Row {
    let n = g.n;
    let reps = s.built.len() as u32;
    let built = s.built.swap_remove(0);
    s.built.clear();
    let f = &built.filter;
    let (_, fp) = f.time_lookups(probes);
    g.bar.inc(probes.len() as u64);
    let measured_fpr = fp as f64 / probes.len() as f64;
    let (lookups, false_negatives) = lookups_of(s, g, reps, round_cpus);
    let bits_per_item = built.heap_bytes as f64 * 8.0 / n as f64;
    let log2_inv = (measured_fpr > 0.0).then(|| (1.0 / measured_fpr).log2());
    let build_ci = median_interval(&s.build_ns);
    Row {
        filter: s.entry.info.name.into(),
        kind: s.entry.info.kind.name().into(),
        peer: s.entry.info.peer,
        n,
        target_fpr: s.entry.info.tunable.then_some(s.spec.fpr),
        params: f.describe(),
        group: group_id,
        build_ns_per_item: build_ci.mid,
        build_ci,
        build_passes: s.build_ns.len() as u32,
        refused_inserts: built.refused,
        false_negatives,
        lookups,
        measured_fpr,
        fpr_ci: wilson(fp, probes.len() as u64, Z95),
        fpr_probes: probes.len() as u64,
        overlap_excluded: g.sk.keys.overlap_excluded,
        theoretical_fpr: f.theoretical_fpr(),
        heap_bytes: built.heap_bytes as u64,
        bytes_over_llc: None,
        bits_per_item,
        log2_inv_fpr: log2_inv,
        wasted_pct: log2_inv.map(|l| (bits_per_item / l - 1.0) * 100.0),
        floor_ns: 0.0,
    }
}

/// A subject's lookup figures per mix from its rounds, and the members its 100 % mix missed.
fn lookups_of(s: &Subject, g: &GroupRun, reps: u32, round_cpus: &[usize]) -> (Vec<Lookup>, u64) {
    let mut false_negatives = 0;
    let mut lookups = Vec::new();
    for (m, &pct) in g.plan.mixes().iter().enumerate() {
        if pct == 100 {
            false_negatives =
                g.sk.streams[m].iter().map(Keys::len).sum::<usize>() as u64 - s.hits[m];
        }
        let ci = rounds_interval(&s.times[m], reps as usize, round_cpus);
        lookups.push(Lookup {
            positive_pct: pct,
            ns: ci.mid,
            ns_ci: ci,
            rounds: s.times[m].clone(),
            replicas: reps,
            round_cpus: round_cpus.to_vec(),
            floor_ratio: 0.0,
            peer: None,
            peer_ratio: None,
            blocked_ratio: None,
        });
    }
    (lookups, false_negatives)
}

/// The wall time of each phase of a run, in order (a phase that recurs, such as one size's
/// builds in several groups, adds up under one name).
#[derive(Debug, Default)]
pub struct Phases(Vec<Phase>);

/// When a phase started: wall clock and the process's CPU time.
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    wall: Instant,
    cpu_ns: u64,
}

impl Mark {
    /// Now.
    pub fn now() -> Self {
        Mark {
            wall: Instant::now(),
            cpu_ns: crate::control::process_cpu_ns(),
        }
    }
}

impl Phases {
    /// Add the wall and CPU time since `started` to phase `name`.
    pub fn add(&mut self, name: String, started: Mark) {
        let secs = started.wall.elapsed().as_secs_f64();
        let cpu = crate::control::process_cpu_ns().saturating_sub(started.cpu_ns) as f64 / 1e9;
        match self.0.iter_mut().find(|p| p.name == name) {
            Some(p) => {
                p.seconds += secs;
                p.cpu_seconds += cpu;
            }
            None => self.0.push(Phase {
                name,
                seconds: secs,
                cpu_seconds: cpu,
            }),
        }
    }

    /// The phases recorded.
    pub fn into_vec(self) -> Vec<Phase> {
        self.0
    }
}

/// Whether a fixed-parameter peer row can stand as the reference for target `t`: its own
/// FPR (theory, else measured) is at most the target.
fn fixed_serves(p: &Row, t: Option<f64>) -> bool {
    match t {
        None => true,
        Some(t) => p.theoretical_fpr.unwrap_or(p.measured_fpr) <= t * (1.0 + 1e-9),
    }
}

/// How far above its target a row's measured FPR may lie and still count as meeting it
/// (equal FPR): a peer sized by its own formula lands within a few per cent of the target,
/// and the sampling error of 10^6 probes at 0.1 % is about 6 %.
pub const MEETS_TARGET: f64 = 1.25;

/// Whether a row meets its target FPR (equal FPR): measured at most [`MEETS_TARGET`] × the
/// target. Fixed-parameter rows (no target) count.
pub fn meets_target(r: &Row) -> bool {
    r.target_fpr
        .is_none_or(|t| r.measured_fpr <= MEETS_TARGET * t)
}

/// Fill in each lookup's ratio to the fastest peer of the same kind, same size, and same
/// target that meets the target (equal FPR: [`meets_target`]; fixed-parameter peers count
/// for targets at or above their own FPR), and to the `blocked` filter at the same size and
/// target (fixed rows: the target nearest 1 %).
pub fn fill_peer_ratios(rows: &mut [Row]) {
    let snapshot = rows.to_vec();
    for r in rows.iter_mut() {
        let blocked = {
            let same_n = snapshot
                .iter()
                .filter(|b| b.filter == "blocked" && b.n == r.n);
            match r.target_fpr {
                Some(t) => same_n.clone().find(|b| b.target_fpr == Some(t)),
                None => same_n.min_by(|a, b| {
                    let d = |x: &Row| (x.target_fpr.unwrap_or(0.01).ln() - 0.01f64.ln()).abs();
                    d(a).total_cmp(&d(b))
                }),
            }
        };
        let pcts: Vec<u32> = r.lookups.iter().map(|l| l.positive_pct).collect();
        for pct in pcts {
            let best = snapshot
                .iter()
                .filter(|p| {
                    p.peer
                        && meets_target(p)
                        && p.kind == r.kind
                        && p.n == r.n
                        && (p.target_fpr == r.target_fpr
                            || (p.target_fpr.is_none() && fixed_serves(p, r.target_fpr)))
                })
                .filter_map(|p| p.lookup(pct).map(|x| (p, x.ns)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(p, _)| p);
            let peer_ratio = best.and_then(|p| r.ratio_to(p, pct));
            let blocked_ratio = blocked.and_then(|b| r.ratio_to(b, pct));
            let l = r
                .lookups
                .iter_mut()
                .find(|l| l.positive_pct == pct)
                .expect("pct taken from this row");
            l.peer = best.map(|p| p.filter.clone());
            l.peer_ratio = peer_ratio;
            l.blocked_ratio = blocked_ratio;
        }
    }
}

/// Run the plan over `entries`.
pub fn run(entries: &[Entry], plan: &Plan) -> Result<Results, Error> {
    let started = Instant::now();
    // Described before the session pins this thread (pinning narrows available_parallelism).
    let mut machine = crate::machine::describe();
    let session = crate::control::Session::start();
    let bar = progress_bar(entries, plan)?;
    let mut rows = Vec::new();
    let mut size_floors = Vec::new();
    let mut group_id = 0u32;
    let mut tally = Tally::default();
    let mut rng = ChaCha8Rng::seed_from_u64(plan.seed ^ 0x0_5A0F_F1E5);
    let mut phases = Phases::default();
    for &n in &plan.sizes {
        let started = Mark::now();
        let (sk, floor) = size_keys(plan, n, &bar)?;
        size_floors.push(floor);
        phases.add(
            format!("n = {}: keys and memory floor", size_label(n)),
            started,
        );
        let g = GroupRun {
            plan,
            n,
            sk: &sk,
            bar: &bar,
        };
        for group in groups(entries, plan, n) {
            let (mut measured, c) =
                measure_group(&group, group_id, &g, &mut rng, &session, &mut phases);
            let started = Mark::now();
            tally.add(&c);
            // Floors once the group's filters are freed, so their buffers never coexist.
            for r in &mut measured {
                r.floor_ns = floor_at(r.heap_bytes as usize, plan.seed);
                for l in &mut r.lookups {
                    l.floor_ratio = l.ns / r.floor_ns;
                }
            }
            rows.extend(measured);
            phases.add(format!("n = {}: per-filter floors", size_label(n)), started);
            group_id += 1;
        }
    }
    if let Some(llc) = machine.cache_bytes.llc {
        for r in &mut rows {
            r.bytes_over_llc = Some(r.heap_bytes as f64 / llc as f64);
        }
    }
    fill_peer_ratios(&mut rows);
    let exps = run_experiments(entries, plan, &bar, &mut phases)?;
    bar.finish_and_clear();
    machine.conditions = session.finish();
    tally.record(&mut machine.conditions);
    Ok(Results {
        schema_version: SCHEMA_VERSION,
        machine,
        config: run_config(plan),
        keys: keys_text(plan),
        filters: entries.iter().map(|e| e.info.recorded()).collect(),
        left_out: Vec::new(),
        size_floors,
        rows,
        experiments: exps,
        wall_seconds: started.elapsed().as_secs_f64(),
        phases: phases.into_vec(),
    })
}

/// The progress bar over every key the run will touch (hidden without `plan.progress`).
fn progress_bar(entries: &[Entry], plan: &Plan) -> Result<ProgressBar, Error> {
    if !plan.progress {
        return Ok(ProgressBar::hidden());
    }
    let mut total = 0u64;
    for &n in &plan.sizes {
        let subjects: usize = groups(entries, plan, n).iter().map(Vec::len).sum();
        total += subjects as u64 * work(plan, n);
    }
    let b = ProgressBar::new(total);
    b.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {percent:>3}% ETA {eta_precise} {msg}",
        )
        .map_err(|e| Error::measurement(e.to_string()))?
        .progress_chars("=> "),
    );
    Ok(b)
}

/// The keys of size `n` and its memory floor.
fn size_keys(plan: &Plan, n: u64, bar: &ProgressBar) -> Result<(SizeKeys, SizeFloor), Error> {
    let n_usize = usize::try_from(n).map_err(|_| Error::usage(format!("size {n} too large")))?;
    bar.set_message(format!("keys for n = {n}"));
    // Enough non-members for the FPR probes and for the timed and warm-up streams'
    // disjoint stretches (see `Workload::streams`).
    let probes = plan.fpr_probes.max(2 * plan.lookup_keys.min(n_usize));
    let keys = Workload::new(&plan.keys, plan.seed, n_usize, probes)?;
    let floor_bytes = (bloomlab_core::math::classic_bits(n, 0.01)? / 8) as usize;
    let floor = SizeFloor {
        n,
        bytes: floor_bytes as u64,
        ns: floor_at(floor_bytes, plan.seed),
        dependent_ns: crate::floor::dependent_read_ns(floor_bytes, 100_000, 5, plan.seed),
    };
    // The warm-up stream shares no key with the timed streams (members split apart,
    // non-members from another stretch), so a timed pass never finds its keys' lines
    // warmed by the warm-up.
    let (timed, warm) = keys.streams(plan.seed, plan.lookup_keys, &plan.mixes(), plan.zipf)?;
    // Cut into the chunks a pass times one by one (before any timing).
    let streams: Vec<Vec<Keys>> = timed
        .iter()
        .map(|s| {
            (0..s.len())
                .step_by(crate::adapters::CHUNK)
                .map(|i| s.slice(i..(i + crate::adapters::CHUNK).min(s.len())))
                .collect()
        })
        .collect();
    Ok((
        SizeKeys {
            keys,
            streams,
            warm,
        },
        floor,
    ))
}

/// The plan's experiments, then the threads experiment if asked for.
fn run_experiments(
    entries: &[Entry],
    plan: &Plan,
    bar: &ProgressBar,
    phases: &mut Phases,
) -> Result<Vec<crate::schema::Experiment>, Error> {
    let ctx = experiments::Context {
        entries,
        seed: plan.seed,
        n: plan.experiment_n,
        probes: plan.fpr_probes,
        full: plan.full,
    };
    let mut exps = Vec::new();
    for name in &plan.experiments {
        bar.set_message(format!("experiment {name}"));
        let started = Mark::now();
        exps.push(experiments::run(name, &ctx)?);
        phases.add(format!("experiment {name}"), started);
    }
    if let Some(t) = plan.threads {
        bar.set_message(format!("{t} threads on one shared filter"));
        let started = Mark::now();
        // At the largest measured size up to 10^7 (the single-thread rows beside it).
        let n = plan
            .sizes
            .iter()
            .copied()
            .filter(|&n| n <= 10_000_000)
            .max()
            .unwrap_or(plan.experiment_n);
        exps.push(experiments::threads::run(&ctx, t, n)?);
        phases.add(format!("{t} threads on one shared filter"), started);
    }
    Ok(exps)
}

/// The run's configuration as the results record it.
fn run_config(plan: &Plan) -> RunConfig {
    RunConfig {
        full: plan.full,
        sizes: plan.sizes.clone(),
        fprs: plan.fprs.clone(),
        seed: plan.seed,
        fpr_probes: plan.fpr_probes as u64,
        mixes: plan.mixes(),
        lookup_passes: plan.lookup_passes,
        grouping: if plan.sizes.iter().any(|&n| n >= plan.split_at) {
            format!(
                "all filters of one size interleaved together below n = {}; per target from there (fixed-parameter entries with the target nearest 1 %)",
                plan.split_at
            )
        } else {
            "all filters of one size (every target) interleaved together".into()
        },
        lookup_keys: plan.lookup_keys as u64,
        key_shape: plan.keys.to_string(),
        zipf: plan.zipf,
    }
}

/// How every entry received its keys, as the results record it.
fn keys_text(plan: &Plan) -> String {
    format!(
        "{}; lookups {}. {}",
        plan.keys.describe(),
        match plan.zipf {
            Some(s) => format!("Zipf-skewed with exponent {s} over members and non-members alike"),
            None => "uniform over distinct keys".into(),
        },
        crate::adapters::KEYS
    )
}
