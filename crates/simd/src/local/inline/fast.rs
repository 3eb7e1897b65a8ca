//! [`InlineKernel`]: the part of a [`LocalKernel`] that single operations read, with the
//! inline kernels it runs (the parent module's assembly and the NEON module's functions).

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
use super::KernelMode;
use super::LocalKernel;
#[cfg(target_arch = "x86_64")]
use super::{
    INSERT_CONSTS, InsertConsts, asm_contains_round1, asm_contains_round1_avx512,
    asm_insert_round1_avx512, asm_insert_round1_avx512_six, asm_insert_round1_l2,
    asm_insert_round1_l4, asm_insert_round1_l6, asm_insert_round1_l8,
};
#[cfg(target_has_atomic = "64")]
use crate::SharedLine;

/// The part of a [`LocalKernel`] that single operations read, chosen once per filter: which
/// inline kernel runs (`None` of them when the filter's layout or `k` is served out of line),
/// and the `k` whose constants it reads (their row is found from `k` in a static table, not
/// kept as a pointer). Two bytes, so a filter can keep it beside its table's pointer and
/// length in a 32-byte handle; a lookup then reads 24 bytes of the filter besides the block.
///
/// [`contains`](Self::contains) and [`insert`](Self::insert) answer `Some` when an inline
/// kernel serves this filter — the AVX-512 or AVX2 assembly for `k ≤ 8` on x86-64, the NEON
/// intrinsics for `k ≤ 16` on aarch64 — and `None` otherwise, so the caller takes its one
/// out-of-line path ([`LocalKernel::contains`] there). Where they answer, the answers and
/// blocks are [`local_contains_scalar`](crate::local_contains_scalar)'s and [`local_insert_scalar`](crate::local_insert_scalar)'s for the kernel's `k`.
///
/// ```
/// use bloomlab_simd::{self as simd, InlineKernel, LocalKernel};
///
/// let kernel = LocalKernel::detect(6);
/// let fast = InlineKernel::of(kernel);
/// let mut block = [0u64; 8];
/// match fast.insert(&mut block, 0xdead_beef) {
///     Some(new) => assert!(new), // an inline kernel serves k = 6 on this CPU
///     None => assert!(kernel.insert(&mut block, 0xdead_beef, 6)),
/// }
/// assert!(simd::local_contains_scalar(&block, 0xdead_beef, 6));
/// assert_ne!(fast.contains(&block, 0xdead_beef), Some(false));
/// assert_eq!(InlineKernel::OFF.contains(&block, 0xdead_beef), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct InlineKernel {
    path: InlinePath,
    /// The `k` the kernel serves, at most 16 (0 for [`OFF`](Self::OFF)): the row of the
    /// inserts' and lookups' constants (x86-64) or of the NEON kernels' lane masks (aarch64),
    /// and the NEON inserts' unrolled arm.
    k: u8,
}

const _: () = assert!(core::mem::size_of::<InlineKernel>() == 2);

/// Which inline kernel an [`InlineKernel`] runs. Ordered so that a lookup tells the x86 kernels
/// apart with one compare (`≤ Avx512Round1`: the AVX-512 one; `≤ Avx2L8`: the AVX2 one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
enum InlinePath {
    /// AVX-512, `k ≤ 6`: inserts build three probe pairs.
    #[cfg(target_arch = "x86_64")]
    Avx512Six,
    /// AVX-512, `k = 7, 8`.
    #[cfg(target_arch = "x86_64")]
    Avx512Round1,
    /// AVX2, `k ≤ 8`: inserts build the probes of `k` rounded up to 6, 4, 2 or 8.
    #[cfg(target_arch = "x86_64")]
    Avx2L6,
    #[cfg(target_arch = "x86_64")]
    Avx2L4,
    #[cfg(target_arch = "x86_64")]
    Avx2L2,
    #[cfg(target_arch = "x86_64")]
    Avx2L8,
    /// NEON (aarch64), `k ≤ 8`: one table lookup of the line per four probes.
    #[cfg(target_arch = "aarch64")]
    NeonRound1,
    /// NEON (aarch64), `9 ≤ k ≤ 16`.
    #[cfg(target_arch = "aarch64")]
    NeonRound2,
    /// No inline kernel: the caller's out-of-line path.
    Off,
}

impl InlineKernel {
    /// No inline kernel: every call answers `None`.
    pub const OFF: InlineKernel = InlineKernel {
        path: InlinePath::Off,
        k: 0,
    };

    /// The inserts' and lookups' constants of the kernel's `k` (`INSERT_CONSTS[k]`): an
    /// address computed from the byte `k`, no load (`k & 15`: no bounds test; the inline
    /// kernels serve `k ≤ 8`, and `k` is 0 where none serves).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn consts(self) -> &'static InsertConsts {
        let rows: &'static [InsertConsts; 17] = &INSERT_CONSTS;
        &rows[usize::from(self.k) & 15]
    }

    /// The NEON kernels' lane row of the kernel's `k` (`LANES[k]`; `k ≤ 16`).
    #[cfg(target_arch = "aarch64")]
    #[inline(always)]
    fn lanes(self) -> &'static [u32; 16] {
        let rows: &'static [[u32; 16]; 17] = &super::super::neon::LANES;
        &rows[usize::from(self.k).min(16)]
    }

    /// The inline part of `kernel`: an inline kernel where `kernel` has one for its `k`,
    /// [`OFF`](Self::OFF) otherwise (the portable kernel, `k` past the inline kernels).
    pub fn of(kernel: LocalKernel) -> Self {
        let path = match kernel.mode {
            #[cfg(target_arch = "x86_64")]
            KernelMode::Avx512Round1 if kernel.pairs == 3 => Some(InlinePath::Avx512Six),
            #[cfg(target_arch = "x86_64")]
            KernelMode::Avx512Round1 => Some(InlinePath::Avx512Round1),
            #[cfg(target_arch = "x86_64")]
            KernelMode::Avx2Round1 => Some(match kernel.stores {
                6 => InlinePath::Avx2L6,
                4 => InlinePath::Avx2L4,
                2 => InlinePath::Avx2L2,
                _ => InlinePath::Avx2L8,
            }),
            #[cfg(target_arch = "aarch64")]
            KernelMode::NeonRound1 => Some(InlinePath::NeonRound1),
            #[cfg(target_arch = "aarch64")]
            KernelMode::NeonRound2 => Some(InlinePath::NeonRound2),
            _ => None,
        };
        // Where no inline kernel exists for this architecture, `path` is always `None`.
        let Some(path) = path else {
            return Self::OFF;
        };
        let fast = InlineKernel { path, k: kernel.k };
        // The row found from `k` is the kernel's own (its `k` is at most 16 where an inline
        // kernel serves it).
        #[cfg(target_arch = "x86_64")]
        debug_assert!(*fast.consts() == *kernel.consts);
        #[cfg(target_arch = "aarch64")]
        debug_assert!(*fast.lanes() == *kernel.neon_lanes);
        fast
    }

    /// `"avx512"`, `"avx2"`, `"neon"` or `"off"`: which kernel [`contains`](Self::contains)
    /// and [`insert`](Self::insert) run.
    pub fn name(self) -> &'static str {
        match self.path {
            #[cfg(target_arch = "x86_64")]
            InlinePath::Avx512Six | InlinePath::Avx512Round1 => "avx512",
            #[cfg(target_arch = "x86_64")]
            InlinePath::Avx2L6 | InlinePath::Avx2L4 | InlinePath::Avx2L2 | InlinePath::Avx2L8 => {
                "avx2"
            }
            #[cfg(target_arch = "aarch64")]
            InlinePath::NeonRound1 | InlinePath::NeonRound2 => "neon",
            InlinePath::Off => "off",
        }
    }

    /// [`local_contains_scalar`](crate::local_contains_scalar)'s answer for the kernel's `k`, inlined into the caller, or
    /// `None` where no inline kernel serves it.
    #[inline(always)]
    pub fn contains(self, block: &[u64; 8], h: u32) -> Option<bool> {
        #[cfg(target_arch = "x86_64")]
        {
            if self.path <= InlinePath::Avx512Round1 {
                // SAFETY: the AVX-512 paths come from `LocalKernel::detect`'s AVX-512 modes,
                // chosen only on a CPU with AVX-512F, with `consts` of their `k`.
                return Some(unsafe {
                    asm_contains_round1_avx512(block.as_ptr(), h, self.consts())
                });
            }
            if self.path <= InlinePath::Avx2L8 {
                // SAFETY: the AVX2 paths come from the AVX2 mode, chosen only on a CPU with
                // AVX2; `consts.ones` is the lane row of its `k` (`LANE_ONES[k]`).
                return Some(unsafe {
                    asm_contains_round1(block.as_ptr(), h, &self.consts().ones)
                });
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            if self.path == InlinePath::NeonRound1 {
                return Some(super::super::neon::contains_round1(block, h, self.lanes()));
            }
            if self.path == InlinePath::NeonRound2 {
                return Some(super::super::neon::contains_round2(block, h, self.lanes()));
            }
        }
        let _ = (block, h);
        None
    }

    /// [`contains`](Self::contains) on a line other threads may be ORing bits into (an atomic
    /// filter's): the same answer as the kernel run on the eight words each read once with a
    /// relaxed load (see [`LocalKernel::contains_shared`] for why the x86 kernels may read the
    /// line with vector loads), or `None` where no inline kernel serves it.
    #[cfg(target_has_atomic = "64")]
    #[inline(always)]
    pub fn contains_shared(self, block: &SharedLine, h: u32) -> Option<bool> {
        #[cfg(target_arch = "x86_64")]
        {
            let line = block.0.as_ptr().cast::<u64>();
            if self.path <= InlinePath::Avx512Round1 {
                // SAFETY: as in `contains`, on the 64 bytes of a live, 64-byte aligned
                // `SharedLine`, read by two aligned 32-byte vector loads, atomic per 8-byte word
                // on x86-64 (see `LocalKernel::contains_shared`).
                return Some(unsafe { asm_contains_round1_avx512(line, h, self.consts()) });
            }
            if self.path <= InlinePath::Avx2L8 {
                // SAFETY: as above, with two aligned 32-byte loads on a CPU with AVX2.
                return Some(unsafe { asm_contains_round1(line, h, &self.consts().ones) });
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            if self.path == InlinePath::NeonRound1 || self.path == InlinePath::NeonRound2 {
                return self.contains(&block.load(), h);
            }
        }
        let _ = (block, h);
        None
    }

    /// [`local_insert_scalar`](crate::local_insert_scalar)'s block and result for the kernel's `k`, inlined into the
    /// caller, or `None` (the block untouched) where no inline kernel serves it.
    #[inline(always)]
    pub fn insert(self, block: &mut [u64; 8], h: u32) -> Option<bool> {
        #[cfg(target_arch = "x86_64")]
        {
            let c = self.consts();
            // SAFETY (each branch): the path was chosen by `of` from a mode chosen only on a
            // CPU with its instruction set, with `consts` of its `k`: the AVX-512 six-probe
            // kernel for `k ≤ 6`, the AVX2 ones for `k` at most their probe count (`stores`).
            // Plain compares, the 1 % and 3 % targets' kernels first (a `match` compiles to a
            // jump table: one indirect jump per insert).
            unsafe {
                if self.path == InlinePath::Avx512Six {
                    return Some(asm_insert_round1_avx512_six(block, h, c));
                }
                if self.path == InlinePath::Avx512Round1 {
                    return Some(asm_insert_round1_avx512(block, h, c));
                }
                if self.path == InlinePath::Avx2L6 {
                    return Some(asm_insert_round1_l6(block, h, c));
                }
                if self.path == InlinePath::Avx2L4 {
                    return Some(asm_insert_round1_l4(block, h, c));
                }
                if self.path == InlinePath::Avx2L2 {
                    return Some(asm_insert_round1_l2(block, h, c));
                }
                if self.path == InlinePath::Avx2L8 {
                    return Some(asm_insert_round1_l8(block, h, c));
                }
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            if self.path == InlinePath::NeonRound1 || self.path == InlinePath::NeonRound2 {
                return Some(super::super::neon::insert(block, h, u32::from(self.k)));
            }
        }
        let _ = (block, h);
        None
    }
}
