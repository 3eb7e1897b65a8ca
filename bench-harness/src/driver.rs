//! The driver: every selected filter × target FPR × size, measured the same way.

use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

use crate::adapters::{Entry, Spec};
use crate::experiments;
use crate::floor::{median, random_read_ns};
use crate::keys::KeySet;
use crate::schema::{FilterInfo, Lookup, Results, Row, RunConfig, SCHEMA_VERSION, SizeFloor};

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
    /// Timed passes per lookup figure.
    pub lookup_passes: u32,
    /// Experiments to run (names).
    pub experiments: Vec<String>,
    /// Design capacity for experiments.
    pub experiment_n: u64,
    /// Show a progress bar on stderr.
    pub progress: bool,
}

impl Plan {
    /// The quick default: in and out of cache.
    pub fn quick(seed: u64) -> Self {
        Plan {
            sizes: vec![100_000, 1_000_000, 10_000_000],
            fprs: vec![0.001, 0.01, 0.03],
            seed,
            full: false,
            fpr_probes: 1_000_000,
            lookup_keys: 200_000,
            lookup_passes: 5,
            experiments: experiments::names(),
            experiment_n: 100_000,
            progress: true,
        }
    }

    /// `--full`: adds 10^8 and the 25 % / 75 % mixes.
    pub fn full(seed: u64) -> Self {
        Plan {
            sizes: vec![100_000, 1_000_000, 10_000_000, 100_000_000],
            fpr_probes: 10_000_000,
            lookup_keys: 1_000_000,
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

/// Passes over the whole build: fewer for big sizes, where one build takes seconds.
fn build_passes(n: u64) -> u32 {
    if n >= 10_000_000 {
        1
    } else if n >= 1_000_000 {
        3
    } else {
        5
    }
}

/// Memory floor at `bytes`, with a read count that keeps it quick.
fn floor_at(bytes: usize, seed: u64) -> f64 {
    random_read_ns(bytes, 500_000, 5, seed)
}

fn measure(entry: &Entry, spec: &Spec, keys: &KeySet, plan: &Plan) -> Result<Row, String> {
    let n = keys.members.len();
    let passes = build_passes(spec.n);
    let mut build_times = Vec::new();
    let mut last = None;
    for _ in 0..passes {
        drop(last.take());
        let b = entry.build(spec, &keys.members)?;
        build_times.push(b.elapsed.as_nanos() as f64 / n as f64);
        last = Some(b);
    }
    let built = last.ok_or("no build pass")?;
    let f = &built.filter;

    // Passes are interleaved across the mixes (0 %, 50 %, 100 %, 0 %, …) so that a burst of
    // noise from elsewhere on the machine lands on every mix alike.
    let mixes = plan.mixes();
    let streams: Vec<Vec<u64>> = mixes
        .iter()
        .map(|&pct| keys.lookup_stream(plan.seed, plan.lookup_keys, pct))
        .collect();
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); mixes.len()];
    let mut hits = vec![0u64; mixes.len()];
    for _ in 0..plan.lookup_passes.max(1) {
        for (i, stream) in streams.iter().enumerate() {
            let (t, h) = f.time_lookups(stream);
            times[i].push(t.as_nanos() as f64 / stream.len() as f64);
            hits[i] = h;
        }
    }
    let mut false_negatives = 0;
    let mut lookups = Vec::new();
    for (i, &pct) in mixes.iter().enumerate() {
        if pct == 100 {
            false_negatives = streams[i].len() as u64 - hits[i];
        }
        lookups.push(Lookup {
            positive_pct: pct,
            ns: median(&mut times[i]),
            floor_ratio: 0.0,
            peer_ratio: None,
        });
    }
    drop(streams);

    let probes = &keys.probes[..plan.fpr_probes.min(keys.probes.len())];
    let (_, fp) = f.time_lookups(probes);
    let measured_fpr = fp as f64 / probes.len() as f64;
    let bits_per_item = built.heap_bytes as f64 * 8.0 / n as f64;
    let log2_inv = (measured_fpr > 0.0).then(|| (1.0 / measured_fpr).log2());
    let floor_ns = floor_at(built.heap_bytes, plan.seed);
    for l in &mut lookups {
        l.floor_ratio = l.ns / floor_ns;
    }
    Ok(Row {
        filter: entry.info.name.into(),
        kind: entry.info.kind.name().into(),
        peer: entry.info.peer,
        n: n as u64,
        target_fpr: entry.info.tunable.then_some(spec.fpr),
        params: f.describe(),
        build_ns_per_item: median(&mut build_times),
        build_passes: passes,
        refused_inserts: built.refused,
        false_negatives,
        lookups,
        measured_fpr,
        fpr_probes: probes.len() as u64,
        overlap_excluded: keys.overlap_excluded,
        theoretical_fpr: f.theoretical_fpr(),
        heap_bytes: built.heap_bytes as u64,
        bits_per_item,
        log2_inv_fpr: log2_inv,
        wasted_pct: log2_inv.map(|l| (bits_per_item / l - 1.0) * 100.0),
        floor_ns,
    })
}

/// Fill in each lookup's ratio to the fastest peer of the same kind, same size, and same
/// target (fixed-parameter peers count for every target).
pub fn fill_peer_ratios(rows: &mut [Row]) {
    let snapshot = rows.to_vec();
    for r in rows.iter_mut() {
        for l in &mut r.lookups {
            let best = snapshot
                .iter()
                .filter(|p| {
                    p.peer
                        && p.kind == r.kind
                        && p.n == r.n
                        && (p.target_fpr.is_none() || p.target_fpr == r.target_fpr)
                })
                .filter_map(|p| p.lookup(l.positive_pct).map(|x| x.ns))
                .min_by(f64::total_cmp);
            l.peer_ratio = best.map(|b| l.ns / b);
        }
    }
}

/// Run the plan over `entries`.
pub fn run(entries: &[Entry], plan: &Plan) -> Result<Results, String> {
    let started = Instant::now();
    let machine = crate::machine::describe();
    let mut jobs = 0u64;
    for e in entries {
        jobs += plan.sizes.len() as u64
            * if e.info.tunable {
                plan.fprs.len() as u64
            } else {
                1
            };
    }
    let bar = if plan.progress {
        let b = ProgressBar::new(jobs + plan.experiments.len() as u64);
        b.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
                .map_err(|e| e.to_string())?
                .progress_chars("=> "),
        );
        b
    } else {
        ProgressBar::hidden()
    };

    let mut rows = Vec::new();
    let mut size_floors = Vec::new();
    for &n in &plan.sizes {
        let n_usize = usize::try_from(n).map_err(|_| format!("size {n} too large"))?;
        bar.set_message(format!("keys for n = {n}"));
        let probes = plan.fpr_probes.max(plan.lookup_keys.min(n_usize));
        let keys = KeySet::new(plan.seed, n_usize, probes);
        let floor_bytes =
            (bloomlab_core::math::classic_bits(n, 0.01).map_err(|e| e.to_string())? / 8) as usize;
        size_floors.push(SizeFloor {
            n,
            bytes: floor_bytes as u64,
            ns: floor_at(floor_bytes, plan.seed),
            dependent_ns: crate::floor::dependent_read_ns(floor_bytes, 100_000, 5, plan.seed),
        });
        for e in entries {
            let fprs: Vec<f64> = if e.info.tunable {
                plan.fprs.clone()
            } else {
                vec![f64::NAN]
            };
            for p in fprs {
                let label = if p.is_nan() {
                    format!("{} n={n}", e.info.name)
                } else {
                    format!("{} p={}% n={n}", e.info.name, p * 100.0)
                };
                bar.set_message(label.clone());
                let spec = Spec {
                    n,
                    fpr: if p.is_nan() { 0.01 } else { p },
                    seed: plan.seed,
                };
                match measure(e, &spec, &keys, plan) {
                    Ok(row) => rows.push(row),
                    Err(err) => bar.println(format!("skipped {label}: {err}")),
                }
                bar.inc(1);
            }
        }
    }
    fill_peer_ratios(&mut rows);

    let mut exps = Vec::new();
    for name in &plan.experiments {
        bar.set_message(format!("experiment {name}"));
        let ctx = experiments::Context {
            entries,
            seed: plan.seed,
            n: plan.experiment_n,
            probes: plan.fpr_probes,
        };
        exps.push(experiments::run(name, &ctx)?);
        bar.inc(1);
    }
    bar.finish_and_clear();

    Ok(Results {
        schema_version: SCHEMA_VERSION,
        machine,
        config: RunConfig {
            full: plan.full,
            sizes: plan.sizes.clone(),
            fprs: plan.fprs.clone(),
            seed: plan.seed,
            fpr_probes: plan.fpr_probes as u64,
            mixes: plan.mixes(),
            lookup_passes: plan.lookup_passes,
            lookup_keys: plan.lookup_keys as u64,
        },
        keys: "distinct random u64 from ChaCha8 (seed, stream 1 = members, 2 = non-member probes, \
               3 = overfill extras); our filters get the 8 little-endian bytes, Hash-taking peers \
               and the HashSet get the u64 itself, xorf takes the u64 directly"
            .into(),
        filters: entries.iter().map(|e| FilterInfo::from(&e.info)).collect(),
        left_out: Vec::new(),
        size_floors,
        rows,
        experiments: exps,
        wall_seconds: started.elapsed().as_secs_f64(),
    })
}
