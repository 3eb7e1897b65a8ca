//! Small promises of core's public helpers, each checked against values worked out here:
//! murmur3's finaliser, clearing a bit array, and the length check of batched lookups.

#![forbid(unsafe_code)]

use bloomlab_core::hash::fmix64;
use bloomlab_core::{BitArray, Error};

#[test]
fn fmix64_is_murmur3s_64_bit_finaliser() {
    // fmix64 of MurmurHash3 (x ^= x >> 33; x *= 0xff51afd7ed558ccd; x ^= x >> 33;
    // x *= 0xc4ceb9fe1a85ec53; x ^= x >> 33), worked out once with Python's integers.
    for (x, want) in [
        (0, 0),
        (1, 0xb456_bcfc_34c2_cb2c),
        (0xdead_beef, 0xd24b_d59f_862a_1dac),
        (1 << 63, 0x8f78_0810_af31_a493),
        (u64::MAX, 0x64b5_720b_4b82_5f21),
    ] {
        assert_eq!(fmix64(x), want, "fmix64({x:#x})");
    }
}

#[test]
fn clear_leaves_no_bit_set() {
    for len in [1u64, 63, 64, 65, 1000] {
        let mut bits = BitArray::new(len).unwrap();
        for i in (0..len).step_by(3) {
            bits.set(i);
        }
        assert!(bits.count_ones() > 0);
        bits.clear();
        assert_eq!(bits.count_ones(), 0, "len {len}");
        assert!((0..len).all(|i| !bits.get(i)), "len {len}");
        assert_eq!(bits.len(), len);
    }
}

#[test]
fn a_batch_needs_exactly_one_answer_slot_per_key() {
    assert!(Error::check_out_len(0, 0).is_ok());
    assert!(Error::check_out_len(5, 5).is_ok());
    for (keys, slots) in [(5, 4), (4, 5), (0, 1), (1, 0)] {
        match Error::check_out_len(keys, slots) {
            Err(Error::InvalidParameter { name, reason }) => {
                assert_eq!(name, "out");
                assert!(
                    reason.contains(&format!("{slots} slots for {keys} keys")),
                    "{reason}"
                );
            }
            other => panic!("{keys} keys, {slots} slots: {other:?}"),
        }
    }
}
