//! One generic adapter for every bloomlab variant, and the registry entries derived from the
//! facade's one list of variants (`bloomlab::for_each_variant!`): each variant's plain entry
//! and, where it takes a hash scheme and inserts, its keyed twin, sized and described from
//! its [`Declared`] declaration. The batched entries and the earlier keyed scheme's entry are
//! written out below (four variants have a batched API).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::error::Error;
use bloomlab::Declared;
use bloomlab::declare::{Changes, Declaration, Hashes};
use bloomlab_core::{Filter, HashScheme, Xxh3Scheme};

use bloomlab_keyed::{Sip64Scheme, SipScheme};

use super::{Adapter, Curve, Entry, Info, Kind, Spec};
use crate::keys::Keys;

/// The scheme the harness hashes one of our filters with: the default one, or a keyed one
/// under the fixed [`HARNESS_SECRET`].
pub trait HarnessScheme: HashScheme + Send + Sync + 'static {
    /// The scheme's value in every run.
    fn harness() -> Self;
}

impl HarnessScheme for Xxh3Scheme {
    fn harness() -> Self {
        Xxh3Scheme
    }
}

impl HarnessScheme for bloomlab_sbbf::ParquetScheme {
    fn harness() -> Self {
        bloomlab_sbbf::ParquetScheme
    }
}

impl HarnessScheme for Sip64Scheme {
    fn harness() -> Self {
        harness_secret()
    }
}

impl HarnessScheme for SipScheme {
    fn harness() -> Self {
        SipScheme::from_secret(HARNESS_SECRET)
    }
}

/// A filter of variant `F` for `n` items at target FPR `p`: a growing variant starts at `n/8`
/// and grows to `n`, like the growing peers, so a measurement at `n` includes the growth; a
/// static one is built from the keys instead ([`Error`] here).
pub fn sized<F: Declared>(n: u64, p: f64) -> bloomlab_core::Result<F>
where
    F::Scheme: HarnessScheme,
{
    let start = if F::DECLARATION.grows() {
        (n / 8).max(1)
    } else {
        n
    };
    F::with_fpr_and_scheme(start, p, F::Scheme::harness())
}

/// Adapter for one of our filters: the key's bytes through `insert_bytes` /
/// `might_contain_bytes`, as a user with byte keys calls them.
#[derive(Debug)]
pub struct Ours<F>(pub F);

impl<F: Declared + Send + Sync> Adapter for Ours<F>
where
    F::Scheme: HarnessScheme,
{
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        F::DECLARATION
            .takes_inserts()
            .then(|| sized(spec.n, spec.fpr).map(Ours).map_err(Error::from))
    }

    fn build(spec: &Spec, keys: &Keys) -> Result<(Self, u64), Error> {
        if F::DECLARATION.takes_inserts() {
            return insert_all(spec, keys);
        }
        F::build_with_scheme(&keys.views(), spec.fpr, F::Scheme::harness())
            .map(|f| (Ours(f), 0))
            .map_err(Error::from)
    }

    through_filter_trait!();

    fn describe(&self) -> String {
        describe(&self.0, "")
    }
}

/// The adapter trait's default build (an empty filter, then every key inserted), for
/// [`Ours`], whose `build` also serves static variants.
fn insert_all<F: Declared + Send + Sync>(spec: &Spec, keys: &Keys) -> Result<(Ours<F>, u64), Error>
where
    F::Scheme: HarnessScheme,
{
    let mut f = Ours(sized::<F>(spec.n, spec.fpr)?);
    let mut refused = 0;
    keys.for_each(|k| {
        if !f.insert(std::hint::black_box(k)) {
            refused += 1;
        }
    });
    Ok((f, refused))
}

/// `table_bits=… k=… hash=…` (the `k` as the variant counts it), then `extra`.
pub(crate) fn describe<F: Filter + ?Sized>(f: &F, extra: &str) -> String {
    let p = f.params();
    format!(
        "table_bits={} k={} hash={}{extra}",
        p.table_bits,
        p.hashes,
        p.scheme.id.name()
    )
}

/// Registry entry for our filter type `F`, its facts from its declaration.
pub fn entry<F: Declared + Send + Sync>(info: Info) -> Entry
where
    F::Scheme: HarnessScheme,
{
    Entry::new::<Ours<F>>(info)
}

/// What variant `d`'s declaration says of an entry of it named `name`: its family (and so
/// its theoretical curve; a static filter of result bits, Ribbon, follows its own), whether
/// it takes inserts, deletes and grows, and its crate, `bloomlab-<name>`.
fn declared(d: &Declaration, name: &'static str) -> Info {
    let kind = match (d.changes, d.deletes, d.hashes()) {
        (Changes::Static, ..) => Kind::Static,
        (Changes::Grows, ..) => Kind::Scalable,
        (Changes::Fixed, _, Hashes::FingerprintBits) => Kind::Cuckoo,
        (Changes::Fixed, true, _) => Kind::Counting,
        (Changes::Fixed, false, _) => Kind::Bloom,
    };
    let curve = match (kind, d.hashes()) {
        (Kind::Static, Hashes::ResultBits) => Some(Curve::Ribbon),
        _ => kind.curve(),
    };
    Info {
        dynamic: d.takes_inserts(),
        deletes: d.deletes,
        grows: d.grows(),
        curve,
        ..Info::base(name, interned(format!("bloomlab-{}", d.name())), kind)
    }
}

/// `s` with a `'static` lifetime: registry names and notes made from a variant's name, each
/// distinct string allocated once per process.
fn interned(s: String) -> &'static str {
    static SEEN: OnceLock<Mutex<HashMap<String, &'static str>>> = OnceLock::new();
    let mut seen = SEEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    seen.entry(s.clone())
        .or_insert_with(|| Box::leak(s.into_boxed_str()))
}

/// The plain entry of variant `F` (named as the variant is, from `bloomlab-<name>`), sized as
/// [`sized`] says and noted with the declaration's design.
pub fn plain_entry<F: Declared + Send + Sync>() -> Entry
where
    F::Scheme: HarnessScheme,
{
    let d = F::DECLARATION;
    let note = if d.grows() {
        interned(format!("starts at n/8 and grows to n; {}", d.design))
    } else {
        d.design
    };
    entry::<F>(Info {
        note,
        ..declared(&d, d.name())
    })
}

/// The keyed twin of variant `F` (here `F` is the variant's type under [`Sip64Scheme`]):
/// `<name>-keyed`, `None` for a static variant (built once from keys its owner holds).
pub fn keyed_entry<F: Declared<Scheme = Sip64Scheme> + Send + Sync>() -> Option<Entry> {
    let d = F::DECLARATION;
    d.takes_inserts().then(|| {
        entry::<F>(Info {
            keyed: true,
            note: SIP,
            ..declared(&d, interned(format!("{}-keyed", d.name())))
        })
    })
}

/// Every variant's plain entry and keyed twin, in the facade list's order.
pub fn variant_entries() -> Vec<Entry> {
    macro_rules! entries {
        ($k:tt; $($tag:ident $ty:ident $scheme:ident;)*) => {{
            let mut all = Vec::new();
            $(
                all.push(plain_entry::<$k::$ty>());
                entries!(@ $scheme all $k $ty);
            )*
            all
        }};
        (@ scheme $all:ident $k:tt $ty:ident) => {
            $all.extend(keyed_entry::<$k::$ty<Sip64Scheme>>());
        };
        (@ fixed $all:ident $k:tt $ty:ident) => {};
    }
    bloomlab::for_each_variant!(entries)
}

/// One of our filters with a batched lookup (and, where it has one, a batched insert): the
/// adapter behind every `*-batched` entry.
pub trait BatchApi: Declared<Scheme: HarnessScheme> + Send + Sync {
    /// How many keys ahead the batched calls hash and prefetch (for `describe`).
    const AHEAD: usize;

    /// `might_contain_batch` over `keys`.
    fn lookup_batch(&self, keys: &[&[u8]], out: &mut [bool]);

    /// Insert every key: the filter's batched insert where it has one.
    fn insert_all(&mut self, keys: &[&[u8]]) {
        for k in keys {
            let _ = self.insert_bytes(k);
        }
    }
}

/// [`BatchApi`] for a filter type of crate `$krate` (its `BATCH` how far ahead it works):
/// lookups through its `might_contain_batch`, and inserts through its `insert_batch` where
/// `insert_batch` is named.
macro_rules! batch_api {
    (impl $(<$s:ident>)? for $t:ty, $krate:ident $(, $insert_batch:ident)?) => {
        impl$(<$s: HarnessScheme>)? BatchApi for $t {
            const AHEAD: usize = $krate::BATCH;

            fn lookup_batch(&self, keys: &[&[u8]], out: &mut [bool]) {
                self.might_contain_batch(keys, out)
                    .expect("the driver passes equal lengths");
            }

            $(
                fn insert_all(&mut self, keys: &[&[u8]]) {
                    self.$insert_batch(keys);
                }
            )?
        }
    };
}

batch_api!(impl<S> for bloomlab_blocked::BlockedBloomFilter<S>, bloomlab_blocked, insert_batch);
batch_api!(impl<S> for bloomlab_classic::BloomFilter<S>, bloomlab_classic, insert_batch);
batch_api!(impl for bloomlab_sbbf::Sbbf, bloomlab_sbbf);

/// A filter answering through its batched API: lookups are timed over the whole stream with
/// `BatchApi::lookup_batch`, inserts (and the build) with `BatchApi::insert_all`.
#[derive(Debug)]
pub struct Batched<F>(pub F);

impl<F: BatchApi> Adapter for Batched<F> {
    const BATCHED: bool = true;

    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        Some(
            sized::<F>(spec.n, spec.fpr)
                .map(Batched)
                .map_err(Error::from),
        )
    }

    fn build(spec: &Spec, keys: &Keys) -> Result<(Self, u64), Error> {
        let mut f = sized::<F>(spec.n, spec.fpr).map_err(Error::from)?;
        f.insert_all(&keys.views());
        Ok((Batched(f), 0))
    }

    through_filter_trait!();

    fn insert_many(&mut self, keys: &[&[u8]]) -> u64 {
        self.0.insert_all(keys);
        0
    }

    fn contains_batch(&self, keys: &[&[u8]], out: &mut [bool]) {
        self.0.lookup_batch(keys, out);
    }

    fn describe(&self) -> String {
        describe(&self.0, &format!(" batched(prefetch {})", F::AHEAD))
    }
}

const SIP: &str = "probed with one 64-bit SipHash-2-4 per key (h2 = h1 times an odd constant; scheme id 4, the keyed default) under a fixed 16-byte secret (Sip64Scheme::from_secret; a user takes Sip64Scheme::random())";

/// The keyed entries' secret: fixed, so every run builds the same filters and measures the
/// same FPR (speed does not depend on the secret's value).
pub const HARNESS_SECRET: [u8; 16] = *b"bloomlab-harness";

/// [`HARNESS_SECRET`] under the keyed default scheme (id 4).
pub fn harness_secret() -> Sip64Scheme {
    Sip64Scheme::from_secret(HARNESS_SECRET)
}

/// The entry of filter `F` through its batched API: `<of>-batched`, where `of` is the entry
/// that measures the same table one lookup at a time (`blocked`, or `blocked-keyed` under the
/// keyed default scheme, whose crate `bloomlab-keyed` it names as its source); `how` says
/// how its batched calls run.
pub fn batched_entry<F: BatchApi>(how: &str) -> Entry {
    let d = F::DECLARATION;
    let keyed = F::Scheme::harness().descriptor().key_check != 0;
    let (of, source) = if keyed {
        (interned(format!("{}-keyed", d.name())), "bloomlab-keyed")
    } else {
        (d.name(), interned(format!("bloomlab-{}", d.name())))
    };
    Entry::new::<Batched<F>>(Info {
        keyed,
        batched: true,
        note: interned(format!(
            "{how}; same table as {of}; its ratios are batched vs single lookups"
        )),
        source,
        ..declared(&d, interned(format!("{of}-batched")))
    })
}

/// Our entries beside the variants' own, in registry order: the classic filter under the
/// earlier keyed scheme, then each filter through its batched API.
pub fn extra_entries() -> Vec<Entry> {
    use bloomlab_blocked::BlockedBloomFilter as Blocked;
    use bloomlab_classic::BloomFilter as Classic;
    vec![
        classic_keyed_sip128_entry(),
        batched_entry::<Classic>(
            "the classic filter through might_contain_batch / insert_batch (hash 16 keys ahead; above 2 MiB of bits also prefetch every probe's word)",
        ),
        batched_entry::<Classic<Sip64Scheme>>(
            "classic-keyed through might_contain_batch / insert_batch (keys hashed eight at a time in vector lanes, 16 keys ahead, and above 2 MiB of bits their probes' words prefetched)",
        ),
        batched_entry::<Blocked>(
            "the blocked filter through might_contain_batch / insert_batch (prefetching 32 keys ahead; lookups in tables up to 384 KiB key by key)",
        ),
        batched_entry::<Blocked<Sip64Scheme>>(
            "blocked-keyed through might_contain_batch / insert_batch (keys hashed eight at a time in vector lanes, 32 keys ahead, their blocks prefetched)",
        ),
        batched_entry::<bloomlab_sbbf::Sbbf>(
            "the split-block filter through might_contain_batch (hash and prefetch 16 keys ahead; tables up to 640 KiB key by key)",
        ),
        ribbon_batched_entry(),
    ]
}

/// The classic filter under the earlier keyed scheme (id 2, one 128-bit SipHash-2-4 per key),
/// kept for filters stored before the keyed default (id 4, the `classic-keyed` entry).
pub fn classic_keyed_sip128_entry() -> Entry {
    entry::<bloomlab_classic::BloomFilter<SipScheme>>(Info {
        keyed: true,
        note: "probed with the earlier keyed scheme, one 128-bit SipHash-2-4 per key (scheme id 2, kept for filters stored before id 4), under a fixed 16-byte secret",
        ..Info::base("classic-keyed-sip128", "bloomlab-keyed", Kind::Bloom)
    })
}

/// Our Ribbon filter: static, built from the whole key slice (keys as 8 little-endian bytes,
/// like every one of ours); it refuses inserts. `BATCHED` answers through
/// `might_contain_batch` (prefetching ahead) instead of one key at a time.
#[derive(Debug)]
pub struct Ribbon<const BATCHED: bool = false>(pub bloomlab_ribbon::RibbonFilter);

impl<const B: bool> Adapter for Ribbon<B> {
    const BATCHED: bool = B;

    fn new_empty(_: &Spec) -> Option<Result<Self, Error>> {
        None
    }

    fn build(spec: &Spec, keys: &Keys) -> Result<(Self, u64), Error> {
        bloomlab_ribbon::RibbonFilter::build(keys.iter(), spec.fpr)
            .map(|f| (Ribbon::<B>(f), 0))
            .map_err(Error::from)
    }

    fn insert(&mut self, _: &[u8]) -> bool {
        false
    }

    #[inline(always)]
    fn contains(&self, key: &[u8]) -> bool {
        self.0.might_contain(key)
    }

    fn contains_batch(&self, keys: &[&[u8]], out: &mut [bool]) {
        if B {
            self.0
                .might_contain_batch(keys, out)
                .expect("the driver passes equal lengths");
        } else {
            for (o, k) in out.iter_mut().zip(keys) {
                *o = self.0.might_contain(k);
            }
        }
    }

    fn theoretical_fpr(&self) -> Option<f64> {
        Some(self.0.expected_fpr())
    }

    fn describe(&self) -> String {
        format!(
            "slots={} r={} seed={} layout={:?}",
            self.0.num_slots(),
            self.0.result_bits(),
            self.0.seed(),
            self.0.layout()
        )
    }
}

/// The Ribbon filter through its batched API.
pub fn ribbon_batched_entry() -> Entry {
    Entry::new::<Ribbon<true>>(Info {
        dynamic: false,
        batched: true,
        curve: Some(Curve::Ribbon),
        note: "the Ribbon filter through might_contain_batch (prefetching 16 keys ahead; solutions up to 2 MiB key by key); same filter as ribbon; its ratios are batched vs single lookups",
        ..Info::base("ribbon-batched", "bloomlab-ribbon", Kind::Static)
    })
}
