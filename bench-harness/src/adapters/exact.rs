//! The exact baseline: a hash set of the same keys, measured the same way. FPR 0; its memory
//! is what exactness costs.

use crate::error::Error;
use std::collections::HashSet;

use super::{Adapter, Entry, Info, Kind, Spec};

/// foldhash with a fixed seed: the fast hasher a user who wants a fast `HashSet` picks.
type Fast = foldhash::fast::FixedState;

/// A `HashSet` on foldhash, holding keys the way a user would for their shape: a `u64` for
/// 8-byte keys, a `u128` for 16-byte keys, a boxed byte string otherwise. The shape is taken
/// from the first key; a key of another length moves every key to boxed byte strings.
#[derive(Debug)]
pub enum Exact {
    /// No key yet (capacity to reserve once the shape is known).
    Empty(usize),
    /// 8-byte keys.
    U64(HashSet<u64, Fast>),
    /// 16-byte keys.
    U128(HashSet<u128, Fast>),
    /// Any other length.
    Bytes(HashSet<Box<[u8]>, Fast>),
}

fn fast() -> Fast {
    Fast::with_seed(0x5EED_E7AC)
}

impl Exact {
    fn as_bytes_set(&mut self) -> &mut HashSet<Box<[u8]>, Fast> {
        let moved: HashSet<Box<[u8]>, Fast> = match std::mem::replace(self, Exact::Empty(0)) {
            Exact::Empty(cap) => HashSet::with_capacity_and_hasher(cap, fast()),
            Exact::U64(s) => s.into_iter().map(|k| k.to_le_bytes().into()).collect(),
            Exact::U128(s) => s.into_iter().map(|k| k.to_le_bytes().into()).collect(),
            Exact::Bytes(s) => s,
        };
        *self = Exact::Bytes(moved);
        match self {
            Exact::Bytes(s) => s,
            _ => unreachable!("just set"),
        }
    }

    fn len(&self) -> usize {
        match self {
            Exact::Empty(_) => 0,
            Exact::U64(s) => s.len(),
            Exact::U128(s) => s.len(),
            Exact::Bytes(s) => s.len(),
        }
    }
}

impl Adapter for Exact {
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        Some(Ok(Exact::Empty(usize::try_from(spec.n).unwrap_or(0))))
    }
    #[inline]
    fn insert(&mut self, key: &[u8]) -> bool {
        if let Exact::Empty(cap) = *self {
            *self = match key.len() {
                8 => Exact::U64(HashSet::with_capacity_and_hasher(cap, fast())),
                16 => Exact::U128(HashSet::with_capacity_and_hasher(cap, fast())),
                _ => Exact::Bytes(HashSet::with_capacity_and_hasher(cap, fast())),
            };
        }
        match (
            &mut *self,
            <[u8; 8]>::try_from(key),
            <[u8; 16]>::try_from(key),
        ) {
            (Exact::U64(s), Ok(k), _) => {
                s.insert(u64::from_le_bytes(k));
            }
            (Exact::U128(s), _, Ok(k)) => {
                s.insert(u128::from_le_bytes(k));
            }
            (Exact::Bytes(s), _, _) => {
                s.insert(key.into());
            }
            _ => {
                self.as_bytes_set().insert(key.into());
            }
        }
        true
    }
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        match self {
            Exact::Empty(_) => false,
            Exact::U64(s) => {
                <[u8; 8]>::try_from(key).is_ok_and(|k| s.contains(&u64::from_le_bytes(k)))
            }
            Exact::U128(s) => {
                <[u8; 16]>::try_from(key).is_ok_and(|k| s.contains(&u128::from_le_bytes(k)))
            }
            Exact::Bytes(s) => s.contains(key),
        }
    }
    fn theoretical_fpr(&self) -> Option<f64> {
        Some(0.0)
    }
    fn describe(&self) -> String {
        let kind = match self {
            Exact::Empty(_) => "empty",
            Exact::U64(_) => "HashSet<u64>",
            Exact::U128(_) => "HashSet<u128>",
            Exact::Bytes(_) => "HashSet<Box<[u8]>>",
        };
        format!("{kind} on foldhash, {} items", self.len())
    }
}

/// Registry entry for the exact set.
pub fn entry() -> Entry {
    Entry::new::<Exact>(Info {
        tunable: false,
        deletes: true,
        grows: true,
        note: "HashSet on foldhash (fixed seed) with capacity n: HashSet<u64> for 8-byte keys, HashSet<u128> for 16-byte keys, HashSet<Box<[u8]>> otherwise; never a false positive",
        ..Info::base("exact-hashset", "std + foldhash", Kind::Exact)
    })
}
