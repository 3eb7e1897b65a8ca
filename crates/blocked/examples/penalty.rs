//! Extension exercise 1 of seed 000: the FPR penalty of blocking, blocked (512-bit) against
//! classic at 8, 10 and 16 bits/item, measured and theoretical. Prints a markdown table and
//! writes it, a CSV and an SVG plot to a directory (default `results/blocked`).
//!
//! ```sh
//! cargo run --release -p bloomlab-blocked --example penalty [-- OUT_DIR]
//! ```
//!
//! Both filters get the same number of bits (`n · bits/item`, the blocked one rounded up to
//! whole blocks) and each its own best `k`. Keys are seeded; members and non-members can never
//! coincide (different tag byte). Theory: classic `(1 − e^(−kn/m))^k`; blocked by the textbook
//! Poisson mixture with independent bits (Putze et al. 2007, [`math::blocked_fpr`]) and with the
//! exact within-block occupancy ([`math::blocked_fpr_exact`]).

use std::fmt::Write as _;
use std::path::PathBuf;

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_classic::BloomFilter;
use bloomlab_core::math;
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

const N: u64 = 1_000_000;
const PROBES: u64 = 10_000_000;
const DENSITIES: [f64; 3] = [8.0, 10.0, 16.0];

fn key(tag: u8, rng: &mut ChaCha8Rng) -> [u8; 17] {
    let mut k = [tag; 17];
    rng.fill_bytes(&mut k[1..]);
    k
}

struct Row {
    bpi: f64,
    k_classic: u32,
    k_blocked: u32,
    classic_measured: f64,
    classic_theory: f64,
    blocked_measured: f64,
    blocked_textbook: f64,
    blocked_exact: f64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out_dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "results/blocked".into()),
    );
    let mut rows = Vec::new();
    for bpi in DENSITIES {
        let mut rng = ChaCha8Rng::seed_from_u64(bpi as u64);
        let mut blocked = BlockedBloomFilter::with_bits_per_item(N, bpi)?;
        let m = blocked.bits();
        let k_classic = math::classic_hashes(m, N);
        let mut classic = BloomFilter::with_bits(m, k_classic)?;
        for _ in 0..N {
            let k = key(0, &mut rng);
            blocked.insert(&k);
            classic.insert(&k);
        }
        let (mut pb, mut pc) = (0u64, 0u64);
        for _ in 0..PROBES {
            let k = key(1, &mut rng);
            pb += u64::from(blocked.might_contain(&k));
            pc += u64::from(classic.might_contain(&k));
        }
        let density = m as f64 / N as f64;
        rows.push(Row {
            bpi: density,
            k_classic,
            k_blocked: blocked.hashes(),
            classic_measured: pc as f64 / PROBES as f64,
            classic_theory: classic.expected_fpr(),
            blocked_measured: pb as f64 / PROBES as f64,
            blocked_textbook: math::blocked_fpr(density, blocked.hashes(), 512),
            blocked_exact: blocked.expected_fpr(),
        });
    }

    let pct = |x: f64| format!("{:.4} %", 100.0 * x);
    let mut md = String::new();
    writeln!(
        md,
        "Blocked (512-bit) vs classic Bloom filter at the same size: n = {N} seeded random keys, \
         {PROBES} non-member probes per filter (σ of a measured FPR ≈ √(p/{PROBES})).\n"
    )?;
    writeln!(
        md,
        "| bits/item | k classic | k blocked | classic measured | classic theory | blocked measured | blocked theory (textbook) | blocked theory (exact) | penalty measured | penalty theory (textbook) | penalty theory (exact) |"
    )?;
    writeln!(md, "|---|---|---|---|---|---|---|---|---|---|---|")?;
    let mut csv = String::from(
        "bits_per_item,k_classic,k_blocked,classic_measured,classic_theory,blocked_measured,blocked_textbook,blocked_exact\n",
    );
    for r in &rows {
        writeln!(
            md,
            "| {:.2} | {} | {} | {} | {} | {} | {} | {} | {:.3}× | {:.3}× | {:.3}× |",
            r.bpi,
            r.k_classic,
            r.k_blocked,
            pct(r.classic_measured),
            pct(r.classic_theory),
            pct(r.blocked_measured),
            pct(r.blocked_textbook),
            pct(r.blocked_exact),
            r.blocked_measured / r.classic_measured,
            r.blocked_textbook / r.classic_theory,
            r.blocked_exact / r.classic_theory,
        )?;
        writeln!(
            csv,
            "{},{},{},{},{},{},{},{}",
            r.bpi,
            r.k_classic,
            r.k_blocked,
            r.classic_measured,
            r.classic_theory,
            r.blocked_measured,
            r.blocked_textbook,
            r.blocked_exact
        )?;
    }
    print!("{md}");
    std::fs::create_dir_all(&out_dir)?;
    std::fs::write(out_dir.join("penalty.md"), &md)?;
    std::fs::write(out_dir.join("penalty.csv"), &csv)?;
    std::fs::write(out_dir.join("penalty.svg"), svg(&rows))?;
    eprintln!("wrote {}/penalty.{{md,csv,svg}}", out_dir.display());
    Ok(())
}

/// A theory curve: label, colour, dash pattern, FPR at a density.
type Curve = (
    &'static str,
    &'static str,
    &'static str,
    Box<dyn Fn(f64) -> f64>,
);

/// FPR (log scale) against bits/item: theory curves over 6–20 bits/item and measured points.
fn svg(rows: &[Row]) -> String {
    let (w, h, left, right, top, bottom) = (720.0, 460.0, 70.0, 20.0, 30.0, 50.0);
    let (x0, x1) = (6.0f64, 20.0f64);
    let (y0, y1) = (-5.0f64, -1.0f64); // log10 FPR
    let px = |x: f64| left + (x - x0) / (x1 - x0) * (w - left - right);
    let py = |fpr: f64| top + (y1 - fpr.log10()) / (y1 - y0) * (h - top - bottom);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="18" text-anchor="middle" font-size="14">Blocked (512-bit) vs classic Bloom filter: FPR against bits/item</text>"#,
        w / 2.0
    );
    for e in -5..=-1 {
        let y = py(10f64.powi(e));
        let _ = writeln!(
            s,
            r##"<line x1="{left}" x2="{}" y1="{y}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">1e{e}</text>"##,
            w - right,
            left - 6.0,
            y + 4.0
        );
    }
    for b in (6..=20).step_by(2) {
        let x = px(f64::from(b));
        let _ = writeln!(
            s,
            r##"<line x1="{x}" x2="{x}" y1="{top}" y2="{}" stroke="#eee"/><text x="{x}" y="{}" text-anchor="middle">{b}</text>"##,
            h - bottom,
            h - bottom + 16.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">bits per item</text><text x="16" y="{}" transform="rotate(-90 16 {})" text-anchor="middle">false-positive rate</text>"#,
        w / 2.0,
        h - 10.0,
        h / 2.0,
        h / 2.0
    );
    let curves: [Curve; 3] = [
        (
            "classic, best k",
            "#1f77b4",
            "",
            Box::new(|b: f64| {
                let m = (b * 1e6) as u64;
                math::classic_fpr(m, math::classic_hashes(m, 1_000_000), 1_000_000)
            }),
        ),
        (
            "blocked 512, textbook (independent bits)",
            "#ff7f0e",
            "6 4",
            Box::new(|b: f64| math::blocked_fpr(b, math::blocked_best_hashes(b, 512), 512)),
        ),
        (
            "blocked 512, exact occupancy",
            "#d62728",
            "",
            Box::new(|b: f64| math::blocked_fpr_exact(b, math::blocked_best_hashes(b, 512), 512)),
        ),
    ];
    for (i, (label, color, dash, f)) in curves.iter().enumerate() {
        let pts: Vec<String> = (0..=56)
            .map(|j| {
                let b = x0 + (x1 - x0) * f64::from(j) / 56.0;
                format!("{:.1},{:.1}", px(b), py(f(b)))
            })
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}" points="{}"/>"#,
            pts.join(" ")
        );
        let ly = top + 16.0 + 18.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<line x1="{}" x2="{}" y1="{ly}" y2="{ly}" stroke="{color}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{}" y="{}">{label}</text>"#,
            w - 330.0,
            w - 300.0,
            w - 294.0,
            ly + 4.0
        );
    }
    for r in rows {
        for (fpr, color) in [
            (r.classic_measured, "#1f77b4"),
            (r.blocked_measured, "#d62728"),
        ] {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="4.5" fill="none" stroke="{color}" stroke-width="2"/>"#,
                px(r.bpi),
                py(fpr)
            );
        }
    }
    let ly = top + 16.0 + 18.0 * 3.0;
    let _ = writeln!(
        s,
        r##"<circle cx="{}" cy="{ly}" r="4.5" fill="none" stroke="#555" stroke-width="2"/><text x="{}" y="{}">measured (10^6 keys, 10^7 probes)</text>"##,
        w - 315.0,
        w - 294.0,
        ly + 4.0
    );
    s.push_str("</svg>\n");
    s
}
