//! The hot-key check every deleting variant runs: one key inserted again and again costs
//! bounded memory and O(1) time per insert, and `remove` keeps its documented promise after.
//!
//! [`check_hot_key`] inserts [`HOT_DISTINCT`] distinct keys, weighs the filter, then inserts
//! one key [`HOT_REPEATS`] times (each call accepted, or refused with the error the variant
//! documents for a hot key), then removes it once per accepted insert, then inserts and
//! removes it in turn [`HOT_CHURN`] times. It asserts:
//!
//! - the filter's [`size_in_bytes`](bloomlab_core::Filter::size_in_bytes) after the repeats
//!   is at most [`HOT_GROWTH`] (1.1×) what it was after the distinct keys alone;
//! - each phase takes less than [`HOT_TIME_BOUND`] (times [`time_factor`]): a loose bound,
//!   two orders of magnitude above what linear work costs in a test build (about 0.1 µs per
//!   insert at opt-level 1), which work quadratic in the number of repeats (a sorted list of
//!   copies) or a kick walk per refusal (about 20 µs, 20 s for the phase) cannot meet;
//! - no distinct key ever tests negative, and every remove of an accepted copy succeeds; the
//!   variant's own closure checks what its docs promise for the hot key after the removes.

use std::time::{Duration, Instant};

use bloomlab_core::RemovableFilter;
use bloomlab_core::error::Error;

/// Distinct keys inserted before the hot key (`u64` 0, 1, 2, …).
pub const HOT_DISTINCT: u64 = 100_000;

/// Inserts of the hot key.
pub const HOT_REPEATS: u64 = 1_000_000;

/// Insert-then-remove pairs of the hot key after its removes.
pub const HOT_CHURN: u64 = 100_000;

/// The most the filter may grow over the repeats: its size after them is at most 1.1× its
/// size after the distinct keys alone.
pub const HOT_GROWTH: f64 = 1.1;

/// Wall time each phase may take in a test build on a loaded 2-core machine; see the module
/// docs for why it is this loose and what it still catches.
pub const HOT_TIME_BOUND: Duration = Duration::from_secs(5);

/// Factor on [`HOT_TIME_BOUND`] under an emulator (`BLOOMLAB_EMULATED=1`, the cross-target
/// CI jobs run the tests under QEMU, tens of times slower).
pub const EMULATED_FACTOR: u32 = 50;

/// The hot key.
pub const HOT_KEY: &[u8] = b"the one hot key";

/// [`EMULATED_FACTOR`] when `BLOOMLAB_EMULATED=1`, else 1.
pub fn time_factor() -> u32 {
    match std::env::var("BLOOMLAB_EMULATED") {
        Ok(v) if v == "1" => EMULATED_FACTOR,
        _ => 1,
    }
}

/// What [`check_hot_key`] measured.
#[derive(Clone, Debug, PartialEq)]
pub struct HotKeyReport {
    /// Inserts of the hot key the filter accepted.
    pub accepted: u64,
    /// Inserts it refused with the documented error.
    pub refused: u64,
    /// Wall time of the [`HOT_REPEATS`] inserts.
    pub inserts: Duration,
    /// Wall time of the removes (one per accepted insert).
    pub removes: Duration,
    /// Wall time of the [`HOT_CHURN`] insert-then-remove pairs.
    pub churn: Duration,
    /// `size_in_bytes` after the distinct keys.
    pub bytes_distinct: usize,
    /// `size_in_bytes` after the repeats.
    pub bytes_after: usize,
}

/// Run the check on an empty filter `f` (sized for at least [`HOT_DISTINCT`] keys, or
/// growing). `refusal` says whether an insert error is the one the variant documents for a
/// hot key (any other error fails the check); `after_removes` asserts the variant's promise
/// for the hot key once every accepted copy was removed. Prints the figures.
pub fn check_hot_key<F: RemovableFilter>(
    mut f: F,
    refusal: impl Fn(&Error) -> bool,
    after_removes: impl FnOnce(&F),
) -> HotKeyReport {
    let name = std::any::type_name::<F>();
    for i in 0..HOT_DISTINCT {
        f.insert_bytes(&i.to_le_bytes()).expect("distinct keys fit");
    }
    let bytes_distinct = f.size_in_bytes();
    let bound = HOT_TIME_BOUND * time_factor();
    let insert_hot = |f: &mut F| match f.insert_bytes(HOT_KEY) {
        Ok(()) => true,
        Err(e) if refusal(&e) => false,
        Err(e) => panic!("{name}: a hot-key insert failed with an undocumented error: {e}"),
    };
    let start = Instant::now();
    let accepted = (0..HOT_REPEATS).filter(|_| insert_hot(&mut f)).count() as u64;
    let inserts = start.elapsed();
    let bytes_after = f.size_in_bytes();
    assert!(
        f.might_contain_bytes(HOT_KEY),
        "{name}: the hot key tests negative"
    );
    assert!(
        (0..HOT_DISTINCT).all(|i| f.might_contain_bytes(&i.to_le_bytes())),
        "{name}: a distinct key tests negative after the repeats"
    );
    let start = Instant::now();
    for c in 0..accepted {
        assert!(
            f.remove_bytes(HOT_KEY),
            "{name}: remove {c} of {accepted} refused"
        );
    }
    let removes = start.elapsed();
    assert_eq!(f.len(), HOT_DISTINCT, "{name}: len after the removes");
    let start = Instant::now();
    for _ in 0..HOT_CHURN {
        if insert_hot(&mut f) {
            assert!(f.remove_bytes(HOT_KEY), "{name}: churn remove refused");
        }
    }
    let churn = start.elapsed();
    assert_eq!(f.len(), HOT_DISTINCT, "{name}: len after the churn");
    assert!(
        (0..HOT_DISTINCT).all(|i| f.might_contain_bytes(&i.to_le_bytes())),
        "{name}: a distinct key tests negative after the removes"
    );
    after_removes(&f);
    let report = HotKeyReport {
        accepted,
        refused: HOT_REPEATS - accepted,
        inserts,
        removes,
        churn,
        bytes_distinct,
        bytes_after,
    };
    println!(
        "{name}: {HOT_DISTINCT} distinct keys ({bytes_distinct} bytes), then one key \
         {HOT_REPEATS} times: {accepted} accepted, {} refused, {:.3} s ({:.1} ns each), \
         {bytes_after} bytes ({:.4}x); {accepted} removes {:.3} s; {HOT_CHURN} insert+remove \
         pairs {:.3} s; time bound {:?} (factor {})",
        report.refused,
        inserts.as_secs_f64(),
        inserts.as_nanos() as f64 / HOT_REPEATS as f64,
        bytes_after as f64 / bytes_distinct as f64,
        removes.as_secs_f64(),
        churn.as_secs_f64(),
        bound,
        time_factor(),
    );
    assert!(
        bytes_after as f64 <= HOT_GROWTH * bytes_distinct as f64,
        "{name}: {bytes_after} bytes after the repeats, {bytes_distinct} before"
    );
    for (phase, took) in [("inserts", inserts), ("removes", removes), ("churn", churn)] {
        assert!(
            took < bound,
            "{name}: the hot key's {phase} took {took:?} (bound {bound:?})"
        );
    }
    report
}
