//! The property sweep of ARCHITECTURE §9: random rank counts, sizes, dtypes, reduce ops and
//! roots for every collective on both rails, against `pld-testkit`'s golden references.
//!
//! Each case runs the collective both ways (protocol model and the kernel codegen emits, which
//! must agree byte for byte and in traffic — see `builtin_kernels_crosscheck.rs`) and compares
//! the result with the reference. Case counts are bounded so the sweep stays well under a
//! minute in CI; `PROPTEST_CASES` raises them locally.

mod rails;
use pld_ir::DataType;
use pld_runtime_abi::ReduceOp;
use pld_sim::Schedule;
use pld_testkit::e2e::{assert_ranks, tol, unstack};
use pld_testkit::reference as gold;
use proptest::prelude::*;
use rails::*;

/// One collective of the sweep.
#[derive(Clone, Copy, Debug)]
enum Kind {
    MeshAllreduce,
    MultiBlockAllreduce,
    RingAllreduce,
    Barrier,
    Broadcast,
    ReduceScatter,
    Allgather,
    AllToAll,
}

const KINDS: [Kind; 8] = [
    Kind::MeshAllreduce,
    Kind::MultiBlockAllreduce,
    Kind::RingAllreduce,
    Kind::Barrier,
    Kind::Broadcast,
    Kind::ReduceScatter,
    Kind::Allgather,
    Kind::AllToAll,
];

const OPS: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod];

/// The case of `kind` on `rail` (`op` and `root` where the collective takes them).
fn case_of(kind: Kind, rail: Rail, op: ReduceOp, root: usize) -> Case {
    let chip = rail == Rail::Chip;
    let sig = if chip { ("pld.world_size()", "[NR, 1]") } else { ("pld.world_size()", "[NR]") };
    let with = |c: Case| Case { sig_cells: sig.0, sig_shape: sig.1, ..c };
    let op = op.dsl_name();
    match kind {
        Kind::MeshAllreduce => with(case(
            "1",
            "1",
            leak(format!("stage = pld.tensor.allreduce(stage, signal, op=pld.ReduceOp.{op})")),
            "stage",
        )),
        Kind::MultiBlockAllreduce => mesh_allreduce(op, 3),
        Kind::RingAllreduce => {
            let (cells, shape) = if chip {
                ("2 * (pld.world_size() - 1) * pld.world_size()", "[2 * (NR - 1), NR]")
            } else {
                RING_SIG
            };
            Case {
                sig_cells: cells,
                sig_shape: shape,
                ..case(
                    "1",
                    "1",
                    "stage = pld.tensor.allreduce(stage, signal, op=pld.ReduceOp.Sum, mode=\"ring\")",
                    "stage",
                )
            }
        }
        Kind::Barrier => with(case(
            "1",
            "1",
            leak(format!(
                "stage = pld.tensor.broadcast(stage, signal, root={root})\n        pld.tensor.barrier(signal)"
            )),
            "stage",
        )),
        Kind::Broadcast => with(case(
            "2",
            "2",
            leak(format!("stage = pld.tensor.broadcast(stage, signal, root={root})")),
            "stage",
        )),
        Kind::ReduceScatter => with(case(
            "NR",
            "NR",
            "stage = pld.tensor.reduce_scatter(stage, signal, op=pld.ReduceOp.Sum)",
            "stage",
        )),
        Kind::Allgather => with(case("1", "NR", "data = pld.tensor.allgather(stage, data, signal)", "data")),
        Kind::AllToAll => with(case("NR", "NR", "data = pld.tensor.all_to_all(stage, data, signal)", "data")),
    }
}

/// Runs one case and checks it against the reference.
#[allow(clippy::too_many_arguments)]
fn check(kind: Kind, rail: Rail, p: usize, size: usize, fp16: bool, op: ReduceOp, root: usize, seed: u64) {
    // FP16 is an allreduce dtype; the other collectives and the ring take FP32 (or, the ring
    // on the chip rail, both); only the mesh allreduce takes every ReduceOp.
    let mesh = matches!(kind, Kind::MeshAllreduce | Kind::MultiBlockAllreduce);
    let dt = match kind {
        Kind::MeshAllreduce | Kind::MultiBlockAllreduce if fp16 => DataType::FP16,
        Kind::RingAllreduce if fp16 && rail == Rail::Chip => DataType::FP16,
        _ => DataType::FP32,
    };
    let op = if mesh { op } else { ReduceOp::Sum };
    let root = root % p;
    let schedule = if seed % 2 == 0 { Schedule::Deterministic } else { Schedule::Random(seed) };
    let c = case_of(kind, rail, op, root);
    let out = match rail {
        Rail::Host => crosscheck(&c, p, size, dt, schedule),
        Rail::Chip => crosscheck_chip(&c, p, size, dt, schedule),
    };
    let rows = c.in_rows.parse().unwrap_or(p);
    let flat = gold::round(dt, &rank_inputs(p, rows * size, dt));
    let per: Vec<Vec<f64>> = flat.chunks(rows * size).map(<[f64]>::to_vec).collect();
    let got = unstack(&out.outputs["outputs"]);
    let what = format!("{kind:?} on {rail:?} P={p} size={size} {dt} {op:?} root={root} {schedule:?}");
    let (rtol, atol) = tol(dt);
    match kind {
        Kind::MeshAllreduce | Kind::MultiBlockAllreduce | Kind::RingAllreduce => {
            assert_ranks(&got, &gold::allreduce(&per, op, dt), rtol, atol, &what)
        }
        Kind::Barrier | Kind::Broadcast => assert_ranks(&got, &gold::broadcast(&per, root), 0.0, 0.0, &what),
        Kind::ReduceScatter => {
            let want = gold::reduce_scatter(&per, ReduceOp::Sum, dt);
            for r in 0..p {
                let mine = &got[r][r * size..(r + 1) * size];
                assert_eq!(mine, &want[r][..], "{what}: rank {r}");
            }
        }
        Kind::Allgather => assert_ranks(&got, &gold::allgather(&per), 0.0, 0.0, &what),
        Kind::AllToAll => assert_ranks(&got, &gold::all_to_all(&per, size), 0.0, 0.0, &what),
    }
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn host_collectives_match_the_references(
        kind in 0..KINDS.len(),
        p in 2usize..=8,
        size in 1usize..=600,
        fp16 in any::<bool>(),
        op in 0..OPS.len(),
        root in 0usize..8,
        seed in 0u64..1000,
    ) {
        check(KINDS[kind], Rail::Host, p, size, fp16, OPS[op], root, seed);
    }

    #[test]
    fn chip_collectives_match_the_references(
        kind in 0..KINDS.len(),
        p in 2usize..=8,
        size in 1usize..=600,
        fp16 in any::<bool>(),
        op in 0..OPS.len(),
        root in 0usize..8,
        seed in 0u64..1000,
    ) {
        // The chip rail has no multi-block launch (core_num is a host builtin's).
        let kind = match KINDS[kind] { Kind::MultiBlockAllreduce => Kind::MeshAllreduce, k => k };
        check(kind, Rail::Chip, p, size, fp16, OPS[op], root, seed);
    }
}

proptest! {
    #![proptest_config(config(16))]

    /// all_to_all_v on the host rail: random counts (negative, zero, partial, full, oversized)
    /// at random rank counts; the received counts and the written rows match the reference.
    #[test]
    fn host_all_to_all_v_matches_the_reference(
        p in 2usize..=8,
        counts in proptest::collection::vec(-2i64..6, 64),
        seed in 0u64..1000,
    ) {
        const MAXR: usize = 3;
        const SIZE: usize = 19;
        let prog = pld_testkit::e2e::parse(&a2av_program(p));
        let cnt: Vec<Vec<i64>> = (0..p).map(|s| (0..p).map(|d| counts[s * 8 + d]).collect()).collect();
        let flat_counts: Vec<f64> = cnt.iter().flatten().map(|&c| c as f64).collect();
        let data = rank_inputs(p, p * MAXR * SIZE, DataType::FP32);
        let per: Vec<Vec<f64>> = data.chunks(p * MAXR * SIZE).map(<[f64]>::to_vec).collect();
        let inp = pld_testkit::e2e::inputs(vec![
            ("inputs", pld_sim::HostTensor::from_f64(DataType::FP32, vec![p, p * MAXR, SIZE], &data)),
            ("send_counts", pld_sim::HostTensor::from_f64(DataType::INT32, vec![p, p, 1], &flat_counts)),
        ]);
        let schedule = if seed % 2 == 0 { Schedule::Deterministic } else { Schedule::Random(seed) };
        let what = format!("all_to_all_v P={p} {schedule:?} counts {cnt:?}");
        let out = compare(&prog, &inp, p, schedule, true, &what);
        let got = unstack(&out.outputs["outputs"]);
        let recv = unstack(&out.outputs["recv_out"]);
        for (r, (want_counts, want_rows)) in gold::all_to_all_v(&per, &cnt, MAXR, SIZE).iter().enumerate() {
            let rc: Vec<i64> = recv[r].iter().map(|&x| x as i64).collect();
            prop_assert_eq!(&rc, want_counts, "{}: recv_counts of rank {}", what, r);
            for (i, w) in want_rows.iter().enumerate() {
                if let Some(v) = w {
                    prop_assert_eq!(got[r][i], *v, "{}: rank {} element {}", what, r, i);
                }
            }
        }
    }
}
