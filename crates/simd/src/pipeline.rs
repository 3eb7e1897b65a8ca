//! The batched-operation drivers: [`prefetch`], and [`pipeline`] / [`pipeline_chunks`], which
//! compute each item's hash `D` items before the item is answered, so `D` cache misses are in
//! flight at once and a slow (keyed) hash overlaps the memory latency of earlier items.

/// Ask the CPU to start loading the cache line holding `*p` into all cache levels. A hint:
/// no fault, no visible effect; a no-op where no prefetch instruction is available.
#[inline(always)]
pub fn prefetch<T>(p: &T) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` is an `unsafe fn` only because it is a `#[target_feature(sse)]`
        // intrinsic; SSE is enabled for this build (checked by the `cfg` above). A prefetch
        // never dereferences in the language sense and cannot fault, and `p` is a valid
        // reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((p as *const T).cast::<i8>()) };
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    {
        let _ = p;
    }
}

/// Batched-operation driver: for every item, in order, call `answer(i, hash(&items[i]))`,
/// but compute each hash `D` items early and pass it to `prefetch_for` right away, so the
/// memory the hash points at is being fetched while the `D` items before it are answered.
/// `hash` is called exactly once per item (plus once more for each of the first `D`
/// positions past the end when `items.len() < D`, whose results are prefetched and dropped);
/// `D = 0` answers each item as soon as it is hashed.
///
/// ```
/// use bloomlab_simd::pipeline;
///
/// let table: Vec<u64> = (0..1000).map(|i| i * i).collect();
/// let keys = [3usize, 999, 0, 42];
/// let mut out = vec![0u64; keys.len()];
/// pipeline::<_, _, 16>(
///     &keys,
///     |&k| k % table.len(),                            // "hash": the slot
///     |&slot| bloomlab_simd::prefetch(&table[slot]), // start fetching it
///     |i, slot| out[i] = table[slot],                   // answer, D items later
/// );
/// assert_eq!(out, [9, 998_001, 0, 1764]);
/// ```
#[inline(always)]
pub fn pipeline<T, H: Copy, const D: usize>(
    items: &[T],
    mut hash: impl FnMut(&T) -> H,
    mut prefetch_for: impl FnMut(&H),
    mut answer: impl FnMut(usize, H),
) {
    let n = items.len();
    if n == 0 {
        return;
    }
    if D == 0 {
        for (i, item) in items.iter().enumerate() {
            answer(i, hash(item));
        }
        return;
    }
    let mut ring: [H; D] = core::array::from_fn(|i| {
        let h = hash(&items[i.min(n - 1)]);
        prefetch_for(&h);
        h
    });
    for i in 0..n {
        let slot = i % D;
        let h = ring[slot];
        if let Some(ahead) = items.get(i + D) {
            let a = hash(ahead);
            prefetch_for(&a);
            ring[slot] = a;
        }
        answer(i, h);
    }
}

/// Keys per call of a chunked hash in [`pipeline_chunks`].
pub const CHUNK: usize = 8;

/// [`pipeline`] for hashes computed [`CHUNK`] items at a time: `hash_chunk(ctx, items, out)`
/// fills `out[i]` with the hash of `items[i]` (at most [`CHUNK`] of them), for a scheme that
/// hashes eight keys in vector lanes (the core crate's `HashScheme::LANES`). Each chunk is
/// hashed and its prefetches issued `D` items before the chunk is answered; `answer` sees
/// the items in order, exactly as with [`pipeline`], so both drivers give the same results.
/// `ctx` is lent to every callback (shared to the hash and the prefetch, exclusively to
/// `answer`), so an insert can write the table the prefetch reads. Panics unless `D` is a
/// positive multiple of [`CHUNK`]; `fill` is any value of `H`: it fills the ring before
/// the first hashes arrive and is never answered.
///
/// ```
/// use bloomlab_simd as simd;
///
/// let items: Vec<u64> = (0..21).collect();
/// let mut out = vec![0; items.len()];
/// simd::pipeline_chunks::<_, u64, u64, 16>(
///     &mut out,
///     &items,
///     0,
///     |_, chunk, hashes| for (h, x) in hashes.iter_mut().zip(chunk) { *h = x * x },
///     |_, _| {},
///     |out, i, h| out[i] = h,
/// );
/// assert_eq!(out, items.iter().map(|x| x * x).collect::<Vec<_>>());
/// ```
#[inline(always)]
pub fn pipeline_chunks<C: ?Sized, T, H: Copy, const D: usize>(
    ctx: &mut C,
    items: &[T],
    fill: H,
    mut hash_chunk: impl FnMut(&C, &[T], &mut [H]),
    mut prefetch_for: impl FnMut(&C, &H),
    mut answer: impl FnMut(&mut C, usize, H),
) {
    // A constant condition: the check compiles away where it holds.
    assert!(
        D >= CHUNK && D.is_multiple_of(CHUNK),
        "D must be a multiple of CHUNK"
    );
    let n = items.len();
    let mut ring = [fill; D];
    // Hash items [from, from + CHUNK) ∩ [0, n) into the ring and prefetch for them.
    let mut ahead = |ctx: &C, from: usize, ring: &mut [H; D]| {
        let to = (from + CHUNK).min(n);
        if from < to {
            let slot = from % D;
            let dst = &mut ring[slot..slot + (to - from)];
            hash_chunk(ctx, &items[from..to], dst);
            for h in dst.iter() {
                prefetch_for(ctx, h);
            }
        }
    };
    for from in (0..D.min(n)).step_by(CHUNK) {
        ahead(ctx, from, &mut ring);
    }
    for start in (0..n).step_by(CHUNK) {
        let slot = start % D;
        let mut current = [fill; CHUNK];
        current.copy_from_slice(&ring[slot..slot + CHUNK]);
        ahead(ctx, start + D, &mut ring);
        for (i, h) in (start..n.min(start + CHUNK)).zip(current) {
            answer(ctx, i, h);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Local 512-bit block
// ---------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipeline_answers_every_item_once_in_order() {
        for n in [0usize, 1, 5, 31, 32, 33, 100] {
            let items: Vec<u64> = (0..n as u64).collect();
            let mut hashed = 0;
            let mut prefetched = 0;
            let mut got = Vec::new();
            pipeline::<_, _, 8>(
                &items,
                |&x| {
                    hashed += 1;
                    x * 3
                },
                |_| prefetched += 1,
                |i, h| got.push((i, h)),
            );
            let want: Vec<(usize, u64)> = (0..n).map(|i| (i, i as u64 * 3)).collect();
            assert_eq!(got, want);
            let extra = if n == 0 { 0 } else { 8usize.saturating_sub(n) };
            assert_eq!(hashed, n + extra);
            assert_eq!(prefetched, hashed);
            let mut direct = Vec::new();
            pipeline::<_, _, 0>(
                &items,
                |&x| x * 3,
                |_| unreachable!(),
                |i, h| direct.push((i, h)),
            );
            assert_eq!(direct, want);
        }
    }

    #[test]
    fn pipeline_chunks_answers_every_item_once_in_order_hashing_each_once() {
        fn run<const D: usize>(n: usize) {
            let items: Vec<u64> = (0..n as u64).collect();
            let mut log = Vec::new();
            pipeline_chunks::<_, _, _, D>(
                &mut log,
                &items,
                u64::MAX,
                |_, chunk, out| {
                    assert!(!chunk.is_empty() && chunk.len() <= CHUNK && out.len() == chunk.len());
                    for (o, &x) in out.iter_mut().zip(chunk) {
                        *o = x * 3;
                    }
                },
                |_, h| assert_ne!(*h, u64::MAX),
                |log: &mut Vec<(usize, u64)>, i, h| log.push((i, h)),
            );
            let want: Vec<(usize, u64)> = (0..n).map(|i| (i, i as u64 * 3)).collect();
            assert_eq!(log, want, "n = {n}, D = {D}");
            // Every item is hashed exactly once (counted through a second run's closures).
            let (mut hashed, mut prefetched) = (0usize, 0usize);
            let mut unit = ();
            pipeline_chunks::<_, _, _, D>(
                &mut unit,
                &items,
                0,
                |_, chunk, out| {
                    hashed += chunk.len();
                    out.fill(1);
                },
                |_, _| prefetched += 1,
                |_, _, _| {},
            );
            assert_eq!((hashed, prefetched), (n, n), "n = {n}, D = {D}");
        }
        for n in [0usize, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100] {
            run::<8>(n);
            run::<16>(n);
            run::<32>(n);
        }
    }
}
