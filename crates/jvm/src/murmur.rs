//! The two Murmur3 functions the JVM filters hash with — the one home for their hashing.
//!
//! - **Guava** hashes a key's funnelled bytes with the standard Murmur3 x64_128, seed 0
//!   (`Hashing.murmur3_128()`); the `mur3` crate computes it ([`guava_murmur3_128`]).
//! - **Spark** hashes with its own Murmur3 x86_32 (`org.apache.spark.util.sketch.Murmur3_x86_32`),
//!   which agrees with the reference function on every input whose length is a multiple of 4
//!   but not on the others: the reference packs the 1–3 trailing bytes into one block, Spark
//!   mixes each trailing byte as a block of its own, sign-extended from Java's signed `byte`
//!   (`0x80` becomes `0xffff_ff80`). No crate computes that variant, so [`spark_hash_bytes`] is
//!   written here; the tests check it against the reference (`mur3`) on aligned inputs and
//!   against values the Spark jar computed on the others.
//!
//! Spark's `hashLong(v, seed)` is the function of the eight little-endian bytes of `v` (low
//! 32-bit word first), so [`spark_hash_long`]`(v, s) == `[`spark_hash_bytes`]`(&v.to_le_bytes(), s)`.

const C1: u32 = 0xcc9e_2d51;
const C2: u32 = 0x1b87_3593;

#[inline(always)]
fn mix_k1(k: u32) -> u32 {
    k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2)
}

#[inline(always)]
fn mix_h1(h: u32, k: u32) -> u32 {
    (h ^ k)
        .rotate_left(13)
        .wrapping_mul(5)
        .wrapping_add(0xe654_6b64)
}

#[inline(always)]
fn fmix(h: u32, len: u32) -> u32 {
    let mut h = h ^ len;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Spark's `Murmur3_x86_32.hashUnsafeBytes(bytes, seed)`: the reference Murmur3 x86_32 over the
/// whole 4-byte blocks (little-endian), then each trailing byte, sign-extended, mixed as a
/// block of its own, then the finaliser with the byte length. Java's `int` results are
/// returned as `i32`.
///
/// ```
/// use bloomlab_jvm::murmur::{spark_hash_bytes, spark_hash_long};
/// // A long hashes as its eight little-endian bytes.
/// assert_eq!(spark_hash_long(-7, 0), spark_hash_bytes(&(-7i64).to_le_bytes(), 0));
/// ```
pub fn spark_hash_bytes(data: &[u8], seed: i32) -> i32 {
    let aligned = data.len() - data.len() % 4;
    let (body, tail) = data.split_at(aligned);
    let mut h = seed as u32;
    for block in body.chunks_exact(4) {
        let k = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        h = mix_h1(h, mix_k1(k));
    }
    for &b in tail {
        h = mix_h1(h, mix_k1(b as i8 as i32 as u32));
    }
    // Java's length is an `int`; a Java array never reaches 2^31 bytes, and the truncation
    // keeps the function total for longer Rust slices.
    fmix(h, data.len() as u32) as i32
}

/// Spark's `Murmur3_x86_32.hashLong(value, seed)`: the low 32 bits, then the high 32 bits, as
/// two blocks, finalised with length 8.
#[inline]
pub fn spark_hash_long(value: i64, seed: i32) -> i32 {
    let mut h = mix_h1(seed as u32, mix_k1(value as u32));
    h = mix_h1(h, mix_k1((value >> 32) as u32));
    fmix(h, 8) as i32
}

/// Guava's `Hashing.murmur3_128().hashBytes(bytes)` as its two 64-bit halves `(h1, h2)`: the
/// `HashCode`'s bytes are `h1` then `h2`, little-endian, so `asLong()` is `h1`.
#[inline]
pub fn guava_murmur3_128(data: &[u8]) -> (u64, u64) {
    mur3::murmurhash3_x64_128(data, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_the_reference_on_whole_blocks_only() {
        let data: Vec<u8> = (0u8..=255).map(|b| b.wrapping_mul(151)).collect();
        let mut differs = 0;
        for len in 0..64 {
            for seed in [0i32, 1, -1, 0x1234_5678] {
                let ours = spark_hash_bytes(&data[..len], seed) as u32;
                let reference = mur3::murmurhash3_x86_32(&data[..len], seed as u32);
                if len % 4 == 0 {
                    assert_eq!(ours, reference, "len {len} seed {seed}");
                } else if ours != reference {
                    differs += 1;
                }
            }
        }
        // The tail rule differs from the reference's (48 unaligned lengths × 4 seeds); a
        // coincidence is a 2^-32 event per pair.
        assert_eq!(differs, 48 * 4);
    }

    #[test]
    fn a_long_is_its_little_endian_bytes() {
        for v in [0i64, 1, -1, i64::MIN, i64::MAX, 0x0102_0304_0506_0708] {
            for seed in [0, 42, -42] {
                assert_eq!(
                    spark_hash_long(v, seed),
                    spark_hash_bytes(&v.to_le_bytes(), seed)
                );
            }
        }
    }
}
