use super::*;

#[test]
fn the_one_hash_layout_is_chosen_up_to_and_including_2_pow_32_blocks() {
    const TWO_32: u64 = 1 << 32;
    assert_eq!(ONE_HASH_MAX_BLOCKS, TWO_32);
    for (blocks, want) in [
        (1, Layout::OneHash),
        (TWO_32 - 1, Layout::OneHash),
        (TWO_32, Layout::OneHash),
        (TWO_32 + 1, Layout::Local32),
        (u64::MAX, Layout::Local32),
    ] {
        assert_eq!(Layout::for_blocks(blocks), want, "{blocks} blocks");
        assert_eq!(Layout::OneHash.addresses(blocks), want == Layout::OneHash);
        // The earlier layouts address any number of blocks.
        assert!(Layout::Local32.addresses(blocks) && Layout::Wide64.addresses(blocks));
    }
}

#[test]
fn the_handle_is_four_words_and_its_clones_and_drops_keep_their_tables() {
    // What a lookup reads (the table's pointer and length, the inline kernel) and the pointer
    // to the rest: 32 bytes where pointers are 64 bits.
    assert_eq!(size_of::<BlockedBloomFilter>(), 4 * size_of::<usize>());
    // Many handles in one array, cloned, dropped out of order, decoded: every table stays its
    // own (no table's allocation is freed twice or lost), and answers stay the same.
    let mut fs: Vec<BlockedBloomFilter> = (0..64u64)
        .map(|i| {
            let mut f = BlockedBloomFilter::with_blocks(i % 5 + 1, 6).unwrap();
            f.insert(&i);
            f
        })
        .collect();
    let copies: Vec<_> = fs.iter().rev().cloned().collect();
    fs.retain(|f| f.blocks() % 2 == 0);
    for (i, f) in copies.iter().rev().enumerate() {
        assert!(f.might_contain(&(i as u64)));
        assert_eq!(f.blocks(), i as u64 % 5 + 1);
        let g = BlockedBloomFilter::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(g.to_bytes(), f.to_bytes());
    }
    assert!(fs.iter().all(|f| f.blocks() % 2 == 0));
}

#[test]
fn blocks_are_cache_line_aligned() {
    let f = BlockedBloomFilter::with_fpr(10_000, 0.01).unwrap();
    for b in &f.blocks {
        assert_eq!((b as *const Block as usize) % 64, 0);
    }
}

#[test]
fn sizing_follows_the_blocked_formula() {
    let f = BlockedBloomFilter::with_fpr(1_000_000, 0.01).unwrap();
    let (bpi, k) = math::blocked_bits_per_item_exact(0.01, 512).unwrap();
    assert_eq!(f.hashes(), k);
    assert_eq!(
        f.blocks(),
        ((1_000_000.0 * bpi).ceil() as u64).div_ceil(512)
    );
    assert!(f.expected_fpr() == 0.0 && f.is_empty());
    assert_eq!(f.capacity(), 1_000_000);
}

#[test]
fn insert_reports_new_keys() {
    let mut f = BlockedBloomFilter::with_fpr(100, 0.01).unwrap();
    assert!(f.insert("a"));
    assert!(!f.insert("a"));
    assert_eq!(f.len(), 2);
    assert!(f.might_contain("a"));
    f.clear();
    assert!(f.is_empty() && f.count_ones() == 0);
}
