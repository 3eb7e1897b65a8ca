//! What the tests share: a fixed-seed input source, and [`runs`], the one gate in front of
//! every test of a CPU-dependent kernel.

use crate::VectorPaths;

/// SplitMix64: a fixed-seed source of test inputs.
pub(crate) fn mix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The environment variable naming the paths the tests must run: a comma-separated list of
/// [`VectorPaths::ALL`] names, or `all`.
pub(crate) const REQUIRE: &str = "BLOOMLAB_REQUIRE_SIMD";

/// The paths [`REQUIRE`] names (every name checked: an unknown one fails the test).
pub(crate) fn required() -> Vec<&'static str> {
    let Ok(list) = std::env::var(REQUIRE) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if name == "all" {
            out.extend(VectorPaths::ALL);
        } else {
            let known = VectorPaths::ALL.iter().find(|&&n| n == name);
            out.push(*known.unwrap_or_else(|| panic!("{REQUIRE}: unknown path {name:?}")));
        }
    }
    out
}

/// Whether this CPU runs the path `name`, so that a test may run its kernel. When it does
/// not, the test says so in its output (`cargo test -- --show-output` shows it) and fails if
/// [`REQUIRE`] names the path: a test is never silently green without running its kernel
/// on a machine that was expected to have it.
pub(crate) fn runs(name: &str) -> bool {
    let have = VectorPaths::detect()
        .has(name)
        .unwrap_or_else(|| panic!("unknown path {name:?}"));
    if !have {
        assert!(
            !required().contains(&name),
            "{REQUIRE} requires the {name} path, which this CPU lacks"
        );
        println!(
            "vector path {name}: NOT RUN (this CPU lacks it); only the portable twin was tested"
        );
    }
    have
}
