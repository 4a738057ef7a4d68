//! `cargo xtask abi-header [--check]`: writes (or checks) the C header
//! `pld-runtime-abi/include/pld_runtime_abi.h` rendered by
//! `pld_runtime_abi::c_header()`, and compiles the independent C check against it.

use std::path::PathBuf;

use crate::shell::{relative, workspace_root, Cmd};
use crate::{Failure, Result};

/// The command that regenerates the header, for messages.
pub const FIX: &str = "run `cargo xtask abi-header`";

/// Where the checked-in header lives.
pub fn header_path() -> PathBuf {
    workspace_root().join("pld-runtime-abi").join(pld_runtime_abi::C_HEADER_PATH)
}

/// `Ok` if the checked-in header equals `c_header()`, else why not.
pub fn check() -> std::result::Result<(), String> {
    let path = header_path();
    match std::fs::read_to_string(&path) {
        Ok(text) if text == pld_runtime_abi::c_header() => Ok(()),
        Ok(_) => Err(format!("{} is stale", relative(&path))),
        Err(e) => Err(format!("cannot read {}: {e}", relative(&path))),
    }
}

/// Compiles, links and runs `pld-runtime-abi/tests/abi_check.c` (hand-written
/// `_Static_assert`s on every value, size and offset) against the header.
pub fn check_c() -> std::result::Result<(), String> {
    if !Cmd::new("gcc", &["--version"]).succeeds_quietly() {
        return Err("gcc is not on PATH".to_owned());
    }
    let out_dir = workspace_root().join("target").join("xtask");
    std::fs::create_dir_all(&out_dir).map_err(|e| format!("cannot create {}: {e}", relative(&out_dir)))?;
    let exe = out_dir.join("abi_check");
    let exe = exe.to_string_lossy();
    // gcc runs from the workspace root, so the inputs can be spelled relative to it.
    Cmd::new(
        "gcc",
        &[
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-I",
            "pld-runtime-abi/include",
            "pld-runtime-abi/tests/abi_check.c",
            "-o",
            &exe,
        ],
    )
    .run()?;
    Cmd::new(&exe, &[]).run()
}

/// The `abi-header` subcommand.
pub fn run(args: &[String]) -> Result {
    match args {
        [] => {
            let path = header_path();
            if check().is_ok() {
                println!("{} is up to date", relative(&path));
                return Ok(());
            }
            std::fs::write(&path, pld_runtime_abi::c_header())
                .map_err(|e| Failure::Failed(format!("cannot write {}: {e}", relative(&path))))?;
            println!("wrote {}", relative(&path));
            Ok(())
        }
        [flag] if flag == "--check" => check().map_err(|e| Failure::Failed(format!("{e}: {FIX}"))),
        [other, ..] => Err(Failure::Usage(format!("`abi-header` takes only `--check`, got `{other}`"))),
    }
}
