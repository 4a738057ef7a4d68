//! Golden files: compare text with a checked-in expectation, rewrite it under `PLD_BLESS=1`.
//!
//! Line endings are normalised to `\n` before comparing. On mismatch the panic message shows
//! a line diff and the command that rewrites the file (`cargo xtask bless`).

use std::path::Path;

/// Whether tests should rewrite their expectations (`PLD_BLESS=1` or `UPDATE_EXPECT=1`).
pub fn blessing() -> bool {
    ["PLD_BLESS", "UPDATE_EXPECT"].iter().any(|k| std::env::var(k).is_ok_and(|v| v == "1"))
}

/// Asserts that the file at `path` holds `actual` (rewrites it when blessing).
///
/// # Panics
/// When the file differs or is missing and blessing is off.
#[track_caller]
pub fn check_file(path: impl AsRef<Path>, actual: &str) {
    let path = path.as_ref();
    let actual = actual.replace("\r\n", "\n");
    if blessing() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).expect("create golden dir");
        }
        std::fs::write(path, &actual).expect("write golden file");
        return;
    }
    let expected = std::fs::read_to_string(path).unwrap_or_default().replace("\r\n", "\n");
    if expected != actual {
        panic!(
            "golden file {} differs (run `cargo xtask bless` to accept):\n{}",
            path.display(),
            line_diff(&expected, &actual)
        );
    }
}

/// A minimal line diff: lines only in `expected` start with `-`, only in `actual` with `+`.
pub fn line_diff(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    // Longest common subsequence table; goldens are small.
    let mut lcs = vec![vec![0usize; a.len() + 1]; e.len() + 1];
    for i in (0..e.len()).rev() {
        for j in (0..a.len()).rev() {
            lcs[i][j] = if e[i] == a[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < e.len() || j < a.len() {
        if i < e.len() && j < a.len() && e[i] == a[j] {
            i += 1;
            j += 1;
        } else if j < a.len() && (i == e.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str(&format!("+{}\n", a[j]));
            j += 1;
        } else {
            out.push_str(&format!("-{}\n", e[i]));
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn diff_marks_changed_lines() {
        assert_eq!(super::line_diff("a\nb\nc\n", "a\nx\nc\n"), "+x\n-b\n");
    }
}
