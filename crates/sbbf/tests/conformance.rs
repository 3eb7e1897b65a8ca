//! The split-block filter through the shared conformance suite, plus its own statistical tests.

use bloomlab_conformance::{self as conf, KeyShape};
use bloomlab_core::format;
use bloomlab_core::{Error, Filter};
use bloomlab_sbbf::{Sbbf, hash_bytes};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn no_false_negatives_for_every_key_shape() {
    conf::check_no_false_negatives(|n| Sbbf::with_fpr(n, 0.01).unwrap(), 100_000);
    conf::check_no_false_negatives(|n| Sbbf::with_ndv_fpp(n, 0.01).unwrap(), 100_000);
}

#[test]
fn fpr_within_binomial_bound_at_targets() {
    // 10^6 keys in ≈ 41 000–66 000 blocks: the block-to-block spread of the realised FPR is
    // ≈ 1 % relative (math::sbbf_block_fpr_variance), small against the 5σ binomial bound
    // (5 % relative at 1 % with 10^6 probes, 11 % at 0.1 % with 2·10^6).
    let targets = conf::three_targets(21);
    for r in conf::check_fpr_at(|n, p| Sbbf::with_fpr(n, p).unwrap(), 1_000_000, &targets) {
        let p = r.target;
        assert!(r.expected <= p && r.expected > 0.98 * p, "{r:?}");
        println!("{r:?}");
    }
}

/// Insert `n` keys of `shape`, probe `probes` other keys of the same shape, and require the
/// positive count within 5σ of `probes · expected_fpr()`, σ² = binomial variance + the
/// variance of this table's realised FPR around the formula (`probes² · Var_block / blocks`,
/// [`math::sbbf_block_fpr_variance`]).
fn check_shape(shape: KeyShape, f: &mut Sbbf, n: u64, members: &[Vec<u8>], others: &[Vec<u8>]) {
    for k in members {
        f.insert_bytes(k);
    }
    assert_eq!(f.len(), n);
    let missing = members.iter().filter(|k| !f.might_contain_bytes(k)).count();
    assert_eq!(missing, 0, "{shape:?}: false negatives");
    let probes = others.len() as f64;
    let positives = others.iter().filter(|k| f.might_contain_bytes(k)).count() as f64;
    let e = f.expected_fpr();
    let bpi = f.bits() as f64 / n as f64;
    let var = probes * e * (1.0 - e)
        + probes * probes * bloomlab_sbbf::math::sbbf_block_fpr_variance(bpi) / f.blocks() as f64;
    let bound = conf::Z_BOUND * var.sqrt();
    println!(
        "{shape:?} {bpi:.2} b/item: measured {:.5}, formula {e:.5}, z = {:+.2}",
        positives / probes,
        (positives - probes * e) / var.sqrt()
    );
    assert!(
        (positives - probes * e).abs() <= bound,
        "{shape:?} at {bpi:.2} bits/item: {positives} positives of {probes}, expected {:.1} ± {bound:.1}",
        probes * e
    );
}

#[test]
fn fpr_matches_the_formula_on_every_key_shape_and_density() {
    // 10^5 members and 10^6 non-members of each shape (2·10^4 and 10^5 for 1 KiB keys), at
    // 8 / 10 / 16 bits/item and at the sizes for 0.1 / 1 / 3 %.
    for shape in KeyShape::ALL {
        let (n, probes) = match shape {
            KeyShape::Large => (20_000u64, 100_000u64),
            _ => (100_000, 1_000_000),
        };
        // Structured shapes are deterministic in the index, so members and non-members come
        // from one sequence; random shapes from two seeds (a 16-byte collision is ~2^-100).
        let (members, others) = match shape {
            KeyShape::RandomBytes | KeyShape::Large => (shape.keys(n, 31), shape.keys(probes, 32)),
            _ => {
                let mut all = shape.keys(n + probes, 31);
                let others = all.split_off(n as usize);
                (all, others)
            }
        };
        let makers: [(&str, Sbbf); 6] = [
            ("8 b/item", Sbbf::with_bits_per_item(n, 8.0).unwrap()),
            ("10 b/item", Sbbf::with_bits_per_item(n, 10.0).unwrap()),
            ("16 b/item", Sbbf::with_bits_per_item(n, 16.0).unwrap()),
            ("0.1 %", Sbbf::with_fpr(n, 0.001).unwrap()),
            ("1 %", Sbbf::with_fpr(n, 0.01).unwrap()),
            ("3 %", Sbbf::with_fpr(n, 0.03).unwrap()),
        ];
        for (name, mut f) in makers {
            check_shape(shape, &mut f, n, &members, &others);
            let _ = name;
        }
    }
}

#[test]
fn current_fpr_is_the_exact_fpr_of_the_table() {
    let f = conf::filled(Sbbf::with_fpr(200_000, 0.01).unwrap(), 200_000, 3);
    let mut rng = ChaCha8Rng::seed_from_u64(33);
    let c = f.current_fpr();
    conf::check_positives_near(|k| f.might_contain_bytes(k), 1_000_000, &mut rng, c);
    // And the table's FPR is within 5σ of the formula's, σ from the block variance.
    let e = f.expected_fpr();
    let sd = (bloomlab_sbbf::math::sbbf_block_fpr_variance(f.bits() as f64 / 200_000.0)
        / f.blocks() as f64)
        .sqrt();
    assert!(
        (c - e).abs() <= conf::Z_BOUND * sd,
        "current {c}, expected {e} ± {sd}"
    );
    // The per-block cardinality estimate lands within 1 % of the truth.
    assert!(
        (f.estimated_len() / 200_000.0 - 1.0).abs() < 0.01,
        "{}",
        f.estimated_len()
    );
}

#[test]
fn batched_and_single_lookups_agree() {
    let f = conf::filled(Sbbf::with_fpr(50_000, 0.01).unwrap(), 50_000, 4);
    // Members of the filter (the stream `filled` inserted, seed 4) and non-members.
    let (mut members, mut others) = (ChaCha8Rng::seed_from_u64(4), ChaCha8Rng::seed_from_u64(5));
    let keys = conf::every_third_a_member(20_000, &mut members, &mut others);
    let mut out = vec![false; keys.len()];
    f.might_contain_batch(&keys, &mut out).unwrap();
    for (k, o) in keys.iter().zip(&out) {
        assert_eq!(*o, f.might_contain_bytes(k));
    }
    let hashes: Vec<u64> = keys.iter().map(|k| hash_bytes(k)).collect();
    let mut out2 = vec![false; keys.len()];
    f.might_contain_hashes(&hashes, &mut out2).unwrap();
    assert_eq!(out, out2);
    assert!(out.iter().any(|&o| o) && !out.iter().all(|&o| o));
    assert!(f.might_contain_hashes(&hashes, &mut out2[1..]).is_err());
    // insert_hashes sets the same bits as single inserts.
    let (mut a, mut b) = (
        Sbbf::with_blocks(999).unwrap(),
        Sbbf::with_blocks(999).unwrap(),
    );
    a.insert_hashes(&hashes);
    hashes.iter().for_each(|&h| {
        b.insert_hash(h);
    });
    assert_eq!(a, b);
}

#[test]
fn portable_and_avx2_kernels_give_the_same_bits_and_answers() {
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    let hashes: Vec<u64> = (0..30_000).map(|_| rng.random()).collect();
    let mut fast = Sbbf::with_blocks(1000).unwrap();
    let mut slow = Sbbf::with_blocks(1000).unwrap().without_simd();
    assert!(!slow.uses_avx2());
    println!("AVX2 kernel in use: {}", fast.uses_avx2());
    for (i, &h) in hashes.iter().enumerate() {
        assert_eq!(fast.insert_hash(h), slow.insert_hash(h), "insert {i}");
    }
    assert_eq!(fast, slow);
    let probes: Vec<u64> = (0..100_000).map(|_| rng.random()).collect();
    let (mut a, mut b) = (vec![false; probes.len()], vec![false; probes.len()]);
    fast.might_contain_hashes(&probes, &mut a).unwrap();
    slow.might_contain_hashes(&probes, &mut b).unwrap();
    assert_eq!(a, b);
    for &h in probes.iter().chain(&hashes) {
        assert_eq!(fast.might_contain_hash(h), slow.might_contain_hash(h));
    }
    let positives = a.iter().filter(|&&x| x).count();
    assert!(positives > 0 && positives < probes.len(), "{positives}");
}

#[test]
fn union_is_the_filter_of_both_sets() {
    let mut rng = ChaCha8Rng::seed_from_u64(6);
    let (xs, ys): (Vec<u64>, Vec<u64>) = (
        (0..5000).map(|_| rng.random()).collect(),
        (0..5000).map(|_| rng.random()).collect(),
    );
    let mut a = Sbbf::with_blocks(512).unwrap();
    let mut b = Sbbf::with_blocks(512).unwrap();
    let mut both = Sbbf::with_blocks(512).unwrap();
    a.insert_hashes(&xs);
    b.insert_hashes(&ys);
    both.insert_hashes(&xs);
    both.insert_hashes(&ys);
    a.union(&b).unwrap();
    assert_eq!(a, both);
    assert!(matches!(
        a.union(&Sbbf::with_blocks(256).unwrap()),
        Err(Error::Incompatible(_))
    ));
}

#[test]
fn byte_forms_round_trip() {
    let f = conf::filled(Sbbf::with_fpr(3_000, 0.01).unwrap(), 3_000, 7);
    conf::check_bytes_round_trip(&f, Sbbf::to_bytes, Sbbf::from_bytes);
    conf::check_serde_round_trip(&f);
    // Parquet forms keep the bits (the count is estimated on the way back).
    let p = conf::filled(Sbbf::with_ndv_fpp(3_000, 0.01).unwrap(), 3_000, 7);
    let bits = p.to_parquet_bitset().unwrap();
    assert_eq!(Sbbf::from_parquet_bitset(&bits).unwrap().raw_bitset(), bits);
    let section = p.to_parquet_bytes().unwrap();
    let back = Sbbf::from_parquet_bytes(&section).unwrap();
    assert_eq!(back.raw_bitset(), bits);
    assert_eq!(back.to_parquet_bytes().unwrap(), section);
    // A size Parquet does not allow is refused on the way out, but the raw form carries it.
    assert!(!f.is_parquet_size());
    assert!(matches!(f.to_parquet_bitset(), Err(Error::Incompatible(_))));
    assert!(f.to_parquet_bytes().is_err());
    assert_eq!(
        Sbbf::from_raw_bitset(&f.raw_bitset()).unwrap().raw_bitset(),
        f.raw_bitset()
    );
    assert!(Sbbf::from_parquet_bitset(&f.raw_bitset()).is_err());
}

fn invariants(f: &Sbbf) {
    assert!(f.blocks() >= 1 && f.capacity() >= 1);
    for i in 0..f.blocks() {
        let w = f.block_words(i).unwrap();
        assert!(w.iter().all(|&x| x == 0) || w.iter().all(|&x| x != 0));
    }
    let e = f.expected_fpr();
    assert!((0.0..=1.0).contains(&e));
}

#[test]
fn hostile_envelopes_never_panic_or_decode_invalid_filters() {
    let f = conf::filled(Sbbf::with_blocks(8).unwrap(), 20, 8);
    let valid = f.to_bytes();
    let accepted = conf::check_decode_robustness(
        &valid,
        Sbbf::from_bytes,
        Sbbf::to_bytes,
        invariants,
        true,
        30_000,
        9,
    );
    println!("accepted {accepted} damaged envelopes, each canonical and valid");
    // Field by field.
    let payload = format::HEADER_LEN;
    let edit = |at: usize, v: u64| {
        let mut b = valid.clone();
        b[payload + at..payload + at + 8].copy_from_slice(&v.to_le_bytes());
        format::reseal(&mut b);
        Sbbf::from_bytes(&b)
    };
    assert!(edit(0, 0).is_err(), "zero blocks");
    assert!(edit(0, 1 << 40).is_err(), "huge block count");
    assert!(edit(0, 9).is_err(), "block count disagrees with the length");
    assert!(edit(8, 0).is_err(), "count too small for the bits");
    assert!(edit(16, 0).is_err(), "zero capacity");
    assert!(edit(24, 2.0f64.to_bits()).is_err(), "target FPR 2");
    assert!(edit(24, f64::NAN.to_bits()).is_err(), "target FPR NaN");
    // A block with some words empty and others not.
    let mut b = valid.clone();
    let first_block = payload + 32;
    let nonzero = (0..8).find(|i| f.block_words(*i).unwrap()[0] != 0).unwrap() as usize;
    b[first_block + nonzero * 32..first_block + nonzero * 32 + 4].fill(0);
    format::reseal(&mut b);
    assert!(Sbbf::from_bytes(&b).is_err());
}

#[test]
fn hostile_parquet_bytes_never_panic_or_decode_invalid_filters() {
    let f = conf::filled(Sbbf::with_num_bytes(256).unwrap(), 20, 10);
    // Bare bitsets: damage can only make a reachable table or be refused.
    let bits = f.to_parquet_bitset().unwrap();
    let accepted = conf::check_decode_robustness(
        &bits,
        Sbbf::from_parquet_bitset,
        |g: &Sbbf| g.to_parquet_bitset().unwrap(),
        invariants,
        false,
        20_000,
        11,
    );
    println!("accepted {accepted} damaged bitsets");
    // Full sections (header + bitset): the header may be written in other valid compact forms,
    // so an accepted input need not be canonical; it must still be a valid filter whose
    // canonical bytes decode to the same table.
    let section = f.to_parquet_bytes().unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let mut accepted = 0;
    for round in 0..30_000 {
        let mut b = section.clone();
        match round % 4 {
            0 => {
                let i = rng.random_range(0..20);
                b[i] = rng.random();
            }
            1 => {
                for _ in 0..rng.random_range(1..4) {
                    let i = rng.random_range(0..b.len());
                    b[i] ^= 1 << rng.random_range(0..8);
                }
            }
            2 => b.truncate(rng.random_range(0..b.len())),
            _ => {
                let len = rng.random_range(0..400);
                b = (0..len).map(|_| rng.random()).collect();
            }
        }
        if let Ok(g) = Sbbf::from_parquet_bytes(&b) {
            invariants(&g);
            let canon = g.to_parquet_bytes().unwrap();
            assert_eq!(
                Sbbf::from_parquet_bytes(&canon).unwrap().raw_bitset(),
                g.raw_bitset()
            );
            accepted += 1;
        }
    }
    println!("accepted {accepted} damaged sections");
    // Specific refusals: sizes the specification does not allow, a header that disagrees with
    // the bytes, trailing bytes, a negative size.
    for len in [0usize, 16, 31, 33, 96, 48] {
        assert!(Sbbf::from_parquet_bitset(&vec![0; len]).is_err(), "{len}");
    }
    assert!(Sbbf::from_raw_bitset(&[0; 96]).is_ok());
    assert!(Sbbf::from_raw_bitset(&[0; 95]).is_err());
    let mut longer = section.clone();
    longer.push(0);
    assert!(Sbbf::from_parquet_bytes(&longer).is_err());
    assert!(Sbbf::from_parquet_bytes(&section[..section.len() - 32]).is_err());
    let mut negative = section.clone();
    negative[1] = 0x01; // zigzag 1 = −1
    assert!(Sbbf::from_parquet_bytes(&negative).is_err());
    // A header announcing 2^31 − 1 bytes over a short input: refused without allocating.
    let mut huge = vec![0x15, 0xfe, 0xff, 0xff, 0xff, 0x0f];
    huge.extend_from_slice(&section[3..15]);
    assert!(Sbbf::from_parquet_bytes(&huge).is_err());
}

#[test]
fn invalid_parameters_are_typed_errors() {
    conf::check_invalid_parameters(Sbbf::with_fpr);
    conf::check_invalid_parameters(Sbbf::with_fpr_parquet_sized);
    assert!(matches!(Sbbf::with_ndv_fpp(0, 0.01), Err(Error::ZeroItems)));
    assert!(matches!(
        Sbbf::with_ndv_fpp(10, 1.0),
        Err(Error::InvalidFpr(_))
    ));
    assert!(Sbbf::with_bits_per_item(10, -1.0).is_err());
    assert!(Sbbf::with_bits_per_item(10, f64::NAN).is_err());
}

#[test]
fn behind_the_filter_trait() {
    let mut f: Box<dyn Filter> = Box::new(Sbbf::with_fpr(1000, 0.01).unwrap());
    conf::insert_all(f.as_mut(), 0..1000u32);
    assert!((0..1000u32).all(|i| f.might_contain(&i)));
    let p = f.params();
    assert_eq!(p.variant, bloomlab_core::Variant::Sbbf);
    assert_eq!(p.hashes, 8);
    assert_eq!(p.scheme.id, bloomlab_core::SchemeId::ParquetXxh64);
    assert_eq!(f.len(), 1000);
    assert!(f.expected_fpr() > 0.005 && f.expected_fpr() <= 0.01);
}

/// Batches answer key by key in tables up to `SINGLE_LOOP_UP_TO` bytes and through the
/// hash-and-prefetch pipeline above; pre-hashed batches skip the prefetch up to
/// `PREFETCH_MIN_BYTES`. On both sides of each threshold they answer as single lookups.
#[test]
fn batches_answer_as_single_lookups_on_both_sides_of_the_thresholds() {
    use bloomlab_sbbf::{PREFETCH_MIN_BYTES, SINGLE_LOOP_UP_TO};
    for bytes in [PREFETCH_MIN_BYTES, SINGLE_LOOP_UP_TO] {
        let below = (bytes / 32) as u64;
        for blocks in [below, below + 1] {
            let mut f = Sbbf::with_blocks(blocks).unwrap();
            let members: Vec<u64> = (0..blocks * 25)
                .map(|i| i.wrapping_mul(0x9e37_79b9))
                .collect();
            members.iter().for_each(|k| {
                f.insert(k);
            });
            conf::check_batch_agrees(
                &members,
                blocks,
                |k| f.might_contain(k),
                |q, out| f.might_contain_batch(q, out).unwrap(),
            );
            conf::check_batch_agrees(
                &members,
                blocks,
                |k| f.might_contain(k),
                |q, out| {
                    let hashes: Vec<u64> = q.iter().map(|k| hash_bytes(&k.to_le_bytes())).collect();
                    f.might_contain_hashes(&hashes, out).unwrap()
                },
            );
        }
    }
}

#[test]
fn emptiness_and_the_reported_table_bits() {
    let mut f = Sbbf::with_blocks(4).unwrap();
    assert!(f.is_empty());
    f.insert(&1u64);
    assert!(!f.is_empty());
    // Four blocks of 256 bits: the table bits the trait reports (the harness's bits/item).
    assert_eq!(f.params().table_bits, 4 * 256);
    assert_eq!(f.params().table_bits, 8 * f.size_in_bytes() as u64);
}

#[test]
fn clear_removes_every_value_and_the_count() {
    let mut f = Sbbf::with_fpr(1000, 0.01).unwrap();
    for i in 0..1000u64 {
        f.insert(&i);
    }
    assert!(!f.is_empty());
    f.clear();
    assert!(f.is_empty());
    assert_eq!(f.len(), 0);
    assert!((0..1000u64).all(|i| !f.might_contain(&i)));
    assert_eq!(f.to_bytes(), Sbbf::with_fpr(1000, 0.01).unwrap().to_bytes());
}

bloomlab_conformance::declaration_test!(bloomlab_sbbf::Sbbf, Sbbf, fill: fill_ratio, estimate: estimated_len);
