//! Known-answer vectors of the classic filter: both byte formats (the checked envelope and the
//! seed's BLM1) and the probe layout, for the xxh3 scheme named explicitly. See the
//! conformance crate's docs for why they exist; a change to any literal here needs a format
//! version bump.

use bloomlab_classic::{BloomFilter, BloomFilterView};
use bloomlab_conformance::kat::{POSITIONS_1000_K7, check_answers, keys, probe_keys};
use bloomlab_conformance::{self as conf, from_hex};
use bloomlab_core::Xxh3Scheme;

#[test]
fn probe_bits_of_fixed_keys() {
    for (key, want) in probe_keys().iter().zip(POSITIONS_1000_K7) {
        let mut f = BloomFilter::with_bits_and_scheme(1000, 7, Xxh3Scheme).unwrap();
        f.insert(&key[..]);
        let set: Vec<u64> = (0..1000).filter(|&i| f.bit_array().get(i)).collect();
        assert_eq!(set, want, "key of {} bytes", key.len());
    }
}

const CHECKED_SMALL: &str = "424c414201000101000000000000000034000000000000008ba3a34bd4757faa\
                             600000000000000007000000000000000a000000000000000a00000000000000\
                             7b14ae47e17a843f0f08259cfbde13fa4ea5813f";

#[test]
fn checked_format_bytes() {
    // n = 10 at 1 %: m = 96, k = 7; keys k0 … k9.
    let mut f = BloomFilter::with_fpr_and_scheme(10, 0.01, Xxh3Scheme).unwrap();
    f.extend(keys("k", 10));
    assert_eq!(f.to_bytes(), from_hex(CHECKED_SMALL));
    let g = BloomFilter::with_fpr_and_scheme(10_000, 0.01, Xxh3Scheme);
    let want = ("classic 10^4 at 1 %", 12_054, 0x8438_2d6c_1138_1c38);
    conf::kat::check_ten_thousand(g, BloomFilter::to_bytes, want);
}

const BLM1_SMALL: &str = "424c4d3100000003000000800000001eab56b9389eb06eb6337067e29b0cc9b2";

#[test]
fn blm1_bytes() {
    // m = 128, k = 3, keys k0 … k29: header "BLM1" | k | m | count (big-endian u32), then bits.
    let mut f: BloomFilter<Xxh3Scheme> =
        BloomFilter::with_bits_and_scheme(128, 3, Xxh3Scheme).unwrap();
    f.extend(keys("k", 30));
    assert_eq!(f.to_blm1().unwrap(), from_hex(BLM1_SMALL));
}

#[test]
fn literal_filters_decode_and_answer_as_written() {
    let checked = from_hex(CHECKED_SMALL);
    let f = BloomFilter::from_bytes(&checked).unwrap();
    let view = BloomFilterView::new(&checked).unwrap();
    check_answers(
        &[&|k| f.might_contain(k), &|k| view.might_contain(k)],
        10,
        &[105, 112, 126, 182, 222, 230],
    );

    let blm1 = from_hex(BLM1_SMALL);
    let g = BloomFilter::from_blm1(&blm1).unwrap();
    let gv = BloomFilterView::from_blm1(&blm1).unwrap();
    let want = [
        0, 5, 6, 18, 21, 35, 36, 42, 57, 66, 69, 86, 106, 118, 121, 124, 126, 127, 142, 153, 158,
        159, 170, 172, 175, 183, 190, 226, 229, 230, 232, 234, 238, 239, 243, 244, 251, 252, 255,
    ];
    check_answers(
        &[&|k| g.might_contain(k), &|k| gv.might_contain(k)],
        30,
        &want,
    );
}
