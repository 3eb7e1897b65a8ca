//! Heap bytes of a structure: the harness reports the real heap bytes a structure holds (bytes
//! allocated minus bytes freed while it is built), the same way for our filters, the peers
//! and the exact set, whatever each one claims about itself.
//!
//! The counting is `allocation-counter`'s: linking it installs its counting global allocator,
//! and [`allocation_counter::measure`] returns what the closure allocated and freed on the
//! calling thread only, so work on other threads (tests running in parallel, a progress bar)
//! never blurs the bytes of the build being measured. That crate implements a reallocation as
//! a new allocation, a copy and a free, and a zeroed allocation as an allocation and a fill,
//! so the net bytes are the same as the system allocator's; only a build that grows or
//! zeroes large buffers does that extra work, the same for every entry.

/// Run `f` and return its value with the net heap bytes it left allocated on this thread
/// (allocated minus freed; 0 if it freed more than it allocated).
pub fn net_bytes<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let mut out = None;
    let info = allocation_counter::measure(|| out = Some(f()));
    let value = out.expect("measure runs its closure once");
    (value, usize::try_from(info.bytes_current).unwrap_or(0))
}

/// Run `f` and return its value with the signed net heap bytes it allocated on this thread.
pub fn net_bytes_signed<T>(f: impl FnOnce() -> T) -> (T, i64) {
    let mut out = None;
    let info = allocation_counter::measure(|| out = Some(f()));
    (
        out.expect("measure runs its closure once"),
        info.bytes_current,
    )
}
