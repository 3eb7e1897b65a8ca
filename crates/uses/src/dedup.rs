//! Seen-filter dedup (seed 002): "has this user already been shown this post?" Each user has
//! a keyed filter of the post ids shown to them; a post that tests positive is suppressed.
//! A false positive wrongly suppresses a post the user has never seen — the cost of the
//! filter — and is counted against the target. Memory is compared with exact `HashSet`s of
//! the same ids, measured by the caller's allocator hook. Each offered post is one
//! [`Filter::insert_unique_bytes`] call (insert only if not seen): a post offered again and
//! again costs a lookup each time and never a byte.
//!
//! The filters are keyed ([`bloomlab_keyed::SipScheme`]) because post ids can be chosen by
//! other users: with a public hash an adversary could craft ids that pollute a user's
//! filter (see `bloomlab_keyed::attack`).

use std::collections::HashSet;

use bloomlab_classic::BloomFilter;
use bloomlab_core::{Error, Filter, math};
use bloomlab_keyed::SipScheme;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Settings of a dedup run.
#[derive(Clone, Copy, Debug)]
pub struct DedupConfig {
    /// Users.
    pub users: u64,
    /// Feed items offered to each user.
    pub items_per_user: u64,
    /// Fraction of offered items that repeat a post the user was already shown.
    pub repeat_share: f64,
    /// Target FPR of each user's filter.
    pub fpr: f64,
    /// Seed of streams and of the filters' secret.
    pub seed: u64,
}

/// What a dedup run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct DedupReport {
    /// Users.
    pub users: u64,
    /// Items offered in all.
    pub offered: u64,
    /// Offered items the user had not seen.
    pub new_items: u64,
    /// Offered items the user had seen (all must be suppressed: no false negatives).
    pub repeats: u64,
    /// Repeats the filter suppressed.
    pub repeats_suppressed: u64,
    /// New items the filter wrongly suppressed.
    pub wrongly_suppressed: u64,
    /// Expected wrongly suppressed count: Σ over new items of the formula's FPR at that
    /// moment's fill.
    pub expected_wrongly_suppressed: f64,
    /// Heap bytes of all users' filters.
    pub filter_bytes: usize,
    /// Heap bytes of exact `HashSet<u64>`s of the same ids (as measured by the hook).
    pub hashset_bytes: usize,
}

/// Run the dedup simulation. `heap_bytes` runs the closure it is given and returns the net
/// heap bytes it allocated (install a counting global allocator to provide it).
pub fn run(
    cfg: &DedupConfig,
    mut heap_bytes: impl FnMut(&mut dyn FnMut()) -> usize,
) -> Result<DedupReport, Error> {
    if !(0.0..1.0).contains(&cfg.repeat_share) || cfg.users == 0 || cfg.items_per_user == 0 {
        return Err(Error::invalid(
            "dedup",
            "needs users, items and a repeat share in [0, 1)",
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut secret = [0u8; 16];
    rng.fill(&mut secret);
    let scheme = SipScheme::from_secret(secret);
    let distinct = ((cfg.items_per_user as f64 * (1.0 - cfg.repeat_share)).ceil() as u64).max(1);

    let mut report = DedupReport {
        users: cfg.users,
        offered: cfg.users * cfg.items_per_user,
        new_items: 0,
        repeats: 0,
        repeats_suppressed: 0,
        wrongly_suppressed: 0,
        expected_wrongly_suppressed: 0.0,
        filter_bytes: 0,
        hashset_bytes: 0,
    };
    let mut streams: Vec<Vec<u64>> = Vec::with_capacity(cfg.users as usize);
    for _ in 0..cfg.users {
        let mut filter = BloomFilter::with_fpr_and_scheme(distinct, cfg.fpr, scheme.clone())?;
        let mut shown: Vec<u64> = Vec::new();
        let mut shown_set = HashSet::new();
        let mut stream = Vec::with_capacity(cfg.items_per_user as usize);
        for _ in 0..cfg.items_per_user {
            let repeat = !shown.is_empty() && rng.random_bool(cfg.repeat_share);
            let id = if repeat {
                shown[rng.random_range(0..shown.len())]
            } else {
                rng.random::<u64>()
            };
            stream.push(id);
            let seen = shown_set.contains(&id);
            let fpr_now = math::classic_fpr(filter.bits(), filter.hashes(), filter.len());
            // One call per offered item: the filter inserts the id only if it has not seen
            // it, and says which (a repeat never touches the filter).
            let maybe = !filter.insert_unique_bytes(&id.to_le_bytes())?;
            if seen {
                report.repeats += 1;
                report.repeats_suppressed += u64::from(maybe);
            } else {
                report.new_items += 1;
                report.expected_wrongly_suppressed += fpr_now;
                if maybe {
                    report.wrongly_suppressed += 1;
                } else {
                    shown.push(id);
                    shown_set.insert(id);
                }
            }
        }
        report.filter_bytes += filter.size_in_bytes();
        streams.push(stream);
    }
    // The exact alternative: one HashSet per user of the ids shown to them.
    let mut sets: Vec<HashSet<u64>> = Vec::new();
    report.hashset_bytes = heap_bytes(&mut || {
        sets = streams
            .iter()
            .map(|s| s.iter().copied().collect())
            .collect();
    });
    drop(sets);
    Ok(report)
}

/// Seed 002's headline comparison: `n` 16-character string keys in a `HashSet<String>` against
/// a classic filter at `fpr`. Returns `(hashset_bytes, filter_bytes)`.
pub fn set_vs_filter(
    n: u64,
    fpr: f64,
    mut heap_bytes: impl FnMut(&mut dyn FnMut()) -> usize,
) -> Result<(usize, usize), Error> {
    let key = |i: u64| format!("user:{i:011}"); // 16 characters
    let mut set: HashSet<String> = HashSet::new();
    let set_bytes = heap_bytes(&mut || {
        set = (0..n).map(key).collect();
    });
    let mut f = BloomFilter::with_fpr(n, fpr)?;
    for i in 0..n {
        f.insert(key(i).as_str());
    }
    assert!(set.iter().all(|k| f.might_contain(k.as_str())));
    Ok((set_bytes, f.size_in_bytes()))
}

/// Render a report as a Markdown table.
pub fn markdown(cfg: &DedupConfig, r: &DedupReport) -> String {
    let header = [
        "users",
        "items offered",
        "new",
        "repeats suppressed",
        "wrongly suppressed (measured)",
        "expected",
        "rate vs target",
        "filter memory",
        "HashSet memory",
        "ratio",
    ];
    let row = [
        r.users.to_string(),
        r.offered.to_string(),
        r.new_items.to_string(),
        format!("{} of {}", r.repeats_suppressed, r.repeats),
        r.wrongly_suppressed.to_string(),
        format!("{:.1}", r.expected_wrongly_suppressed),
        format!(
            "{:.4} % vs {:.2} %",
            100.0 * r.wrongly_suppressed as f64 / r.new_items as f64,
            100.0 * cfg.fpr
        ),
        format!("{:.1} KiB", r.filter_bytes as f64 / 1024.0),
        format!("{:.1} KiB", r.hashset_bytes as f64 / 1024.0),
        format!("{:.1}×", r.hashset_bytes as f64 / r.filter_bytes as f64),
    ];
    crate::table::markdown_table(header, [row])
}
