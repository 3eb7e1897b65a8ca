//! `recommend`: ranking and tie-breaks under both objectives, batched entries only with
//! `--batch`, and extrapolation said out loud.

#![forbid(unsafe_code)]

mod common;

use bench_harness::recommend::{Needs, Objective, rank, recommend};
use bench_harness::schema::Row;
use bench_harness::{adapters, driver};

fn row(name: &str, ns: f64, bits: f64) -> Row {
    // Shared per-round noise, so equal speeds pair to a ratio of exactly 1.
    let noise = [1.0, 1.3, 1.0, 1.1, 1.0, 1.2, 1.0];
    let rounds: Vec<f64> = noise.iter().map(|n| n * ns).collect();
    let mut r = common::synthetic(name, false, Some(0.01), 0.01, &rounds);
    r.bits_per_item = bits;
    r
}

#[test]
fn speed_ranks_fastest_first_and_breaks_ties_by_memory() {
    let a = row("a", 10.0, 9.0);
    let b = row("b", 10.0, 8.0);
    let c = row("c", 20.0, 5.0);
    let ranked = rank(&[&a, &b, &c], Objective::Speed);
    let names: Vec<&str> = ranked.iter().map(|r| r.filter.as_str()).collect();
    assert_eq!(names, ["b", "a", "c"], "a tie in speed goes to the smaller");
    // Order of the input does not matter.
    let ranked = rank(&[&c, &b, &a], Objective::Speed);
    let names: Vec<&str> = ranked.iter().map(|r| r.filter.as_str()).collect();
    assert_eq!(names, ["b", "a", "c"]);
}

#[test]
fn memory_ranks_smallest_first_and_breaks_ties_by_speed() {
    let a = row("a", 10.0, 9.0);
    let b = row("b", 5.0, 9.05); // within 1 % of a's bits/item: tied on memory
    let c = row("c", 1.0, 12.0);
    let d = row("d", 2.0, 9.2); // 2.2 % above a: not tied
    let ranked = rank(&[&a, &b, &c, &d], Objective::Memory);
    let names: Vec<&str> = ranked.iter().map(|r| r.filter.as_str()).collect();
    assert_eq!(
        names,
        ["b", "a", "d", "c"],
        "a tie in memory goes to the faster"
    );
}

fn measured() -> bench_harness::schema::Results {
    let names: Vec<String> = [
        "blocked",
        "blocked-batched",
        "classic",
        "exact-hashset",
        "sbbf-rs-eqmem",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let entries = adapters::select(Some(&names)).unwrap();
    let mut plan = driver::Plan::quick(3);
    plan.sizes = vec![20_000];
    plan.fprs = vec![0.01];
    plan.fpr_probes = 50_000;
    plan.lookup_keys = 4_096;
    plan.lookup_passes = 3;
    plan.experiments.clear();
    plan.progress = false;
    driver::run(&entries, &plan).unwrap()
}

#[test]
fn recommend_says_when_it_extrapolates_and_keeps_batched_entries_behind_batch() {
    let r = measured();
    assert!(r.machine.cache_bytes.llc.is_some() || !cfg!(target_os = "linux"));
    let needs = Needs {
        n: 1_000_000_000,
        fpr: 0.01,
        deletes: false,
        grows: false,
        hostile_keys: false,
        memory_budget: None,
        batch: false,
        objective: Objective::Speed,
    };
    let rec = recommend(&r, &needs).unwrap();
    assert!(
        rec.explanation.contains("Extrapolated"),
        "{}",
        rec.explanation
    );
    assert!(
        rec.explanation.contains("n = 2×10^4") || rec.explanation.contains("n = 20000"),
        "{}",
        rec.explanation
    );
    assert!(
        rec.explanation.contains("--n 1000000000"),
        "names the run command: {}",
        rec.explanation
    );
    // The measured point's memory is the projected one scaled back to the measured n.
    if r.machine.cache_bytes.llc.is_some() {
        let measured = rec.projected_bytes / 1e9 * 20_000.0;
        let shown = if measured >= 1024.0 * 1024.0 {
            format!("{:.2} MiB", measured / 1024.0 / 1024.0)
        } else {
            format!("{:.1} KiB", measured / 1024.0)
        };
        assert!(
            rec.explanation.contains(&format!("held about {shown}")),
            "{shown}: {}",
            rec.explanation
        );
    }
    let info = |name: &str| r.filters.iter().find(|f| f.name == name).unwrap().clone();
    assert!(
        !info(&rec.filter).batched,
        "batched without --batch: {}",
        rec.filter
    );
    assert!(!info(&rec.filter).equal_memory, "{}", rec.filter);
    assert!(
        !rec.explanation.contains("blocked-batched"),
        "{}",
        rec.explanation
    );
    assert!(rec.explanation.contains("Top "), "{}", rec.explanation);
    // The objective is named, and no budget where none was given.
    assert!(
        rec.explanation.contains(" by speed:"),
        "{}",
        rec.explanation
    );
    assert!(!rec.explanation.contains(", budget"), "{}", rec.explanation);
    // Needs out of range are usage errors.
    for bad in [
        Needs {
            n: 0,
            ..needs.clone()
        },
        Needs {
            fpr: 0.0,
            ..needs.clone()
        },
        Needs {
            fpr: 1.0,
            ..needs.clone()
        },
        Needs {
            fpr: 1.5,
            ..needs.clone()
        },
    ] {
        assert!(
            matches!(recommend(&r, &bad), Err(bench_harness::Error::Usage(_))),
            "{bad:?}"
        );
    }

    // At a measured size and target nothing is extrapolated.
    let here = recommend(
        &r,
        &Needs {
            n: 20_000,
            ..needs.clone()
        },
    )
    .unwrap();
    assert!(
        !here.explanation.contains("Extrapolated"),
        "{}",
        here.explanation
    );

    // With --batch the batched entry competes, labelled.
    let rec = recommend(
        &r,
        &Needs {
            batch: true,
            ..needs.clone()
        },
    )
    .unwrap();
    if rec.filter == "blocked-batched" {
        assert!(rec.explanation.contains("[batched"), "{}", rec.explanation);
    }
    // A target below the measured ones is flagged.
    let low = recommend(
        &r,
        &Needs {
            n: 20_000,
            fpr: 0.001,
            ..needs.clone()
        },
    );
    let text = match low {
        Ok(x) => x.explanation,
        Err(e) => e.to_string(),
    };
    assert!(text.contains("below the lowest measured target"), "{text}");
}
