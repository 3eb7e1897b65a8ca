//! Writes one filter file per interoperability case into a directory, with `cases.txt` naming
//! each file and our answers on its probes, for the real jars to read back
//! (`crates/jvm/interop/run.sh check`): they must find every member, answer every probe as we
//! do, and write the same bytes back.
//!
//! Usage: `cargo run -p bloomlab-jvm --example jvm_interop_write -- DIR`

#[path = "../tests/common/keys.rs"]
mod keys;

use std::fmt::Write as _;
use std::path::PathBuf;

use bloomlab_jvm::{SparkBloomFilter, SparkVersion};
use keys::Model;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: jvm_interop_write DIR")?,
    );
    std::fs::create_dir_all(&dir)?;
    let mut cases = String::from("# file lib key n answers\n");
    let mut write =
        |file: String, lib: &str, kind: &str, n: u64, f: &Model| -> std::io::Result<()> {
            std::fs::write(dir.join(&file), f.to_bytes())?;
            writeln!(cases, "{file} {lib} {kind} {n} {}", f.answers(kind, n)).expect("a String");
            Ok(())
        };
    let mut count = 0;
    for (lib, kind, n, fpp) in keys::grid() {
        let mut f = Model::create(lib, n, fpp);
        for i in 0..n {
            f.put(&keys::member(kind, i));
        }
        write(format!("{lib}-{kind}-{n}.bin"), lib, kind, n, &f)?;
        count += 1;
    }
    // V2 with a seed of its own (Spark's create(version, n, numBits, seed)), which the
    // known answers (all from create(n, fpp), seed 0) do not cover.
    for kind in ["i64", "str", "bytes"] {
        let n = 5_000;
        let mut f = Model::Spark(SparkBloomFilter::create_with_bits(
            n,
            40_000,
            SparkVersion::V2,
            -1_234_567,
        )?);
        for i in 0..n {
            f.put(&keys::member(kind, i));
        }
        write(
            format!("spark-v2-seeded-{kind}-{n}.bin"),
            "spark-v2",
            kind,
            n,
            &f,
        )?;
        count += 1;
    }
    std::fs::write(dir.join("cases.txt"), cases)?;
    println!("wrote {count} filters to {}", dir.display());
    Ok(())
}
