//! Properties every filter must have for *arbitrary* inputs, checked with [`proptest`](mod@proptest): the
//! generic halves live here, and each variant's `tests/properties.rs` instantiates them with
//! its own constructors, encoders and decoders (so a change to a variant is caught by that
//! variant's own tests).
//!
//! - [`key_lists`]: key lists with duplicates, empty keys and any order.
//! - [`no_false_negatives`], [`round_trips`], [`union_is_the_filter_of_both`].
//! - [`removes_like_a_multiset`]: inserts and removals side by side with a counting model,
//!   including removals of keys never inserted and keys inserted hundreds of times in a row.
//! - [`decode_is_total`]: a decoder fed any bytes returns a value or a typed error, never
//!   panics, never allocates more than the input justifies ([`ALLOC_BYTES_PER_INPUT_BYTE`]
//!   times the input plus [`ALLOC_SLACK`], measured with a counting global allocator the test
//!   binary installs), and answers within [`DECODE_TIME_BOUND`]; what it accepts re-encodes to
//!   the same bytes. [`mutations`] damages a valid encoding the way storage and adversaries do.
//!
//! # Case counts
//!
//! Each property runs [`cases`] cases: 64 by default, so the whole workspace's properties add
//! seconds, not minutes, to CI. For a longer local run set `PROPTEST_CASES` (e.g.
//! `PROPTEST_CASES=5000 cargo test -p bloomlab-classic --test properties`). The cases come
//! from a fixed seed ([`SEED`]), so every run draws the same ones; `PROPTEST_RNG_SEED=<n>`
//! draws others. Failures are shrunk and printed.

use std::alloc::System;
use std::fmt::Debug;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bloomlab_core::error::Error;
use bloomlab_core::{Filter, RemovableFilter, format};
pub use proptest;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
pub use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

/// Bytes a decoder may allocate per input byte (a decoded filter holds about its input; a
/// copy on the way and a vector's doubling account for the rest).
pub const ALLOC_BYTES_PER_INPUT_BYTE: usize = 4;

/// Bytes a decoder may allocate whatever its input (error messages, small headers).
pub const ALLOC_SLACK: usize = 16 * 1024;

/// Wall time any one decode may take: a loose order-of-magnitude bound (inputs are at most a
/// few KiB, which decode in microseconds), so that a few bytes cannot buy seconds of CPU.
/// Stretched under an emulator by [`crate::timing::scaled`].
pub const DECODE_TIME_BOUND: Duration = Duration::from_secs(2);

/// Cases per property: `PROPTEST_CASES` if set, else 64.
pub fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(64)
}

/// The seed of every property's case generator unless `PROPTEST_RNG_SEED` names another:
/// the same cases on every run, so CI never fails on a new random draw, and a failure
/// reproduces exactly. `PROPTEST_RNG_SEED=<n>` (with `PROPTEST_CASES`) explores other cases.
pub const SEED: u64 = 0x5eed;

/// The configuration every variant's property tests use ([`cases`] cases, [`SEED`] unless
/// `PROPTEST_RNG_SEED` is set; no regression files written into the source tree).
pub fn config() -> ProptestConfig {
    let mut c = ProptestConfig::with_cases(cases());
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        c.rng_seed = proptest::test_runner::RngSeed::Fixed(SEED);
    }
    c.failure_persistence = None;
    c
}

/// Up to `max` keys: a mix of keys from a small pool (so duplicates are common), the empty
/// key, and arbitrary bytes of length 0–40, in any order.
pub fn key_lists(max: usize) -> impl Strategy<Value = Vec<Vec<u8>>> {
    let key = prop_oneof![
        3 => (0u8..16).prop_map(|i| vec![i; usize::from(i % 5)]),
        1 => Just(Vec::new()),
        6 => prop::collection::vec(any::<u8>(), 0..40),
    ];
    prop::collection::vec(key, 0..=max)
}

/// `f` with every key of `keys` inserted (panics if an insert fails: size `f` for them).
pub fn with_keys<F: Filter>(mut f: F, keys: &[Vec<u8>]) -> F {
    for k in keys {
        f.insert_bytes(k).expect("insert below capacity");
    }
    f
}

/// Every inserted key tests positive.
pub fn no_false_negatives(f: &dyn Filter, keys: &[Vec<u8>]) -> Result<(), TestCaseError> {
    for k in keys {
        prop_assert!(f.might_contain_bytes(k), "false negative for {:?}", k);
    }
    Ok(())
}

/// `decode(encode(f))` equals `f`, answers the same on `probes`, and re-encodes to the same
/// bytes.
pub fn round_trips<F: Filter + PartialEq + Debug>(
    f: &F,
    probes: &[Vec<u8>],
    encode: impl Fn(&F) -> Vec<u8>,
    decode: impl Fn(&[u8]) -> Result<F, Error>,
) -> Result<(), TestCaseError> {
    let bytes = encode(f);
    let back = decode(&bytes).map_err(|e| TestCaseError::fail(format!("decode: {e}")))?;
    prop_assert_eq!(&back, f);
    for k in probes {
        prop_assert_eq!(back.might_contain_bytes(k), f.might_contain_bytes(k));
    }
    prop_assert_eq!(encode(&back), bytes, "encoding is canonical");
    Ok(())
}

/// `a` (holding `a_keys`) merged with `b` (holding `b_keys`, built alike) equals the filter
/// `both` built from all of them, and has no false negatives for either.
pub fn union_is_the_filter_of_both<F: Filter + PartialEq + Debug + Clone>(
    empty: &F,
    a_keys: &[Vec<u8>],
    b_keys: &[Vec<u8>],
    union: impl Fn(&mut F, &F) -> Result<(), Error>,
) -> Result<(), TestCaseError> {
    let (mut a, mut b, mut both) = (empty.clone(), empty.clone(), empty.clone());
    for k in a_keys {
        a.insert_bytes(k).expect("insert");
        both.insert_bytes(k).expect("insert");
    }
    for k in b_keys {
        b.insert_bytes(k).expect("insert");
        both.insert_bytes(k).expect("insert");
    }
    union(&mut a, &b).map_err(|e| TestCaseError::fail(format!("union: {e}")))?;
    no_false_negatives(&a, a_keys)?;
    no_false_negatives(&a, b_keys)?;
    prop_assert_eq!(&a, &both);
    Ok(())
}

/// One step of [`removes_like_a_multiset`].
#[derive(Clone, Debug)]
pub enum Op {
    /// Insert pool key `i`.
    Insert(u8),
    /// Remove pool key `i` (which the model may or may not hold).
    Remove(u8),
    /// Try to remove a key from outside the pool, never inserted.
    RemoveAbsent(u32),
    /// Insert pool key `i` this many times in a row (a hot key: past the copies a variant
    /// keeps, its inserts are refused or counted as its docs say).
    InsertMany(u8, u16),
    /// Remove pool key `i` this many times in a row (as often as the model holds it, at most).
    RemoveMany(u8, u16),
}

/// Operation sequences over a pool of 24 keys, with heavy repeats: some steps insert one key
/// up to 300 times, or remove it as often.
pub fn ops(max: usize) -> impl Strategy<Value = Vec<Op>> {
    let op = prop_oneof![
        5 => (0u8..24).prop_map(Op::Insert),
        4 => (0u8..24).prop_map(Op::Remove),
        1 => any::<u32>().prop_map(Op::RemoveAbsent),
        1 => (0u8..24, 1u16..300).prop_map(|(i, n)| Op::InsertMany(i, n)),
        1 => (0u8..24, 1u16..300).prop_map(|(i, n)| Op::RemoveMany(i, n)),
    ];
    prop::collection::vec(op, 0..=max)
}

fn pool_key(i: u8) -> Vec<u8> {
    format!("pool:{i}").into_bytes()
}

/// Run `ops` on `f` and on a multiset side by side. After every step: every key the model
/// holds tests positive; a removal of a held key succeeds; a removal of a key that tests
/// negative is refused and changes nothing; `len` follows the model. Inserts the filter
/// refuses (a full cuckoo filter; a key held the most times a variant keeps it,
/// [`Error::TooManyCopies`], which also needs the key to test positive) are refused whole:
/// the filter must be unchanged, and the model does not count them. Steps repeat one key
/// hundreds of times ([`Op::InsertMany`], [`Op::RemoveMany`]), so every accepted copy of a
/// hot key must be removable once, as the model holds it.
///
/// A key that was never inserted but tests positive cannot be told from a member (both
/// variants document this hazard), so such a removal is not attempted.
pub fn removes_like_a_multiset<F: RemovableFilter + Clone + PartialEq + Debug>(
    mut f: F,
    ops: &[Op],
) -> Result<(), TestCaseError> {
    let mut held = [0u32; 24];
    let insert =
        |f: &mut F, held: &mut [u32; 24], i: u8, step: usize| -> Result<(), TestCaseError> {
            let before = f.clone();
            let k = pool_key(i);
            match f.insert_bytes(&k) {
                Ok(()) => held[usize::from(i)] += 1,
                Err(e) => {
                    prop_assert_eq!(&*f, &before, "step {}: refused insert changed", step);
                    if let Error::TooManyCopies(_) = e {
                        prop_assert!(f.might_contain_bytes(&k), "step {}: refused copy", step);
                    }
                }
            }
            Ok(())
        };
    let remove =
        |f: &mut F, held: &mut [u32; 24], i: u8, step: usize| -> Result<(), TestCaseError> {
            let k = pool_key(i);
            if held[usize::from(i)] > 0 {
                prop_assert!(f.remove_bytes(&k), "step {}: held key refused", step);
                held[usize::from(i)] -= 1;
            } else if !f.might_contain_bytes(&k) {
                let before = f.clone();
                prop_assert!(!f.remove_bytes(&k), "step {}: removed a negative key", step);
                prop_assert_eq!(&*f, &before);
            }
            Ok(())
        };
    for (step, op) in ops.iter().enumerate() {
        match *op {
            Op::Insert(i) => insert(&mut f, &mut held, i, step)?,
            Op::Remove(i) => remove(&mut f, &mut held, i, step)?,
            Op::InsertMany(i, n) => {
                for _ in 0..n {
                    insert(&mut f, &mut held, i, step)?;
                }
            }
            Op::RemoveMany(i, n) => {
                for _ in 0..n.min(u16::try_from(held[usize::from(i)]).unwrap_or(u16::MAX)) {
                    remove(&mut f, &mut held, i, step)?;
                }
            }
            Op::RemoveAbsent(x) => {
                let k = format!("absent:{x}").into_bytes();
                if !f.might_contain_bytes(&k) {
                    let before = f.clone();
                    prop_assert!(!f.remove_bytes(&k), "step {}: removed a negative key", step);
                    prop_assert_eq!(&f, &before);
                }
            }
        }
        for (i, &n) in held.iter().enumerate() {
            if n > 0 {
                prop_assert!(
                    f.might_contain_bytes(&pool_key(i as u8)),
                    "step {}: false negative for pool key {} held {} times",
                    step,
                    i,
                    n
                );
            }
        }
        prop_assert_eq!(
            f.len(),
            u64::from(held.iter().sum::<u32>()),
            "step {}: len",
            step
        );
    }
    Ok(())
}

/// One way of damaging a valid encoding.
#[derive(Clone, Debug)]
pub enum Mutation {
    /// Flip bit `bit` of byte `at % len`.
    FlipBit {
        /// Byte (modulo the length).
        at: usize,
        /// Bit 0–7.
        bit: u8,
    },
    /// Overwrite byte `at % len`.
    Set {
        /// Byte (modulo the length).
        at: usize,
        /// New value.
        value: u8,
    },
    /// Keep the first `len % (len + 1)` bytes.
    Truncate(usize),
    /// Append bytes.
    Extend(Vec<u8>),
    /// Recompute the envelope's length and checksum (so damage reaches the payload checks).
    Reseal,
}

/// Up to 6 mutations in a row.
pub fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    let m = prop_oneof![
        4 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        3 => (any::<usize>(), any::<u8>()).prop_map(|(at, value)| Mutation::Set { at, value }),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => prop::collection::vec(any::<u8>(), 1..64).prop_map(Mutation::Extend),
        3 => Just(Mutation::Reseal),
    ];
    prop::collection::vec(m, 1..=6)
}

/// `valid` with `muts` applied in order.
pub fn mutate(valid: &[u8], muts: &[Mutation]) -> Vec<u8> {
    let mut b = valid.to_vec();
    for m in muts {
        match m {
            Mutation::FlipBit { at, bit } if !b.is_empty() => {
                let i = at % b.len();
                b[i] ^= 1 << bit;
            }
            Mutation::Set { at, value } if !b.is_empty() => {
                let i = at % b.len();
                b[i] = *value;
            }
            Mutation::Truncate(n) => b.truncate(n % (b.len() + 1)),
            Mutation::Extend(more) => b.extend_from_slice(more),
            Mutation::Reseal => {
                format::reseal(&mut b);
            }
            _ => {}
        }
    }
    b
}

static SERIAL: Mutex<()> = Mutex::new(());

/// Holds every property test of a binary to one thread at a time while it runs, so the
/// allocation counts [`decode_is_total`] reads are the decoder's own. Every test in a binary
/// that installs the counting allocator takes it first.
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Run `decode` on `input_len` bytes of input: it must return (never panic), within
/// [`DECODE_TIME_BOUND`], having allocated at most [`ALLOC_BYTES_PER_INPUT_BYTE`] ×
/// `input_len` + [`ALLOC_SLACK`] bytes (`alloc` is the test binary's global allocator).
/// Returns what it returned.
///
/// The allocation is measured up to three times and the smallest count kept, so an
/// allocation by the test framework on another thread cannot fail a correct decoder, while
/// an over-allocating decoder, which over-allocates every time, still fails.
pub fn bounded<T>(
    alloc: &StatsAlloc<System>,
    input_len: usize,
    decode: impl Fn() -> T,
) -> Result<T, TestCaseError> {
    let budget = ALLOC_BYTES_PER_INPUT_BYTE * input_len + ALLOC_SLACK;
    let mut least = usize::MAX;
    let mut tries = 0;
    loop {
        let start = Instant::now();
        let region = Region::new(alloc);
        let out = decode();
        let used = region.change();
        let took = start.elapsed();
        let bound = crate::timing::scaled(DECODE_TIME_BOUND);
        prop_assert!(
            took < bound,
            "decoding {} bytes took {:?} (bound {:?})",
            input_len,
            took,
            bound
        );
        let bytes = used.bytes_allocated + used.bytes_reallocated.max(0) as usize;
        least = least.min(bytes);
        tries += 1;
        if least <= budget || tries == 3 {
            prop_assert!(
                least <= budget,
                "decoding {} bytes allocated {} bytes (budget {})",
                input_len,
                least,
                budget
            );
            return Ok(out);
        }
    }
}

/// [`bounded`], and an accepted input must re-encode to exactly `input` (it was canonical
/// and fully validated). Returns whether it was accepted.
pub fn decode_is_total<F>(
    alloc: &StatsAlloc<System>,
    input: &[u8],
    decode: impl Fn(&[u8]) -> Result<F, Error>,
    encode: impl Fn(&F) -> Vec<u8>,
) -> Result<bool, TestCaseError> {
    match bounded(alloc, input.len(), || decode(input))? {
        Ok(f) => {
            prop_assert_eq!(encode(&f), input, "accepted a non-canonical encoding");
            Ok(true)
        }
        Err(_) => Ok(false),
    }
}

/// A borrowing decoder reduced to whether it accepts its input.
pub type Accepts<'a> = &'a dyn Fn(&[u8]) -> bool;

/// [`decode_is_total`] for the owning decoder, and every one of `views` (borrowing decoders
/// of the same format) accepts exactly the inputs it accepts, within the same bounds.
pub fn decoders_agree<F>(
    alloc: &StatsAlloc<System>,
    input: &[u8],
    decode: impl Fn(&[u8]) -> Result<F, Error>,
    encode: impl Fn(&F) -> Vec<u8>,
    views: &[Accepts<'_>],
) -> Result<(), TestCaseError> {
    let owned = decode_is_total(alloc, input, decode, encode)?;
    for (i, view) in views.iter().enumerate() {
        let accepted = bounded(alloc, input.len(), || view(input))?;
        prop_assert_eq!(owned, accepted, "view {} and owning decoder disagree", i);
    }
    Ok(())
}

/// `other` (a view or another decoding of `f`) answers like `f` on every key of `keys` and
/// `probes`.
pub fn answers_alike(
    f: &dyn Filter,
    other: impl Fn(&[u8]) -> bool,
    keys: &[Vec<u8>],
    probes: &[Vec<u8>],
) -> Result<(), TestCaseError> {
    for k in keys.iter().chain(probes) {
        prop_assert_eq!(
            other(k),
            f.might_contain_bytes(k),
            "answers differ for {:?}",
            k
        );
    }
    Ok(())
}

/// The properties every variant's `tests/properties.rs` states, written once:
///
/// - `no_false_negatives_and_round_trip`: `build` (key list → filter) then `check(&f, &keys,
///   &probes)` (no false negatives, round trips, views agree…);
/// - `arbitrary_bytes_decode_or_fail_typed`: `decoders` (bytes → property result) on up to
///   1 KiB of arbitrary bytes;
/// - `mutated_encodings_decode_or_fail_typed`: `decoders` on each of `encodings(&f)` damaged
///   by [`mutations`];
/// - with `union = (empty, union_fn)`: `union_is_the_filter_of_both` from the empty filter.
///
/// The test binary installs the counting allocator its `decoders` pass to
/// [`decode_is_total`]; every test holds [`serial`].
///
/// `viewed: Type, views: [View, …], build: …, union: (…)` fills in the rest for a type with
/// borrowing views: no false negatives, [`round_trips`], the first view answers alike, and
/// [`decoders_agree`] with every view.
///
/// `standard: Type, build: …` fills in the rest for a type with `to_bytes`/`from_bytes` and
/// no other decoder: no false negatives and [`round_trips`], and [`decode_is_total`].
#[macro_export]
macro_rules! variant_properties {
    (
        viewed: $ty:ty,
        views: [$view:ty $(, $more:ty)*],
        build: $build:expr,
        union: ($empty:expr, $union:expr)
        $(,)?
    ) => {
        $crate::variant_properties! {
            build: $build,
            check: |f: &$ty, keys: &[Vec<u8>], probes: &[Vec<u8>]| {
                $crate::props::no_false_negatives(f, keys)?;
                $crate::props::round_trips(f, probes, <$ty>::to_bytes, <$ty>::from_bytes)?;
                let bytes = f.to_bytes();
                let view = <$view>::new(&bytes).unwrap();
                $crate::props::answers_alike(f, |k| view.might_contain(k), keys, probes)
            },
            decoders: |b: &[u8]| {
                let views: &[$crate::props::Accepts<'_>] =
                    &[&|v| <$view>::new(v).is_ok() $(, &|v| <$more>::new(v).is_ok())*];
                $crate::props::decoders_agree(GLOBAL, b, <$ty>::from_bytes, <$ty>::to_bytes, views)
            },
            encodings: |f: &$ty| [f.to_bytes()],
            union: ($empty, $union),
        }
    };
    (standard: $ty:ty, build: $build:expr $(,)?) => {
        $crate::variant_properties! {
            build: $build,
            check: |f: &$ty, keys: &[Vec<u8>], probes: &[Vec<u8>]| {
                $crate::props::no_false_negatives(f, keys)?;
                $crate::props::round_trips(f, probes, <$ty>::to_bytes, <$ty>::from_bytes)
            },
            decoders: |b: &[u8]| {
                $crate::props::decode_is_total(GLOBAL, b, <$ty>::from_bytes, <$ty>::to_bytes)
                    .map(drop)
            },
            encodings: |f: &$ty| [f.to_bytes()],
        }
    };
    (
        build: $build:expr,
        check: $check:expr,
        decoders: $dec:expr,
        encodings: $enc:expr
        $(, union: ($empty:expr, $union:expr))?
        $(,)?
    ) => {
        $crate::props::proptest::proptest! {
            #![proptest_config($crate::props::config())]

            #[test]
            fn no_false_negatives_and_round_trip(
                keys in $crate::props::key_lists(300),
                probes in $crate::props::key_lists(40),
            ) {
                let _g = $crate::props::serial();
                let f = ($build)(&keys);
                ($check)(&f, &keys, &probes)?;
            }

            #[test]
            fn arbitrary_bytes_decode_or_fail_typed(
                bytes in $crate::props::proptest::collection::vec(
                    $crate::props::proptest::prelude::any::<u8>(),
                    0..1024,
                ),
            ) {
                let _g = $crate::props::serial();
                ($dec)(&bytes)?;
            }

            #[test]
            fn mutated_encodings_decode_or_fail_typed(
                keys in $crate::props::key_lists(100),
                muts in $crate::props::mutations(),
            ) {
                let _g = $crate::props::serial();
                for bytes in ($enc)(&($build)(&keys)) {
                    ($dec)(&$crate::props::mutate(&bytes, &muts))?;
                }
            }

            $(
            #[test]
            fn union_is_the_filter_of_both(
                a in $crate::props::key_lists(200),
                b in $crate::props::key_lists(200),
            ) {
                let _g = $crate::props::serial();
                $crate::props::union_is_the_filter_of_both(&$empty, &a, &b, $union)?;
            }
            )?
        }
    };
}

/// Installs the counting allocator [`decode_is_total`] reads as the test binary's global
/// allocator, as a static named `GLOBAL`.
#[macro_export]
macro_rules! counting_allocator {
    () => {
        #[global_allocator]
        static GLOBAL: &$crate::props::StatsAlloc<std::alloc::System> =
            &$crate::props::INSTRUMENTED_SYSTEM;
    };
}

/// The property test `removes_like_a_multiset`: [`removes_like_a_multiset`] on
/// `make(capacity)` for capacities 8–64 (so 24 pool keys collide and repeat) and up to 400
/// [`ops`].
#[macro_export]
macro_rules! multiset_property {
    ($make:expr) => {
        $crate::props::proptest::proptest! {
            #![proptest_config($crate::props::config())]

            #[test]
            fn removes_like_a_multiset(capacity in 8u64..64, ops in $crate::props::ops(400)) {
                let _g = $crate::props::serial();
                $crate::props::removes_like_a_multiset(($make)(capacity), &ops)?;
            }
        }
    };
}
