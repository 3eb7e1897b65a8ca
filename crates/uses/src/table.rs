//! The Markdown tables the uses' reports print.

/// A Markdown table: a header row, its rule, and one row per item of `rows`, each cell as given.
pub(crate) fn markdown_table<const N: usize>(
    header: [&str; N],
    rows: impl IntoIterator<Item = [String; N]>,
) -> String {
    let mut s = format!("| {} |\n|{}\n", header.join(" | "), "---|".repeat(N));
    for row in rows {
        s.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::markdown_table;

    #[test]
    fn a_table_is_its_header_its_rule_and_a_line_per_row() {
        let rows = [["1".to_string(), "2".into()], ["x".into(), "y z".into()]];
        assert_eq!(
            markdown_table(["a", "b"], rows),
            "| a | b |\n|---|---|\n| 1 | 2 |\n| x | y z |\n"
        );
        assert_eq!(markdown_table(["only"], []), "| only |\n|---|\n");
    }
}
