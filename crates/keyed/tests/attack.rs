//! The crafted-key attacks at CI size: the unkeyed filter falls, the keyed one holds — under
//! both keyed schemes (id 4, `Sip64Scheme`, and id 2, `SipScheme`), with the same assertions.
//! Bounds are 5σ binomial (see bloomlab-conformance's Z_BOUND).

use bloomlab_classic::BloomFilter;
use bloomlab_conformance::Z_BOUND;
use bloomlab_core::hash::HashScheme;
use bloomlab_keyed::attack::{forge, pollute};
use bloomlab_keyed::{KeyedBloomFilter, Sip64Scheme, SipScheme};

const N: u64 = 20_000;
const P: f64 = 0.01;
const PROBES: u64 = 200_000;
const SECRET: [u8; 16] = *b"fixed test key!!";

fn deviation_in_sigmas(positives: u64, probes: u64, p: f64) -> f64 {
    let mu = probes as f64 * p;
    (positives as f64 - mu).abs() / (mu * (1.0 - p)).sqrt()
}

#[test]
fn pollution_breaks_the_unkeyed_filter_but_not_the_keyed_one() {
    let mut plain = BloomFilter::with_fpr(N, P).unwrap();
    let r = pollute(&mut plain, N, 4096, PROBES, 1).unwrap();
    println!("unkeyed: {r:?}");
    // n crafted keys set far more than the ≈ 52 % of bits n random keys set…
    assert!(r.fill_ratio > 0.65, "{r:?}");
    // …and honest users see an FPR far outside the bound around the formula.
    assert!(
        deviation_in_sigmas(r.positives, r.probes, r.expected_fpr) > Z_BOUND,
        "{r:?}"
    );
    assert!(r.measured_fpr > 3.0 * P, "{r:?}");
    // The rate reported is the positives counted over the probes made.
    assert_eq!(r.probes, PROBES);
    assert_eq!(r.measured_fpr, r.positives as f64 / PROBES as f64, "{r:?}");
    assert!(r.measured_fpr < 1.0, "{r:?}");

    pollution_does_not_move_a_keyed_filter(Sip64Scheme::from_secret(SECRET));
    pollution_does_not_move_a_keyed_filter(SipScheme::from_secret(SECRET));
}

fn pollution_does_not_move_a_keyed_filter<S: HashScheme>(scheme: S) {
    let mut keyed: KeyedBloomFilter<S> = BloomFilter::with_fpr_and_scheme(N, P, scheme).unwrap();
    let r = pollute(&mut keyed, N, 4096, PROBES, 1).unwrap();
    println!("keyed {}: {r:?}", keyed.scheme().descriptor().id.name());
    assert!(
        deviation_in_sigmas(r.positives, r.probes, r.expected_fpr) <= Z_BOUND,
        "{r:?}"
    );
}

#[test]
fn forged_positives_work_only_without_the_key() {
    let fill = |f: &mut dyn FnMut(u64)| (0..N).for_each(f);
    let mut plain = BloomFilter::with_fpr(N, P).unwrap();
    fill(&mut |i| {
        plain.insert(&i);
    });
    let r = forge(&plain, 2_000, 10_000_000, 2).unwrap();
    println!("unkeyed: {r:?}");
    assert_eq!(r.forged, 2_000);
    assert_eq!(
        r.accepted, r.forged,
        "every forged key is a hit on the unkeyed filter"
    );
    // Finding one costs about 1/FPR offline hashes.
    assert!(
        r.cost_per_forged > 0.5 / P && r.cost_per_forged < 2.0 / P,
        "{r:?}"
    );

    forgeries_fail_on_a_keyed_filter(Sip64Scheme::from_secret(SECRET));
    forgeries_fail_on_a_keyed_filter(SipScheme::from_secret(SECRET));
}

fn forgeries_fail_on_a_keyed_filter<S: HashScheme>(scheme: S) {
    let mut keyed: KeyedBloomFilter<S> = BloomFilter::with_fpr_and_scheme(N, P, scheme).unwrap();
    (0..N).for_each(|i| {
        keyed.insert(&i);
    });
    let r = forge(&keyed, 2_000, 10_000_000, 2).unwrap();
    println!("keyed {}: {r:?}", keyed.scheme().descriptor().id.name());
    assert_eq!(r.forged, 2_000);
    assert!(
        deviation_in_sigmas(r.accepted, r.forged, r.baseline_fpr) <= Z_BOUND,
        "keyed filter accepted forged keys beyond its FPR: {r:?}"
    );
}

#[test]
fn attack_parameters_are_validated() {
    let mut f = BloomFilter::with_fpr(10, P).unwrap();
    assert!(pollute(&mut f, 1, 0, 10, 0).is_err());
}
