//! `VectorPaths::missing_required` reads `BLOOMLAB_REQUIRE_SIMD`. A test binary of its own with
//! this one test, because it sets the variable: no other test of this process runs meanwhile
//! to read the environment (setting it is `unsafe` for that reason).

use bloomlab_simd::{REQUIRE_ENV, VectorPaths};

#[test]
fn the_required_list_is_read_from_the_environment() {
    let paths = VectorPaths::detect();
    // SAFETY: the only test of this binary, and it starts no thread: nothing else reads or
    // writes the environment while it is changed.
    unsafe { std::env::set_var(REQUIRE_ENV, "no-such-path,avx2x") };
    let missing = paths.missing_required();
    unsafe { std::env::remove_var(REQUIRE_ENV) };
    assert_eq!(missing, ["no-such-path", "avx2x"]);
    assert!(
        paths.missing_required().is_empty(),
        "unset: nothing is required"
    );
}
