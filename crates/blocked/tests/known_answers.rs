//! Known-answer vectors of the blocked filter's three layouts (format versions 1, 2 and 3; xxh3
//! scheme named explicitly): which block a key picks and which bits it sets there, the exact bytes of a small
//! filter and the digest of a larger one, and a literal encoded filter decoded and queried.
//!
//! These pin the layout of every blocked filter written so far. A new probe layout must come
//! with a new format version; these literals must then still decode and answer exactly as
//! below.

use bloomlab_blocked::{BlockedBloomFilter, Layout};
use bloomlab_conformance::kat::{keys, probe_keys};
use bloomlab_conformance::{self as conf, from_hex};
use bloomlab_core::{HashScheme, Xxh3Scheme};

/// Indices of the non-members `n0 … n255` that answer "maybe".
fn positives(f: &BlockedBloomFilter) -> Vec<usize> {
    conf::kat::positives(|k| f.might_contain(k))
}

/// `(block, set bits)` of every non-empty block.
fn set_bits(f: &BlockedBloomFilter) -> Vec<(u64, Vec<u32>)> {
    (0..f.blocks())
        .filter_map(|b| {
            let w = f.block_words(b).unwrap();
            let bits: Vec<u32> = (0..512u32)
                .filter(|&j| w[(j / 64) as usize] >> (j % 64) & 1 == 1)
                .collect();
            (!bits.is_empty()).then_some((b, bits))
        })
        .collect()
}

/// The in-block bits of the 32-bit layouts: `k = 6` probes, probe `i` the top 9 bits of
/// `x · 0x9e37_79b9^i mod 2^32`, sorted, repeats once.
fn bits_by_the_rule(mut x: u32) -> Vec<u32> {
    let mut bits: Vec<u32> = (0..6)
        .map(|_| {
            let bit = x >> 23;
            x = x.wrapping_mul(0x9e37_79b9);
            bit
        })
        .collect();
    bits.sort_unstable();
    bits.dedup();
    bits
}

/// A filter of `blocks` blocks and `k = 6` in `layout`, explicitly the xxh3 scheme.
fn in_layout(blocks: u64, layout: Layout) -> BlockedBloomFilter {
    BlockedBloomFilter::with_blocks_and_scheme(blocks, 6, Xxh3Scheme)
        .and_then(|f| f.with_layout(layout))
        .unwrap()
}

/// 10^4 keys at 1 % in `layout` (194 blocks, k = 6): its length and digest.
fn check_ten_thousand(layout: Layout, name: &str, digest: u64) {
    let mut g = BlockedBloomFilter::with_fpr_and_scheme(10_000, 0.01, Xxh3Scheme)
        .and_then(|f| f.with_layout(layout))
        .unwrap();
    g.extend(0..10_000u64);
    assert_eq!((g.blocks(), g.hashes()), (194, 6));
    conf::check_known_answer(name, &g.to_bytes(), 12_488, digest);
}

/// The literal `hex` decodes in `layout`, holds k0 … k99, and the non-members that answer
/// "maybe" are `want`, one at a time and batched.
fn check_literal(hex: &str, layout: Layout, want: &[usize]) {
    let d = BlockedBloomFilter::from_bytes(&from_hex(hex)).unwrap();
    assert_eq!(
        (d.layout(), d.blocks(), d.hashes(), d.len()),
        (layout, 2, 6, 100)
    );
    assert!(keys("k", 100).iter().all(|k| d.might_contain(k)));
    assert_eq!(positives(&d), want);
    let probe = keys("n", 256);
    let mut out = vec![false; probe.len()];
    d.might_contain_batch(&probe, &mut out).unwrap();
    let batched: Vec<usize> = (0..out.len()).filter(|&i| out[i]).collect();
    assert_eq!(batched, want, "batched");
}

#[test]
fn block_index_and_probe_bits_of_fixed_keys() {
    // 1000 blocks, k = 6: block = ⌊h1·1000/2^64⌋, bits = top 9 bits of h2·0x9e37…7c15^i.
    let want: [(u64, [u32; 6]); 5] = [
        (238, [14, 144, 192, 194, 222, 349]),
        (41, [149, 235, 335, 368, 401, 481]),
        (95, [43, 83, 260, 412, 436, 488]),
        (435, [94, 178, 198, 228, 309, 368]),
        (852, [49, 202, 243, 320, 379, 380]),
    ];
    check_probe_bits(Layout::Wide64, want, |_, _, _| {});
}

/// Each probe key inserted alone into 1000 blocks, k = 6, in `layout` sets exactly its
/// `want` block and bits; `also(key, block, bits)` checks each further.
fn check_probe_bits(layout: Layout, want: [(u64, [u32; 6]); 5], also: impl Fn(&[u8], u64, &[u32])) {
    for (key, (block, bits)) in probe_keys().iter().zip(want) {
        let mut f = in_layout(1000, layout);
        f.insert(&key[..]);
        assert_eq!(
            set_bits(&f),
            [(block, bits.to_vec())],
            "key of {} bytes",
            key.len()
        );
        also(key, block, &bits);
    }
}

/// 2 blocks, k = 6, keys k0 … k99 (about half the bits set, so non-members do hit).
const SMALL: &str = "424c4142010002010000000000000000a80000000000000063000bfb078d9d32\
                     0200000000000000060000000000000064000000000000007600000000000000\
                     0000000000000000840c02ae221dba0761621418e034c940794b9310297a984e\
                     7db255e204b08217750d43cb8fe3ea38baa1e11be992361c3e142218138922e0\
                     5c67543a10da0201a41d4b48320005f20f9869f6a29345c53181f060f9a794ba\
                     841f8f403892771c50c21710e717a7c145895b952741e7b77904975f68fb5f38\
                     fc680e2e1679100b";

#[test]
fn serialized_bytes_after_fixed_inserts() {
    let mut f = in_layout(2, Layout::Wide64);
    f.extend(keys("k", 100));
    assert_eq!(f.to_bytes(), from_hex(SMALL));
    check_ten_thousand(Layout::Wide64, "blocked 10^4 at 1 %", 0xf482_7ab9_fe52_293a);
}

#[test]
fn literal_filter_decodes_and_answers_as_written() {
    check_literal(SMALL, Layout::Wide64, &[108, 253]);
}

// Format version 2 ([`Layout::Local32`], the layout of new filters before the third): probe
// `i` is the top 9 bits of `h · 0x9e37_79b9^i mod 2^32`, `h` the high half of `h2`. Pinned the
// same ways.

#[test]
fn local32_block_index_and_probe_bits_of_fixed_keys() {
    let want: [(u64, [u32; 6]); 5] = [
        (238, [79, 114, 247, 282, 347, 349]),
        (41, [5, 101, 129, 312, 368, 372]),
        (95, [16, 136, 260, 330, 460, 497]),
        (435, [41, 61, 257, 276, 334, 368]),
        (852, [51, 100, 240, 380, 403, 442]),
    ];
    check_probe_bits(Layout::Local32, want, |key, block, bits| {
        // The same bits from the documented rule, written out independently of the crate.
        let h = Xxh3Scheme.hash(key);
        assert_eq!(bits_by_the_rule((h.h2 >> 32) as u32), bits.to_vec());
        assert_eq!(
            ((u128::from(h.h1) * 1000) >> 64) as u64,
            block,
            "block = fastrange(h1, blocks)"
        );
    });
}

/// 2 blocks, k = 6, keys k0 … k99, format version 2.
const SMALL_V2: &str = "424c4142020002010000000000000000a80000000000000059f8be5b228978a6\
                        0200000000000000060000000000000064000000000000007600000000000000\
                        0000000000000000855463ea244df331e4f214411d75daeb41e1f0691862da8d\
                        145421e608eeb8015028808e5ecf8e44fbc9a8d2600216a43594000f43e8c2a2\
                        ce8a14c2143c6e89b69963d00e79bfd089883fd2886665323ab4fd2180e1126b\
                        322534fe2515220cdce51ec6d75e7802cd8b1e38ab01a8d9d14f16814033de2a\
                        c4727968f345d8d1";

#[test]
fn local32_serialized_bytes_and_literal_answers() {
    let mut f = in_layout(2, Layout::Local32);
    f.extend(keys("k", 100));
    assert_eq!(f.to_bytes(), from_hex(SMALL_V2));
    check_ten_thousand(
        Layout::Local32,
        "blocked v2 10^4 at 1 %",
        0x37ed_6e98_f449_b4d3,
    );
    check_literal(SMALL_V2, Layout::Local32, &[51, 96, 103, 144, 235]);
}

// Format version 3 ([`Layout::OneHash`], the layout of every new filter): one 64-bit hash
// `x` = XXH3-64 of the key bytes with seed `u64::from_le_bytes(*b"bloomlab")`; block
// `⌊(x >> 32) · blocks / 2^32⌋`; probe `i` the top 9 bits of `(x mod 2^32) · 0x9e37_79b9^i mod
// 2^32`. Pinned the same ways, the rule re-derived here from the xxHash reference crate.

#[test]
fn one_hash_block_index_and_probe_bits_of_fixed_keys() {
    // (Key 2 sets five bits: two of its six probes meet.)
    let want: [(u64, &[u32]); 5] = [
        (935, &[56, 61, 286, 331, 372, 482]),
        (41, &[112, 315, 321, 404, 494]),
        (439, &[145, 152, 167, 303, 317, 375]),
        (518, &[69, 96, 143, 182, 222, 406]),
        (852, &[71, 72, 131, 243, 357, 433]),
    ];
    for (key, (block, bits)) in probe_keys().iter().zip(want) {
        let mut f = BlockedBloomFilter::with_blocks_and_scheme(1000, 6, Xxh3Scheme).unwrap();
        assert_eq!(f.layout(), Layout::OneHash);
        f.insert(&key[..]);
        assert_eq!(set_bits(&f), [(block, bits.to_vec())]);
        let x = xxhash_rust::xxh3::xxh3_64_with_seed(key, u64::from_le_bytes(*b"bloomlab"));
        assert_eq!(Xxh3Scheme.hash64(key), x);
        assert_eq!(bits_by_the_rule(x as u32), bits.to_vec());
        assert_eq!(
            ((x >> 32) * 1000) >> 32,
            block,
            "block = ((x >> 32) · blocks) >> 32"
        );
    }
}

/// 2 blocks, k = 6, keys k0 … k99, format version 3.
const SMALL_V3: &str = "424c4142030002010000000000000000a800000000000000d6dea24f1bd6fd6b\
                        0200000000000000060000000000000064000000000000007600000000000000\
                        00000000000000001f63065e498d61b50c6c2a104c3c09dc3c8678e06f60e302\
                        240faeca60f8de243811b48611e472124ae162c0d16cb423ca7507258e41d9c8\
                        0a583c442d0e1c640a75b292d70d752319b38c305a8cba51ea1467039754c3bf\
                        29b53b2ae7f15d14da27a0609fc6d055f90f18608936cb34d1213078c8cebf36\
                        2b01f3c8060a884b";

#[test]
fn one_hash_serialized_bytes_and_literal_answers() {
    let mut f = BlockedBloomFilter::with_blocks_and_scheme(2, 6, Xxh3Scheme).unwrap();
    assert_eq!(f.layout(), Layout::OneHash);
    f.extend(keys("k", 100));
    assert_eq!(f.to_bytes(), from_hex(SMALL_V3));
    check_ten_thousand(
        Layout::OneHash,
        "blocked v3 10^4 at 1 %",
        0x81ae_13ae_e17f_e335,
    );
    check_literal(SMALL_V3, Layout::OneHash, &[44]);
}
