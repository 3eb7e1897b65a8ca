//! How figures are written for people: sizes, percentages, byte counts, entry names. A leaf
//! module every report, table and `recommend` uses, so none of them imports another for a label.

/// `10^6` style for powers of ten, plain digits otherwise.
pub fn size_label(n: u64) -> String {
    let mut x = n;
    let mut e = 0;
    while x >= 10 && x.is_multiple_of(10) {
        x /= 10;
        e += 1;
    }
    if x == 1 && e > 0 {
        format!("10^{e}")
    } else {
        n.to_string()
    }
}

/// `items`, each as `label` writes it, separated by commas.
pub fn comma_list<T>(items: &[T], label: impl FnMut(&T) -> String) -> String {
    items.iter().map(label).collect::<Vec<_>>().join(", ")
}

/// A percentage with enough digits for small rates.
pub fn pct(x: f64) -> String {
    let v = x * 100.0;
    if v == 0.0 {
        "0 %".into()
    } else if v < 1e-4 {
        format!("{v:.1e} %")
    } else if v < 0.01 {
        format!("{v:.5} %")
    } else if v < 1.0 {
        format!("{v:.3} %")
    } else {
        format!("{v:.2} %")
    }
}

/// An experiment's column heading: a whole number as it is (sizes, counts), any other value
/// to three decimals without trailing zeros (a working set of 2.000034× the LLC reads 2).
pub fn axis_label(x: f64) -> String {
    if x == x.trunc() && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        let t = format!("{x:.3}");
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A row's target FPR as [`pct`] gives it, `fixed` for fixed-parameter rows.
pub fn target_label(target: Option<f64>) -> String {
    target.map_or_else(|| "fixed".into(), pct)
}

/// `x` to `digits` decimals followed by `unit` (` %`, or nothing), `missing` where there is
/// no figure.
pub fn decimals_or(x: Option<f64>, digits: usize, unit: &str, missing: &str) -> String {
    x.map_or_else(|| missing.into(), |v| format!("{v:.digits$}{unit}"))
}

/// `1.23 MiB` or `4.5 KiB`.
pub fn bytes_label(b: u64) -> String {
    let b = b as f64;
    if b >= 1024.0 * 1024.0 {
        format!("{:.2} MiB", b / 1024.0 / 1024.0)
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

/// Display name: peers carry "(peer)" everywhere.
pub fn display_name(row_filter: &str, peer: bool) -> String {
    if peer {
        format!("{row_filter} (peer)")
    } else {
        row_filter.to_string()
    }
}
