//! The figures the seed scenarios report, against what they are computed from: the sizes of
//! the filters built apart, and the Markdown rows against the report they render.

use bloomlab_uses::dedup::{self, DedupConfig};
use bloomlab_uses::lsm::{self, FilterChoice};

mod common;

/// The filter bits per key the LSM scenario reports are the bytes of the filters it writes
/// (a classic filter's bytes depend on `n` and the target only, so one built here from any
/// keys has the same size), over the keys of all its tables.
#[test]
fn the_lsm_report_names_its_filter_and_counts_its_bits_per_key() {
    let (dir, cfg) = common::lsm_at_one_percent(3, 2_000, 500, 1.0, 7);
    let keys: Vec<u64> = (0..cfg.keys_per_table as u64).collect();
    let one = FilterChoice::Classic
        .build(&keys, cfg.fpr)
        .unwrap()
        .unwrap()
        .len();
    let r = lsm::run(dir.path(), FilterChoice::Classic, &cfg).unwrap();
    assert_eq!(r.filter, "classic");
    let want = (cfg.tables * one * 8) as f64 / (cfg.tables * cfg.keys_per_table) as f64;
    assert_eq!(r.filter_bits_per_key, want, "{r:?}");
    assert_eq!(
        r.filter_mib,
        (cfg.tables * one) as f64 / (1u64 << 20) as f64
    );
    // Each choice reports its own name, and no two share one.
    let names: Vec<&str> = FilterChoice::ALL.iter().map(|c| c.name()).collect();
    assert_eq!(names, ["none", "classic", "blocked", "cuckoo", "ribbon"]);
}

/// The dedup scenario's Markdown row shows the report's figures, each in its column.
#[test]
fn the_dedup_table_shows_the_reports_figures() {
    let cfg = DedupConfig {
        users: 4,
        items_per_user: 500,
        repeat_share: 0.3,
        fpr: 0.01,
        seed: 11,
    };
    let r = dedup::run(&cfg, |f| {
        f();
        4096
    })
    .unwrap();
    let md = dedup::markdown(&cfg, &r);
    let lines: Vec<&str> = md.lines().collect();
    assert_eq!(lines.len(), 3, "{md}");
    assert!(lines[0].starts_with("| users | items offered |"), "{md}");
    let cells: Vec<&str> = lines[2]
        .trim_matches('|')
        .split('|')
        .map(str::trim)
        .collect();
    assert_eq!(cells.len(), 10, "{md}");
    assert_eq!(cells[0], "4");
    assert_eq!(cells[1], "2000");
    assert_eq!(cells[2], r.new_items.to_string());
    assert_eq!(
        cells[3],
        format!("{} of {}", r.repeats_suppressed, r.repeats)
    );
    assert_eq!(cells[4], r.wrongly_suppressed.to_string());
    let rate = 100.0 * r.wrongly_suppressed as f64 / r.new_items as f64;
    assert_eq!(cells[6], format!("{rate:.4} % vs 1.00 %"));
    assert_eq!(cells[8], "4.0 KiB");
}
