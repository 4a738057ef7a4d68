//! The README's main-job command, run by CI so it cannot rot.
//!
//! `README.md` keeps exactly two set-up commands in fenced `sh` blocks: the first runs the
//! main job, the second the test suite (`cargo xtask ci`, which would recurse, so it is only
//! checked for presence). This module extracts the first block and runs each of its
//! command lines from the workspace root. The MPI build's own two lines ([`MPI_BUILD`],
//! [`MPI_RUN`]) must appear in README as written; the `mpi` step of `cargo xtask ci` runs them.

use crate::shell::{workspace_root, Cmd};

/// README's build of the MPI engine: its own target directory, so the default build's
/// `target/release/pld` (README's main command) never replaces it.
pub const MPI_BUILD: &str = "cargo build --release -p pld-cli --features mpi --target-dir target/mpi";

/// README's `mpirun` line, on the binary [`MPI_BUILD`] writes.
pub const MPI_RUN: &str =
    "mpirun -n 4 target/mpi/release/pld run examples/quickstart_allreduce.py --engine mpi --ranks 4";

/// README documents the MPI build as [`MPI_BUILD`] and [`MPI_RUN`].
pub fn check_mpi() -> Result<(), String> {
    let path = workspace_root().join("README.md");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read README.md: {e}"))?;
    for line in [MPI_BUILD, MPI_RUN] {
        if !text.lines().any(|l| l.trim() == line) {
            return Err(format!("README.md has no line `{line}` (the MPI build's documented path)"));
        }
    }
    Ok(())
}

/// The fenced `sh` blocks of `README.md`, in order, as their command lines.
pub fn sh_blocks(readme: &str) -> Vec<Vec<String>> {
    let mut blocks = Vec::new();
    let mut current: Option<Vec<String>> = None;
    for line in readme.lines() {
        let t = line.trim();
        match &mut current {
            None if t == "```sh" => current = Some(Vec::new()),
            None => {}
            Some(_) if t == "```" => blocks.extend(current.take()),
            Some(cmds) if !t.is_empty() && !t.starts_with('#') => cmds.push(t.to_string()),
            Some(_) => {}
        }
    }
    blocks
}

/// Runs the README's main-job block; checks the test block is `cargo xtask ci`.
pub fn check() -> Result<(), String> {
    let path = workspace_root().join("README.md");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read README.md: {e}"))?;
    let blocks = sh_blocks(&text);
    let [main, tests, ..] = blocks.as_slice() else {
        return Err(format!(
            "README.md must have two ```sh blocks (main job, tests); found {}",
            blocks.len()
        ));
    };
    if tests.iter().all(|c| c != "cargo xtask ci") {
        return Err("README.md's second ```sh block must be `cargo xtask ci`".into());
    }
    if main.is_empty() {
        return Err("README.md's first ```sh block (the main job) is empty".into());
    }
    for cmd in main {
        println!("$ {cmd}");
        Cmd::new("sh", &["-c", cmd]).run()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn readme_documents_the_mpi_build_in_its_own_target_directory() {
        assert_eq!(super::check_mpi(), Ok(()));
        assert!(
            super::MPI_RUN.contains("target/mpi/release/pld")
                && super::MPI_BUILD.ends_with("--target-dir target/mpi")
        );
    }

    #[test]
    fn extracts_blocks_without_comments() {
        let md = "x\n```sh\n# c\ncargo run -p a\n```\ny\n```sh\ncargo xtask ci\n```\n";
        assert_eq!(
            super::sh_blocks(md),
            vec![vec!["cargo run -p a".to_string()], vec!["cargo xtask ci".to_string()]]
        );
    }
}
