//! The expandable filter through the shared conformance suite, plus its own tests: the FPR
//! and false negatives at every doubling, deletes against a model multiset, the byte format's
//! robustness and the keyed scheme.

use std::collections::HashMap;

use bloomlab_conformance as conf;
use bloomlab_core::{Error, Filter};
use bloomlab_expandable::{ExpandableFilter, MAX_COPIES, MAX_LOAD, math};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn no_false_negatives_for_every_key_shape() {
    // No size hint: every shape grows the filter from 2 buckets.
    conf::check_no_false_negatives(|_| ExpandableFilter::new(0.01).unwrap(), 50_000);
}

/// Grow from `start` through `end` keys; at every doubling check every key inserted so far
/// and measure the FPR on fresh non-members against the formula (5σ) and the bound.
fn grow_and_check(start: u64, end: u64, p: f64, seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut f = ExpandableFilter::with_fpr(start, p).unwrap();
    let mut keys = Vec::new();
    let mut level = f.level();
    let probes = 100_000u64;
    let mut checked = 0;
    while (keys.len() as u64) < end {
        let k = conf::member_key(&mut rng);
        f.insert(&k).unwrap();
        keys.push(k);
        if f.level() == level && keys.len() as u64 != end {
            continue;
        }
        level = f.level();
        checked += 1;
        let lost = keys.iter().filter(|k| !f.might_contain(*k)).count();
        assert_eq!(
            lost,
            0,
            "p={p}: {lost} false negatives at {} keys",
            keys.len()
        );
        let e = f.expected_fpr();
        assert!(
            e <= f.fpr_bound() && f.fpr_bound() <= p,
            "{e} {}",
            f.fpr_bound()
        );
        let pos = (0..probes)
            .filter(|_| f.might_contain(&conf::non_member_key(&mut rng)))
            .count() as f64;
        let allowed = conf::Z_BOUND * conf::binomial_sigma(probes, e);
        assert!(
            (pos - probes as f64 * e).abs() <= allowed,
            "p={p} at {} keys: {pos} positives, formula {e}",
            keys.len()
        );
        assert!(
            pos <= probes as f64 * p + allowed,
            "p={p}: {pos} over the target"
        );
    }
    assert!(checked >= 8, "{checked} doublings checked");
    assert_eq!(f.len(), end);
    assert!(f.load() <= MAX_LOAD);
}

#[test]
fn fpr_below_target_and_no_false_negatives_at_every_doubling() {
    grow_and_check(1_000, 300_000, 0.01, 1);
    grow_and_check(1_000, 300_000, 0.001, 2);
    grow_and_check(1, 20_000, 0.03, 3);
}

#[test]
fn the_expansion_rule_keeps_the_prefix() {
    // Fingerprint widths follow the schedule, and the slot holds the widest entry.
    let mut f = ExpandableFilter::new(0.01).unwrap();
    assert_eq!((f.level(), f.num_buckets()), (1, 2));
    for i in 0..100_000u64 {
        f.insert(&i).unwrap();
        assert_eq!(
            f.fingerprint_bits(),
            math::new_entry_bits(0.01, f.expansions()).unwrap()
        );
        assert!(f.slot_bits() >= f.fingerprint_bits() + 2);
        assert!(f.slot_bits() <= math::widest_entry_bits(0.01, f.expansions()).unwrap() + 2);
    }
    // 100 000 keys at 90 % need 27 778 buckets; the buckets below 2^k fill first, so the
    // steps (2^14 / 16 = 1024 buckets) come earlier and the round of level 14 has ended.
    assert_eq!(f.level(), 15);
    assert!(
        (32_768..=36_000).contains(&f.num_buckets()),
        "{}",
        f.num_buckets()
    );
    assert_eq!((f.num_buckets() - 32_768) % 2048, 0);
}

#[test]
fn the_load_stays_high_through_the_growth() {
    // Grown in steps of 1/16 of 2^k, the load never falls to the half of a doubling table:
    // past the first round it stays above 0.65 (steps come early when the buckets below 2^k,
    // which take every alternate, pass LOWER_LOAD), its mean over 8 log-spaced points per
    // doubling is above 0.75 (a doubling table: about 0.66), and no key is lost.
    let mut f = ExpandableFilter::with_fpr(1000, 0.01).unwrap();
    let (mut lowest, mut sum, mut points, mut next) = (1.0f64, 0.0, 0u32, 2_000.0f64);
    for i in 0..300_000u64 {
        f.insert(&i).unwrap();
        if i >= 2_000 {
            lowest = lowest.min(f.load());
        }
        if (i + 1) as f64 >= next {
            sum += f.load();
            points += 1;
            next *= 2f64.powf(1.0 / 8.0);
        }
    }
    let mean = sum / f64::from(points);
    println!("lowest {lowest}, mean {mean} over {points} points");
    assert!(lowest >= 0.65, "lowest load {lowest}");
    assert!(mean >= 0.75, "mean load {mean}");
    assert!(f.load() <= MAX_LOAD);
    assert!((0..300_000u64).all(|i| f.might_contain(&i)));
}

#[test]
fn model_based_inserts_removes_and_queries() {
    // A multiset model: every key it holds must test positive after every operation; removes
    // of keys it holds must succeed; removes of keys that test negative change nothing.
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let mut f = ExpandableFilter::new(0.01).unwrap();
    let mut model: HashMap<u64, u32> = HashMap::new();
    let (mut refused, mut copy_refusals) = (0, 0);
    for op in 0..400_000u32 {
        let key = rng.random_range(0..60_000u64);
        match rng.random_range(0..10) {
            0..=5 => match f.insert(&key) {
                Ok(()) => *model.entry(key).or_default() += 1,
                Err(Error::TooManyCopies(c)) => {
                    // A repeat with 8 copies or no free slot in its buckets: refused,
                    // unchanged, and the key tests positive.
                    assert!((1..=MAX_COPIES).contains(&c) && f.copies(&key) == c, "{c}");
                    assert!(f.might_contain(&key));
                    copy_refusals += 1;
                }
                Err(e) => panic!("op {op}: {e}"),
            },
            6..=7 => {
                if let Some(c) = model.get_mut(&key) {
                    assert!(
                        f.remove(&key),
                        "op {op}: model holds {key} but remove refused"
                    );
                    *c -= 1;
                    if *c == 0 {
                        model.remove(&key);
                    }
                } else if !f.might_contain(&key) {
                    // (The whole filter compared for the first few; its count for the rest.)
                    let before = (refused < 200).then(|| f.clone());
                    let len = f.len();
                    assert!(!f.remove(&key));
                    assert_eq!(f.len(), len);
                    if let Some(b) = before {
                        assert_eq!(f, b);
                    }
                    refused += 1;
                }
            }
            _ => {
                if model.contains_key(&key) {
                    assert!(f.might_contain(&key), "op {op}: false negative for {key}");
                }
            }
        }
        if op % 50_000 == 0 {
            assert!(model.keys().all(|k| f.might_contain(k)), "op {op}");
        }
    }
    assert!(model.keys().all(|k| f.might_contain(k)));
    assert_eq!(f.len(), model.values().map(|&c| u64::from(c)).sum::<u64>());
    assert!(refused > 1000, "{refused}");
    println!("{copy_refusals} inserts refused as too many copies");
}

#[test]
fn removing_never_inserted_negative_keys_changes_nothing() {
    let mut f = ExpandableFilter::new(0.01).unwrap();
    for i in 0..50_000u64 {
        f.insert(&i).unwrap();
    }
    let before = f.clone();
    let mut refused = 0;
    for i in 1_000_000..1_100_000u64 {
        if !f.might_contain(&i) {
            assert!(!f.remove(&i));
            refused += 1;
        }
    }
    assert_eq!(f, before);
    assert!(refused > 95_000);
    assert!((0..50_000u64).all(|i| f.might_contain(&i)));
    // A key inserted twice stays after one delete.
    f.insert("twice").unwrap();
    f.insert("twice").unwrap();
    assert!(f.remove("twice"));
    assert!(f.might_contain("twice"));
}

/// A filter at 1 % that starts at `start` keys, after the keys `0..n` were inserted and each
/// removed again (every removal finds its key).
fn emptied_by_removals(start: u64, n: u64) -> ExpandableFilter {
    let mut f = ExpandableFilter::with_fpr(start, 0.01).unwrap();
    for i in 0..n {
        f.insert(&i).unwrap();
    }
    for i in 0..n {
        assert!(f.remove(&i), "key {i}");
    }
    f
}

#[test]
fn deleting_every_key_empties_the_filter() {
    let f = emptied_by_removals(10, 30_000);
    assert_eq!(f.len(), 0);
    // Copies of zero-bit entries made by doublings may remain; nothing else does.
    assert!(f.expected_fpr() < 1e-3, "{}", f.expected_fpr());
}

#[test]
fn invalid_parameters_are_typed_errors() {
    conf::check_invalid_parameters(ExpandableFilter::with_fpr);
    assert!(matches!(
        ExpandableFilter::new(1e-12),
        Err(Error::SizeOverflow(_))
    ));
}

#[test]
fn byte_format_round_trips() {
    let f = conf::filled(ExpandableFilter::new(0.01).unwrap(), 20_000, 51);
    conf::check_bytes_round_trip(&f, ExpandableFilter::to_bytes, ExpandableFilter::from_bytes);
    let e = ExpandableFilter::new(0.001).unwrap();
    conf::check_bytes_round_trip(&e, ExpandableFilter::to_bytes, ExpandableFilter::from_bytes);
}

#[test]
fn damaged_bytes_never_panic_and_never_decode_invalid() {
    let f = conf::filled(ExpandableFilter::new(0.01).unwrap(), 600, 54);
    let accepted = conf::check_decode_robustness(
        &f.to_bytes(),
        ExpandableFilter::from_bytes,
        ExpandableFilter::to_bytes,
        |g: &ExpandableFilter| {
            assert!(g.load() <= 1.0);
            assert!(g.expected_fpr() <= 1.0);
            assert_eq!(
                g.fingerprint_bits(),
                math::new_entry_bits(g.target(), g.expansions()).unwrap()
            );
        },
        true,
        6_000,
        3,
    );
    println!("accepted damaged inputs (each verified canonical and valid): {accepted}");
}

#[test]
fn hostile_headers_are_refused_cheaply() {
    let f = conf::filled(ExpandableFilter::new(0.01).unwrap(), 100, 5);
    let bytes = f.to_bytes();
    // Payload offsets: count 0, capacity 8, target 16, k0 24, k 25, W 26, F 27, split 28,
    // stash length 36.
    let edits: [(usize, &[u8]); 8] = [
        (25, &[40]),                   // level 2^40 with a tiny table: length mismatch
        (25, &[200]),                  // level past MAX_LEVEL
        (26, &[31]),                   // slot width wider than any entry can be
        (27, &[9]),                    // fingerprint width off the schedule
        (28, &[0xff; 8]),              // split past 2^k
        (28, &[1]),                    // one more split bucket than the table holds
        (36, &[0xff; 8]),              // stash length of 2^64 − 1
        (16, &f64::NAN.to_le_bytes()), // target FPR NaN
    ];
    for (at, v) in edits {
        let mut b = bytes.clone();
        b[32 + at..32 + at + v.len()].copy_from_slice(v);
        bloomlab_core::format::reseal(&mut b);
        let t = std::time::Instant::now();
        assert!(
            matches!(ExpandableFilter::from_bytes(&b), Err(Error::Decode(_))),
            "{at}"
        );
        let bound = conf::timing::scaled(std::time::Duration::from_secs(1));
        assert!(
            t.elapsed() < bound,
            "{at}: {:?} (bound {bound:?})",
            t.elapsed()
        );
    }
}

#[test]
fn foreign_bytes_and_schemes_are_refused() {
    let f = conf::filled(ExpandableFilter::new(0.01).unwrap(), 1_000, 55);
    let mut bytes = f.to_bytes();
    bytes[7] = 2; // claim the keyed SipHash scheme
    bloomlab_core::format::reseal(&mut bytes);
    assert!(matches!(
        ExpandableFilter::from_bytes(&bytes),
        Err(Error::Decode(
            bloomlab_core::DecodeError::SchemeMismatch { .. }
        ))
    ));
    assert!(ExpandableFilter::from_bytes(b"").is_err());
}

#[test]
fn works_behind_dyn_removable_filter() {
    let f = ExpandableFilter::new(0.01).unwrap();
    let boxed = conf::check_behind_dyn_removable(Box::new(f), bloomlab_core::Variant::Expandable);
    assert_eq!(boxed.params().hashes, 12);
}

#[test]
fn keyed_scheme_grows_and_round_trips_only_with_its_secret() {
    let make = |s| ExpandableFilter::with_fpr_and_scheme(1, 0.01, s).unwrap();
    let f = conf::check_keyed_round_trip_of!(
        ExpandableFilter,
        bloomlab_keyed::Sip64Scheme,
        make,
        20_000
    );
    assert!(f.expansions() >= 10);
    let probes = 100_000u64;
    let pos = (1u64 << 50..(1u64 << 50) + probes)
        .filter(|i| f.might_contain(i))
        .count() as f64;
    let e = f.expected_fpr();
    assert!((pos - probes as f64 * e).abs() <= conf::Z_BOUND * conf::binomial_sigma(probes, e));
}

#[test]
fn copies_of_one_key_stop_at_four_and_grow_nothing() {
    let mut f = ExpandableFilter::with_fpr(1000, 0.01).unwrap();
    let (level, bytes) = (f.level(), f.size_in_bytes());
    let mut refused = 0;
    for _ in 0..100 {
        match f.insert("same") {
            Ok(()) => {}
            Err(Error::TooManyCopies(MAX_COPIES)) => refused += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(refused, 100 - MAX_COPIES);
    assert_eq!(
        f.level(),
        level,
        "copies of one key must not grow the table"
    );
    // The copies sit in its buckets; the stash takes none.
    assert_eq!((f.copies("same"), f.stash_len()), (MAX_COPIES, 0));
    assert_eq!(f.size_in_bytes(), bytes);
    for i in 0..MAX_COPIES {
        assert!(f.might_contain("same"), "{i}");
        assert!(f.remove("same"), "{i}");
    }
    assert!(!f.remove("same"));
    assert_eq!((f.len(), f.stash_len()), (0, 0));
}

#[test]
fn standard_suite_growing_from_an_eighth() {
    // The suite every variant passes, each filter starting at n/8 and doubling three times
    // to hold its n: no false negatives for any key shape, the FPR within 5σ of the formula at
    // 0.1 %, 1 % and 3 %, typed errors for invalid parameters.
    conf::check_standard_suite(
        |n, p| ExpandableFilter::with_fpr(n.div_ceil(8), p),
        [61, 62, 63],
    );
}

#[test]
fn an_entry_flagged_in_a_split_image_is_refused() {
    // Alternates lie below 2^k, so a flagged slot in a bucket at or past 2^k cannot come from
    // an insert; neither can a flagged code too short to have an alternate.
    let mut f = ExpandableFilter::with_fpr(1000, 0.01).unwrap();
    for i in 0..600u64 {
        f.insert(&i).unwrap();
    }
    let (k, w) = (f.level(), f.slot_bits());
    assert!(f.split_buckets() > 0 && f.stash_len() == 0);
    let upper = (1u64 << k..f.num_buckets())
        .flat_map(|b| (0..4).map(move |s| (b, s)))
        .find(|&(b, s)| f.table().get(b, s) != 0)
        .expect("an entry in a split image");
    let bytes = f.to_bytes();
    let table_at = 32 + 44;
    let flip = |bytes: &[u8], b: u64, s: u32| {
        let bit = (4 * b + u64::from(s)) * u64::from(w) + u64::from(w) - 1;
        let mut out = bytes.to_vec();
        out[table_at + (bit / 8) as usize] ^= 1 << (bit % 8);
        bloomlab_core::format::reseal(&mut out);
        out
    };
    assert!(ExpandableFilter::from_bytes(&bytes).is_ok());
    let b = flip(&bytes, upper.0, upper.1);
    assert!(matches!(
        ExpandableFilter::from_bytes(&b),
        Err(Error::Decode(_))
    ));
    // A void (code 1) is too short to move: flagged, it is refused too.
    let mut g = ExpandableFilter::with_fpr(1000, 0.01).unwrap();
    g.insert(&1u64).unwrap();
    let (b0, s0) = (0..g.num_buckets())
        .flat_map(|b| (0..4).map(move |s| (b, s)))
        .find(|&(b, s)| g.table().get(b, s) != 0)
        .unwrap();
    let mut bytes = g.to_bytes();
    let bit = (4 * b0 + u64::from(s0)) * u64::from(w);
    // Overwrite the code with 1 (a void) and set the flag.
    for i in 0..u64::from(w) {
        let at = table_at + ((bit + i) / 8) as usize;
        let m = 1u8 << ((bit + i) % 8);
        let on = i == 0 || i == u64::from(w) - 1;
        bytes[at] = if on { bytes[at] | m } else { bytes[at] & !m };
    }
    bloomlab_core::format::reseal(&mut bytes);
    assert!(matches!(
        ExpandableFilter::from_bytes(&bytes),
        Err(Error::Decode(_))
    ));
}

#[test]
fn a_filter_emptied_by_removals_grows_where_a_fresh_one_does() {
    // Growth is decided by counts (entries, and entries in the buckets not yet split): keys
    // inserted and removed again must leave none of them behind.
    let mut used = emptied_by_removals(1_000, 600);
    let mut fresh = ExpandableFilter::with_fpr(1_000, 0.01).unwrap();
    let start = fresh.num_buckets();
    assert_eq!(used.num_buckets(), start);
    for i in 1_000_000..1_004_000u64 {
        used.insert(&i).unwrap();
        fresh.insert(&i).unwrap();
        assert_eq!(
            (used.level(), used.num_buckets()),
            (fresh.level(), fresh.num_buckets()),
            "after key {i}"
        );
    }
    assert!(fresh.num_buckets() > start, "the inserts grew the table");
}

#[test]
fn the_fingerprint_schedule_is_formula_3() {
    // F_i and the spent bound B of (3) (`math`'s module docs), worked out apart with Python's
    // floats: c_i = 4·(1.8 for i = 0, else 0.9), reserve ε·4/(i + 5), F_i the smallest width
    // from 8 with B + c_i·2^−F_i + reserve ≤ ε.
    let widths = |target: f64| -> Vec<u32> {
        (0..11)
            .map(|i| math::new_entry_bits(target, i).unwrap())
            .collect()
    };
    assert_eq!(widths(0.01), [12, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14]);
    assert_eq!(widths(0.001), [16, 14, 16, 15, 16, 17, 16, 17, 17, 17, 18]);
    assert!((math::fpr_bound(0.01, 10).unwrap() - 0.007_250_976_562_5).abs() < 1e-15);
    assert!((math::fpr_bound(0.001, 10).unwrap() - 0.000_727_844_238_281_25).abs() < 1e-15);
}

bloomlab_conformance::declaration_test!(bloomlab_expandable::ExpandableFilter, Expandable, fill: load);

/// The former names of the sizing constructors, kept for one release, build the same filters.
#[test]
#[allow(deprecated)]
fn the_former_constructor_names_build_the_same_filters() {
    assert_eq!(
        ExpandableFilter::with_start(1_000, 0.01),
        ExpandableFilter::with_fpr(1_000, 0.01)
    );
    assert_eq!(
        ExpandableFilter::with_start_and_scheme(1_000, 0.01, bloomlab_core::Xxh3Scheme),
        ExpandableFilter::with_fpr_and_scheme(1_000, 0.01, bloomlab_core::Xxh3Scheme)
    );
    assert!(ExpandableFilter::with_start(0, 0.01).is_err());
}

#[test]
fn the_reported_bytes_hold_the_table_as_it_grows() {
    // The bytes a filter reports hold at least its table's words, which hold its table bits.
    let mut f = ExpandableFilter::with_fpr(100, 0.01).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for i in 1..=4_000u32 {
        f.insert(&conf::member_key(&mut rng)).unwrap();
        if i % 500 == 0 {
            let table = f.table().size_in_bytes();
            assert!(table as u64 * 8 >= f.params().table_bits, "{i}");
            assert!(f.params().table_bits > 0);
            assert!(f.size_in_bytes() >= table, "{i}");
        }
    }
    assert!(f.level() > ExpandableFilter::with_fpr(100, 0.01).unwrap().level());
}
