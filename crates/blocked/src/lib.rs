//! A cache-local blocked Bloom filter (Putze, Sanders & Singler 2007), in the manner of
//! RocksDB's `FastLocalBloom`: one memory access per lookup.
//!
//! The table is an array of 512-bit blocks, each one 64-byte cache line, 64-byte aligned.
//! A key is hashed once, into one 64-bit value `x` (the scheme's
//! [`hash64`](HashScheme::hash64)); its high 32 bits pick the block
//! (`⌊(x >> 32) · blocks / 2^32⌋`) and all `k` probes land inside that block, at bit positions
//! taken from its low 32 bits (see [Probe positions](#probe-positions)). So an insert or a
//! lookup touches exactly one cache line, where a classic filter touches up to `k`.
//!
//! The price is accuracy: keys spread over blocks unevenly (the number of keys in a block is
//! Poisson), and crowded blocks answer "maybe" more often. The filter is therefore sized with
//! the blocked formula, a Poisson mixture over block loads, not the classic one: a 1 % target
//! needs 9.92 bits/item with k = 6 instead of 9.59 bits/item with k = 7, and at 16 bits/item
//! the best k is 10, not the classic 11.
//!
//! The formula used is [`math::blocked_fpr_exact`]: the textbook one
//! ([`math::blocked_fpr`], Putze et al.) treats the bits of a block as independent and
//! under-predicts by 0.6 % at k = 6 and 2.2 % at k = 9 (measured here: 1.0074 % against its
//! 1.0000 %, 0.1028 % against 0.1000 %, on 2·10^7 probes); the exact occupancy version
//! predicts 1.0092 % and 0.1022 % there. Sizing with it costs 9.92 instead of 9.90 bits/item
//! at 1 % and 15.55 instead of 15.49 at 0.1 %, and the target is then met rather than
//! missed by 2 %.
//!
//! Accuracy, measured by this crate's tests with fixed seeds (10^6 keys, 10^6–2·10^6
//! non-member probes): at targets of 0.1 %, 1 % and 3 % the measured rate stays within a 5σ
//! binomial bound of the formula's value, and the formula's value is at or below the target.
//!
//! ```
//! use bloomlab_blocked::BlockedBloomFilter;
//!
//! let mut f = BlockedBloomFilter::with_fpr(100_000, 0.01)?;
//! assert_eq!(f.hashes(), 6);
//! let bits_per_item = f.bits() as f64 / 100_000.0;
//! assert!((bits_per_item - 9.92).abs() < 0.01, "{bits_per_item}"); // 9.92 bits/item at 1 %
//! for i in 0..100_000u64 {
//!     f.insert(&i);
//! }
//! assert!((0..100_000u64).all(|i| f.might_contain(&i))); // never a false negative
//! assert!(f.expected_fpr() <= 0.01);
//!
//! // 200 000 keys that were never inserted: the formula expects ≈ 1 % of them to say "maybe";
//! // the count stays within 5σ of that (σ = √(N·p·(1−p)) ≈ 44.5).
//! let fp = (1u64 << 40..(1u64 << 40) + 200_000).filter(|i| f.might_contain(i)).count();
//! let expected = 200_000.0 * f.expected_fpr();
//! assert!((fp as f64 - expected).abs() < 5.0 * 44.5, "{fp} vs {expected}");
//!
//! // Batched lookups give the same answers as single ones, with the memory accesses overlapped.
//! let keys: Vec<u64> = (99_990..100_010).collect();
//! let mut out = vec![false; keys.len()];
//! f.might_contain_batch(&keys, &mut out)?;
//! assert!(keys.iter().zip(&out).all(|(k, &o)| o == f.might_contain(k)));
//! # Ok::<(), bloomlab_core::Error>(())
//! ```
//!
//! # Probe positions
//!
//! Three layouts exist; every filter built by this version uses the third (filters of more
//! than 2^32 blocks, 256 GiB, the second).
//!
//! **Third layout, [`Layout::OneHash`]** (envelope version 3): one 64-bit hash `x` per key
//! — XXH3-64 with seed [`XXH3_SEED`](bloomlab_core::hash::XXH3_SEED) for the default scheme,
//! the first 64 bits of the SipHash-2-4 output for the keyed ones. The block is
//! `⌊(x >> 32) · blocks / 2^32⌋`; with `h = x mod 2^32`, probe `i` is bit
//! `(h · 0x9e37_79b9^i mod 2^32) >> 23` of the block — RocksDB's `FastLocalBloom` split of one
//! 64-bit hash (`util/bloom_impl.h`), the multiplier being `⌊2^32/φ⌋` made odd (Knuth, TAOCP
//! vol. 3 §6.4). The two halves of `x` are independent bits of a good hash, so the block and
//! the probes are independent choices, as the formula assumes.
//!
//! **Second layout, [`Layout::Local32`]** (envelope version 2): the same in-block rule with
//! `h` the high 32 bits of the 128-bit hash's `h2`, the block by fastrange of `h1`
//! (`⌊h1 · blocks / 2^64⌋`).
//!
//! **First layout, [`Layout::Wide64`]** (envelope version 1): `j = ⌊h_i / 2^55⌋`,
//! `h_0 = h2`, `h_{i+1} = h_i · 0x9e37_79b9_7f4a_7c15 mod 2^64` — the rule widened to 64 bits,
//! which AVX2 cannot multiply lane-wise.
//!
//! With 32-bit products, eight probes fit one AVX2 vector: one multiply by the precomputed
//! powers, two shifts, two in-lane permutes and a blend fetch the probed 32-bit words of the
//! loaded cache line, a variable shift of a lane row builds the masks (zero past `k`), one
//! `vptest` answers; no branch per probe ([`bloomlab_core::simd::LocalKernel`]). Single
//! lookups and inserts run that kernel as inline assembly inlined into the caller — a
//! function compiled with `#[target_feature(enable = "avx2")]` cannot inline into one
//! compiled without it, so the kernel was a call per key before — chosen once per filter,
//! for its `k`, when it is built; batches run the same kernel in their prefetching loops.
//! The portable scalar twin gives bit-identical blocks and answers (tested against
//! each other on the same keys for every `k`, both paths exercised on AVX2 machines by
//! [`insert_portable`](BlockedBloomFilter::insert_portable) and
//! [`might_contain_portable`](BlockedBloomFilter::might_contain_portable)).
//!
//! In every layout, multiplying by an odd constant is a bijection, the top bits behave like
//! independent uniform choices, and two probes of one key may pick the same bit; the formula
//! models exactly that (k·i independent uniform choices with repetition in a block holding i
//! keys), and [`current_fpr`](BlockedBloomFilter::current_fpr), the mean over blocks of
//! `(ones/512)^k`, is the exact FPR of the filter as it stands under that model. The keyed
//! schemes plug in unchanged.
//!
//! # Formats and versions
//!
//! The hash and the probe layout are part of the byte format, so each layout is a format
//! version: new filters write envelope version 3; version-1 and version-2 files **load** (as
//! [`Layout::Wide64`] and [`Layout::Local32`]) and keep their layout through inserts, unions
//! with filters of the same layout, re-encoding and serde, answering exactly as when written
//! (literal files of each version and their answers are pinned by `tests/known_answers.rs` and
//! `tests/format_versions.rs`). Loading was chosen over refusing because a filter file is
//! often the only copy of a key set's summary. Other versions are refused with
//! [`DecodeError::UnsupportedVersion`] naming the version; readers built before a layout
//! refuse its files the same way. Combining filters of different layouts is refused.
//! [`with_layout`](BlockedBloomFilter::with_layout) writes an older version on request.
//!
//! # Where the time goes
//!
//! Instruction counts (valgrind `--tool=callgrind`, noise-free; `examples/icount.rs`, the
//! difference of two runs of 10^5 and 2·10^5 operations, so the loop around each call is
//! included) per operation on a filter of 2 000 u64 keys (in L1), k = 6:
//!
//! | operation | first layout | second layout, kernel called | third layout, kernel inline | the same, lane row chosen with the kernel | sbbf-rs-safe 0.3 |
//! |---|---|---|---|---|---|
//! | `might_contain` | 114 | 77 | 72 | 62 | 52 |
//! | `insert` | 183 | 128 | 100 | 94 | 54 |
//!
//! (valgrind runs the AVX2 kernels: it does not offer AVX-512 to the program. The last
//! step stores in the kernel, when the filter is built, the row of lane ones for its `k`
//! instead of computing its address from `k` on every call.)
//!
//! Of the second layout's 77, the call into the AVX2 body, its feature test and the register
//! saves around it were about 10, and xxh3-128 with the derivation of the probe half 24; the
//! third layout's lookup loop is straight-line code (layout and kernel tests hoisted out of
//! the loop): 17 for XXH3-64, 5 for the block index and bounds check, 13 for the kernel.
//! (Counted on the commit that first wrote it out by hand; routed through the shared
//! `hash_in`/`place_in` the counts are 72 and 100, and lookups time the same — 1.055 vs
//! 1.056 and 1.225 vs 1.225 × sbbf-rs in paired runs of `examples/ab.rs`. Between
//! processes the same binary reads 1.06 or 1.22 at n = 2 000: allocation luck the
//! example's within-process pairing cannot remove.)
//! What is left against sbbf-rs-safe is the design: a 256-bit split block is one vector
//! tested with a multiply, a shift, a variable shift and a `vptest`; a 512-bit block is two
//! halves, so each probe vector needs two permutes and a blend, and `k` is variable (a lane
//! row). With no hardware counters on this VM, shuffle-port pressure is the likely limit: a
//! broadcast from memory instead of `vmovd` + `vpbroadcastd` (two shuffle operations) gained
//! 3 %. Inserts then cost eight OR-to-memory stores of vector-computed masks (a vector cannot
//! scatter): building the two halves' masks in registers instead (a variable shift per probe
//! and half, two vector stores) measured 1.4× slower in L1 and no faster out of cache (on a
//! machine this measurement did not record).
//!
//! **AVX2 without AVX-512.** On a 2-vCPU AMD EPYC VM with Zen 3 (family 25 model 1: AVX2,
//! no AVX-512; L1d 32 KiB and L2 512 KiB per core, 32 MiB L3) the same measurement came out
//! the other way, and that is what the AVX2 inserts now do. There the eight stores cost the
//! most: `cargo run --release -p bloomlab-blocked --example block_kernels [-- k]` (which
//! reads AVX2 ÷ sbbf-rs-safe on such a CPU) gave insert ÷ sbbf-rs-safe's insert **2.54–2.60
//! / 2.24–2.34 / 1.52–1.56** at 2 000 / 10^5 / 10^7 keys for `k = 6`, and 5.27 / 3.81–4.88 /
//! 2.61–2.63 for `k = 10`, whose second round ORed six zero masks — an `or` of a zero mask
//! still writes its word. The one- and two-round AVX2 inserts now build the line's new bits
//! in two vector registers, seven instructions a probe (the position broadcast from memory — a
//! load, no shuffle —, subtracted from each half's last bit indices, the top bit shifted right
//! by the differences, ORed into the halves), for the probes `k` uses rounded up to even, and
//! write the line with two 32-byte stores (`bloomlab_core::simd`, `asm_insert_round1_l2`):
//! **1.79–1.85 / 1.69–1.75 / 1.44–1.49** for `k = 6` and 2.94–2.96 / 2.21–2.52 / 2.50–2.55 for
//! `k = 10` (two processes of each build, in turn; lookups unchanged, 1.24–1.25 / 1.29–1.34 /
//! 0.96–1.01). In `cargo run --release -p bloomlab-blocked --example speed` (same VM,
//! `ROUNDS=11`, two processes of each build, in turn) single inserts went from 2.79–2.91 /
//! 2.77–2.97 / 1.82–1.87× sbbf-rs-safe's to 2.18–2.26 / 2.13–2.17 / 1.43–1.76×. The new kernel
//! runs more instructions, not fewer — callgrind (`examples/icount.rs`, which runs the AVX2
//! kernels) reads `insert` 95 → 120–122 (two builds of the change) and the atomic filter's
//! insert 81 → 131 — but 2 loads and 2 stores of the line where the old one loaded 16 words of
//! its stack buffer and made 8 read-modify-writes of single words of the line, on which this
//! core stalled. Which way it goes on an AVX2-only Intel core is not measured (the paragraph
//! above, where a similar construction lost, does not record its machine). So on this core the
//! blocked insert stays 1.4–2.3× the split block's, as on the others (see below): its probes
//! land anywhere in sixteen words, which takes the construction above — about 60 instructions
//! for `k = 6` where the split block's eight probes fill one vector with four — and its lookup
//! 1.2–1.3× in cache (two permutes and a blend to reach the probed words) and on a par at 10^7
//! (`results/notes/avx2-only.md`).
//!
//! **AVX-512.** On a CPU with AVX-512F the one-round lookup (`k ≤ 8`) fetches the probed
//! words with one 16-lane `vpermd` of the whole 64-byte line instead of two 8-lane permutes
//! and a blend — now eight instructions against eleven — and the
//! two-round lookup (`9 ≤ k ≤ 16`) becomes one 512-bit round (14 instructions instead of
//! about 22); same answers ([`bloomlab_core::simd::LocalKernel`] tests every kernel against
//! the scalar definition), and the atomic filter's shared-line lookups use them too. Timed
//! side by side in the filter's lookup loop (`cargo run --release -p bloomlab-blocked
//! --example block_kernels [-- k]`: both kernels over the same blocks, sbbf-rs-safe beside them,
//! passes A B S S B A, medians of 60–84 groups, load 1), AVX-512 ÷ AVX2 at 2 000 / 10^5 /
//! 10^7 keys: for `k = 6` (1 %) 0.80–0.99 / 0.78–0.97 / 0.88–0.98 over five processes of
//! two builds — how much the narrower kernel gains depends on where the build placed the
//! loop — and for `k = 10` (0.1 %) 0.83 / 0.78 / 0.88. On a 2-vCPU AMD EPYC VM with Zen 5
//! (family 26 model 2) the same example reads the lookups at `k = 6` AVX-512 ÷ AVX2 1.00 /
//! 1.00–1.01 / 0.97–1.00 (two processes; the narrower kernel gains nothing there), AVX-512 ÷
//! sbbf-rs 1.09–1.11 / 1.11 / 0.94–0.98, and its inserts (`k = 6`, twelve processes of the
//! builds before and after the change below) AVX-512 ÷ AVX2 0.60–0.80 at 10^5 (three groups a
//! process) and 0.71–0.74 at 10^7. The one-round insert builds the
//! line's new bits in one 512-bit register instead of eight scalar `or`s (a variable shift
//! per probe over all sixteen words, one 64-byte store): the same example's inserts (fresh
//! tables, two chunks at a time) read AVX-512 ÷ AVX2 0.79–0.81 at 10^5 and 0.89–0.94 at
//! 10^7, and 1.54 against sbbf-rs at 10^7; the two-round insert the same way with sixteen
//! probes (`k = 10`: 0.90 at 10^5, 0.84 at 10^7). Each probe's bit then cost four
//! instructions: a broadcast, a subtraction from each word's first bit index, a left shift,
//! an OR. Now two probes cost five: each position, broadcast from memory inside a `vpsubd`,
//! is subtracted from each word's last bit index, the top bit shifted right by the
//! difference (`vpsrlvd`), and the pair ORed into the line's new bits by one three-input
//! `vpternlogd`. Out of cache that is what counts — fewer instructions per insert, more
//! inserts' misses in the reorder window. The kernels side by side in one loop (hash,
//! block, kernel; fresh 12 MiB tables, chunks of 16 384 keys alternating, six tables each,
//! two processes per pair, an experiment not kept; each pair building the same bits): four
//! ÷ three per probe **1.17 / 1.18** the time at 10^7 keys (1.01 / 1.01 at 10^5), three per
//! probe ÷ five per pair **1.10 / 1.07** (1.04 / 1.04 at 10^5); four per probe ÷ five per
//! pair **1.29 / 1.29** (1.06 / 1.08 at 10^5). Each insert now builds only the pairs its `k`
//! needs — three for `k ≤ 6` (the 1 % and 3 % targets), `⌈k/2⌉` for `9 ≤ k ≤ 16` — where it built
//! four, or eight, with the lanes past `k` empty; the second round's positions are stored as two
//! 32-byte halves, since loads of the upper lanes did not forward from one 64-byte store
//! (`bloomlab_core::simd`, `avx512_round2_positions`). `cargo run --release -p bloomlab-blocked
//! --example insert_pairs -- k` (the two kernels and sbbf-rs-safe in one loop, medians of 41
//! rounds, 5 at 10^7; 2-vCPU AMD EPYC VM, Zen 5, family 26 model 2) reads needed ÷ every pair
//! with tables sized for 2 000 / 10^5 / 10^7 keys: `k = 6` **0.94 / 0.92 / 1.00**, `k = 5` 0.95
//! / 0.93 / 0.99, `k = 10` **0.87 / 0.86 / 0.98**, `k = 9` 0.86 / 0.85 / 0.98, `k = 14` 0.95 /
//! 0.96 / 1.00 — a
//! gain in cache, none out of it, where the insert waits on its line; against sbbf-rs-safe's
//! insert, `k = 6`: 1.53 / 1.50 / 1.37. The atomic filter's inserts do not use these kernels: one
//! relaxed `fetch_or` per probe after a prefetch of the line beat reading the line and ORing
//! only its missing words at every size ([`AtomicBlockedBloomFilter`], *Cost*).
//!
//! Out of cache the insert is bound by how many inserts the core keeps in flight, not by
//! its stores. Timed side by side in one loop (hash, block, kernel; 10^7 keys at 1 %, fresh
//! tables, chunks of 16 384 keys in turn, 2 passes, load 0.4; an experiment not kept as an
//! example — the AVX-512 variant is now the kernel, measured by `examples/block_kernels.rs` as
//! above): the AVX2 kernel 72–78 ns per
//! insert; the two-vector variant above 67–69 (0.90–0.94×); an AVX-512 variant — one
//! 16-lane variable shift per probe, one 64-byte store — 61–64 (0.85–0.89×; 0.90–1.03× at
//! 10^5); sbbf-rs-safe's insert 43–45; and a 256-bit split-block insert run in *our* loop
//! (one multiply, shift, variable shift, load, OR, store) 35–36. The last is what the
//! split block costs: ~35 instructions per insert against our ~99 then (callgrind), so the
//! same out-of-order window holds about three times as many of its inserts' cache misses
//! at once as of ours. A layout whose insert is one vector OR is the split
//! block — `bloomlab-sbbf` — at 1.3× the false-positive rate for the same bits; this
//! layout keeps `k` free probes over 512 bits and pays that in insert time at 10^7.
//! (sbbf-rs-safe 0.3 stores 256-bit buckets: its insert is one load and one store.)
//!
//! **Fewer instructions per operation.** That bound was tested directly (2-vCPU AMD EPYC VM,
//! Zen 5, family 26 model 2; one process, a minimal insert — hash, block, one 64-byte OR —
//! beside sbbf-rs-safe's at 10^7 keys, an experiment not kept): twenty `nop`s added to the
//! minimal insert took it from 0.53–0.55× sbbf-rs-safe's time to 0.84× — each instruction
//! an insert carries costs about as much out of cache as in. So the loop of single inserts
//! was cut from 85 instructions per key to 70 (its disassembly, `k = 6`): the AVX-512
//! kernels' constants (powers, word tops, the lanes-past-`k` row, the top bit, the lane-ones
//! row) in one 256-byte table per `k` reached through one pointer the kernel holds; `h`
//! into the insert's vector by one `vpbroadcastd` from its register; the first probe pair
//! written straight into the result (no zeroed register first); "was any bit new" as one
//! compare into a mask register and a `kortestw` instead of a fold and a `vptest`; the
//! count's saturating add as a predicted branch; the kernel and its three-pair case chosen
//! by one byte; and the block found by [`Lines::fastrange`](bloomlab_core::simd::Lines::fastrange),
//! always in the table, so no bounds test. Lookups keep `h` going through memory and drop
//! the bounds test (in a loop beside sbbf-rs-safe, 2 000 and 10^5 keys, not kept: the
//! register broadcast cost 4 % of a lookup in cache, the bounds test 5 %), and build each
//! probe's mask with one `vprolvd` of the lane row (a rotation counts modulo 32: one
//! instruction fewer, eight before `setc`). `cargo run --release -p bloomlab-blocked --example
//! block_kernels` (same VM, two processes of each build, before → after), AVX-512 ÷
//! sbbf-rs-safe: lookups **1.10 / 1.10 → 1.02–1.04** at 2 000 keys and **1.08–1.11 →
//! 1.02–1.04** at 10^5 (0.70–0.79 → 0.74–0.89 at 10^7), inserts **1.51–1.90 → 1.17–1.26** at
//! 10^5 and **1.44–1.46 → 0.96–1.15** at 10^7. Callgrind (the AVX2 kernels, `examples/icount.rs`)
//! reads `insert` 98 → 95, `might_contain` 66 → 65, the atomic filter's lookup 66 → 61 and
//! insert 89 → 80 (its kernel no longer copied to the stack for every call).
//!
//! # Batched lookups
//!
//! [`might_contain_batch`](BlockedBloomFilter::might_contain_batch) runs on
//! [`bloomlab_core::simd::pipeline`]: the key [`BATCH`] positions ahead is hashed and its
//! block prefetched while the current one is answered, so cache misses (and a keyed scheme's
//! slower hashing) overlap instead of being paid one after another. Answers are identical to
//! [`might_contain`](BlockedBloomFilter::might_contain) (tested). A table of at most
//! [`SINGLE_LOOP_UP_TO`] = 384 KiB (about 3·10^5 keys at 1 %) answers a batch key by key instead:
//! in cache the pipeline made batches 1.08–1.27× slower than single lookups (2-vCPU AMD EPYC VM,
//! Zen 4, 1 MiB L2 per core), and the single loop needs nothing from it (no branch, so consecutive
//! lookups overlap anyway); past about 400 KiB the pipeline wins, 0.83–0.88× at 10^6 keys. Under a
//! scheme that hashes eight keys in vector lanes ([`HashScheme::LANES`]: the keyed 64-bit SipHash
//! scheme) the batched lookups and inserts, the atomic filter's `insert_batch` and the parallel
//! build hash eight keys per call ([`bloomlab_core::simd::pipeline_chunks`]): keyed batched lookups
//! then take 0.44 / 0.44 / 0.17× the time of fastbloom's keyed lookups at 10^5 / 10^6 / 10^7, and a
//! keyed `insert_batch` build 16.2 / 20.7 / 21.7 ns/key against 22.2 / 36.9 / 86.4 one insert at a
//! time (`bloomlab_keyed`, *Batched hashing*).
//!
//! # Measured
//!
//! `cargo run --release -p bloomlab-blocked --example ab -- 2000 1e5 1e7`: the blocked filter
//! against sbbf-rs-safe at the same bits (1 % target, 9.92 bits/item, k = 6; sbbf-rs given
//! xxh3-64 of the key's 8 bytes), the two alternating every 16 384 operations (A B B A), the
//! median of ~500 per-pair ratios with its interquartile range — fine-grained so that it holds
//! on a busy machine. 2-vCPU Intel Xeon VM (AVX2), load average 4–6 from other builds; each
//! build run one after the other:
//!
//! | lookup ÷ sbbf-rs | n = 2 000 (L1) | 10^5 | 10^7 |
//! |---|---|---|---|
//! | second layout, kernel called per key | 1.68 [1.63–1.77] | 1.70 [1.70–1.70] | 2.01 [1.92–…] |
//! | second layout, kernel inline | 1.42 [1.42–1.43] | 1.43 [1.23–1.44] | 1.60 [1.31–…] |
//! | third layout (one XXH3-64), kernel inline | 1.21 [1.21–1.21] | 1.23 [1.23–1.24] | 1.25 [1.18–1.34] |
//! | insert ÷ sbbf-rs, third layout | 2.3–2.7 | 2.5 | 1.9–2.1 |
//! | the same, each lookup pass on a chunk of its own (load 1–2) | 1.05–1.27 | 1.05–1.29 | 0.98–1.01 |
//!
//! The last row is the example after a fix: in the rows above, the two passes of a pair that
//! ran back to back on one chunk found at 10^7 the blocks the first had brought into L2
//! (16 384 blocks are 1 MiB), which favoured sbbf-rs, always the middle two; each pass now
//! reads its own chunk. In cache the same binary reads ≈ 1.05 in some processes and ≈ 1.2
//! in others (and in one process both, in phases). The cause is the machine, not the code:
//! with `--absolute` the example also prints each filter's fastest whole pass, and at 10^5
//! it found two states — a fast one, blocked 4.13 ns and sbbf-rs 3.56 ns per lookup (ratio
//! 1.16, five processes of eight), and slow ones where both take 1.4–1.7× longer, 4.9–6.3 ns,
//! at ratios 0.99–1.05 (every process for some minutes after; no steal time is reported, so
//! most likely a physical core shared with another guest, which slows the split block's
//! shorter instruction stream more). So at full speed the single lookup is 1.16× sbbf-rs in
//! cache: about four more instructions per lookup (the lane row for `k < 8`, two shifts
//! for the bit where the split block takes one, `vzeroupper` after a 512-bit permute; the
//! split block's eight probes fill a vector exactly), which the 512-bit layout's free probe
//! positions cost. Passing `h` in a register instead of through memory measured the same
//! (4.17 ns).
//!
//! In an earlier committed run on the Intel Xeon VM (`cargo run --release -p bench-harness`,
//! `bench-harness ratio blocked/sbbf-rs`, load 1.3–1.6, with the AVX-512 kernels): 1.14 [1.04–1.45] at
//! 10^5, 1.13 [0.95–1.26] at 10^6 and 1.09 [0.96–1.18] at 10^7 — no measurable difference
//! at 10^6 and 10^7; this process was in the slower of the two states in which `ab.rs`
//! finds the same binary in cache (≈ 1.05 or ≈ 1.20, whichever CPU it runs on). The runs
//! before read 1.07 / 1.05 / 0.99 and 1.24 / 1.03 / 1.02, and the one before those, with the
//! second layout and a call per key, 2.02 / 1.81 / 1.99. Builds in that run (ns/key at
//! 10^7, 1 %): one insert at a time 38.3 against sbbf-rs's 17.8; `insert_batch` 12.7.
//! On a 2-vCPU AMD EPYC VM (Zen 4, 1 MiB L2 per core, 32 MiB L3; the run at
//! 7ea6eb8, load 1.1–1.4): 1.00 [0.87–1.05] / 1.08 [0.96–1.41] / 1.05 [0.86–1.26] at 10^5 /
//! 10^6 / 10^7, no measurable difference at any size; batched ÷ single lookups 1.07 [0.98–1.27]
//! (in cache a batch answers key by key) / 0.63 / 0.28, batched ÷ sbbf-rs 0.27 at 10^7;
//! builds at 10^7 one insert at a time 54.1 ns/key against sbbf-rs's 35.1, `insert_batch` 16.2.
//! The run at 00a74c4 (its `results/` committed at adf5680), on a VM of the same kind (Zen 4, family 25 model 17; the
//! AVX-512 kernels of *Fewer instructions per operation*; load 1.3–1.4): ≈ 1.01 [0.96–1.23] /
//! ≈ 1.04 [0.98–1.22] / ≈ 0.97 [0.85–1.23], batched ÷ sbbf-rs 0.28 at 10^7, builds at 10^7 37.4
//! ns/key against sbbf-rs's 30.6 and `insert_batch` 9.9. There `examples/block_kernels` reads
//! the AVX-512 kernels ÷ sbbf-rs-safe at 2 000 / 10^5 / 10^7 keys 1.05 / 1.03 / 1.05 for lookups
//! and 1.50 / 1.31 / 1.21 for inserts, and ÷ the AVX2 kernels 1.00 / 0.98 / 1.01 and 0.73 / 0.74 /
//! 0.63: Zen 4 runs 512-bit instructions on 256-bit units, and that costs the one-permute lookup
//! nothing against the two-permute AVX2 one (`results/notes/zen4.md`).
//!
//! So the single lookup is 1.05–1.27× sbbf-rs-safe's in cache on the Intel VM (it was
//! 1.7–2.0×; ≈ 1.00 on the AMD VM) and on a par out of cache; inserts were 1.4–2.9× its cost
//! (0.96–1.26× since *Fewer instructions per operation*; the probes' bits built across sixteen words
//! where the split block's eight fill one vector; see *Where the time goes*) — with the
//! five-instructions-per-two-probes kernel 1.37 / 1.44 / 1.75 at 10^7 in `examples/speed`
//! (three processes; 1.71 / 1.93 / 2.11 before it). Batched lookups
//! ([`might_contain_batch`](BlockedBloomFilter::might_contain_batch)) answer in 0.40–0.8× its
//! single-lookup time at 10^7 on the Intel VM, 0.27× on the AMD VM (the harness's
//! `blocked-batched / sbbf-rs`). At equal space the
//! blocked filter is the more accurate one: 1.0 % measured against sbbf-rs's 1.3 % at 9.92
//! bits/item (`results/summary.md`).
//!
//! `with_fpr`: 16–31 µs at every n from 10^3 to 10^8 for p from 1 % down to 10^-4 (one call
//! each, fresh process; the closed-form sizing, [`math::blocked_bits_per_item_exact`], is
//! nearly all of it; it was 16–31 ms with the Markov chain). The table is `calloc`'s zero
//! pages ([`simd::zeroed_lines`]): asked for with 64-byte alignment, the standard library
//! had cleared every byte itself, 0.54 ms at 10^6 keys and 5.5 ms at 10^7. In a process
//! that has already allocated and freed much, what the allocator does sets the cost: the
//! `speed` example (after its lookup passes) reads 22 / 81 / 97 µs at 2 000 / 10^6 / 10^7
//! keys with each table kept, and 17 / 50 / 645 µs with each dropped before the next call
//! (glibc then serves reused memory, which it must clear). On the Zen 5 VM a scratch program
//! with the same history (three 10^7-key filters built and dropped first) read 88–94 µs per
//! `with_fpr(10^7, ·)` with tables kept and 165–167 µs with each dropped, of which the sizing
//! is 15 µs; an anonymous `mmap` of the table's size took 1.5 µs at any size. Mapping tables
//! ourselves would keep `with_fpr` within 50 µs whatever the allocator did before, but the
//! memory would bypass the global allocator — the one a program's own accounting, and the
//! harness's counting allocator, see — so it was not done. Below p ≈ 3·10^-5 the sizing
//! needs double-double sums. They now cost 3.5 / 7 / 11 µs at k = 14 / 20 / 27 (were 7 /
//! 14 / 25: one weight per term cached per `k`, and every term's exponential computed side
//! by side instead of one long dependent chain after another), and Newton's method from a
//! fitted start needs 3–6 of them (the secant from a coarse f64 search needed 7–10 and the
//! search itself 15–85 µs). `cargo run --release -p bloomlab-blocked --example sizing`
//! (fastest of five calls) read 10–34 µs from 1.6·10^-5 to 5·10^-14 and 41–54 µs to
//! 1.6·10^-15 on that path (were 70–120 µs to 1.6·10^-8, 0.2–0.4 ms to 10^-12, 0.3–1.3 ms
//! below), the same bits/item and `k` at every target of the table; from 5·10^-14 down the
//! chain below now sizes it instead. Further down (p below about
//! 10^-15) even double-double cancels too far, and the occupancy chain sizes the filter (the
//! double-double sums have no correct digit left there: an earlier sizing refused 10^-20,
//! which 1130 bits/item reach, and answered 7.8·10^8 bits/item for 10^-60). That took 1.4–23
//! ms from 1.6·10^-16 to 1.6·10^-24: one chain per `k`, each run to the most keys per block
//! the classic density allows, and a guess at `k` fitted above 10^-15 that was off by up to
//! five probes below it, so the walk to the best `k` ran a chain per step. Now (i) the guesses
//! at the density and at `k` have fits of their own below 10^-15 (within 0.03 % and one
//! probe); (ii) one chain serves every `k` within two of the guess — after `m` throws the
//! distribution of set bits is the same whatever the number of throws per key, so each `k`
//! reads its term after every multiple of `k` throws; (iii) the chain runs only as far as the
//! Poisson mixture at the current density needs, and drops occupancies under 1e-40, adding
//! what it dropped and the mixture's cut-off tail to every comparison with `p`, so the filter
//! meets its target whatever was left out; (iv) a throw updates the window of live
//! occupancies in AVX-512 or AVX2 lanes (`simd::occupancy_step`, bit-identical to the
//! portable loop: no fused multiply-add), two throws per pass wherever no tracked `k` is due
//! in between (half the passes and stores, a quarter fewer loads, a sixth fewer
//! multiplications and additions per occupancy: 43–46 µs → 39 on average over the chain's
//! range, alternating processes). Under `valgrind
//! --tool=callgrind` the chain's throws had been 1.1 M of the 1.6 M instructions of one
//! sizing at 10^-20, the walk's f64 closed-form sums (useless there) 0.2 M; the terms' dot
//! products, one running sum each, waited on every addition (eight partial sums now). With
//! single throws the chain cost 40–49 µs whatever the target, the double-double Newton 10–20
//! µs per evaluation at k ≥ 27, so the sizing takes the chain from the start where the f64
//! terms exceed a result near `p` by more than 10^21 (from about 5·10^-14 down), one choice
//! per call: a walk that began on the sums and finished on the chain had paid for both (57–69
//! µs where the switch fell). Then three changes to the chain's own cost:
//! - the throw body had copied each chunk's old values into an array on the stack, from
//!   which the compiler rebuilt the shifted vectors with permutes and inserts; read straight
//!   from the slice, each shift is an unaligned load (the chain's range 33–34 µs → 31 on
//!   average, comparing processes in the same machine state);
//! - the 512-bit block's coefficients became a table built at compile time (a `const fn`;
//!   they had cost a division or two per occupancy and chain), and the first `(x/B)^k` is
//!   computed by squaring across all occupancies at once instead of one `powi` each
//!   (37–39 µs → 31, four alternating pairs of processes, the new throw body in both);
//! - below 10^-15 the walk takes the chain without summing the f64 closed form first, and
//!   the Poisson weights come by `Pois(i − 1)·λ/i` instead of an `exp` and a `ln` each
//!   (31–32 µs → 28, alternating processes).
//!
//! `examples/sizing`, fastest of five calls, eight processes, the machine in its faster
//! state (the double-double path at 5·10^-13 in 27–30 µs): **every target from 0.5 down to
//! 5·10^-25 within 42 µs** — 9–30 µs to 1.6·10^-13, 25–42 µs (28–29 on average) from
//! 5·10^-14 to 5·10^-25 — with the same bits/item and `k` as before at every target, and
//! 5·10^-25, refused before (Newton's method from the old guess stepped past 4096
//! bits/item), met at 3841.7 bits/item with k = 45. Below what 4096 bits/item reach (about
//! 3·10^-25 at k = 45) the target is refused in 25–26 µs (was 0.9–1.1 ms). The machine also
//! runs, for stretches of seconds to minutes and pinned to either vCPU alike, in a slower
//! state, everything about 40 % slower (that double-double path at 39–43 µs): there three
//! processes read 35–36 µs on average over the chain's range and 44–46 at most.
//!
//! # Threads, parallel builds and bytes in place
//!
//! - [`AtomicBlockedBloomFilter`]: the same bits, inserted through `&self` by relaxed
//!   `fetch_or`s, so threads fill one filter without a lock (the memory-ordering argument and
//!   the measurements are in its docs); converts to and from this filter bit-identically.
//! - [`BlockedBloomFilter::from_keys`] and [`insert_parallel`](BlockedBloomFilter::insert_parallel):
//!   a build on every core, bit-identical to inserting the keys one by one: each core hashes
//!   its share of the keys (eight at a time in AVX-512 lanes where it can) and hands each key
//!   to the core that owns its block.
//! - [`BlockedBloomFilterView`]: answers straight from the bytes [`to_bytes`](BlockedBloomFilter::to_bytes)
//!   wrote (any alignment), validated exactly as [`from_bytes`](BlockedBloomFilter::from_bytes)
//!   validates; [`BlockedFilterBytes`] keeps such bytes, validated once, for a cache.
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

use std::fmt;

mod atomic;
mod parallel;
mod view;

pub use atomic::AtomicBlockedBloomFilter;
pub use parallel::{PARALLEL_MAX_QUEUED, available_threads};
pub use view::{BlockedBloomFilterView, BlockedFilterBytes};

use bloomlab_core::Key;
use bloomlab_core::error::{DecodeError, Error, Result};
use bloomlab_core::format::{self, EnvelopeWriter, Reader, Variant};
use bloomlab_core::hash::{self, HashScheme, KeyHash, SchemeDescriptor, Xxh3Scheme, fastrange};
use bloomlab_core::math;
use bloomlab_core::meta::{FilterCore, Meta};
use bloomlab_core::simd::{self, LocalKernel, LocalProbe, PortableProbe};

/// Bits per block: one 64-byte cache line.
pub const BLOCK_BITS: u32 = 512;
/// Bytes per block.
pub const BLOCK_BYTES: usize = 64;
/// Multiplier of the in-block probe sequence: `⌊2^64/φ⌋` rounded to odd (Knuth, TAOCP vol. 3
/// §6.4), the 64-bit counterpart of RocksDB FastLocalBloom's `0x9e3779b9`. A format constant.
pub const PROBE_MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;
/// Prefetch distance of the batched operations: while key `i` is answered, the block of key
/// `i + BATCH` is being fetched. 32 measured best of 16/32/64 at 10^7 keys on the development
/// machine (AMD EPYC, 2 vCPU). Re-measured with the batched loop inside one AVX2 body (Intel
/// Xeon, 2 vCPU, load 4–6, three runs of `examples/speed.rs`): D = 8 / 16 / 32 / 64 gave
/// 0.90 / 0.87 / 0.72 / 0.73, 0.73 / 0.53 / 0.66 / 0.66 and 0.67 / 0.59 / 0.65 / 0.75 ×
/// sbbf-rs single lookups at 10^7 — 16 and 32 within each other's noise, so 32 stays.
pub const BATCH: usize = 32;

/// Tables up to this many bytes answer [`BlockedBloomFilter::might_contain_batch`] with the
/// single-lookup loop, without the prefetching pipeline (unless the scheme hashes in vector lanes,
/// [`HashScheme::LANES`], which pays at every size). In cache the pipeline only adds work: the
/// single lookup has no branch, so the out-of-order core already overlaps consecutive keys, and the
/// ring and prefetches cost about a tenth. Measured on a 2-vCPU AMD EPYC VM (Zen 4, 1 MiB L2 per
/// core; batched ÷ single lookups, 50 % members, medians of 11 interleaved rounds, two processes):
/// 1.13–1.27 at 10^5 keys (121 KiB), 1.11–1.13 at 2·10^5, 1.08–1.12 at 3·10^5 (363 KiB), 0.96–0.98
/// at 4·10^5 (484 KiB), 0.91–0.96 at 6·10^5, 0.83–0.88 at 10^6 and 0.52–0.74 from 2·10^6 to 5·10^6
/// keys.
pub const SINGLE_LOOP_UP_TO: usize = 384 << 10;

// One 512-bit block: eight words, aligned to a 64-byte cache line (`simd::Line`). Bit `j`
// of the block is bit `j & 63` of word `j >> 6`.
use bloomlab_core::simd::Line as Block;

const _: () = assert!(std::mem::size_of::<Block>() == BLOCK_BYTES);
const _: () = assert!(std::mem::align_of::<Block>() == BLOCK_BYTES);

/// The first layout's probes, and the per-block bit count.
trait BlockOps {
    fn contains(&self, h2: u64, k: u32) -> bool;
    fn add(&mut self, h2: u64, k: u32) -> bool;
    fn count_ones(&self) -> u32;
}

impl BlockOps for Block {
    /// All `k` probe bits of a key with stride half `h2` are set. Each probe reads one word of
    /// this (already loaded) cache line; no branches, no stores.
    #[inline(always)]
    fn contains(&self, h2: u64, k: u32) -> bool {
        let mut all = 1u64;
        for &mult in &PROBE_POWERS[..k as usize] {
            let bit = h2.wrapping_mul(mult) >> 55; // top 9 bits: 0..512
            all &= self.0[(bit >> 6) as usize] >> (bit & 63);
        }
        all & 1 != 0
    }

    /// Set the `k` probe bits; returns whether any was still zero.
    #[inline(always)]
    fn add(&mut self, h2: u64, k: u32) -> bool {
        let mut new = 0u64;
        for &mult in &PROBE_POWERS[..k as usize] {
            let bit = h2.wrapping_mul(mult) >> 55;
            let (w, mask) = ((bit >> 6) as usize, 1u64 << (bit & 63));
            new |= mask & !self.0[w];
            self.0[w] |= mask;
        }
        new != 0
    }

    fn count_ones(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }
}

// The first layout's probes out of line: kept apart from the second layout's inlined fast
// path, whose registers they would otherwise claim (and save and restore on every call).
#[inline(never)]
fn wide64_contains(block: &Block, h2: u64, k: u32) -> bool {
    block.contains(h2, k)
}

#[inline(never)]
fn wide64_add(block: &mut Block, h2: u64, k: u32) -> bool {
    block.add(h2, k)
}

/// Set the probes of source `src` (see `place_in`) in `block` for `layout`, with `kernel`
/// for the local-block layouts; `true` if some bit was new. The one insert step of single,
/// batched and parallel inserts.
#[inline(always)]
pub(crate) fn block_insert(
    layout: Layout,
    kernel: &LocalKernel,
    block: &mut Block,
    src: u64,
    k: u32,
) -> bool {
    match layout {
        Layout::Wide64 => wide64_add(block, src, k),
        _ => kernel.insert(&mut block.0, (src >> 32) as u32, k),
    }
}

/// How a key's block and probes are derived from its hash: a frozen part of the byte format,
/// recorded as the envelope version. New filters use [`Layout::OneHash`] (filters of more than
/// 2^32 blocks, 256 GiB, [`Layout::Local32`]); files of the earlier layouts load as
/// [`Layout::Wide64`] or [`Layout::Local32`] and keep it (an insert into them, a union, a
/// re-encoding all stay in that layout), so they answer exactly as when they were written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Layout {
    /// The first layout (envelope version 1): probe `i` is the top 9 bits of
    /// `h2 · PROBE_MULTIPLIER^i mod 2^64` (see [Probe positions](crate#probe-positions)).
    Wide64,
    /// The second layout (envelope version 2): probe `i` is the top 9 bits of
    /// `h · 0x9e37_79b9^i mod 2^32` with `h` the high 32 bits of `h2`
    /// ([`bloomlab_core::simd::local_insert`]; RocksDB's `FastLocalBloom` rule), eight
    /// probes per AVX2 vector; the block from `h1` by fastrange.
    Local32,
    /// The third layout (envelope version 3): one 64-bit hash `x` per key, the scheme's
    /// [`hash64`](HashScheme::hash64) (XXH3-64 for the default scheme); the block is
    /// `⌊(x >> 32) · blocks / 2^32⌋` and the in-block probes are the second layout's with
    /// `h = x mod 2^32` (RocksDB `FastLocalBloom`'s split of one 64-bit hash). For at most
    /// 2^32 blocks.
    #[default]
    OneHash,
}

impl Layout {
    /// The envelope version that records this layout.
    pub fn format_version(self) -> u16 {
        match self {
            Layout::Wide64 => format::FORMAT_VERSION,
            Layout::Local32 => format::BLOCKED_LOCAL32_VERSION,
            Layout::OneHash => format::BLOCKED_ONE_HASH_VERSION,
        }
    }

    /// The layout of a new filter of `blocks` blocks: [`Layout::OneHash`] up to and including
    /// the 2^32 blocks ([`ONE_HASH_MAX_BLOCKS`]) it can address, [`Layout::Local32`] beyond.
    /// A pure function of the count, so the switch is tested at 2^32 − 1, 2^32 and 2^32 + 1
    /// blocks without a 256 GiB table.
    pub fn for_blocks(blocks: u64) -> Layout {
        if Layout::OneHash.addresses(blocks) {
            Layout::OneHash
        } else {
            Layout::Local32
        }
    }

    /// Whether a table of `blocks` blocks can have this layout: [`Layout::OneHash`] addresses
    /// at most 2^32 blocks (its block index is a 32-bit fastrange), the earlier layouts any
    /// number. The one rule behind [`for_blocks`](Self::for_blocks),
    /// [`with_layout`](BlockedBloomFilter::with_layout) and the decoder's check.
    pub fn addresses(self, blocks: u64) -> bool {
        self != Layout::OneHash || blocks <= ONE_HASH_MAX_BLOCKS
    }

    /// The layout an envelope version records, if any.
    pub fn from_format_version(v: u16) -> Option<Layout> {
        match v {
            format::FORMAT_VERSION => Some(Layout::Wide64),
            format::BLOCKED_LOCAL32_VERSION => Some(Layout::Local32),
            format::BLOCKED_ONE_HASH_VERSION => Some(Layout::OneHash),
            _ => None,
        }
    }
}

/// Most blocks a [`Layout::OneHash`] filter can address: its block index is a 32-bit
/// fastrange of the hash's high half.
pub const ONE_HASH_MAX_BLOCKS: u64 = 1 << 32;

/// A key's hash under `layout`: the scheme's 64-bit output in `h1` for [`Layout::OneHash`]
/// (`h2 = 1`), its 128-bit output for the earlier layouts. Shared by the owned filter, the
/// atomic one and the view, so that all three place a key alike.
#[inline(always)]
pub(crate) fn hash_in<S: HashScheme, K: Key + ?Sized>(
    layout: Layout,
    scheme: &S,
    key: &K,
) -> KeyHash {
    match layout {
        Layout::OneHash => KeyHash::new(key.with_key_bytes(|b| scheme.hash64(b)), 0),
        Layout::Local32 | Layout::Wide64 => key.with_key_bytes(|b| scheme.hash(b)),
    }
}

/// [`hash_in`] for up to [`simd::CHUNK`] keys (`out` as long as `keys`), hashed in vector
/// lanes where the scheme can ([`HashScheme::LANES`]).
#[inline(always)]
pub(crate) fn hash_chunk_in<S: HashScheme, K: Key>(
    layout: Layout,
    scheme: &S,
    keys: &[K],
    out: &mut [KeyHash],
) {
    match layout {
        Layout::OneHash => hash::hash_chunk(
            keys,
            out,
            |b| KeyHash::new(scheme.hash64(b), 0),
            |w| scheme.hash64_words8(w).map(|x| KeyHash::new(x, 0)),
        ),
        Layout::Local32 | Layout::Wide64 => {
            hash::hash_chunk(keys, out, |b| scheme.hash(b), |w| scheme.hash_words8(w))
        }
    }
}

/// The block (among `n`) of a hash from [`hash_in`], and the in-block probe source: a `u64`
/// whose high 32 bits are the probes' `h` ([`Layout::Local32`], [`Layout::OneHash`]) or the
/// whole stride half ([`Layout::Wide64`]).
#[inline(always)]
pub(crate) fn place_in(layout: Layout, h: KeyHash, n: u64) -> (usize, u64) {
    match layout {
        // `hash_in` put the 64-bit hash in `h1`; its low half feeds the probes.
        Layout::OneHash => {
            let (b, src) = simd::one_hash_place(h.h1, n);
            (b as usize, src)
        }
        // `n` fits in usize, and fastrange's result is below it.
        Layout::Local32 | Layout::Wide64 => (fastrange(h.h1, n) as usize, h.h2),
    }
}

/// A [`Layout::OneHash`] hash's two halves: the high one picks the block (by fastrange, as
/// [`one_hash_block`]; [`Lines::fastrange`](bloomlab_core::simd::Lines::fastrange) finds it with
/// no bounds test), the low one feeds the probes. The single operations of the owned and the
/// atomic filter use it; `place_in` computes the same block index.
#[inline(always)]
pub(crate) fn one_hash_split(h: KeyHash) -> (u32, u32) {
    ((h.h1 >> 32) as u32, h.h1 as u32)
}

/// The block of a [`Layout::OneHash`] hash `x` among `n ≤ 2^32` blocks.
#[inline(always)]
fn one_hash_block(x: u64, n: u64) -> usize {
    // The result is below n ≤ 2^32: it fits in usize.
    simd::one_hash_place(x, n).0 as usize
}

/// `PROBE_POWERS[i] = PROBE_MULTIPLIER^i mod 2^64`: probe `i` of a key is the top 9 bits of
/// `h2 · PROBE_MULTIPLIER^i`, the same value as `i` steps of `h ← h · PROBE_MULTIPLIER` from
/// `h2`, but the `k` multiplications are independent (no serial dependency chain).
const PROBE_POWERS: [u64; math::MAX_HASHES as usize] = {
    let mut p = [1u64; math::MAX_HASHES as usize];
    let mut i = 1;
    while i < p.len() {
        p[i] = p[i - 1].wrapping_mul(PROBE_MULTIPLIER);
        i += 1;
    }
    p
};

/// A zeroed vector of `n` blocks, or [`Error::SizeOverflow`] if it cannot exist or the
/// allocator refuses (instead of aborting the process).
fn zeroed_blocks(n: u64) -> Result<simd::Lines> {
    let too_big = || Error::SizeOverflow(format!("{n} blocks of 64 bytes do not fit in memory"));
    let n_usize = usize::try_from(n).map_err(|_| too_big())?;
    if n.checked_mul(BLOCK_BYTES as u64)
        .is_none_or(|b| b > isize::MAX as u64)
    {
        return Err(too_big());
    }
    // A zeroed allocation: microseconds at any size (the OS zeroes pages on first touch).
    simd::zeroed_lines(n_usize)
        .ok_or_else(|| Error::SizeOverflow(format!("cannot allocate {n} blocks of 64 bytes")))
}

/// A blocked Bloom filter: `blocks` × 512 bits, `k` probes per key inside one block, generic
/// over the hash scheme.
///
/// `len()` counts calls to insert, repeats included; [`estimated_len`](Self::estimated_len)
/// estimates distinct keys from the fill instead.
#[derive(Clone)]
pub struct BlockedBloomFilter<S: HashScheme = Xxh3Scheme> {
    blocks: simd::Lines,
    k: u32,
    layout: Layout,
    /// The kernel of single operations, chosen for this CPU at construction (not part of
    /// the filter's value: equality, formats and serde ignore it).
    kernel: LocalKernel,
    /// Count, capacity, target and scheme ([`bloomlab_core::meta`]).
    meta: Meta<S>,
}

impl BlockedBloomFilter<Xxh3Scheme> {
    /// Size for `expected_items` at false-positive rate `fpr` with the blocked formula:
    /// bits/item and `k` from [`math::blocked_bits_per_item_exact`] (9.92 bits/item and k = 6
    /// at 1 %; 15.55 and 9 at 0.1 %; 7.43 and 5 at 3 %), rounded up to whole blocks.
    ///
    /// Errors: `n = 0`, `p` not in (0, 1) (NaN and infinities included), a size that does not
    /// fit in memory, or a `p` no 512-bit block can reach.
    pub fn with_fpr(expected_items: u64, fpr: f64) -> Result<Self> {
        Self::with_fpr_and_scheme(expected_items, fpr, Xxh3Scheme)
    }

    /// Size for `expected_items` at exactly `bits_per_item` (rounded up to whole blocks), with
    /// the `k` that minimises the blocked formula at that density
    /// ([`math::blocked_best_hashes`]): 5 at 8 bits/item, 7 at 10, 10 at 16.
    pub fn with_bits_per_item(expected_items: u64, bits_per_item: f64) -> Result<Self> {
        Self::with_bits_per_item_and_scheme(expected_items, bits_per_item, Xxh3Scheme)
    }

    /// Build with exactly `blocks` 512-bit blocks and `hashes` probes per key. The design
    /// capacity is taken as `m·ln 2 / k` (the classic optimum's load).
    pub fn with_blocks(blocks: u64, hashes: u32) -> Result<Self> {
        Self::with_blocks_and_scheme(blocks, hashes, Xxh3Scheme)
    }

    /// Decode the checked, versioned format written by [`to_bytes`](Self::to_bytes).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_bytes_with_scheme(bytes, Xxh3Scheme)
    }
}

fn check_hashes(k: u32) -> Result<(), DecodeError> {
    math::validate_hashes(k)
        .map(|_| ())
        .map_err(|e| DecodeError::field("k", e.to_string()))
}

/// The fewest inserts that could have set `ones` bits in one block with `k` probes each.
fn min_inserts(ones: u32, k: u32) -> u64 {
    u64::from(ones.div_ceil(k))
}

impl<S: HashScheme> BlockedBloomFilter<S> {
    /// [`with_fpr`](BlockedBloomFilter::with_fpr) with a chosen hash scheme.
    pub fn with_fpr_and_scheme(expected_items: u64, fpr: f64, scheme: S) -> Result<Self> {
        let n = math::validate_items(expected_items)?;
        math::validate_fpr(fpr)?;
        // A blocked filter never needs fewer bits than the classic one: refuse sizes that
        // overflow before searching for the blocked density.
        math::classic_bits(n, fpr)?;
        let (bits_per_item, k) = math::blocked_bits_per_item_exact(fpr, BLOCK_BITS)?;
        let mut f = Self::sized(n, bits_per_item, k, scheme)?;
        f.meta.set_target_fpr(Some(fpr));
        Ok(f)
    }

    /// [`with_bits_per_item`](BlockedBloomFilter::with_bits_per_item) with a chosen hash scheme.
    pub fn with_bits_per_item_and_scheme(
        expected_items: u64,
        bits_per_item: f64,
        scheme: S,
    ) -> Result<Self> {
        let n = math::validate_items(expected_items)?;
        math::bits_for_bits_per_item(n, bits_per_item)?;
        let k = math::blocked_best_hashes(bits_per_item, BLOCK_BITS);
        Self::sized(n, bits_per_item, k, scheme)
    }

    fn sized(n: u64, bits_per_item: f64, k: u32, scheme: S) -> Result<Self> {
        let bits = math::bits_for_bits_per_item(n, bits_per_item)?;
        let blocks = bits.div_ceil(u64::from(BLOCK_BITS));
        let k = math::validate_hashes(k)?;
        Ok(BlockedBloomFilter {
            blocks: zeroed_blocks(blocks)?,
            k,
            layout: Layout::for_blocks(blocks),
            kernel: LocalKernel::detect(k),
            meta: Meta::new(n, None, scheme),
        })
    }

    /// [`with_blocks`](BlockedBloomFilter::with_blocks) with a chosen hash scheme.
    pub fn with_blocks_and_scheme(blocks: u64, hashes: u32, scheme: S) -> Result<Self> {
        if blocks == 0 {
            return Err(Error::invalid("blocks", "must be at least 1"));
        }
        let k = math::validate_hashes(hashes)?;
        let bits = blocks
            .checked_mul(u64::from(BLOCK_BITS))
            .ok_or_else(|| Error::SizeOverflow(format!("{blocks} blocks of 512 bits")))?;
        Ok(BlockedBloomFilter {
            blocks: zeroed_blocks(blocks)?,
            k,
            layout: Layout::for_blocks(blocks),
            kernel: LocalKernel::detect(k),
            meta: Meta::new(math::classic_capacity(bits, k), None, scheme),
        })
    }

    /// The block of a hash from [`hash_key`](Self::hash_key), and the in-block probe source:
    /// a `u64` whose high 32 bits are the probes' `h` ([`Layout::Local32`] and
    /// [`Layout::OneHash`]) or the whole stride half ([`Layout::Wide64`]).
    #[inline(always)]
    fn place(&self, h: KeyHash) -> (usize, u64) {
        place_in(self.layout, h, self.blocks.len() as u64)
    }

    #[inline(always)]
    fn block_index(&self, h: KeyHash) -> usize {
        self.place(h).0
    }

    /// Insert a key. Returns `true` if the key was definitely new (at least one of its bits
    /// was still zero), `false` if it may have been present already.
    #[inline(always)]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        if self.layout == Layout::OneHash {
            // The layout of every new filter inline (the layout tests below fold away);
            // the earlier ones out of line, so their code stays out of the caller's loop.
            return self.insert_one(hash_in(Layout::OneHash, self.meta.scheme(), key));
        }
        self.insert_earlier_layout(self.hash_key(key))
    }

    /// [`insert_one`](Self::insert_one) out of line, for the earlier layouts: keeps their
    /// code out of the hot loop of new filters.
    #[inline(never)]
    fn insert_earlier_layout(&mut self, h: KeyHash) -> bool {
        self.insert_one(h)
    }

    /// Insert a key that was already hashed with this filter's scheme.
    #[inline]
    pub fn insert_hash(&mut self, h: KeyHash) -> bool {
        self.insert_one(h)
    }

    /// One insert, the kernel inlined into the caller
    /// ([`LocalKernel::insert`]: no call).
    #[inline(always)]
    fn insert_one(&mut self, h: KeyHash) -> bool {
        self.meta.record_insert();
        if self.layout == Layout::OneHash {
            let (line, probe) = one_hash_split(h);
            let block = self.blocks.fastrange_mut(line);
            return self.kernel.insert(&mut block.0, probe, self.k);
        }
        let (b, src) = self.place(h);
        block_insert(self.layout, &self.kernel, &mut self.blocks[b], src, self.k)
    }

    /// One lookup, the kernel inlined into the caller
    /// ([`LocalKernel::contains`]: no call).
    #[inline(always)]
    fn contains_one(&self, h: KeyHash) -> bool {
        if self.layout == Layout::OneHash {
            let (line, probe) = one_hash_split(h);
            return self
                .kernel
                .contains(&self.blocks.fastrange(line).0, probe, self.k);
        }
        let (b, src) = self.place(h);
        let block = &self.blocks[b];
        match self.layout {
            Layout::Wide64 => wide64_contains(block, src, self.k),
            _ => self.kernel.contains(&block.0, (src >> 32) as u32, self.k),
        }
    }

    /// Insert with kernel `probe`: block index, count, probes (inlined into the caller).
    #[inline(always)]
    fn insert_with<P: LocalProbe>(&mut self, probe: P, h: KeyHash) -> bool {
        let (b, src) = self.place(h);
        self.meta.record_insert();
        match self.layout {
            Layout::Wide64 => wide64_add(&mut self.blocks[b], src, self.k),
            _ => probe.insert(&mut self.blocks[b].0, (src >> 32) as u32, self.k),
        }
    }

    /// Lookup with kernel `probe` (inlined into the caller).
    #[inline(always)]
    fn contains_with<P: LocalProbe>(&self, probe: P, h: KeyHash) -> bool {
        let (b, src) = self.place(h);
        self.block_contains(probe, b, src)
    }

    /// The probes of source `src` (see `place`) in block `b` with kernel `probe` (inlined
    /// into the caller).
    #[inline(always)]
    fn block_contains<P: LocalProbe>(&self, probe: P, b: usize, src: u64) -> bool {
        let block = &self.blocks[b];
        match self.layout {
            Layout::Wide64 => wide64_contains(block, src, self.k),
            _ => probe.contains(&block.0, (src >> 32) as u32, self.k),
        }
    }

    /// [`insert`](Self::insert) on the portable path (no SIMD), whatever the CPU: the same
    /// block bits as the vector path, which the tests check on machines that have one.
    pub fn insert_portable<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        let h = self.hash_key(key);
        self.insert_with(PortableProbe, h)
    }

    /// [`might_contain`](Self::might_contain) on the portable path (no SIMD), whatever the
    /// CPU: the same answer as the vector path.
    pub fn might_contain_portable<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.contains_with(PortableProbe, self.hash_key(key))
    }

    /// The probe layout: [`Layout::OneHash`] for every filter built by this version (of at
    /// most 2^32 blocks), the recorded one for filters decoded from earlier files.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The same empty filter with the probe layout `layout`: [`Layout::Local32`] and
    /// [`Layout::Wide64`] write envelope-version-2 and -1 files, which readers built before
    /// the third and second layouts can load. Refused once a key is in (its bits were placed
    /// by the old layout), and [`Layout::OneHash`] for more than 2^32 blocks.
    pub fn with_layout(mut self, layout: Layout) -> Result<Self> {
        if self.meta.count() != 0 || self.count_ones() != 0 {
            return Err(Error::invalid(
                "layout",
                "can only be chosen while the filter is empty",
            ));
        }
        if !layout.addresses(self.blocks.len() as u64) {
            return Err(Error::invalid(
                "layout",
                format!(
                    "the third layout addresses at most 2^32 blocks; this filter has {}",
                    self.blocks.len()
                ),
            ));
        }
        self.layout = layout;
        Ok(self)
    }

    /// Insert many keys: the key [`BATCH`] positions ahead is hashed and its block prefetched
    /// while key `i` is inserted, so the cache misses overlap. Keys are inserted in order; the
    /// result is identical to inserting them one by one.
    pub fn insert_batch<K: Key>(&mut self, keys: &[K]) {
        if S::LANES {
            // Hashed eight at a time in vector lanes; the same keys inserted in the same order.
            simd::pipeline_chunks::<Self, K, KeyHash, BATCH>(
                self,
                keys,
                KeyHash::new(0, 0),
                |f, ks, hs| hash_chunk_in(f.layout, f.meta.scheme(), ks, hs),
                |f, h| simd::prefetch(&f.blocks[f.block_index(*h)]),
                |f, _, h| {
                    f.insert_one(h);
                },
            );
            return;
        }
        let mut ring = [KeyHash::new(0, 0); BATCH];
        for (r, key) in ring.iter_mut().zip(keys) {
            *r = self.hash_key(key);
            simd::prefetch(&self.blocks[self.block_index(*r)]);
        }
        for i in 0..keys.len() {
            let slot = i % BATCH;
            let h = ring[slot];
            if let Some(key) = keys.get(i + BATCH) {
                let ahead = self.hash_key(key);
                simd::prefetch(&self.blocks[self.block_index(ahead)]);
                ring[slot] = ahead;
            }
            self.insert_one(h);
        }
    }

    /// `false`: the key was definitely never inserted. `true`: it maybe was.
    #[inline(always)]
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        if self.layout == Layout::OneHash {
            // As in `insert`.
            return self.contains_one(hash_in(Layout::OneHash, self.meta.scheme(), key));
        }
        self.contains_earlier_layout(self.hash_key(key))
    }

    /// [`contains_one`](Self::contains_one) out of line, for the earlier layouts.
    #[inline(never)]
    fn contains_earlier_layout(&self, h: KeyHash) -> bool {
        self.contains_one(h)
    }

    /// Query with a hash computed by this filter's scheme.
    #[inline]
    pub fn might_contain_hash(&self, h: KeyHash) -> bool {
        self.contains_one(h)
    }

    /// Answer many keys at once: `out[i] = might_contain(keys[i])`. The key [`BATCH`]
    /// positions ahead is hashed and its block prefetched while key `i` is answered, so about
    /// [`BATCH`] memory accesses are in flight at any time instead of one or two. Errors
    /// (changing nothing) if `out` is not exactly as long as `keys`.
    ///
    /// A table of the current layout of at most [`SINGLE_LOOP_UP_TO`] bytes (in cache) is
    /// answered key by key instead, which is faster there, unless the scheme hashes in vector
    /// lanes ([`HashScheme::LANES`]); the answers are the same.
    pub fn might_contain_batch<K: Key>(&self, keys: &[K], out: &mut [bool]) -> Result<()> {
        // Earlier layouts answer single lookups out of line, so they keep the pipeline.
        if !S::LANES
            && self.layout == Layout::OneHash
            && self.blocks.len() * BLOCK_BYTES <= SINGLE_LOOP_UP_TO
        {
            check_out_len(keys.len(), out.len())?;
            for (o, key) in out.iter_mut().zip(keys) {
                *o = self.might_contain(key);
            }
            return Ok(());
        }
        self.might_contain_batch_at::<K, BATCH>(keys, out)
    }

    /// [`might_contain_batch`](Self::might_contain_batch) with prefetch distance `D` instead
    /// of [`BATCH`], for tuning on a given machine (`D = 1` prefetches only the next key).
    /// Answers are the same for every `D ≥ 1`; `D = 0` is an error.
    pub fn might_contain_batch_at<K: Key, const D: usize>(
        &self,
        keys: &[K],
        out: &mut [bool],
    ) -> Result<()> {
        check_out_len(keys.len(), out.len())?;
        if D == 0 {
            return Err(Error::invalid(
                "D",
                "the prefetch distance must be at least 1",
            ));
        }
        self.contains_batch_at::<K, D>(keys, out);
        Ok(())
    }

    /// The loop of [`might_contain_batch_at`](Self::might_contain_batch_at) (`out` as long as
    /// `keys`, `D ≥ 1`).
    fn contains_batch_at<K: Key, const D: usize>(&self, keys: &[K], out: &mut [bool]) {
        let f = self;
        // Everything the loop reads, in locals (registers), and the layout tested once: each
        // key's block index is computed once, D keys ahead, and travels with its probe bits.
        let (blocks, k, n) = (&f.blocks[..], f.k, f.blocks.len() as u64);
        // The filter's inline kernel (AVX-512 where the CPU has it), as single lookups use.
        let kernel = f.kernel;
        let hash = |key: &K| {
            let h = key.with_key_bytes(|b| f.meta.scheme().hash(b));
            (fastrange(h.h1, n) as usize, h.h2)
        };
        let prefetch = |&(b, _): &(usize, u64)| simd::prefetch(&blocks[b]);
        if S::LANES && D >= simd::CHUNK && D % simd::CHUNK == 0 {
            // The same loop with keys hashed eight at a time in vector lanes.
            let layout = f.layout;
            let hash = |_: &[bool], ks: &[K], out: &mut [(usize, u64)]| {
                let mut hs = [KeyHash::new(0, 0); simd::CHUNK];
                hash_chunk_in(layout, f.meta.scheme(), ks, &mut hs[..ks.len()]);
                for (o, h) in out.iter_mut().zip(hs) {
                    *o = match layout {
                        Layout::OneHash => (one_hash_block(h.h1, n), h.h1),
                        Layout::Local32 | Layout::Wide64 => (fastrange(h.h1, n) as usize, h.h2),
                    };
                }
            };
            let prefetch = |_: &[bool], h: &(usize, u64)| prefetch(h);
            let fill = (0, 0);
            match layout {
                Layout::OneHash => simd::pipeline_chunks::<[bool], K, _, D>(
                    out,
                    keys,
                    fill,
                    hash,
                    prefetch,
                    |out, i, (b, x)| out[i] = kernel.contains(&blocks[b].0, x as u32, k),
                ),
                Layout::Local32 => simd::pipeline_chunks::<[bool], K, _, D>(
                    out,
                    keys,
                    fill,
                    hash,
                    prefetch,
                    |out, i, (b, h2)| out[i] = kernel.contains(&blocks[b].0, (h2 >> 32) as u32, k),
                ),
                Layout::Wide64 => simd::pipeline_chunks::<[bool], K, _, D>(
                    out,
                    keys,
                    fill,
                    hash,
                    prefetch,
                    |out, i, (b, h2)| out[i] = wide64_contains(&blocks[b], h2, k),
                ),
            }
            return;
        }
        match f.layout {
            Layout::OneHash => {
                let hash = |key: &K| {
                    let x = key.with_key_bytes(|b| f.meta.scheme().hash64(b));
                    (one_hash_block(x, n), x)
                };
                simd::pipeline::<K, (usize, u64), D>(keys, hash, prefetch, |i, (b, x)| {
                    out[i] = kernel.contains(&blocks[b].0, x as u32, k)
                })
            }
            Layout::Local32 => {
                simd::pipeline::<K, (usize, u64), D>(keys, hash, prefetch, |i, (b, h2)| {
                    out[i] = kernel.contains(&blocks[b].0, (h2 >> 32) as u32, k)
                })
            }
            Layout::Wide64 => {
                simd::pipeline::<K, (usize, u64), D>(keys, hash, prefetch, |i, (b, h2)| {
                    out[i] = wide64_contains(&blocks[b], h2, k)
                })
            }
        }
    }

    /// [`might_contain_batch`](Self::might_contain_batch) for keys already hashed with this
    /// filter's scheme: prefetches the blocks of [`BATCH`] hashes ahead of the one it answers.
    pub fn might_contain_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) -> Result<()> {
        check_out_len(hashes.len(), out.len())?;
        for h in hashes.iter().take(BATCH) {
            simd::prefetch(&self.blocks[self.block_index(*h)]);
        }
        for (i, (o, h)) in out.iter_mut().zip(hashes).enumerate() {
            if let Some(ahead) = hashes.get(i + BATCH) {
                simd::prefetch(&self.blocks[self.block_index(*ahead)]);
            }
            *o = self.contains_one(*h);
        }
        Ok(())
    }

    /// The hash scheme.
    pub fn scheme(&self) -> &S {
        self.meta.scheme()
    }

    /// Hash a key with this filter's scheme.
    ///
    /// Under [`Layout::OneHash`] the key has one 64-bit hash, the scheme's
    /// [`hash64`](HashScheme::hash64), returned in `h1` (with `h2 = 1`); under the earlier
    /// layouts it is the scheme's 128-bit [`hash`](HashScheme::hash). Either way it is what
    /// [`might_contain_hash`](Self::might_contain_hash), [`insert_hash`](Self::insert_hash)
    /// and [`might_contain_hashes`](Self::might_contain_hashes) expect.
    #[inline(always)]
    pub fn hash_key<K: Key + ?Sized>(&self, key: &K) -> KeyHash {
        hash_in(self.layout, self.meta.scheme(), key)
    }

    /// Number of inserts, repeats included.
    pub fn len(&self) -> u64 {
        self.meta.count()
    }

    /// No inserts yet.
    pub fn is_empty(&self) -> bool {
        self.meta.count() == 0
    }

    /// Number of 512-bit blocks.
    pub fn blocks(&self) -> u64 {
        self.blocks.len() as u64
    }

    /// `m`, the number of bits (blocks × 512).
    pub fn bits(&self) -> u64 {
        self.blocks() * u64::from(BLOCK_BITS)
    }

    /// `k`, probes per key (all inside one block).
    pub fn hashes(&self) -> u32 {
        self.k
    }

    /// The eight words of block `i` (bit `j` of the block is bit `j & 63` of word `j >> 6`),
    /// or `None` past the last block.
    pub fn block_words(&self, i: u64) -> Option<&[u64; 8]> {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.blocks.get(i))
            .map(|b| &b.0)
    }

    /// The design capacity (the `n` the filter was sized for).
    pub fn capacity(&self) -> u64 {
        self.meta.capacity()
    }

    /// The target FPR, if the filter was sized from one.
    pub fn target_fpr(&self) -> Option<f64> {
        self.meta.target_fpr()
    }

    /// Inserts relative to design capacity: 1.0 at design load.
    pub fn load(&self) -> f64 {
        self.meta.count() as f64 / self.meta.capacity() as f64
    }

    /// More inserts than the design capacity: the FPR has climbed past the target.
    pub fn is_saturated(&self) -> bool {
        self.meta.count() > self.meta.capacity()
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u64 {
        self.blocks.iter().map(|b| u64::from(b.count_ones())).sum()
    }

    /// Fraction of bits set, `X/m`.
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.bits() as f64
    }

    /// FPR the blocked formula predicts from the insert count and the density `m/n`
    /// ([`math::blocked_fpr_exact`]: Poisson mixture over block loads, exact occupancy inside
    /// a block). 0 when empty.
    pub fn expected_fpr(&self) -> f64 {
        if self.meta.count() == 0 {
            return 0.0;
        }
        math::blocked_fpr_exact(
            self.bits() as f64 / self.meta.count() as f64,
            self.k,
            BLOCK_BITS,
        )
    }

    /// FPR of the filter as it stands: a non-member picks a uniformly random block `b` and
    /// is positive when all `k` of its probes hit set bits, so the FPR is the mean over blocks
    /// of `(ones_b / 512)^k`.
    pub fn current_fpr(&self) -> f64 {
        let total: f64 = self
            .blocks
            .iter()
            .map(|b| math::fpr_from_fill(f64::from(b.count_ones()) / f64::from(BLOCK_BITS), self.k))
            .sum();
        total / self.blocks.len() as f64
    }

    /// Distinct keys estimated from the fill, block by block: the sum over blocks of
    /// `−(512/k)·ln(1 − ones_b/512)` (Swamidass & Baldi 2007, applied to each block, which is
    /// a small classic filter of its own keys). Infinite if some block has every bit set.
    pub fn estimated_len(&self) -> f64 {
        self.blocks
            .iter()
            .map(|b| {
                math::estimate_cardinality(u64::from(BLOCK_BITS), self.k, u64::from(b.count_ones()))
            })
            .sum()
    }

    /// Remove every key.
    pub fn clear(&mut self) {
        self.blocks.fill(Block::default());
        self.meta.reset_count();
    }

    fn check_compatible(&self, other: &Self) -> Result<()> {
        if self.layout != other.layout {
            return Err(Error::Incompatible(format!(
                "probe layouts {:?} vs {:?}",
                self.layout, other.layout
            )));
        }
        if self.blocks.len() != other.blocks.len() || self.k != other.k {
            return Err(Error::Incompatible(format!(
                "(blocks, k) = ({}, {}) vs ({}, {})",
                self.blocks.len(),
                self.k,
                other.blocks.len(),
                other.k
            )));
        }
        let (a, b) = (
            self.meta.scheme().descriptor(),
            other.meta.scheme().descriptor(),
        );
        if a != b {
            return Err(Error::Incompatible(format!("hash scheme {a} vs {b}")));
        }
        Ok(())
    }

    /// Bitwise OR with a filter of the same number of blocks, `k` and hash scheme (anything
    /// else is refused: it would probe other positions). The result is bit-for-bit the filter
    /// built from both key sets; the count becomes the sum of both counts.
    pub fn union(&mut self, other: &Self) -> Result<()> {
        self.check_compatible(other)?;
        for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
            for (x, y) in a.0.iter_mut().zip(&b.0) {
                *x |= y;
            }
        }
        let count = self.meta.count().saturating_add(other.meta.count());
        self.meta = self.meta.clone().with_count(count);
        Ok(())
    }

    /// Encode in the checked, versioned envelope ([`bloomlab_core::format`], variant
    /// `Blocked`) with this payload (little-endian): `blocks: u64 | k: u32 | reserved: u32 = 0 |
    /// count: u64 | capacity: u64 | target_fpr: f64 (0 = none) | blocks × 64 bytes`, each
    /// block as its eight words in order, each word little-endian. The hash scheme is recorded
    /// and checked on read.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = EnvelopeWriter::with_version(
            Variant::Blocked,
            self.meta.scheme().descriptor(),
            self.layout.format_version(),
            40 + self.blocks.len() * BLOCK_BYTES,
        );
        w.u64(self.blocks())
            .u32(self.k)
            .u32(0)
            .u64(self.meta.count())
            .u64(self.meta.capacity())
            .f64(format::encode_optional_fpr(self.meta.target_fpr()));
        for b in &self.blocks {
            for word in b.0 {
                w.u64(word);
            }
        }
        w.finish()
    }

    /// Decode [`to_bytes`](Self::to_bytes) output, probing with `scheme`. Refuses bytes written
    /// with another scheme or key, damaged bytes (checksum), and any invalid field: `k` out of
    /// range, zero blocks or capacity, a bad target FPR, a wrong length, or a count too small
    /// to have set the bits that are set (each block with `x` ones needs `⌈x/k⌉` inserts).
    pub fn from_bytes_with_scheme(bytes: &[u8], scheme: S) -> Result<Self> {
        let e = Encoded::open(bytes, &scheme)?;
        // The data is already in memory, so this allocation is no larger than the input.
        let mut blocks = zeroed_blocks(e.num_blocks())?;
        for (b, chunk) in blocks.iter_mut().zip(e.data.chunks_exact(BLOCK_BYTES)) {
            b.0 = block_from_le_bytes(chunk);
        }
        Ok(Self::from_parts(
            blocks,
            e.k,
            e.count,
            e.capacity,
            e.target_fpr,
            e.layout,
            scheme,
        )?)
    }

    fn from_parts(
        blocks: simd::Lines,
        k: u32,
        count: u64,
        capacity: u64,
        target_fpr: Option<f64>,
        layout: Layout,
        scheme: S,
    ) -> Result<Self, DecodeError> {
        validate_parts(
            k,
            blocks.iter().map(|b| b.count_ones()),
            count,
            capacity,
            target_fpr,
        )?;
        if !layout.addresses(blocks.len() as u64) {
            return Err(DecodeError::field(
                "blocks",
                format!(
                    "{} blocks: the third layout addresses at most 2^32",
                    blocks.len()
                ),
            ));
        }
        Ok(BlockedBloomFilter {
            blocks,
            k,
            layout,
            kernel: LocalKernel::detect(k),
            meta: Meta::new(capacity, target_fpr, scheme).with_count(count),
        })
    }
}

/// The eight words of one encoded block (64 bytes, each word little-endian), from a slice of
/// any alignment.
#[inline(always)]
fn block_from_le_bytes(chunk: &[u8]) -> [u64; 8] {
    std::array::from_fn(|i| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&chunk[8 * i..8 * i + 8]);
        u64::from_le_bytes(a)
    })
}

/// The fields of the checked format ([`BlockedBloomFilter::to_bytes`]) and its block data,
/// borrowed: what the owning decoder and [`BlockedBloomFilterView`] both read, checked by the
/// one set of rules ([`Encoded::open`], then [`validate_parts`]).
struct Encoded<'a> {
    layout: Layout,
    k: u32,
    count: u64,
    capacity: u64,
    target_fpr: Option<f64>,
    /// `blocks × 64` bytes, not aligned.
    data: &'a [u8],
}

impl<'a> Encoded<'a> {
    /// Open the envelope (magic, versions, scheme, checksum) and read the payload's fields:
    /// `k` in range, at least one block, a zero reserved word, a valid target FPR and exactly
    /// `blocks × 64` bytes of data. The remaining rules ([`validate_parts`]) need the blocks.
    fn open<S: HashScheme>(bytes: &'a [u8], scheme: &S) -> Result<Self> {
        let (version, payload) = format::open_expecting_versions(
            bytes,
            Variant::Blocked,
            scheme.descriptor(),
            &[
                format::FORMAT_VERSION,
                format::BLOCKED_LOCAL32_VERSION,
                format::BLOCKED_ONE_HASH_VERSION,
            ],
        )?;
        let layout =
            Layout::from_format_version(version).ok_or(DecodeError::UnsupportedVersion(version))?;
        let mut r = Reader::new(payload);
        let num_blocks = r.u64()?;
        let k = r.u32()?;
        if r.u32()? != 0 {
            return Err(DecodeError::field("reserved", "must be zero").into());
        }
        let count = r.u64()?;
        let capacity = r.u64()?;
        let target_fpr = format::decode_optional_fpr(r.f64()?)?;
        check_hashes(k)?;
        if num_blocks == 0 {
            return Err(DecodeError::field("blocks", "must be at least 1").into());
        }
        let len = num_blocks
            .checked_mul(BLOCK_BYTES as u64)
            .ok_or_else(|| DecodeError::field("blocks", format!("{num_blocks} is too many")))?;
        let data = r.take_u64_len(len)?;
        r.finish()?;
        if !layout.addresses(num_blocks) {
            return Err(DecodeError::field(
                "blocks",
                format!("{num_blocks} blocks: the third layout addresses at most 2^32"),
            )
            .into());
        }
        Ok(Encoded {
            layout,
            k,
            count,
            capacity,
            target_fpr,
            data,
        })
    }

    fn num_blocks(&self) -> u64 {
        (self.data.len() / BLOCK_BYTES) as u64
    }

    /// Each encoded block's number of set bits.
    fn block_ones(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.data
            .chunks_exact(BLOCK_BYTES)
            .map(|c| block_from_le_bytes(c).iter().map(|w| w.count_ones()).sum())
    }
}

/// The rules every filter, decoded or deserialized, must meet: `k` in range, at least one
/// block, a capacity of at least 1, a valid target FPR, and a count large enough to have set
/// the bits that are set (each block with `x` ones needs `⌈x/k⌉` inserts).
fn validate_parts(
    k: u32,
    block_ones: impl ExactSizeIterator<Item = u32>,
    count: u64,
    capacity: u64,
    target_fpr: Option<f64>,
) -> Result<(), DecodeError> {
    check_hashes(k)?;
    if block_ones.len() == 0 {
        return Err(DecodeError::field("blocks", "must be at least 1"));
    }
    if capacity == 0 {
        return Err(DecodeError::field("capacity", "must be at least 1"));
    }
    format::validate_optional_fpr(target_fpr)?;
    let needed: u64 = block_ones.map(|ones| min_inserts(ones, k)).sum();
    if needed > count {
        return Err(DecodeError::field(
            "count",
            format!(
                "{count} inserts of {k} probes cannot set the bits of these blocks (at least {needed} needed)"
            ),
        ));
    }
    Ok(())
}

fn check_out_len(keys: usize, out: usize) -> Result<()> {
    if keys == out {
        Ok(())
    } else {
        Err(Error::invalid(
            "out",
            format!("has {out} slots for {keys} keys; lengths must match"),
        ))
    }
}

impl<S: HashScheme> FilterCore for BlockedBloomFilter<S> {
    // Inlined into a caller that knows the key's length (8 bytes of a `u64`), the hash
    // specialises to it and no call is left per key, as with the inherent methods.
    #[inline(always)]
    fn insert_key(&mut self, key: &[u8]) -> Result<()> {
        self.insert(key);
        Ok(())
    }

    #[inline(always)]
    fn contains_key(&self, key: &[u8]) -> bool {
        self.might_contain(key)
    }

    fn heap_bytes(&self) -> usize {
        self.blocks.len() * BLOCK_BYTES
    }

    fn table_bits(&self) -> u64 {
        self.bits()
    }

    fn hashes(&self) -> u32 {
        self.k
    }

    fn formula_fpr(&self) -> f64 {
        BlockedBloomFilter::expected_fpr(self)
    }

    fn same_table(&self, other: &Self) -> bool {
        self.k == other.k && self.layout == other.layout && self.blocks == other.blocks
    }

    fn debug_shape(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("blocks", &self.blocks.len()).field("k", &self.k);
    }

    fn debug_state(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("layout", &self.layout)
            .field("fill_ratio", &self.fill_ratio());
    }
}

bloomlab_core::filter_glue!(BlockedBloomFilter, Blocked, extend);

#[cfg(feature = "serde")]
mod serde_impl {
    //! serde support: the same fields as the byte format (blocks flattened to words), validated
    //! the same way on the way in. Only schemes constructible with `Default` (unkeyed)
    //! deserialize; a keyed filter must be loaded from bytes with its secret.
    use super::*;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Repr {
        blocks: u64,
        k: u32,
        count: u64,
        capacity: u64,
        target_fpr: Option<f64>,
        /// Absent in the first layout's serializations, which predate the field.
        #[serde(default = "first_layout")]
        layout: Layout,
        scheme: SchemeDescriptor,
        words: Vec<u64>,
    }

    fn first_layout() -> Layout {
        Layout::Wide64
    }

    impl<S: HashScheme> Serialize for BlockedBloomFilter<S> {
        fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
            Repr {
                blocks: self.blocks(),
                k: self.k,
                count: self.meta.count(),
                capacity: self.meta.capacity(),
                target_fpr: self.meta.target_fpr(),
                layout: self.layout,
                scheme: self.meta.scheme().descriptor(),
                words: self.blocks.iter().flat_map(|b| b.0).collect(),
            }
            .serialize(s)
        }
    }

    impl<'de, S: HashScheme + Default> Deserialize<'de> for BlockedBloomFilter<S> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            use serde::de::Error as _;
            let r = Repr::deserialize(d)?;
            let scheme =
                bloomlab_core::meta::default_scheme_for::<S>(r.scheme).map_err(D::Error::custom)?;
            if r.words.len() as u64 != r.blocks.saturating_mul(8) || r.words.is_empty() {
                return Err(D::Error::custom(DecodeError::field(
                    "words",
                    format!("{} words for {} blocks", r.words.len(), r.blocks),
                )));
            }
            let blocks = r
                .words
                .chunks_exact(8)
                .map(|c| {
                    let mut b = Block::default();
                    b.0.copy_from_slice(c);
                    b
                })
                .collect();
            BlockedBloomFilter::from_parts(
                blocks,
                r.k,
                r.count,
                r.capacity,
                r.target_fpr,
                r.layout,
                scheme,
            )
            .map_err(D::Error::custom)
        }
    }
}

#[cfg(test)]
mod tests {
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
    fn blocks_are_cache_line_aligned() {
        let f = BlockedBloomFilter::with_fpr(10_000, 0.01).unwrap();
        for b in &f.blocks {
            assert_eq!((b as *const Block as usize) % 64, 0);
        }
    }

    #[test]
    fn probes_follow_the_documented_sequence() {
        // Frozen: the positions of every serialized filter depend on it. Sequential definition:
        // h_0 = h2, h_{i+1} = h_i · 0x9e37_79b9_7f4a_7c15, bit_i = h_i >> 55.
        let h2 = 0x0123_4567_89ab_cdefu64 | 1;
        let mut want = Block::default();
        let mut h = h2;
        for _ in 0..9 {
            let bit = h >> 55;
            want.0[(bit / 64) as usize] |= 1 << (bit % 64);
            h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        let mut got = Block::default();
        assert!(got.add(h2, 9));
        assert_eq!(got, want);
        assert!(got.contains(h2, 9) && !got.add(h2, 9));
        assert!(!Block::default().contains(h2, 1));
        assert_eq!(PROBE_POWERS[0], 1);
        assert_eq!(PROBE_POWERS[1], PROBE_MULTIPLIER);
        // The first probe is the top 9 bits of h2 itself: bit 256 = word 4, bit 0.
        let mut one = Block::default();
        one.add(1 << 63 | 1, 1);
        assert_eq!(one.0[4], 1);
        // A block with one bit missing answers no.
        let mut partial = want;
        let first = h2 >> 55;
        partial.0[(first / 64) as usize] &= !(1 << (first % 64));
        assert!(!partial.contains(h2, 9));
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
}
