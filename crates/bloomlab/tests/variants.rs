//! The facade's one list of variants: every tag once, each type declaring the tag it is listed
//! under (each variant's conformance tests hold its declaration to its filter).

// The list exists with every variant's feature, as in the default build.
#![cfg(feature = "default")]

use bloomlab::{Declared, Variant};

macro_rules! check_all {
    ($k:tt; $($tag:ident $ty:ident $scheme:ident;)*) => {{
        let tags = [$(Variant::$tag),*];
        $(assert_eq!(<$k::$ty as Declared>::DECLARATION.variant, Variant::$tag);)*
        tags
    }};
}

#[test]
fn the_list_names_every_variant_once_under_its_own_tag() {
    let mut tags = bloomlab::for_each_variant!(check_all).to_vec();
    tags.sort();
    assert_eq!(tags, Variant::ALL);
}
