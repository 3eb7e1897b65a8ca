//! A band of 64-bit rows solved and read back as little-endian bytes (`LeWords`, the byte
//! format's in-place reading) answers every row as the solution in memory does, at every
//! result width with its own kernel (1 to 12) and past them.

#![forbid(unsafe_code)]

use bloomlab_conformance::stream::splitmix64 as splitmix;
use bloomlab_ribbon::band::{Banding, CoeffRow, LeWords, query};

#[test]
fn a_64_bit_band_answers_from_its_bytes_as_from_memory_at_every_width() {
    let m = 4 * 64;
    let blocks = m / 64;
    let mut seed = 0xb1d;
    for r in 1u32..=16 {
        let mut band = Banding::<u64>::new(m).unwrap();
        let mut rows = Vec::new();
        for s in (0..=m - 64).step_by(2) {
            let h = splitmix(&mut seed);
            let row = (
                s,
                u64::from_halves(h, 0),
                (h >> 20) as u32 & ((1u32 << r) - 1),
            );
            if band.add(row.0, row.1, row.2) {
                rows.push(row);
            }
        }
        assert!(rows.len() > 50, "r = {r}: {} rows", rows.len());
        let solution = band.solve(r, 7);
        let bytes: Vec<u8> = solution.iter().flat_map(|w| w.to_le_bytes()).collect();
        for &(s, c, v) in &rows {
            assert_eq!(
                query(&solution[..], blocks, r, s, c),
                v,
                "r = {r}, start {s}"
            );
            assert_eq!(
                query::<u64, _>(&LeWords(&bytes), blocks, r, s, c),
                v,
                "r = {r}, start {s}, from bytes"
            );
        }
    }
}
