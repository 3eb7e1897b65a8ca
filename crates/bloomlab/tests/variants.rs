//! The facade's one list of variants against what each variant declares of itself: every tag
//! once, each declaration true of the filter it describes.

#![cfg(all(
    feature = "classic",
    feature = "blocked",
    feature = "sbbf",
    feature = "counting",
    feature = "cuckoo",
    feature = "scalable",
    feature = "expandable",
    feature = "ribbon"
))]

use bloomlab::declare::{self, Changes};
use bloomlab::{Declared, Error, Filter, Variant, format};

/// What one variant's declaration says, checked against a filter of it holding 2 000 keys.
fn check<F: Declared>(tag: Variant)
where
    F::Scheme: Default,
{
    let d = F::DECLARATION;
    assert_eq!(d.variant, tag, "{} declares another tag", d.name());
    assert!(!d.versions.is_empty() && d.versions.windows(2).all(|w| w[0] < w[1]));
    assert!(!d.design.is_empty());
    let keys: Vec<u64> = (0..2_000).collect();
    let f: F = declare::build(&keys, 0.01).unwrap();
    assert!(keys.iter().all(|k| f.might_contain_bytes(&k.to_le_bytes())));
    assert_eq!(f.params().variant, tag);
    // It writes its newest version, and reads back what it wrote.
    let bytes = f.to_bytes();
    let (info, _) = format::open(&bytes).unwrap();
    assert_eq!(
        (info.variant, info.version),
        (tag, d.writes()),
        "{}",
        d.name()
    );
    assert_eq!(declare::from_bytes::<F>(&bytes).unwrap(), f);
    // Static exactly when it cannot be sized empty and takes no inserts.
    let empty = declare::with_fpr::<F>(2_000, 0.01);
    assert_eq!(
        matches!(empty, Err(Error::Static(_))),
        d.changes == Changes::Static,
        "{}",
        d.name()
    );
    if let Ok(mut e) = empty {
        e.insert_bytes(b"k").unwrap();
        assert!(e.might_contain_bytes(b"k"));
    }
    // A union exactly where it declares none refused; the union of a filter with itself
    // keeps it as it was.
    let mut u = f.clone();
    match (d.no_union, u.union_in(&f)) {
        (None, Ok(())) => assert!(keys.iter().all(|k| u.might_contain_bytes(&k.to_le_bytes()))),
        (Some(why), Err(Error::Incompatible(e))) => assert_eq!(e, why),
        (why, got) => panic!("{}: declares {why:?}, union gave {got:?}", d.name()),
    }
}

macro_rules! check_all {
    ($k:tt; $($tag:ident $ty:ident $scheme:ident;)*) => {{
        let tags = [$(Variant::$tag),*];
        $(check::<$k::$ty>(Variant::$tag);)*
        tags
    }};
}

#[test]
fn the_list_names_every_variant_once_and_each_declaration_holds() {
    let mut tags = bloomlab::for_each_variant!(check_all).to_vec();
    tags.sort();
    assert_eq!(tags, Variant::ALL);
}
