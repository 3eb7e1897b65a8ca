//! The laboratory: measurement programs behind the workspace's design choices, kept apart
//! from the library crates so that those carry only what their users need.
//!
//! Every program is an example of this crate (`cargo run --release -p bloomlab-lab --example
//! NAME`); each opens with what it measures and how to read it. They answer questions the
//! harness (`bench-harness`) cannot: kernels side by side in one loop, instruction counts
//! under callgrind, loop variants of one filter, the sizing's own cost, and the constants
//! chosen from a sweep (the cuckoo filter's kick limit, the Ribbon filter's slot overhead).
//! Figures they print belong in `results/` or `docs/design/`, never in source comments.
//!
//! | example | question |
//! |---|---|
//! | `blocked_ab` | blocked lookups against `sbbf-rs-safe`, A B B A in one process |
//! | `many_filters_ab` | many small filters out of cache: blocked, `sbbf-rs-safe` and the bare kernel, interleaved |
//! | `many_filters_handles` | many small filters out of cache: the handle's size, the kernel, the tables' allocator and a call per lookup, in the lab's and the harness's loop shapes |
//! | `blocked_icount` | instructions per blocked and classic operation (run under callgrind) |
//! | `lookup_icount` | instructions per lookup of blocked, sbbf and sbbf-rs in the harness's loop shape (runs callgrind itself) |
//! | `kernel_asm` | one lookup of each design as its own function, for reading and for `llvm-mca` on aarch64 |
//! | `blocked_kernels` | the AVX2 and AVX-512 block kernels side by side |
//! | `blocked_shared_lookups` | a blocked lookup of an owned line against one of a shared line |
//! | `blocked_insert_pairs` | the AVX-512 insert building only the probe pairs `k` needs |
//! | `blocked_parallel_halves` | the parallel build against a split that moves no key |
//! | `blocked_sizing` | how long `with_fpr`'s exact sizing takes, target by target |
//! | `classic_loops`, `keyed_loops` | the classic filter's lookup loops against fastbloom |
//! | `classic_icount` | instructions per classic lookup against fastbloom |
//! | `sip_lanes` | SipHash-2-4 one key at a time against eight in vector lanes |
//! | `route_kernels` | the parallel builds' routing lanes against the portable routing |
//! | `cuckoo_fill` | the load at the first failed insert, for the kick limit |
//! | `expandable_grow` | the expandable filter's bits/item, FPR bound and measured FPR along a growth |
//! | `expandable_speed` | the grown expandable filter's lookups and inserts against a cuckoo filter |
//! | `expandable_lookup_prof` | grown expandable lookups against cuckoo at one size, or alone for `perf` |
//! | `ribbon_width` | the fraction of seeds that band, by width and overhead |
//! | `ribbon_lookup_cost`, `ribbon_single_vs_fuse` | Ribbon lookups against xorf's binary fuse |
//! | `ribbon_column_kernels` | the Ribbon query's AVX-512 and AVX2 column kernels |
#![forbid(unsafe_code)]
