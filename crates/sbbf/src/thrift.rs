//! The Parquet `BloomFilterHeader`, read and written in the Thrift compact protocol.
//!
//! ```text
//! struct BloomFilterHeader {
//!   1: required i32 numBytes;                         // bitset length in bytes
//!   2: required BloomFilterAlgorithm algorithm;       // union { 1: SplitBlockAlgorithm BLOCK }
//!   3: required BloomFilterHash hash;                 // union { 1: XxHash XXHASH }
//!   4: required BloomFilterCompression compression;   // union { 1: Uncompressed UNCOMPRESSED }
//! }
//! ```
//!
//! Every writer we know (parquet-java, Arrow C++ and Rust) emits the canonical 15–19 bytes
//! [`encode`] writes: `0x15 zigzag-varint(numBytes)`, then three times `0x1c 0x1c 0x00 0x00`
//! (a struct field holding a union whose field 1 is an empty struct), then the stop byte.
//! [`decode`] reads the general compact protocol instead (long-form field ids, fields in any
//! order, unknown fields skipped), because the format allows it, with a nesting limit and
//! every length checked against the bytes that remain, so a few hostile bytes can neither
//! panic it nor make it loop or allocate.
//!
//! A whole Thrift library is not worth its weight for a five-field header that never
//! allocates; this is the one hand-written decoder of the crate, tested against the bytes the
//! `parquet` crate writes and against damaged input.

use alloc::{format, string::String, vec::Vec};
use bloomlab_core::DecodeError;

/// Compact-protocol type ids.
const BOOL_TRUE: u8 = 1;
const BOOL_FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;

/// Deepest nesting of values skipped inside the header: a header field's own value is at
/// depth 0, a container's contents one deeper than the container, and a value deeper than
/// `MAX_DEPTH` is refused. So a field may hold `MAX_DEPTH + 1` structs, lists, sets or maps
/// one inside another (the innermost empty), and not one more. It bounds the decoder's
/// recursion, and so its stack, whatever the input.
const MAX_DEPTH: u32 = 16;

fn err(reason: impl Into<String>) -> DecodeError {
    DecodeError::field("parquet bloom filter header", reason)
}

/// The canonical header for a bitset of `num_bytes` bytes.
pub(crate) fn encode(num_bytes: i32) -> Vec<u8> {
    let mut out = Vec::with_capacity(19);
    out.push(0x15); // field 1, i32
    let mut z = ((num_bytes << 1) ^ (num_bytes >> 31)) as u32; // zigzag
    loop {
        if z < 0x80 {
            out.push(z as u8);
            break;
        }
        out.push((z as u8 & 0x7f) | 0x80);
        z >>= 7;
    }
    for _ in 0..3 {
        // field +1, struct { field 1, struct { stop } stop }
        out.extend_from_slice(&[0x1c, 0x1c, 0x00, 0x00]);
    }
    out.push(0x00); // stop
    out
}

/// Parse a header at the start of `bytes`; returns `numBytes` (unvalidated beyond being an
/// `i32`) and the header's length in bytes. Refuses an algorithm, hash or compression other
/// than the split-block / xxHash / uncompressed the specification defines.
pub(crate) fn decode(bytes: &[u8]) -> Result<(i32, usize), DecodeError> {
    let mut r = Cursor { buf: bytes, pos: 0 };
    let mut num_bytes = None;
    let mut unions = [false; 3];
    let mut last = 0i16;
    while let Some((id, ty)) = r.field_header(&mut last)? {
        match id {
            1 => {
                if ty != I32 {
                    return Err(err(format!("numBytes has type {ty}, not i32")));
                }
                if num_bytes.is_some() {
                    return Err(err("numBytes appears twice"));
                }
                num_bytes = Some(r.i32()?);
            }
            2..=4 => {
                let slot = (id - 2) as usize;
                let name = ["algorithm", "hash", "compression"][slot];
                if ty != STRUCT {
                    return Err(err(format!("{name} has type {ty}, not a union")));
                }
                if unions[slot] {
                    return Err(err(format!("{name} appears twice")));
                }
                r.known_union(name)?;
                unions[slot] = true;
            }
            _ => r.skip(ty, 0)?,
        }
    }
    let num_bytes = num_bytes.ok_or_else(|| err("numBytes is missing"))?;
    for (present, name) in unions.iter().zip(["algorithm", "hash", "compression"]) {
        if !present {
            return Err(err(format!("{name} is missing")));
        }
    }
    Ok((num_bytes, r.pos))
}

struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn byte(&mut self) -> Result<u8, DecodeError> {
        let b = *self.buf.get(self.pos).ok_or(DecodeError::Truncated {
            offset: self.pos,
            needed: 1,
            available: 0,
        })?;
        self.pos += 1;
        Ok(b)
    }

    fn skip_bytes(&mut self, n: u64) -> Result<(), DecodeError> {
        let left = self.buf.len() - self.pos;
        if n > left as u64 {
            return Err(DecodeError::Truncated {
                offset: self.pos,
                needed: usize::try_from(n).unwrap_or(usize::MAX),
                available: left,
            });
        }
        self.pos += n as usize;
        Ok(())
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(err("varint longer than 10 bytes"))
    }

    fn zigzag(&mut self) -> Result<i64, DecodeError> {
        let z = self.varint()?;
        Ok((z >> 1) as i64 ^ -((z & 1) as i64))
    }

    fn i32(&mut self) -> Result<i32, DecodeError> {
        let v = self.zigzag()?;
        i32::try_from(v).map_err(|_| err(format!("{v} does not fit an i32")))
    }

    /// Next field header: `None` at the stop byte, else (field id, type).
    fn field_header(&mut self, last: &mut i16) -> Result<Option<(i16, u8)>, DecodeError> {
        let b = self.byte()?;
        if b == 0 {
            return Ok(None);
        }
        let (delta, ty) = (b >> 4, b & 0x0f);
        let id = if delta == 0 {
            let v = self.zigzag()?;
            i16::try_from(v).map_err(|_| err(format!("field id {v} does not fit an i16")))?
        } else {
            last.checked_add(i16::from(delta))
                .ok_or_else(|| err("field id overflows"))?
        };
        if !(BOOL_TRUE..=STRUCT).contains(&ty) {
            return Err(err(format!("unknown compact type {ty}")));
        }
        *last = id;
        Ok(Some((id, ty)))
    }

    /// A union of which only field 1 (an empty struct: BLOCK, XXHASH, UNCOMPRESSED) is known.
    fn known_union(&mut self, name: &str) -> Result<(), DecodeError> {
        let mut last = 0i16;
        let mut seen = false;
        while let Some((id, ty)) = self.field_header(&mut last)? {
            if seen {
                return Err(err(format!("{name} union sets more than one field")));
            }
            if id != 1 || ty != STRUCT {
                return Err(err(format!(
                    "{name} field {id} (type {ty}) is not the one the split-block filter uses"
                )));
            }
            self.skip(STRUCT, 1)?;
            seen = true;
        }
        if !seen {
            return Err(err(format!("{name} union is empty")));
        }
        Ok(())
    }

    /// Skip one value of type `ty` (as a field: booleans carry their value in the type).
    fn skip(&mut self, ty: u8, depth: u32) -> Result<(), DecodeError> {
        if depth > MAX_DEPTH {
            return Err(err("nested too deeply"));
        }
        match ty {
            BOOL_TRUE | BOOL_FALSE => Ok(()),
            _ => self.skip_value(ty, depth),
        }
    }

    /// Skip one value of type `ty` as a collection element (booleans take one byte).
    fn skip_value(&mut self, ty: u8, depth: u32) -> Result<(), DecodeError> {
        if depth > MAX_DEPTH {
            return Err(err("nested too deeply"));
        }
        match ty {
            BOOL_TRUE | BOOL_FALSE | BYTE => self.skip_bytes(1),
            I16 | I32 | I64 => self.varint().map(|_| ()),
            DOUBLE => self.skip_bytes(8),
            BINARY => {
                let n = self.varint()?;
                self.skip_bytes(n)
            }
            LIST | SET => {
                let h = self.byte()?;
                let (short, elem) = (h >> 4, h & 0x0f);
                let n = if short == 15 {
                    self.varint()?
                } else {
                    u64::from(short)
                };
                // Every element takes at least one byte: refuse counts the input cannot hold
                // before looping over them.
                if n > (self.buf.len() - self.pos) as u64 {
                    return Err(err(format!("list of {n} elements in fewer bytes")));
                }
                for _ in 0..n {
                    self.skip_value(elem, depth + 1)?;
                }
                Ok(())
            }
            MAP => {
                let n = self.varint()?;
                if n == 0 {
                    return Ok(());
                }
                let kv = self.byte()?;
                if n > (self.buf.len() - self.pos) as u64 / 2 {
                    return Err(err(format!("map of {n} entries in fewer bytes")));
                }
                for _ in 0..n {
                    self.skip_value(kv >> 4, depth + 1)?;
                    self.skip_value(kv & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            STRUCT => {
                let mut last = 0i16;
                while let Some((_, t)) = self.field_header(&mut last)? {
                    self.skip(t, depth + 1)?;
                }
                Ok(())
            }
            other => Err(err(format!("unknown compact type {other}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_round_trip() {
        for n in [32, 1024, 1 << 20, 128 << 20, i32::MAX, -1, 0] {
            let h = encode(n);
            assert_eq!(decode(&h), Ok((n, h.len())));
            let mut longer = h.clone();
            longer.extend_from_slice(&[0xab; 40]);
            assert_eq!(decode(&longer), Ok((n, h.len())), "trailing bitset ignored");
        }
        assert_eq!(
            encode(32),
            [
                0x15, 0x40, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0
            ]
        );
    }

    #[test]
    fn general_compact_forms_are_read() {
        // Long-form field ids, fields out of order, an unknown field of each kind skipped.
        let mut h = vec![0x0c, 0x08, 0x1c, 0x00, 0x00]; // long-form field 4 (zigzag 8): union
        h.extend_from_slice(&[0x05, 0x02, 0x40]); // long-form i32 field 1 = zigzag⁻¹(0x40) = 32
        h.extend_from_slice(&[0x1c, 0x1c, 0x00, 0x00]); // field 2 (delta 1)
        h.extend_from_slice(&[0x1c, 0x1c, 0x00, 0x00]); // field 3
        h.extend_from_slice(&[0x58, 0x03, b'a', b'b', b'c']); // field 8: binary
        h.extend_from_slice(&[0x19, 0x35, 1, 2, 3]); // field 9: list of 3 i32
        h.extend_from_slice(&[0x1b, 0x01, 0x55, 2, 4]); // field 10: map of 1 i32 → i32
        h.extend_from_slice(&[0x11, 0x12]); // fields 11, 12: booleans
        h.push(0);
        assert_eq!(decode(&h), Ok((32, h.len())));
        // The same union twice is refused.
        let mut twice = encode(32);
        twice.pop();
        twice.extend_from_slice(&[0x0c, 0x08, 0x1c, 0x00, 0x00, 0x00]);
        assert!(decode(&twice).is_err());
    }

    #[test]
    fn invalid_headers_are_refused() {
        let good = encode(64);
        for cut in 0..good.len() {
            assert!(decode(&good[..cut]).is_err(), "cut at {cut}");
        }
        // Another algorithm (union field 2) / a second union field / a missing field.
        let mut other = good.clone();
        other[3] = 0x2c;
        assert!(decode(&other).is_err());
        let two = [
            0x15, 0x40, 0x1c, 0x1c, 0, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0x1c, 0x1c, 0, 0, 0,
        ];
        assert!(decode(&two).is_err());
        assert!(decode(&[0x15, 0x40, 0x1c, 0x1c, 0, 0, 0]).is_err());
        assert!(decode(&[0]).is_err());
        // numBytes of the wrong type, or beyond i32.
        assert!(decode(&[0x16, 0x40, 0]).is_err());
        assert!(decode(&[0x15, 0xff, 0xff, 0xff, 0xff, 0x7f, 0]).is_err());
        // Unknown type nibble, an endless varint, hostile lengths and nesting.
        assert!(decode(&[0x1d, 0]).is_err());
        assert!(
            decode(&[
                0x15, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01
            ])
            .is_err()
        );
        assert!(decode(&[0x98, 0xff, 0xff, 0xff, 0xff, 0x0f]).is_err());
        assert!(decode(&[0x99, 0xf5, 0xff, 0xff, 0xff, 0xff, 0x0f]).is_err());
        assert!(decode(&[0x9b, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x55]).is_err());
        let deep: Vec<u8> = std::iter::repeat_n(0x1c, 10_000).collect();
        assert!(decode(&deep).is_err());
    }

    /// The canonical header with an unknown field 5 before the stop byte, holding `levels`
    /// containers one inside another, the innermost empty: structs (`0x1c`: field +1, a
    /// struct) or lists (`0x19`: one element, a list).
    fn nested(levels: u32, list: bool) -> Vec<u8> {
        let mut h = encode(64);
        h.pop(); // the stop byte
        if list {
            h.push(0x19); // field 5 (delta 1 from field 4), a list
            // Each list but the innermost: one element, itself a list.
            h.extend(std::iter::repeat_n(0x19, levels as usize - 1));
            h.push(0x05); // the innermost list: no i32
        } else {
            h.push(0x1c); // field 5 (delta 1 from field 4), a struct
            // Each struct but the innermost: its field 1, a struct.
            h.extend(std::iter::repeat_n(0x1c, levels as usize - 1));
            h.extend(std::iter::repeat_n(0x00, levels as usize)); // each struct's stop
        }
        h.push(0x00); // the header's stop
        h
    }

    #[test]
    fn nesting_is_read_up_to_its_limit_and_refused_beyond() {
        for list in [false, true] {
            // Just below and at the limit: the header is read whole.
            for levels in [1, MAX_DEPTH, MAX_DEPTH + 1] {
                let h = nested(levels, list);
                assert_eq!(
                    decode(&h),
                    Ok((64, h.len())),
                    "{levels} levels, list {list}"
                );
            }
            // Just above, and far above: refused for its depth, not for running out of bytes.
            for levels in [MAX_DEPTH + 2, MAX_DEPTH + 3, 1_000] {
                let e = decode(&nested(levels, list)).expect_err("too deep");
                assert!(e.to_string().contains("nested too deeply"), "{levels}: {e}");
            }
        }
        assert_eq!(MAX_DEPTH, 16, "the documented limit");
    }
    #[test]
    fn a_map_that_fills_the_header_up_to_its_stop_byte_is_read() {
        // An unknown map field of `n` one-byte keys and values, last in the header: after
        // the map's key and value types, exactly `2n + 1` bytes remain (the entries and the
        // stop byte), the fewest a valid map can leave, and the header is read whole. A
        // count of one entry more than those bytes can hold is refused by the count check,
        // before any entry is read.
        for n in [1u8, 2, 5, 63] {
            let mut h = encode(64);
            h.pop(); // the stop byte
            h.extend_from_slice(&[0x1b, n, 0x33]); // field 5: a map of n entries, byte → byte
            h.extend(0..2 * n);
            h.push(0x00);
            assert_eq!(decode(&h), Ok((64, h.len())), "{n} entries");
            let count_at = encode(64).len();
            let mut more = h.clone();
            more[count_at] = n + 1;
            let e = decode(&more).expect_err("more entries than bytes");
            assert!(e.to_string().contains("map of"), "{n}: {e}");
        }
    }
}
