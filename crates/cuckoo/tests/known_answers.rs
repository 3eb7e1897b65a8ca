//! Known-answer vectors of the cuckoo filter (xxh3 scheme named explicitly): the first bucket,
//! fingerprint and alternate bucket of fixed keys at two fingerprint widths, the exact bytes of
//! a small filter and the digest of a larger one, and a literal encoded filter decoded and
//! queried. A change to any literal here needs a format version bump.

use bloomlab_conformance::kat::{keys, positives, probe_keys};
use bloomlab_conformance::{self as conf, from_hex};
use bloomlab_core::Xxh3Scheme;
use bloomlab_cuckoo::CuckooFilter;

/// `(first bucket, fingerprint, alternate bucket)` of one key.
type Placement = (u64, u32, u64);

#[test]
fn bucket_fingerprint_and_alternate_of_fixed_keys() {
    // 1000 items → 264 buckets. i1 = ⌊h1·N/2^64⌋, fp = 1 + ⌊h2·(2^f − 1)/2^64⌋,
    // alt = (⌊fmix64(fp)·N/2^64⌋ − i1) mod N. A fresh filter stores the key in slot 0 of i1.
    let want: [(u32, [Placement; 5]); 2] = [
        (
            10,
            [
                (63, 698, 100),
                (10, 737, 46),
                (25, 520, 50),
                (115, 738, 241),
                (225, 761, 104),
            ],
        ),
        (
            7,
            [
                (63, 87, 194),
                (10, 92, 34),
                (25, 65, 151),
                (115, 92, 193),
                (225, 95, 190),
            ],
        ),
    ];
    for (f_bits, rows) in want {
        for (key, (i1, fp, alt)) in probe_keys().iter().zip(rows) {
            let mut f =
                CuckooFilter::with_fingerprint_bits_and_scheme(1000, f_bits, Xxh3Scheme).unwrap();
            assert_eq!(f.num_buckets(), 264);
            f.insert(&key[..]).unwrap();
            let stored = f.table().stored();
            assert_eq!(
                stored,
                [(i1, 0, fp)],
                "f = {f_bits}, key of {} bytes",
                key.len()
            );
            assert_eq!(
                f.alt_bucket(i1, fp),
                alt,
                "f = {f_bits}, key of {} bytes",
                key.len()
            );
        }
    }
}

/// 8 items → 3 buckets of 4 ten-bit slots; keys k0 … k6.
const SMALL: &str = "424c414201000501000000000000000037000000000000000586afc021fd0cdf\
                     03000000000000000a0000000400000007000000000000000800000000000000\
                     000000000000000038b8070000eb2e3a0300e83b0e0000";

#[test]
fn serialized_bytes_after_fixed_inserts() {
    let mut f = CuckooFilter::with_fingerprint_bits_and_scheme(8, 10, Xxh3Scheme).unwrap();
    for k in keys("k", 7) {
        f.insert(&k).unwrap();
    }
    assert_eq!(f.to_bytes(), from_hex(SMALL));
    let g = CuckooFilter::with_fpr_and_scheme(10_000, 0.01, Xxh3Scheme);
    let want = ("cuckoo 10^4 at 1 %", 13_232, 0xc5ed_b6af_26dd_5656);
    conf::kat::check_ten_thousand(g, CuckooFilter::to_bytes, want);
}

#[test]
fn literal_filter_decodes_and_answers_as_written() {
    let mut f = CuckooFilter::from_bytes(&from_hex(SMALL)).unwrap();
    assert_eq!((f.num_buckets(), f.fingerprint_bits(), f.len()), (3, 10, 7));
    assert!(keys("k", 7).iter().all(|k| f.might_contain(k)));
    assert_eq!(positives(|k| f.might_contain(k)), [68]);
    // Every stored fingerprint can be found and removed again from its two buckets.
    for k in keys("k", 7) {
        assert!(f.remove(&k), "{k}");
    }
    assert!(f.is_empty());
}
