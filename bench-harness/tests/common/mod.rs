//! Helpers shared by the harness's integration tests (one home: each test file declares
//! `mod common;`).

#![allow(dead_code)]

/// A results row with the given name, kind of entry, target and FPR, and these lookup rounds
/// (ns per lookup at 50 % members); every other field fixed.
pub fn synthetic(
    filter: &str,
    peer: bool,
    target: Option<f64>,
    theory: f64,
    rounds: &[f64],
) -> bench_harness::schema::Row {
    use bench_harness::schema::{Lookup, Row};
    use bench_harness::stats::{Interval, median_interval};
    let ci = median_interval(rounds);
    Row {
        filter: filter.into(),
        kind: "bloom".into(),
        peer,
        n: 1000,
        target_fpr: target,
        params: String::new(),
        group: 0,
        build_ns_per_item: 1.0,
        build_ci: Interval::exact(1.0),
        build_passes: 1,
        refused_inserts: 0,
        false_negatives: 0,
        lookups: vec![Lookup {
            positive_pct: 50,
            ns: ci.mid,
            ns_ci: ci,
            rounds: rounds.to_vec(),
            replicas: 1,
            round_cpus: Vec::new(),
            floor_ratio: 1.0,
            peer: None,
            peer_ratio: None,
            blocked_ratio: None,
        }],
        measured_fpr: theory,
        fpr_ci: Interval::exact(theory),
        fpr_probes: 1000,
        overlap_excluded: 0,
        theoretical_fpr: Some(theory),
        heap_bytes: 1000,
        bytes_over_llc: None,
        bits_per_item: 8.0,
        log2_inv_fpr: None,
        wasted_pct: None,
        floor_ns: 1.0,
    }
}

/// The experiments' context over `entries`: this seed, design capacity and number of probes,
/// without `--full`.
pub fn context(
    entries: &[bench_harness::adapters::Entry],
    seed: u64,
    n: u64,
    probes: usize,
) -> bench_harness::experiments::Context<'_> {
    bench_harness::experiments::Context {
        entries,
        seed,
        n,
        probes,
        full: false,
    }
}
