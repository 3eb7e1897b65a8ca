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
            filled(ScalableBloomFilter::new(100, 0.01).unwrap()).to_bytes(),
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
