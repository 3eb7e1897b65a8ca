//! `compare` on the committed results against a copy with known changes: each figure's
//! relative change is the one applied, and a lookup ratio to the fastest peer is compared for
//! every row but the peer's own.

#![forbid(unsafe_code)]

use std::path::Path;

use bench_harness::compare::compare;
use bench_harness::labels::{pct, size_label};
use bench_harness::schema::Results;

fn committed() -> Results {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/results.json");
    bench_harness::report::read(&path).expect("committed results")
}

#[test]
fn the_relative_change_of_each_figure_is_the_one_applied() {
    let a = committed();
    let mut b = a.clone();
    for r in &mut b.rows {
        r.bits_per_item *= 1.25;
        r.fpr_ci.mid *= 0.8;
        r.fpr_ci.lo *= 0.8;
        r.fpr_ci.hi *= 0.8;
    }
    let changes = compare(&a, &b);
    let (mut bits, mut fpr) = (0, 0);
    for c in &changes {
        let want = match c.figure.as_str() {
            "bits/item" => 0.25,
            "FPR" if c.a.mid > 0.0 => -0.2,
            _ => continue,
        };
        // Both sides are the same double scaled once: a few ulps apart.
        assert!((c.rel - want).abs() < 1e-12, "{c:?}");
        if want > 0.0 { bits += 1 } else { fpr += 1 }
    }
    assert_eq!(bits, a.rows.len());
    assert_eq!(fpr, a.rows.iter().filter(|r| r.fpr_ci.mid > 0.0).count());
}

#[test]
fn the_ratio_to_the_fastest_peer_is_compared_for_every_row_but_the_peers_own() {
    let a = committed();
    let changes = compare(&a, &a.clone());
    let mut compared = 0;
    for r in &a.rows {
        for l in &r.lookups {
            let (Some(peer), Some(_)) = (&l.peer, l.peer_ratio) else {
                continue;
            };
            let what = format!(
                "{} n={} target={}",
                r.filter,
                size_label(r.n),
                r.target_fpr.map(pct).unwrap_or_else(|| "fixed".into())
            );
            let figure = format!("×{peer} {} %", l.positive_pct);
            let found = changes
                .iter()
                .filter(|c| c.what == what && c.figure == figure)
                .count();
            if *peer == r.filter {
                // The peer's own ratio to itself is 1 in both runs: nothing to compare.
                assert_eq!(found, 0, "{what} compared with itself");
            } else {
                assert_eq!(found, 1, "{what} {figure}");
                compared += 1;
            }
        }
    }
    assert!(compared > 0);
}
