//! Expandable growth (issue: an expandable filter at close to a static filter's space): the
//! expandable filter, our scalable filter and qfilter with resizing each start at the same
//! n0 = n/1024 and take the same 1024·n0 keys, at 1 % and 0.1 %.
//!
//! - `expandable-space`: live heap bits per item at 8 log-spaced points per doubling, and
//!   their mean per series; the headline ratios: that mean, ours ÷ scalable and ÷ qfilter;
//!   lookups at the final size ÷ a cuckoo filter built for it and ÷ the scalable filter; the
//!   whole growth's inserts ÷ the cuckoo filter's inserts of the same keys into a table sized
//!   for them. Times are paired within rounds: lookups in rounds of their own (the order of the
//!   three filters rotating), then inserts (the order alternating).
//! - `expandable-fpr`: the FPR measured at every doubling on the run's distinct
//!   non-members, with each structure's own formula as theory.

use crate::adapters::{Entry, Spec, registry};
use crate::alloc::net_bytes_signed;
use crate::error::Error;
use crate::keys::KeySet;
use crate::schema::{Axis, Experiment, NamedRatio, Point, Series};
use crate::stats::{Interval, median_interval};

use super::Context;

/// Doublings: growth 1×…1024×.
pub const DOUBLINGS: u32 = 10;
/// Sample points per doubling for bits/item.
pub const STEPS: u32 = 8;
/// Targets.
pub const TARGETS: [f64; 2] = [0.01, 0.001];
/// The growing filters compared.
pub const GROWING: [&str; 3] = ["expandable", "scalable", "qfilter-resizing"];
/// Insert timing rounds (each round grows the expandable filter and fills a cuckoo filter
/// once, the order alternating).
pub const ROUNDS: usize = 5;
/// Lookup timing rounds at the final size (each round times every filter once, the order
/// rotating).
pub const LOOKUP_ROUNDS: usize = 15;

fn entry(name: &str) -> Result<Entry, Error> {
    registry()
        .into_iter()
        .find(|e| e.info.name == name)
        .ok_or_else(|| Error::measurement(format!("no entry {name}")))
}

fn label(e: &Entry, p: f64) -> String {
    format!(
        "{}{} at {} %",
        e.info.name,
        if e.info.peer { " (peer)" } else { "" },
        p * 100.0
    )
}

/// One growth of one filter: bits/item at every sample point, FPR at every doubling.
struct Growth {
    bits: Vec<Point>,
    fpr: Vec<Point>,
    mean_bits: f64,
    worst_fpr: f64,
    lost: usize,
    refused: u64,
}

fn grow(e: &Entry, n0: usize, p: f64, keys: &KeySet, seed: u64) -> Result<Growth, Error> {
    let spec = Spec {
        n: (8 * n0) as u64,
        fpr: p,
        seed,
    };
    // The filter's net heap bytes: its creation and every insert, measured where they run
    // (the lists of sample points below grow outside the measurement).
    let (f, mut heap) = net_bytes_signed(|| e.new_empty(&spec));
    let mut f =
        f.ok_or_else(|| Error::measurement(format!("{} cannot start empty", e.info.name)))??;
    let (mut bits, mut fpr) = (Vec::new(), Vec::new());
    let (mut inserted, mut refused, mut worst) = (0usize, 0u64, 0.0f64);
    for s in 0..=DOUBLINGS * STEPS {
        let growth = (f64::from(s) / f64::from(STEPS)).exp2();
        let upto = (n0 as f64 * growth).round() as usize;
        let ((), grew) = net_bytes_signed(|| {
            for &k in &keys.members[inserted..upto] {
                refused += u64::from(!f.insert(&k.to_le_bytes()));
            }
        });
        heap += grew;
        inserted = upto;
        let live = heap.max(0) as f64;
        bits.push(Point {
            x: growth,
            y: live * 8.0 / upto as f64,
            theory: None,
            ci: None,
            x_ci: None,
        });
        if s % STEPS == 0 {
            let point = super::fpr_point(f.as_ref(), &keys.probes, growth);
            worst = worst.max(point.y);
            fpr.push(point);
        }
    }
    let lost = inserted - super::contained(f.as_ref(), &keys.members[..inserted]);
    let mean_bits = bits.iter().map(|b| b.y).sum::<f64>() / bits.len() as f64;
    Ok(Growth {
        bits,
        fpr,
        mean_bits,
        worst_fpr: worst,
        lost,
        refused,
    })
}

fn note(g: &Growth, p: f64) -> String {
    let mut v = vec![
        format!("mean {:.2} bits/item over the sample points", g.mean_bits),
        format!(
            "highest measured FPR {:.4} % ({:.2}x the target)",
            100.0 * g.worst_fpr,
            g.worst_fpr / p
        ),
    ];
    if g.refused > 0 {
        v.push(format!("refused {} inserts", g.refused));
    }
    if g.lost > 0 {
        v.push(format!("{} inserted keys test negative", g.lost));
    }
    v.join("; ")
}

struct Both {
    space: Vec<Series>,
    fpr: Vec<Series>,
    ratios: Vec<NamedRatio>,
    n0: usize,
    final_n: usize,
    probes: usize,
}

fn measure(ctx: &Context, timing: bool) -> Result<Both, Error> {
    let n = usize::try_from(ctx.n).map_err(|_| Error::measurement("design capacity too large"))?;
    let n0 = (n >> DOUBLINGS).max(1);
    let final_n = n0 << DOUBLINGS;
    let keys = KeySet::new(ctx.seed, final_n, ctx.probes);
    let growing: Vec<Entry> = GROWING.iter().map(|n| entry(n)).collect::<Result<_, _>>()?;
    let (mut space, mut fpr, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for p in TARGETS {
        let mut mean = Vec::new();
        for e in &growing {
            let g = grow(e, n0, p, &keys, ctx.seed)?;
            let series = |points| Series {
                label: label(e, p),
                filter: e.info.name.into(),
                peer: e.info.peer,
                points,
                note: note(&g, p),
            };
            space.push(series(g.bits.clone()));
            fpr.push(series(g.fpr.clone()));
            mean.push(g.mean_bits);
        }
        for (i, other) in [(1, "scalable"), (2, "qfilter-resizing")] {
            ratios.push(NamedRatio {
                name: format!("mean bits/item at {} %: expandable / {other}", p * 100.0),
                ratio: Interval::exact(mean[0] / mean[i]),
            });
        }
        if timing {
            ratios.extend(time(n0, final_n, p, &keys, ctx.seed)?);
        }
    }
    Ok(Both {
        space,
        fpr,
        ratios,
        n0,
        final_n,
        probes: keys.probes.len(),
    })
}

/// Lookups at the final size and the whole growth's inserts, paired within interleaved rounds.
fn time(
    n0: usize,
    final_n: usize,
    p: f64,
    keys: &KeySet,
    seed: u64,
) -> Result<Vec<NamedRatio>, Error> {
    let (exp, sca, cuc) = (entry("expandable")?, entry("scalable")?, entry("cuckoo")?);
    let members = &keys.members[..final_n];
    let member_keys = crate::keys::Keys::from_u64s(members);
    let grown = |e: &Entry| -> Result<_, Error> {
        let spec = Spec {
            n: (8 * n0) as u64,
            fpr: p,
            seed,
        };
        let mut f = e
            .new_empty(&spec)
            .ok_or_else(|| Error::measurement("cannot start empty"))??;
        for &k in members {
            f.insert(&k.to_le_bytes());
        }
        Ok(f)
    };
    let full = Spec {
        n: final_n as u64,
        fpr: p,
        seed,
    };
    let (fe, fs) = (grown(&exp)?, grown(&sca)?);
    let fc = cuc.build(&full, &member_keys)?.filter;
    let stream = crate::keys::Keys::from_u64s(&keys.lookup_stream(seed, final_n.min(1 << 20), 50));
    let (mut vs_cuckoo, mut vs_scalable, mut inserts) = (Vec::new(), Vec::new(), Vec::new());
    let secs = |d: std::time::Duration| d.as_secs_f64();
    // Lookups first, in rounds of their own: an insert timing allocates and fills a table of
    // the final size, which would leave whichever filter is timed next on a cold cache. The
    // order rotates every round, so each filter follows each other filter's pass alike.
    let filters = [&fe, &fs, &fc];
    for round in 0..LOOKUP_ROUNDS {
        let mut t = [0.0f64; 3];
        for i in 0..3 {
            let which = (round + i) % 3;
            t[which] = secs(filters[which].time_lookups(&stream).0);
        }
        vs_cuckoo.push(t[0] / t[2]);
        vs_scalable.push(t[0] / t[1]);
    }
    let grow_spec = Spec {
        n: (8 * n0) as u64,
        fpr: p,
        seed,
    };
    for round in 0..ROUNDS {
        let time_exp = || -> Result<f64, Error> {
            Ok(secs(
                exp.time_inserts(&grow_spec, &member_keys)
                    .ok_or_else(|| Error::measurement("no inserts"))??,
            ))
        };
        let time_cuc = || -> Result<f64, Error> {
            Ok(secs(
                cuc.time_inserts(&full, &member_keys)
                    .ok_or_else(|| Error::measurement("no inserts"))??,
            ))
        };
        let (ie, ic) = if round % 2 == 0 {
            let ie = time_exp()?;
            (ie, time_cuc()?)
        } else {
            let ic = time_cuc()?;
            (time_exp()?, ic)
        };
        inserts.push(ie / ic);
    }
    let pct = p * 100.0;
    Ok(vec![
        NamedRatio {
            name: format!("lookups at {final_n} keys, {pct} %: expandable / cuckoo"),
            ratio: median_interval(&vs_cuckoo),
        },
        NamedRatio {
            name: format!("lookups at {final_n} keys, {pct} %: expandable / scalable"),
            ratio: median_interval(&vs_scalable),
        },
        NamedRatio {
            name: format!(
                "inserts of {final_n} keys, {pct} %: expandable grown from {n0} / cuckoo sized for them"
            ),
            ratio: median_interval(&inserts),
        },
    ])
}

/// Bits/item along the growth, and the timing ratios.
pub fn run_space(ctx: &Context) -> Result<Experiment, Error> {
    let b = measure(ctx, true)?;
    Ok(Experiment {
        ratios: b.ratios,
        ..Experiment::new(
            "expandable-space",
            format!(
                "Expandable growth: bits/item from n0 = {} to {} (1024x), 1 % and 0.1 %",
                b.n0, b.final_n
            ),
            format!(
                "The expandable filter, the scalable filter and qfilter with resizing each start at \
             n0 = {} and take the same {} distinct keys; y = live heap bytes x 8 / items at {STEPS} \
             log-spaced points per doubling (each series' note gives the mean over them). Ratios: \
             the means (ours / theirs), and lookups (50 % members) at the final size and the \
             whole growth's inserts against a cuckoo filter sized for the final count, medians \
             of {LOOKUP_ROUNDS} lookup rounds (the three filters' order rotating) and of \
             {ROUNDS} insert rounds (the order alternating).",
                b.n0, b.final_n
            ),
            (
                Axis::log("growth (items / initial capacity)"),
                Axis::linear("bits per item"),
            ),
            b.space,
        )
    })
}

/// The FPR at every doubling.
pub fn run_fpr(ctx: &Context) -> Result<Experiment, Error> {
    let b = measure(ctx, false)?;
    Ok(Experiment::new(
        "expandable-fpr",
        format!(
            "Expandable growth: FPR from n0 = {} to {} (1024x), 1 % and 0.1 %",
            b.n0, b.final_n
        ),
        format!(
            "The same growths as expandable-space; at each doubling the FPR is measured on {} \
             distinct non-members. Theory: each structure's own formula (ours: the union bound \
             of the entries it holds). A growing filter must stay at or below its target at \
             every size.",
            b.probes
        ),
        (
            Axis::log("growth (items / initial capacity)"),
            Axis::rate("false-positive rate"),
        ),
        b.fpr,
    ))
}
