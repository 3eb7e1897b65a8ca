//! The local-block kernels for single operations, inlined into the caller: [`LocalKernel`].
//!
//! A function compiled with `#[target_feature(enable = "avx2")]` cannot be inlined into one
//! compiled without it, so through [`run_local`](crate::run_local) every single lookup costs a
//! call, a return and the registers saved around them. An `asm!` block has no such limit: the
//! compiler inlines it wherever it is used and does not need AVX2 enabled to do so (it only
//! passes registers in and out; the CPU is what must support the instructions). So the
//! single-key paths test a byte the filter holds ([`LocalKernel`], chosen when the filter was
//! built) and run the eight-probe kernel inline. This is the one place where intrinsics cannot
//! do the job, and the reason each `asm!` block below exists.
//!
//! The blocks end with `vzeroupper`, so no dirty upper state leaks into the surrounding SSE
//! code; as it clears the upper halves of ymm0–ymm15 whatever held them, every block declares
//! all sixteen clobbered (through their xmm names: the whole register). Declaring fewer is
//! wrong in builds with AVX enabled, where the compiler may keep a 256-bit value in a register
//! across a kernel (`docs/design/simd.md`).

#[cfg(target_arch = "x86_64")]
use super::LOCAL_POWERS;
use super::{local_contains, local_contains_scalar, local_insert, local_insert_scalar};
#[cfg(target_has_atomic = "64")]
use crate::SharedLine;
use crate::{has_avx2, has_avx512vl};

mod fast;
pub use fast::InlineKernel;

/// `LANE_ONES[a]`: `1` in lanes `0..min(a, 8)`, `0` in the others. Shifting a row left by
/// each probe's bit offset gives that probe's one-bit mask, zero for lanes at or past `k` —
/// one operation for the mask and the `k` limit together. Sixteen rows so that `a & 15` is
/// always a valid index (no bounds test per call). A `const`, so each use is a PC-relative
/// address in the caller (a `static` would be reached through the global offset table: one
/// more load per call).
#[cfg(target_arch = "x86_64")]
const LANE_ONES: [[u32; 8]; 16] = {
    let mut t = [[0u32; 8]; 16];
    let mut a = 0;
    while a < 16 {
        let mut i = 0;
        while i < a && i < 8 {
            t[a][i] = 1;
            i += 1;
        }
        a += 1;
    }
    t
};

/// The inserts' constants for one `k` (the AVX-512 inserts' and the AVX2 ones'), reached
/// through one address `{c}` in the assembly (each 64-byte row aligned): `LOCAL_POWERS[0..16]`; the last bit `32·j + 31` of
/// each of a line's sixteen 32-bit words; `past`, 0 in lanes `0..k` and `2^32 − 1` in lanes
/// `k..16` (ORed into the probes' bit positions, it sends every lane at or past `k` out of
/// the line); and the top bit `2^31`.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C, align(64))]
struct InsertConsts {
    pow: [u32; 16],
    tops: [u32; 16],
    past: [u32; 16],
    top_bit: u32,
    _pad: [u32; 7],
    /// `LANE_ONES[k]` (the one-round AVX-512 lookup, `k ≤ 8`).
    ones: [u32; 8],
}

#[cfg(target_arch = "x86_64")]
impl core::fmt::Debug for InsertConsts {
    /// The row's `k` (its first lane past `k`), not its 64 numbers.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let k = self.past.iter().take_while(|&&p| p == 0).count();
        f.debug_struct("InsertConsts").field("k", &k).finish()
    }
}

/// `INSERT_CONSTS[k]` for `k` in `0..=16`. A `const` (see `LANE_ONES`).
#[cfg(target_arch = "x86_64")]
const INSERT_CONSTS: [InsertConsts; 17] = {
    let mut pow = [0u32; 16];
    let mut tops = [0u32; 16];
    let mut j = 0;
    while j < 16 {
        pow[j] = LOCAL_POWERS[j];
        tops[j] = 32 * j as u32 + 31;
        j += 1;
    }
    let row = InsertConsts {
        pow,
        tops,
        past: [0; 16],
        top_bit: 1 << 31,
        _pad: [0; 7],
        ones: [0; 8],
    };
    let mut t = [row; 17];
    let mut k = 0;
    while k < 17 {
        let mut i = k;
        while i < 16 {
            t[k].past[i] = u32::MAX;
            i += 1;
        }
        t[k].ones = LANE_ONES[k & 15];
        k += 1;
    }
    t
};

/// The local-block kernel a filter chose when it was built, for its `k`: the AVX2
/// inline-assembly one (one vector round for `k ≤ 8`, two for `k ≤ 16`, the
/// [`local_contains`] loop beyond) when the CPU has AVX2, else the portable one. A filter
/// keeps it in a field, so each single operation tests one byte it already holds (no
/// global flag to load, no range test of `k`) and runs the kernel inline, with no call.
/// Every kernel gives the same blocks and answers as [`local_contains_scalar`] and
/// [`local_insert_scalar`] for the `k` it was chosen for.
///
/// ```
/// use bloomlab_simd::{self as simd, LocalKernel};
///
/// let kernel = LocalKernel::detect(9);
/// let mut block = [0u64; 8];
/// assert!(kernel.insert(&mut block, 0xdead_beef, 9)); // some bit was new
/// assert!(kernel.contains(&block, 0xdead_beef, 9));
/// let mut other = [0u64; 8];
/// LocalKernel::portable().insert(&mut other, 0xdead_beef, 9);
/// assert_eq!(block, other);
/// assert!(simd::local_contains_scalar(&block, 0xdead_beef, 9));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LocalKernel {
    mode: KernelMode,
    /// The `LANE_ONES` row of the last round for the `k` the kernel was chosen for (row
    /// `k` for one round, `k − 8` for two): looked up once here, so a lookup loads one
    /// pointer instead of computing the row's address from `k`.
    lanes: &'static [u32; 8],
    /// The inserts' constants for `k` (AVX-512 and AVX2).
    #[cfg(target_arch = "x86_64")]
    consts: &'static InsertConsts,
    /// How many probe pairs the AVX-512 inserts build ([`probe_pairs`]); never 3 in the modes
    /// without AVX-512 (0 there, 4 or 8 from `detect_every_pair`).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pairs: u8,
    /// How many probes of their last round the AVX2 inserts build into the line's new bits
    /// ([`store_lanes`]): 2, 4, 6 or 8 (the portable kernels do not read it).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    stores: u8,
    /// The `k` the kernel was chosen for, clamped to `0..=255` (the NEON inserts' unrolled arm).
    #[cfg_attr(not(target_arch = "aarch64"), allow(dead_code))]
    k: u8,
    /// The NEON kernels' lane row for `k` (`neon::LANES[min(k, 16)]`).
    #[cfg(target_arch = "aarch64")]
    neon_lanes: &'static [u32; 16],
}

/// The probes of the last round an AVX2 insert of `k` probes builds: the round's probes
/// rounded up to even (2, 4, 6 or 8), so that one of four kernels per round serves every
/// `k`; a lane past `k` it takes is forced to a position that sets no bit.
fn store_lanes(k: u32) -> u8 {
    let last = if k > 8 { k - 8 } else { k };
    (last.clamp(1, 8).div_ceil(2) * 2) as u8
}

/// The probe pairs an AVX-512 insert of `k` probes builds: three for `k ≤ 6` (the 1 % and 3 %
/// targets' six and five probes), four for `k = 7, 8`, `⌈k/2⌉` for `9 ≤ k ≤ 16`; the lanes
/// past `k` in the last pair carry no bit. Each pair left out saves five 512-bit
/// instructions per insert.
fn probe_pairs(k: u32) -> u8 {
    if k <= 6 {
        3
    } else {
        k.div_ceil(2).min(8) as u8
    }
}

/// The `LANE_ONES` row the inline kernels use for the last round of `k` probes.
fn last_round_lanes(k: u32) -> &'static [u32; 8] {
    #[cfg(target_arch = "x86_64")]
    {
        let rows: &'static [[u32; 8]; 16] = &LANE_ONES;
        &rows[(if k > 8 { k - 8 } else { k } & 15) as usize]
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = k;
        &[0; 8]
    }
}

/// The inserts' constants for `k` probes (AVX-512 and AVX2).
#[cfg(target_arch = "x86_64")]
fn insert_consts(k: u32) -> &'static InsertConsts {
    let rows: &'static [InsertConsts; 17] = &INSERT_CONSTS;
    &rows[k.min(16) as usize]
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum KernelMode {
    /// `k ≤ 8` on a CPU with AVX-512F: lookups fetch the probed words with one 16-lane
    /// permute of the whole line, inserts build the new bits in one 512-bit register.
    Avx512Round1,
    /// AVX2 inline assembly, one round (`k ≤ 8`).
    Avx2Round1,
    /// `9 ≤ k ≤ 16` on a CPU with AVX-512F: lookups run all sixteen probe lanes in one
    /// 512-bit round, inserts build the `⌈k/2⌉` probe pairs `k` needs in one 512-bit
    /// register.
    Avx512Round2,
    /// AVX2 inline assembly, two rounds (`9 ≤ k ≤ 16`).
    Avx2Round2,
    /// AVX2 through [`local_contains`] / [`local_insert`] (`k > 16`).
    Avx2Call,
    /// NEON (aarch64), `k ≤ 8`: two table lookups of the line.
    #[cfg(target_arch = "aarch64")]
    NeonRound1,
    /// NEON (aarch64), `9 ≤ k ≤ 16`: four table lookups of the line.
    #[cfg(target_arch = "aarch64")]
    NeonRound2,
    /// [`local_contains_scalar`] / [`local_insert_scalar`].
    Portable,
}

/// The kernel chosen at construction as a [`LocalProbe`](super::LocalProbe), so code generic over the kernel
/// (a filter's loops over the layouts it reads) takes it as it takes the portable one.
impl super::LocalProbe for LocalKernel {
    const NAME: &'static str = "chosen for this CPU";
    #[inline(always)]
    fn contains(self, block: &[u64; 8], h: u32, k: u32) -> bool {
        LocalKernel::contains(self, block, h, k)
    }
    #[inline(always)]
    fn insert(self, block: &mut [u64; 8], h: u32, k: u32) -> bool {
        LocalKernel::insert(&self, block, h, k)
    }
}

impl LocalKernel {
    /// The fastest kernel this CPU runs for `k` probes per key.
    pub fn detect(k: u32) -> Self {
        #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
        if (1..=16).contains(&k) {
            // NEON is part of the aarch64 baseline: no run-time test.
            return LocalKernel {
                mode: if k <= 8 {
                    KernelMode::NeonRound1
                } else {
                    KernelMode::NeonRound2
                },
                ..Self::portable_for(k)
            };
        }
        let kernel = Self::avx2(k);
        let wide = match kernel.mode {
            KernelMode::Avx2Round1 => KernelMode::Avx512Round1,
            KernelMode::Avx2Round2 => KernelMode::Avx512Round2,
            _ => return kernel,
        };
        // The one-round AVX-512 lookup runs on 256-bit registers (AVX512VL): see
        // `asm_contains_round1_avx512`.
        if !has_avx512vl() {
            return kernel;
        }
        LocalKernel {
            mode: wide,
            pairs: probe_pairs(k),
            ..kernel
        }
    }

    /// The fastest kernel for `k` that needs no more than AVX2 (the portable one without
    /// AVX2): what [`detect`](Self::detect) returns on an AVX2-only CPU, for tests and
    /// measurements beside the AVX-512 one.
    pub fn avx2(k: u32) -> Self {
        let mode = if !has_avx2() {
            KernelMode::Portable
        } else if k == 0 {
            // Clamped to 1 by the scalar definition; the called kernel clamps the same way.
            KernelMode::Avx2Call
        } else if k <= 8 {
            KernelMode::Avx2Round1
        } else if k <= 16 {
            KernelMode::Avx2Round2
        } else {
            KernelMode::Avx2Call
        };
        LocalKernel {
            mode,
            ..Self::portable_for(k)
        }
    }

    /// [`detect`](Self::detect)'s kernel with its AVX-512 inserts building every probe pair of
    /// their round — four for `k ≤ 8`, eight for `9 ≤ k ≤ 16` — whatever `k` (the lanes past
    /// `k` carry no bit): the same bits and answers, for measuring what building only
    /// `⌈k/2⌉` pairs saves (`examples/insert_pairs.rs` of `bloomlab-blocked`).
    pub fn detect_every_pair(k: u32) -> Self {
        let kernel = Self::detect(k);
        let pairs = if kernel.mode == KernelMode::Avx512Round2 {
            8
        } else {
            4
        };
        LocalKernel { pairs, ..kernel }
    }

    /// The portable scalar kernel, whatever the CPU and `k`.
    pub fn portable() -> Self {
        Self::portable_for(0)
    }

    /// The portable kernel with the tables of `k` looked up (what every constructor starts
    /// from).
    fn portable_for(k: u32) -> Self {
        LocalKernel {
            mode: KernelMode::Portable,
            lanes: last_round_lanes(k),
            #[cfg(target_arch = "x86_64")]
            consts: insert_consts(k),
            pairs: 0,
            stores: store_lanes(k),
            k: k.min(255) as u8,
            #[cfg(target_arch = "aarch64")]
            neon_lanes: &super::neon::LANES[k.min(16) as usize],
        }
    }

    /// `"avx512"`, `"avx2"`, `"neon"` or `"portable"`.
    pub fn name(self) -> &'static str {
        match self.mode {
            KernelMode::Portable => "portable",
            #[cfg(target_arch = "aarch64")]
            KernelMode::NeonRound1 | KernelMode::NeonRound2 => "neon",
            KernelMode::Avx512Round1 | KernelMode::Avx512Round2 => "avx512",
            _ => "avx2",
        }
    }

    /// [`local_contains_scalar`]'s answer for the `k` this kernel was chosen for, inlined
    /// into the caller. (Pass that `k`: the inline-assembly kernels use the lane row chosen
    /// with them and ignore the argument, the others read it, so with another `k` the answer
    /// may differ from the scalar one — but every memory access stays inside `block` and the
    /// kernel's tables.)
    #[inline(always)]
    pub fn contains(self, block: &[u64; 8], h: u32, k: u32) -> bool {
        // The common cases first, as plain compares and branches (a `match` compiles to a
        // jump table: one indirect jump per lookup).
        #[cfg(target_arch = "x86_64")]
        {
            if self.mode == KernelMode::Avx512Round1 {
                // SAFETY: this mode is chosen only by `detect`, on a CPU with AVX-512F (and
                // so AVX2).
                return unsafe { asm_contains_round1_avx512(block.as_ptr(), h, self.consts) };
            }
            if self.mode == KernelMode::Avx2Round1 {
                // SAFETY: this mode is chosen only by `avx2`, on a CPU with AVX2.
                return unsafe { asm_contains_round1(block.as_ptr(), h, self.lanes) };
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            if self.mode == KernelMode::NeonRound1 {
                return super::neon::contains_round1(block, h, self.neon_lanes);
            }
        }
        self.contains_other(block, h, k)
    }

    /// [`contains`](Self::contains) through the kernel's twin in `#[target_feature]`
    /// intrinsics (the AVX2 one-round one: the [`local_contains`] kernel), which a caller compiled
    /// without the kernel's features calls — the inline kernels' reason to be assembly. The
    /// same answers; for measuring what the call costs (the lab's `blocked_kernels`).
    #[inline(always)]
    pub fn contains_called(self, block: &[u64; 8], h: u32, k: u32) -> bool {
        #[cfg(target_arch = "x86_64")]
        // SAFETY (each arm): the AVX-512 modes are chosen only on a CPU with AVX-512F, the
        // other modes but `Portable` only on a CPU with AVX2.
        match self.mode {
            KernelMode::Avx512Round1 => unsafe {
                return contains_round1_avx512_called(block, h, self.consts);
            },
            KernelMode::Avx512Round2 => unsafe {
                return contains_round2_avx512(block, h, self.lanes);
            },
            KernelMode::Portable => {}
            KernelMode::Avx2Round2 => unsafe {
                return contains_round2_avx2_called(block, h, self.lanes);
            },
            _ => unsafe {
                return super::avx2::local_contains(block, h, k);
            },
        }
        // The portable kernel, or NEON (which a caller never has to call).
        self.contains_other(block, h, k)
    }

    /// [`contains`](Self::contains) on a block that other threads may be ORing bits into
    /// (an atomic filter's), inlined into the caller: the same answer as the kernel run on
    /// the eight words each read once with a relaxed load, at the cost of the owned
    /// filter's lookup (one 64-byte or two 32-byte vector loads of the line, no copy).
    ///
    /// The inline-assembly kernels read the line straight from the atomics' memory. That is
    /// sound because the block is 64-byte aligned and x86-64 loads of aligned data never
    /// tear below 8 bytes (each 8-byte part of a vector load reads a value the word held at
    /// some point of its modification order — the guarantee a relaxed load gives), the
    /// `asm!` block is opaque to the compiler (it assumes only that the block reads memory),
    /// and bits only ever go from 0 to 1, so any mix of old and new words is a set of bits
    /// that were all inserted. The other kernels read the words with relaxed loads.
    #[cfg(target_has_atomic = "64")]
    #[inline(always)]
    pub fn contains_shared(&self, block: &SharedLine, h: u32, k: u32) -> bool {
        // The common cases first, as in `contains`.
        #[cfg(target_arch = "x86_64")]
        {
            let line = block.0.as_ptr().cast::<u64>();
            if self.mode == KernelMode::Avx512Round1 {
                // SAFETY: this mode is chosen only on a CPU with AVX-512F and AVX512VL; the
                // pointer is to the 64 bytes of a live, 64-byte aligned `SharedLine` (an
                // `AtomicU64` has the size, alignment and bit validity of a `u64`), read by two
                // aligned 32-byte vector loads, atomic per 8-byte word on x86-64 (see above).
                return unsafe { asm_contains_round1_avx512(line, h, self.consts) };
            }
            if self.mode == KernelMode::Avx2Round1 {
                // SAFETY: as above, on a CPU with AVX2, with two aligned 32-byte loads.
                return unsafe { asm_contains_round1(line, h, self.lanes) };
            }
        }
        self.contains_shared_other(block, h, k)
    }

    /// The other kernels, out of line: inlined (even the two-round one alone), they keep
    /// LLVM from moving the kernel test out of a loop of lookups, which then costs 8–10 % in
    /// L1 at `k ≤ 8` (a taken branch per lookup); out of line, `9 ≤ k ≤ 16` pays a call.
    #[cfg(target_has_atomic = "64")]
    #[inline(never)]
    fn contains_shared_other(&self, block: &SharedLine, h: u32, k: u32) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let line = block.0.as_ptr().cast::<u64>();
            if self.mode == KernelMode::Avx512Round2 {
                // SAFETY: as in `contains_shared` (one aligned 64-byte load).
                return unsafe { asm_contains_round2_avx512(line, h, self.lanes) };
            }
            if self.mode == KernelMode::Avx2Round2 {
                // SAFETY: as in `contains_shared`.
                return unsafe { asm_contains_round2(line, h, self.lanes) };
            }
        }
        self.contains_other(&block.load(), h, k)
    }

    /// The other kernels, out of line (see
    /// [`contains_shared_other`](Self::contains_shared_other)).
    #[inline(never)]
    fn contains_other(self, block: &[u64; 8], h: u32, k: u32) -> bool {
        match self.mode {
            // Out of line in any case, the AVX-512 two-round kernel gains nothing from being
            // assembly: in intrinsics it measured faster (`docs/design/simd.md`).
            #[cfg(target_arch = "x86_64")]
            // SAFETY: this mode is chosen only by `detect`, on a CPU with AVX-512F.
            KernelMode::Avx512Round2 => unsafe { contains_round2_avx512(block, h, self.lanes) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: this mode is chosen only by `detect`, on a CPU with AVX2.
            KernelMode::Avx2Round2 => unsafe { asm_contains_round2(block.as_ptr(), h, self.lanes) },
            #[cfg(target_arch = "aarch64")]
            KernelMode::NeonRound1 => super::neon::contains_round1(block, h, self.neon_lanes),
            #[cfg(target_arch = "aarch64")]
            KernelMode::NeonRound2 => super::neon::contains_round2(block, h, self.neon_lanes),
            KernelMode::Portable => super::contains_unrolled(block, h, k)
                .unwrap_or_else(|| local_contains_scalar(block, h, k)),
            _ => local_contains(block, h, k),
        }
    }

    /// [`insert`](Self::insert) through the kernel's twin in `#[target_feature]` intrinsics
    /// (the AVX2 ones: [`local_insert`]'s kernel), which a caller compiled without the
    /// kernel's features calls: the same blocks and results; for measuring what the call
    /// costs (the lab's `blocked_kernels`).
    #[inline(always)]
    pub fn insert_called(&self, block: &mut [u64; 8], h: u32, k: u32) -> bool {
        #[cfg(target_arch = "x86_64")]
        // SAFETY (each arm): the AVX-512 modes are chosen only on a CPU with AVX-512F, with
        // `consts` those of their `k` and `pairs` at least `⌈k/2⌉`; the other modes but
        // `Portable` only on a CPU with AVX2.
        match self.mode {
            KernelMode::Avx512Round1 | KernelMode::Avx512Round2 => unsafe {
                let round2 = self.mode == KernelMode::Avx512Round2;
                return insert_avx512_called(block, h, self.consts, self.pairs, round2);
            },
            KernelMode::Portable => {}
            _ => unsafe {
                return super::avx2::local_insert(block, h, k);
            },
        }
        // The portable kernel, or NEON (which a caller never has to call).
        self.insert(block, h, k)
    }

    /// [`local_insert_scalar`]'s block and result for the `k` this kernel was chosen for,
    /// inlined into the caller (see [`contains`](Self::contains)).
    #[inline(always)]
    pub fn insert(&self, block: &mut [u64; 8], h: u32, k: u32) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            // Three pairs only in the one-round AVX-512 mode (`pairs` is 0 in the others):
            // one test of one byte for the 1 % and 3 % targets' kernel.
            if self.pairs == 3 {
                // SAFETY: `pairs` is 3 only in `KernelMode::Avx512Round1`, chosen only by
                // `detect`, on a CPU with AVX-512F.
                return unsafe { asm_insert_round1_avx512_six(block, h, self.consts) };
            }
            if self.mode == KernelMode::Avx512Round1 {
                // SAFETY: this mode is chosen only by `detect`, on a CPU with AVX-512F.
                return unsafe { asm_insert_round1_avx512(block, h, self.consts) };
            }
            if self.mode == KernelMode::Avx2Round1 {
                // SAFETY: this mode is chosen only by `avx2`, on a CPU with AVX2, which sets
                // `consts` to the constants of its `k` and `stores` to `k` rounded up to
                // even: each kernel takes at least the `k` probes.
                return unsafe {
                    // Six first: the 1 % and 3 % targets' six and five probes.
                    // The widest kernel last: it covers any `k ≤ 8`.
                    if self.stores == 6 {
                        asm_insert_round1_l6(block, h, self.consts)
                    } else if self.stores == 4 {
                        asm_insert_round1_l4(block, h, self.consts)
                    } else if self.stores == 2 {
                        asm_insert_round1_l2(block, h, self.consts)
                    } else {
                        asm_insert_round1_l8(block, h, self.consts)
                    }
                };
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            if self.mode == KernelMode::NeonRound1 || self.mode == KernelMode::NeonRound2 {
                return super::neon::insert(block, h, u32::from(self.k));
            }
        }
        self.insert_other(block, h, k)
    }

    /// The other kernels, out of line (as for lookups).
    #[inline(never)]
    fn insert_other(&self, block: &mut [u64; 8], h: u32, k: u32) -> bool {
        match self.mode {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: this mode is chosen only by `avx2`, on a CPU with AVX2, with `consts`
            // those of its `k` and `stores` `k − 8` rounded up to even (as in `insert`).
            KernelMode::Avx2Round2 => unsafe {
                match self.stores {
                    2 => asm_insert_round2_l2(block, h, self.consts),
                    4 => asm_insert_round2_l4(block, h, self.consts),
                    6 => asm_insert_round2_l6(block, h, self.consts),
                    _ => asm_insert_round2_l8(block, h, self.consts),
                }
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: this mode is chosen only by `detect`, on a CPU with AVX-512F.
            KernelMode::Avx512Round2 => unsafe {
                match self.pairs {
                    5 => asm_insert_round2_avx512_p5(block, h, self.consts),
                    6 => asm_insert_round2_avx512_p6(block, h, self.consts),
                    7 => asm_insert_round2_avx512_p7(block, h, self.consts),
                    _ => asm_insert_round2_avx512_p8(block, h, self.consts),
                }
            },
            KernelMode::Portable => super::insert_unrolled(block, h, k)
                .unwrap_or_else(|| local_insert_scalar(block, h, k)),
            _ => local_insert(block, h, k),
        }
    }
}

/// The first steps of every one-round kernel, as one template string: from `h` (read from
/// memory at `{h}`), the eight probes' 32-bit word indices in `ymm1`, those words of the line
/// at `{blk}` in `ymm2`, and the probes' one-bit masks (zero past `k`, from the `LANE_ONES`
/// row at `{lanes}`) in `ymm3`; `ymm0` is clobbered. See `asm_contains_round1` for the steps.
#[cfg(target_arch = "x86_64")]
macro_rules! round1_words_and_masks {
    () => {
        concat!(
            "vpbroadcastd ymm0, dword ptr [{h}]\n",
            "vpmulld ymm0, ymm0, [{pow}]\n",
            "vpsrld ymm1, ymm0, 28\n",
            "vpermd ymm2, ymm1, [{blk}]\n",
            "vpermd ymm3, ymm1, [{blk} + 32]\n",
            "vblendvps ymm2, ymm2, ymm3, ymm0\n",
            "vpslld ymm3, ymm0, 4\n",
            "vpsrld ymm3, ymm3, 27\n",
            "vmovdqu ymm0, [{lanes}]\n",
            "vpsllvd ymm3, ymm0, ymm3\n",
        )
    };
}

/// The one-round inline lookup (`k ≤ 8`; see [`LocalKernel::contains`] for other `k`).
///
/// `x = h · M^i` lane-wise (`vpmulld` with the first eight powers); the probed 32-bit word is
/// `x >> 28`, fetched from the two halves of the line by two `vpermd` (which use the
/// index's low 3 bits) and a `vblendvps` on `x`'s sign bit (the index's bit 3); the bit inside
/// it is `(x << 4) >> 27`; the masks are the `LANE_ONES[k]` row shifted by those offsets (zero
/// past `k`); one `vptest` answers whether every mask bit is set.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn asm_contains_round1(block: *const u64, h: u32, lanes: &[u32; 8]) -> bool {
    let hit: u8;
    // `h` goes through memory: a broadcast from memory is a plain load, where moving a
    // register into a vector and broadcasting it costs two shuffle-port operations.
    let hm = h;
    // SAFETY: the caller guarantees AVX2. Every address read is inside a live reference:
    // `block` is 64 bytes (reads at offsets 0 and 32, 32 bytes each; `vpermd`'s memory
    // operand needs no alignment), `LOCAL_POWERS` has 64 entries (the first 8 are read), and
    // `lanes` is a 32-byte row. The block only reads memory, uses no stack, and
    // clobbers xmm0–xmm3 (declared) and the flags; `vzeroupper` clears the upper halves it
    // dirtied, so the surrounding SSE code pays no transition penalty.
    unsafe {
        // asm!, not intrinsics: it inlines into a lookup compiled without AVX2, where its
        // intrinsics twin (`local_contains`) is a call per lookup, measured slower by
        // `cargo run --release -p bloomlab-lab --example blocked_kernels -- 6`.
        crate::asm_then_vzeroupper!(
            round1_words_and_masks!(),
            "vptest ymm2, ymm3",
            "setc {hit}",
            "vzeroupper",
            h = in(reg) &hm,
            pow = in(reg) LOCAL_POWERS.as_ptr(),
            blk = in(reg) block,
            lanes = in(reg) lanes.as_ptr(),
            hit = out(reg_byte) hit,
            options(pure, readonly),
        );
    }
    // SAFETY: see `asm_contains_round1_avx512`.
    unsafe { crate::flag_to_bool(hit) }
}

/// [`asm_contains_round1`] with the probed words fetched by one AVX-512 two-table permute
/// (`vpermi2d` over the line's two 32-byte halves: sixteen 32-bit words, indexed by the low four
/// bits of each lane of `x >> 28`, so no second permute and no blend), and each probe's mask by
/// one `vprolvd` of the lane row by `x >> 23` (a rotation counts modulo 32, so the shift needs
/// no `& 31`; a lane of 0 past `k` stays 0). Every instruction works on 256-bit registers
/// (AVX512VL): on a Zen 4 a 512-bit `vpermd` of the whole line read as fast in cache, but the
/// `vzeroupper` after a 512-bit instruction waited for it, so out of cache (a line still
/// arriving) each lookup held up the next — 62.7 against 54.6 ns per lookup over many filters
/// (`docs/design/blocked.md`). `h` comes from a register (`vmovd` and a broadcast), which read
/// faster there than a broadcast from memory. The constants (powers and lane row) come from the
/// kernel's `InsertConsts`, one pointer.
///
/// # Safety
/// The CPU must support AVX-512F and AVX512VL.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn asm_contains_round1_avx512(block: *const u64, h: u32, c: &InsertConsts) -> bool {
    let hit: u8;
    let hm = h;
    // SAFETY: the caller guarantees AVX-512F and AVX512VL. Every address read is inside a live
    // reference: `block` is 64 bytes (two 32-byte reads, at 0 and 32; no alignment needed)
    // and `c` is a 256-byte `InsertConsts` (its powers at 0..32 and lane row at 224..256 are
    // read). The block only reads memory, uses no stack and no mask register, and
    // clobbers zmm0–zmm3 (declared through their xmm names, which the compiler treats as
    // the same registers) and the flags; `vzeroupper` clears the upper parts it dirtied.
    unsafe {
        // asm!, not intrinsics: it inlines into a lookup compiled without AVX-512, where its
        // intrinsics twin (`contains_round1_avx512_called`) is a call per lookup, measured
        // slower by `cargo run --release -p bloomlab-lab --example blocked_kernels -- 6`.
        crate::asm_then_vzeroupper!(
            "vpbroadcastd ymm0, {h:e}",
            "vpmulld ymm0, ymm0, [{c}]",
            "vpsrld ymm1, ymm0, 28",
            "vmovdqu ymm2, [{blk}]",
            "vpermi2d ymm1, ymm2, [{blk} + 32]",
            "vpsrld ymm3, ymm0, 23",
            "vmovdqu ymm0, [{c} + 224]",
            "vprolvd ymm3, ymm0, ymm3",
            "vptest ymm1, ymm3",
            "setc {hit}",
            "vzeroupper",
            h = in(reg) hm,
            c = in(reg) c,
            blk = in(reg) block,
            hit = out(reg_byte) hit,
            options(pure, readonly),
        );
    }
    // SAFETY: `setc` wrote 0 or 1 to the byte.
    unsafe { crate::flag_to_bool(hit) }
}

/// The two-round lookup (`9 ≤ k ≤ 16`) as one AVX-512 round: all sixteen probes' `x` in
/// one 512-bit register (`LOCAL_POWERS[0..16]`), their words fetched by one `vpermd` of the
/// line, their masks from the 16-lane row `LANE_ONES[8] : lanes` (lanes `k..16` zero), the
/// misses `mask & !word` (`vpandnd`) folded to 256 bits and tested by one `vptest`: 14
/// instructions where the AVX2 kernel takes about 22.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn asm_contains_round2_avx512(block: *const u64, h: u32, lanes: &[u32; 8]) -> bool {
    let hit: u8;
    let hm = h;
    // SAFETY: the caller guarantees AVX-512F. Every address read is inside a live reference:
    // `block` is 64 bytes (one 64-byte read), `LOCAL_POWERS` has 64 entries (the first 16 are
    // read), `LANE_ONES[8]` and `lanes` are 32-byte rows. The block only reads memory, uses
    // no stack and no mask register, and clobbers zmm0–zmm3 (declared through their xmm
    // names) and the flags; `vzeroupper` clears the upper parts it dirtied.
    unsafe {
        // asm!, not intrinsics: it reads a line other threads write (`contains_shared`), which
        // an `asm!` block may do (see there) and a vector load in intrinsics may not (a data
        // race); owned lines take its intrinsics twin, `contains_round2_avx512`.
        crate::asm_then_vzeroupper!(
            "vpbroadcastd zmm0, dword ptr [{h}]",
            "vpmulld zmm0, zmm0, zmmword ptr [{pow}]",
            "vpsrld zmm1, zmm0, 28",
            "vpermd zmm2, zmm1, zmmword ptr [{blk}]",
            "vpslld zmm3, zmm0, 4",
            "vpsrld zmm3, zmm3, 27",
            "vmovdqu ymm0, ymmword ptr [{full}]",
            "vinserti64x4 zmm0, zmm0, ymmword ptr [{lanes}], 1",
            "vpsllvd zmm3, zmm0, zmm3",
            "vpandnd zmm2, zmm2, zmm3",
            "vextracti64x4 ymm0, zmm2, 1",
            "vpor ymm2, ymm2, ymm0",
            "vptest ymm2, ymm2",
            "setz {hit}",
            "vzeroupper",
            h = in(reg) &hm,
            pow = in(reg) LOCAL_POWERS.as_ptr(),
            blk = in(reg) block,
            full = in(reg) LANE_ONES[8].as_ptr(),
            lanes = in(reg) lanes.as_ptr(),
            hit = out(reg_byte) hit,
            options(pure, readonly),
        );
    }
    hit != 0
}

/// [`asm_contains_round1_avx512`] in `#[target_feature]` intrinsics (the same steps).
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn contains_round1_avx512_called(block: &[u64; 8], h: u32, c: &InsertConsts) -> bool {
    use core::arch::x86_64::*;
    // SAFETY: 32 readable bytes at `c.pow` and `c.ones`, 64 at `block`; unaligned loads.
    let (pow, ones, line) = unsafe {
        (
            _mm256_loadu_si256(c.pow.as_ptr().cast()),
            _mm256_loadu_si256(c.ones.as_ptr().cast()),
            _mm512_loadu_si512(block.as_ptr().cast()),
        )
    };
    let x = _mm256_mullo_epi32(_mm256_set1_epi32(h as i32), pow);
    let idx = _mm512_zextsi256_si512(_mm256_srli_epi32::<28>(x));
    let words = _mm512_castsi512_si256(_mm512_permutexvar_epi32(idx, line));
    let shift = _mm512_zextsi256_si512(_mm256_srli_epi32::<23>(x));
    let masks = _mm512_castsi512_si256(_mm512_rolv_epi32(_mm512_zextsi256_si512(ones), shift));
    _mm256_testc_si256(words, masks) != 0
}

/// [`asm_contains_round2_avx512`] in `#[target_feature]` intrinsics (the same steps): the
/// owned lines' two-round AVX-512 lookup ([`LocalKernel::contains`] calls it out of line).
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn contains_round2_avx512(block: &[u64; 8], h: u32, lanes: &[u32; 8]) -> bool {
    use core::arch::x86_64::*;
    // SAFETY: 64 readable bytes at `LOCAL_POWERS` (of 256) and `block`, 32 at `LANE_ONES[8]`
    // and `lanes`; unaligned loads.
    let (pow, line, full, last) = unsafe {
        (
            _mm512_loadu_si512(LOCAL_POWERS.as_ptr().cast()),
            _mm512_loadu_si512(block.as_ptr().cast()),
            _mm256_loadu_si256(LANE_ONES[8].as_ptr().cast()),
            _mm256_loadu_si256(lanes.as_ptr().cast()),
        )
    };
    let x = _mm512_mullo_epi32(_mm512_set1_epi32(h as i32), pow);
    let words = _mm512_permutexvar_epi32(_mm512_srli_epi32::<28>(x), line);
    let bit = _mm512_srli_epi32::<27>(_mm512_slli_epi32::<4>(x));
    let ones = _mm512_inserti64x4::<1>(_mm512_zextsi256_si512(full), last);
    let miss = _mm512_andnot_si512(words, _mm512_sllv_epi32(ones, bit));
    _mm512_test_epi32_mask(miss, miss) == 0
}

/// The two-round inline lookup (`9 ≤ k ≤ 16`): probes 0–7 with the full lane row, probes
/// 8–15 with `LANE_ONES[k − 8]`; each round's misses are `mask & !word` (`vpandn`), ORed,
/// and one `vptest` answers.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn asm_contains_round2(block: *const u64, h: u32, lanes: &[u32; 8]) -> bool {
    let hit: u8;
    // SAFETY: as in `asm_contains_round1`, with `LOCAL_POWERS[0..16]` read and the rows
    // `LANE_ONES[8]` and `lanes`; xmm0–xmm5 are declared clobbered.
    unsafe {
        // asm!, not intrinsics: out of line as it is, its intrinsics twin
        // (`contains_round2_avx2_called`) measured slower, by
        // `cargo run --release -p bloomlab-lab --example blocked_kernels -- 10` (and `-- 16`).
        crate::asm_then_vzeroupper!(
            "vmovd xmm0, {h:e}",
            "vpbroadcastd ymm0, xmm0",
            "vpmulld ymm4, ymm0, [{pow} + 32]",
            "vpmulld ymm0, ymm0, [{pow}]",
            "vmovdqu ymm5, [{blk}]",
            "vmovdqu ymm3, [{blk} + 32]",
            // round 0: misses into ymm2
            "vpsrld ymm1, ymm0, 28",
            "vpermd ymm2, ymm1, ymm5",
            "vpermd ymm1, ymm1, ymm3",
            "vblendvps ymm2, ymm2, ymm1, ymm0",
            "vpslld ymm1, ymm0, 4",
            "vpsrld ymm1, ymm1, 27",
            "vmovdqu ymm0, [{full}]",
            "vpsllvd ymm0, ymm0, ymm1",
            "vpandn ymm2, ymm2, ymm0",
            // round 1: misses ORed into ymm2
            "vpsrld ymm1, ymm4, 28",
            "vpermd ymm0, ymm1, ymm5",
            "vpermd ymm1, ymm1, ymm3",
            "vblendvps ymm0, ymm0, ymm1, ymm4",
            "vpslld ymm1, ymm4, 4",
            "vpsrld ymm1, ymm1, 27",
            "vmovdqu ymm3, [{lanes}]",
            "vpsllvd ymm3, ymm3, ymm1",
            "vpandn ymm0, ymm0, ymm3",
            "vpor ymm2, ymm2, ymm0",
            "vptest ymm2, ymm2",
            "setz {hit}",
            "vzeroupper",
            h = in(reg) h,
            pow = in(reg) LOCAL_POWERS.as_ptr(),
            blk = in(reg) block,
            full = in(reg) LANE_ONES[8].as_ptr(),
            lanes = in(reg) lanes.as_ptr(),
            hit = out(reg_byte) hit,
            options(pure, readonly, nostack),
        );
    }
    hit != 0
}

/// [`asm_contains_round2`] in `#[target_feature]` intrinsics (the same steps, no branch).
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn contains_round2_avx2_called(block: &[u64; 8], h: u32, lanes: &[u32; 8]) -> bool {
    use core::arch::x86_64::*;
    // SAFETY: 64 readable bytes at `LOCAL_POWERS` (of 256) and `block`, 32 at `LANE_ONES[8]`
    // and `lanes`; unaligned loads.
    let (p0, p1, lo, hi, full, last) = unsafe {
        (
            _mm256_loadu_si256(LOCAL_POWERS.as_ptr().cast()),
            _mm256_loadu_si256(LOCAL_POWERS.as_ptr().add(8).cast()),
            _mm256_loadu_si256(block.as_ptr().cast()),
            _mm256_loadu_si256(block.as_ptr().add(4).cast()),
            _mm256_loadu_si256(LANE_ONES[8].as_ptr().cast()),
            _mm256_loadu_si256(lanes.as_ptr().cast()),
        )
    };
    let hv = _mm256_set1_epi32(h as i32);
    // The misses of one round: each probed word (`x >> 28` of the line: two permutes and a
    // blend on bit 3, the sign of `x`) and-not its mask (the lane row shifted by the bit).
    let misses = |x: __m256i, ones: __m256i| {
        let idx = _mm256_srli_epi32::<28>(x);
        let words = _mm256_castps_si256(_mm256_blendv_ps(
            _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(lo, idx)),
            _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(hi, idx)),
            _mm256_castsi256_ps(x),
        ));
        let bit = _mm256_srli_epi32::<27>(_mm256_slli_epi32::<4>(x));
        _mm256_andnot_si256(words, _mm256_sllv_epi32(ones, bit))
    };
    let m = _mm256_or_si256(
        misses(_mm256_mullo_epi32(hv, p0), full),
        misses(_mm256_mullo_epi32(hv, p1), last),
    );
    _mm256_testz_si256(m, m) != 0
}

/// The one-round AVX-512 inserts' first step: the eight probes' bit positions, `h · M^i >> 23`
/// (`2^32 − 1` in the lanes past `k`: ORed with the `past` row of the `InsertConsts` at `{c}`),
/// stored as eight 32-bit slots at `{buf}`. `h` comes from a register (`{h}`): one instruction
/// where a store and a broadcast load make two, and an insert's cost out of cache is its share
/// of the reorder window (see `avx512_or_new_bits`). Uses zmm0.
#[cfg(target_arch = "x86_64")]
macro_rules! avx512_round1_positions {
    () => {
        concat!(
            "vpbroadcastd zmm0, {h:e}\n",
            "vpmulld ymm0, ymm0, [{c}]\n",
            "vpsrld ymm0, ymm0, 23\n",
            "vpor ymm0, ymm0, [{c} + 128]\n",
            "vmovdqu [{buf}], ymm0\n",
        )
    };
}

/// The first steps of `avx512_or_new_bits` (see there): the line's new bits in zmm4, from the
/// probes' bit positions at `{buf}` — the first pair at offset 0, ORed into zmm4 by a plain
/// `vpord` (no zeroing first), then one more pair at each byte offset in `$rest`. Uses
/// zmm2–zmm6 and the word tops and top bit of the `InsertConsts` at `{c}`.
#[cfg(target_arch = "x86_64")]
macro_rules! avx512_line_bits {
    ($rest:literal) => {
        concat!(
            "vmovdqu64 zmm2, [{c} + 64]\n",
            "vpbroadcastd zmm3, dword ptr [{c} + 192]\n",
            "vpsubd zmm5, zmm2, dword ptr [{buf}]{{1to16}}\n",
            "vpsubd zmm6, zmm2, dword ptr [{buf} + 4]{{1to16}}\n",
            "vpsrlvd zmm5, zmm3, zmm5\n",
            "vpsrlvd zmm6, zmm3, zmm6\n",
            "vpord zmm4, zmm5, zmm6\n",
            ".irp i, ",
            $rest,
            "\n",
            "vpsubd zmm5, zmm2, dword ptr [{buf} + \\i]{{1to16}}\n",
            "vpsubd zmm6, zmm2, dword ptr [{buf} + \\i + 4]{{1to16}}\n",
            "vpsrlvd zmm5, zmm3, zmm5\n",
            "vpsrlvd zmm6, zmm3, zmm6\n",
            "vpternlogd zmm4, zmm5, zmm6, 0xfe\n",
            ".endr\n",
        )
    };
}

/// The shared steps of the AVX-512 inserts, as one template string: with each probe's bit
/// position (`2^32 − 1` past `k`) stored at `{buf}` — one 32-bit slot per probe, two probes
/// at each byte offset listed in `$pairs` — each is subtracted, broadcast from memory, from
/// the sixteen lanes' `32·j + 31` and the top bit shifted right by the difference in each:
/// lane `j` gets `1 << (p − 32·j)` where `32·j ≤ p < 32·j + 32` and 0 elsewhere (`vpsrlvd`
/// gives 0 for any count not below 32, which a negative difference is too); each pair is
/// ORed into the line's new bits by one three-input `vpternlogd` — five instructions per two
/// probes, where a separate broadcast, a subtraction, a left shift and an OR per probe made
/// eight. Then the line at `{blk}` is read, ORed and written back as one 64-byte vector, and
/// `{missed}` set if the new line differs from the old one in some 32-bit word (`vpcmpd` into
/// `k1`, `kortestw`). Uses zmm0–zmm6, `k1`, and the `InsertConsts` at `{c}`.
///
/// Every instruction counts out of cache: an insert waits for its line, the instructions of
/// the inserts after it wait behind it in the reorder buffer, and the fewer each insert has,
/// the more lines are fetched at once (`docs/design/simd.md` has the experiment); so the constants come from one table through one pointer, the first
/// pair needs no zeroed register, and "missed" is three instructions where a fold and a
/// `vptest` made five.
#[cfg(target_arch = "x86_64")]
macro_rules! avx512_or_new_bits {
    ($pairs:literal) => {
        concat!(
            avx512_line_bits!($pairs),
            "vmovdqu64 zmm5, [{blk}]\n",
            "vpord zmm6, zmm5, zmm4\n",
            "vmovdqu64 [{blk}], zmm6\n",
            "vpcmpd k1, zmm6, zmm5, 4\n",
            "kortestw k1, k1\n",
            "setnz {missed}\n",
            "vzeroupper\n",
        )
    };
}

/// The second round's first step, as `avx512_round1_positions` is the first round's: the
/// sixteen probes' bit positions from one 512-bit multiply by `LOCAL_POWERS[0..16]`, lanes
/// `k..16` forced to `2^32 − 1` (the `past` row of the `InsertConsts` at `{c}`), stored at `{buf}` as
/// two 32-byte halves, not one 64-byte vector: the 4-byte broadcast loads of lanes 8–15 did
/// not take their data from a 64-byte store in flight (store-to-load forwarding) and waited
/// for it to reach the cache (`docs/design/simd.md`). Uses zmm0.
#[cfg(target_arch = "x86_64")]
macro_rules! avx512_round2_positions {
    () => {
        concat!(
            "vpbroadcastd zmm0, {h:e}\n",
            "vpmulld zmm0, zmm0, zmmword ptr [{c}]\n",
            "vpsrld zmm0, zmm0, 23\n",
            "vpord zmm0, zmm0, zmmword ptr [{c} + 128]\n",
            "vmovdqu [{buf}], ymm0\n",
            "vextracti64x4 [{buf} + 32], zmm0, 1\n",
        )
    };
}

/// An insert with AVX-512F and no scalar stores, as a function `$name`: the probes' bit
/// positions from `$positions` (`avx512_round1_positions`, eight of them, `k ≤ 8`, or
/// `avx512_round2_positions`, sixteen, `9 ≤ k ≤ 16`) into a buffer of `$words` 32-bit slots;
/// then the probe pairs at the byte offsets `$pairs` (`⌈k/2⌉` pairs, at least three: the lanes
/// past them are all past `k`): each probe's position `p` (lanes past `k` forced to
/// `2^32 − 1`) becomes `1 << (p − 32·j)` in the sixteen lanes `j` of its word and 0 in the
/// others (see `avx512_or_new_bits`), the results ORed into the line's new bits, and the line
/// read, ORed and written back as one 64-byte vector; "new" is whether any of those bits was
/// unset (the new line compared with the old).
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
macro_rules! insert_avx512 {
    ($name:ident, $positions:expr, $words:literal, $pairs:literal) => {
        #[cfg(target_arch = "x86_64")]
        #[inline(always)]
        unsafe fn $name(block: &mut [u64; 8], h: u32, c: &InsertConsts) -> bool {
            let missed: u8;
            let mut buf = core::mem::MaybeUninit::<[u32; $words]>::uninit();
            // SAFETY: the caller guarantees AVX-512F. Reads: the 256-byte `InsertConsts` `c`
            // (bytes 0..4·`$words`, 64..128, 128..128 + 4·`$words` and 192..196), `buf` after the
            // assembly wrote all of it (4·`$words` bytes), and `block`'s 64 bytes; writes: `buf`
            // and `block`'s 64 bytes (a unique reference). On x86 (little-endian) 32-bit word `j`
            // of the vector is bits `32j..32j + 32` of the block — the layout's definition. No
            // other stack use; zmm0–zmm6 (declared through their xmm names), `k1` and the flags
            // are clobbered; `vzeroupper` clears the upper parts dirtied.
            unsafe {
                // asm!, not intrinsics: it inlines into an insert compiled without AVX-512, where
                // its intrinsics twin (`insert_avx512_called`) is a call per insert; out of line
                // too (9 ≤ k ≤ 16) the twin measured slower, by `cargo run --release -p
                // bloomlab-lab --example blocked_kernels -- 6` (and `-- 10`).
                crate::asm_then_vzeroupper!(
                    $positions,
                    avx512_or_new_bits!($pairs),
                    h = in(reg) h,
                    c = in(reg) c,
                    blk = in(reg) block.as_mut_ptr(),
                    buf = in(reg) buf.as_mut_ptr().cast::<u32>(),
                    missed = out(reg_byte) missed,
                    out("k1") _,
                    options(nostack),
                );
            }
            missed != 0
        }
    };
}

/// The AVX-512 inserts (`insert_avx512!`) in `#[target_feature]` intrinsics: the probes' bit
/// positions (eight, or sixteen for `round2`; `2^32 − 1` past `k`), then for the first
/// `2·pairs` of them `1 << (p − 32·j)` in the sixteen lanes `j` (a shift of the top bit by
/// each word's last bit index minus `p`), ORed into the line's new bits and the line; "new"
/// is whether any word changed.
///
/// # Safety
/// The CPU must support AVX-512F; `c` holds the constants of the `k` the kernel was chosen
/// for, and `2·pairs ≥ k` (`pairs ≤ 4` in one round, `≤ 8` in two).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn insert_avx512_called(
    block: &mut [u64; 8],
    h: u32,
    c: &InsertConsts,
    pairs: u8,
    round2: bool,
) -> bool {
    use core::arch::x86_64::*;
    // SAFETY: 64 readable bytes at each row of `c` and at `block`; unaligned loads.
    let (pow, tops, past, line) = unsafe {
        (
            _mm512_loadu_si512(c.pow.as_ptr().cast()),
            _mm512_loadu_si512(c.tops.as_ptr().cast()),
            _mm512_loadu_si512(c.past.as_ptr().cast()),
            _mm512_loadu_si512(block.as_ptr().cast()),
        )
    };
    let x = _mm512_mullo_epi32(_mm512_set1_epi32(h as i32), pow);
    let mut at = [0u32; 16];
    let pos = _mm512_or_si512(_mm512_srli_epi32::<23>(x), past);
    // SAFETY: `at` is 64 writable bytes.
    unsafe { _mm512_storeu_si512(at.as_mut_ptr().cast(), pos) };
    let probes = (2 * usize::from(pairs)).min(if round2 { 16 } else { 8 });
    let top = _mm512_set1_epi32(c.top_bit as i32);
    let mut new = _mm512_setzero_si512();
    for &p in &at[..probes] {
        let shift = _mm512_sub_epi32(tops, _mm512_set1_epi32(p as i32));
        new = _mm512_or_si512(new, _mm512_srlv_epi32(top, shift));
    }
    let out = _mm512_or_si512(line, new);
    // SAFETY: `block` is 64 writable bytes (a unique reference). On x86 (little-endian)
    // 32-bit word `j` is bits `32j..32j + 32` of the block — the layout's definition.
    unsafe { _mm512_storeu_si512(block.as_mut_ptr().cast(), out) };
    _mm512_cmpneq_epi32_mask(out, line) != 0
}

// One round: probes 0–7 (`7 ≤ k ≤ 8`) and 0–5 (`k ≤ 6`: the 1 % and 3 % targets' six and five
// probes; one pair, five instructions, fewer).
#[cfg(target_arch = "x86_64")]
insert_avx512!(
    asm_insert_round1_avx512,
    avx512_round1_positions!(),
    8,
    "8, 16, 24"
);
#[cfg(target_arch = "x86_64")]
insert_avx512!(
    asm_insert_round1_avx512_six,
    avx512_round1_positions!(),
    8,
    "8, 16"
);

// Two rounds, five to eight pairs: `k` = 9–10, 11–12, 13–14, 15–16.
#[cfg(target_arch = "x86_64")]
insert_avx512!(
    asm_insert_round2_avx512_p5,
    avx512_round2_positions!(),
    16,
    "8, 16, 24, 32"
);
#[cfg(target_arch = "x86_64")]
insert_avx512!(
    asm_insert_round2_avx512_p6,
    avx512_round2_positions!(),
    16,
    "8, 16, 24, 32, 40"
);
#[cfg(target_arch = "x86_64")]
insert_avx512!(
    asm_insert_round2_avx512_p7,
    avx512_round2_positions!(),
    16,
    "8, 16, 24, 32, 40, 48"
);
#[cfg(target_arch = "x86_64")]
insert_avx512!(
    asm_insert_round2_avx512_p8,
    avx512_round2_positions!(),
    16,
    "8, 16, 24, 32, 40, 48, 56"
);

/// The shared steps of the AVX2 inserts, as one template string: with each probe's bit
/// position (`2^32 − 1` past `k`) stored at `{buf}`, one 32-bit slot per probe — the first at
/// offset 0, the others at the byte offsets `$rest` — and `{c}` the kernel's `InsertConsts`,
/// the line's new bits in `ymm3` (words 0–7) and `ymm4` (words 8–15): for each probe, its
/// position broadcast from memory (a load, no shuffle) is subtracted from each word's last
/// bit index `32·j + 31` (`ymm6`, `ymm7`) and the top bit (`ymm5`) shifted right by the
/// difference — `1 << (p − 32·j)` in the word that holds the bit, 0 in every other (`vpsrlvd`
/// gives 0 for any count not below 32, which a negative difference is too) — and ORed into
/// its half: seven instructions a probe. `InsertConsts` is 64-byte aligned, so the two
/// `vmovdqa` loads of the word tops (offsets 64 and 96) are aligned. Clobbers ymm1–ymm7.
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_line_bits {
    ($rest:expr) => {
        concat!(
            "vmovdqa ymm6, [{c} + 64]\n",
            "vmovdqa ymm7, [{c} + 96]\n",
            "vpbroadcastd ymm5, dword ptr [{c} + 192]\n",
            "vpbroadcastd ymm1, dword ptr [{buf}]\n",
            "vpsubd ymm2, ymm6, ymm1\n",
            "vpsubd ymm1, ymm7, ymm1\n",
            "vpsrlvd ymm3, ymm5, ymm2\n",
            "vpsrlvd ymm4, ymm5, ymm1\n",
            ".irp i, ",
            $rest,
            "\n",
            "vpbroadcastd ymm1, dword ptr [{buf} + \\i]\n",
            "vpsubd ymm2, ymm6, ymm1\n",
            "vpsubd ymm1, ymm7, ymm1\n",
            "vpsrlvd ymm2, ymm5, ymm2\n",
            "vpsrlvd ymm1, ymm5, ymm1\n",
            "vpor ymm3, ymm3, ymm2\n",
            "vpor ymm4, ymm4, ymm1\n",
            ".endr\n",
        )
    };
}

/// The owned AVX2 inserts' last steps, as one template string: the new bits of
/// [`avx2_line_bits`] (`ymm3`, `ymm4`) ORed into the line at `{blk}` with two unaligned
/// 32-byte loads and stores, and `{new}` set when some bit was not yet in the line
/// (`new & !line`, one `vptest`). Clobbers ymm1, ymm2, ymm6, ymm7 and the flags.
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_line_or {
    () => {
        concat!(
            "vmovdqu ymm1, [{blk}]\n",
            "vmovdqu ymm2, [{blk} + 32]\n",
            "vpandn ymm6, ymm1, ymm3\n",
            "vpandn ymm7, ymm2, ymm4\n",
            "vpor ymm1, ymm1, ymm3\n",
            "vpor ymm2, ymm2, ymm4\n",
            "vmovdqu [{blk}], ymm1\n",
            "vmovdqu [{blk} + 32], ymm2\n",
            "vpor ymm6, ymm6, ymm7\n",
            "vptest ymm6, ymm6\n",
            "setnz {new}\n",
        )
    };
}

/// The one-round inline inserts (`k ≤ 8`) with AVX2: the line's new bits built in two
/// vector registers (words 0–7 and 8–15), ORed into it with two 32-byte loads and stores.
/// Each probe's position `x >> 23` (its lane forced to `2^32 − 1`, no bit, at or past `k`)
/// goes to a 32-byte buffer; then for each probe the kernel uses (`asm_insert_round1_l2` …
/// `_l8`: two, four, six or eight — `k` rounded up to even), the position broadcast from the
/// buffer (a load, no shuffle) is subtracted from each word's last bit index `32·j + 31`,
/// the top bit is shifted right by the difference (`vpsrlvd`: `2^(x>>23 − 32·j)` in the word
/// that holds the bit, zero in every other, since a count past 31 — a negative difference
/// included — shifts everything out), and the two halves are ORed into the new bits: seven
/// instructions per probe. "Was any bit new" is `new & !line`, tested by one `vptest`.
///
/// It replaced, for AVX2-only CPUs, the probes' eight word indices and masks spilled to the
/// stack and ORed into the line's words by eight scalar `or`s (an `or` of a zero mask still
/// writes its word), which was slower in and out of cache (`docs/design/simd.md`).
///
/// The two-round inserts (`9 ≤ k ≤ 16`, `asm_insert_round2_l2` … `_l8`) do the same over
/// both rounds' positions: the first eight probes, then those of the second round that `k`
/// uses (`k − 8` rounded up to even). Each kernel is this macro with its positions template
/// (`avx2_round1_positions`, `avx2_round2_positions`), its buffer's slots and the byte
/// offsets of its probes after the first.
///
/// # Safety
/// The CPU must support AVX2, and `c` must be the `InsertConsts` of the `k` the kernel was
/// chosen for, with `k` no larger than the function's probe count.
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_insert {
    ($name:ident, $positions:expr, $slots:literal, $offsets:expr) => {
        #[cfg(target_arch = "x86_64")]
        #[inline(always)]
        unsafe fn $name(block: &mut [u64; 8], h: u32, c: &InsertConsts) -> bool {
            let new: u8;
            let mut buf = core::mem::MaybeUninit::<[u32; $slots]>::uninit();
            // SAFETY: the caller guarantees AVX2. Reads: `block` (64 bytes, two unaligned
            // 32-byte loads), `c`, a 256-byte `InsertConsts` (powers at 0..64, word tops at
            // 64..128, lanes-past-`k` row at 128..192, top bit at 192..196; each template
            // reads a part), and `buf` after the positions template wrote all of it (one
            // 32-byte store per round, `$slots` = 8 per round). Writes: `buf` and the 64
            // bytes of `block`, a unique reference, with its old bits ORed with the new ones;
            // on x86 (little-endian) 32-bit word `j` is bits `32j..32j + 32` of the block —
            // the layout's definition. The lanes left out lie past `k` (the caller's
            // contract), so they would set no bit. No other stack use; xmm0–xmm7 and the
            // flags are declared clobbered; `vzeroupper` clears the upper halves dirtied.
            unsafe {
                // asm!, not intrinsics: it inlines into an insert compiled without AVX2, where its
                // intrinsics twin (`local_insert`) is a call per insert; out of line too
                // (9 ≤ k ≤ 16) the twin measured slower, by `cargo run --release -p
                // bloomlab-lab --example blocked_kernels -- 6` (and `-- 10`).
                crate::asm_then_vzeroupper!(
                    $positions,
                    avx2_line_bits!($offsets),
                    avx2_line_or!(),
                    "vzeroupper",
                    h = in(reg) &h,
                    c = in(reg) c,
                    blk = in(reg) block.as_mut_ptr(),
                    buf = in(reg) buf.as_mut_ptr().cast::<u32>(),
                    new = out(reg_byte) new,
                    options(nostack),
                );
            }
            new != 0
        }
    };
}

/// The first steps of the one-round AVX2 inserts, as one template string: the eight
/// probes' positions `(h · M^i) >> 23`, lanes at or past `k` forced to `2^32 − 1`, stored at
/// `{buf}` (32 bytes). Clobbers ymm0.
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_round1_positions {
    () => {
        concat!(
            "vpbroadcastd ymm0, dword ptr [{h}]\n",
            "vpmulld ymm0, ymm0, [{c}]\n",
            "vpsrld ymm0, ymm0, 23\n",
            "vpor ymm0, ymm0, [{c} + 128]\n",
            "vmovdqu [{buf}], ymm0\n",
        )
    };
}

/// The first steps of the two-round AVX2 inserts: the sixteen probes' positions, lanes
/// 8–15 at or past `k` forced to `2^32 − 1` (lanes 0–7 are all below `k ≥ 9`), stored at
/// `{buf}` (64 bytes). Clobbers ymm0 and ymm1.
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_round2_positions {
    () => {
        concat!(
            "vpbroadcastd ymm1, dword ptr [{h}]\n",
            "vpmulld ymm0, ymm1, [{c}]\n",
            "vpmulld ymm1, ymm1, [{c} + 32]\n",
            "vpsrld ymm0, ymm0, 23\n",
            "vpsrld ymm1, ymm1, 23\n",
            "vpor ymm1, ymm1, [{c} + 160]\n",
            "vmovdqu [{buf}], ymm0\n",
            "vmovdqu [{buf} + 32], ymm1\n",
        )
    };
}

#[cfg(target_arch = "x86_64")]
avx2_insert!(asm_insert_round1_l2, avx2_round1_positions!(), 8, "4");
#[cfg(target_arch = "x86_64")]
avx2_insert!(
    asm_insert_round1_l4,
    avx2_round1_positions!(),
    8,
    "4, 8, 12"
);
#[cfg(target_arch = "x86_64")]
avx2_insert!(
    asm_insert_round1_l6,
    avx2_round1_positions!(),
    8,
    "4, 8, 12, 16, 20"
);
#[cfg(target_arch = "x86_64")]
avx2_insert!(
    asm_insert_round1_l8,
    avx2_round1_positions!(),
    8,
    "4, 8, 12, 16, 20, 24, 28"
);
// Two rounds: all eight probes of the first, then two, four, six or eight of the second.
#[cfg(target_arch = "x86_64")]
avx2_insert!(
    asm_insert_round2_l2,
    avx2_round2_positions!(),
    16,
    "4, 8, 12, 16, 20, 24, 28, 32, 36"
);
#[cfg(target_arch = "x86_64")]
avx2_insert!(
    asm_insert_round2_l4,
    avx2_round2_positions!(),
    16,
    "4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44"
);
#[cfg(target_arch = "x86_64")]
avx2_insert!(
    asm_insert_round2_l6,
    avx2_round2_positions!(),
    16,
    "4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52"
);
#[cfg(target_arch = "x86_64")]
avx2_insert!(
    asm_insert_round2_l8,
    avx2_round2_positions!(),
    16,
    "4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60"
);
