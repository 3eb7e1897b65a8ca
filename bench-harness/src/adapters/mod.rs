//! Adapters: every filter the harness measures, ours and peers, behind one trait.
//!
//! # The adapter trait
//! [`Adapter`] is all the driver needs: build from `(n, target FPR)` and the key slice (static
//! filters such as xorf use the slice; dynamic ones create an empty filter and insert),
//! `insert`, `contains`, the theoretical FPR at the current load, and a one-line description
//! of the parameters actually used. Keys are byte strings (`&[u8]`, shaped by `--keys`: 8-byte
//! `u64`s, UUIDs, strings, URLs, lines of a file); every adapter hands them to its filter
//! through the filter's public API as a user would — bytes, a `Hash` value, or for crates
//! that take pre-hashed `u64`s one hash of the bytes in the adapter — so each entry pays
//! what hashing that key costs it (see [`KEYS`]).
//! Memory is not asked of the adapter: the harness measures the live heap bytes each
//! structure holds with a counting allocator, so every entry is measured the same way.
//!
//! The driver is generic over `A: Adapter` (monomorphised, so timing loops call `contains`
//! directly); the registry holds [`Entry`]s, which erase `A` behind a small object-safe
//! trait only at the level of whole measurements.
//!
//! # How to add a variant
//! 1. Our variants need nothing here: [`ours::variant_entries`] derives each one's entry (and
//!    its keyed twin, under [`ours::harness_secret`]) from the facade's list of variants and
//!    the variant's `Declared` declaration. An extra entry of ours (a batched API, another
//!    scheme) is one row of [`ours::extra_entries`] (a batched API: [`ours::batched_entry`]
//!    with a line on how its calls run).
//! 2. A peer: write a newtype implementing [`Adapter`] in its own file under `adapters/` (or
//!    in `peers.rs`) with a `pub fn ..._entry() -> Entry` (its facts `..Info::peer(..)`, the
//!    curve its kind's unless it follows another), and add that one line to
//!    [`registry`]. Configure it as its documentation shows, sized to meet the target
//!    (equal FPR), and say how in the adapter's doc comment and in `note`; an extra entry at
//!    another entry's memory sets `Info::equal_memory`.
//!
//! The registry is a flat list of one-line entries, so branches that each add one merge
//! cleanly. Nothing else changes: the driver, results, CSV, summary, plots, `compare`,
//! `recommend` and the criterion benches all iterate over the registry; a filter's colour
//! and marker in every plot follow its position in it.
//!
//! [`Info`] carries what `recommend` needs (kind, deletes, grows, keyed), whether the entry
//! is a peer (every table and plot marks peers) and whether its lookups are batched (its
//! ratios are then labelled batched vs single).
//!
//! Static filters ([`Kind::Static`]: xorf's binary fuse filters, later Ribbon) are built once
//! from the whole key set: they override [`Adapter::build`] and return `None` from
//! [`Adapter::new_empty`]; `recommend` says they need all keys up front.

/// The `insert`, `contains`, `theoretical_fpr` and `describe` of a wrapper whose `.0` is an
/// adapter: each passes to it (the four have the same signatures in [`Adapter`] and
/// [`Built`]).
macro_rules! forward_to_inner {
    () => {
        #[inline]
        fn insert(&mut self, key: &[u8]) -> bool {
            self.0.insert(key)
        }
        #[inline]
        fn contains(&self, key: &[u8]) -> bool {
            self.0.contains(key)
        }
        fn theoretical_fpr(&self) -> Option<f64> {
            self.0.theoretical_fpr()
        }
        fn describe(&self) -> String {
            self.0.describe()
        }
    };
}

/// The `insert`, `contains` and `theoretical_fpr` of an adapter whose `.0` is one of our
/// filters: the key's bytes through the `Filter` trait (`insert_bytes` /
/// `might_contain_bytes`), as a user with byte keys calls them. Inlined into the timed loop
/// like the peers' (small) adapters are, so that no filter pays a call per key that the
/// others do not.
macro_rules! through_filter_trait {
    () => {
        #[inline(always)]
        fn insert(&mut self, key: &[u8]) -> bool {
            self.0.insert_bytes(key).is_ok()
        }
        #[inline(always)]
        fn contains(&self, key: &[u8]) -> bool {
            self.0.might_contain_bytes(key)
        }
        fn theoretical_fpr(&self) -> Option<f64> {
            Some(self.0.expected_fpr())
        }
    };
}

pub mod concurrent;
pub mod exact;
pub mod jvm;
pub mod many;
pub mod ours;
pub mod peers;
pub mod sbbf_rs;

use crate::error::Error;
use std::hint::black_box;
use std::marker::PhantomData;
use std::time::Duration;

use crate::control::ThreadClock;

use serde::{Deserialize, Serialize};

use crate::alloc::net_bytes;
use crate::keys::Keys;

pub use many::{Many, ManyResult, ManyRound, ManyRounds, many_key};

/// How every entry receives a key (recorded in the results and summary).
pub const KEYS: &str = "Every entry takes each key's bytes through its public API, as a user \
    with byte keys would: our filters through insert_bytes / might_contain_bytes, Hash-taking \
    peers the &[u8] (their hasher sees the bytes and a length), the exact set a u64 / u128 / \
    boxed bytes on foldhash by key length, xorf and sbbf-rs (which take pre-hashed u64s) \
    xxh3-64 of the bytes computed in their adapters (sbbf-rs-parquet xxHash64 seed 0). So \
    hashing costs what it costs for the key's length. Each lookup runs in the timed loop as \
    the compiler builds it from the crate's own code: our lookups are marked always-inline, \
    while xorf's `contains` and sbbf-rs-safe's AVX2 kernel are calls per key there";

/// Families of structures; ratios to peers compare within one kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Bloom filters over one bit array (classic or blocked).
    Bloom,
    /// Counting Bloom filters.
    Counting,
    /// Cuckoo filters.
    Cuckoo,
    /// Static filters: built once from the whole key set, no inserts afterwards (xor /
    /// binary fuse; Ribbon).
    Static,
    /// Quotient filters.
    Quotient,
    /// Filters that grow past their initial capacity.
    Scalable,
    /// An exact set (no false positives).
    Exact,
}

impl Kind {
    /// Lower-case name, as in the results.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Bloom => "bloom",
            Kind::Counting => "counting",
            Kind::Cuckoo => "cuckoo",
            Kind::Static => "static",
            Kind::Quotient => "quotient",
            Kind::Scalable => "scalable",
            Kind::Exact => "exact",
        }
    }

    /// The theoretical curve the FPR-vs-space plot draws for the family, if it has one.
    /// Entries whose structure follows another curve set their own (Ribbon and binary fuse
    /// among the static filters, a scalable cuckoo filter's cuckoo stages).
    pub const fn curve(self) -> Option<Curve> {
        match self {
            Kind::Bloom => Some(Curve::Bloom),
            Kind::Cuckoo => Some(Curve::Cuckoo),
            Kind::Quotient => Some(Curve::Quotient),
            Kind::Counting | Kind::Static | Kind::Scalable | Kind::Exact => None,
        }
    }
}

/// The theoretical bits/item ↔ FPR relation a plot draws for a family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Curve {
    /// Classic Bloom at the optimal k: ε = 2^(−b·ln 2).
    Bloom,
    /// Cuckoo, 4-slot buckets at 95 % load: b = (log2(1/ε) + 3) / 0.95.
    Cuckoo,
    /// Binary fuse: b ≈ 1.125 · log2(1/ε).
    BinaryFuse,
    /// Quotient filter (RSQF): b ≈ (log2(1/ε) + 2.125) / 0.95.
    Quotient,
    /// Standard Ribbon, w = 128: b = (1 + slot overhead) · log2(1/ε), the overhead 4.8 % at
    /// n = 10^6 and 5.6 % at 10^7 (`bloomlab_ribbon::slot_overhead`); drawn at 1.05.
    Ribbon,
}

impl Curve {
    /// Label for the legend.
    pub fn label(self) -> &'static str {
        match self {
            Curve::Bloom => "theory: Bloom 2^(-b ln2)",
            Curve::Cuckoo => "theory: cuckoo b=(log2(1/e)+3)/0.95",
            Curve::BinaryFuse => "theory: binary fuse b=1.125 log2(1/e)",
            Curve::Quotient => "theory: quotient b=(log2(1/e)+2.125)/0.95",
            Curve::Ribbon => "theory: ribbon b=1.05 log2(1/e)",
        }
    }

    /// FPR at `bits_per_item` bits/item.
    pub fn fpr(self, bits_per_item: f64) -> f64 {
        let log2_inv = match self {
            Curve::Bloom => bits_per_item * std::f64::consts::LN_2,
            Curve::Cuckoo => bits_per_item * 0.95 - 3.0,
            Curve::BinaryFuse => bits_per_item / 1.125,
            Curve::Quotient => bits_per_item * 0.95 - 2.125,
            Curve::Ribbon => bits_per_item / 1.05,
        };
        2f64.powf(-log2_inv).min(1.0)
    }
}

/// What the registry knows about an entry before measuring it (`Info`), and the same facts
/// as the results record them ([`crate::schema::FilterInfo`]: owned strings, the kind by its
/// [`Kind::name`]). The fields are in the order `results.json` writes them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Info<S = &'static str, K = Kind> {
    /// Registry name (`--filters` takes these).
    pub name: S,
    /// Crate and version (or `std`).
    pub source: S,
    /// Family.
    pub kind: K,
    /// A crates.io peer rather than one of ours.
    pub peer: bool,
    /// Takes the target FPR; `false` means fixed parameters, measured once per size.
    pub tunable: bool,
    /// Accepts inserts after construction (false for static filters such as xorf).
    pub dynamic: bool,
    /// Supports deletes.
    pub deletes: bool,
    /// Grows past its initial capacity without a rebuild.
    pub grows: bool,
    /// Hashes with a secret key, so crafted keys cannot aim at chosen positions.
    pub keyed: bool,
    /// Lookups go through a batched (prefetching) API; its ratios compare batched with
    /// single lookups unless the reference is batched too.
    pub batched: bool,
    /// Sized at another entry's memory rather than to meet the target (equal memory): its
    /// FPR may exceed the target, so `recommend` and the ×blocked / ×peer ratios skip it.
    #[serde(default)]
    pub equal_memory: bool,
    /// Theoretical curve for the FPR-vs-space plot.
    pub curve: Option<Curve>,
    /// How the harness configures it (shown in summary.md): one line.
    pub note: S,
}

impl Info {
    /// The defaults every entry starts from (a single-lookup, unkeyed, fixed-size, dynamic
    /// filter of ours, drawn against its kind's curve); entries override what differs with
    /// `..Info::base(..)`.
    pub const fn base(name: &'static str, source: &'static str, kind: Kind) -> Info {
        Info {
            name,
            source,
            kind,
            peer: false,
            tunable: true,
            dynamic: true,
            deletes: false,
            grows: false,
            keyed: false,
            batched: false,
            equal_memory: false,
            curve: kind.curve(),
            note: "",
        }
    }

    /// [`Info::base`] for a crates.io peer.
    pub const fn peer(name: &'static str, source: &'static str, kind: Kind) -> Info {
        Info {
            peer: true,
            ..Info::base(name, source, kind)
        }
    }

    /// The facts as the results record them.
    pub fn recorded(&self) -> Info<String, String> {
        Info {
            name: self.name.into(),
            source: self.source.into(),
            kind: self.kind.name().into(),
            peer: self.peer,
            tunable: self.tunable,
            dynamic: self.dynamic,
            deletes: self.deletes,
            grows: self.grows,
            keyed: self.keyed,
            batched: self.batched,
            equal_memory: self.equal_memory,
            curve: self.curve,
            note: self.note.into(),
        }
    }
}

/// What a filter is built for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spec {
    /// Design capacity (items).
    pub n: u64,
    /// Target FPR (ignored by fixed-parameter entries).
    pub fpr: f64,
    /// Seed for entries that take one.
    pub seed: u64,
}

/// One filter implementation plugged into the harness.
pub trait Adapter: Sized + Send + Sync + 'static {
    /// An empty filter sized for `spec`, or `None` for static filters.
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>>;

    /// Build from all the keys. The default creates an empty filter and inserts every key;
    /// returns the filter and the number of inserts it refused.
    fn build(spec: &Spec, keys: &Keys) -> Result<(Self, u64), Error> {
        let mut f = Self::new_empty(spec)
            .ok_or_else(|| Error::measurement("static adapter must override build"))??;
        let mut refused = 0;
        keys.for_each(|k| {
            if !f.insert(black_box(k)) {
                refused += 1;
            }
        });
        Ok((f, refused))
    }

    /// Insert a key; `false` if the filter refused it (static filters always refuse).
    fn insert(&mut self, key: &[u8]) -> bool;

    /// `false` = definitely absent, `true` = maybe present.
    fn contains(&self, key: &[u8]) -> bool;

    /// Lookups are timed through [`contains_batch`](Self::contains_batch) (a batched API)
    /// instead of one `contains` call per key.
    const BATCHED: bool = false;

    /// `out[i] = contains(keys[i])`; `out` is as long as `keys`. Override for a batched API.
    fn contains_batch(&self, keys: &[&[u8]], out: &mut [bool]) {
        for (o, &k) in out.iter_mut().zip(keys) {
            *o = self.contains(k);
        }
    }

    /// Insert every key in order (timed for [`BATCHED`](Self::BATCHED) adapters instead of
    /// one `insert` per key); returns how many were refused.
    fn insert_many(&mut self, keys: &[&[u8]]) -> u64 {
        keys.iter().filter(|&&k| !self.insert(k)).count() as u64
    }

    /// The FPR the structure's own formula predicts at its current load, if it has one.
    fn theoretical_fpr(&self) -> Option<f64>;

    /// The parameters actually used, e.g. `m=9585059 k=7`.
    fn describe(&self) -> String;
}

/// Keys per timed chunk of a lookup pass (see [`Built::time_pass`]).
pub const CHUNK: usize = 4096;

/// One timed lookup pass, chunk by chunk.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pass {
    /// ns per lookup over the chunks in which the thread was never switched out (over all
    /// chunks if none was clean).
    pub ns_per_op: f64,
    /// Hits over the whole pass.
    pub hits: u64,
    /// Chunks timed without a context switch.
    pub clean_chunks: u32,
    /// Chunks timed.
    pub chunks: u32,
}

/// A built filter, type-erased for the driver and experiments.
pub trait Built: Send + Sync {
    /// Time one pass of `contains` over `stream`; returns the elapsed time and the hits.
    fn time_lookups(&self, stream: &Keys) -> (Duration, u64);
    /// Time one pass over `stream`, given in chunks of [`CHUNK`] keys (cut before timing), reading the thread's context
    /// switch count around each chunk: a chunk during which the thread was switched out
    /// (another process ran on the core and refilled its caches) is left out of the figure,
    /// and so is every chunk after it, which runs on the other process's caches.
    /// On a 2-core machine shared with builds, that is what moved ratios between runs.
    fn time_pass(&self, stream: &[Keys]) -> Pass {
        let (mut clean_ns, mut clean_keys, mut all_ns) = (0u128, 0usize, 0u128);
        let (mut hits, mut clean, mut chunks) = (0u64, 0u32, 0u32);
        let mut switched = false;
        let total: usize = stream.iter().map(Keys::len).sum();
        for c in stream {
            let before = crate::control::context_switches();
            let (t, h) = self.time_lookups(c);
            let after = crate::control::context_switches();
            hits += h;
            chunks += 1;
            all_ns += t.as_nanos();
            switched |= before.is_none() || before != after;
            if !switched {
                clean += 1;
                clean_ns += t.as_nanos();
                clean_keys += c.len();
            }
        }
        let ns_per_op = if clean_keys > 0 {
            clean_ns as f64 / clean_keys as f64
        } else {
            all_ns as f64 / total.max(1) as f64
        };
        Pass {
            ns_per_op,
            hits,
            clean_chunks: clean,
            chunks,
        }
    }
    /// Insert one key (experiments; not timed).
    fn insert(&mut self, key: &[u8]) -> bool;
    /// Query one key (experiments; not timed).
    fn contains(&self, key: &[u8]) -> bool;
    /// See [`Adapter::theoretical_fpr`].
    fn theoretical_fpr(&self) -> Option<f64>;
    /// See [`Adapter::describe`].
    fn describe(&self) -> String;
}

struct Holder<A>(A);

impl<A: Adapter> Built for Holder<A> {
    fn time_lookups(&self, stream: &Keys) -> (Duration, u64) {
        let f = &self.0;
        if A::BATCHED {
            let views = stream.views();
            let mut out = vec![false; stream.len()];
            let start = ThreadClock::start();
            f.contains_batch(black_box(&views), &mut out);
            let hits = out.iter().map(|&b| u64::from(b)).sum::<u64>();
            let t = start.elapsed();
            return (t, black_box(hits));
        }
        let start = ThreadClock::start();
        let mut hits = 0u64;
        stream.for_each(|k| hits += u64::from(f.contains(black_box(k))));
        let t = start.elapsed();
        (t, black_box(hits))
    }
    forward_to_inner!();
}

/// A build, timed and weighed.
pub struct Build {
    /// The filter.
    pub filter: Box<dyn Built>,
    /// Wall time of the whole build.
    pub elapsed: Duration,
    /// Live heap bytes the filter holds.
    pub heap_bytes: usize,
    /// Inserts refused.
    pub refused: u64,
}

impl std::fmt::Debug for Build {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Build")
            .field("filter", &self.filter.describe())
            .field("elapsed", &self.elapsed)
            .field("heap_bytes", &self.heap_bytes)
            .field("refused", &self.refused)
            .finish()
    }
}

/// The erased operations of one adapter type.
trait Ops: Send + Sync {
    fn many_build(&self, spec: &Spec, plan: &Many) -> Result<Box<dyn ManyRounds>, Error>;
    fn build(&self, spec: &Spec, keys: &Keys) -> Result<Build, Error>;
    fn new_empty(&self, spec: &Spec) -> Option<Result<Box<dyn Built>, Error>>;
    fn time_inserts(&self, spec: &Spec, keys: &Keys) -> Option<Result<Duration, Error>>;
}

struct OpsOf<A>(PhantomData<fn() -> A>);

impl<A: Adapter> Ops for OpsOf<A> {
    fn many_build(&self, spec: &Spec, plan: &Many) -> Result<Box<dyn ManyRounds>, Error> {
        many::build::<A>(spec, plan)
    }

    fn build(&self, spec: &Spec, keys: &Keys) -> Result<Build, Error> {
        let (built, heap_bytes) = net_bytes(|| {
            let start = ThreadClock::start();
            A::build(spec, black_box(keys)).map(|(f, refused)| (f, refused, start.elapsed()))
        });
        let (f, refused, elapsed) = built?;
        Ok(Build {
            filter: Box::new(Holder(f)),
            elapsed,
            heap_bytes,
            refused,
        })
    }

    fn new_empty(&self, spec: &Spec) -> Option<Result<Box<dyn Built>, Error>> {
        A::new_empty(spec).map(|r| r.map(|f| Box::new(Holder(f)) as Box<dyn Built>))
    }

    fn time_inserts(&self, spec: &Spec, keys: &Keys) -> Option<Result<Duration, Error>> {
        let mut f = match A::new_empty(spec)? {
            Ok(f) => f,
            Err(e) => return Some(Err(e)),
        };
        let views = if A::BATCHED { keys.views() } else { Vec::new() };
        let start = ThreadClock::start();
        if A::BATCHED {
            black_box(f.insert_many(black_box(&views)));
        } else {
            keys.for_each(|k| {
                black_box(f.insert(black_box(k)));
            });
        }
        let t = start.elapsed();
        drop(black_box(f));
        Some(Ok(t))
    }
}

/// One registered filter: its [`Info`] and its erased operations.
pub struct Entry {
    /// Static facts.
    pub info: Info,
    ops: Box<dyn Ops>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry").field("info", &self.info).finish()
    }
}

impl Entry {
    /// Register adapter `A` under `info`.
    pub fn new<A: Adapter>(info: Info) -> Self {
        Entry {
            info,
            ops: Box::new(OpsOf::<A>(PhantomData)),
        }
    }

    /// The many-filters mode: filters of `plan.keys_per` keys built until they hold
    /// `plan.target_bytes` together, then `plan.rounds` timed rounds of queries each to a
    /// random filter (see [`Many`]).
    pub fn many(&self, spec: &Spec, plan: &Many) -> Result<ManyResult, Error> {
        let set = self.many_build(spec, plan)?;
        let mut m = ManyResult::of(set.as_ref());
        for r in 0..plan.rounds {
            m.add(&set.round(plan, r));
        }
        Ok(m)
    }

    /// The many-filters mode's filters, built and kept for rounds timed by the caller (to
    /// interleave several entries' rounds).
    pub fn many_build(&self, spec: &Spec, plan: &Many) -> Result<Box<dyn ManyRounds>, Error> {
        self.ops.many_build(spec, plan)
    }

    /// Build from `keys`, timing the whole build and weighing the result.
    pub fn build(&self, spec: &Spec, keys: &Keys) -> Result<Build, Error> {
        self.ops.build(spec, keys)
    }

    /// An empty filter for incremental experiments; `None` for static filters.
    pub fn new_empty(&self, spec: &Spec) -> Option<Result<Box<dyn Built>, Error>> {
        self.ops.new_empty(spec)
    }

    /// Time inserting `keys` into a fresh filter sized for `spec` (construction not timed);
    /// `None` for static filters.
    pub fn time_inserts(&self, spec: &Spec, keys: &Keys) -> Option<Result<Duration, Error>> {
        self.ops.time_inserts(spec, keys)
    }
}

/// Every filter the harness knows: our variants (derived), our extra entries, then the peers,
/// then the exact baseline. Adding a peer is one line here (plus its adapter); keep one entry
/// per line.
pub fn registry() -> Vec<Entry> {
    let mut all = ours::variant_entries();
    all.extend(ours::extra_entries());
    all.extend([
        jvm::spark_v1_entry(),
        jvm::spark_v2_entry(),
        jvm::guava_entry(),
        peers::fastbloom_entry(),
        peers::fastbloom_sip_entry(),
        peers::fastbloom_eqmem_entry(),
        sbbf_rs::sbbf_rs_entry(),
        sbbf_rs::sbbf_rs_eqmem_entry(),
        sbbf_rs::sbbf_rs_parquet_entry(),
        peers::bloomfilter_entry(),
        peers::growable_entry(),
        peers::cuckoofilter_entry(),
        peers::scalable_cuckoo_entry(),
        peers::qfilter_entry(),
        peers::qfilter_resizing_entry(),
        peers::xorf_entry::<xorf::BinaryFuse8>(),
        peers::xorf_entry::<xorf::BinaryFuse16>(),
        exact::entry(),
        concurrent::blocked_atomic_entry(),
        concurrent::fastbloom_atomic_entry(),
    ]);
    all
}

/// Entries renamed when the registry came to be derived from the variants' declarations
/// (every keyed twin `<variant>-keyed`, under the keyed default scheme): the old name, the
/// new. The earlier keyed scheme's classic entry, once `classic-keyed`, is
/// `classic-keyed-sip128`.
const RENAMED: [(&str, &str); 2] = [
    ("classic-keyed-sip64", "classic-keyed"),
    ("classic-keyed-sip64-batched", "classic-keyed-batched"),
];

/// Pick entries by name (`None` = all). Unknown names are an error that lists the known ones.
pub fn select(names: Option<&[String]>) -> Result<Vec<Entry>, Error> {
    let all = registry();
    let Some(names) = names else {
        return Ok(all);
    };
    let known: Vec<&str> = all.iter().map(|e| e.info.name).collect();
    let unknown: Vec<&String> = names
        .iter()
        .filter(|n| !known.contains(&n.as_str()))
        .collect();
    if !unknown.is_empty() {
        let renamed: Vec<String> = unknown
            .iter()
            .filter_map(|n| RENAMED.iter().find(|(old, _)| *old == n.as_str()))
            .map(|(old, new)| format!("{old} is now {new}; "))
            .collect();
        return Err(Error::usage(format!(
            "unknown filter name(s): {}; {}known filters: {}",
            unknown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            renamed.concat(),
            known.join(", ")
        )));
    }
    if names.is_empty() {
        return Err(Error::usage(format!(
            "--filters needs at least one name; known filters: {}",
            known.join(", ")
        )));
    }
    Ok(all
        .into_iter()
        .filter(|e| names.iter().any(|n| n == e.info.name))
        .collect())
}
