//! What this CPU runs: one function per instruction-set extension a kernel needs (std's
//! `is_x86_feature_detected!`, which caches the CPUID probe, so each test is a relaxed load),
//! and [`VectorPaths`], the whole picture at once, which tests print and check.
//!
//! Without the `std` feature there is no run-time detection: an x86-64 build runs the
//! kernels of the target features it was compiled with (`-C target-feature=+avx2`,
//! `-C target-cpu=…`), and the portable twins otherwise.

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// Whether the x86 feature `$f` is there: std's cached run-time test, or without std
/// whether this build enables it.
#[cfg(target_arch = "x86_64")]
macro_rules! x86_has {
    ($f:tt) => {{
        #[cfg(feature = "std")]
        {
            std::arch::is_x86_feature_detected!($f)
        }
        #[cfg(not(feature = "std"))]
        {
            cfg!(target_feature = $f)
        }
    }};
}

/// Whether this CPU runs the AVX2 kernels.
#[inline]
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86_has!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The CPU runs AVX-512 Foundation instructions on 512-bit registers and the OS saves
/// their state (std's detection checks both; without std, whether the build enables it).
#[inline]
pub fn has_avx512f() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86_has!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this build runs the NEON kernels: little-endian aarch64, where NEON is part of
/// the baseline (no run-time test).
#[inline]
pub fn has_neon() -> bool {
    cfg!(all(
        target_arch = "aarch64",
        target_endian = "little",
        target_feature = "neon"
    ))
}

/// AVX-512F with the 256-bit forms of its instructions (AVX512VL): the one-round inline
/// local-block lookup (`vpermi2d` and `vprolvd` on 256-bit registers).
#[inline]
pub fn has_avx512vl() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        has_avx512f() && x86_has!("avx512vl")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this CPU has the `popcnt` instruction.
#[inline]
pub fn has_popcnt() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        x86_has!("popcnt")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The CPU runs AVX-512 Foundation instructions on 512-bit registers and `VPOPCNTQ`
/// (AVX512_VPOPCNTDQ), and the OS saves their state.
#[inline]
pub fn has_avx512_popcnt() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        has_avx512f() && x86_has!("avx512vpopcntdq")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this CPU runs [`xxh3_64_words`](crate::xxh3_64_words)' lanes: AVX-512F and
/// AVX-512DQ (`vpmullq`).
#[inline]
pub fn has_avx512dq() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        has_avx512f() && x86_has!("avx512dq")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this CPU runs the routing lanes ([`route_one_hash`](crate::route_one_hash),
/// [`route_positions`](crate::route_positions)): AVX-512F and POPCNT.
#[inline]
pub(crate) fn has_avx512f_popcnt() -> bool {
    has_avx512f() && has_popcnt()
}

/// Which instruction-set extensions the kernels of this crate find on this CPU, in one
/// value: what a test prints so its output says which vector paths it exercised, and what a
/// caller can log beside a measurement.
///
/// ```
/// let paths = bloomlab_simd::VectorPaths::detect();
/// assert_eq!(paths.avx2, bloomlab_simd::has_avx2());
/// println!("{paths}"); // e.g. "avx2 popcnt avx512f avx512dq avx512vpopcntdq"
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VectorPaths {
    /// The AVX2 kernels: the local- and split-block probes, the AVX2 SipHash lanes, the AVX2
    /// Ribbon columns, the occupancy throw.
    pub avx2: bool,
    /// The `popcnt` instruction (the Ribbon parities; the routing lanes with AVX-512F).
    pub popcnt: bool,
    /// AVX-512F: the 512-bit local-block kernels, the AVX-512 SipHash lanes, the routing lanes.
    pub avx512f: bool,
    /// AVX-512DQ with AVX-512F: the XXH3-64 lanes (`vpmullq`).
    pub avx512dq: bool,
    /// AVX512_VPOPCNTDQ with AVX-512F: the AVX-512 Ribbon columns.
    pub avx512vpopcntdq: bool,
    /// NEON on little-endian aarch64 (part of its baseline): the local-block lookups
    /// ([`InlineKernel`](crate::InlineKernel)) and the split-block kernels.
    pub neon: bool,
}

impl VectorPaths {
    /// Every name [`VectorPaths`] knows, in the order [`names`](Self::names) lists them.
    pub const ALL: [&'static str; 6] = [
        "avx2",
        "popcnt",
        "avx512f",
        "avx512dq",
        "avx512vpopcntdq",
        "neon",
    ];

    /// What this CPU runs.
    pub fn detect() -> Self {
        VectorPaths {
            avx2: has_avx2(),
            popcnt: has_popcnt(),
            avx512f: has_avx512f(),
            avx512dq: has_avx512dq(),
            avx512vpopcntdq: has_avx512_popcnt(),
            neon: has_neon(),
        }
    }

    /// Whether the path called `name` (one of [`ALL`](Self::ALL)) is present; `None` for a
    /// name it does not know.
    pub fn has(self, name: &str) -> Option<bool> {
        Some(match name {
            "avx2" => self.avx2,
            "popcnt" => self.popcnt,
            "avx512f" => self.avx512f,
            "avx512dq" => self.avx512dq,
            "avx512vpopcntdq" => self.avx512vpopcntdq,
            "neon" => self.neon,
            _ => return None,
        })
    }

    /// The names of the paths present, in the order of [`ALL`](Self::ALL).
    pub fn names(self) -> Vec<&'static str> {
        Self::ALL
            .into_iter()
            .filter(|n| self.has(n) == Some(true))
            .collect()
    }
}

/// The environment variable that names the paths a test run must exercise: a comma-separated
/// list of [`VectorPaths::ALL`] names, or `all`. The workspace's tests of CPU-dependent
/// kernels fail when it names a path this CPU lacks ([`VectorPaths::missing_required`]),
/// instead of testing only the portable twins; CI sets it from the CPU's flags.
pub const REQUIRE_ENV: &str = "BLOOMLAB_REQUIRE_SIMD";

impl VectorPaths {
    /// The paths [`REQUIRE_ENV`] names that this value lacks, in the order named; a name
    /// [`VectorPaths`] does not know counts as lacking (so a typo fails rather than passes).
    /// Empty when the variable is unset. (With the `std` feature: it reads the environment.)
    #[cfg(feature = "std")]
    pub fn missing_required(self) -> Vec<String> {
        self.missing_from(&std::env::var(REQUIRE_ENV).unwrap_or_default())
    }

    /// [`missing_required`](Self::missing_required) for the list `list` (a value of
    /// [`REQUIRE_ENV`]): the names it gives, `all` for every one, that this value lacks.
    pub fn missing_from(self, list: &str) -> Vec<String> {
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let names: Vec<&str> = if name == "all" {
                Self::ALL.to_vec()
            } else {
                vec![name]
            };
            for n in names {
                if self.has(n) != Some(true) && !out.iter().any(|o| o == n) {
                    out.push(n.to_owned());
                }
            }
        }
        out
    }
}

impl core::fmt::Display for VectorPaths {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let names = self.names();
        if names.is_empty() {
            f.write_str("portable only")
        } else {
            f.write_str(&names.join(" "))
        }
    }
}
