//! Ribbon: no false negatives for every n, FPR and space against the formulas, construction
//! failures against the stated probability, the byte format, the view and hostile input.

use bloomlab_conformance::{self as conf, KeyShape, Z_BOUND, check_binomial};
use bloomlab_core::error::{DecodeError, Error};
use bloomlab_core::format;
use bloomlab_core::hash::Xxh3Scheme;
use bloomlab_core::{Filter, Variant};
use bloomlab_ribbon::band::Banding;
use bloomlab_ribbon::{
    Layout, MAX_SEEDS, RibbonFilter, RibbonView, Row, SEED_SUCCESS, SINGLE_LOOP_UP_TO, WIDTH,
    hash_in, num_slots, result_bits_for, row_in,
};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn members(n: u64, seed: u64) -> Vec<[u8; 17]> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| conf::member_key(&mut rng)).collect()
}

#[test]
fn no_false_negatives_for_every_n_and_key_shape() {
    for n in [0u64, 1, 2, 63, 64, 65, 1000, 1_000_000] {
        for shape in KeyShape::ALL {
            // 1 KiB keys: 10^5 of them (100 MiB) exercise the same path as 10^6 would.
            let count = if shape == KeyShape::Large {
                n.min(100_000)
            } else {
                n
            };
            let keys = shape.keys(count, 0x5eed);
            let f = RibbonFilter::build(&keys, 0.01).unwrap();
            assert_eq!(f.len(), count);
            let missing = keys.iter().filter(|k| !f.might_contain(*k)).count();
            assert_eq!(
                missing, 0,
                "{shape:?} n = {count}: {missing} false negatives"
            );
        }
    }
}

#[test]
fn an_empty_set_answers_no_to_everything() {
    let f = RibbonFilter::build(Vec::<u32>::new(), 0.01).unwrap();
    assert_eq!((f.num_slots(), f.len(), f.expected_fpr()), (0, 0, 0.0));
    assert!((0..10_000u32).all(|i| !f.might_contain(&i)));
    assert_eq!(Filter::size_in_bytes(&f), 0);
    assert_eq!(f.bits_per_item(), f64::INFINITY);
}

/// At 10^6 keys and each target: the measured ε is within 5σ of 2^-r, and the space is at
/// most 1.08 · log2(1/ε) bits per key with ε the measured rate.
#[test]
fn fpr_and_space_match_the_formulas() {
    let n = 1_000_000;
    let keys = members(n, 1);
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let probes = 1_000_000u64;
    let non_members: Vec<[u8; 17]> = (0..probes)
        .map(|_| conf::non_member_key(&mut rng))
        .collect();
    for (p, r) in [(0.001, 10), (0.01, 7), (0.03, 6)] {
        let f = RibbonFilter::build(&keys, p).unwrap();
        assert_eq!(f.result_bits(), r);
        let e = f.expected_fpr();
        assert_eq!(e, (-(r as f64)).exp2());
        let fp = non_members.iter().filter(|k| f.might_contain(*k)).count() as u64;
        check_binomial(fp, probes, e, &format!("p = {p}"));
        let fp = fp as f64;
        let measured = fp / probes as f64;
        let bpi = f.bits_per_item();
        assert!(
            bpi <= 1.08 * (1.0 / measured).log2(),
            "p = {p}: {bpi:.3} bits/key vs log2(1/ε) = {:.3}",
            (1.0 / measured).log2()
        );
    }
}

/// The sizing promises each seed succeeds with probability ≥ SEED_SUCCESS. Over 1000 seeds on
/// one key set of 10^4 keys the number of failed seeds must be within 5σ of the binomial
/// count at the promised rate (one-sided: fewer failures is what a correct sizing gives).
#[test]
fn construction_failures_over_1000_seeds_are_within_the_stated_probability() {
    let n = 10_000u64;
    let keys = members(n, 3);
    let m = num_slots(n).unwrap();
    let mut band = Banding::<Row>::new(m as usize).unwrap();
    let seeds = 1000u32;
    for layout in [Layout::Fmix128, Layout::OneHash] {
        let hashes: Vec<_> = keys
            .iter()
            .map(|k| hash_in(layout, &Xxh3Scheme, &k[..]))
            .collect();
        let mut failures = 0u32;
        for seed in 0..seeds {
            band.clear();
            if !hashes.iter().all(|&h| {
                let (s, c, v) = row_in::<Row>(layout, h, seed, m - WIDTH + 1);
                band.add(s, c, v)
            }) {
                failures += 1;
            }
        }
        let q = 1.0 - SEED_SUCCESS;
        let bound = f64::from(seeds) * q + Z_BOUND * (f64::from(seeds) * q * (1.0 - q)).sqrt();
        println!(
            "{layout:?}: {failures} of {seeds} seeds failed at n = {n}, m = {m} (stated ≤ {q:.2})"
        );
        assert!(
            f64::from(failures) <= bound,
            "{layout:?}: {failures} failures > {bound:.1}"
        );
    }
}

#[test]
fn repeated_keys_are_consistent_equations() {
    let keys: Vec<u32> = (0..5000u32).chain(0..5000).collect();
    let f = RibbonFilter::build(&keys, 0.01).unwrap();
    assert_eq!(f.len(), 10_000);
    assert!((0..5000u32).all(|i| f.might_contain(&i)));
}

#[test]
fn a_static_filter_refuses_inserts_with_a_typed_error() {
    let mut f = RibbonFilter::build(0..100u32, 0.01).unwrap();
    let before = f.clone();
    let dynf: &mut dyn Filter = &mut f;
    assert!(matches!(dynf.insert(&7u32), Err(Error::Static(_))));
    assert!(dynf.might_contain(&7u32));
    assert_eq!(f, before);
    let p = f.params();
    assert_eq!(
        (p.variant, p.capacity, p.hashes, p.target_fpr),
        (Variant::Ribbon, 100, 7, Some(0.01))
    );
    assert_eq!(p.table_bits, 128 * 7);
}

#[test]
fn invalid_parameters_are_typed_errors() {
    for p in [0.0, 1.0, -0.01, 1.5, f64::NAN, f64::INFINITY, -0.0] {
        assert!(
            matches!(RibbonFilter::build(0..10u32, p), Err(Error::InvalidFpr(_))),
            "{p}"
        );
    }
    assert!(matches!(
        RibbonFilter::build(0..10u32, 1e-10),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(RibbonFilter::from_hashes(&[], 0, Xxh3Scheme).is_err());
    assert!(RibbonFilter::from_hashes(&[], 33, Xxh3Scheme).is_err());
    assert!(matches!(num_slots(u64::MAX), Err(Error::SizeOverflow(_))));
}

#[test]
fn result_bits_follow_the_target() {
    // (`result_bits_for` is `math::ribbon_result_bits`.)
    for (p, want) in [
        (0.5, 1),
        (0.25, 2),
        (0.2499, 3),
        (0.03, 6),
        (0.01, 7),
        (0.001, 10),
        (2f64.powi(-32), 32),
    ] {
        assert_eq!(result_bits_for(p).unwrap(), want, "{p}");
    }
    assert!(result_bits_for(1e-12).is_err());
    for p in [0.3, 0.03, 0.01, 0.001, 1e-5] {
        let r = result_bits_for(p).unwrap();
        assert!(
            (-(r as f64)).exp2() <= p && (-(r as f64 - 1.0)).exp2() > p,
            "{p}"
        );
    }
}

fn sample(n: u64) -> RibbonFilter {
    RibbonFilter::build(members(n, 9), 0.01).unwrap()
}

#[test]
fn bytes_serde_and_view_round_trip() {
    for n in [0, 1, 300, 20_000] {
        let f = sample(n);
        conf::check_bytes_round_trip(&f, RibbonFilter::to_bytes, RibbonFilter::from_bytes);
        conf::check_serde_round_trip(&f);
        let bytes = f.to_bytes();
        let view = RibbonView::new(&bytes).unwrap();
        assert_eq!(view.to_owned_filter(), f);
        assert_eq!(Filter::params(&view), Filter::params(&f));
        assert_eq!(
            (view.result_bits(), view.num_slots()),
            (f.result_bits(), f.num_slots())
        );
        assert_eq!(Filter::expected_fpr(&view), Filter::expected_fpr(&f));
        // The same filter exactly when their bytes hold the same one (the glue's comparison).
        assert!(bloomlab_core::meta::same(
            &RibbonView::new(&bytes).unwrap(),
            &view
        ));
        // Other keys, as many: the same count, capacity and target, another solution.
        let other = RibbonFilter::build(members(n, 10), 0.01)
            .unwrap()
            .to_bytes();
        let other = RibbonView::new(&other).unwrap();
        assert_eq!(bloomlab_core::meta::same(&other, &view), n == 0, "n = {n}");
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for _ in 0..20_000 {
            let k = conf::non_member_key(&mut rng);
            assert_eq!(view.might_contain(&k), f.might_contain(&k));
        }
        assert!(members(n, 9).iter().all(|k| view.might_contain(k)));
    }
}

#[test]
fn debug_names_the_fields() {
    let s = format!("{:?}", sample(10));
    assert!(
        s.starts_with("RibbonFilter { num_slots: 128, result_bits: 7, count: 10, capacity: 10, target_fpr: Some(0.01), seed: "),
        "{s}"
    );
    let bytes = sample(10).to_bytes();
    assert!(format!("{:?}", RibbonView::new(&bytes).unwrap()).starts_with("RibbonView {"));
}

#[test]
fn decoding_hostile_bytes_never_panics_or_accepts_an_invalid_filter() {
    for n in [0, 5, 1000] {
        let valid = sample(n).to_bytes();
        let check = |f: &RibbonFilter| assert_eq!(f.num_slots(), num_slots(f.len()).unwrap());
        for envelope in [false, true] {
            conf::check_decode_robustness(
                &valid,
                RibbonFilter::from_bytes,
                RibbonFilter::to_bytes,
                check,
                envelope,
                3000,
                n,
            );
            conf::check_decode_robustness(
                &valid,
                |b| RibbonView::new(b).map(|v| v.to_owned_filter()),
                RibbonFilter::to_bytes,
                check,
                envelope,
                1000,
                n + 1,
            );
        }
    }
}

/// Edit one payload field, reseal, and expect a refusal naming it.
fn edited(field_offset: usize, value: &[u8]) -> Result<RibbonFilter, Error> {
    let mut b = sample(1000).to_bytes();
    let at = format::HEADER_LEN + field_offset;
    b[at..at + value.len()].copy_from_slice(value);
    format::reseal(&mut b);
    assert!(RibbonView::new(&b).is_err());
    RibbonFilter::from_bytes(&b)
}

fn refused_field(r: Result<RibbonFilter, Error>) -> &'static str {
    match r {
        Err(Error::Decode(DecodeError::InvalidField { field, .. })) => field,
        other => panic!("expected an invalid field, got {other:?}"),
    }
}

#[test]
fn each_invalid_field_is_refused_by_name() {
    // A huge slot count with a small payload is refused before any allocation.
    assert_eq!(
        refused_field(edited(0, &(1u64 << 62).to_le_bytes())),
        "num_slots"
    );
    assert_eq!(
        refused_field(edited(0, &1152u64.to_le_bytes())),
        "num_slots"
    );
    assert_eq!(refused_field(edited(8, &0u32.to_le_bytes())), "result_bits");
    assert_eq!(
        refused_field(edited(8, &33u32.to_le_bytes())),
        "result_bits"
    );
    // 8 result bits do not match the 1 % target (7).
    assert_eq!(refused_field(edited(8, &8u32.to_le_bytes())), "result_bits");
    assert_eq!(refused_field(edited(12, &MAX_SEEDS.to_le_bytes())), "seed");
    assert_eq!(refused_field(edited(16, &5u64.to_le_bytes())), "num_slots");
    assert_eq!(
        refused_field(edited(24, &2.0f64.to_le_bytes())),
        "target_fpr"
    );
    // The wrong variant tag and a short solution.
    let mut b = sample(10).to_bytes();
    b[6] = Variant::Cuckoo as u8;
    format::reseal(&mut b);
    assert!(matches!(
        RibbonFilter::from_bytes(&b),
        Err(Error::Decode(DecodeError::WrongVariant { .. }))
    ));
    let mut b = sample(10).to_bytes();
    b.truncate(b.len() - 8);
    format::reseal(&mut b);
    assert!(matches!(
        RibbonFilter::from_bytes(&b),
        Err(Error::Decode(DecodeError::Truncated { .. }))
    ));
}

#[test]
fn batched_lookups_answer_as_single_ones() {
    // An empty filter in the first layout, which no inline kernel serves: its batches too are
    // answered (no solution to prefetch from) on every CPU.
    let empty = RibbonFilter::from_parts(Vec::new(), 0, 7, 0, 0, None, Xxh3Scheme).unwrap();
    assert_eq!(empty.layout(), Layout::Fmix128);
    let mut out = vec![true; 40];
    empty
        .might_contain_batch(&(0..40u64).collect::<Vec<_>>(), &mut out)
        .unwrap();
    assert_eq!(out, vec![false; 40]);
    for n in [0u64, 1, 127, 128, 129, 5000] {
        let f = RibbonFilter::build(0..n, 0.01).unwrap();
        // Members and non-members, and batches shorter than the prefetch distance.
        for len in [0usize, 1, 3, 15, 16, 17, 4000] {
            let keys: Vec<u64> = (0..len as u64).map(|i| i * 7 % (2 * n + 3)).collect();
            let want: Vec<bool> = keys.iter().map(|k| f.might_contain(k)).collect();
            let mut out = vec![false; len];
            f.might_contain_batch(&keys, &mut out).unwrap();
            assert_eq!(out, want, "n = {n}, len = {len}");
            let hits = want.iter().filter(|&&b| b).count();
            assert_eq!(f.count_contained(&keys), hits);
        }
        let mut short = vec![false; 2];
        assert!(f.might_contain_batch(&[1u64, 2, 3], &mut short).is_err());
    }
    // Past `SINGLE_LOOP_UP_TO` bytes of solution the batch runs the prefetching pipeline
    // (below it, key by key, as every filter above): the same answers.
    let f = RibbonFilter::build(0..1_100_000u64, 1.0 / 65_536.0).unwrap();
    assert!(f.num_slots() * u64::from(f.result_bits()) / 8 > SINGLE_LOOP_UP_TO as u64);
    for len in [0usize, 1, 3, 15, 16, 17, 40_000] {
        let keys: Vec<u64> = (0..len as u64).map(|i| i * 53).collect();
        let want: Vec<bool> = keys.iter().map(|k| f.might_contain(k)).collect();
        let mut out: Vec<bool> = want.iter().map(|b| !b).collect();
        f.might_contain_batch(&keys, &mut out).unwrap();
        assert_eq!(out, want, "len = {len}");
        assert_eq!(
            f.count_contained(&keys),
            want.iter().filter(|&&b| b).count()
        );
    }
}

#[test]
fn a_serde_record_without_a_format_version_is_the_first_layout() {
    // Records written before the second layout carry no `format_version`: they must read
    // as the first layout, and answer as the filter that wrote them.
    let keys = members(300, 9);
    let f = RibbonFilter::build_in(Layout::Fmix128, &keys, 0.01, Xxh3Scheme).unwrap();
    let mut record = serde_json::to_value(&f).unwrap();
    let fields = record.as_object_mut().unwrap();
    assert_eq!(
        fields.remove("format_version"),
        Some(serde_json::Value::from(format::FORMAT_VERSION))
    );
    let back: RibbonFilter = serde_json::from_value(record).unwrap();
    assert_eq!(back.layout(), Layout::Fmix128);
    assert_eq!(back, f);
    assert!(keys.iter().all(|k| back.might_contain(k)));
}

#[test]
fn a_view_reports_the_size_of_the_solution_it_borrows() {
    for n in [1, 300, 20_000] {
        for layout in [Layout::Fmix128, Layout::OneHash] {
            let f = RibbonFilter::build_in(layout, members(n, 9), 0.01, Xxh3Scheme).unwrap();
            let bytes = f.to_bytes();
            let view = RibbonView::new(&bytes).unwrap();
            // The same solution as the owned filter's columns, which are whole 64-bit
            // words holding at least `num_slots · r` bits.
            assert_eq!(view.size_in_bytes(), f.size_in_bytes(), "n = {n}");
            assert!(view.size_in_bytes() as u64 * 8 >= f.num_slots() * u64::from(f.result_bits()));
            assert_eq!(view.size_in_bytes() % 8, 0);
        }
    }
}

bloomlab_conformance::declaration_test!(bloomlab_ribbon::RibbonFilter, Ribbon);

/// The seed, result bits and slots a filter reports are those it was made with — here from
/// parts, with a seed construction rarely reaches (most key sets solve at seed 0) — and the
/// byte format carries them.
#[test]
fn a_filter_reports_the_seed_it_was_made_with() {
    let (n, r) = (100u64, 7u32);
    let m = num_slots(n).unwrap();
    // m / 128 · r · 2 words of solution.
    let words = vec![0x5555_5555_5555_5555u64; (m / 128) as usize * r as usize * 2];
    let f = RibbonFilter::from_parts(words, m, r, 5, n, None, Xxh3Scheme).unwrap();
    assert_eq!((f.seed(), f.result_bits(), f.num_slots()), (5, r, m));
    let g = RibbonFilter::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!((g.seed(), g.result_bits(), g.num_slots()), (5, r, m));
}

/// Two filters are equal exactly when their solutions, shapes, seeds and layouts are: two
/// built from different keys (same size, same `r`, same seed) differ, and so do a filter and
/// its parts given another seed or read in the other layout.
#[test]
fn filters_are_equal_only_with_equal_solutions_seeds_and_layouts() {
    let a = RibbonFilter::build(0..1_000u64, 0.01).unwrap();
    let b = RibbonFilter::build(1_000..2_000u64, 0.01).unwrap();
    assert_eq!(
        (a.num_slots(), a.result_bits(), a.seed(), a.len()),
        (b.num_slots(), b.result_bits(), b.seed(), b.len())
    );
    assert_ne!(a, b);
    assert_eq!(a, a.clone());
    let (n, r) = (100u64, 7u32);
    let m = num_slots(n).unwrap();
    let words = vec![0x0123_4567_89ab_cdefu64; (m / 128) as usize * r as usize * 2];
    let part = |layout, seed| {
        RibbonFilter::from_parts_in(layout, words.clone(), m, r, seed, n, None, Xxh3Scheme).unwrap()
    };
    assert_eq!(part(Layout::Fmix128, 3), part(Layout::Fmix128, 3));
    assert_ne!(part(Layout::Fmix128, 3), part(Layout::Fmix128, 4));
    assert_ne!(part(Layout::Fmix128, 3), part(Layout::OneHash, 3));
}
