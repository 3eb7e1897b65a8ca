//! End-to-end tests of the harness on tiny sizes: driver → results/ → plot → recommend.

#![forbid(unsafe_code)]

mod common;

use std::path::Path;

use bench_harness::adapters::{self, Spec};
use bench_harness::cli::{self, Cli, RunArgs};
use bench_harness::driver::{self, Plan};
use bench_harness::recommend::{Needs, recommend};
use bench_harness::report;
use bench_harness::schema::Results;
use clap::Parser;

fn tiny_plan() -> Plan {
    Plan {
        sizes: vec![2_000, 20_000],
        fprs: vec![0.01, 0.03],
        seed: 7,
        full: false,
        fpr_probes: 50_000,
        lookup_keys: 5_000,
        lookup_passes: 3,
        split_at: u64::MAX,
        experiments: vec!["overfill".into()],
        experiment_n: 2_000,
        progress: false,
        keys: bench_harness::keys::KeyShape::U64,
        zipf: None,
        threads: None,
    }
}

/// One tiny run shared by the tests of this binary (they only read it).
fn tiny_results() -> Results {
    static RESULTS: std::sync::OnceLock<Results> = std::sync::OnceLock::new();
    RESULTS
        .get_or_init(|| {
            let entries = adapters::select(None).expect("all filters");
            driver::run(&entries, &tiny_plan()).expect("run")
        })
        .clone()
}

#[test]
fn run_writes_every_output_and_plot_rereads_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("results");
    let args = RunArgs {
        n: Some(vec![3_000]),
        fpr: Some(vec![0.01]),
        probes: Some(20_000),
        experiment_n: Some(1_000),
        passes: Some(2),
        quiet: true,
        out: out.clone(),
        // Every experiment but many-filters, whose working set is twice the machine's LLC by
        // design (its own test runs it at 1 MiB).
        experiments: Some(
            bench_harness::experiments::names()
                .into_iter()
                .filter(|n| n != "many-filters")
                .collect(),
        ),
        ..RunArgs::default()
    };
    let summary = cli::run(&args).expect("run");
    assert_eq!(summary, out.join("summary.md"));
    for f in [
        "results.json",
        "main.csv",
        "floors.csv",
        "overfill.csv",
        "summary.md",
        "plots/fpr_vs_bits.svg",
        "plots/fpr_vs_bits.png",
        "plots/ns_per_op.svg",
        "plots/ns_per_op.png",
        "plots/experiment_overfill.svg",
        "plots/experiment_overfill.png",
        "plots/choose_1pct_3000.svg",
        "index.html",
    ] {
        let p = out.join(f);
        let len = std::fs::metadata(&p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .len();
        assert!(len > 30, "{} is nearly empty", p.display());
    }
    let png = std::fs::read(out.join("plots/ns_per_op.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let svg = std::fs::read_to_string(out.join("plots/fpr_vs_bits.svg")).unwrap();
    assert!(svg.contains("(peer)"), "peers are marked in plots");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.contains("fastbloom (peer)"));
    assert!(summary.contains("| classic | 1.00 %"));
    let csv = std::fs::read_to_string(out.join("main.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    for col in [
        "peer_ratio_50pct",
        "ns_lo95_50pct",
        "blocked_ratio_hi95_50pct",
        "measured_fpr_lo95",
    ] {
        assert!(header.contains(col), "{col} missing from {header}");
    }
    assert!(summary.contains(" ±"), "ns/op figures carry their interval");
    assert!(summary.contains("pinned to CPU") || summary.contains("not pinned"));
    assert!(
        summary.contains("batched vs single"),
        "the batched entry's ratios are labelled"
    );
    let svg = std::fs::read_to_string(out.join("plots/ns_per_op.svg")).unwrap();
    assert!(svg.contains("95 % interval"));

    // `plot` regenerates from the JSON alone.
    let replot = dir.path().join("replot");
    let cli = Cli::parse_from([
        "bench-harness",
        "plot",
        "--results",
        out.join("results.json").to_str().unwrap(),
        "--out",
        replot.to_str().unwrap(),
    ]);
    let msg = cli::dispatch(cli).expect("plot");
    assert!(msg.contains("fpr_vs_bits.png"));
    assert!(replot.join("experiment_overfill.svg").exists());
}

#[test]
fn results_are_sane_and_round_trip() {
    let r = tiny_results();
    // Every registered filter is measured: tunable ones per target and size.
    for e in adapters::registry() {
        let rows = r.rows.iter().filter(|x| x.filter == e.info.name).count();
        let per_size = if e.info.tunable { 2 } else { 1 };
        assert_eq!(rows, 2 * per_size, "{}", e.info.name);
    }
    for row in &r.rows {
        assert!(row.heap_bytes > 0, "{}", row.filter);
        assert!(row.bits_per_item > 0.0);
        assert!(row.build_ns_per_item > 0.0);
        assert!(row.floor_ns > 0.0);
        assert_eq!(row.lookups.len(), 3);
        // Each round's CPU is recorded: one of those the session moved the rounds across,
        // or the pinned one where there is only one.
        let c = &r.machine.conditions;
        for l in &row.lookups {
            assert_eq!(l.round_cpus.len(), l.rounds.len(), "{}", row.filter);
            for cpu in &l.round_cpus {
                if c.round_cpus.len() > 1 {
                    assert!(c.round_cpus.contains(cpu), "{}: CPU {cpu}", row.filter);
                } else if let Some(p) = c.pinned_cpu {
                    assert_eq!(*cpu, p, "{}", row.filter);
                }
            }
        }
        if row.filter != "cuckoofilter" {
            assert_eq!(row.false_negatives, 0, "{} lost keys", row.filter);
        }
        if row.kind == "exact" {
            assert_eq!(row.measured_fpr, 0.0);
            assert!(row.wasted_pct.is_none());
        }
    }
    // Fastest peer of its kind has ratio 1; our classic filter gets a ratio against them.
    let classic = r.rows.iter().find(|x| x.filter == "classic").unwrap();
    assert!(classic.lookup(50).unwrap().peer_ratio.is_some());
    let exact = r.rows.iter().find(|x| x.kind == "exact").unwrap();
    assert!(exact.lookup(50).unwrap().peer_ratio.is_none());
    // Overfill: the classic filter's FPR rises with load and tracks its formula at 2x.
    let ex = &r.experiments[0];
    let c = ex.series.iter().find(|s| s.filter == "classic").unwrap();
    assert!(c.points.windows(2).all(|w| w[1].y >= w[0].y));
    let at2 = c.points.iter().find(|p| p.x == 2.0).unwrap();
    assert!((at2.y - at2.theory.unwrap()).abs() < 0.03, "{at2:?}");
    assert!(
        ex.series.iter().all(|s| s.filter != "xorf-bfuse8"),
        "static filters skipped"
    );

    let dir = tempfile::tempdir().unwrap();
    report::write_all(&r, dir.path()).unwrap();
    let back = report::read(&dir.path().join(report::JSON)).unwrap();
    assert!(back == r, "results.json does not round-trip");
}

#[test]
fn recommend_uses_the_measurements() {
    let r = tiny_results();
    let base = Needs {
        n: 1_000,
        fpr: 0.01,
        deletes: false,
        grows: false,
        hostile_keys: false,
        memory_budget: Some(1 << 30),
        batch: false,
        objective: bench_harness::recommend::Objective::Speed,
    };
    // A small set with a big budget: the exact set fits, and is chosen exactly when it is
    // also faster than every filter that meets the needs.
    let rec = recommend(&r, &base).unwrap();
    let exact = r
        .rows
        .iter()
        .find(|x| x.filter == "exact-hashset" && x.n == 2_000)
        .unwrap();
    let ns = |x: &bench_harness::schema::Row| x.lookup(50).unwrap().ns;
    if rec.filter == "exact-hashset" {
        assert!(rec.explanation.contains("Use an exact set"));
    } else {
        assert!(
            ns(&rec.row) <= ns(exact) || bench_harness::recommend::tied(&rec.row, exact),
            "a filter slower than the exact set was chosen: {}",
            rec.explanation
        );
        assert!(rec.explanation.contains("An exact set would need"));
    }

    // A big set with a tight budget: a filter that met 1 % in the measurements.
    let needs = Needs {
        n: 20_000,
        memory_budget: Some(40_000),
        ..base.clone()
    };
    let rec = recommend(&r, &needs).unwrap();
    assert_ne!(rec.row.kind, "exact");
    assert!(rec.row.fpr_ci.lo <= 0.01, "{:?}", rec.row.fpr_ci);
    assert!(rec.projected_bytes <= 40_000.0);
    assert!(rec.explanation.contains("bits/item"));

    // Deletes restrict the choice to structures that support them.
    let rec = recommend(
        &r,
        &Needs {
            deletes: true,
            memory_budget: Some(100_000),
            ..needs.clone()
        },
    )
    .unwrap();
    let info = r.filters.iter().find(|f| f.name == rec.filter).unwrap();
    assert!(info.deletes, "{}", rec.filter);

    // Hostile keys need a keyed hash; growth needs a structure that grows.
    for (hostile, grows) in [(true, false), (false, true)] {
        let rec = recommend(
            &r,
            &Needs {
                fpr: 0.03,
                hostile_keys: hostile,
                grows,
                memory_budget: Some(200_000),
                ..needs.clone()
            },
        )
        .unwrap();
        let info = r.filters.iter().find(|f| f.name == rec.filter).unwrap();
        assert!(!hostile || info.keyed, "{}", rec.filter);
        assert!(!grows || info.grows, "{}", rec.filter);
        assert_ne!(info.kind, "exact", "the exact set is over this budget");
    }

    // Impossible: 10^-9 in 1 KiB for 20 000 keys.
    let err = recommend(
        &r,
        &Needs {
            fpr: 1e-9,
            memory_budget: Some(1024),
            ..needs
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("No measured option meets these needs"),
        "{err}"
    );
    assert!(err.contains("Nearest to working"), "{err}");
    // One line per variant ruled out (each registered entry at most once), plus a few.
    let variants = adapters::registry().len();
    assert!(
        err.lines().count() <= variants + 12,
        "one line per variant:\n{err}"
    );
    for e in adapters::registry() {
        let lines = err
            .lines()
            .take_while(|l| !l.starts_with("Nearest to working"))
            .filter(|l| {
                l.starts_with(&format!("  - {} @", e.info.name))
                    || l.starts_with(&format!("  - {} (peer) @", e.info.name))
            })
            .count();
        assert!(lines <= 1, "{} on {lines} lines:\n{err}", e.info.name);
    }
    assert!(err.lines().all(|l| l.chars().count() <= 200), "{err}");
}

#[test]
fn recommend_finds_a_keyed_growing_filter_for_hostile_growing_sets() {
    // The README's case: 5e6 keys, 1 %, growing, hostile keys.
    let r = tiny_results();
    let rec = recommend(
        &r,
        &Needs {
            n: 5_000_000,
            fpr: 0.01,
            deletes: false,
            grows: true,
            hostile_keys: true,
            memory_budget: None,
            batch: false,
            objective: bench_harness::recommend::Objective::Speed,
        },
    )
    .expect("a keyed growing filter is measured");
    let info = r.filters.iter().find(|f| f.name == rec.filter).unwrap();
    assert!(
        info.keyed && info.grows && info.kind != "exact",
        "{}",
        rec.filter
    );
    assert!(
        ["scalable-keyed", "expandable-keyed"].contains(&rec.filter.as_str()),
        "{}",
        rec.filter
    );

    // Deletes + growth + hostile keys in 1 MiB: the keyed expandable filter does all three
    // but needs more memory, and the exact set too; the refusal groups its reasons and fits
    // on a screen.
    let err = recommend(
        &r,
        &Needs {
            n: 5_000_000,
            fpr: 0.01,
            deletes: true,
            grows: true,
            hostile_keys: true,
            memory_budget: Some(1 << 20),
            batch: false,
            objective: bench_harness::recommend::Objective::Speed,
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.lines().count() <= adapters::registry().len() + 12,
        "{err}"
    );
    assert!(
        err.lines()
            .filter(|l| l.starts_with("  - "))
            .all(|l| l.chars().count() <= 250),
        "{err}"
    );
    assert!(
        err.lines()
            .any(|l| l.starts_with("  - ") && l.contains(": no deletes")),
        "one line per variant, naming its needs: {err}"
    );
    assert!(
        err.contains("a budget of"),
        "names the budget needed: {err}"
    );
}

#[test]
fn recommend_explains_static_filters() {
    let r = tiny_results();
    // A budget only the static binary fuse filter (9.5 bits/item at 0.39 %) meets at 3 %.
    let bfuse = r
        .rows
        .iter()
        .find(|x| x.filter == "xorf-bfuse8" && x.n == 20_000)
        .unwrap();
    let rec = recommend(
        &r,
        &Needs {
            n: 20_000,
            fpr: 0.03,
            deletes: false,
            grows: false,
            hostile_keys: false,
            memory_budget: Some((bfuse.bits_per_item * 20_000.0 / 8.0).ceil() as u64),
            batch: false,
            objective: bench_harness::recommend::Objective::Speed,
        },
    )
    .unwrap();
    if rec.filter == "xorf-bfuse8" {
        assert!(
            rec.explanation.contains("needs all keys up front"),
            "{}",
            rec.explanation
        );
    }
}

#[test]
fn unknown_names_and_bad_flags_are_clear_errors() {
    let err = adapters::select(Some(&["classic".into(), "nope".into()])).unwrap_err();
    assert!(matches!(err, bench_harness::Error::Usage(_)), "{err:?}");
    let err = err.to_string();
    assert!(err.contains("unknown filter name(s): nope"), "{err}");
    assert!(err.contains("fastbloom"), "lists the known names: {err}");
    let err = adapters::select(Some(&["classic-keyed-sip64".into()]))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("classic-keyed-sip64 is now classic-keyed;"),
        "names the new name: {err}"
    );

    let args = RunArgs {
        experiments: Some(vec!["bogus".into()]),
        ..RunArgs::default()
    };
    let err = cli::plan(&args).unwrap_err().to_string();
    assert!(err.contains("unknown experiment"), "{err}");

    // `recommend` for 10 items at 1 %, then `more`.
    let recommend = |more: &[&'static str]| {
        [
            &["bench-harness", "recommend", "--n", "10", "--fpr", "0.01"],
            more,
        ]
        .concat()
    };
    for bad in [
        vec!["bench-harness", "--fpr", "1.5"],
        vec!["bench-harness", "--fpr", "abc"],
        vec!["bench-harness", "--n", "0"],
        vec!["bench-harness", "--n", "1.5"],
        vec!["bench-harness", "recommend", "--n", "10"],
        recommend(&["--memory-budget", "12 parsecs"]),
        vec!["bench-harness", "--bogus-flag"],
    ] {
        assert!(Cli::try_parse_from(&bad).is_err(), "{bad:?} accepted");
    }
    assert_eq!(cli::parse_bytes("16MiB").unwrap(), 16 << 20);
    assert_eq!(cli::parse_bytes("10MB").unwrap(), 10_000_000);
    assert_eq!(cli::parse_count("1e6").unwrap(), 1_000_000);

    let missing = Cli::parse_from(recommend(&["--results", "/nonexistent/results.json"]));
    let err = cli::dispatch(missing).unwrap_err().to_string();
    assert!(err.contains("cannot read results"), "{err}");
}

#[test]
fn every_adapter_has_no_false_negatives_and_reports_refusals() {
    let keys: Vec<u64> = (0..5_000u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let spec = Spec {
        n: 5_000,
        fpr: 0.01,
        seed: 1,
    };
    let bytes = bench_harness::keys::Keys::from_u64s(&keys);
    for e in adapters::registry() {
        let b = e.build(&spec, &bytes).unwrap();
        assert_eq!(b.refused, 0, "{}", e.info.name);
        assert!(
            keys.iter().all(|&k| b.filter.contains(&k.to_le_bytes())),
            "{} has a false negative",
            e.info.name
        );
        assert!(b.heap_bytes > 0, "{}", e.info.name);
        assert_eq!(
            e.new_empty(&spec).is_some(),
            e.info.dynamic,
            "{}",
            e.info.name
        );
        assert_eq!(e.time_inserts(&spec, &bytes).is_some(), e.info.dynamic);
    }
}

#[test]
fn keys_are_distinct_and_fixed_by_the_seed() {
    let a = bench_harness::keys::KeySet::new(3, 10_000, 20_000);
    let b = bench_harness::keys::KeySet::new(3, 10_000, 20_000);
    assert_eq!(a.members, b.members);
    assert_eq!(a.probes, b.probes);
    let mut all: Vec<u64> = a.members.iter().chain(&a.probes).copied().collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 30_000, "members and probes are distinct");
    let s = a.lookup_stream(3, 4_000, 25);
    let mut d = s.clone();
    d.sort_unstable();
    d.dedup();
    assert_eq!(d.len(), 4_000, "a lookup stream never repeats a key");
    let members: std::collections::HashSet<u64> = a.members.iter().copied().collect();
    assert_eq!(s.iter().filter(|k| members.contains(k)).count(), 1_000);
    let c = bench_harness::keys::KeySet::new(4, 10_000, 10);
    assert_ne!(a.members, c.members);
}

#[test]
fn summary_path_helper() {
    assert_eq!(report::size_label(1_000_000), "10^6");
    assert_eq!(report::size_label(2_000), "2000");
    assert!(Path::new(report::SUMMARY).extension().is_some());
}

#[test]
fn keyed_attack_experiment_separates_keyed_from_unkeyed() {
    let entries = adapters::select(None).expect("all filters");
    let ctx = common::context(&entries, 3, 5_000, 100_000);
    let e = bench_harness::experiments::run("keyed-attack", &ctx).expect("runs");
    let last = |label: &str| {
        let s = e.series.iter().find(|s| s.label == label).expect(label);
        s.points.last().unwrap().clone()
    };
    let (unkeyed, keyed) = (last("unkeyed, crafted keys"), last("keyed, crafted keys"));
    // 5σ binomial bound around the formula for random inserts.
    let bound = |p: f64| 5.0 * (p * (1.0 - p) / ctx.probes as f64).sqrt();
    let theory = keyed.theory.unwrap();
    assert!((keyed.y - theory).abs() <= bound(theory), "{keyed:?}");
    assert!(unkeyed.y - theory > bound(theory), "{unkeyed:?}");
}

/// z of every statistical bound in these tests: a correct filter fails one check with
/// probability below 6e-7 (two-sided), while a 10 % error in a rate measured over 2·10^5
/// probes at 1 % (σ ≈ 2.2 %) moves it by 4.5σ and an error of 25 % by 11σ.
const Z: f64 = 5.0;

/// Binomial σ of a rate `p` measured over `n` independent probes.
fn sigma(p: f64, n: u64) -> f64 {
    (p * (1.0 - p) / n as f64).sqrt()
}

/// Entries whose `theoretical_fpr` is a promised upper bound, not an estimate: growable-bloom
/// reports the union bound of its stages' design FPRs, scalable-cuckoo its target.
const THEORY_IS_A_BOUND: &[&str] = &["growable-bloom", "scalable-cuckoo"];

/// Entries sized at another filter's bits/item rather than for the target: sbbf-rs-eqmem gets
/// the bits our blocked filter uses (so their lookups compare at equal memory), and the
/// split-block layout needs more bits for the same FPR, so it does not promise the target.
const SIZED_AT_BLOCKED_BITS: &[&str] = &["sbbf-rs-eqmem"];

/// One size large enough that the filter-to-filter spread of the true FPR is negligible: at
/// n = 2·10^5 a 1 % classic filter has m ≈ 1.9·10^6 bits, its fill fraction f ≈ 0.5 varies by
/// σ_f = sqrt(f(1−f)/m) ≈ 3.6·10^-4, and ε = f^k (k = 7) by k·σ_f/f ≈ 0.5 % of ε, against the
/// binomial σ of 2.2 % of ε at 2·10^5 probes; so the bound below is the binomial one alone.
fn fpr_results() -> Results {
    let entries = adapters::select(None).expect("all filters");
    let plan = Plan {
        sizes: vec![200_000],
        fprs: vec![0.001, 0.01, 0.03],
        fpr_probes: 200_000,
        lookup_keys: 2_000,
        lookup_passes: 1,
        experiments: vec![],
        ..tiny_plan()
    };
    driver::run(&entries, &plan).expect("run")
}

#[test]
fn every_rows_measured_fpr_matches_its_own_theory_and_peers_are_configured_as_stated() {
    let r = fpr_results();
    for row in &r.rows {
        let t = row.theoretical_fpr.expect("every entry states its FPR");
        let bound = Z * sigma(t, row.fpr_probes);
        let what = format!(
            "{} at {:?}: measured {} vs theory {t}",
            row.filter, row.target_fpr, row.measured_fpr
        );
        if THEORY_IS_A_BOUND.contains(&row.filter.as_str()) {
            assert!(row.measured_fpr <= t + bound, "{what}");
        } else {
            assert!(
                (row.measured_fpr - t).abs() <= bound,
                "{what} (bound {bound})"
            );
        }
        // The measured FPR lies in its own reported interval.
        assert!(
            row.fpr_ci.contains(row.measured_fpr) || row.measured_fpr == 0.0,
            "{what}"
        );
        // Every tunable entry promises its target: theory at or below it (at design load).
        if let Some(p) = row
            .target_fpr
            .filter(|_| !SIZED_AT_BLOCKED_BITS.contains(&row.filter.as_str()))
        {
            assert!(t <= p * 1.02, "{what}: promises more than the target");
        }
    }
    let row = |f: &str, p: Option<f64>| {
        r.rows
            .iter()
            .find(|x| x.filter == f && x.target_fpr == p)
            .unwrap_or_else(|| panic!("{f} {p:?}"))
    };
    for p in [0.001, 0.01, 0.03] {
        // Single-array Bloom peers size m = −n ln p / ln²2 as the classic formula; their heap
        // is that table plus a struct (< 0.01 bits/item at 2·10^5) and word rounding.
        let bpi = bloomlab_core::math::classic_bits_per_item(p).unwrap();
        for f in ["classic", "fastbloom", "fastbloom-sip", "bloomfilter"] {
            let b = row(f, Some(p)).bits_per_item;
            assert!((b - bpi).abs() < 0.02, "{f} at {p}: {b} bits/item vs {bpi}");
        }
        // growable-bloom is built as its docs show, GrowableBloom::new(p0, n/8), with p0 the
        // target over the sum of its four stages' tightening factors (n/8 → n at growth 2).
        let g = row("growable-bloom", Some(p));
        let stages = bench_harness::adapters::peers::growable_stages(25_000, 200_000);
        assert_eq!(stages, 4, "n/8, n/4, n/2, n: 15/8 n ≥ n after four stages");
        let p0 = p / (1.0 + 0.85 + 0.85f64.powi(2) + 0.85f64.powi(3));
        assert!(
            g.params
                .contains(&format!("GrowableBloom::new({p0:.3e}, 25000)")),
            "{}",
            g.params
        );
        // Equal FPR: every tunable peer not sized at another's memory measures at most 1.25×
        // its target (binomial 5σ of slack at 2·10^5 probes on top).
        for f in [
            "sbbf-rs",
            "sbbf-rs-parquet",
            "fastbloom",
            "bloomfilter",
            "growable-bloom",
            "qfilter",
            "scalable-cuckoo",
        ] {
            let x = row(f, Some(p));
            assert!(
                x.measured_fpr <= 1.25 * p + Z * sigma(1.25 * p, x.fpr_probes),
                "{f} at {p}: measured {} (> 1.25× target)",
                x.measured_fpr
            );
        }
        // fastbloom at our blocked filter's memory: the same bits/item as `blocked` (both in
        // 512-bit blocks, the struct < 0.01 bits/item at 2·10^5), more than its equal-FPR
        // row's, so it still meets the target.
        let fe = row("fastbloom-eqmem", Some(p));
        let bl = row("blocked", Some(p));
        assert!(
            (fe.bits_per_item - bl.bits_per_item).abs() < 0.02,
            "fastbloom-eqmem at {p}: {} bits/item vs blocked {}",
            fe.bits_per_item,
            bl.bits_per_item
        );
        assert!(fe.bits_per_item > row("fastbloom", Some(p)).bits_per_item);
        assert!(
            fe.measured_fpr <= 1.25 * p + Z * sigma(1.25 * p, fe.fpr_probes),
            "fastbloom-eqmem at {p}: {}",
            fe.measured_fpr
        );
        // At our blocked filter's memory sbbf-rs misses the target (why it is a second row).
        let eq = row("sbbf-rs-eqmem", Some(p));
        assert!(
            eq.measured_fpr > p,
            "sbbf-rs-eqmem at {p}: {}",
            eq.measured_fpr
        );
        // scalable_cuckoo_filter promises its target as the compound bound.
        assert_eq!(row("scalable-cuckoo", Some(p)).theoretical_fpr, Some(p));
    }
    // Fixed-parameter peers: 8-bit fingerprints and binary fuse sizes.
    assert!(
        row("cuckoofilter", None)
            .params
            .starts_with("8-bit fingerprints")
    );
    let b8 = row("xorf-bfuse8", None);
    assert_eq!(b8.theoretical_fpr, Some(2f64.powi(-8)));
    assert!(
        b8.bits_per_item > 8.0 && b8.bits_per_item < 8.0 * 1.25,
        "{}",
        b8.bits_per_item
    );
    let b16 = row("xorf-bfuse16", None);
    assert!(b16.bits_per_item > 16.0 && b16.bits_per_item < 16.0 * 1.25);
    // Every peer's configuration is written out in the summary.
    let summary = report::summary(&r);
    for f in &r.filters {
        assert!(summary.contains(&f.note), "{} note missing", f.name);
    }
    assert!(
        summary.contains("foldhash"),
        "fastbloom's fast hasher is stated"
    );
}

#[test]
fn compare_flags_a_shifted_filter_and_nothing_else() {
    let a = tiny_results();
    let same = bench_harness::compare::compare(&a, &a.clone());
    assert!(!same.is_empty());
    assert!(
        same.iter().all(|c| !c.flagged),
        "a file compared with itself flags nothing"
    );

    // Shift every ratio of the classic filter up by three widths of its own interval (on the
    // log scale ratios are compared on: × (hi/lo)^3, at least × 1.2), far beyond it.
    let mut b = a.clone();
    for row in b.rows.iter_mut().filter(|x| x.filter == "classic") {
        for l in &mut row.lookups {
            if let Some(i) = l.blocked_ratio.as_mut() {
                let f = (i.hi / i.lo).powi(3).max(1.2);
                i.mid *= f;
                i.lo *= f;
                i.hi *= f;
            }
        }
    }
    let changes = bench_harness::compare::compare(&a, &b);
    let flagged: Vec<_> = changes.iter().filter(|c| c.flagged).collect();
    assert!(!flagged.is_empty());
    assert!(
        flagged
            .iter()
            .all(|c| c.what.starts_with("classic ") && c.figure.starts_with("×blocked")),
        "{flagged:?}"
    );
    let n_blocked_ratios = a
        .rows
        .iter()
        .filter(|x| x.filter == "classic")
        .flat_map(|x| &x.lookups)
        .filter(|l| l.blocked_ratio.is_some())
        .count();
    assert_eq!(
        flagged.len(),
        n_blocked_ratios,
        "every shifted ratio is flagged"
    );

    // The threshold decides the exit status; through the CLI too.
    let (_, fail) = bench_harness::compare::report(&changes, Some(0.1));
    assert!(fail);
    let (_, fail) = bench_harness::compare::report(&changes, Some(1e6));
    assert!(!fail);
    let dir = tempfile::tempdir().unwrap();
    let (pa, pb) = (dir.path().join("a"), dir.path().join("b"));
    report::write_all(&a, &pa).unwrap();
    report::write_all(&b, &pb).unwrap();
    let args = |t: &str| {
        Cli::parse_from([
            "bench-harness",
            "compare",
            pa.join("results.json").to_str().unwrap(),
            pb.join("results.json").to_str().unwrap(),
            "--fail-above",
            t,
        ])
    };
    let (text, failed) = cli::dispatch_status(args("0.1")).unwrap();
    assert!(failed && text.contains("FAIL"), "{text}");
    let (_, failed) = cli::dispatch_status(args("1000000")).unwrap();
    assert!(!failed);
    // A changed bits/item has no interval to hide in.
    let mut c = a.clone();
    c.rows[0].bits_per_item *= 1.001;
    let ch = bench_harness::compare::compare(&a, &c);
    assert_eq!(ch.iter().filter(|x| x.flagged).count(), 1);
}

#[test]
fn fill_peer_ratios_pairs_rounds_and_respects_fixed_peers_fpr() {
    // Shared per-round noise (×1, ×3, ×1, ×2, ×1): paired ratios cancel it exactly.
    let noise = [1.0, 3.0, 1.0, 2.0, 1.0];
    let scaled = |x: f64| noise.iter().map(|n| n * x).collect::<Vec<_>>();
    let mut rows = vec![
        common::synthetic("blocked", false, Some(0.01), 0.01, &scaled(10.0)),
        common::synthetic("classic", false, Some(0.01), 0.01, &scaled(15.0)),
        common::synthetic("fastbloom", true, Some(0.01), 0.01, &scaled(12.0)),
        // A fixed peer at 3 % is faster but cannot stand in for a 1 % target.
        common::synthetic("fixed-3pct", true, None, 0.03, &scaled(5.0)),
        common::synthetic("blocked", false, Some(0.03), 0.03, &scaled(8.0)),
    ];
    bench_harness::driver::fill_peer_ratios(&mut rows);
    let l = |i: usize| rows[i].lookups[0].clone();
    assert_eq!(l(1).peer.as_deref(), Some("fastbloom"));
    let pr = l(1).peer_ratio.unwrap();
    assert!(
        (pr.mid - 1.25).abs() < 1e-12 && (pr.hi - pr.lo).abs() < 1e-12,
        "{pr:?}"
    );
    let br = l(1).blocked_ratio.unwrap();
    assert!((br.mid - 1.5).abs() < 1e-12, "{br:?}");
    assert_eq!(l(0).blocked_ratio.unwrap().mid, 1.0);
    // At 3 % the fixed peer serves; the fixed row's blocked reference is the target nearest 1 %.
    assert_eq!(l(4).peer.as_deref(), Some("fixed-3pct"));
    assert!((l(3).blocked_ratio.unwrap().mid - 0.5).abs() < 1e-12);
    // Rows of different groups get unpaired (wider) intervals.
    rows[2].group = 1;
    bench_harness::driver::fill_peer_ratios(&mut rows);
    let u = rows[1].lookups[0].peer_ratio.unwrap();
    assert!(u.lo < 1.25 && u.hi > 1.25, "{u:?}");
}

#[test]
fn counting_allocator_measures_a_known_allocation() {
    use bench_harness::alloc::{net_bytes, net_bytes_signed};
    let (v, bytes) = net_bytes(|| Vec::<u64>::with_capacity(1_000));
    assert_eq!(bytes, 8_000);
    let mut v = std::hint::black_box(v);
    // A reallocation to 2000 slots: 8000 more bytes net.
    let ((), grew) = net_bytes_signed(|| v.reserve_exact(2_000));
    assert_eq!(grew, 8_000);
    // A zeroed allocation counts its bytes.
    let (b, zeroed) = net_bytes(|| std::hint::black_box(vec![0u8; 4_096].into_boxed_slice()));
    assert_eq!(zeroed, 4_096);
    // Freeing is counted too; what a closure allocates and frees nets to 0.
    let ((), freed) = net_bytes_signed(|| {
        drop(v);
        drop(b);
    });
    assert_eq!(freed, -(16_000 + 4_096));
    let ((), temp) = net_bytes(|| {
        std::hint::black_box(vec![1u64; 10_000]);
    });
    assert_eq!(temp, 0);
    // Only this thread's allocations count: a thread allocating alongside changes nothing.
    let ((), here) = net_bytes(|| {
        std::thread::scope(|s| {
            s.spawn(|| std::mem::forget(std::hint::black_box(vec![0u8; 1 << 20])));
        });
    });
    assert!(here < 1 << 20, "{here}");
    // Through an entry: the exact set's heap is what hashbrown allocates for 5 000 slots.
    let keys: Vec<u64> = (0..5_000).collect();
    let e = adapters::select(Some(&["exact-hashset".into()])).unwrap();
    let built = e[0]
        .build(
            &Spec {
                n: 5_000,
                fpr: 0.01,
                seed: 1,
            },
            &bench_harness::keys::Keys::from_u64s(&keys),
        )
        .unwrap();
    // 8192 buckets × (8-byte key + 1 control byte) + 16 trailing control bytes.
    assert_eq!(built.heap_bytes, 8192 * 9 + 16);
    // And a filter of ours whose size is fixed by its format: the blocked filter at 10^5 keys
    // and 1 % holds its 64-byte blocks in one zeroed allocation asked for with 64 bytes to
    // spare, so that the blocks can start at a 64-byte boundary with the allocation's address
    // below them (`bloomlab_simd::zeroed_lines`),
    // and the fields a lookup does not read, behind one pointer — and nothing else on the heap.
    let e = adapters::select(Some(&["blocked".into()])).unwrap();
    let keys: Vec<u64> = (0..100_000).collect();
    let spec = Spec {
        n: 100_000,
        fpr: 0.01,
        seed: 1,
    };
    let built = e[0]
        .build(&spec, &bench_harness::keys::Keys::from_u64s(&keys))
        .unwrap();
    let blocks = bloomlab_blocked::BlockedBloomFilter::with_fpr(100_000, 0.01)
        .unwrap()
        .blocks();
    let handle =
        bloomlab_blocked::BlockedBloomFilter::<bloomlab_core::Xxh3Scheme>::HANDLE_HEAP_BYTES;
    assert_eq!(built.heap_bytes as u64, blocks * 64 + 64 + handle as u64);
}

#[test]
fn memory_floor_helpers() {
    use bench_harness::floor::{chase_cycle, dependent_read_ns, line_offsets, random_read_ns};
    use bench_harness::stats::median;
    // The floors are medians over passes (`stats::median`, as every other figure).
    assert_eq!(median(&[5.0, 1.0, 4.0, 2.0]), 3.0);
    assert!(median(&[]).is_nan());
    let o = line_offsets(1000, 50_000, 9);
    assert!(o.iter().all(|&x| x < 1000));
    assert_eq!(o, line_offsets(1000, 50_000, 9), "fixed by the seed");
    // Roughly uniform: each of 10 bands holds 5 000 ± 5σ (σ = sqrt(5 000 · 0.9)).
    for band in 0..10 {
        let c = o.iter().filter(|&&x| x / 100 == band).count() as f64;
        assert!(
            (c - 5_000.0).abs() <= Z * (5_000.0f64 * 0.9).sqrt(),
            "band {band}: {c}"
        );
    }
    // The chase is one cycle through every line.
    let next = chase_cycle(4_099, 3);
    let (mut at, mut steps) = (0usize, 0usize);
    loop {
        at = next[at];
        steps += 1;
        if at == 0 {
            break;
        }
        assert!(steps <= 4_099);
    }
    assert_eq!(steps, 4_099);
    // Orders of magnitude only: a read from a 64 KiB buffer takes well under a microsecond.
    let f = random_read_ns(64 << 10, 20_000, 3, 1);
    let d = dependent_read_ns(64 << 10, 20_000, 3, 1);
    assert!(f > 0.0 && f < 1_000.0 && d > 0.0 && d < 1_000.0, "{f} {d}");
}

#[test]
fn glance_names_the_best_of_each_kind_and_where_the_files_are() {
    let r = tiny_results();
    let g = report::glance(&r, Path::new("results"), true);
    assert!(g.contains("n = 2000") && g.contains("n = 20000"), "{g}");
    for kind in ["bloom", "cuckoo", "static", "exact"] {
        assert!(g.contains(kind), "{kind}: {g}");
    }
    assert!(g.contains("results/summary.md") && g.contains("results/plots"));
    assert!(g.contains(" ±"), "intervals shown: {g}");
    // Static filters are their own kind now.
    assert!(
        r.rows
            .iter()
            .any(|x| x.kind == "static" && x.filter == "xorf-bfuse8")
    );
}

#[test]
fn ratio_pairs_entries_round_by_round() {
    let r = tiny_results();
    let t = bench_harness::ratio::table(
        &r,
        &["classic/blocked".into(), "blocked/blocked".into()],
        0.01,
        50,
    )
    .unwrap();
    // One column per size, one line per pair.
    let header = t.lines().find(|l| l.starts_with("| ratio |")).unwrap();
    assert_eq!(header.matches("| n = ").count(), 2, "{t}");
    // A filter against itself is exactly 1 in every round.
    let own = t
        .lines()
        .find(|l| l.starts_with("| blocked / blocked"))
        .unwrap();
    assert_eq!(
        own.matches("1.00 [1.00–1.00] (no measurable difference)")
            .count(),
        2,
        "{own}"
    );
    // The classic/blocked cell is the same statistic as the table's ×blocked column.
    let row = r
        .rows
        .iter()
        .find(|x| x.filter == "classic" && x.n == 20_000 && x.target_fpr == Some(0.01))
        .unwrap();
    let want = row.lookup(50).unwrap().blocked_ratio.unwrap();
    let line = t
        .lines()
        .find(|l| l.starts_with("| classic / blocked"))
        .unwrap();
    assert!(
        line.contains(&format!("{:.2} [{:.2}–{:.2}]", want.mid, want.lo, want.hi)),
        "{line}"
    );
    // Bad pairs are clear errors.
    assert!(bench_harness::ratio::table(&r, &["classic".into()], 0.01, 50).is_err());
    assert!(bench_harness::ratio::table(&r, &["classic/nope".into()], 0.01, 50).is_err());
}

#[test]
fn fixed_seed_fpr_is_the_same_build_after_build() {
    // Two builds from the same keys must count the same false positives on the same probes;
    // xorf's default `uniform-random` feature filled the unused slots of a binary fuse
    // filter from the thread RNG, which moved its measured FPR between runs.
    let keys = bench_harness::keys::KeySet::new(11, 20_000, 200_000);
    let spec = Spec {
        n: 20_000,
        fpr: 0.01,
        seed: 11,
    };
    for e in adapters::registry() {
        let count = || {
            let b = e
                .build(&spec, &bench_harness::keys::Keys::from_u64s(&keys.members))
                .expect("build");
            keys.probes
                .iter()
                .filter(|&&k| b.filter.contains(&k.to_le_bytes()))
                .count()
        };
        assert_eq!(count(), count(), "{}", e.info.name);
    }
}

#[test]
fn compare_refuses_results_of_different_schema_versions() {
    let a = tiny_results();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, r: &Results| {
        let p = dir.path().join(name);
        std::fs::write(&p, serde_json::to_string(r).unwrap()).unwrap();
        p
    };
    let now = write("now.json", &a);
    let again = write("again.json", &a);
    // A version-4 file (u64 keys only, no cache numbers) still loads on its own…
    let mut old = a.clone();
    old.schema_version = 4;
    let v3 = write("v4.json", &old);
    assert_eq!(report::read(&v3).unwrap().schema_version, 4);
    // …older and newer versions are refused with the version found and the ones read…
    for v in [3, 99] {
        let mut x = a.clone();
        x.schema_version = v;
        let p = write(&format!("v{v}.json"), &x);
        let err = report::read(&p).unwrap_err();
        assert!(matches!(err, bench_harness::Error::Results(_)), "{err:?}");
        let err = err.to_string();
        assert!(
            err.contains(&v.to_string()) && err.contains("schema"),
            "{err}"
        );
        for sub in ["compare", "recommend"] {
            let args: Vec<String> = match sub {
                "compare" => vec![
                    "bench-harness".into(),
                    "compare".into(),
                    p.display().to_string(),
                    now.display().to_string(),
                ],
                _ => vec![
                    "bench-harness".into(),
                    "recommend".into(),
                    "--n".into(),
                    "1000".into(),
                    "--fpr".into(),
                    "0.01".into(),
                    "--results".into(),
                    p.display().to_string(),
                ],
            };
            let err = cli::dispatch(Cli::parse_from(&args))
                .unwrap_err()
                .to_string();
            assert!(err.contains("schema"), "{sub}: {err}");
        }
    }
    // …and a version-4 file is not set against a version-5 one: different statistics.
    let compare = |x: &Path, y: &Path| {
        cli::dispatch(Cli::parse_from([
            "bench-harness",
            "compare",
            x.to_str().unwrap(),
            y.to_str().unwrap(),
        ]))
    };
    assert!(compare(&now, &again).is_ok());
    let err = compare(&v3, &now).unwrap_err().to_string();
    assert!(err.contains("schema version 4"), "{err}");
    // Older than version 4 is refused when read.
    old.schema_version = 2;
    let v2 = write("v2.json", &old);
    assert!(
        report::read(&v2)
            .unwrap_err()
            .to_string()
            .contains("schema version 2")
    );
}

#[test]
fn rounds_move_across_the_cpus_in_blocks_of_builds() {
    // Two filters, 10 rounds at 2 000 keys (5 builds): two whole blocks, so on a machine that
    // lets the process use two or more CPUs the rounds run on two of them, five each.
    let entries = adapters::select(Some(&["blocked".into(), "classic".into()])).expect("filters");
    let plan = Plan {
        sizes: vec![2_000],
        fprs: vec![0.01],
        lookup_passes: 10,
        experiments: Vec::new(),
        fpr_probes: 5_000,
        lookup_keys: 2_000,
        ..tiny_plan()
    };
    let r = driver::run(&entries, &plan).expect("run");
    let c = &r.machine.conditions;
    let l = r.rows[0].lookup(50).unwrap();
    if c.round_cpus.len() >= 2 {
        let (a, b) = (c.round_cpus[0], c.round_cpus[1]);
        assert_eq!(
            l.round_cpus,
            [a, a, a, a, a, b, b, b, b, b],
            "home CPU first, then the next, a block of 5 rounds each"
        );
        // Every row of the group was timed in the same rounds, so the ratios are paired.
        let other = r.rows[1].lookup(50).unwrap();
        assert_eq!(other.round_cpus, l.round_cpus);
        assert!(l.paired_ratio(other).is_some());
    } else if let Some(home) = c.pinned_cpu {
        assert!(l.round_cpus.iter().all(|&x| x == home));
    }
}

#[test]
fn concurrent_experiment_pairs_the_atomic_filters() {
    let entries = adapters::select(None).expect("all filters");
    // A smoke run: 10^5 keys.
    let ctx = common::context(&entries, 5, 1_000, 1_000);
    let e = bench_harness::experiments::run("concurrent", &ctx).expect("runs");
    assert_eq!(e.series.len(), 6);
    // Both atomic filters' notes carry ours ÷ fastbloom's insert time, paired within the
    // rounds, with 1 and with 2 threads: two finite positive medians, each inside its interval.
    let versus = |label: &str| -> Vec<f64> {
        let s = e.series.iter().find(|s| s.label == label).expect(label);
        let (_, tail) = s
            .note
            .split_once("paired within the rounds: ")
            .expect(&s.note);
        tail.split(['x', '[', '–', ']', ' ', ','])
            .filter_map(|w| w.parse::<f64>().ok())
            .collect()
    };
    let ours = versus("blocked-atomic: inserts from 1 and 2 threads");
    assert_eq!(
        ours,
        versus("fastbloom-atomic: inserts from 1 and 2 threads")
    );
    // [mid, lo, hi, 1 (thread), mid, lo, hi, 2 (threads)]
    assert_eq!(ours.len(), 8, "{ours:?}");
    for r in [&ours[0..3], &ours[4..7]] {
        assert!(r.iter().all(|x| x.is_finite() && *x > 0.0), "{ours:?}");
        assert!(r[1] <= r[0] && r[0] <= r[2], "{ours:?}");
    }
    // Six speed-ups, ours ÷ fastbloom's inserts with 1 and 2 threads and the parallel build ÷
    // its split reference, each a finite positive median inside its interval, under distinct names.
    assert_eq!(e.ratios.len(), 9, "{:?}", e.ratios);
    for r in &e.ratios {
        let i = r.ratio;
        assert!(i.lo.is_finite() && i.lo > 0.0 && i.hi.is_finite(), "{r:?}");
        assert!(i.lo <= i.mid && i.mid <= i.hi, "{r:?}");
    }
    let mut names: Vec<_> = e.ratios.iter().map(|r| r.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 9);
    // The structured figures are the ones the notes state in words.
    let note = &e
        .series
        .iter()
        .find(|s| s.label == "blocked build: insert_batch vs insert_parallel")
        .expect("blocked build")
        .note;
    let named = |name: &str| {
        e.ratios
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("{name}"))
            .ratio
    };
    // A ratio as the notes state it: `1.23x [1.10–1.40]`.
    let times = |name: &str| {
        let r = named(name);
        format!("{:.2}x [{:.2}–{:.2}]", r.mid, r.lo, r.hi)
    };
    let r = times("blocked build: insert_batch ÷ insert_parallel");
    assert!(
        note.contains(&format!("paired speed-up {r}")),
        "{note} vs {r}"
    );
    let two = times("blocked-atomic ÷ fastbloom-atomic insert time, 2 threads");
    assert!(
        e.series
            .iter()
            .any(|s| s.note.ends_with(&format!("{two} with 2"))),
        "{two}"
    );
    let bound = times("blocked build: insert_parallel ÷ the split reference");
    assert!(
        note.ends_with(&format!(
            "the split reference, time paired within the rounds: {bound}"
        )),
        "{note} vs {bound}"
    );
    // The JSON round trip keeps them; an experiment without ratios writes no field.
    let json = serde_json::to_string(&e).expect("serializes");
    let back: bench_harness::schema::Experiment = serde_json::from_str(&json).expect("reads");
    assert_eq!(back, e);
    let mut none = e.clone();
    none.ratios.clear();
    assert!(!serde_json::to_string(&none).unwrap().contains("\"ratios\""));
}

#[test]
fn repeat_tabulates_the_experiments_ratios_run_by_run() {
    use bench_harness::schema::{Experiment, NamedRatio};
    use bench_harness::stats::Interval;
    let with = |mid: f64, lo: f64, hi: f64| {
        let mut r = tiny_results();
        r.experiments = vec![Experiment {
            name: "concurrent".into(),
            title: String::new(),
            description: String::new(),
            x_label: String::new(),
            y_label: String::new(),
            log_y: false,
            log_x: false,
            y_is_rate: false,
            series: Vec::new(),
            ratios: vec![NamedRatio {
                name: "a ÷ b".into(),
                ratio: Interval { mid, lo, hi },
            }],
        }];
        (std::path::PathBuf::from("run"), r)
    };
    let runs = [
        with(0.8, 0.7, 0.9),
        with(1.3, 1.1, 1.4),
        with(0.95, 0.9, 1.05),
    ];
    let (md, verdict) = bench_harness::repeat::spread("cmd", &runs);
    // The same lookups in every run: every ratio within the band, every interval holding
    // the other runs' medians, and `repeat` prints it.
    assert!(
        verdict.ratios > 0 && verdict.within == verdict.ratios,
        "{verdict:?}"
    );
    assert_eq!(verdict.calibration, Some(1.0));
    assert!(
        verdict.lines().contains("calibration: 100.0 %"),
        "{}",
        verdict.lines()
    );
    assert!(md.contains("**Calibration: 100.0 %"), "{md}");
    let row = md
        .lines()
        .find(|l| l.starts_with("| concurrent | a ÷ b |"))
        .unwrap_or_else(|| panic!("{md}"));
    assert_eq!(
        row,
        "| concurrent | a ÷ b | 0.80 [0.70–0.90] | 1.30 [1.10–1.40] | 0.95 [0.90–1.05] | 0.95 | \
         0.80–1.30 | 1 / 1 / 1 |"
    );
}

#[test]
fn many_filters_mode_queries_random_filters_without_false_negatives() {
    let entries = adapters::select(None).expect("all filters");
    let ctx = common::context(&entries, 9, 1_000, 1_000);
    let plan = adapters::Many {
        keys_per: 1_000,
        target_bytes: 1 << 20,
        max_filters: 10_000,
        queries: 4_000,
        rounds: 2,
        seed: 9,
    };
    // Against a 256 KiB "LLC", 1 MiB of filters is 4× it: out of cache by the labels.
    let e = bench_harness::experiments::many_filters::measure(&ctx, &plan, 256 << 10).unwrap();
    let names: Vec<&str> = e.series.iter().map(|s| s.filter.as_str()).collect();
    assert_eq!(
        names,
        bench_harness::experiments::many_filters::MAIN,
        "the main entries, in registry order"
    );
    for s in &e.series {
        let p = &s.points[0];
        assert!(p.x >= 4.0, "{}: {} × LLC (1 MiB of filters)", s.filter, p.x);
        assert!(p.y > 0.0 && p.y.is_finite());
        assert!(s.note.contains("; 0 false negatives"), "{}", s.note);
        assert!(s.note.contains("out of cache"), "{}", s.note);
        // 1 % filters: the FPR over 4 000 non-member queries stays far below 5 %.
        let fpr: f64 = s
            .note
            .split("FPR ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(fpr < 5.0, "{}: {fpr} %", s.filter);
    }
    // The main entries live together and their rounds interleave: paired ratios, one per
    // entry other than blocked, each from the per-round ratios.
    assert_eq!(e.ratios.len(), names.len() - 1);
    for r in &e.ratios {
        assert!(
            r.name.contains("÷ blocked") && r.name.ends_with("(paired)"),
            "{}",
            r.name
        );
        assert!(r.ratio.lo <= r.ratio.mid && r.ratio.mid <= r.ratio.hi && r.ratio.mid > 0.0);
    }
}

#[test]
fn a_run_records_each_phase_wall_time_and_older_files_read_without_them() {
    let r = tiny_results();
    assert_eq!(r.schema_version, bench_harness::schema::SCHEMA_VERSION);
    let names: Vec<&str> = r.phases.iter().map(|p| p.name.as_str()).collect();
    for size in &r.config.sizes {
        for what in ["builds", "lookup rounds", "FPR probes"] {
            let name = format!("n = {}: {what}", bench_harness::labels::size_label(*size));
            assert!(names.contains(&name.as_str()), "{name} in {names:?}");
        }
    }
    // Phases do not overlap: together they take no longer than the run.
    let total: f64 = r.phases.iter().map(|p| p.seconds).sum();
    assert!(
        r.phases
            .iter()
            .all(|p| p.seconds >= 0.0 && p.cpu_seconds >= 0.0),
        "{:?}",
        r.phases
    );
    assert!(
        total <= r.wall_seconds + 1e-6,
        "{total} s of phases in {} s",
        r.wall_seconds
    );
    assert!(report::summary(&r).contains("wall time by phase"));
    // A version-5 file has no phases: it reads with none.
    let mut json: serde_json::Value = serde_json::to_value(&r).unwrap();
    json["schema_version"] = 5.into();
    json.as_object_mut().unwrap().remove("phases");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("v5.json");
    std::fs::write(&p, json.to_string()).unwrap();
    let back = report::read(&p).unwrap();
    assert_eq!(back.schema_version, 5);
    assert!(back.phases.is_empty());
}
