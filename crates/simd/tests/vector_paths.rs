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

#[test]
fn each_column_kernel_names_its_path() {
    use bloomlab_simd::ColumnKernel;
    let kernels = [
        ("avx2", ColumnKernel::avx2()),
        ("avx512", ColumnKernel::avx512()),
    ];
    for (name, kernel) in kernels {
        let Some(k) = kernel else {
            continue;
        };
        assert_eq!(k.name(), name);
        assert_eq!(k.called().name(), format!("{name} (called)"));
        assert_eq!(k.called().called().name(), format!("{name} (called)"));
    }
    // The one `detect` picks, from the CPU's flags as the standard library reads them:
    // AVX-512 where the CPU has AVX-512F and VPOPCNTDQ (and AVX2), else AVX2.
    #[cfg(target_arch = "x86_64")]
    let want = {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx2") && has!("avx512f") && has!("avx512vpopcntdq") {
            Some("avx512")
        } else if has!("avx2") {
            Some("avx2")
        } else {
            None
        }
    };
    #[cfg(not(target_arch = "x86_64"))]
    let want = None;
    assert_eq!(ColumnKernel::detect().map(ColumnKernel::name), want);
}

#[test]
fn a_required_list_names_what_a_value_lacks() {
    let some = VectorPaths {
        avx2: true,
        popcnt: true,
        ..VectorPaths::default()
    };
    assert!(some.missing_from("").is_empty());
    assert!(some.missing_from(" avx2 , popcnt ").is_empty());
    assert_eq!(some.missing_from("avx2,neon"), ["neon"]);
    assert_eq!(
        some.missing_from("all"),
        ["avx512f", "avx512dq", "avx512vpopcntdq", "neon"]
    );
    // Each name once; an unknown one (a typo) is missing rather than ignored.
    assert_eq!(
        some.missing_from("neon,all,avx2x"),
        ["neon", "avx512f", "avx512dq", "avx512vpopcntdq", "avx2x"]
    );
}

/// Each detector answers what the CPU reports (std's run-time detection, the definition the
/// kernels' safety rests on), the AVX-512 extensions only together with AVX-512F. On a CPU that
/// has a feature a detector answering `false` fails here; on one that lacks it, `true` does.
#[cfg(target_arch = "x86_64")]
#[test]
fn each_detector_answers_what_the_cpu_reports() {
    use bloomlab_simd as simd;
    use std::arch::is_x86_feature_detected as cpu;
    let f = cpu!("avx512f");
    assert_eq!(simd::has_avx2(), cpu!("avx2"), "avx2");
    assert_eq!(simd::has_popcnt(), cpu!("popcnt"), "popcnt");
    assert_eq!(simd::has_avx512f(), f, "avx512f");
    assert_eq!(simd::has_avx512vl(), f && cpu!("avx512vl"), "avx512vl");
    assert_eq!(simd::has_avx512dq(), f && cpu!("avx512dq"), "avx512dq");
    assert_eq!(
        simd::has_avx512_popcnt(),
        f && cpu!("avx512vpopcntdq"),
        "avx512vpopcntdq"
    );
    assert!(!simd::has_neon());
}
