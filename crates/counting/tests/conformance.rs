//! The counting filter through the shared conformance suite, a model-based test against a
//! multiset, and the properties seed 000 asks of it.

use std::collections::HashMap;

use bloomlab_classic::BloomFilter;
use bloomlab_conformance as conf;
use bloomlab_core::{Error, Filter, HashScheme, RemovableFilter, Xxh3Scheme};
use bloomlab_counting::{CountingBloomFilter, STICKY};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

conf::basic_suite!(CountingBloomFilter);

#[test]
fn fpr_within_binomial_bound_at_three_targets() {
    conf::check_fpr_near_targets(
        |n, p| CountingBloomFilter::with_fpr(n, p).unwrap(),
        100_000,
        0.05,
    );
}

#[test]
fn costs_four_times_the_classic_filter() {
    for p in [0.001, 0.01, 0.03] {
        let c = CountingBloomFilter::with_fpr(1_000_000, p).unwrap();
        let b = BloomFilter::with_fpr(1_000_000, p).unwrap();
        assert_eq!((c.counters(), c.hashes()), (b.bits(), b.hashes()));
        // 4 bits per counter, rounded up to a whole byte; the classic array to whole words.
        assert_eq!(c.size_in_bytes() as u64, b.bits().div_ceil(2));
        assert_eq!(c.params().table_bits, 4 * b.params().table_bits);
        // The parameters the trait reports (the harness's and the inspector's) are the
        // filter's own: as many probes as the classic filter of the same target.
        assert_eq!(c.params().hashes, b.params().hashes);
        assert_eq!(c.params().hashes, c.hashes());
    }
}

/// Multiset model: live keys with multiplicities, the true count behind every counter, and
/// which counters have ever reached 15.
struct Model {
    live: HashMap<u64, u32>,
    bag: Vec<u64>, // one entry per live occurrence, for uniform removal
    truth: Vec<u32>,
    stuck: Vec<bool>,
    k: u32,
    m: u64,
}

impl Model {
    fn positions(&self, key: u64) -> Vec<u64> {
        // Written from the documented formula, independently of the filter's code and of
        // `KeyHash::positions`: probe i is g_i = h1 + i·h2 (mod 2^64), reduced into 0..m with
        // fastrange ⌊g_i·m / 2^64⌋; the distinct positions get one increment each.
        let h = Xxh3Scheme.hash(&key.to_le_bytes());
        let mut v: Vec<u64> = (0..u64::from(self.k))
            .map(|i| {
                let g = h.h1.wrapping_add(i.wrapping_mul(h.h2));
                ((u128::from(g) * u128::from(self.m)) >> 64) as u64
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    fn insert(&mut self, key: u64) {
        for p in self.positions(key) {
            self.truth[p as usize] += 1;
            if self.truth[p as usize] >= u32::from(STICKY) {
                self.stuck[p as usize] = true;
            }
        }
        *self.live.entry(key).or_insert(0) += 1;
        self.bag.push(key);
    }

    fn remove_at(&mut self, idx: usize) -> u64 {
        let key = self.bag.swap_remove(idx);
        for p in self.positions(key) {
            self.truth[p as usize] -= 1;
        }
        let e = self.live.get_mut(&key).unwrap();
        *e -= 1;
        if *e == 0 {
            self.live.remove(&key);
        }
        key
    }

    fn check(&self, f: &CountingBloomFilter, at: usize) {
        assert_eq!(f.len(), self.bag.len() as u64, "op {at}: len");
        for (i, (&t, &s)) in self.truth.iter().zip(&self.stuck).enumerate() {
            let want = if s { STICKY } else { t as u8 };
            assert_eq!(f.counter(i as u64), Some(want), "op {at}: counter {i}");
        }
        let missing = self.live.keys().filter(|k| !f.might_contain(*k)).count();
        assert_eq!(missing, 0, "op {at}: false negatives");
    }
}

fn run_model(capacity: u64, key_pool: u64, ops: usize, seed: u64) -> (u64, u64, u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut f = CountingBloomFilter::with_fpr(capacity, 0.01).unwrap();
    let mut model = Model {
        live: HashMap::new(),
        bag: Vec::new(),
        truth: vec![0; f.counters() as usize],
        stuck: vec![false; f.counters() as usize],
        k: f.hashes(),
        m: f.counters(),
    };
    let (mut refused, mut removed) = (0u64, 0u64);
    for op in 0..ops {
        // Keep the multiset near its capacity: insert more often below it, remove above it.
        let p_insert = if (model.bag.len() as u64) < capacity {
            0.6
        } else {
            0.4
        };
        if model.bag.is_empty() || rng.random_bool(p_insert) {
            // Keys come from a small pool, so repeats are common.
            let key = rng.random_range(0..key_pool);
            f.insert(&key);
            model.insert(key);
        } else {
            let idx = rng.random_range(0..model.bag.len());
            let key = model.remove_at(idx);
            assert!(f.remove(&key), "op {op}: an inserted key was refused");
            removed += 1;
            // Now and then, try to remove a key the model says is absent: if it tests
            // negative the filter must refuse it and change nothing.
            let absent = key_pool + rng.random_range(0..1_000_000u64);
            if !f.might_contain(&absent) {
                let before = f.clone();
                assert!(!f.remove(&absent), "op {op}: removed a negative key");
                assert_eq!(f, before);
                refused += 1;
            }
        }
        if op % 100_000 == 99_999 {
            model.check(&f, op);
        }
    }
    model.check(&f, ops);
    (removed, refused, f.counter_stats().saturated)
}

#[test]
fn model_based_insert_remove_against_a_multiset() {
    // 10^6 random operations, removing only inserted keys (with repeats): zero false negatives
    // and every counter equal to the model's true count (or 15 once it got there).
    let (removed, refused, _) = run_model(5_000, 8_000, 1_000_000, 42);
    assert!(removed > 400_000, "{removed}");
    assert!(refused > 100_000, "{refused}");
}

#[test]
fn model_based_with_heavy_repeats_reaches_sticky_counters() {
    // A pool smaller than the capacity: keys are held many times over, counters reach 15.
    let (removed, _, saturated) = run_model(2_000, 150, 200_000, 43);
    assert!(removed > 50_000, "{removed}");
    assert!(saturated > 100, "{saturated} sticky counters");
}

#[test]
fn sticky_counters_are_never_decremented() {
    let mut f = CountingBloomFilter::with_fpr(1_000, 0.01).unwrap();
    let h = f.hash_key("hot");
    let mut positions: Vec<u64> = h.positions(f.hashes(), f.counters()).collect();
    positions.sort_unstable();
    positions.dedup();
    for i in 1..=20u8 {
        assert_eq!(f.insert("hot"), i == 1);
        // Insert on a key whose counters are all ≥ 1 still increments (up to 15).
        let want = i.min(STICKY);
        assert!(positions.iter().all(|&p| f.counter(p) == Some(want)));
    }
    let stats = f.counter_stats();
    assert_eq!(stats.saturated, positions.len() as u64);
    assert_eq!(stats.max, STICKY);
    assert_eq!(stats.nonzero, positions.len() as u64);
    assert_eq!(stats.histogram[15], positions.len() as u64);
    assert_eq!(f.saturated_counters(), positions.len() as u64);
    // At design load with distinct keys, stuck counters are essentially impossible.
    assert!(f.expected_saturated_counters() < 1e-9);
    for _ in 0..20 {
        assert!(f.remove("hot"));
    }
    // The counters stay at 15: their true value is unknown, so the key still tests positive.
    assert!(positions.iter().all(|&p| f.counter(p) == Some(STICKY)));
    assert!(f.might_contain("hot"));
    assert_eq!(f.len(), 0);
    // Such leftovers cannot be explained by zero keys: collapsing refuses rather than lying.
    assert!(matches!(f.to_bloom_filter(), Err(Error::Saturated(_))));
}

#[test]
fn removing_a_negative_key_is_refused() {
    let mut f = filled(1_000, 0.01, 5);
    let before = f.clone();
    let mut rng = ChaCha8Rng::seed_from_u64(55);
    let mut refused = 0;
    for _ in 0..1_000 {
        let k = conf::non_member_key(&mut rng);
        if !f.might_contain(&k) {
            assert!(!f.remove(&k));
            refused += 1;
        }
    }
    // Each of the 1000 non-members tests negative with probability 1 − FPR: binomial, 5σ.
    let e = f.expected_fpr();
    assert!(
        refused as f64 >= 1_000.0 * (1.0 - e) - conf::Z_BOUND * conf::binomial_sigma(1_000, e),
        "{refused}"
    );
    assert_eq!(f, before, "refused removals change nothing");
    // Through the trait too.
    let dynf: &mut dyn RemovableFilter = &mut f;
    assert!(!dynf.remove(&"never inserted and negative"));
    assert!(dynf.remove(&conf::member_key(&mut ChaCha8Rng::seed_from_u64(5))));
    assert_eq!(dynf.len(), 999);
}

#[test]
fn clear_empties_every_counter_sticky_ones_included() {
    let mut f = filled(5_000, 0.01, 7);
    for _ in 0..20 {
        f.insert("hot");
    }
    assert!(f.counter_stats().saturated > 0);
    f.clear();
    let fresh = CountingBloomFilter::with_fpr(5_000, 0.01).unwrap();
    assert_eq!(f, fresh);
    assert_eq!(f.to_bytes(), fresh.to_bytes());
    let stats = f.counter_stats();
    assert_eq!((stats.nonzero, stats.saturated, stats.max), (0, 0, 0));
    assert!(f.is_empty() && !f.might_contain("hot") && !f.remove("hot"));
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    assert!((0..5_000).all(|_| !f.might_contain(&conf::member_key(&mut rng))));
    // Usable again: the same keys give the same counters.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..5_000 {
        f.insert(&conf::member_key(&mut rng));
    }
    assert_eq!(f, filled(5_000, 0.01, 7));
}

#[test]
fn remove_then_reinsert_restores_the_counters() {
    let mut f = filled(5_000, 0.01, 6);
    let snapshot = f.clone();
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let keys: Vec<_> = (0..5_000).map(|_| conf::member_key(&mut rng)).collect();
    for k in &keys[..2_500] {
        assert!(f.remove(k));
    }
    assert!(keys[2_500..].iter().all(|k| f.might_contain(k)));
    for k in &keys[..2_500] {
        f.insert(k);
    }
    assert_eq!(f, snapshot);
    for k in &keys {
        assert!(f.remove(k));
    }
    assert!(f.is_empty());
    assert_eq!(f.counter_stats().nonzero, 0, "every counter back to zero");
}

#[test]
fn collapses_to_a_bit_identical_classic_filter() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let keys: Vec<_> = (0..20_000).map(|_| conf::member_key(&mut rng)).collect();
    let extra: Vec<_> = (0..5_000).map(|_| conf::member_key(&mut rng)).collect();
    for (m, k) in [(191_702u64, 7u32), (1_001, 3), (77, 20)] {
        let mut c = CountingBloomFilter::with_counters(m, k).unwrap();
        let mut b = BloomFilter::with_bits(m, k).unwrap();
        for key in keys.iter().take(if m > 10_000 { 20_000 } else { 40 }) {
            c.insert(key);
            b.insert(key);
        }
        // Repeats and removed keys leave no trace in the collapse.
        for key in extra.iter().take(if m > 10_000 { 5_000 } else { 5 }) {
            c.insert(key);
            c.insert(key);
            assert!(c.remove(key));
            assert!(c.remove(key));
        }
        let collapsed = c.to_bloom_filter().unwrap();
        assert_eq!(collapsed.bit_array(), b.bit_array(), "m = {m}, k = {k}");
        assert_eq!(collapsed, b);
    }
    // Sized the same way from (n, p): the same m, k and target.
    let mut c = CountingBloomFilter::with_fpr(10_000, 0.01).unwrap();
    let mut b = BloomFilter::with_fpr(10_000, 0.01).unwrap();
    for key in &keys[..10_000] {
        c.insert(key);
        b.insert(key);
    }
    assert_eq!(c.to_bloom_filter().unwrap(), b);
    assert_eq!(c.current_fpr(), b.current_fpr());
    assert_eq!(c.expected_fpr(), b.expected_fpr());
    assert_eq!(c.estimated_len(), b.estimated_len());
}

#[test]
fn invalid_parameters_are_typed_errors() {
    conf::check_invalid_parameters(CountingBloomFilter::with_fpr);
    let invalid = [(0, 3), (100, 0), (100, 65)];
    conf::check_shape_errors(CountingBloomFilter::with_counters, &invalid, 3);
}

#[test]
fn byte_format_and_serde_round_trip() {
    let f = filled(10_000, 0.01, 21);
    conf::check_round_trips(
        &f,
        CountingBloomFilter::to_bytes,
        CountingBloomFilter::from_bytes,
    );
    // Odd m, sticky counters and no target.
    let mut g = CountingBloomFilter::with_counters(1_001, 3).unwrap();
    for _ in 0..17 {
        g.insert("hot");
    }
    g.insert("cold");
    conf::check_round_trips(
        &g,
        CountingBloomFilter::to_bytes,
        CountingBloomFilter::from_bytes,
    );
    let bytes = g.to_bytes();
    assert_eq!(bytes.len(), 32 + 40 + 501);
    assert_eq!(bytes[6], 3, "variant tag of the counting filter");
    // The unused high nibble of the last byte must be zero.
    let mut bad = bytes.clone();
    *bad.last_mut().unwrap() |= 0x10;
    bloomlab_core::format::reseal(&mut bad);
    assert!(CountingBloomFilter::from_bytes(&bad).is_err());
}

#[test]
fn serde_refuses_invalid_filters() {
    let f = filled(1_000, 0.01, 26);
    let mut v = serde_json::to_value(&f).unwrap();
    v["count"] = 0.into();
    assert!(serde_json::from_value::<CountingBloomFilter>(v).is_err());
    let mut v = serde_json::to_value(&f).unwrap();
    v["counters"].as_array_mut().unwrap().pop();
    assert!(serde_json::from_value::<CountingBloomFilter>(v).is_err());
}

#[test]
fn damaged_bytes_never_panic_and_never_decode_invalid() {
    let f = filled(2_000, 0.01, 23);
    let invariants = |g: &CountingBloomFilter| {
        let exact: u64 = (0..g.counters())
            .map(|i| g.counter(i).unwrap())
            .filter(|&c| c < STICKY)
            .map(u64::from)
            .sum();
        assert!(exact <= g.len().saturating_mul(u64::from(g.hashes())));
        assert!(g.capacity() >= 1 && g.counters() >= 1);
    };
    let accepted = conf::check_decode_robustness(
        &f.to_bytes(),
        CountingBloomFilter::from_bytes,
        CountingBloomFilter::to_bytes,
        invariants,
        true,
        6_000,
        1,
    );
    println!("accepted damaged inputs: {accepted}");
}

#[test]
fn foreign_bytes_are_refused() {
    let f = filled(1_000, 0.01, 25);
    let classic = f.to_bloom_filter().unwrap();
    assert!(matches!(
        CountingBloomFilter::from_bytes(&classic.to_bytes()),
        Err(Error::Decode(
            bloomlab_core::DecodeError::WrongVariant { .. }
        ))
    ));
    let mut bytes = f.to_bytes();
    bytes[7] = 2;
    bloomlab_core::format::reseal(&mut bytes);
    assert!(CountingBloomFilter::from_bytes(&bytes).is_err());
    assert!(CountingBloomFilter::from_bytes(b"").is_err());
}

#[test]
fn works_behind_dyn_filter() {
    let f = CountingBloomFilter::with_fpr(1_000, 0.01).unwrap();
    let mut boxed = conf::check_behind_dyn_removable(Box::new(f), bloomlab_core::Variant::Counting);
    // The generic `remove` of the trait object takes typed keys too.
    assert!(boxed.remove("a") && !boxed.remove("a"));
}

bloomlab_conformance::declaration_test!(bloomlab_counting::CountingBloomFilter, Counting, fill: fill_ratio, estimate: estimated_len);
