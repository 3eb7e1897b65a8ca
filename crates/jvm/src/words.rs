//! The bit array both JVM filters share (Spark's `BitArray`, Guava's `LockFreeBitArray`) and
//! the byte-level reading and writing of their serialized forms.
//!
//! Bit `i` is bit `i mod 64` of word `i / 64`; the bit count is always a whole number of
//! 64-bit words; serialized, the word count is a big-endian `int` and each word a big-endian
//! `long` (Java's `DataOutputStream`). The count of set bits is kept, as both libraries keep
//! it, so the expected FPR costs nothing.

use std::io::{self, Read, Write};

use bloomlab_core::{DecodeError, Error};

use crate::ReadError;

/// Words read per step from a stream: the vector grows only as the bytes arrive, so a header
/// claiming 2^31 words on a short stream costs what the stream holds, not 16 GiB.
const READ_CHUNK_WORDS: usize = 8192;

#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Words {
    words: Vec<u64>,
    ones: u64,
}

impl Words {
    /// `n ≥ 1` zeroed words; a typed error where the allocation cannot be had.
    pub(crate) fn zeroed(n: usize) -> Result<Self, Error> {
        let mut words = Vec::new();
        words
            .try_reserve_exact(n)
            .map_err(|_| Error::SizeOverflow(format!("cannot allocate {n} 64-bit words")))?;
        words.resize(n, 0);
        Ok(Words { words, ones: 0 })
    }

    fn from_vec(words: Vec<u64>) -> Self {
        let ones = words.iter().map(|w| u64::from(w.count_ones())).sum();
        Words { words, ones }
    }

    #[inline]
    pub(crate) fn bit_size(&self) -> u64 {
        self.words.len() as u64 * 64
    }

    #[inline]
    pub(crate) fn len_words(&self) -> usize {
        self.words.len()
    }

    #[inline]
    pub(crate) fn ones(&self) -> u64 {
        self.ones
    }

    pub(crate) fn as_slice(&self) -> &[u64] {
        &self.words
    }

    /// Set bit `i` (`i < bit_size`); whether it changed.
    #[inline]
    pub(crate) fn set(&mut self, i: u64) -> bool {
        let w = &mut self.words[(i >> 6) as usize];
        let mask = 1u64 << (i & 63);
        if *w & mask != 0 {
            return false;
        }
        *w |= mask;
        self.ones += 1;
        true
    }

    #[inline]
    pub(crate) fn get(&self, i: u64) -> bool {
        self.words[(i >> 6) as usize] & (1u64 << (i & 63)) != 0
    }

    /// Set every bit of `positions`; whether any changed.
    #[inline]
    pub(crate) fn set_all(&mut self, positions: impl Iterator<Item = u64>) -> bool {
        let mut changed = false;
        for i in positions {
            changed |= self.set(i);
        }
        changed
    }

    /// Whether every bit of `positions` is set (stopping at the first that is not).
    #[inline]
    pub(crate) fn get_all(&self, mut positions: impl Iterator<Item = u64>) -> bool {
        positions.all(|i| self.get(i))
    }

    /// Bitwise OR of an array of the same length.
    pub(crate) fn or(&mut self, other: &Words) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= *b;
        }
        self.ones = self.words.iter().map(|w| u64::from(w.count_ones())).sum();
    }

    /// Bitwise AND of an array of the same length.
    pub(crate) fn and(&mut self, other: &Words) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= *b;
        }
        self.ones = self.words.iter().map(|w| u64::from(w.count_ones())).sum();
    }

    /// Big-endian word count then the words.
    pub(crate) fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&(self.words.len() as u32).to_be_bytes())?;
        let mut buf = Vec::with_capacity(READ_CHUNK_WORDS * 8);
        for chunk in self.words.chunks(READ_CHUNK_WORDS) {
            buf.clear();
            for w in chunk {
                buf.extend_from_slice(&w.to_be_bytes());
            }
            out.write_all(&buf)?;
        }
        Ok(())
    }

    /// Serialized length: the count's four bytes and eight per word.
    pub(crate) fn encoded_len(&self) -> usize {
        4 + 8 * self.words.len()
    }

    /// The word count (a Java `int` that must be at least 1) and the words, from a cursor that
    /// must end exactly after them.
    pub(crate) fn decode(r: &mut Cursor<'_>) -> Result<Self, DecodeError> {
        let n = check_word_count(r.i32()?)?;
        let at = r.pos;
        let available = r.bytes.len() - at;
        let needed =
            n.checked_mul(8)
                .filter(|&b| b <= available)
                .ok_or(DecodeError::Truncated {
                    offset: at,
                    needed: n.saturating_mul(8),
                    available,
                })?;
        let words = r.bytes[at..at + needed]
            .chunks_exact(8)
            .map(|c| u64::from_be_bytes(c.try_into().expect("eight bytes")))
            .collect();
        r.pos += needed;
        Ok(Words::from_vec(words))
    }

    /// As [`decode`](Self::decode), from a stream, allocating only as the bytes arrive.
    pub(crate) fn read_from(r: &mut impl Read, offset: usize) -> Result<Self, ReadError> {
        let n = check_word_count(read_i32(r, offset)?)?;
        let mut words = Vec::new();
        let mut buf = vec![0u8; READ_CHUNK_WORDS.min(n) * 8];
        let mut done = 0usize;
        while done < n {
            let take = READ_CHUNK_WORDS.min(n - done);
            // Saturating: `n` is read from the stream, and eight bytes per word of a count
            // near 2^31 do not fit a 32-bit `usize` (the error then reports usize::MAX).
            read_exact(
                r,
                &mut buf[..take * 8],
                offset.saturating_add(4).saturating_add(done * 8),
                (n - done).saturating_mul(8),
            )?;
            words.extend(
                buf[..take * 8]
                    .chunks_exact(8)
                    .map(|c| u64::from_be_bytes(c.try_into().expect("eight bytes"))),
            );
            done += take;
        }
        Ok(Words::from_vec(words))
    }
}

fn check_word_count(n: i32) -> Result<usize, DecodeError> {
    if n < 1 {
        return Err(DecodeError::field(
            "numWords",
            format!("{n} words: a filter has at least one 64-bit word"),
        ));
    }
    Ok(n as usize)
}

/// A bounds-checked reader over a byte slice: every read past the end is
/// [`DecodeError::Truncated`].
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Cursor { bytes, pos: 0 }
    }

    fn take<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let available = self.bytes.len() - self.pos;
        if available < N {
            return Err(DecodeError::Truncated {
                offset: self.pos,
                needed: N,
                available,
            });
        }
        let out = self.bytes[self.pos..self.pos + N]
            .try_into()
            .expect("length checked");
        self.pos += N;
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take::<1>()?[0])
    }

    pub(crate) fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_be_bytes(self.take()?))
    }

    /// Nothing may follow the filter.
    pub(crate) fn finish(self) -> Result<(), DecodeError> {
        match self.bytes.len() - self.pos {
            0 => Ok(()),
            extra => Err(DecodeError::TrailingBytes(extra)),
        }
    }
}

/// Fill `buf` from `r`; the stream ending early is [`DecodeError::Truncated`] at `offset`
/// (`needed` bytes were still expected there).
pub(crate) fn read_exact(
    r: &mut impl Read,
    buf: &mut [u8],
    offset: usize,
    needed: usize,
) -> Result<(), ReadError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => {
                return Err(ReadError::Decode(DecodeError::Truncated {
                    offset,
                    needed,
                    available: got,
                }));
            }
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(ReadError::Io(e)),
        }
    }
    Ok(())
}

pub(crate) fn read_i32(r: &mut impl Read, offset: usize) -> Result<i32, ReadError> {
    let mut b = [0u8; 4];
    read_exact(r, &mut b, offset, 4)?;
    Ok(i32::from_be_bytes(b))
}

pub(crate) fn read_u8(r: &mut impl Read, offset: usize) -> Result<u8, ReadError> {
    let mut b = [0u8; 1];
    read_exact(r, &mut b, offset, 1)?;
    Ok(b[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ReadError;

    fn sample(n: usize) -> Words {
        let mut w = Words::zeroed(n).unwrap();
        for i in [0, 63, 64, 1_000, 64 * n as u64 - 1] {
            if i < 64 * n as u64 {
                w.set(i);
            }
        }
        w
    }

    #[test]
    fn encoded_len_is_what_write_to_writes() {
        for n in [1usize, 2, 7, READ_CHUNK_WORDS, READ_CHUNK_WORDS + 3] {
            let w = sample(n);
            let mut out = Vec::new();
            w.write_to(&mut out).unwrap();
            assert_eq!((w.encoded_len(), out.len()), (4 + 8 * n, 4 + 8 * n));
        }
    }

    /// Hands out at most 5 bytes a call, and is interrupted (a signal) before every other call.
    struct Choppy<'a> {
        bytes: &'a [u8],
        at: usize,
        interrupt: bool,
    }

    impl Read for Choppy<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.interrupt = !self.interrupt;
            if self.interrupt {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let k = buf.len().min(5).min(self.bytes.len() - self.at);
            buf[..k].copy_from_slice(&self.bytes[self.at..self.at + k]);
            self.at += k;
            Ok(k)
        }
    }

    #[test]
    fn a_stream_read_retries_interruptions_and_reports_where_it_ended() {
        let n = READ_CHUNK_WORDS + 3;
        let w = sample(n);
        let mut bytes = Vec::new();
        w.write_to(&mut bytes).unwrap();
        let mut r = Choppy {
            bytes: &bytes,
            at: 0,
            interrupt: false,
        };
        match Words::read_from(&mut r, 10) {
            Ok(back) => assert!(back == w),
            Err(e) => panic!("{e}"),
        }
        // Cut 5 bytes into the second chunk of words: the error gives where that chunk starts
        // in the whole stream (the words start 4 bytes after `offset`), what was still
        // needed, and what arrived.
        let cut = 4 + 8 * READ_CHUNK_WORDS + 5;
        let mut r = Choppy {
            bytes: &bytes[..cut],
            at: 0,
            interrupt: false,
        };
        match Words::read_from(&mut r, 10) {
            Err(ReadError::Decode(DecodeError::Truncated {
                offset,
                needed,
                available,
            })) => assert_eq!(
                (offset, needed, available),
                (10 + 4 + 8 * READ_CHUNK_WORDS, 8 * 3, 5)
            ),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("read past the end"),
        }
    }
}
