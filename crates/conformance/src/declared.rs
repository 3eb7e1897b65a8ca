//! A variant's [`Declared`] declaration held to a filter of it: each variant's conformance
//! tests call [`check_declared`] with what its own inherent methods answer, so a declaration
//! (or a trait method) that says something else fails in the variant's crate.

use bloomlab_core::declare::{self, Changes};
use bloomlab_core::error::Error;
use bloomlab_core::format::{self, Variant};
use bloomlab_core::{Declared, Filter};

/// The keys of the check: `count` distinct 8-byte keys from `start`.
fn keys(start: u64, count: u64) -> Vec<[u8; 8]> {
    (start..start + count).map(u64::to_le_bytes).collect()
}

/// What `F` declares, checked against filters of it built from 2 000 keys at 1 %:
///
/// - its tag is `tag`; its versions ascend; it writes the newest, and reads back what it wrote
///   (equal, every key present); a truncated copy is an error;
/// - it is static exactly when an empty one cannot be sized ([`Error::Static`]), and an empty
///   one takes a key otherwise; a growing one holds four times its start capacity;
/// - [`Declared::fill`] and [`Declared::estimate`] answer what the variant's own methods
///   `fill` and `estimate` answer (given by the caller), and [`Declared::fill_fpr`] an FPR in
///   (0, 5 %);
/// - where it declares no reason against a union, [`Declared::union_in`] of two halves holds
///   both; where it declares one, the union is refused with that reason.
pub fn check_declared<F>(
    tag: Variant,
    fill: impl Fn(&F) -> Option<f64>,
    estimate: impl Fn(&F) -> Option<f64>,
) where
    F: Declared + for<'a> TryFrom<&'a [u8], Error = bloomlab_core::Error>,
    F::Scheme: Default,
{
    let d = F::DECLARATION;
    let name = d.name();
    assert_eq!(d.variant, tag, "{name} declares another tag");
    assert!(!d.versions.is_empty() && d.versions.windows(2).all(|w| w[0] < w[1]));
    assert!(!d.design.is_empty(), "{name}: no design line");

    let all = keys(0, 2_000);
    let f: F = declare::build(&all, 0.01).unwrap();
    assert!(all.iter().all(|k| f.might_contain_bytes(k)), "{name}");
    assert_eq!((f.params().variant, f.len()), (tag, 2_000), "{name}");

    let bytes = f.to_bytes();
    let (info, _) = format::open(&bytes).unwrap();
    assert_eq!((info.variant, info.version), (tag, d.writes()), "{name}");
    assert_eq!(declare::from_bytes::<F>(&bytes).unwrap(), f, "{name}");
    assert!(declare::from_bytes::<F>(&bytes[..bytes.len() - 1]).is_err());
    assert_eq!(
        F::try_from(&bytes[..]).unwrap(),
        f,
        "{name}: TryFrom<&[u8]>"
    );
    assert!(F::try_from(&bytes[..bytes.len() - 1]).is_err());

    assert_eq!(Declared::fill(&f), fill(&f), "{name}: fill");
    assert_eq!(Declared::estimate(&f), estimate(&f), "{name}: estimate");
    let fpr = Declared::fill_fpr(&f).unwrap_or(-1.0);
    assert!(
        fpr > 0.0 && fpr < 0.05,
        "{name}: the FPR of its fill is {fpr}"
    );

    check_changes::<F>(&all);
    check_union(&f, &all);
    check_builder::<F>(&all, &f, &bytes);
}

/// The builder is the variant's constructors under one set of names: the same filters, the
/// same errors, and a typed error naming a parameter not given.
fn check_builder<F: Declared>(all: &[[u8; 8]], built: &F, bytes: &[u8])
where
    F::Scheme: Default,
{
    let name = F::DECLARATION.name();
    assert_eq!(
        F::builder().fpr(0.01).build_from(all).as_ref(),
        Ok(built),
        "{name}"
    );
    assert_eq!(F::builder().from_bytes(bytes).as_ref(), Ok(built), "{name}");
    let sized = F::builder().items(500).fpr(0.01).build();
    assert_eq!(sized, declare::with_fpr::<F>(500, 0.01), "{name}");
    assert_eq!(
        F::builder().items(500).fpr(2.0).build().map(|_| ()),
        declare::with_fpr::<F>(500, 2.0).map(|_| ()),
        "{name}"
    );
    let missing = |r: Result<F, Error>| match r {
        Err(Error::InvalidParameter { name, .. }) => Some(name),
        _ => None,
    };
    assert_eq!(
        missing(F::builder().fpr(0.01).build()),
        Some("items"),
        "{name}"
    );
    assert_eq!(
        missing(F::builder().items(500).build()),
        Some("fpr"),
        "{name}"
    );
    assert_eq!(missing(F::builder().build_from(all)), Some("fpr"), "{name}");
}

/// Static exactly when it cannot be sized empty; a growing one holds four times its start.
fn check_changes<F: Declared>(all: &[[u8; 8]])
where
    F::Scheme: Default,
{
    let d = F::DECLARATION;
    let empty = declare::with_fpr::<F>(500, 0.01);
    assert_eq!(
        matches!(empty, Err(Error::Static(_))),
        d.changes == Changes::Static,
        "{}",
        d.name()
    );
    let Ok(mut e) = empty else { return };
    let n = if d.grows() { all.len() } else { 1 };
    for k in &all[..n] {
        e.insert_bytes(k).unwrap();
    }
    assert!(all[..n].iter().all(|k| e.might_contain_bytes(k)));
    assert_eq!(e.len(), n as u64, "{}", d.name());
}

/// The union of two halves holds both where the variant declares none against it, and is
/// refused with the declared reason where it does.
fn check_union<F: Declared>(f: &F, all: &[[u8; 8]])
where
    F::Scheme: Default,
{
    let d = F::DECLARATION;
    let (lo, hi) = all.split_at(all.len() / 2);
    let half = |part: &[[u8; 8]]| -> Option<F> {
        let mut h: F = declare::with_fpr(all.len() as u64, 0.01).ok()?;
        for k in part {
            h.insert_bytes(k).unwrap();
        }
        Some(h)
    };
    match (d.no_union, half(lo), half(hi)) {
        (None, Some(mut a), Some(b)) => {
            a.union_in(&b).unwrap();
            assert!(all.iter().all(|k| a.might_contain_bytes(k)), "{}", d.name());
        }
        (Some(why), ..) => match f.clone().union_in(f) {
            Err(Error::Incompatible(e)) => assert_eq!(e, why),
            other => panic!("{}: declares {why:?}, union gave {other:?}", d.name()),
        },
        (None, ..) => panic!("{}: no union refused, but no halves to join", d.name()),
    }
}

/// The test `its_declaration_holds` of a variant: [`check_declared`] for `$ty` under
/// `Variant::$tag`, its fill and estimate its own methods' (`fill: method` and `estimate:
/// method`, each left out where the variant has none).
#[macro_export]
macro_rules! declaration_test {
    ($ty:ty, $tag:ident $(, fill: $fill:ident)? $(, estimate: $est:ident)?) => {
        /// What the variant declares of itself holds for a filter of it.
        #[test]
        fn its_declaration_holds() {
            $crate::declared::check_declared::<$ty>(
                bloomlab_core::Variant::$tag,
                |_f| None $(.or(Some(_f.$fill())))?,
                |_f| None $(.or(Some(_f.$est())))?,
            );
        }
    };
}
