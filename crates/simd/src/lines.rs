//! Cache-line storage for the blocked filters: [`Line`], its shared (atomic) twin
//! [`SharedLine`], and [`Lines`], a 64-byte-aligned, zero-initialised array of either.

use alloc::vec::Vec;

/// One 64-byte cache line: eight `u64` words, 64-byte aligned (the blocked filter's block).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(C, align(64))]
pub struct Line(pub [u64; 8]);

const _: () = assert!(core::mem::size_of::<Line>() == 64 && core::mem::align_of::<Line>() == 64);

/// A [`Line`] that threads share: eight [`AtomicU64`](std::sync::atomic::AtomicU64) words,
/// 64-byte aligned, the same bits in the same order (an atomic blocked filter's block).
/// [`LocalKernel::contains_shared`](crate::LocalKernel::contains_shared) answers from it at
/// the cost of a [`Line`] lookup. Only on targets with 64-bit atomics.
#[cfg(target_has_atomic = "64")]
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct SharedLine(pub [core::sync::atomic::AtomicU64; 8]);

#[cfg(target_has_atomic = "64")]
const _: () =
    assert!(core::mem::size_of::<SharedLine>() == 64 && core::mem::align_of::<SharedLine>() == 64);

#[cfg(target_has_atomic = "64")]
impl SharedLine {
    /// A shared line holding `line`'s words.
    pub fn new(line: Line) -> Self {
        SharedLine(line.0.map(core::sync::atomic::AtomicU64::new))
    }

    /// The eight words, each read once with a relaxed load.
    #[inline(always)]
    pub fn load(&self) -> [u64; 8] {
        core::array::from_fn(|i| self.0[i].load(core::sync::atomic::Ordering::Relaxed))
    }
}

/// `n` zeroed [`Line`]s from the allocator's zeroed allocation (`calloc`), so a large table
/// costs microseconds to create — the operating system supplies zero pages as they are first
/// touched — instead of a pass writing every byte. `None` if `n` lines do not fit in memory
/// or the allocator refuses.
///
/// The memory is asked for with 16-byte alignment and 48 bytes to spare, and the lines start
/// at its first 64-byte boundary ([`Lines`]): asked for with the lines' own 64-byte
/// alignment, the standard library's Unix allocator does not call `calloc` but allocates and
/// then clears every byte itself — 7 ms for a 12 MiB table (10^7 keys at 1 %) where
/// `calloc` of fresh pages takes 5–9 µs. (After the process has freed tables of that size,
/// glibc may serve the next from reused memory, which it must clear: then it costs what
/// writing the table costs.)
///
/// ```
/// let v = bloomlab_simd::zeroed_lines(1 << 20).unwrap(); // 64 MiB, not written
/// assert_eq!(v.len(), 1 << 20);
/// assert!(v[12_345].0.iter().all(|&w| w == 0));
/// assert_eq!(v.as_ptr() as usize % 64, 0);
/// ```
pub fn zeroed_lines(n: usize) -> Option<Lines> {
    // An empty table still holds one line's memory, its spare line ([`Lines::fastrange`]).
    let bytes = n
        .max(1)
        .checked_mul(core::mem::size_of::<Line>())?
        .checked_add(LINES_SLACK)?;
    let layout = core::alloc::Layout::from_size_align(bytes, LINES_ALLOC_ALIGN).ok()?;
    // SAFETY: `layout` has a non-zero size (at least 64 + 48 bytes, for `n` = 0 too).
    let raw = core::ptr::NonNull::new(unsafe { alloc::alloc::alloc_zeroed(layout) })?;
    let offset = raw.as_ptr().align_offset(core::mem::align_of::<Line>());
    // A 16-byte aligned address is at most 48 bytes below the next 64-byte boundary.
    if offset > LINES_SLACK {
        // SAFETY: `raw` was allocated just above with `layout`.
        unsafe { alloc::alloc::dealloc(raw.as_ptr(), layout) };
        return None;
    }
    // SAFETY: `raw + offset` is 64-byte aligned and `offset + 64·max(n, 1) ≤ bytes`, inside the
    // allocation.
    let start = unsafe { raw.add(offset) }.cast::<Line>();
    Some(Lines {
        start,
        len: n,
        raw,
        layout,
    })
}

/// Alignment [`zeroed_lines`] asks the allocator for: what `calloc` returns, so that
/// `alloc_zeroed` goes to `calloc`.
const LINES_ALLOC_ALIGN: usize = 16;
/// Bytes [`zeroed_lines`] asks for beyond the lines: the most a 16-byte aligned address can
/// be below a 64-byte boundary.
const LINES_SLACK: usize = core::mem::align_of::<Line>() - LINES_ALLOC_ALIGN;

/// An owned, 64-byte aligned table of [`Line`]s (or of [`SharedLine`]s, the same bits
/// shared by threads): the lines of a zeroed allocation of [`zeroed_lines`], or of a
/// `Vec<Line>`. Derefs to `[T]` (one pointer and one length, as a `Vec`: no test per access);
/// clones as a `Vec`; [`cast`](Lines::cast) turns a table of one kind into the other without
/// a copy.
// `repr(C)`: the pointer and the length first, in this order, so a filter that holds a table
// first keeps both in its first cache line (every lookup reads them).
#[repr(C)]
pub struct Lines<T: LineKind = Line> {
    /// The first of `len` lines, inside the allocation `raw` of `layout`, owned; with
    /// `len = 0`, one zero line all the same (the spare line of [`fastrange`](Lines::fastrange)).
    start: core::ptr::NonNull<T>,
    len: usize,
    raw: core::ptr::NonNull<u8>,
    /// Never zero-sized: every table owns an allocation.
    layout: core::alloc::Layout,
}

/// The two kinds of line a [`Lines`] table holds: 64 bytes, 64-byte aligned, valid when
/// all-zero, and the same eight 64-bit words in the same order ([`Line`] and [`SharedLine`];
/// sealed).
///
/// # Safety
/// Implementors must have exactly that layout and bit validity.
pub unsafe trait LineKind: sealed::Sealed + Sized {}

// SAFETY: `Line` is `repr(C, align(64))` over `[u64; 8]` (asserted above).
unsafe impl LineKind for Line {}
// SAFETY: `SharedLine` is `repr(C, align(64))` over `[AtomicU64; 8]` (asserted above), and an
// `AtomicU64` has the size, alignment and bit validity of a `u64`.
#[cfg(target_has_atomic = "64")]
unsafe impl LineKind for SharedLine {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Line {}
    #[cfg(target_has_atomic = "64")]
    impl Sealed for super::SharedLine {}
}

impl<T: LineKind> Lines<T> {
    /// The same table as lines of kind `U`, without a copy: an owned filter's table becomes
    /// an atomic filter's and back in O(1). Sound because the table is owned (no reference
    /// into it exists) and both kinds have the same layout and bits.
    pub fn cast<U: LineKind>(self) -> Lines<U> {
        let this = core::mem::ManuallyDrop::new(self);
        Lines {
            start: this.start.cast(),
            len: this.len,
            raw: this.raw,
            layout: this.layout,
        }
    }
}

// SAFETY: `Lines` owns its lines exactly as a `Vec<T>` does (no aliasing pointer exists
// outside it; shared access is only through `&[T]`), and both line kinds are `Send + Sync`.
unsafe impl<T: LineKind + Send> Send for Lines<T> {}
// SAFETY: as above.
unsafe impl<T: LineKind + Sync> Sync for Lines<T> {}

impl<T: LineKind> Lines<T> {
    /// Line `⌊x · len / 2^32⌋` of the table (fastrange of a 32-bit `x`, Lemire 2019): always
    /// a line of the table, so no bounds test, which is measurable on a lookup in cache
    /// (`docs/design/simd.md`). With fewer than `2^32` lines the
    /// product fits in 64 bits and the index is below `len`; with more, the wrapped
    /// product's high half is below `2^32 ≤ len` (lines past `2^32` are not reached). An empty
    /// table gives its spare line, which lies outside `0..len`: the slice never shows it, only
    /// `fastrange` reaches it (every table holds at least one line's memory; the filters never
    /// have an empty table).
    #[inline(always)]
    pub fn fastrange(&self, x: u32) -> &T {
        let i = self.fastrange_index(x);
        // SAFETY: `i < len` (see `fastrange_index`), and `start` points to `len` lines; or
        // `len = 0` and `i = 0`, and `start` points to the table's spare line.
        unsafe { &*self.start.as_ptr().add(i) }
    }

    /// [`fastrange`](Self::fastrange), mutably.
    #[inline(always)]
    pub fn fastrange_mut(&mut self, x: u32) -> &mut T {
        let i = self.fastrange_index(x);
        // SAFETY: as in `fastrange`; `&mut self` makes the borrow unique.
        unsafe { &mut *self.start.as_ptr().add(i) }
    }

    /// The index of [`fastrange`](Self::fastrange): below `len` when `len > 0`, 0 when the
    /// table is empty.
    #[inline(always)]
    fn fastrange_index(&self, x: u32) -> usize {
        ((u64::from(x).wrapping_mul(self.len as u64)) >> 32) as usize
    }
}

impl<T: LineKind> core::ops::Deref for Lines<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `start` points to `len` initialised lines (zeroed memory is a valid `Line`)
        // inside the allocation this value owns, alive until it drops.
        unsafe { core::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

impl<T: LineKind> core::ops::DerefMut for Lines<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`; `&mut self` makes the borrow unique.
        unsafe { core::slice::from_raw_parts_mut(self.start.as_ptr(), self.len) }
    }
}

impl<T: LineKind> Drop for Lines<T> {
    fn drop(&mut self) {
        if self.layout.size() != 0 {
            // SAFETY: `raw` was allocated by the global allocator with `layout` (by
            // `zeroed_lines`, or by the `Vec` it was taken from) and is freed once, here
            // (`Line` has no destructor to run).
            unsafe { alloc::alloc::dealloc(self.raw.as_ptr(), self.layout) };
        }
    }
}

impl From<Vec<Line>> for Lines<Line> {
    /// The vector's allocation, taken over without a copy.
    fn from(v: Vec<Line>) -> Self {
        if v.is_empty() {
            // No line to stand for the spare one ([`Lines::fastrange`]): an empty table of
            // its own, which has it.
            return zeroed_lines(0).unwrap_or_else(|| {
                alloc::alloc::handle_alloc_error(core::alloc::Layout::new::<Line>())
            });
        }
        let mut v = core::mem::ManuallyDrop::new(v);
        let (len, cap) = (v.len(), v.capacity());
        let start = core::ptr::NonNull::new(v.as_mut_ptr()).expect("a Vec's pointer is non-null");
        // A `Vec<Line>` with capacity `cap > 0` (here `cap ≥ len ≥ 1`) holds an allocation of
        // exactly this layout.
        let layout = core::alloc::Layout::array::<Line>(cap).expect("the Vec exists");
        Lines {
            start,
            len,
            raw: start.cast(),
            layout,
        }
    }
}

impl FromIterator<Line> for Lines<Line> {
    fn from_iter<I: IntoIterator<Item = Line>>(iter: I) -> Self {
        Lines::from(iter.into_iter().collect::<Vec<Line>>())
    }
}

impl<'a, T: LineKind> IntoIterator for &'a Lines<T> {
    type Item = &'a T;
    type IntoIter = core::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T: LineKind> IntoIterator for &'a mut Lines<T> {
    type Item = &'a mut T;
    type IntoIter = core::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl Clone for Lines<Line> {
    fn clone(&self) -> Self {
        Lines::from(self.to_vec())
    }
}

impl PartialEq for Lines<Line> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Lines<Line> {}

impl<T: LineKind + core::fmt::Debug> core::fmt::Debug for Lines<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_lines_are_aligned_zero_owned_and_compare_by_content() {
        for n in [0usize, 1, 2, 3, 1000, 1 << 18] {
            let mut a = zeroed_lines(n).unwrap();
            assert_eq!(a.len(), n);
            assert_eq!(a.as_ptr() as usize % 64, 0, "n = {n}");
            assert!(a.iter().all(|l| l.0 == [0; 8]));
            if n > 0 {
                a[n - 1].0[7] = u64::MAX; // the last word is inside the allocation
                a[0].0[0] = 1;
            }
            let b = a.clone();
            assert_eq!(a, b);
            assert_eq!(b.as_ptr() as usize % 64, 0);
            let c: Lines = a.iter().copied().collect();
            assert_eq!(c, a);
            assert_eq!(Lines::from(a.to_vec()), a);
            // The same bits as shared lines, and back, without a copy.
            let ptr = a.as_ptr() as usize;
            let shared: Lines<SharedLine> = a.cast();
            assert_eq!(shared.as_ptr() as usize, ptr);
            if n > 0 {
                assert_eq!(shared[0].load()[0], 1);
                shared[n - 1].0[7].fetch_and(1, std::sync::atomic::Ordering::Relaxed);
            }
            let back: Lines = shared.cast();
            if n > 0 {
                assert_eq!(back[n - 1].0[7], 1);
            }
        }
        assert!(
            zeroed_lines(usize::MAX / 32).is_none(),
            "no overflow, no abort"
        );
    }
}
