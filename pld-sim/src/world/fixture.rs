//! A test world (compiled for tests only): two ranks in one domain with races and fences
//! checked, an FP32 `data` buffer and a 2-cell INT32 `signal`, for unit tests of the world and
//! of the op semantics above it.

use super::*;

/// The fixture: `data` of shape `[rows, cols]`, every access of rank `owner`'s views local to
/// it; `allow_uninit_reads` as `--allow-uninit-reads`. Returns the world and the views of
/// `data` and `signal` (`[2, 1]`).
pub(crate) fn two_ranks(rows: i64, cols: i64, owner: usize, allow_uninit_reads: bool) -> (World, TRef, TRef) {
    let mut w = World::new(2);
    w.begin_run(u64::MAX, Checks { races: true, fences: true, allow_uninit_reads });
    let d = w.add_domain(vec![0, 1]);
    let data = w.alloc(d, "data", (rows * cols * 4) as u64);
    let sig = w.alloc(d, "signal", 8);
    w.view_buffer(sig, DataType::INT32, &[2, 1], 8).expect("signal view");
    w.finalize().expect("finalize");
    let view = |alloc: usize, shape: Vec<i64>, dtype: DataType, w: &World| TRef {
        mem: Mem::Window { domain: d, alloc },
        owner,
        base: w.buffer(alloc).offset,
        strides: TRef::packed_strides(&shape),
        shape: shape.into(),
        dtype,
    };
    let dv = view(data, vec![rows, cols], DataType::FP32, &w);
    let sv = view(sig, vec![2, 1], DataType::INT32, &w);
    (w, dv, sv)
}
