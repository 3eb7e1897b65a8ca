//! Blocked penalty (seed 000, extension exercise 1): FPR of the blocked (512-bit) and the
//! classic Bloom filter at the same size, 8 to 16 bits/item, each with its best k, measured
//! and theoretical. Theory says the blocked filter pays ≈ 1.07× at 8, 1.17× at 10 and 1.8× at
//! 16 bits/item (textbook Poisson mixture); the exact within-block occupancy formula, which
//! the blocked filter is sized and judged by, says 1.08× / 1.18× / 1.85×. The Parquet
//! split-block filter (256-bit blocks, always 8 bits per key) is measured at the same sizes
//! against its own formula (`math::sbbf_fpr`).

use crate::error::Error;
use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_classic::BloomFilter;
use bloomlab_core::math;
use bloomlab_sbbf::Sbbf;

use crate::keys::KeySet;
use crate::schema::{Axis, Experiment, Point, Series};
use crate::stats::{Z95, wilson};

use super::Context;

/// Densities measured (bits per item); 8, 10 and 16 are the exercise's.
pub const DENSITIES: &[f64] = &[8.0, 10.0, 12.0, 14.0, 16.0];

/// Run the experiment.
pub fn run(ctx: &Context) -> Result<Experiment, Error> {
    let n = usize::try_from(ctx.n).map_err(|_| Error::measurement("design capacity too large"))?;
    let keys = KeySet::new(ctx.seed, n, ctx.probes);
    let (mut classic_pts, mut blocked_pts, mut sbbf_pts) = (Vec::new(), Vec::new(), Vec::new());
    let mut textbook = Vec::new();
    let mut penalties = Vec::new();
    for &bpi in DENSITIES {
        let d = at_density(ctx, &keys, bpi)?;
        classic_pts.push(d.classic);
        blocked_pts.push(d.blocked);
        sbbf_pts.push(d.sbbf);
        penalties.push(d.penalty);
        textbook.push(d.text);
    }
    let series = series(classic_pts, blocked_pts, sbbf_pts, &penalties);
    Ok(Experiment::new(
        "blocked-penalty",
        format!(
            "Blocked penalty: blocked vs classic FPR at the same size, n = {}",
            ctx.n
        ),
        format!(
            "Blocked (512-bit blocks) and classic filters of the same m = n * bits/item, each \
             with its best k, filled with n = {} keys; FPR on {} distinct non-members. Theory: \
             classic (1 - e^(-kn/m))^k; blocked the Poisson mixture over block loads with exact \
             in-block occupancy (math::blocked_fpr_exact); the penalty (blocked / classic \
             FPR) measured, by the exact formula and by the textbook independent-bits formula: {}.",
            ctx.n,
            keys.probes.len(),
            textbook.join("; ")
        ),
        (
            Axis::linear("bits per item"),
            Axis::rate("false-positive rate"),
        ),
        series,
    ))
}

/// What one density gave: the three filters' points, the measured penalty (blocked ÷
/// classic FPR) and the description's line for it.
struct AtDensity {
    classic: Point,
    blocked: Point,
    sbbf: Point,
    penalty: f64,
    text: String,
}

/// Blocked, classic and split-block filters of the same bits at `bpi` bits per item, filled
/// with the members and probed with the non-members.
fn at_density(ctx: &Context, keys: &KeySet, bpi: f64) -> Result<AtDensity, Error> {
    let probes = keys.probes.len() as f64;
    let mut blocked = BlockedBloomFilter::with_bits_per_item(ctx.n, bpi).map_err(Error::from)?;
    let m = blocked.bits();
    let mut classic =
        BloomFilter::with_bits(m, math::classic_hashes(m, ctx.n)).map_err(Error::from)?;
    // The same m: whole 512-bit blocks are whole 256-bit ones.
    let mut sbbf = Sbbf::with_blocks(m / 256).map_err(Error::from)?;
    for k in &keys.members {
        blocked.insert(k);
        classic.insert(k);
        sbbf.insert(k);
    }
    let count = |hit: &dyn Fn(&u64) -> bool| keys.probes.iter().filter(|k| hit(k)).count();
    let ks = count(&|k| sbbf.might_contain(k));
    let fs = ks as f64 / probes;
    let ts = sbbf.expected_fpr();
    let kb = count(&|k| blocked.might_contain(k));
    let fb = kb as f64 / probes;
    let kc = count(&|k| classic.might_contain(k));
    let fc = kc as f64 / probes;
    let ci = |k: usize| Some(wilson(k as u64, keys.probes.len() as u64, Z95));
    let density = m as f64 / ctx.n as f64;
    let (tb, tc) = (blocked.expected_fpr(), classic.expected_fpr());
    let tt = bloomlab_blocked::math::blocked_fpr(density, blocked.hashes(), 512);
    let classic_pt = Point {
        x: density,
        y: fc,
        theory: Some(tc),
        ci: ci(kc),
        x_ci: None,
    };
    let blocked_pt = Point {
        x: density,
        y: fb,
        theory: Some(tb),
        ci: ci(kb),
        x_ci: None,
    };
    let sbbf_pt = Point {
        x: density,
        y: fs,
        theory: Some(ts),
        ci: ci(ks),
        x_ci: None,
    };
    let text = format!(
        "{density:.2} b/item: k {} vs {}, penalty {:.3}x measured, {:.3}x exact, {:.3}x textbook; \
         sbbf {fs:.5} measured vs {ts:.5} formula, {:.3}x classic",
        blocked.hashes(),
        classic.hashes(),
        fb / fc,
        tb / tc,
        tt / tc,
        fs / fc
    );
    Ok(AtDensity {
        classic: classic_pt,
        blocked: blocked_pt,
        sbbf: sbbf_pt,
        penalty: fb / fc,
        text,
    })
}

/// The three series, the blocked one's note giving the penalty at both ends.
fn series(
    classic_pts: Vec<Point>,
    blocked_pts: Vec<Point>,
    sbbf_pts: Vec<Point>,
    penalties: &[f64],
) -> Vec<Series> {
    vec![
        Series {
            label: "classic (same bits, best k)".into(),
            filter: "classic".into(),
            peer: false,
            points: classic_pts,
            note: String::new(),
        },
        Series {
            label: "blocked 512-bit (best k)".into(),
            filter: "blocked".into(),
            peer: false,
            points: blocked_pts,
            note: format!(
                "penalty vs classic {:.2}x at {} b/item ... {:.2}x at {} b/item (details in the description)",
                penalties[0],
                DENSITIES[0],
                penalties[penalties.len() - 1],
                DENSITIES[DENSITIES.len() - 1]
            ),
        },
        Series {
            label: "sbbf 256-bit (Parquet, 8 bits/key)".into(),
            filter: "sbbf".into(),
            peer: false,
            points: sbbf_pts,
            note: "theory: math::sbbf_fpr (Poisson over 256-bit blocks, one bit per 32-bit word)"
                .into(),
        },
    ]
}
