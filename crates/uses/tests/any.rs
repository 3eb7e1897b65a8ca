//! `AnyFilter` decodes every variant and writes back the very bytes it read, and the
//! results writer puts the text where it says.

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_classic::BloomFilter;
use bloomlab_core::Filter;
use bloomlab_counting::CountingBloomFilter;
use bloomlab_cuckoo::CuckooFilter;
use bloomlab_expandable::ExpandableFilter;
use bloomlab_ribbon::RibbonFilter;
use bloomlab_sbbf::Sbbf;
use bloomlab_scalable::ScalableBloomFilter;
use bloomlab_uses::any::AnyFilter;

fn filled<F: Filter>(mut f: F) -> F {
    for i in 0..500u64 {
        f.insert_bytes(&i.to_le_bytes()).unwrap();
    }
    f
}

#[test]
fn every_variant_decodes_and_encodes_back_to_the_same_bytes() {
    let keys = (0..500u64).map(|i| i.to_le_bytes());
    let encoded: Vec<(&str, Vec<u8>)> = vec![
        (
            "classic",
            filled(BloomFilter::with_fpr(500, 0.01).unwrap()).to_bytes(),
        ),
        (
            "blocked",
            filled(BlockedBloomFilter::with_fpr(500, 0.01).unwrap()).to_bytes(),
        ),
        (
            "counting",
            filled(CountingBloomFilter::with_fpr(500, 0.01).unwrap()).to_bytes(),
        ),
        (
            "scalable",
            filled(ScalableBloomFilter::with_fpr(100, 0.01).unwrap()).to_bytes(),
        ),
        (
            "cuckoo",
            filled(CuckooFilter::with_fpr(500, 0.01).unwrap()).to_bytes(),
        ),
        (
            "ribbon",
            RibbonFilter::build(keys, 0.01).unwrap().to_bytes(),
        ),
        (
            "sbbf",
            filled(Sbbf::with_fpr(500, 0.01).unwrap()).to_bytes(),
        ),
        (
            "expandable",
            filled(ExpandableFilter::new(0.01).unwrap()).to_bytes(),
        ),
    ];
    for (name, bytes) in encoded {
        let (any, _) = AnyFilter::decode(&bytes).unwrap();
        assert_eq!(any.to_bytes(), bytes, "{name}: re-encoded bytes differ");
        let f = any.as_filter();
        assert_eq!(f.len(), 500, "{name}");
        assert!(
            (0..500u64).all(|i| f.might_contain_bytes(&i.to_le_bytes())),
            "{name}: a key was lost"
        );
    }
}

#[test]
fn write_result_writes_the_text_at_the_path_it_returns() {
    let name = format!("write-result-check-{}.md", std::process::id());
    let text = "| a | b |\n|---|---|\n| 1 | 2 |\n";
    let path = bloomlab_uses::write_result(&name, text).unwrap();
    let read = std::fs::read_to_string(&path);
    std::fs::remove_file(&path).ok();
    assert_eq!(read.unwrap(), text);
    assert!(
        path.ends_with(std::path::Path::new("uses").join(&name)),
        "{path:?}"
    );
}

/// Every arm answers as its filter does: the fill, its FPR and the estimate are the variant's
/// own, removal and union follow its declaration, and the filter behind the trait takes keys.
#[test]
fn every_arm_answers_as_its_filter_declares() {
    use bloomlab::Declared;
    use bloomlab_core::{Error, Variant};
    use bloomlab_uses::any::declaration;

    let blocked = filled(BlockedBloomFilter::with_fpr(500, 0.01).unwrap());
    let counting = filled(CountingBloomFilter::with_fpr(500, 0.01).unwrap());
    let cuckoo = filled(CuckooFilter::with_fpr(500, 0.01).unwrap());
    let scalable = filled(ScalableBloomFilter::with_fpr(100, 0.01).unwrap());
    let any = |bytes: Vec<u8>| AnyFilter::decode(&bytes).unwrap().0;
    let (mut b, c, k, s) = (
        any(blocked.to_bytes()),
        any(counting.to_bytes()),
        any(cuckoo.to_bytes()),
        any(scalable.to_bytes()),
    );
    let answers = |a: &AnyFilter| (a.fill_ratio(), a.current_fpr(), a.estimated_len());
    assert_eq!(
        answers(&b),
        (
            Some(blocked.fill_ratio()),
            Some(blocked.current_fpr()),
            Some(blocked.estimated_len())
        )
    );
    assert_eq!(
        answers(&c),
        (
            Some(counting.fill_ratio()),
            Some(counting.current_fpr()),
            Some(counting.estimated_len())
        )
    );
    assert_eq!(
        answers(&k),
        (Some(cuckoo.load()), Some(cuckoo.expected_fpr()), None)
    );
    assert_eq!(answers(&s), (None, Some(scalable.current_fpr()), None));
    for (a, variant, removes) in [
        (&b, Variant::Blocked, false),
        (&c, Variant::Counting, true),
        (&k, Variant::Cuckoo, true),
        (&s, Variant::Scalable, false),
    ] {
        assert_eq!(a.declaration().variant, variant);
        assert_eq!(a.supports_removal(), removes, "{variant}");
    }
    for v in Variant::ALL {
        assert_eq!(declaration(v).variant, v);
    }
    // A union where the variant has one, its reason where not, and none across variants.
    let twin = b.clone();
    b.union_in(&twin).unwrap();
    // The same bits; the count is the two counts' sum (an upper bound of the distinct keys).
    assert_eq!(
        (b.fill_ratio(), b.as_filter().len()),
        (twin.fill_ratio(), 1_000)
    );
    let why = <CountingBloomFilter as Declared>::DECLARATION
        .no_union
        .unwrap();
    assert_eq!(c.clone().union_in(&c), Err(Error::Incompatible(why.into())));
    assert!(matches!(b.union_in(&c), Err(Error::Incompatible(_))));
    // The filter behind the trait takes keys.
    b.as_filter_mut().insert_bytes(b"new").unwrap();
    assert!(b.as_filter().might_contain_bytes(b"new"));
    assert_eq!(b.as_filter().len(), 1_001);
}
