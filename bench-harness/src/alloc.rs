//! A counting global allocator: the harness reports the real heap bytes a structure holds
//! (live bytes after building minus live bytes before), the same way for our filters, the
//! peers and the exact set, whatever each one claims about itself.
//!
//! Why our own allocator rather than `stats_alloc`: the count must be per thread, so that work
//! on other threads (tests running in parallel, a progress bar) never blurs the bytes of the
//! build being measured; `stats_alloc` keeps process-wide counters. This module is the only
//! `unsafe` code of the harness.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator plus a live-byte counter.
#[derive(Debug)]
pub struct CountingAlloc;

thread_local! {
    // Per thread, so concurrent work (tests run in parallel) does not blur a measurement; a
    // build is measured on the thread that performs it. Const-initialised without a
    // destructor, so the allocator may touch it at any time.
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn add(delta: isize) {
    let _ = LIVE.try_with(|c| c.set(c.get() + delta));
}

// SAFETY: every method forwards to `System` unchanged and only updates a counter.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        add(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            add(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Bytes allocated minus bytes freed by the current thread so far.
pub fn live_bytes() -> isize {
    LIVE.try_with(Cell::get).unwrap_or(0)
}
