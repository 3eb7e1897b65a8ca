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
/// The memory is asked for with 16-byte alignment and 64 bytes to spare, and the lines start
/// at the first 64-byte boundary at least 8 bytes into it, where the 8 bytes before the lines
/// hold the allocation's address ([`Lines`] keeps only the lines' pointer and length, 16
/// bytes): asked for with the lines' own 64-byte alignment, the standard library's Unix
/// allocator does not call `calloc` but allocates and then clears every byte itself — 7 ms
/// for a 12 MiB table (10^7 keys at 1 %) where `calloc` of fresh pages takes 5–9 µs. (After
/// the process has freed tables of that size, glibc may serve the next from reused memory,
/// which it must clear: then it costs what writing the table costs.)
///
/// ```
/// let v = bloomlab_simd::zeroed_lines(1 << 20).unwrap(); // 64 MiB, not written
/// assert_eq!(v.len(), 1 << 20);
/// assert!(v[12_345].0.iter().all(|&w| w == 0));
/// assert_eq!(v.as_ptr() as usize % 64, 0);
/// ```
pub fn zeroed_lines(n: usize) -> Option<Lines> {
    let layout = lines_layout(n)?;
    // SAFETY: `layout` has a non-zero size (at least 64 + 64 bytes, for `n` = 0 too).
    let raw = core::ptr::NonNull::new(unsafe { alloc::alloc::alloc_zeroed(layout) })?;
    // SAFETY: the allocation is at least 128 bytes, so `raw + 8` is inside it.
    let after_header = unsafe { raw.add(core::mem::size_of::<*mut u8>()) };
    let offset = core::mem::size_of::<*mut u8>()
        + after_header
            .as_ptr()
            .align_offset(core::mem::align_of::<Line>());
    // A 16-byte aligned address plus 8 is at most 56 bytes below the next 64-byte boundary,
    // so the lines start at most 64 bytes in.
    if offset > LINES_SLACK {
        // SAFETY: `raw` was allocated just above with `layout`.
        unsafe { alloc::alloc::dealloc(raw.as_ptr(), layout) };
        return None;
    }
    // SAFETY: `raw + offset` is 64-byte aligned and `offset + 64·max(n, 1) ≤ bytes`, inside the
    // allocation; the 8 bytes below it, from `raw + offset − 8 ≥ raw`, are inside it too and
    // 8-byte aligned, and no line covers them.
    let start = unsafe {
        let start = raw.add(offset);
        start.cast::<*mut u8>().sub(1).write(raw.as_ptr());
        start.cast::<Line>()
    };
    Some(Lines { start, len: n })
}

/// The allocation of a table of `n` lines ([`zeroed_lines`]): `64·max(n, 1)` bytes of lines
/// (an empty table holds its spare line, [`Lines::fastrange`]) and 64 bytes to spare, 16-byte
/// aligned. `None` where that size overflows.
fn lines_layout(n: usize) -> Option<core::alloc::Layout> {
    let bytes = n
        .max(1)
        .checked_mul(core::mem::size_of::<Line>())?
        .checked_add(LINES_SLACK)?;
    core::alloc::Layout::from_size_align(bytes, LINES_ALLOC_ALIGN).ok()
}

/// Alignment [`zeroed_lines`] asks the allocator for: what `calloc` returns, so that
/// `alloc_zeroed` goes to `calloc`.
const LINES_ALLOC_ALIGN: usize = 16;
/// Bytes [`zeroed_lines`] asks for beyond the lines: room for the allocation's address (8
/// bytes) and then the most a 16-byte aligned address can be below a 64-byte boundary.
const LINES_SLACK: usize = core::mem::align_of::<Line>();

/// An owned, 64-byte aligned table of [`Line`]s (or of [`SharedLine`]s, the same bits
/// shared by threads), always in an allocation of [`zeroed_lines`] (a `Vec<Line>` is
/// copied into one). Derefs to `[T]` (one pointer and one length, as a `Vec`: no test per
/// access); clones as a `Vec`; [`cast`](Lines::cast) turns a table of one kind into the other
/// without a copy.
///
/// Sixteen bytes — the lines' pointer and their number, what a lookup reads — so that a
/// filter holding one stays small: where thousands of filters are resident (one per table
/// file of an LSM tree), their handles share the cache. The allocation's address lies in the
/// eight bytes below the first line, and its size follows from the number of lines, so
/// nothing else needs keeping.
///
/// ```
/// assert_eq!(size_of::<bloomlab_simd::Lines>(), 2 * size_of::<usize>());
/// ```
// `repr(C)`: the pointer and the length, in this order.
#[repr(C)]
pub struct Lines<T: LineKind = Line> {
    /// The first of `len` lines, inside an allocation of [`zeroed_lines`] (whose address is
    /// the pointer stored in the 8 bytes below it), owned; with `len = 0`, one zero line all
    /// the same (the spare line of [`fastrange`](Lines::fastrange)).
    start: core::ptr::NonNull<T>,
    len: usize,
}

const _: () = assert!(core::mem::size_of::<Lines>() == 2 * core::mem::size_of::<usize>());

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
        let layout = lines_layout(self.len).expect("the table was allocated with this layout");
        // SAFETY: every table was made by `zeroed_lines(len)` (a `Vec` is copied into one), which
        // wrote the allocation's address into the 8 bytes below the first line and allocated it
        // with `lines_layout(len)`; it is freed once, here (lines have no destructor to run).
        unsafe {
            let raw = self.start.as_ptr().cast::<*mut u8>().sub(1).read();
            alloc::alloc::dealloc(raw, layout);
        }
    }
}

impl From<Vec<Line>> for Lines<Line> {
    /// The vector's lines, copied into a table of their own ([`zeroed_lines`]; aborts, as a
    /// `Vec` does, if the allocator refuses).
    fn from(v: Vec<Line>) -> Self {
        Lines::from(v.as_slice())
    }
}

impl From<&[Line]> for Lines<Line> {
    /// A copy of the lines in a table of their own ([`zeroed_lines`]; aborts, as a `Vec`
    /// does, if the allocator refuses).
    fn from(v: &[Line]) -> Self {
        let mut t = zeroed_lines(v.len()).unwrap_or_else(|| {
            alloc::alloc::handle_alloc_error(
                lines_layout(v.len()).unwrap_or(core::alloc::Layout::new::<Line>()),
            )
        });
        t.copy_from_slice(v);
        t
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
        Lines::from(&**self)
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

    #[test]
    fn tables_differing_in_one_word_or_in_length_are_not_equal() {
        let a: Lines = (0..4u64).map(|i| Line([i; 8])).collect();
        for line in 0..4 {
            for word in [0, 7] {
                let mut b = a.clone();
                b[line].0[word] ^= 1 << 40;
                assert_ne!(a, b, "{line} {word}");
            }
        }
        let shorter: Lines = (0..3u64).map(|i| Line([i; 8])).collect();
        assert_ne!(a, shorter);
        assert_eq!(a, a.clone());
    }

    #[test]
    fn a_table_is_two_words_and_owns_a_copy_of_what_it_was_made_from() {
        assert_eq!(
            core::mem::size_of::<Lines>(),
            2 * core::mem::size_of::<usize>()
        );
        for n in [0usize, 1, 5, 64] {
            let v: Vec<Line> = (0..n as u64).map(|i| Line([i; 8])).collect();
            let t = Lines::from(v.as_slice());
            assert_eq!(&*t, v.as_slice());
            assert_eq!(t.as_ptr() as usize % 64, 0);
            assert_ne!(t.as_ptr(), v.as_ptr(), "a copy, not the vector's memory");
            let u = Lines::from(v);
            assert_eq!(u, t);
            // The spare line of an empty table is zero and is what fastrange gives.
            if n == 0 {
                assert_eq!(t.fastrange(u32::MAX).0, [0; 8]);
            } else {
                assert_eq!(t.fastrange(u32::MAX).0, [n as u64 - 1; 8]);
            }
        }
    }
}
