//! Wall-clock bounds in tests, and how they stretch under an emulator.
//!
//! A test that bounds a wall-clock time (a decoder that must answer "promptly", a sizing call
//! that must take microseconds) states its bound for a native machine. Under a user-mode
//! emulator (`qemu-s390x`, `qemu-i386`, `qemu-aarch64`, as `.ci/run` runs the other targets)
//! every instruction costs many native ones, so the same code takes many times longer.
//!
//! With the environment variable `BLOOMLAB_EMULATED` set, [`scaled`] multiplies every bound
//! by [`EMULATED_FACTOR`] = 100 (a number above 1 as the variable's value is taken as the
//! factor instead), and says so on standard error. Why 100: qemu runs floating-point code
//! in software, and the cases these bounds guard are estimates in `f64`. In optimised
//! builds, on a 2-vCPU machine loaded by other builds, the slowest took 292 ms under
//! qemu-s390x (a sparse blocked filter of 1 000 blocks, 64 probes, decoded and estimated) and
//! 261 ms under qemu-i386 (20 000 blocks, 40 probes), against their native 10 ms bound (29×
//! and 26× it; unoptimised builds measured up to 8× a 5 ms bound). Scaled by 100 a bound
//! still sits far below what the work it guards against costs under the same emulator (the
//! blocked decoder's old crowded case took 0.57 s natively).
//!
//! ```
//! use std::time::Duration;
//! use bloomlab_conformance::timing::{emulation_factor, scaled};
//!
//! let bound = scaled(Duration::from_millis(5));
//! assert_eq!(bound, Duration::from_millis(5) * emulation_factor());
//! ```

use std::time::Duration;

/// The factor by which [`scaled`] stretches a bound when `BLOOMLAB_EMULATED` is `1` (or any
/// other value that is not a number above 1).
pub const EMULATED_FACTOR: u32 = 100;

/// 1 on a native run; under `BLOOMLAB_EMULATED`, its value if that is a whole number above 1,
/// else [`EMULATED_FACTOR`]. Unset, empty or `0`: native.
pub fn emulation_factor() -> u32 {
    match std::env::var("BLOOMLAB_EMULATED") {
        Ok(v) if !v.is_empty() && v != "0" => match v.parse::<u32>() {
            Ok(n) if n > 1 => n,
            _ => EMULATED_FACTOR,
        },
        _ => 1,
    }
}

/// `bound` × [`emulation_factor`]; under emulation, prints the factor and the bound it gives
/// (on standard error, shown with a failing test's output).
pub fn scaled(bound: Duration) -> Duration {
    let factor = emulation_factor();
    if factor == 1 {
        return bound;
    }
    let stretched = bound.saturating_mul(factor);
    eprintln!("BLOOMLAB_EMULATED: wall-clock bound {bound:?} × {factor} = {stretched:?}");
    stretched
}
