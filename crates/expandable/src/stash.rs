//! The entries that found no room in the table, with a summary of their homes.

use crate::Entry;
use alloc::vec::Vec;

/// The stash: entries out of the table, sorted by home then code, and a 64-bit summary of
/// their homes that lets a lookup skip the search for almost every home while the stash
/// holds a few entries. Every change goes through these methods, which keep the summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stash {
    entries: Vec<Entry>,
    /// Bit `home mod 64` of every entry's home.
    homes: u64,
}

impl Stash {
    pub(crate) fn with_capacity(n: usize) -> Stash {
        Stash {
            entries: Vec::with_capacity(n),
            homes: 0,
        }
    }

    #[inline(always)]
    pub(crate) fn bit(home: u64) -> u64 {
        1 << (home % 64)
    }

    /// Whether an entry may have this home (`false`: none has).
    #[inline(always)]
    pub(crate) fn may_hold(&self, home: u64) -> bool {
        self.homes & Self::bit(home) != 0
    }

    /// Insert in order.
    pub(crate) fn insert(&mut self, e: Entry) {
        let at = self
            .entries
            .partition_point(|s| (s.home, s.code) < (e.home, e.code));
        self.entries.insert(at, e);
        self.homes |= Self::bit(e.home);
    }

    /// Append (the caller keeps the order).
    pub(crate) fn push(&mut self, e: Entry) {
        self.entries.push(e);
        self.homes |= Self::bit(e.home);
    }

    pub(crate) fn remove(&mut self, i: usize) -> Entry {
        let e = self.entries.remove(i);
        self.homes = self.entries.iter().fold(0, |m, e| m | Self::bit(e.home));
        e
    }

    /// Take every entry out, leaving the stash empty.
    pub(crate) fn take(&mut self) -> Vec<Entry> {
        self.homes = 0;
        core::mem::take(&mut self.entries)
    }

    /// Give back the spare capacity.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.entries.shrink_to_fit();
    }

    /// The summary of homes (bit `home mod 64` of every entry's home).
    #[cfg(test)]
    pub(crate) fn homes(&self) -> u64 {
        self.homes
    }

    /// Replace the entries by `entries`, sorted by home then code.
    pub(crate) fn set(&mut self, entries: Vec<Entry>) {
        self.homes = entries.iter().fold(0, |m, e| m | Self::bit(e.home));
        self.entries = entries;
    }
}

impl core::ops::Deref for Stash {
    type Target = Vec<Entry>;
    fn deref(&self) -> &Vec<Entry> {
        &self.entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_rules_out_every_home_no_entry_shares_a_bit_with() {
        let mut s = Stash::default();
        assert!(!s.may_hold(3), "an empty stash holds nothing");
        s.insert(Entry { home: 70, code: 9 });
        s.push(Entry { home: 71, code: 5 });
        // Bit `home mod 64`: 70 and 71 set bits 6 and 7, which homes 6, 7, 134… share.
        assert_eq!(s.homes(), 1 << 6 | 1 << 7);
        assert!(s.may_hold(70) && s.may_hold(71) && s.may_hold(6) && s.may_hold(135));
        assert!(!s.may_hold(3) && !s.may_hold(64) && !s.may_hold(72));
        assert_eq!(s.remove(0), Entry { home: 70, code: 9 });
        assert!(!s.may_hold(70) && s.may_hold(71));
        s.set(vec![Entry { home: 1, code: 3 }]);
        assert_eq!(s.homes(), 1 << 1);
        assert_eq!(s.take().len(), 1);
        assert!(s.is_empty() && !s.may_hold(1));
    }
}
