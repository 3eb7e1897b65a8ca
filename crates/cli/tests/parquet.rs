//! `bloomlab contains` and `inspect` on Parquet files written by other engines (DuckDB,
//! pyarrow and Spark, by tests/data/make_parquet.py): row group by row group, our answers
//! equal DuckDB's own bloom probe (and, for Spark's file, parquet-mr's), arrow-rs's
//! `Sbbf::check`, and every value a row group holds answers 1.

use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::basic::Type as PhysicalType;
use parquet::file::properties::ReaderProperties;
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::{ReadOptionsBuilder, SerializedFileReader};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn run(args: &[&str]) -> Result<String, bloomlab_cli::CliError> {
    let mut out = Vec::new();
    let mut all = vec!["bloomlab"];
    all.extend_from_slice(args);
    bloomlab_cli::run(all, &mut out)?;
    Ok(String::from_utf8(out).unwrap())
}

/// `contains FILE --column COLUMN --keys KEYS`.
fn contains_column(
    file: &Path,
    column: &str,
    keys: &Path,
) -> Result<String, bloomlab_cli::CliError> {
    run(&[
        "contains",
        file.to_str().unwrap(),
        "--column",
        column,
        "--keys",
        keys.to_str().unwrap(),
    ])
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// arrow-rs's answer for every key (lines of the key file) and row group.
fn arrow_rs_answers(file: &Path, column: &str, keys: &Path) -> Vec<String> {
    let bloom_filters = ReaderProperties::builder()
        .set_read_bloom_filter(true)
        .build();
    let options = ReadOptionsBuilder::new()
        .with_reader_properties(bloom_filters)
        .build();
    let reader =
        SerializedFileReader::new_with_options(File::open(file).unwrap(), options).unwrap();
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let col = (0..schema.num_columns())
        .find(|&i| schema.column(i).path().string() == column)
        .unwrap();
    let t = schema.column(col).physical_type();
    let groups: Vec<_> = (0..reader.num_row_groups())
        .map(|i| reader.get_row_group(i).unwrap())
        .collect();
    let text = std::fs::read(keys).unwrap();
    let body = text.strip_suffix(b"\n").unwrap_or(&text);
    body.split(|&b| b == b'\n')
        .map(|line| {
            let s = std::str::from_utf8(line).unwrap_or("");
            groups
                .iter()
                .map(|g| match g.get_column_bloom_filter(col) {
                    None => "-",
                    Some(f) => {
                        let hit = match t {
                            PhysicalType::BYTE_ARRAY => f.check(line),
                            PhysicalType::INT32 => f.check(&s.parse::<i32>().unwrap()),
                            PhysicalType::INT64 => f.check(&s.parse::<i64>().unwrap()),
                            PhysicalType::FLOAT => f.check(&s.parse::<f32>().unwrap()),
                            PhysicalType::DOUBLE => f.check(&s.parse::<f64>().unwrap()),
                            PhysicalType::FIXED_LEN_BYTE_ARRAY => {
                                let b: Vec<u8> = (0..s.len())
                                    .step_by(2)
                                    .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                                    .collect();
                                f.check(&b[..])
                            }
                            other => panic!("no keys for {other}"),
                        };
                        if hit { "1" } else { "0" }
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

const CASES: &[(&str, &str)] = &[
    ("duckdb", "id"),
    ("duckdb", "name"),
    ("duckdb", "small"),
    ("duckdb", "d"),
    ("duckdb", "uniq"),
    ("pyarrow", "id"),
    ("pyarrow", "name"),
    ("pyarrow", "i32"),
    ("pyarrow", "fixed"),
    ("pyarrow", "flt"),
    ("pyarrow", "nofilter"),
    ("spark", "id"),
    ("spark", "name"),
    ("spark", "small"),
    ("spark", "nofilter"),
];

#[test]
fn answers_equal_the_engines_own_probe_row_group_by_row_group() {
    let (mut ones, mut zeros, mut dashes) = (0, 0, 0);
    for &(engine, column) in CASES {
        let file = data(&format!("{engine}.parquet"));
        let keys = data(&format!("{engine}.{column}.keys"));
        let ours: Vec<String> = contains_column(&file, column, &keys)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        let engine_answers = lines(&data(&format!("{engine}.{column}.expected")));
        assert_eq!(
            ours, engine_answers,
            "{engine}.{column}: the engines' probe"
        );
        let arrow = arrow_rs_answers(&file, column, &keys);
        assert_eq!(ours, arrow, "{engine}.{column}: arrow-rs");
        let members = lines(&data(&format!("{engine}.{column}.members")));
        assert_eq!(members.len(), ours.len());
        for (i, (a, m)) in ours.iter().zip(&members).enumerate() {
            for (rg, (a, m)) in a.split(' ').zip(m.split(' ')).enumerate() {
                assert!(
                    m == "0" || a != "0",
                    "{engine}.{column}: key {} is in row group {rg} but answered 0",
                    i + 1
                );
            }
        }
        for l in &ours {
            ones += l.matches('1').count();
            zeros += l.matches('0').count();
            dashes += l.matches('-').count();
        }
    }
    // Every kind of answer occurs, so the comparison above tested each.
    assert!(
        ones > 100 && zeros > 100 && dashes > 100,
        "{ones} {zeros} {dashes}"
    );
}

#[test]
fn inspect_lists_every_bloom_filter() {
    let out = run(&["inspect", data("pyarrow.parquet").to_str().unwrap()]).unwrap();
    let mut l = out.lines();
    let first = l.next().unwrap();
    assert!(
        first.starts_with("parquet file: 4 row groups, 6 columns, 20 bloom filters"),
        "{first}"
    );
    assert!(first.contains("parquet-cpp-arrow"), "{first}");
    assert_eq!(
        l.next().unwrap(),
        "row_group\tcolumn\ttype\tbytes\tfill\test_fpr\test_distinct"
    );
    let rows: Vec<Vec<&str>> = l.map(|r| r.split('\t').collect()).collect();
    assert_eq!(rows.len(), 24);
    let no_filter: Vec<_> = rows.iter().filter(|r| r[3] == "-").collect();
    assert_eq!(no_filter.len(), 4);
    assert!(no_filter.iter().all(|r| r[1] == "nofilter"));
    for r in rows.iter().filter(|r| r[3] != "-") {
        let bytes: u64 = r[3].parse().unwrap();
        assert!(bytes.is_power_of_two() && bytes >= 32, "{r:?}");
        let fill: f64 = r[4].parse().unwrap();
        assert!(fill > 0.0 && fill < 1.0, "{r:?}");
        // 300 distinct values per row group in the id column, estimated from the fill.
        if r[1] == "id" {
            let est: f64 = r[6].parse().unwrap();
            assert!((est - 300.0).abs() < 60.0, "{r:?}");
        }
    }
    let duck = run(&["inspect", data("duckdb.parquet").to_str().unwrap()]).unwrap();
    assert!(
        duck.starts_with("parquet file: 3 row groups, 5 columns, 12 bloom filters"),
        "{duck}"
    );
    assert!(duck.contains("DuckDB"), "{duck}");
    // Spark (parquet-mr) writes no bloom filter for a fully dictionary-encoded chunk: `small`
    // has one only in the last, short row group.
    let spark = run(&["inspect", data("spark.parquet").to_str().unwrap()]).unwrap();
    assert!(
        spark.starts_with("parquet file: 7 row groups, 4 columns, 15 bloom filters"),
        "{spark}"
    );
    assert!(spark.contains("parquet-mr"), "{spark}");
    let small: Vec<&str> = spark.lines().filter(|l| l.contains("\tsmall\t")).collect();
    assert_eq!(small.len(), 7);
    assert!(
        small[..6].iter().all(|l| l.ends_with("-\t-\t-\t-")),
        "{spark}"
    );
    assert!(!small[6].contains('-'), "{spark}");
}

#[test]
fn parquet_option_errors() {
    let file = data("pyarrow.parquet");
    let f = file.to_str().unwrap();
    let keys = data("pyarrow.id.keys");
    let k = keys.to_str().unwrap();
    let err = |args: &[&str]| run(args).unwrap_err().to_string();
    let e = err(&["contains", f, "--keys", k]);
    assert!(e.contains("--column"), "{e}");
    let e = err(&["contains", f, "--column", "nope", "--keys", k]);
    assert!(
        e.contains("no column \"nope\"") && e.contains("nofilter"),
        "{e}"
    );
    let e = err(&[
        "contains",
        f,
        "--column",
        "id",
        "--key-type",
        "i64",
        "--keys",
        k,
    ]);
    assert!(e.contains("--key-type does not apply"), "{e}");
    // A string key against an INT64 column: which line, and why.
    let bad = data("pyarrow.name.keys");
    let e = contains_column(&file, "id", &bad).unwrap_err().to_string();
    assert!(e.contains("pyarrow.name.keys: line 1: "), "{e}");
    // Hex of the wrong width for the 4-byte column.
    let dir = tempfile::tempdir().unwrap();
    let hex = dir.path().join("hex");
    std::fs::write(&hex, "0011223344\n").unwrap();
    let e = contains_column(&file, "fixed", &hex)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 1") && e.contains("4-byte"), "{e}");
}

/// A file whose bloom filter sections are damaged, or whose footer is, gets an error naming
/// the row group and column (or the footer), never a panic or a wrong answer.
#[test]
fn damaged_parquet_files_are_refused() {
    let original = std::fs::read(data("pyarrow.parquet")).unwrap();
    let reader = SerializedFileReader::new(File::open(data("pyarrow.parquet")).unwrap()).unwrap();
    let chunk = reader.metadata().row_group(1).column(0).clone();
    let offset = chunk.bloom_filter_offset().unwrap() as usize;
    let dir = tempfile::tempdir().unwrap();
    let keys = data("pyarrow.id.keys");

    // The header's first byte (the numBytes field) destroyed.
    let mut bytes = original.clone();
    bytes[offset] = 0xff;
    let p = dir.path().join("bad-header.parquet");
    std::fs::write(&p, &bytes).unwrap();
    let e = contains_column(&p, "id", &keys).unwrap_err().to_string();
    assert!(e.contains("row group 1, column id: bloom filter"), "{e}");
    assert!(run(&["inspect", p.to_str().unwrap()]).is_err());
    // Other columns still answer.
    contains_column(&p, "i32", &data("pyarrow.i32.keys")).unwrap();

    // The footer cut short (PAR1 still at both ends).
    let mut cut = original[..original.len() - 200].to_vec();
    cut.extend_from_slice(&original[original.len() - 8..]);
    let p = dir.path().join("cut.parquet");
    std::fs::write(&p, &cut).unwrap();
    let e = run(&["inspect", p.to_str().unwrap()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a valid Parquet file"), "{e}");
}
