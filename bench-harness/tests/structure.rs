//! The harness's modules import one another in one direction only: workload → adapters →
//! driver → results → report / plots / recommend. This reads `src/` and fails on any cycle
//! between top-level modules (`crate::a` in module `b` and `crate::b` in module `a`, or a
//! longer loop), naming the loop.

#![forbid(unsafe_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level module → the top-level modules it names through `crate::` (comments skipped).
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("src readable") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().and_then(|x| x.to_str()) != Some("rs") {
                continue;
            }
            let rel = p.strip_prefix(&src).expect("under src");
            let first = rel.components().next().expect("non-empty").as_os_str();
            let module = first.to_string_lossy().trim_end_matches(".rs").to_string();
            if module == "lib" || module == "main" {
                continue;
            }
            let text = std::fs::read_to_string(&p).expect("readable");
            let deps = graph.entry(module.clone()).or_default();
            for line in text.lines() {
                let code = line.trim_start();
                if code.starts_with("//") {
                    continue;
                }
                for (i, _) in code.match_indices("crate::") {
                    let rest = &code[i + "crate::".len()..];
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !name.is_empty() && name != module {
                        deps.insert(name);
                    }
                }
                // `use crate::{a, b}` groups.
                if let Some(i) = code.find("crate::{") {
                    let group = &code[i + "crate::{".len()..];
                    let group = group.split('}').next().unwrap_or("");
                    for part in group.split(',') {
                        let name: String = part
                            .trim()
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        if !name.is_empty() && name != module {
                            deps.insert(name);
                        }
                    }
                }
            }
        }
    }
    graph
}

/// A cycle through `start`, if any (depth-first search).
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        g: &BTreeMap<String, BTreeSet<String>>,
        node: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            let mut c = path[i..].to_vec();
            c.push(node.to_string());
            return Some(c);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for d in g.get(node).into_iter().flatten() {
            if let Some(c) = visit(g, d, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for n in graph.keys() {
        if let Some(c) = visit(graph, n, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn modules_import_in_one_direction() {
    let g = imports();
    assert!(g.len() > 10, "read the modules: {:?}", g.keys());
    assert!(
        g["driver"].contains("adapters"),
        "the reader sees imports: {g:?}"
    );
    if let Some(c) = cycle(&g) {
        panic!("modules import in a circle: {}", c.join(" → "));
    }
}

#[test]
fn the_cycle_finder_finds_a_planted_cycle() {
    let mut g = imports();
    g.get_mut("stats")
        .expect("stats module")
        .insert("report".into());
    let c = cycle(&g).expect("stats → report → … → stats is a cycle");
    assert!(c.contains(&"stats".to_string()), "{c:?}");
}
