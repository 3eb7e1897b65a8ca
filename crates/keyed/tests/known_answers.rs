//! Known-answer vectors of the keyed scheme (id 2, SipHash-2-4 with 128-bit output) under fixed
//! secrets, and of the keyed classic and blocked filters' bytes under one of them. A keyed
//! filter can only be read back by recomputing these values from the secret, so if one changes,
//! every keyed filter stored before answers wrongly: a change needs a new scheme id, never an
//! edited literal alone.

use bloomlab_blocked::{BlockedBloomFilter, Layout};
use bloomlab_classic::BloomFilter;
use bloomlab_conformance::kat::{keys, positives};
use bloomlab_conformance::{self as conf, from_hex};
use bloomlab_core::{HashScheme, KeyHash, SchemeId};
use bloomlab_keyed::{KEY_CHECK_INPUT, KeyedBlockedBloomFilter, KeyedBloomFilter, SipScheme};

const SECRET: [u8; 16] = *b"bloomlab secret!";

fn scheme() -> SipScheme {
    SipScheme::from_secret(SECRET)
}

#[test]
fn sip_scheme_128_bit_output_under_a_fixed_secret() {
    // h1 = first (low) 64-bit half of SipHash-2-4-128, h2 = second half forced odd.
    let s = scheme();
    let cases: [(&[u8], u64, u64); 4] = [
        (b"", 0x5869_13d9_2dcb_e301, 0x8bc1_34bf_c143_5f4d),
        (b"a", 0xc584_2c5d_51d7_80ce, 0xf310_97cc_dfc0_d051),
        (b"user:42", 0x0447_2114_943a_0c39, 0xeeb5_feaf_3699_fed9),
        (
            &42u64.to_le_bytes(),
            0x755e_151e_e835_493a,
            0x0493_6e6d_d886_68e7,
        ),
    ];
    for (key, h1, h2) in cases {
        assert_eq!(s.hash(key), KeyHash { h1, h2 }, "{key:?}");
    }
    let long: Vec<u8> = (0..1024u32).map(|i| i as u8).collect();
    assert_eq!(
        s.hash(&long),
        KeyHash {
            h1: 0x00a1_e3d8_1bfe_e0df,
            h2: 0x3dfe_e3ff_6ea2_58e5
        }
    );
    // The key check value: SipHash-2-4-64 of KEY_CHECK_INPUT under the secret.
    assert_eq!(KEY_CHECK_INPUT, b"bloomlab key check v1");
    assert_eq!(s.key_check(), 0xab6c_4b63_6de4_7202);
    let d = s.descriptor();
    assert_eq!(
        (d.id, d.id as u8, d.key_check),
        (SchemeId::SipHash24Km, 2, 0xab6c_4b63_6de4_7202)
    );
}

#[test]
fn sip_scheme_under_the_paper_key() {
    let s = SipScheme::from_secret(std::array::from_fn(|i| i as u8));
    // The SipHash reference implementation's first 128-bit vector (key 00 01 … 0f, empty
    // message): output bytes a3 81 7f 04 ba 25 a8 e6 | 6d f6 72 14 c7 55 02 93. h1 is the first
    // eight bytes read little-endian, h2 the last eight (already odd).
    let reference: [u8; 16] = [
        0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6, 0x6d, 0xf6, 0x72, 0x14, 0xc7, 0x55, 0x02,
        0x93,
    ];
    let h = s.hash(b"");
    assert_eq!([h.h1.to_le_bytes(), h.h2.to_le_bytes()].concat(), reference);
    assert_eq!(
        h,
        KeyHash {
            h1: 0xe6a8_25ba_047f_81a3,
            h2: 0x9302_55c7_1472_f66d
        }
    );
    // Message 00 01 … 0e under the same key.
    let msg: Vec<u8> = (0..15).collect();
    assert_eq!(
        s.hash(&msg),
        KeyHash {
            h1: 0x11a8_b033_99e9_9354,
            h2: 0xd9c3_cf97_0fec_087f
        }
    );
    assert_eq!(s.key_check(), 0x5cff_4a87_5cb9_0fbc);
}

/// Keyed classic, n = 10 at 1 % (m = 96, k = 7), keys k0 … k9.
const CLASSIC: &str = "424c4142010001020272e46d634b6cab3400000000000000eee6f679c03e12b3\
                       600000000000000007000000000000000a000000000000000a00000000000000\
                       7b14ae47e17a843fd057228fbd7d6d44be7a9a64";

/// Keyed blocked, 2 blocks, k = 6, keys k0 … k99.
const BLOCKED: &str = "424c4142010002020272e46d634b6caba800000000000000234e69a3d4b44070\
                       0200000000000000060000000000000064000000000000007600000000000000\
                       00000000000000001195c7325611170b82803a1c038610c945468b119719941e\
                       c756766634f697a338385cd5dfe7ea09430c377384b6e0f97ae20904596c1728\
                       c54580b1c461eac5f46624f2dc961c631a0c03be81085024b645e37999ce0812\
                       18a1e1c3af12d641b04654c0d298aa6b8238c1200b0adbe8f57d365cc8c4a1dd\
                       6ab85500a54fd9d2";

#[test]
fn keyed_filters_bytes_under_the_secret() {
    let mut c: KeyedBloomFilter<SipScheme> =
        BloomFilter::with_fpr_and_scheme(10, 0.01, scheme()).unwrap();
    c.extend(keys("k", 10));
    assert_eq!(c.to_bytes(), from_hex(CLASSIC));
    let mut b: KeyedBlockedBloomFilter<SipScheme> =
        BlockedBloomFilter::with_blocks_and_scheme(2, 6, scheme())
            .and_then(|f| f.with_layout(Layout::Wide64))
            .unwrap();
    b.extend(keys("k", 100));
    assert_eq!(b.to_bytes(), from_hex(BLOCKED));

    let mut c: KeyedBloomFilter<SipScheme> =
        BloomFilter::with_fpr_and_scheme(10_000, 0.01, scheme()).unwrap();
    c.extend(0..10_000u64);
    conf::check_known_answer(
        "keyed classic 10^4",
        &c.to_bytes(),
        12_054,
        0xa0dd_f936_8c15_92ba,
    );
    let mut b: KeyedBlockedBloomFilter<SipScheme> =
        BlockedBloomFilter::with_fpr_and_scheme(10_000, 0.01, scheme())
            .and_then(|f| f.with_layout(Layout::Wide64))
            .unwrap();
    b.extend(0..10_000u64);
    conf::check_known_answer(
        "keyed blocked 10^4",
        &b.to_bytes(),
        12_488,
        0xd655_558c_62ee_53aa,
    );
}

#[test]
fn literal_keyed_filters_decode_and_answer_as_written() {
    let c = BloomFilter::from_bytes_with_scheme(&from_hex(CLASSIC), scheme()).unwrap();
    assert!(keys("k", 10).iter().all(|k| c.might_contain(k)));
    assert_eq!(positives(|k| c.might_contain(k)), [152, 236, 238]);
    let b = BlockedBloomFilter::from_bytes_with_scheme(&from_hex(BLOCKED), scheme()).unwrap();
    assert!(keys("k", 100).iter().all(|k| b.might_contain(k)));
    assert_eq!(positives(|k| b.might_contain(k)), [79, 120, 168, 247]);
    // Only this secret reads them.
    let other = SipScheme::from_secret([0; 16]);
    assert!(BloomFilter::from_bytes_with_scheme(&from_hex(CLASSIC), other.clone()).is_err());
    assert!(BlockedBloomFilter::from_bytes_with_scheme(&from_hex(BLOCKED), other).is_err());
}
