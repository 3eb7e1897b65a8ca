//! Keys: what the filters are given, the same for every filter.
//!
//! - [`KeySet`]: fixed-seed random `u64`s (members, non-member probes, overfill extras), which
//!   the experiments use;
//! - [`KeyShape`] and [`Workload`]: the keys of the main run, as bytes ([`Keys`]): `u64` (the
//!   `KeySet` keys as 8 little-endian bytes), `uuid` (16 random bytes), `str:LEN` (random
//!   printable ASCII of LEN bytes), `url` (URL-like strings of varying length) or
//!   `file:PATH` (one key per line of a file, bytes as read); and the lookup streams drawn
//!   from them, uniform or Zipf-skewed ([`Workload::streams`]), with a warm-up stream that
//!   shares no key with any timed stream.

use crate::error::Error;
use std::collections::HashSet;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Members, distinct non-member probes, and a random order of the members.
#[derive(Debug)]
pub struct KeySet {
    /// The inserted keys, `n` of them, distinct.
    pub members: Vec<u64>,
    /// Distinct keys that are not members (overlaps removed).
    pub probes: Vec<u64>,
    /// Probe candidates dropped because they were members (accidental overlap).
    pub overlap_excluded: u64,
    /// Probe candidates dropped because they repeated an earlier probe.
    pub duplicate_probes: u64,
}

fn stream(seed: u64, stream_id: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream_id);
    rng
}

impl KeySet {
    /// `n` distinct members and `probes` distinct non-members from `seed`.
    pub fn new(seed: u64, n: usize, probes: usize) -> Self {
        let mut rng = stream(seed, 1);
        let mut members = Vec::with_capacity(n);
        let mut seen = HashSet::with_capacity(n);
        while members.len() < n {
            let k: u64 = rng.random();
            if seen.insert(k) {
                members.push(k);
            }
        }
        let mut rng = stream(seed, 2);
        let mut out = Vec::with_capacity(probes);
        let mut probe_seen = HashSet::with_capacity(probes);
        let (mut overlap, mut dup) = (0, 0);
        while out.len() < probes {
            let k: u64 = rng.random();
            if seen.contains(&k) {
                overlap += 1;
            } else if !probe_seen.insert(k) {
                dup += 1;
            } else {
                out.push(k);
            }
        }
        KeySet {
            members,
            probes: out,
            overlap_excluded: overlap,
            duplicate_probes: dup,
        }
    }

    /// More members beyond the first `n` (for overfill), distinct from members and probes.
    pub fn extra_members(&self, seed: u64, count: usize) -> Vec<u64> {
        let taken: HashSet<u64> = self
            .members
            .iter()
            .chain(self.probes.iter())
            .copied()
            .collect();
        let mut rng = stream(seed, 3);
        let mut out = Vec::with_capacity(count);
        let mut seen = HashSet::with_capacity(count);
        while out.len() < count {
            let k: u64 = rng.random();
            if !taken.contains(&k) && seen.insert(k) {
                out.push(k);
            }
        }
        out
    }

    /// A lookup stream of `len` distinct keys, `positive_pct` % of them members, shuffled.
    pub fn lookup_stream(&self, seed: u64, len: usize, positive_pct: u32) -> Vec<u64> {
        let len = len.min(self.members.len()).min(self.probes.len());
        let pos = len * positive_pct as usize / 100;
        let mut rng = stream(seed, 4 + u64::from(positive_pct));
        let mut members: Vec<u64> = self.members.clone();
        let (chosen, _) = members.partial_shuffle(&mut rng, pos);
        let mut out: Vec<u64> = chosen.to_vec();
        // Negatives from the end of the probe pool, so they differ from the FPR probes'
        // start whenever the pool is long enough.
        out.extend_from_slice(&self.probes[self.probes.len() - (len - pos)..]);
        out.shuffle(&mut rng);
        out
    }
}

/// Keys as bytes, stored one after another (one allocation, no pointer per key).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Keys {
    bytes: Vec<u8>,
    /// End offset of every key in `bytes`.
    ends: Vec<usize>,
    /// All keys this long, if they are (then the loops walk `bytes` in fixed steps).
    stride: Option<usize>,
}

impl Keys {
    /// An empty list.
    pub fn new() -> Self {
        Keys::default()
    }

    /// Every `u64` as its 8 little-endian bytes.
    pub fn from_u64s(keys: &[u64]) -> Self {
        let mut k = Keys::new();
        for x in keys {
            k.push(&x.to_le_bytes());
        }
        k
    }

    /// Append one key.
    pub fn push(&mut self, key: &[u8]) {
        self.stride = match (self.ends.is_empty(), self.stride) {
            (true, _) => Some(key.len()),
            (false, Some(s)) if s == key.len() => Some(s),
            _ => None,
        };
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// No keys.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Key `i`.
    #[inline]
    pub fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }

    /// The common length, when every key has it.
    pub fn stride(&self) -> Option<usize> {
        self.stride
    }

    /// Total key bytes.
    pub fn total_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// The keys in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        (0..self.len()).map(move |i| self.get(i))
    }

    /// The keys as a slice of slices (for batched APIs; built outside any timed region).
    pub fn views(&self) -> Vec<&[u8]> {
        self.iter().collect()
    }

    /// Keys `range` as a new list.
    pub fn slice(&self, range: std::ops::Range<usize>) -> Keys {
        let mut k = Keys::new();
        for i in range {
            k.push(self.get(i));
        }
        k
    }

    /// Call `f` on every key; the loop every timed pass uses. One loop with one call of `f`,
    /// whatever the keys' lengths (a key of fixed-length keys ends `stride` bytes after the
    /// previous one, others where `ends` says): with a single call site the compiler inlines
    /// `f` — the entry's whole lookup — into the loop for every entry alike. (Two loops, one
    /// per kind of stream, each calling `f`, left a large `f` out of line for some entries and
    /// inlined it for others, so entries were timed through different loop shapes.)
    #[inline(always)]
    pub fn for_each(&self, mut f: impl FnMut(&[u8])) {
        let stride = self.stride.filter(|&s| s > 0);
        let mut start = 0;
        for i in 0..self.ends.len() {
            let end = match stride {
                Some(s) => start + s,
                None => self.ends[i],
            };
            f(&self.bytes[start..end]);
            start = end;
        }
    }
}

/// What the keys look like (`--keys`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum KeyShape {
    /// Distinct random `u64`s as 8 little-endian bytes.
    #[default]
    U64,
    /// 16 random bytes.
    Uuid,
    /// Random printable ASCII (`!`..`~`), this many bytes.
    Str(usize),
    /// URL-like strings: scheme, one of a few hosts, one to four path segments, sometimes a
    /// query; 20 to about 90 bytes.
    Url,
    /// One key per line of this file (bytes as read, without the line end; empty lines
    /// skipped).
    File(std::path::PathBuf),
}

/// Longest `str:LEN` accepted.
pub const MAX_STR_LEN: usize = 4096;

impl std::str::FromStr for KeyShape {
    type Err = Error;

    /// `u64`, `uuid`, `str:LEN`, `url` or `file:PATH`.
    fn from_str(s: &str) -> Result<Self, Error> {
        let t = s.trim();
        if let Some(len) = t.strip_prefix("str:") {
            let n: usize = len.parse().map_err(|_| {
                Error::usage(format!(
                    "--keys str:LEN needs a whole number of bytes after str: (got {s:?})"
                ))
            })?;
            if n == 0 || n > MAX_STR_LEN {
                return Err(Error::usage(format!(
                    "--keys str:LEN needs LEN between 1 and {MAX_STR_LEN} (got {n})"
                )));
            }
            return Ok(KeyShape::Str(n));
        }
        if let Some(path) = t.strip_prefix("file:") {
            if path.is_empty() {
                return Err(Error::usage("--keys file:PATH needs a path after file:"));
            }
            return Ok(KeyShape::File(path.into()));
        }
        match t {
            "u64" => Ok(KeyShape::U64),
            "uuid" => Ok(KeyShape::Uuid),
            "url" => Ok(KeyShape::Url),
            _ => Err(Error::usage(format!(
                "unknown key shape {s:?}: use u64, uuid, str:LEN, url or file:PATH"
            ))),
        }
    }
}

impl std::fmt::Display for KeyShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyShape::U64 => f.write_str("u64"),
            KeyShape::Uuid => f.write_str("uuid"),
            KeyShape::Str(n) => write!(f, "str:{n}"),
            KeyShape::Url => f.write_str("url"),
            KeyShape::File(p) => write!(f, "file:{}", p.display()),
        }
    }
}

impl KeyShape {
    /// How the keys are made, for the results and summary.
    pub fn describe(&self) -> String {
        match self {
            KeyShape::U64 => "u64: distinct random u64s (ChaCha8), 8 little-endian bytes".into(),
            KeyShape::Uuid => "uuid: 16 random bytes (ChaCha8)".into(),
            KeyShape::Str(n) => format!("str:{n}: random printable ASCII, {n} bytes (ChaCha8)"),
            KeyShape::Url => {
                "url: https://host/seg[/seg..][?id=N], 20 to about 90 bytes (ChaCha8)".into()
            }
            KeyShape::File(p) => format!(
                "file: one key per line of {} (bytes as read); non-members are file lines past the members, then members with a random 8-byte suffix",
                p.display()
            ),
        }
    }

    /// Whether `n` distinct keys of this shape can exist (short strings cannot be many).
    fn room(&self, n: usize) -> Result<(), Error> {
        if let KeyShape::Str(len) = self {
            let distinct = 94f64.powi(*len as i32);
            if distinct < 2.0 * n as f64 {
                return Err(Error::usage(format!(
                    "--keys str:{len} has only {distinct:.0} distinct keys, too few for {n} members and as many non-members; use a longer LEN"
                )));
            }
        }
        Ok(())
    }
}

const HOSTS: [&str; 8] = [
    "example.com",
    "cdn.example.net",
    "api.shop.example.org",
    "static.images.example.com",
    "www.news.example",
    "user-content.example.io",
    "a.b.example.co.uk",
    "search.example.dev",
];

const WORDS: [&str; 16] = [
    "index", "products", "item", "v2", "users", "profile", "images", "2024", "articles",
    "category", "search", "assets", "js", "cart", "blog", "page",
];

fn generate_one(shape: &KeyShape, rng: &mut ChaCha8Rng, out: &mut Vec<u8>) {
    out.clear();
    match shape {
        KeyShape::U64 => out.extend_from_slice(&rng.random::<u64>().to_le_bytes()),
        KeyShape::Uuid => out.extend_from_slice(&rng.random::<u128>().to_le_bytes()),
        KeyShape::Str(n) => out.extend((0..*n).map(|_| rng.random_range(b'!'..=b'~'))),
        KeyShape::Url => {
            out.extend_from_slice(b"https://");
            out.extend_from_slice(HOSTS[rng.random_range(0..HOSTS.len())].as_bytes());
            for _ in 0..rng.random_range(1..=4) {
                out.push(b'/');
                out.extend_from_slice(WORDS[rng.random_range(0..WORDS.len())].as_bytes());
            }
            out.push(b'/');
            let id: u32 = rng.random();
            out.extend_from_slice(format!("{id:x}").as_bytes());
            if rng.random_bool(0.5) {
                let q: u32 = rng.random();
                out.extend_from_slice(format!("?id={q}").as_bytes());
            }
        }
        KeyShape::File(_) => unreachable!("file keys are read, not generated"),
    }
}

/// The 128-bit fingerprint keys are told apart by while generating (equal keys have equal
/// fingerprints, so distinct fingerprints mean distinct keys).
fn fingerprint(key: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(key)
}

/// Read one key per line (the line end, `\n` or `\r\n`, removed; empty lines skipped).
pub fn read_key_file(path: &std::path::Path) -> Result<Keys, Error> {
    let bytes = std::fs::read(path)
        .map_err(|e| Error::usage(format!("cannot read key file {}: {e}", path.display())))?;
    let mut keys = Keys::new();
    for line in bytes.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !line.is_empty() {
            keys.push(line);
        }
    }
    if keys.is_empty() {
        return Err(Error::usage(format!(
            "key file {} holds no keys (one key per line, empty lines skipped)",
            path.display()
        )));
    }
    Ok(keys)
}

/// The members and non-members of one size, as bytes.
#[derive(Debug)]
pub struct Workload {
    /// The inserted keys, distinct.
    pub members: Keys,
    /// Distinct keys that are not members.
    pub probes: Keys,
    /// Probe candidates dropped because they were members.
    pub overlap_excluded: u64,
}

/// Draws keys with `draw` (into the buffer it is given) until `out` holds `len` keys, each
/// pushed only if its fingerprint is new to `seen`; returns how many drawn keys were not.
fn fill_distinct(
    out: &mut Keys,
    len: usize,
    seen: &mut HashSet<u128>,
    mut draw: impl FnMut(&mut Vec<u8>),
) -> u64 {
    let mut buf = Vec::new();
    let mut repeated = 0;
    while out.len() < len {
        draw(&mut buf);
        if seen.insert(fingerprint(&buf)) {
            out.push(&buf);
        } else {
            repeated += 1;
        }
    }
    repeated
}

impl Workload {
    /// `n` distinct members and `probes` distinct non-members of `shape` from `seed`. For
    /// `u64` these are exactly [`KeySet::new`]'s keys.
    pub fn new(shape: &KeyShape, seed: u64, n: usize, probes: usize) -> Result<Self, Error> {
        if *shape == KeyShape::U64 {
            let k = KeySet::new(seed, n, probes);
            return Ok(Workload {
                members: Keys::from_u64s(&k.members),
                probes: Keys::from_u64s(&k.probes),
                overlap_excluded: k.overlap_excluded,
            });
        }
        if let KeyShape::File(path) = shape {
            return Self::from_file(path, seed, n, probes);
        }
        shape.room(n.max(probes))?;
        let mut seen = HashSet::with_capacity(n + probes);
        let mut buf = Vec::new();
        let mut rng = stream(seed, 1);
        let mut members = Keys::new();
        while members.len() < n {
            generate_one(shape, &mut rng, &mut buf);
            if seen.insert(fingerprint(&buf)) {
                members.push(&buf);
            }
        }
        let mut rng = stream(seed, 2);
        let mut out = Keys::new();
        let overlap = fill_distinct(&mut out, probes, &mut seen, |buf| {
            generate_one(shape, &mut rng, buf)
        });
        Ok(Workload {
            members,
            probes: out,
            overlap_excluded: overlap,
        })
    }

    fn from_file(
        path: &std::path::Path,
        seed: u64,
        n: usize,
        probes: usize,
    ) -> Result<Self, Error> {
        let lines = read_key_file(path)?;
        let mut seen = HashSet::with_capacity(lines.len());
        let mut members = Keys::new();
        let mut rest = Vec::new();
        for k in lines.iter() {
            if !seen.insert(fingerprint(k)) {
                continue;
            }
            if members.len() < n {
                members.push(k);
            } else {
                rest.push(k);
            }
        }
        if members.len() < n {
            return Err(Error::usage(format!(
                "key file {} holds {} distinct keys; --n asks for {n} (give --n at most {})",
                path.display(),
                members.len(),
                members.len()
            )));
        }
        let mut out = Keys::new();
        for k in rest.into_iter().take(probes) {
            out.push(k);
        }
        // Topped up with members carrying a random printable suffix: non-members shaped
        // like the file's keys.
        let mut rng = stream(seed, 2);
        let overlap = fill_distinct(&mut out, probes, &mut seen, |buf| {
            buf.clear();
            buf.extend_from_slice(members.get(rng.random_range(0..members.len())));
            buf.extend((0..8).map(|_| rng.random_range(b'!'..=b'~')));
        });
        Ok(Workload {
            members,
            probes: out,
            overlap_excluded: overlap,
        })
    }

    /// One timed stream of `len` keys per mix (`positive_pct` % members) and one warm-up
    /// stream of `len` keys, half members, that shares no key with any timed stream: the
    /// members are split once at random into a timed pool and a warm-up pool (a quarter of
    /// them, at most `len`), and the non-members into the last `len` probes (timed) and the
    /// `len` before them (warm-up). Queries are uniform over a pool, or Zipf-distributed over
    /// it with exponent `zipf` (rank 1 the hottest; the pool's order is random, so the hot
    /// keys are random keys), members and non-members alike.
    pub fn streams(
        &self,
        seed: u64,
        len: usize,
        mixes: &[u32],
        zipf: Option<f64>,
    ) -> Result<(Vec<Keys>, Keys), Error> {
        let n = self.members.len();
        let warm_members = (n / 4).min(len / 2).max(1).min(n);
        let len = len.min(n - warm_members).min(self.probes.len() / 2).max(1);
        let mut rng = stream(seed, 40);
        let mut order: Vec<usize> = (0..n).collect();
        order.shuffle(&mut rng);
        let (timed_pool, warm_pool) = order.split_at(n - warm_members);
        let p = self.probes.len();
        let timed_neg: Vec<usize> = (p - len..p).collect();
        let warm_neg: Vec<usize> = (p.saturating_sub(2 * len)..p - len).collect();
        let pick =
            |pool: &[usize], count: usize, rng: &mut ChaCha8Rng| -> Result<Vec<usize>, Error> {
                match zipf {
                    None => {
                        // Distinct keys, as before: a random subset.
                        let mut v = pool.to_vec();
                        let (chosen, _) = v.partial_shuffle(rng, count.min(pool.len()));
                        Ok(chosen.to_vec())
                    }
                    Some(s) => {
                        let z = rand_distr::Zipf::new(pool.len() as f64, s)
                            .map_err(|e| Error::usage(format!("--zipf {s}: {e}")))?;
                        Ok((0..count)
                            .map(|_| {
                                pool[(rand_distr::Distribution::sample(&z, rng) as usize - 1)
                                    .min(pool.len() - 1)]
                            })
                            .collect())
                    }
                }
            };
        let mut timed = Vec::with_capacity(mixes.len());
        for &pct in mixes {
            let mut rng = stream(seed, 4 + u64::from(pct));
            let pos = len * pct as usize / 100;
            let members = pick(timed_pool, pos, &mut rng)?;
            let neg: Vec<usize> = match zipf {
                None => timed_neg[timed_neg.len() - (len - pos)..].to_vec(),
                Some(_) => pick(&timed_neg, len - pos, &mut rng)?,
            };
            timed.push(self.mixed(members, neg, &mut rng));
        }
        let mut rng = stream(seed, 3);
        let members = pick(warm_pool, len / 2, &mut rng)?;
        let neg = warm_neg.iter().take(len - len / 2).copied();
        let warm = self.mixed(members, neg, &mut rng);
        Ok((timed, warm))
    }

    /// One stream of `members` (indices of members) and `non_members` (indices of probes), in
    /// an order shuffled by `rng`.
    fn mixed(
        &self,
        members: Vec<usize>,
        non_members: impl IntoIterator<Item = usize>,
        rng: &mut ChaCha8Rng,
    ) -> Keys {
        let mut picks: Vec<(bool, usize)> = members.into_iter().map(|i| (true, i)).collect();
        picks.extend(non_members.into_iter().map(|i| (false, i)));
        picks.shuffle(rng);
        let mut k = Keys::new();
        for (member, i) in picks {
            k.push(if member {
                self.members.get(i)
            } else {
                self.probes.get(i)
            });
        }
        k
    }
}

/// Check a Zipf exponent (`--zipf`): finite and above 0.
pub fn parse_zipf(s: &str) -> Result<f64, Error> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| Error::usage(format!("--zipf needs a number (got {s:?})")))?;
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(Error::usage(format!(
            "--zipf needs an exponent above 0 (got {s}); 1.1 is a common skew, omit --zipf for uniform queries"
        )))
    }
}
