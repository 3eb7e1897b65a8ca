//! The cuckoo filter through the shared conformance suite, plus its own tests: fill to
//! failure without losing keys, a model-based test against a multiset, delete semantics and
//! space at every size.

use std::collections::HashMap;

use bloomlab_conformance as conf;
use bloomlab_core::{Error, Filter};
use bloomlab_cuckoo::{BUCKET_SIZE, CuckooFilter, DESIGN_LOAD, MAX_COPIES};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

conf::basic_suite!(CuckooFilter);

#[test]
fn fpr_within_binomial_bound_at_three_targets() {
    let targets = conf::three_targets(31);
    let reports = conf::check_fpr_at(
        |n, p| CuckooFilter::with_fpr(n, p).unwrap(),
        100_000,
        &targets,
    );
    for (r, f_bits) in reports.iter().zip([13, 10, 9]) {
        // At the design load the formula is below the target (8·0.95 slots of 2^f − 1 values).
        assert!(r.expected <= r.target, "{r:?}");
        let want = 1.0 - (1.0 - 1.0 / ((1u64 << f_bits) - 1) as f64).powf(8.0 * 0.95);
        assert!((r.expected / want - 1.0).abs() < 1e-3, "{r:?} vs {want}");
        println!("{r:?}");
    }
}

#[test]
fn fpr_follows_the_load() {
    // Half full: the formula's load term, not only the full-table value, must be right.
    let mut rng = ChaCha8Rng::seed_from_u64(34);
    let mut f = CuckooFilter::with_fpr(200_000, 0.01).unwrap();
    for _ in 0..100_000 {
        f.insert(&conf::member_key(&mut rng)).unwrap();
    }
    let e = f.expected_fpr();
    conf::check_positives_near(|k| f.might_contain(k), 1_000_000, &mut rng, e);
}

/// Fill with fresh keys until the first failure; then keep offering `extra` more keys.
/// Returns (load at first failure, keys accepted, failures).
fn fill_to_failure(f: &mut CuckooFilter, seed: u64, extra: u64) -> (f64, Vec<[u8; 17]>, u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut accepted = Vec::new();
    let mut first = None;
    let mut failures = 0;
    let mut offered_after = 0;
    while offered_after < extra {
        let k = conf::member_key(&mut rng);
        let before = if first.is_none() || failures < 20 {
            Some(f.clone())
        } else {
            None
        };
        match f.insert(&k) {
            Ok(()) => accepted.push(k),
            Err(Error::Full(_)) => {
                failures += 1;
                first.get_or_insert(f.load());
                // The filter is exactly what it was before the failed insert.
                if let Some(b) = before {
                    assert_eq!(*f, b, "a failed insert changed the filter");
                }
            }
            Err(e) => panic!("unexpected error {e}"),
        }
        if first.is_some() {
            offered_after += 1;
        }
    }
    (first.unwrap(), accepted, failures)
}

#[test]
fn fill_to_failure_loses_nothing() {
    for (p, seed) in [(0.01, 1u64), (0.01, 2), (0.03, 3), (0.001, 4), (0.01, 5)] {
        let mut f = CuckooFilter::with_fpr(50_000, p).unwrap();
        let (load, accepted, failures) = fill_to_failure(&mut f, seed, 5_000);
        assert!(
            load >= 0.94,
            "p={p} seed={seed}: first failure at load {load}"
        );
        assert!(failures > 0);
        assert_eq!(f.len(), accepted.len() as u64);
        let lost = accepted.iter().filter(|k| !f.might_contain(*k)).count();
        assert_eq!(lost, 0, "p={p} seed={seed}: {lost} accepted keys lost");
        println!(
            "p={p} seed={seed}: first failure at load {load:.4}, final load {:.4}, \
             {failures} failures of 5000 offered after it, 0 of {} keys lost",
            f.load(),
            accepted.len()
        );
    }
}

#[test]
fn clear_empties_every_slot_and_keeps_the_shape() {
    let fresh = CuckooFilter::with_fpr(10_000, 0.01).unwrap();
    let full = filled(10_000, 0.01, 42);
    let mut f = conf::check_clear(full, &fresh, CuckooFilter::clear, (10_000, 42));
    assert!(f.is_empty() && f.load() == 0.0 && f.table().occupied() == 0);
    assert!((0..f.num_buckets()).all(|b| f.table().bucket_occupancy(b) == 0));
    // Nothing to remove either.
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    assert!((0..10_000).all(|_| !f.remove(&conf::member_key(&mut rng))));
}

#[test]
fn a_key_fits_eight_times_and_never_a_ninth() {
    // Two buckets of 4 slots hold at most 8 copies of one fingerprint; the 9th insert is
    // refused as too many copies (not as full), before any kick.
    let mut f = CuckooFilter::with_fpr(10_000, 0.01).unwrap();
    for _ in 0..8 {
        f.insert("same").unwrap();
    }
    let before = f.clone();
    assert_eq!(f.insert("same"), Err(Error::TooManyCopies(MAX_COPIES)));
    assert_eq!(f, before);
    // A one-bucket table: both of the key's buckets are that bucket, which holds 4 copies.
    let mut one = CuckooFilter::with_fpr(1, 0.01).unwrap();
    assert_eq!(one.num_buckets(), 1);
    for _ in 0..BUCKET_SIZE {
        one.insert("same").unwrap();
    }
    assert_eq!(one.insert("same"), Err(Error::TooManyCopies(BUCKET_SIZE)));
    assert_eq!(one.copies("same"), BUCKET_SIZE);
    for _ in 0..8 {
        assert!(f.remove("same"));
    }
    assert!(!f.might_contain("same"));
    assert!(!f.remove("same"));
    assert!(f.is_empty());
}

#[test]
fn deleting_a_key_inserted_twice_leaves_it_once() {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let mut f = CuckooFilter::with_fpr(40_000, 0.01).unwrap();
    let background: Vec<_> = (0..20_000).map(|_| conf::member_key(&mut rng)).collect();
    for k in &background {
        f.insert(k).unwrap();
    }
    let twice: Vec<_> = (0..5_000).map(|_| conf::member_key(&mut rng)).collect();
    for k in &twice {
        f.insert(k).unwrap();
        f.insert(k).unwrap();
    }
    for k in &twice {
        assert!(f.remove(k));
    }
    assert!(
        twice.iter().all(|k| f.might_contain(k)),
        "present once more"
    );
    for k in &twice {
        assert!(f.remove(k));
    }
    assert_eq!(f.len(), background.len() as u64);
    // Gone now, apart from false positives; a key that tests negative is refused.
    let still = twice.iter().filter(|k| f.might_contain(*k)).count();
    let e = f.expected_fpr() * twice.len() as f64;
    assert!(
        (still as f64) <= e + conf::Z_BOUND * e.sqrt() + 1.0,
        "{still} vs {e}"
    );
    let negatives: Vec<_> = twice.iter().filter(|k| !f.might_contain(*k)).collect();
    // Each removed key tests negative with probability 1 − FPR: binomial, 5σ.
    let fpr = f.expected_fpr();
    let floor = twice.len() as f64 * (1.0 - fpr)
        - conf::Z_BOUND * conf::binomial_sigma(twice.len() as u64, fpr);
    assert!(
        negatives.len() as f64 >= floor,
        "{} < {floor}",
        negatives.len()
    );
    for k in negatives {
        let before = f.len();
        assert!(!f.remove(k));
        assert_eq!(f.len(), before);
    }
    assert!(background.iter().all(|k| f.might_contain(k)));
}

#[test]
fn model_based_million_operations() {
    // Random inserts and deletes against a multiset, cycling between filling to failure and
    // draining. Every key the model holds must test positive; a failed insert changes
    // nothing; removing a key the model lacks is only done when it tests negative (removing a
    // false positive is the documented hazard, not a bug).
    //
    // A filling phase (three inserts to one delete) lasts until FULL_PER_FILL inserts have
    // been refused as full, a draining one (one insert to nine deletes) until the filter is
    // down to DRAIN_TO keys; so every filling phase reaches the full table, and the run is
    // not spent repeating refused inserts at the full table (each walks MAX_KICKS kicks and
    // undoes them), which made it the slowest test by far under emulation.
    const OPS: u64 = 1_000_000;
    const POOL: u64 = 40_000;
    const FULL_PER_FILL: u64 = 200;
    const DRAIN_TO: u64 = 8_000;
    let mut rng = ChaCha8Rng::seed_from_u64(0xc0c0);
    let mut f = CuckooFilter::with_fpr(20_000, 0.01).unwrap();
    let mut model = Model::default();
    let (mut filling, mut fills, mut phase_full) = (true, 0u64, 0u64);
    for op in 0..OPS {
        let insert_bias = if filling { 0.75 } else { 0.1 };
        // Small keys repeat often (duplicates); the rest spread over the pool.
        let key = if rng.random_bool(0.05) {
            rng.random_range(0..50u64)
        } else {
            rng.random_range(0..POOL)
        };
        if rng.random_bool(insert_bias) {
            if model.insert(&mut f, key) {
                phase_full += 1;
                if phase_full == FULL_PER_FILL {
                    (filling, phase_full) = (false, 0);
                    fills += 1;
                }
            }
        } else {
            model.remove(&mut f, key, op);
        }
        if model.held.get(&key).is_some_and(|&c| c > 0) {
            assert!(f.might_contain(&key), "op {op}: false negative for {key}");
        }
        if !filling && f.len() <= DRAIN_TO {
            filling = true;
        }
        if op % 50_000 == 49_999 {
            assert_eq!(f.len(), model.total, "op {op}");
            let missing = model.held.keys().filter(|k| !f.might_contain(*k)).count();
            assert_eq!(missing, 0, "op {op}: {missing} false negatives");
        }
    }
    let Model {
        dup_inserts,
        refused,
        full_events,
        copy_refusals,
        ..
    } = model;
    assert!(
        fills >= 5,
        "the test must reach the full table again and again: {fills} times"
    );
    assert!(
        dup_inserts > 1000 && refused > 1000,
        "{dup_inserts} {refused}"
    );
    println!(
        "{OPS} ops: {fills} fills to failure, {full_events} inserts refused as full, \
         {copy_refusals} as too many copies, {dup_inserts} duplicate inserts, {refused} negative \
         removes refused, 0 false negatives"
    );
}

/// The multiset `model_based_million_operations` holds the filter to, and what it counted.
#[derive(Default)]
struct Model {
    held: HashMap<u64, u32>,
    total: u64,
    dup_inserts: u64,
    refused: u64,
    full_events: u64,
    copy_refusals: u64,
}

impl Model {
    /// Inserts `key` into the filter, and into the model where the filter takes it; a refused
    /// insert changes nothing. Returns whether it was refused as full.
    fn insert(&mut self, f: &mut CuckooFilter, key: u64) -> bool {
        let before_len = f.len();
        match f.insert(&key) {
            Ok(()) => {
                let c = self.held.entry(key).or_insert(0);
                if *c > 0 {
                    self.dup_inserts += 1;
                }
                *c += 1;
                self.total += 1;
                false
            }
            Err(Error::Full(_)) => {
                self.full_events += 1;
                assert_eq!(f.len(), before_len);
                true
            }
            Err(Error::TooManyCopies(c)) => {
                // Refused before any kick: the key's 8 slots hold nothing but its
                // fingerprint (its copies, and those of any key sharing fingerprint and
                // buckets with it).
                self.copy_refusals += 1;
                assert_eq!((c, f.copies(&key)), (MAX_COPIES, MAX_COPIES));
                assert!(f.might_contain(&key));
                assert_eq!(f.len(), before_len);
                false
            }
            Err(e) => panic!("{e}"),
        }
    }

    /// Removes `key` where the model holds it (the filter must take the remove); a key the
    /// model lacks is only removed where it tests negative (and must be refused).
    fn remove(&mut self, f: &mut CuckooFilter, key: u64, op: u64) {
        match self.held.get_mut(&key) {
            Some(c) => {
                assert!(
                    f.remove(&key),
                    "op {op}: model holds {key} but remove refused"
                );
                *c -= 1;
                self.total -= 1;
                if *c == 0 {
                    self.held.remove(&key);
                }
            }
            None => {
                if !f.might_contain(&key) {
                    assert!(!f.remove(&key));
                    self.refused += 1;
                }
            }
        }
    }
}

#[test]
fn bits_per_item_at_every_n() {
    // Table bits per item = f·4·ceil(n/3.8)/n ≤ f/0.95 + 4f/n (one bucket of rounding); the
    // heap adds < 64 bits of word rounding and one 64-bit padding word. Checked for every n up to 5000 and on a
    // geometric grid to 10^7.
    let mut ns: Vec<u64> = (1..=5_000).collect();
    let mut n = 5_000f64;
    while n < 1e7 {
        n *= 1.07;
        ns.push(n as u64);
    }
    ns.push(10_000_000);
    for (p, f_bits) in [(0.001, 13u32), (0.01, 10), (0.03, 9)] {
        let formula = bloomlab_cuckoo::math::cuckoo_bits_per_item(f_bits, DESIGN_LOAD);
        for &n in &ns {
            let f = CuckooFilter::with_fpr(n, p).unwrap();
            assert_eq!(f.fingerprint_bits(), f_bits);
            let nf = n as f64;
            let table = f.table_bits() as f64 / nf;
            let heap = f.size_in_bytes() as f64 * 8.0 / nf;
            let slack = 4.0 * f64::from(f_bits) / nf;
            assert!(
                table <= formula + slack,
                "n={n}: {table} > {formula} + {slack}"
            );
            // Word rounding (< 64 bits) and the one padding word: the slots' bits in whole
            // words, plus one.
            assert!(heap < table + 128.0 / nf, "n={n}: heap {heap}");
            assert_eq!(
                f.size_in_bytes() as u64,
                (f.table_bits().div_ceil(64) + 1) * 8,
                "n={n}"
            );
            assert!(f.slots() as f64 * DESIGN_LOAD >= nf, "n={n}: too few slots");
            if n >= 3_800 {
                assert!(table <= formula * 1.001, "n={n}: {table}");
            }
        }
    }
}

#[test]
fn invalid_parameters_are_typed_errors() {
    conf::check_invalid_parameters(CuckooFilter::with_fpr);
    assert!(matches!(
        CuckooFilter::with_fpr(1000, 1e-12),
        Err(Error::InvalidParameter { .. })
    ));
    for bits in [0, 1, 33, 64] {
        assert!(matches!(
            CuckooFilter::with_fingerprint_bits(1000, bits),
            Err(Error::InvalidParameter { .. })
        ));
    }
    assert_eq!(
        CuckooFilter::with_fingerprint_bits(0, 10),
        Err(Error::ZeroItems)
    );
    assert!(matches!(
        CuckooFilter::with_fingerprint_bits(u64::MAX, 32),
        Err(Error::SizeOverflow(_))
    ));
}

#[test]
fn byte_format_and_serde_round_trip() {
    for (n, p) in [(10_000, 0.01), (3_001, 0.001), (1, 0.3)] {
        let f = filled(n, p, 51);
        conf::check_bytes_round_trip(&f, CuckooFilter::to_bytes, CuckooFilter::from_bytes);
        conf::check_serde_round_trip(&f);
    }
    let mut f = filled(5_000, 0.01, 52);
    f.remove(&[0u8; 17]); // whatever it says, the result must round-trip
    conf::check_bytes_round_trip(&f, CuckooFilter::to_bytes, CuckooFilter::from_bytes);
}

#[test]
fn serde_refuses_an_inconsistent_count() {
    let f = filled(1_000, 0.01, 53);
    let json = serde_json::to_string(&f).unwrap();
    let bad = json.replace("\"count\":1000", "\"count\":999");
    assert_ne!(bad, json);
    assert!(serde_json::from_str::<CuckooFilter>(&bad).is_err());
}

#[test]
fn damaged_bytes_never_panic_and_never_decode_invalid() {
    let f = filled(2_000, 0.01, 54);
    let accepted = conf::check_decode_robustness(
        &f.to_bytes(),
        CuckooFilter::from_bytes,
        CuckooFilter::to_bytes,
        |g: &CuckooFilter| {
            assert_eq!(g.len(), g.table().occupied());
            assert!(g.load() <= 1.0);
            assert!(g.capacity() >= 1);
        },
        true,
        6_000,
        3,
    );
    println!("accepted damaged inputs (each verified canonical and valid): {accepted}");
}

#[test]
fn scheme_and_foreign_bytes_are_refused() {
    let f = filled(1_000, 0.01, 55);
    let classic = bloomlab_classic::BloomFilter::with_fpr(100, 0.01).unwrap();
    conf::check_scheme_and_foreign_refused(
        &f.to_bytes(),
        CuckooFilter::from_bytes,
        Some(&classic.to_bytes()),
    );
}

#[test]
fn works_behind_dyn_removable_filter() {
    let f = CuckooFilter::with_fpr(1_000, 0.01).unwrap();
    let boxed = conf::check_behind_dyn_removable(Box::new(f), bloomlab_core::Variant::Cuckoo);
    assert_eq!(boxed.params().hashes, 10);
}

#[test]
fn keyed_scheme_round_trips_only_with_its_secret() {
    let make = |s| CuckooFilter::with_fpr_and_scheme(5_000, 0.01, s).unwrap();
    conf::check_keyed_round_trip_of!(CuckooFilter, bloomlab_keyed::SipScheme, make, 5_000);
}

bloomlab_conformance::declaration_test!(bloomlab_cuckoo::CuckooFilter, Cuckoo, fill: load);

#[test]
fn a_filter_is_empty_exactly_while_it_holds_no_fingerprint() {
    let mut f = CuckooFilter::with_fpr(1_000, 0.01).unwrap();
    assert!(f.is_empty());
    f.insert("a").unwrap();
    assert!(!f.is_empty());
    assert_eq!(f.len(), 1);
    f.insert("b").unwrap();
    assert!(f.remove("a"));
    assert!(!f.is_empty());
    assert!(f.remove("b"));
    assert!(f.is_empty());
    assert_eq!(f.len(), 0);
}
