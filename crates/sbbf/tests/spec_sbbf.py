#!/usr/bin/env python3
"""The Parquet split-block Bloom filter from its specification alone (xxHash64, seed 0, of
each value's plain encoding; block = ((h >> 32) * blocks) >> 32; one bit per 32-bit word from
the eight salts), independent of any Rust code. Prints the known answers pinned in
crates/sbbf/tests/parquet_interop.rs (`spec_known_answers`)."""
import struct

M = (1 << 64) - 1
P1, P2, P3, P4, P5 = (11400714785074694791, 14029467366897019727, 1609587929392839161,
                      9650029242287828579, 2870177450012600261)


def rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M


def rnd(acc, lane):
    return (rotl((acc + lane * P2) & M, 31) * P1) & M


def xxh64(data, seed=0):
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + P1 + P2) & M, (seed + P2) & M, seed & M, (seed - P1) & M]
        while i + 32 <= n:
            for j in range(4):
                v[j] = rnd(v[j], struct.unpack_from('<Q', data, i + 8 * j)[0])
            i += 32
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & M
        for x in v:
            h = ((h ^ rnd(0, x)) * P1 + P4) & M
    else:
        h = (seed + P5) & M
    h = (h + n) & M
    while i + 8 <= n:
        h ^= rnd(0, struct.unpack_from('<Q', data, i)[0])
        h = (rotl(h, 27) * P1 + P4) & M
        i += 8
    if i + 4 <= n:
        h ^= (struct.unpack_from('<I', data, i)[0] * P1) & M
        h = (rotl(h, 23) * P2 + P3) & M
        i += 4
    while i < n:
        h ^= (data[i] * P5) & M
        h = (rotl(h, 11) * P1) & M
        i += 1
    h ^= h >> 33
    h = (h * P2) & M
    h ^= h >> 29
    h = (h * P3) & M
    return h ^ (h >> 32)


SALT = [0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d,
        0x705495c7, 0x2df1424b, 0x9efc4947, 0x5c6bfb31]


def insert(blocks, h):
    b = ((h >> 32) * len(blocks)) >> 32
    for i in range(8):
        blocks[b][i] |= 1 << (((SALT[i] * (h & 0xffffffff)) & 0xffffffff) >> 27)


assert xxh64(b'') == 0xEF46DB3751D8E999  # the xxHash reference value of the empty input
values = [
    ('i32 7', struct.pack('<i', 7)),
    ('i32 -123456', struct.pack('<i', -123456)),
    ('i64 -3', struct.pack('<q', -3)),
    ('i64 1234567890123', struct.pack('<q', 1234567890123)),
    ('f32 1.5', struct.pack('<f', 1.5)),
    ('f64 -0.25', struct.pack('<d', -0.25)),
    ('bytes parquet', b'parquet'),
    ('bytes 40', bytes(range(40))),
]
blocks = [[0] * 8 for _ in range(4)]
for name, enc in values:
    h = xxh64(enc)
    print(f'{name}: 0x{h:016x}')
    insert(blocks, h)
print('bitset:', ''.join(struct.pack('<8I', *b).hex() for b in blocks))
