//! A `Lines` table gives its memory back when it drops, whichever way it was made (zeroed, taken
//! from a `Vec`, cloned, cast to shared lines and back): the bytes live under a counting
//! allocator return to where they were.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};

use bloomlab_simd::{Line, Lines, SharedLine, zeroed_lines};

/// The system allocator, counting the bytes it has handed out and not yet had back.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to `System` unchanged; the counter has no effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Relaxed);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Bytes live after `make` built a table and it dropped, against before (the only test of this
/// binary, so no other allocation runs meanwhile).
fn leaked(make: impl FnOnce() -> Lines) -> isize {
    let before = LIVE.load(Relaxed);
    let t = make();
    assert!(
        LIVE.load(Relaxed) - before >= (t.len() * 64) as isize,
        "the table is counted"
    );
    drop(t);
    LIVE.load(Relaxed) - before
}

#[test]
fn a_table_gives_its_memory_back_when_it_drops() {
    assert_eq!(leaked(|| zeroed_lines(1000).unwrap()), 0, "zeroed");
    assert_eq!(
        leaked(|| Lines::from(vec![Line([7; 8]); 300])),
        0,
        "from a Vec"
    );
    let original = zeroed_lines(200).unwrap();
    assert_eq!(leaked(|| original.clone()), 0, "a clone");
    assert_eq!(
        leaked(|| {
            let shared: Lines<SharedLine> = zeroed_lines(100).unwrap().cast();
            shared.cast()
        }),
        0,
        "cast and back"
    );
}
