//! Every use case at CI size, asserting what it is meant to show. Bounds are 5σ binomial.

use bloomlab_uses::admission::{self, Policy, TraceConfig};
use bloomlab_uses::dedup::{self, DedupConfig};
use bloomlab_uses::lsm::{self, FilterChoice};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};
use std::alloc::System;

mod common;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn heap_bytes(f: &mut dyn FnMut()) -> usize {
    bloomlab_uses::net_heap_bytes(GLOBAL, f)
}

#[test]
fn lsm_filters_cut_block_reads_to_the_fpr() {
    let (dir, cfg) = common::lsm_at_one_percent(4, 5_000, 20_000, 0.6, 1);
    let none = lsm::run(dir.path(), FilterChoice::NoFilter, &cfg).unwrap();
    assert!(none.all_present_found);
    // Random 64-bit keys: every table's key range covers almost every absent key.
    assert!(none.reads_per_absent > 3.9, "{none:?}");
    let mut reports = vec![none];
    for choice in [
        FilterChoice::Classic,
        FilterChoice::Blocked,
        FilterChoice::Cuckoo,
    ] {
        let r = lsm::run(dir.path(), choice, &cfg).unwrap();
        assert!(r.all_present_found);
        // Absent lookups read a block only on a false positive: the count is a sum of
        // Bernoulli trials with mean Σ FPR per lookup, variance ≤ that mean.
        let n = cfg.lookups as f64;
        let (got, want) = (r.reads_per_absent * n, r.expected_reads_per_absent * n);
        assert!((got - want).abs() <= 5.0 * want.sqrt(), "{r:?}");
        // The cache is bounded below the filters' total, so some filters are reloaded.
        assert!(r.filter_loads_per_lookup > 0.0);
        reports.push(r);
    }
    let md = lsm::markdown(&reports);
    println!("{md}");
    // A header, its rule and one row per report, each row starting with its filter's name.
    assert!(md.starts_with("| filter | filter bits/key |"), "{md}");
    assert_eq!(md.lines().count(), 2 + reports.len(), "{md}");
    for (line, r) in md.lines().skip(2).zip(&reports) {
        assert!(line.starts_with(&format!("| {} | ", r.filter)), "{line}");
    }
}

#[test]
fn second_request_admission_avoids_one_hit_writes() {
    let cfg = TraceConfig {
        requests: 200_000,
        popular_objects: 20_000,
        zipf_exponent: 0.9,
        one_hit_request_share: 0.3,
        seed: 2,
    };
    let t = admission::trace(&cfg).unwrap();
    let share = admission::one_hit_object_share(&t);
    assert!(share > 0.7, "one-hit objects: {share}");
    let always = admission::simulate(&t, 2_000, Policy::AdmitAlways).unwrap();
    let second = admission::simulate(
        &t,
        2_000,
        Policy::SecondRequest {
            filter_capacity: 50_000,
            fpr: 0.01,
        },
    )
    .unwrap();
    // Most writes of the admit-always cache are one-hit wonders; the filter avoids them…
    assert!(
        second.cache_writes * 2 < always.cache_writes,
        "{always:?} {second:?}"
    );
    // …without costing hit rate (one-hit objects never hit anyway).
    assert!(
        second.hit_rate() >= always.hit_rate() * 0.95,
        "{always:?} {second:?}"
    );
    // The hit rate is the share of requests served from the cache: neither none nor all.
    for r in [&always, &second] {
        assert_eq!(r.hit_rate(), r.hits as f64 / r.requests as f64);
        assert!(r.hits > 0 && r.hits < r.requests, "{r:?}");
    }
    let md = admission::markdown(&[always.clone(), second.clone()]);
    println!("{md}");
    assert!(md.starts_with("| policy | hit rate |"), "{md}");
    assert_eq!(md.lines().count(), 4, "{md}");
    // The first policy is the baseline: it avoids no writes.
    assert!(
        md.lines()
            .nth(2)
            .unwrap()
            .starts_with(&format!("| {} | ", always.policy)),
        "{md}"
    );
    assert!(md.lines().nth(2).unwrap().contains("| 0.0 % |"), "{md}");
}

#[test]
fn seen_filter_suppresses_every_repeat_and_few_new_items() {
    let cfg = DedupConfig {
        users: 100,
        items_per_user: 2_000,
        repeat_share: 0.3,
        fpr: 0.01,
        seed: 3,
    };
    let r = dedup::run(&cfg, heap_bytes).unwrap();
    assert_eq!(
        r.repeats_suppressed, r.repeats,
        "no false negatives: every repeat suppressed"
    );
    let (got, want) = (r.wrongly_suppressed as f64, r.expected_wrongly_suppressed);
    assert!((got - want).abs() <= 5.0 * want.sqrt(), "{r:?}");
    // And the measured rate meets the target up to the same bound (one-sided, binomial).
    let n = r.new_items as f64;
    let sigma = (n * cfg.fpr * (1.0 - cfg.fpr)).sqrt();
    assert!(got <= n * cfg.fpr + 5.0 * sigma, "{r:?}");
    assert!(r.hashset_bytes > 3 * r.filter_bytes, "{r:?}");
    println!("{}", dedup::markdown(&cfg, &r));
}

#[test]
fn set_vs_filter_matches_the_seed_shape() {
    let (set, filter) = dedup::set_vs_filter(100_000, 0.01, heap_bytes).unwrap();
    // 9.59 bits/key for the filter; a HashSet<String> pays tens of bytes per key.
    assert!(filter <= 100_000 * 10 / 8 + 64);
    assert!(set > 20 * filter, "set {set} B, filter {filter} B");
}

#[test]
fn admission_reports_the_bytes_of_both_its_filters() {
    let trace: Vec<u64> = (0..5_000u64).map(|i| i * 7 % 1_700).collect();
    let policy = Policy::SecondRequest {
        filter_capacity: 1_000,
        fpr: 0.01,
    };
    let report = admission::simulate(&trace, 100, policy).unwrap();
    use bloomlab_core::Filter as _;
    let one = bloomlab_classic::BloomFilter::with_fpr(1_000, 0.01)
        .unwrap()
        .size_in_bytes();
    assert_eq!(report.filter_bytes, 2 * one);
    let always = admission::simulate(&trace, 100, Policy::AdmitAlways).unwrap();
    assert_eq!(always.filter_bytes, 0);
}
