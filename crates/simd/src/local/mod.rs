//! The blocked filter's 512-bit block: the probe rule of RocksDB's `FastLocalBloom`
//! (`util/bloom_impl.h`), generalised to any `k` in `1..=64`. A key brings a 32-bit value
//! `h`; probe `i` is bit `(h · M^i mod 2^32) >> 23` of the block (the top 9 bits), with
//! `M = 0x9e37_79b9` ([`LOCAL_MULTIPLIER`], ⌊2^32/φ⌋ rounded to odd, Knuth TAOCP vol. 3
//! §6.4). Bit `j` of the block is bit `j & 63` of word `j >> 6` of its eight `u64`s —
//! equivalently bit `j & 31` of 32-bit word `j >> 5` in little-endian memory order, which is
//! how the vector paths read it: eight probes per AVX2 vector (a multiply, two shifts, two
//! in-lane permutes and a blend to fetch the probed words, one variable shift for the masks,
//! one `vptest`), sixteen per AVX-512 one, no branch per probe.
//!
//! [`local_contains_scalar`] and [`local_insert_scalar`] are the definition. Batches run
//! through [`run_local`] ([`LocalTask`], generic over [`LocalProbe`]); single operations
//! through [`LocalKernel`] (`inline.rs`), whose kernels inline into any caller.

#[cfg(target_arch = "x86_64")]
mod avx2;
mod inline;
#[cfg(test)]
mod tests;

pub use inline::LocalKernel;

#[cfg(target_arch = "x86_64")]
use crate::has_avx2;

/// Multiplier of the local-block probe sequence: `⌊2^32/φ⌋` rounded to odd (RocksDB's
/// `FastLocalBloom` constant). A format constant of every layout that uses [`local_insert`].
pub const LOCAL_MULTIPLIER: u32 = 0x9e37_79b9;

/// Largest `k` the local-block kernels accept (the workspace's `MAX_HASHES`).
pub const LOCAL_MAX_PROBES: u32 = 64;

/// `LOCAL_POWERS[i] = LOCAL_MULTIPLIER^i mod 2^32`: probe `i` of `h` is
/// `(h · LOCAL_POWERS[i]) >> 23`. The powers make the `k` multiplications independent; the
/// AVX2 path loads them eight at a time.
pub const LOCAL_POWERS: [u32; LOCAL_MAX_PROBES as usize] = {
    let mut p = [1u32; LOCAL_MAX_PROBES as usize];
    let mut i = 1;
    while i < p.len() {
        p[i] = p[i - 1].wrapping_mul(LOCAL_MULTIPLIER);
        i += 1;
    }
    p
};

/// Bit of the 512-bit block probed by probe `i` of `h`: the top 9 bits of `h · M^i`.
#[inline(always)]
fn local_bit(h: u32, i: usize) -> u32 {
    h.wrapping_mul(LOCAL_POWERS[i]) >> 23
}

/// The `k` probes of `h` in a 512-bit block, as (64-bit word index, one-bit mask): the
/// layout's definition, which every kernel must match. `k` is clamped to `1..=64`.
#[inline(always)]
pub fn local_probes(h: u32, k: u32) -> impl Iterator<Item = (usize, u64)> {
    let k = k.clamp(1, LOCAL_MAX_PROBES) as usize;
    (0..k).map(move |i| {
        let bit = local_bit(h, i);
        ((bit >> 6) as usize, 1u64 << (bit & 63))
    })
}

/// All `k` probes of `h` hit set bits of `block` (portable definition). `k` is clamped to
/// `1..=64`.
#[inline]
pub fn local_contains_scalar(block: &[u64; 8], h: u32, k: u32) -> bool {
    // `&`, not `&&`: no branch per probe.
    local_probes(h, k).fold(true, |all, (w, mask)| all & (block[w] & mask != 0))
}

/// Set the `k` probe bits of `h` in `block` (portable definition); returns whether any of
/// them was still zero. `k` is clamped to `1..=64`.
#[inline]
pub fn local_insert_scalar(block: &mut [u64; 8], h: u32, k: u32) -> bool {
    let mut new = 0u64;
    for (w, mask) in local_probes(h, k) {
        new |= mask & !block[w];
        block[w] |= mask;
    }
    new != 0
}

/// [`local_contains_scalar`], with AVX2 when the CPU has it (same answer).
#[inline]
pub fn local_contains(block: &[u64; 8], h: u32, k: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of this
        // `#[target_feature(enable = "avx2")]` function beyond its safe signature.
        return unsafe { avx2::local_contains(block, h, k) };
    }
    local_contains_scalar(block, h, k)
}

/// [`local_insert_scalar`], with AVX2 when the CPU has it (same block, same result).
#[inline]
pub fn local_insert(block: &mut [u64; 8], h: u32, k: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of this
        // `#[target_feature(enable = "avx2")]` function beyond its safe signature.
        return unsafe { avx2::local_insert(block, h, k) };
    }
    local_insert_scalar(block, h, k)
}

/// A local-block probe kernel as a type, so that code generic over it compiles to one
/// specialised body per kernel: [`PortableProbe`] (the scalar definition) or `Avx2Probe`
/// (x86-64 only, handed out by [`run_local`] after the CPU was found to have AVX2).
pub trait LocalProbe: Copy {
    /// `"avx2"` or `"portable"`.
    const NAME: &'static str;
    /// [`local_contains_scalar`]'s answer.
    fn contains(self, block: &[u64; 8], h: u32, k: u32) -> bool;
    /// [`local_insert_scalar`]'s result and block.
    fn insert(self, block: &mut [u64; 8], h: u32, k: u32) -> bool;
}

/// The scalar local-block kernels ([`local_contains_scalar`], [`local_insert_scalar`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct PortableProbe;

impl LocalProbe for PortableProbe {
    const NAME: &'static str = "portable";
    #[inline(always)]
    fn contains(self, block: &[u64; 8], h: u32, k: u32) -> bool {
        local_contains_scalar(block, h, k)
    }
    #[inline(always)]
    fn insert(self, block: &mut [u64; 8], h: u32, k: u32) -> bool {
        local_insert_scalar(block, h, k)
    }
}

/// The AVX2 local-block kernels. A value exists only inside [`run_local`], which builds one
/// (the field is private) after `is_x86_feature_detected!("avx2")` said yes, inside a
/// function compiled with AVX2 enabled into which the kernels inline — or, in a build with
/// AVX2 enabled at compile time, anywhere.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub struct Avx2Probe(());

#[cfg(target_arch = "x86_64")]
impl LocalProbe for Avx2Probe {
    const NAME: &'static str = "avx2";
    #[inline(always)]
    fn contains(self, block: &[u64; 8], h: u32, k: u32) -> bool {
        // SAFETY: an `Avx2Probe` is only built by `run_local`, once the CPU was found to have
        // AVX2 or in a build for AVX2 CPUs only: the kernel's only requirement.
        unsafe { avx2::local_contains(block, h, k) }
    }
    #[inline(always)]
    fn insert(self, block: &mut [u64; 8], h: u32, k: u32) -> bool {
        // SAFETY: as in `contains`.
        unsafe { avx2::local_insert(block, h, k) }
    }
}

/// Work generic over the local-block kernel, run by [`run_local`] with the best one this
/// CPU has. Write `run` `#[inline(always)]` so its whole body — hashing, block index,
/// probes, the loop of a batch — is compiled inside the AVX2-enabled caller, with the
/// kernels inlined into it: no call per key.
pub trait LocalTask {
    /// What the work returns.
    type Output;
    /// Do the work with kernel `probe`.
    fn run<P: LocalProbe>(self, probe: P) -> Self::Output;
}

/// Run `task` with the AVX2 kernels if this CPU has them (one cached feature test per
/// call, then one direct call into a body compiled with AVX2 enabled), else with
/// [`PortableProbe`]. Both give the same answers and blocks. Built with AVX2 enabled at
/// compile time (`-C target-feature=+avx2`, or `-C target-cpu=native` on such a CPU), the
/// test and the call disappear: the task inlines into its caller.
///
/// ```
/// use bloomlab_simd::{self as simd, LocalProbe, LocalTask};
///
/// struct Count<'a>(&'a [[u64; 8]], &'a [u32]);
/// impl LocalTask for Count<'_> {
///     type Output = usize;
///     #[inline(always)]
///     fn run<P: LocalProbe>(self, probe: P) -> usize {
///         self.1.iter().zip(self.0).filter(|&(&h, b)| probe.contains(b, h, 6)).count()
///     }
/// }
/// let mut block = [0u64; 8];
/// simd::local_insert(&mut block, 7, 6);
/// assert_eq!(simd::run_local(Count(&[block, [0; 8]], &[7, 7])), 1);
/// ```
#[inline(always)]
pub fn run_local<T: LocalTask>(task: T) -> T::Output {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        // Every CPU this build runs on has AVX2 (the compiler was told so).
        task.run(Avx2Probe(()))
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    {
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of
            // this `#[target_feature(enable = "avx2")]` function.
            return unsafe { run_avx2(task) };
        }
        task.run(PortableProbe)
    }
}

/// `task` with [`Avx2Probe`], compiled with AVX2 enabled so the kernels inline into it.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(all(target_arch = "x86_64", not(target_feature = "avx2")))]
#[target_feature(enable = "avx2")]
unsafe fn run_avx2<T: LocalTask>(task: T) -> T::Output {
    task.run(Avx2Probe(()))
}

// ---------------------------------------------------------------------------------------
// Single operations without a call: inline-assembly kernels
