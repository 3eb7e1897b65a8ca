//! `Blocks64::stretch`, the words a batched lookup prefetches before its query reads them:
//! every word the query's answer depends on lies in it, and it is no longer than the three
//! blocks a row can reach.

#![forbid(unsafe_code)]

use bloomlab_conformance::stream::splitmix64 as splitmix;
use bloomlab_ribbon::Blocks64;
use bloomlab_simd::PortableParity;

#[test]
fn the_stretch_of_a_row_holds_every_word_its_query_depends_on() {
    const BLOCKS: usize = 6;
    let m = BLOCKS * 128;
    let mut seed = 0x5eed;
    for r in [1u32, 3, 8, 13] {
        let ru = r as usize;
        let columns: Vec<u128> = (0..BLOCKS * ru)
            .map(|_| u128::from(splitmix(&mut seed)) | (u128::from(splitmix(&mut seed)) << 64))
            .collect();
        let solution = Blocks64::from_columns(&columns, r);
        let base = solution.stretch(0).as_ptr() as usize;
        // A row of two slots, its first and its last: its value depends on the words of
        // each column that hold them, in the first block and (unless it starts on a block
        // boundary) the third.
        let coeff = 1u128 | (1u128 << 127);
        for start in 0..=m - 128 {
            let stretch = solution.stretch(start);
            let first = (stretch.as_ptr() as usize - base) / 8;
            let held = first..first + stretch.len();
            assert!(
                stretch.len() <= 3 * ru,
                "r = {r}, start = {start}: {held:?}"
            );
            let answer = solution.query(PortableParity, start, coeff);
            let mut depends = 0;
            // Word `(2b + h)·r + j` is half `h` of column `j` of 128-slot block `b`.
            for w in 0..solution.len() {
                let (b, h, j) = (w / (2 * ru), (w / ru) % 2, w % ru);
                let mut flipped = columns.clone();
                flipped[b * ru + j] ^= u128::from(u64::MAX) << (64 * h);
                let changed =
                    Blocks64::from_columns(&flipped, r).query(PortableParity, start, coeff);
                if changed != answer {
                    depends += 1;
                    assert!(
                        held.contains(&w),
                        "r = {r}, start = {start}: word {w} outside {held:?}"
                    );
                }
            }
            assert!(depends >= ru, "r = {r}, start = {start}: {depends} words");
        }
    }
}
