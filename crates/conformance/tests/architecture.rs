//! ARCHITECTURE.md's table of crates held to the workspace as `cargo metadata` reports it: every
//! workspace crate is in the table and every crate in the table exists; each imports exactly the
//! workspace crates its row names (normal dependencies; dev-dependencies are free), and only
//! from floors below its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use bloomlab_core::format::Variant;

/// The variants' crates (`crates/<name>`, named as the variant is), what a row's "every
/// filter crate" stands for.
fn filter_crates() -> impl Iterator<Item = &'static str> {
    Variant::ALL.into_iter().map(Variant::name)
}

/// One row of the table: the crates it names, their floor, the workspace crates they import.
struct Row {
    floor: u32,
    crates: Vec<String>,
    imports: BTreeSet<String>,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(Path::parent)
        .expect("the workspace root is two levels up")
}

/// `bloomlab-classic` from `classic` and from `-classic` (a row's continuation names); the two
/// crates whose names do not follow the pattern as they are.
fn crate_name(word: &str) -> String {
    let w = word.trim_start_matches('-');
    match w {
        "bloomlab" | "bench-harness" => w.to_string(),
        w if w.starts_with("bloomlab-") => w.to_string(),
        w => format!("bloomlab-{w}"),
    }
}

/// `text` without its parenthesised parts.
fn without_remarks(text: &str) -> String {
    let mut depth = 0u32;
    text.chars()
        .filter(|&c| {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                _ => return depth == 0,
            }
            false
        })
        .collect()
}

/// The rows of the table under "## Crates and their floors".
fn rows() -> Vec<Row> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let section = text
        .split("## Crates and their floors")
        .nth(1)
        .expect("the section")
        .split("\n## ")
        .next()
        .unwrap();
    let known: BTreeSet<&str> = [
        "bloomlab", "simd", "core", "parallel", "jvm", "keyed", "uses", "cli",
    ]
    .into_iter()
    .chain(filter_crates())
    .collect();
    section
        .lines()
        .filter(|l| l.starts_with("| ") && l.as_bytes().get(2).is_some_and(u8::is_ascii_digit))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let floor = cells[1].parse().expect("a floor number");
            // The crate names are the backticked words of the second cell before any
            // parenthesis (which gives the directory).
            let names = cells[2].split('(').next().unwrap();
            let crates = names
                .split('`')
                .skip(1)
                .step_by(2)
                .map(crate_name)
                .collect();
            // The imports: the last cell up to the first `;` (what follows names outside
            // crates) without its parenthesised remarks, every known crate word, and the
            // eight for "every filter crate".
            let cell = without_remarks(cells[cells.len() - 2].split(';').next().unwrap());
            let mut imports: BTreeSet<String> = cell
                .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
                .filter(|w| known.contains(w))
                .map(crate_name)
                .collect();
            if cell.contains("every filter crate") {
                imports.extend(filter_crates().map(crate_name));
            }
            Row {
                floor,
                crates,
                imports,
            }
        })
        .collect()
}

/// Every workspace crate and the workspace crates it depends on (normal dependencies).
fn workspace() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let names: BTreeSet<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap().to_string())
                .filter(|d| names.contains(d))
                .collect();
            (p["name"].as_str().unwrap().to_string(), deps)
        })
        .collect()
}

#[test]
fn the_table_of_crates_is_the_workspace() {
    let rows = rows();
    let ws = workspace();
    let floor: BTreeMap<&str, u32> = rows
        .iter()
        .flat_map(|r| r.crates.iter().map(move |c| (c.as_str(), r.floor)))
        .collect();
    let listed: BTreeSet<&str> = floor.keys().copied().collect();
    let actual: BTreeSet<&str> = ws.keys().map(String::as_str).collect();
    assert_eq!(listed, actual, "the table's crates against the workspace's");
    for row in &rows {
        for c in &row.crates {
            let deps = &ws[c];
            assert_eq!(
                deps.iter().map(String::as_str).collect::<BTreeSet<_>>(),
                row.imports
                    .iter()
                    .map(String::as_str)
                    .collect::<BTreeSet<_>>(),
                "what {c} imports (its row, against its manifest)"
            );
            for d in deps {
                assert!(
                    floor[d.as_str()] < row.floor,
                    "{c} (floor {}) imports {d} (floor {})",
                    row.floor,
                    floor[d.as_str()]
                );
            }
        }
    }
}

#[test]
fn the_parser_reads_a_row_as_written() {
    // The row parser on the rows it must tell apart: several crates in one row, a directory in
    // parentheses, "every filter crate" and names after a semicolon.
    let rows = rows();
    let find = |name: &str| {
        rows.iter()
            .find(|r| r.crates.iter().any(|c| c == name))
            .unwrap_or_else(|| panic!("{name} in the table"))
    };
    assert_eq!(
        without_remarks("core (and simd through it), jvm"),
        "core , jvm"
    );
    let classic = find("bloomlab-classic");
    assert!(classic.crates.len() >= 2 && classic.floor == 3);
    assert_eq!(
        classic.imports,
        BTreeSet::from(["core", "simd", "parallel"].map(crate_name))
    );
    let cli = find("bloomlab-cli");
    assert!(cli.imports.contains("bloomlab-expandable"));
    assert!(!cli.imports.iter().any(|c| c.contains("parquet")));
    assert_eq!(find("bloomlab").crates, ["bloomlab"]);
    assert_eq!(find("bloomlab-simd").floor, 0);
}
