//! What the tests share: a fixed-seed input source, and [`runs`], the one gate in front of
//! every test of a CPU-dependent kernel.

use crate::{REQUIRE_ENV, VectorPaths};

/// SplitMix64: a fixed-seed source of test inputs.
pub(crate) fn mix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Whether this CPU runs the path `name`, so that a test may run its kernel. When it does
/// not, the test says so in its output (`cargo test -- --show-output` shows it, once per
/// path) and fails if [`REQUIRE_ENV`] names the path: a test is never silently green
/// without running its kernel on a machine that was expected to have it.
pub(crate) fn runs(name: &str) -> bool {
    let paths = VectorPaths::detect();
    let have = paths
        .has(name)
        .unwrap_or_else(|| panic!("unknown path {name:?}"));
    if !have {
        assert!(
            !paths.missing_required().iter().any(|m| m == name),
            "{REQUIRE_ENV} requires the {name} path, which this CPU lacks"
        );
        static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
        if !said.iter().any(|n| n == name) {
            said.push(name.to_owned());
            println!(
                "vector path {name}: NOT RUN (this CPU lacks it); the portable twin ran alone"
            );
        }
    }
    have
}
