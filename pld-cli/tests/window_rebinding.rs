//! A window rebound by a writing op keeps its identity end to end (`pld check`, `pld
//! compile`, `pld run`): `data = pl.store(tile, offs, data)` followed by a context query, an
//! allreduce and a broadcast on the rebound `data`; and a collective's window-as-result
//! written at its second operand (`g = pld.tensor.allgather(x, g, sig)`); and a kernel's
//! returned window rebinding its caller's (`data = self.publish(x, data)`).

mod cli_support;

use cli_support::{pld, text};

use std::path::{Path, PathBuf};

fn out_dir(name: &str) -> PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("pld-rebind-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn load_f32(path: &Path) -> (Vec<u64>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).expect("valid npy");
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec::<f32>().expect("f32 data"))
}

const STORE_THEN_ALLREDUCE: &str = "pld-cli/tests/corpus/rebind_store_then_allreduce.py";
const ALLGATHER_POSITION: &str = "pld-cli/tests/corpus/rebind_allgather_position.py";
const KERNEL_RETURNS_WINDOW: &str = "pld-cli/tests/corpus/rebind_kernel_returns_window.py";

#[test]
fn a_window_rebound_by_store_is_queried_reduced_and_broadcast() {
    let out = pld(&["check", STORE_THEN_ALLREDUCE]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = out_dir("compile");
    let out = pld(&["compile", STORE_THEN_ALLREDUCE, "--emit", "all", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ir = std::fs::read_to_string(dir.join("rebind_store_then_allreduce.ir.py")).expect("ir written");
    assert!(ir.contains("data_ctx"), "the kernel gained the window's context parameter:\n{ir}");
    for ranks in [2usize, 3, 4] {
        let dir = out_dir(&format!("run-{ranks}"));
        let out = pld(&[
            "run",
            STORE_THEN_ALLREDUCE,
            "--ranks",
            &ranks.to_string(),
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "ranks {ranks}: {}", text(&out.stderr));
        let (shape, inp) = load_f32(&dir.join("inputs/inputs.npy"));
        let (oshape, got) = load_f32(&dir.join("outputs.npy"));
        assert_eq!(shape, oshape);
        let row = inp.len() / ranks;
        for i in 0..row {
            let want: f32 = (0..ranks).map(|k| inp[k * row + i]).sum();
            for r in 0..ranks {
                assert_eq!(got[r * row + i], want, "ranks {ranks}, rank {r}, element {i}");
            }
        }
    }
}

#[test]
fn a_collective_result_written_at_its_second_operand_is_the_window() {
    for ranks in [2usize, 3, 4] {
        let dir = out_dir(&format!("gather-{ranks}"));
        let out =
            pld(&["run", ALLGATHER_POSITION, "--ranks", &ranks.to_string(), "--out", dir.to_str().unwrap()]);
        assert!(out.status.success(), "ranks {ranks}: {}", text(&out.stderr));
        let (_, inp) = load_f32(&dir.join("inputs/inputs.npy"));
        let (shape, got) = load_f32(&dir.join("outputs.npy"));
        let cols = inp.len() / ranks;
        assert_eq!(shape, vec![ranks as u64, ranks as u64, cols as u64]);
        for r in 0..ranks {
            for k in 0..ranks {
                for c in 0..cols {
                    let want = inp[k * cols + c] + if k == r { 1.0 } else { 0.0 };
                    assert_eq!(got[(r * ranks + k) * cols + c], want, "ranks {ranks}, rank {r}, row {k}");
                }
            }
        }
    }
}

#[test]
fn a_store_into_a_window_at_any_operand_position_rebinds_it_in_a_kernel() {
    // The store's window is its third operand; the query, the barrier and the remote load
    // all read the rebound value.
    let dir = out_dir("inline");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ring_shift.py");
    std::fs::write(
        &file,
        r#"import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")


@pl.jit.incore
def shift(
    inp: pl.Tensor[[2, 16], pl.FP32],
    out: pl.Out[pl.Tensor[[2, 16], pl.FP32]],
    win: pl.InOut[pld.DistributedTensor[[2, 16], pl.FP32]],
    sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    t = pl.load(inp, [0, 0], [2, 16])
    win = pl.store(t, [0, 0], win)
    ctx = pld.get_comm_ctx(win)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    pld.tensor.barrier(sig)
    prev = pld.tile.remote_load(win, (me + n - 1) % n, [0, 0], [2, 16])
    out = pl.store(prev, [0, 0], out)


@pl.jit
def chip(
    inp: pl.Tensor[[2, 16], pl.FP32],
    out: pl.Out[pl.Tensor[[2, 16], pl.FP32]],
    win: pl.InOut[pld.DistributedTensor[[2, 16], pl.FP32]],
    sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
):
    shift(inp, out, win, sig)


@pl.jit.host
def host(inputs: pl.Tensor[[NR, 2, 16], pl.FP32], outputs: pl.Out[pl.Tensor[[NR, 2, 16], pl.FP32]]):
    win_buf = pld.alloc_window_buffer(2 * 16 * 4)
    sig_buf = pld.alloc_window_buffer(pld.world_size() * 4)
    for r in pl.range(pld.world_size()):
        win = pld.window(win_buf, [2, 16], dtype=pl.FP32)
        sig = pld.window(sig_buf, [NR, 1], dtype=pl.INT32)
        chip(inputs[r], outputs[r], win, sig, device=r)
"#,
    )
    .unwrap();
    let o = dir.join("o");
    let out = pld(&["run", file.to_str().unwrap(), "--ranks", "3", "--out", o.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (_, inp) = load_f32(&o.join("inputs/inputs.npy"));
    let (_, got) = load_f32(&o.join("outputs.npy"));
    for r in 0..3 {
        let prev = (r + 2) % 3;
        assert_eq!(got[r * 32..(r + 1) * 32], inp[prev * 32..(prev + 1) * 32], "rank {r}");
    }
}

#[test]
fn a_window_returned_by_a_kernel_is_the_callers_window() {
    for ranks in [2usize, 3, 4] {
        let dir = out_dir(&format!("returned-{ranks}"));
        let out = pld(&[
            "run",
            KERNEL_RETURNS_WINDOW,
            "--ranks",
            &ranks.to_string(),
            "--out",
            dir.to_str().unwrap(),
        ]);
        assert!(out.status.success(), "ranks {ranks}: {}", text(&out.stderr));
        let (_, inp) = load_f32(&dir.join("inputs/inputs.npy"));
        let (_, got) = load_f32(&dir.join("outputs.npy"));
        let row = inp.len() / ranks;
        for i in 0..row {
            let want: f32 = (0..ranks).map(|k| inp[k * row + i]).sum();
            for r in 0..ranks {
                assert_eq!(got[r * row + i], want, "ranks {ranks}, rank {r}, element {i}");
            }
        }
    }
    let dir = out_dir("returned-compile");
    let out = pld(&["compile", KERNEL_RETURNS_WINDOW, "--emit", "ir", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let ir = std::fs::read_to_string(dir.join("rebind_kernel_returns_window.ir.py")).unwrap();
    assert!(ir.contains("self.reduce(data_1, signal, out, data_ctx, signal_ctx)"), "{ir}");
}
