//! End-to-end tests of the harness on tiny sizes: driver → results/ → plot → recommend.

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
        lookup_passes: 2,
        experiments: vec!["overfill".into()],
        experiment_n: 2_000,
        progress: false,
    }
}

fn tiny_results() -> Results {
    let entries = adapters::select(None).expect("all filters");
    driver::run(&entries, &tiny_plan()).expect("run")
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
        passes: 1,
        quiet: true,
        out: out.clone(),
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
    assert!(csv.lines().next().unwrap().contains("peer_ratio_50pct"));

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
        if row.filter != "cuckoofilter" {
            assert_eq!(row.false_negatives, 0, "{} lost keys", row.filter);
        }
        if row.kind == "exact" {
            assert_eq!(row.measured_fpr, 0.0);
            assert!(row.wasted_pct.is_none());
        }
        if row.filter == "classic" {
            let t = row.target_fpr.unwrap();
            // 50 000 probes: a generous statistical band around the target.
            assert!(
                row.measured_fpr > t * 0.7 && row.measured_fpr < t * 1.3,
                "classic at {t}: {}",
                row.measured_fpr
            );
            let bpi = bloomlab_core::math::classic_bits_per_item(t).unwrap();
            assert!(
                (row.bits_per_item - bpi).abs() < 0.1,
                "{}",
                row.bits_per_item
            );
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
    };
    // A small set with a big budget: skip the filter.
    let rec = recommend(&r, &base).unwrap();
    assert_eq!(rec.filter, "exact-hashset");
    assert!(rec.explanation.contains("Use an exact set"));

    // A big set with a tight budget: a filter that met 1 % in the measurements.
    let needs = Needs {
        n: 20_000,
        memory_budget: Some(40_000),
        ..base.clone()
    };
    let rec = recommend(&r, &needs).unwrap();
    assert_ne!(rec.row.kind, "exact");
    assert!(rec.row.measured_fpr <= 0.011);
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
    .unwrap_err();
    assert!(
        err.contains("No measured option meets these needs"),
        "{err}"
    );
}

#[test]
fn unknown_names_and_bad_flags_are_clear_errors() {
    let err = adapters::select(Some(&["classic".into(), "nope".into()])).unwrap_err();
    assert!(err.contains("unknown filter name(s): nope"), "{err}");
    assert!(err.contains("fastbloom"), "lists the known names: {err}");

    let args = RunArgs {
        experiments: Some(vec!["bogus".into()]),
        ..RunArgs::default()
    };
    let err = cli::plan(&args).unwrap_err();
    assert!(err.contains("unknown experiment"), "{err}");

    for bad in [
        vec!["bench-harness", "--fpr", "1.5"],
        vec!["bench-harness", "--fpr", "abc"],
        vec!["bench-harness", "--n", "0"],
        vec!["bench-harness", "--n", "1.5"],
        vec!["bench-harness", "recommend", "--n", "10"],
        vec![
            "bench-harness",
            "recommend",
            "--n",
            "10",
            "--fpr",
            "0.01",
            "--memory-budget",
            "12 parsecs",
        ],
        vec!["bench-harness", "--bogus-flag"],
    ] {
        assert!(Cli::try_parse_from(&bad).is_err(), "{bad:?} accepted");
    }
    assert_eq!(cli::parse_bytes("16MiB").unwrap(), 16 << 20);
    assert_eq!(cli::parse_bytes("10MB").unwrap(), 10_000_000);
    assert_eq!(cli::parse_count("1e6").unwrap(), 1_000_000);

    let missing = Cli::parse_from([
        "bench-harness",
        "recommend",
        "--n",
        "10",
        "--fpr",
        "0.01",
        "--results",
        "/nonexistent/results.json",
    ]);
    let err = cli::dispatch(missing).unwrap_err();
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
    for e in adapters::registry() {
        let b = e.build(&spec, &keys).unwrap();
        assert_eq!(b.refused, 0, "{}", e.info.name);
        assert!(
            keys.iter().all(|&k| b.filter.contains(k)),
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
        assert_eq!(e.time_inserts(&spec, &keys).is_some(), e.info.dynamic);
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
fn inspect_reads_our_files_and_refuses_others() {
    let dir = tempfile::tempdir().unwrap();
    let mut f = bloomlab_classic::BloomFilter::with_fpr(1_000, 0.01).unwrap();
    for i in 0..3_000u32 {
        f.insert(&i);
    }
    let good = dir.path().join("f.blab");
    std::fs::write(&good, f.to_bytes()).unwrap();
    let out = cli::dispatch(Cli::parse_from([
        "bench-harness",
        "inspect",
        good.to_str().unwrap(),
    ]))
    .expect("inspect");
    assert!(out.contains("variant:       classic"), "{out}");
    assert!(out.contains("PAST design load"), "{out}");
    assert!(out.contains("[FAIL] 2. Sizing"), "{out}");
    assert!(out.contains("CANNOT TELL FROM THE FILE"), "{out}");

    let bad = dir.path().join("bad.bin");
    std::fs::write(&bad, b"not a filter at all").unwrap();
    let err = cli::dispatch(Cli::parse_from([
        "bench-harness",
        "inspect",
        bad.to_str().unwrap(),
    ]))
    .unwrap_err();
    assert!(err.contains("not a valid filter"), "{err}");
    let missing = dir.path().join("missing");
    assert!(
        cli::dispatch(Cli::parse_from([
            "bench-harness",
            "inspect",
            missing.to_str().unwrap()
        ]))
        .unwrap_err()
        .contains("cannot read")
    );
}

#[test]
fn keyed_attack_experiment_separates_keyed_from_unkeyed() {
    let entries = adapters::select(None).expect("all filters");
    let ctx = bench_harness::experiments::Context {
        entries: &entries,
        seed: 3,
        n: 5_000,
        probes: 100_000,
    };
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
