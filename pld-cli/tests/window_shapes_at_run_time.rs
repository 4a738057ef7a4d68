//! Issue #29 item 3, the run-time half: a window (signal) argument whose shape is written in
//! other symbols than its parameter's (`[2*(NR-1), NR]` for `[M, 1]`), or whose parameter's
//! dims come from `--bind`, is judged at the call when the run knows the values (exit 3, naming
//! the argument, the parameter, both shapes with their values, at the call); a mesh allreduce
//! driven by a ring-shaped signal stops at the allreduce. Each next to its correct twin.

mod cli_support;

use cli_support::{edited, pld, scratch, text};
use std::path::{Path, PathBuf};
use std::process::Output;

const RING_MESH: &str = "pld-cli/tests/corpus/incore_ring_min_mesh_prod.py";
const MESH_SIGNAL: &str = "signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],";

/// The mesh program with its kernel's and orchestrator's signal parameters declared `[M, 1]`
/// (`M` another dynamic dimension) and the host's signal window `window` over `alloc`.
fn mesh_in_m(dir: &Path, alloc: &str, window: &str) -> PathBuf {
    edited(
        dir,
        RING_MESH,
        &[
            ("NR = pl.dynamic(\"NR\")\n", "NR = pl.dynamic(\"NR\")\nM = pl.dynamic(\"M\")\n"),
            (MESH_SIGNAL, "signal: pl.InOut[pld.DistributedTensor[[M, 1], pl.INT32]],"),
            (MESH_SIGNAL, "signal: pl.InOut[pld.DistributedTensor[[M, 1], pl.INT32]],"),
            ("signal_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)", alloc),
            ("signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)\n            self.mesh_orch", window),
        ],
    )
}

fn run(file: &Path, dir: &Path, extra: &[&str]) -> Output {
    let mut args =
        vec!["run", file.to_str().unwrap(), "--entry", "mesh_prod_host", "--out", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    pld(&args)
}

#[test]
fn a_ring_shaped_signal_for_a_parameter_in_another_symbol_is_stopped_at_the_call() {
    let dir = scratch("winshape", "ring-for-m");
    let bad = mesh_in_m(
        &dir,
        "signal_buf = pld.alloc_window_buffer([2 * (pld.world_size() - 1), pld.world_size()], dtype=pl.INT32)",
        "signal = pld.window(signal_buf, [2 * (NR - 1), NR], dtype=pl.INT32)\n            self.mesh_orch",
    );
    // Two symbols: check cannot say they never agree.
    let out = pld(&["check", bad.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = run(&bad, &dir, &["--ranks", "3"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "argument 5 (`signal`) of `mesh_orch` is a window of shape [2 * (NR - 1), NR] = [4, 3], but parameter \
             `signal` is declared [M, 1] = [3, 1]"
        ),
        "{err}"
    );
    assert!(err.contains("in this run M = 3, NR = 3"), "{err}");
    assert!(err.contains("parameter `signal` of `mesh_orch` is declared"), "{err}");
    // At the call of mesh_orch.
    let line =
        std::fs::read_to_string(&bad).unwrap().lines().position(|l| l.contains("self.mesh_orch(")).unwrap()
            + 1;
    assert!(err.contains(&format!("incore_ring_min_mesh_prod.py:{line}:")), "line {line}: {err}");
}

#[test]
fn a_parameter_dimension_bound_by_bind_is_checked_at_the_call() {
    let dir = scratch("winshape", "bind-m");
    let twin = mesh_in_m(
        &dir,
        "signal_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)",
        "signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)\n            self.mesh_orch",
    );
    // The twin: an [NR, 1] signal for [M, 1] parameters, M the rank count (a window's dim).
    for ranks in ["2", "3", "4"] {
        let out = run(&twin, &dir, &["--ranks", ranks, "--check-golden"]);
        assert!(out.status.success(), "{ranks} ranks: {}", text(&out.stderr));
    }
    // M bound to another value than the signal's rows.
    let out = run(&twin, &dir, &["--ranks", "3", "--bind", "M=4"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains(
            "argument 5 (`signal`) of `mesh_orch` is a window of shape [NR, 1] = [3, 1], but parameter `signal` \
             is declared [M, 1] = [4, 1]"
        ),
        "{err}"
    );
}

/// The seed: one signal is not shared between a mesh (`[NR, 1]`) and a ring
/// (`[2*(NR-1), NR]`) allreduce. A kernel's mesh allreduce on a ring-shaped signal, written in
/// the one symbol `NR`, has one column for no rank count of 2 or more: `check` refuses it at
/// the signal (it used to run, silently using the signal's first column). The twin is the
/// corpus file itself.
#[test]
fn a_ring_shaped_signal_driving_a_mesh_allreduce_is_rejected_by_check() {
    let dir = scratch("winshape", "mesh-ring-signal");
    let ring = "signal: pl.InOut[pld.DistributedTensor[[2 * (NR - 1), NR], pl.INT32]],";
    let bad = edited(
        &dir,
        RING_MESH,
        &[
            (MESH_SIGNAL, ring),
            (MESH_SIGNAL, ring),
            (
                "signal_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)",
                "signal_buf = pld.alloc_window_buffer([2 * (pld.world_size() - 1), pld.world_size()], dtype=pl.INT32)",
            ),
            (
                "signal = pld.window(signal_buf, [NR, 1], dtype=pl.INT32)\n            self.mesh_orch",
                "signal = pld.window(signal_buf, [2 * (NR - 1), NR], dtype=pl.INT32)\n            self.mesh_orch",
            ),
        ],
    );
    let out = pld(&["check", bad.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with(
            "error[E0104]: pld.tensor.allreduce mesh signal must be [NR, 1], got [2 * (NR - 1), NR]; a [2*(NR-1), NR] \
             signal is the ring layout"
        ),
        "{err}"
    );
    let out = pld(&["check", RING_MESH]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}
