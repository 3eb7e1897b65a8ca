use super::*;
use crate::testing::mix;
use crate::testing::runs;
use crate::{Line, SharedLine};

#[test]
fn local_probe_rule_is_frozen() {
    // Sequential definition: h_0 = h, h_{i+1} = h_i · 0x9e3779b9 mod 2^32, bit_i = h_i >> 23.
    let h = 0x0123_4567u32;
    let mut want = [0u64; 8];
    let mut x = h;
    for _ in 0..11 {
        let bit = x >> 23;
        want[(bit / 64) as usize] |= 1 << (bit % 64);
        x = x.wrapping_mul(0x9e37_79b9);
    }
    let mut got = [0u64; 8];
    assert!(local_insert_scalar(&mut got, h, 11));
    assert_eq!(got, want);
    // Probe 0 is the top 9 bits of h itself: h = 2^31 → bit 256 = word 4, bit 0.
    let mut one = [0u64; 8];
    local_insert_scalar(&mut one, 1 << 31, 1);
    assert_eq!(one, [0, 0, 0, 0, 1, 0, 0, 0]);
    assert_eq!(LOCAL_POWERS[8], 0x9e37_79b9u32.wrapping_pow(8));
}

#[test]
fn local_kernels_agree_with_the_scalar_definition() {
    let mut x = 7u64;
    for k in 1..=LOCAL_MAX_PROBES {
        let mut fast = [0u64; 8];
        let mut slow = [0u64; 8];
        // Fill until about half the bits are set, comparing every step.
        for _ in 0..(256 / k).max(2) {
            let h = mix(&mut x) as u32;
            assert_eq!(
                local_insert(&mut fast, h, k),
                local_insert_scalar(&mut slow, h, k)
            );
            assert_eq!(fast, slow, "k = {k}");
            assert!(local_contains(&fast, h, k));
        }
        for _ in 0..200 {
            let h = mix(&mut x) as u32;
            assert_eq!(
                local_contains(&fast, h, k),
                local_contains_scalar(&slow, h, k)
            );
        }
        // A block missing exactly one probed bit answers no on both paths.
        let h = mix(&mut x) as u32;
        let mut only = [0u64; 8];
        local_insert_scalar(&mut only, h, k);
        let bit = h >> 23;
        only[(bit / 64) as usize] &= !(1 << (bit % 64));
        assert!(!local_contains(&only, h, k) && !local_contains_scalar(&only, h, k));
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn avx2_kernels_agree_with_the_scalar_definition() {
    if !runs("avx2") {
        return;
    }
    let mut x = 11u64;
    for k in [0u32, 1, 6, 8, 9, 16, 17, 64, 65, u32::MAX] {
        let mut a = [0u64; 8];
        let mut b = [0u64; 8];
        for _ in 0..40 {
            let h = mix(&mut x) as u32;
            // SAFETY: AVX2 is available (checked above).
            let new = unsafe { avx2::local_insert(&mut a, h, k) };
            assert_eq!(new, local_insert_scalar(&mut b, h, k));
            assert_eq!(a, b);
            let q = mix(&mut x) as u32;
            // SAFETY: as above.
            let got = unsafe { avx2::local_contains(&a, q, k) };
            assert_eq!(got, local_contains_scalar(&b, q, k));
        }
    }
}

/// Inserts and lookups of many keys inside one [`run_local`] task.
struct Both<'a> {
    blocks: &'a mut [[u64; 8]],
    keys: &'a [u32],
    k: u32,
}

impl LocalTask for Both<'_> {
    type Output = (&'static str, Vec<bool>, Vec<bool>);
    #[inline(always)]
    fn run<P: LocalProbe>(self, probe: P) -> Self::Output {
        let n = self.blocks.len();
        let new = self
            .keys
            .iter()
            .map(|&h| probe.insert(&mut self.blocks[h as usize % n], h, self.k))
            .collect();
        let hit = self
            .keys
            .iter()
            .map(|&h| probe.contains(&self.blocks[h.rotate_left(7) as usize % n], h, self.k))
            .collect();
        (P::NAME, new, hit)
    }
}

/// A block holding every probe of `h` (with `k` probes) but probe `drop`'s bit.
fn all_probes_but(h: u32, k: u32, drop: usize) -> [u64; 8] {
    let mut only = [0u64; 8];
    local_insert_scalar(&mut only, h, k);
    let bit = local_bit(h, drop);
    only[(bit / 64) as usize] &= !(1 << (bit % 64));
    only
}

/// Which kernel families `LocalKernel::detect` hands out on this CPU: AVX2, AVX-512 (with VL,
/// which its one-round lookup needs) and NEON; each checked against `BLOOMLAB_REQUIRE_SIMD`.
fn kernel_paths() -> (bool, bool, bool) {
    (
        runs("avx2"),
        runs("avx512f") && crate::has_avx512vl(),
        runs("neon"),
    )
}

#[test]
fn inline_kernels_agree_with_the_scalar_definition() {
    // Which kernels `detect` hands out here (each named by the assertions below).
    let (avx2, avx512, neon) = kernel_paths();
    let mut x = 13u64;
    // Every `k` up to 17 (each probe-pair count of the AVX-512 inserts, on both sides of
    // each step), and some larger.
    for k in (0u32..=17).chain([30, 64, 65, u32::MAX]) {
        for kernel in [
            LocalKernel::detect(k),
            LocalKernel::detect_every_pair(k),
            LocalKernel::avx2(k),
            LocalKernel::portable(),
        ] {
            if kernel == LocalKernel::avx2(k) {
                assert_eq!(kernel.name(), if avx2 { "avx2" } else { "portable" });
            }
            if kernel == LocalKernel::detect(k) && avx512 && (1..=16).contains(&k) {
                assert_eq!(kernel.name(), "avx512", "k = {k}");
            }
            if kernel == LocalKernel::detect(k) && neon && (1..=16).contains(&k) {
                assert_eq!(kernel.name(), "neon", "k = {k}");
            }
            let (mut fast, mut slow) = ([0u64; 8], [0u64; 8]);
            // Fill to about half the bits, comparing the block and the result each step.
            for _ in 0..(256 / k.clamp(1, 64)).max(2) {
                let h = mix(&mut x) as u32;
                let mut twin = fast;
                let new = local_insert_scalar(&mut slow, h, k);
                assert_eq!(kernel.insert(&mut fast, h, k), new, "k = {k}");
                assert_eq!(fast, slow, "k = {k}");
                assert_eq!(kernel.insert_called(&mut twin, h, k), new, "k = {k}");
                assert_eq!(twin, slow, "k = {k}");
                assert!(kernel.contains(&fast, h, k));
                assert!(!kernel.insert(&mut fast, h, k), "a repeat is never new");
            }
            let shared = SharedLine::new(Line(fast));
            for _ in 0..300 {
                let h = mix(&mut x) as u32;
                let want = local_contains_scalar(&slow, h, k);
                assert_eq!(kernel.contains(&fast, h, k), want, "k = {k}");
                assert_eq!(kernel.contains_shared(&shared, h, k), want, "k = {k}");
                assert_eq!(kernel.contains_called(&fast, h, k), want, "k = {k}");
            }
            // Every probe but one set: both say no (for each probe position in turn).
            let h = mix(&mut x) as u32;
            for drop in 0..k.clamp(1, 16) as usize {
                let only = all_probes_but(h, k, drop);
                let want = local_contains_scalar(&only, h, k);
                assert_eq!(kernel.contains(&only, h, k), want, "k = {k}, drop {drop}");
                assert_eq!(
                    kernel.contains_called(&only, h, k),
                    want,
                    "k = {k}, drop {drop}"
                );
                let shared = SharedLine::new(Line(only));
                assert_eq!(kernel.contains_shared(&shared, h, k), want, "k = {k}");
                // Inserting the key into it sets exactly the dropped bit, and is new.
                let mut full = only;
                assert!(local_insert_scalar(&mut full, h, k) != want);
                let mut owned = only;
                assert_eq!(kernel.insert(&mut owned, h, k), !want, "k = {k}");
                assert_eq!(owned, full, "k = {k}, drop {drop}");
                let mut twin = only;
                assert_eq!(kernel.insert_called(&mut twin, h, k), !want, "k = {k}");
                assert_eq!(twin, full, "k = {k}, drop {drop}");
            }
        }
    }
}

#[test]
fn dispatched_kernels_agree_with_the_portable_ones() {
    let mut x = 5u64;
    for k in [0u32, 1, 4, 6, 8, 9, 15, 64, 65] {
        let keys: Vec<u32> = (0..300).map(|_| mix(&mut x) as u32).collect();
        let (mut a, mut b) = (vec![[0u64; 8]; 16], vec![[0u64; 8]; 16]);
        let fast = run_local(Both {
            blocks: &mut a,
            keys: &keys,
            k,
        });
        let slow = Both {
            blocks: &mut b,
            keys: &keys,
            k,
        }
        .run(PortableProbe);
        assert_eq!(fast.0, if runs("avx2") { "avx2" } else { "portable" });
        assert_eq!((fast.1, fast.2), (slow.1, slow.2), "k = {k}");
        assert_eq!(a, b, "k = {k}");
    }
}

#[test]
fn inline_kernels_serve_k_up_to_their_rounds_and_agree_with_the_definition() {
    let (avx2, avx512, neon) = kernel_paths();
    let mut x = 17u64;
    for (k, fast, want) in (0u32..=18).chain([64, 65]).flat_map(|k| {
        // The AVX2 kernels too, where this CPU would choose AVX-512 (`LocalKernel::avx2`).
        let avx2_name = if avx2 && (1..=8).contains(&k) {
            "avx2"
        } else {
            "off"
        };
        [
            (k, InlineKernel::of(LocalKernel::detect(k)), None),
            (k, InlineKernel::of(LocalKernel::avx2(k)), Some(avx2_name)),
        ]
    }) {
        // Which kernel serves which `k`: x86 one round (`k ≤ 8`), NEON two (`k ≤ 16`).
        let want = want.unwrap_or(if avx512 && (1..=8).contains(&k) {
            "avx512"
        } else if avx2 && (1..=8).contains(&k) {
            "avx2"
        } else if neon && (1..=16).contains(&k) {
            "neon"
        } else {
            "off"
        });
        assert_eq!(fast.name(), want, "k = {k}");
        assert_eq!(InlineKernel::of(LocalKernel::portable()).name(), "off");
        let mut block = [0u64; 8];
        let mut twin = [0u64; 8];
        for _ in 0..(200 / k.clamp(1, 64)).max(2) {
            let h = mix(&mut x) as u32;
            let new = local_insert_scalar(&mut twin, h, k);
            match fast.insert(&mut block, h) {
                Some(got) => assert_eq!(got, new, "k = {k}"),
                None => {
                    assert_eq!(want, "off", "k = {k}");
                    local_insert_scalar(&mut block, h, k);
                }
            }
            assert_eq!(block, twin, "k = {k}");
        }
        let shared = SharedLine::new(Line(block));
        for _ in 0..300 {
            let h = mix(&mut x) as u32;
            let got = fast.contains(&block, h);
            assert_eq!(got.is_none(), want == "off", "k = {k}");
            assert_eq!(fast.contains_shared(&shared, h), got, "k = {k}");
            if let Some(hit) = got {
                assert_eq!(hit, local_contains_scalar(&block, h, k), "k = {k}");
            }
        }
        // Every probe but one set: the inline kernel says no, for each probe in turn.
        let h = mix(&mut x) as u32;
        for drop in 0..k.clamp(1, 16) as usize {
            let only = all_probes_but(h, k, drop);
            let want = local_contains_scalar(&only, h, k);
            if let Some(hit) = fast.contains(&only, h) {
                assert_eq!(hit, want, "k = {k}, drop {drop}");
            }
            let shared = SharedLine::new(Line(only));
            if let Some(hit) = fast.contains_shared(&shared, h) {
                assert_eq!(hit, want, "k = {k}, drop {drop}");
            }
        }
    }
    assert_eq!(InlineKernel::OFF.contains(&[u64::MAX; 8], 1), None);
    assert_eq!(InlineKernel::OFF.insert(&mut [0; 8], 1), None);
    let full = SharedLine::new(Line([u64::MAX; 8]));
    assert_eq!(InlineKernel::OFF.contains_shared(&full, 1), None);
}

#[test]
fn unrolled_twins_match_the_definition_for_every_k_they_serve() {
    let mut x = 23u64;
    for k in 0u32..=20 {
        let (mut a, mut b) = ([0u64; 8], [0u64; 8]);
        for _ in 0..40 {
            let h = mix(&mut x) as u32;
            let new = local_insert_scalar(&mut b, h, k);
            match local_insert_unrolled(&mut a, h, k) {
                Some(got) => assert_eq!(got, new, "k = {k}"),
                None => {
                    assert!(!(1..=16).contains(&k), "k = {k} is served");
                    local_insert_scalar(&mut a, h, k);
                }
            }
            assert_eq!(a, b, "k = {k}");
            let q = mix(&mut x) as u32;
            let want = local_contains_scalar(&b, q, k);
            match local_contains_unrolled(&a, q, k) {
                Some(got) => assert_eq!(got, want, "k = {k}"),
                None => assert!(!(1..=16).contains(&k), "k = {k} is served"),
            }
        }
    }
}
