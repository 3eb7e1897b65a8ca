//! `VectorPaths::names`: the names of exactly the paths a value holds, in the order of
//! `VectorPaths::ALL`, whatever this CPU has.

#![forbid(unsafe_code)]

use bloomlab_simd::VectorPaths;

#[test]
fn names_lists_exactly_the_paths_present_in_order() {
    assert!(VectorPaths::default().names().is_empty());
    let some = VectorPaths {
        avx2: true,
        avx512f: true,
        neon: true,
        ..VectorPaths::default()
    };
    assert_eq!(some.names(), ["avx2", "avx512f", "neon"]);
    let all = VectorPaths {
        avx2: true,
        popcnt: true,
        avx512f: true,
        avx512dq: true,
        avx512vpopcntdq: true,
        neon: true,
    };
    assert_eq!(all.names(), VectorPaths::ALL);
    // Each path alone is named alone.
    for (i, name) in VectorPaths::ALL.into_iter().enumerate() {
        let one = VectorPaths {
            avx2: i == 0,
            popcnt: i == 1,
            avx512f: i == 2,
            avx512dq: i == 3,
            avx512vpopcntdq: i == 4,
            neon: i == 5,
        };
        assert_eq!(one.names(), [name]);
    }
}
