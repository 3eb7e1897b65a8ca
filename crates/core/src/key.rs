//! Keys are bytes with a stable encoding.
//!
//! The object-safe [`Filter`](crate::Filter) methods take `&[u8]`. [`Key`] converts common
//! types to bytes without allocating: strings as their UTF-8 bytes, integers as their
//! little-endian bytes (`usize`/`isize` widened to 64 bits), so a filter built on one platform
//! answers the same on another after a round trip through bytes.

use alloc::{string::String, vec::Vec};

/// A value that can be presented to a filter as bytes.
///
/// ```
/// use bloomlab_core::Key;
/// assert_eq!(42u32.with_key_bytes(|b| b.to_vec()), vec![42, 0, 0, 0]);
/// assert_eq!("hi".with_key_bytes(|b| b.to_vec()), b"hi".to_vec());
/// // usize is always encoded as 8 bytes, whatever the platform's pointer width.
/// assert_eq!(7usize.with_key_bytes(|b| b.len()), 8);
/// ```
pub trait Key {
    /// Call `f` with this key's byte encoding.
    fn with_key_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R;
}

impl Key for [u8] {
    #[inline(always)]
    fn with_key_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl<const N: usize> Key for [u8; N] {
    #[inline(always)]
    fn with_key_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl Key for Vec<u8> {
    #[inline(always)]
    fn with_key_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl Key for str {
    #[inline(always)]
    fn with_key_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

impl Key for String {
    #[inline(always)]
    fn with_key_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

impl<T: Key + ?Sized> Key for &T {
    #[inline(always)]
    fn with_key_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        (**self).with_key_bytes(f)
    }
}

// std offers no trait for `to_le_bytes`, so a generic impl is not possible without a new
// dependency; this local macro writes the twelve identical impls.
macro_rules! integer_keys {
    ($($t:ty => $wide:ty),* $(,)?) => {$(
        impl Key for $t {
            #[inline(always)]
            fn with_key_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
                f(&(*self as $wide).to_le_bytes())
            }
        }
    )*};
}

integer_keys!(
    u8 => u8, u16 => u16, u32 => u32, u64 => u64, u128 => u128, usize => u64,
    i8 => i8, i16 => i16, i32 => i32, i64 => i64, i128 => i128, isize => i64,
);

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<K: Key + ?Sized>(k: &K) -> Vec<u8> {
        k.with_key_bytes(|b| b.to_vec())
    }

    #[test]
    fn encodings_are_stable() {
        assert_eq!(bytes(&0x0102_0304u32), vec![4, 3, 2, 1]);
        assert_eq!(bytes(&-1i16), vec![0xff, 0xff]);
        assert_eq!(bytes(&1usize), 1u64.to_le_bytes().to_vec());
        assert_eq!(bytes(&-2isize), (-2i64).to_le_bytes().to_vec());
        assert_eq!(bytes("abc"), bytes(&String::from("abc")));
        assert_eq!(bytes(&b"abc"[..]), bytes(b"abc"));
        assert_eq!(bytes(&vec![1u8, 2]), vec![1, 2]);
        assert_eq!(bytes(&&"x"), b"x".to_vec());
    }
}
