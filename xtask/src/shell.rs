//! Running external commands from the workspace root, and printing them the way a
//! user would type them.

use std::fmt;
use std::path::Path;
use std::process::{Command, Stdio};

/// The workspace root: the parent of this crate's manifest directory.
pub fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives one level below the workspace root")
}

/// A command as data: printable exactly as it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cmd {
    env: Vec<(String, String)>,
    program: String,
    args: Vec<String>,
}

impl Cmd {
    /// `program args...`, run from the workspace root.
    pub fn new(program: &str, args: &[&str]) -> Self {
        Self {
            env: Vec::new(),
            program: program.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        }
    }

    /// `cargo args...`, using the cargo that runs xtask when there is one.
    pub fn cargo(args: &[&str]) -> Self {
        Self::new("cargo", args)
    }

    /// Appends arguments.
    pub fn args<S: AsRef<str>>(mut self, args: &[S]) -> Self {
        self.args.extend(args.iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets an environment variable for the command.
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    fn command(&self) -> Command {
        let program = match self.program.as_str() {
            "cargo" => std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()),
            other => other.into(),
        };
        let mut cmd = Command::new(program);
        cmd.args(&self.args).envs(self.env.iter().map(|(k, v)| (k, v))).current_dir(workspace_root());
        cmd
    }

    /// Runs the command with inherited stdio; an error names the command.
    pub fn run(&self) -> Result<(), String> {
        println!("$ {self}");
        let status = self.command().status().map_err(|e| format!("could not start `{self}`: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("`{self}` failed ({status})"))
        }
    }

    /// Runs the command silently and reports whether it succeeded.
    pub fn succeeds_quietly(&self) -> bool {
        self.command()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    }
}

impl fmt::Display for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, v) in &self.env {
            write!(f, "{k}={} ", quote(v))?;
        }
        f.write_str(&self.program)?;
        for arg in &self.args {
            write!(f, " {}", quote(arg))?;
        }
        Ok(())
    }
}

/// Shell-quotes `s` when it contains anything but plain word characters.
fn quote(s: &str) -> String {
    let plain = !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:@+,".contains(&b));
    if plain {
        s.to_owned()
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// `path` relative to the workspace root, with `/` separators, for messages.
pub fn relative(path: &Path) -> String {
    path.strip_prefix(workspace_root())
        .unwrap_or(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    //! Command rendering and root discovery.
    use super::*;

    #[test]
    fn commands_print_as_typed() {
        let cmd = Cmd::cargo(&["doc", "--workspace", "--no-deps"]).env("RUSTDOCFLAGS", "-D warnings");
        assert_eq!(cmd.to_string(), "RUSTDOCFLAGS=\"-D warnings\" cargo doc --workspace --no-deps");
        let cmd = Cmd::cargo(&["fmt", "--all"]).args(&["--", "--check"]);
        assert_eq!(cmd.to_string(), "cargo fmt --all -- --check");
        assert_eq!(quote(""), "\"\"");
    }

    #[test]
    fn root_is_the_workspace() {
        let root = workspace_root();
        assert!(root.join("Cargo.toml").is_file());
        assert!(root.join("xtask").join("Cargo.toml").is_file());
        assert_eq!(relative(&root.join("xtask").join("src")), "xtask/src");
    }
}
