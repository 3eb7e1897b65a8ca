//! The checks every parallel build's tests make, written once: a build equals inserting the
//! keys one by one (at every thread count, into an empty or a non-empty filter, through
//! `from_keys`), and a large build runs on the threads it is given and says so in its report.
//! [`parallel_suite!`](crate::parallel_suite) turns them into a variant's tests.

use std::fmt::Debug;

use bloomlab_core::{Error, Filter, Key};
use bloomlab_parallel::ParallelReport;

use crate::{ThreadsSeen, TracedKey, check_parallel_report};

/// `n` distinct keys spread over the whole `u64` range (`i · φ · 2^64`, wrapping).
pub fn spread_keys(n: u64) -> Vec<u64> {
    (0..n)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect()
}

/// `empty()` after the keys were inserted one by one through [`Filter`].
pub fn sequential<F: Filter, K: Key>(empty: F, keys: &[K]) -> F {
    let mut f = empty;
    for key in keys {
        key.with_key_bytes(|b| f.insert_bytes(b)).expect("insert");
    }
    f
}

/// For each thread count of `threads`, `build(empty(), keys, threads)` is the filter that
/// inserting `keys` one by one into `empty()` builds.
pub fn check_builds_alike<F, K>(
    keys: &[K],
    empty: impl Fn() -> F,
    build: impl Fn(&mut F, &[K], usize),
    threads: &[usize],
) where
    F: Filter + PartialEq + Debug,
    K: Key,
{
    let want = sequential(empty(), keys);
    for &t in threads {
        let mut f = empty();
        build(&mut f, keys, t);
        assert_eq!(f, want, "{} keys, {t} threads", keys.len());
    }
}

/// A parallel build equals inserting the keys one by one: at sizes below, at and above the
/// per-thread minimum (32 768 keys), lengths that split unevenly, 0 to 7 threads (more than
/// the machine may have); into a filter that already holds a key; and through `from_keys`,
/// which refuses no keys with [`Error::ZeroItems`]. `empty(n)` is a filter sized for `n`
/// keys at 1 %, as `from_keys` sizes it.
pub fn check_matches_sequential<F: Filter + PartialEq + Debug>(
    empty: impl Fn(u64) -> F,
    build: impl Fn(&mut F, &[u64], usize) -> ParallelReport,
    from_keys: impl Fn(&[u64]) -> Result<F, Error>,
) {
    for n in [1u64, 65_535, 65_536, 200_003] {
        let keys = spread_keys(n);
        let build = |f: &mut F, keys: &[u64], t| {
            build(f, keys, t);
        };
        check_builds_alike(&keys, || empty(n), build, &[0, 1, 2, 3, 7]);
        let want = sequential(empty(n), &keys);
        assert_eq!(from_keys(&keys).expect("from_keys"), want, "n = {n}");
        // Into a filter that already holds a key.
        let mut f = sequential(empty(n), &["before"]);
        build(&mut f, &keys, 4);
        assert_eq!(f, sequential(want, &["before"]), "n = {n}, one key before");
    }
    assert!(matches!(from_keys(&[]), Err(Error::ZeroItems)));
}

/// A build of 300 000 keys asked for 2, 3 or 4 threads hashes them on exactly that many (seen
/// from outside the build) and reports it ([`check_parallel_report`], with the exchange
/// bound `max_queued`, `None` for a build that exchanges nothing); below 65 536 keys the
/// calling thread does it alone and the report says so. Each build equals the sequential one.
pub fn check_threads_and_report<F: Filter + PartialEq + Debug>(
    empty: impl Fn(u64) -> F,
    build: impl Fn(&mut F, &[TracedKey<'_>], usize) -> ParallelReport,
    max_queued: Option<usize>,
) {
    let raw = spread_keys(300_000);
    let want = sequential(empty(300_000), &raw);
    for threads in [2usize, 3, 4] {
        let seen = ThreadsSeen::default();
        let mut f = empty(300_000);
        let report = build(&mut f, &seen.keys(&raw), threads);
        assert_eq!(f, want, "{threads} threads");
        check_parallel_report(&report, &seen, threads, raw.len(), max_queued);
    }
    let seen = ThreadsSeen::default();
    let mut f = empty(300_000);
    let report = build(&mut f, &seen.keys(&raw[..65_535]), 4);
    assert_eq!((seen.count(), report.threads), (1, 1));
    assert_eq!(report, ParallelReport::one_thread(65_535));
}

/// Inside the crate of a variant whose parallel build hands batches between threads
/// ([`bloomlab_parallel::exchange`]), the test that one batch per inbox at most — senders
/// waiting (and applying their own inbox) all the time — still builds the sequential filter
/// with 2, 3 and 6 threads. The variant's private `insert_exchanged(keys, threads,
/// max_queued)` must be in scope.
#[macro_export]
macro_rules! full_inbox_test {
    ($ty:ident) => {
        #[test]
        fn a_full_inbox_makes_the_sender_wait_without_losing_a_key() {
            let keys: Vec<u64> = (0..300_000u64)
                .map(|i| i.wrapping_mul(0xD6E8_FEB8_6659_FD93))
                .collect();
            $crate::parallel::check_builds_alike(
                &keys,
                || $ty::with_fpr(300_000, 0.01).unwrap(),
                |f: &mut $ty, keys: &[u64], t| {
                    f.insert_exchanged(keys, t, 1);
                },
                &[2, 3, 6],
            );
        }
    };
}

/// The tests of a variant's parallel build (`from_keys`, `insert_parallel_with_threads`):
/// [`check_matches_sequential`] and [`check_threads_and_report`] with the variant's
/// `with_fpr(n, 0.01)`; `max_queued` is the bound on a thread's inbox the report must state
/// (`None` for a build that exchanges nothing).
#[macro_export]
macro_rules! parallel_suite {
    ($ty:ident, max_queued: $max_queued:expr) => {
        #[test]
        fn parallel_build_is_identical_to_sequential_inserts() {
            $crate::parallel::check_matches_sequential(
                |n| $ty::with_fpr(n, 0.01).unwrap(),
                |f: &mut $ty, keys, threads| f.insert_parallel_with_threads(keys, threads),
                |keys| $ty::from_keys(keys, 0.01),
            );
        }

        #[test]
        fn a_large_build_runs_on_the_threads_it_is_given_and_reports_it() {
            $crate::parallel::check_threads_and_report(
                |n| $ty::with_fpr(n, 0.01).unwrap(),
                |f: &mut $ty, keys, threads| f.insert_parallel_with_threads(keys, threads),
                $max_queued,
            );
        }
    };
}
