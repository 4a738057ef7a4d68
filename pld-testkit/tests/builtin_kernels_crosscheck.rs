//! The builtin collective kernels against the simulator's protocol models (issue #19 item 2).
//!
//! Every host collective lowers to `builtin.tensor.*` dispatches, which the simulator runs
//! through a hand-written protocol model (the fast path). `MaterializeBuiltinKernels` turns the
//! same dispatches into calls of the kernels codegen renders for them (the builtins'
//! `BuiltinKernel` lowering), which the simulator runs like any kernel. On the chip rail the
//! unlowered collective runs through the same models and the lowered one as its synthesized
//! composite task. For every collective × rail × dtype the op allows (FP32 everywhere, FP16
//! for allreduce; no collective takes INT32 or BF16 data), at 2, 3, 4 and 8 ranks, odd
//! lengths, deterministic and random schedules, both runs must give identical output bytes
//! and identical traffic: per rank, the remote and local bytes, notifies, waits and barrier
//! rounds (not the read+write bytes of `Stats::rw_bytes`: a model's load-combine counts the
//! accumulator it reads and writes, where the kernel's separate tile add moves no memory).

mod rails;
use pld_ir::DataType;
use pld_sim::{HostTensor, Schedule};
use pld_testkit::e2e::{inputs, parse};
use rails::*;

#[test]
fn host_mesh_allreduce_kernel_matches_model() {
    for dt in [DataType::FP32, DataType::FP16] {
        for op in ["Sum", "Max", "Min", "Prod"] {
            let c = mesh_allreduce(op, 1);
            for p in RANKS {
                for size in [1, 17, 300] {
                    crosscheck(&c, p, size, dt, Schedule::Deterministic);
                }
            }
            crosscheck(&c, 3, 300, dt, Schedule::Random(5));
        }
    }
}

#[test]
fn host_multi_block_mesh_allreduce_kernel_matches_model() {
    // core_num blocks own the 256-element tiles block-cyclically (a ragged tail included).
    for core_num in [2, 3] {
        let c = mesh_allreduce("Sum", core_num);
        for p in RANKS {
            for size in [17, 600, 1025] {
                crosscheck(&c, p, size, DataType::FP32, Schedule::Deterministic);
            }
        }
        for schedule in SCHEDULES {
            crosscheck(&c, 3, 1025, DataType::FP16, schedule);
        }
    }
}

#[test]
fn host_ring_allreduce_kernel_matches_model() {
    let c = Case {
        sig_cells: RING_SIG.0,
        sig_shape: RING_SIG.1,
        ..case(
            "1",
            "1",
            "stage = pld.tensor.allreduce(stage, signal, op=pld.ReduceOp.Sum, mode=\"ring\")",
            "stage",
        )
    };
    for p in RANKS {
        for size in [1, 17, 301] {
            for schedule in SCHEDULES {
                crosscheck(&c, p, size, DataType::FP32, schedule);
            }
        }
    }
}

#[test]
fn host_barrier_broadcast_reduce_scatter_allgather_all_to_all_kernels_match_models() {
    let cases = [
        // A barrier's signal must share a comm domain with a window some dispatch consumes.
        case(
            "1",
            "1",
            "stage = pld.tensor.broadcast(stage, signal, root=0)\n        pld.tensor.barrier(signal)",
            "stage",
        ),
        case("1", "1", "stage = pld.tensor.broadcast(stage, signal, root=0)", "stage"),
        case("3", "3", "stage = pld.tensor.broadcast(stage, signal, root=1)", "stage"),
        // A row count that is the rank count: the kernel's stage holds as many rows as fit.
        case("NR", "NR", "stage = pld.tensor.broadcast(stage, signal, root=1)", "stage"),
        case("NR", "NR", "stage = pld.tensor.reduce_scatter(stage, signal, op=pld.ReduceOp.Sum)", "stage"),
        case("1", "NR", "data = pld.tensor.allgather(stage, data, signal)", "data"),
        case("NR", "NR", "data = pld.tensor.all_to_all(stage, data, signal)", "data"),
    ];
    for c in &cases {
        for p in RANKS {
            for size in [1, 17, 33] {
                crosscheck(c, p, size, DataType::FP32, Schedule::Deterministic);
            }
            crosscheck(c, p, 17, DataType::FP32, Schedule::Random(p as u64));
        }
    }
}

#[test]
fn host_all_to_all_v_kernel_matches_model() {
    const MAXR: usize = 3;
    const SIZE: usize = 19;
    for p in RANKS {
        let prog = parse(&a2av_program(p));
        // Negative, empty, partial, full and oversized counts (clamped to [0, MAX_RECV]).
        let counts: Vec<f64> = (0..p * p).map(|i| [-2.0, 0.0, 1.0, 3.0, 7.0][(i * 7 + i / p) % 5]).collect();
        let inp = inputs(vec![
            (
                "inputs",
                HostTensor::from_f64(
                    DataType::FP32,
                    vec![p, p * MAXR, SIZE],
                    &rank_inputs(p, p * MAXR * SIZE, DataType::FP32),
                ),
            ),
            ("send_counts", HostTensor::from_f64(DataType::INT32, vec![p, p, 1], &counts)),
        ]);
        // Rows past a count are never written: the drain reads them as undefined bytes
        // (warnings here), the same garbage in both runs.
        for schedule in SCHEDULES {
            compare(&prog, &inp, p, schedule, true, &format!("all_to_all_v P={p} {schedule:?}"));
        }
    }
}

#[test]
fn chip_mesh_allreduce_task_matches_model() {
    for dt in [DataType::FP32, DataType::FP16] {
        for op in ["Sum", "Max", "Min", "Prod"] {
            let body = leak(format!("stage = pld.tensor.allreduce(stage, signal, op=pld.ReduceOp.{op})"));
            let c = chip_case("1", "1", body);
            for p in RANKS {
                for size in [1, 17, 300, 4097] {
                    crosscheck_chip(&c, p, size, dt, Schedule::Deterministic);
                }
            }
            crosscheck_chip(&c, 3, 4097, dt, Schedule::Random(3));
        }
    }
}

#[test]
fn chip_ring_allreduce_task_matches_model() {
    for dt in [DataType::FP32, DataType::FP16] {
        let c = Case {
            sig_cells: "2 * (pld.world_size() - 1) * pld.world_size()",
            sig_shape: "[2 * (NR - 1), NR]",
            ..case(
                "1",
                "1",
                "stage = pld.tensor.allreduce(stage, signal, op=pld.ReduceOp.Sum, mode=\"ring\")",
                "stage",
            )
        };
        for p in RANKS {
            for size in [1, 17, 301] {
                for schedule in SCHEDULES {
                    crosscheck_chip(&c, p, size, dt, schedule);
                }
            }
        }
    }
}

#[test]
fn chip_barrier_broadcast_reduce_scatter_allgather_all_to_all_tasks_match_models() {
    let cases = [
        chip_case("1", "1", "pld.tensor.barrier(signal)"),
        chip_case("1", "1", "stage = pld.tensor.broadcast(stage, signal, root=0)"),
        chip_case("3", "3", "stage = pld.tensor.broadcast(stage, signal, root=1)"),
        chip_case("NR", "NR", "stage = pld.tensor.broadcast(stage, signal, root=1)"),
        chip_case("NR", "NR", "stage = pld.tensor.reduce_scatter(stage, signal, op=pld.ReduceOp.Sum)"),
        chip_case("1", "NR", "data = pld.tensor.allgather(stage, data, signal)"),
        chip_case("NR", "NR", "data = pld.tensor.all_to_all(stage, data, signal)"),
    ];
    for c in &cases {
        for p in RANKS {
            for size in [1, 17, 33] {
                crosscheck_chip(c, p, size, DataType::FP32, Schedule::Deterministic);
            }
            crosscheck_chip(c, p, 17, DataType::FP32, Schedule::Random(p as u64));
        }
    }
}

const CHIP_A2AV_FN: &str = r#"
    @pl.function(type=pl.FunctionType.Orchestration)
    def coll(self, inp: pl.Tensor[[NR * MAXR, SIZE], pl.FP32], data: pl.InOut[pld.DistributedTensor[[NR * MAXR, SIZE], pl.FP32]],
             signal: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]], cnt: pl.Tensor[[NR, 1], pl.INT32],
             recv: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]]):
        data = pld.tensor.all_to_all_v(inp, data, signal, cnt, recv)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)"#;

#[test]
fn chip_all_to_all_v_task_matches_model() {
    const MAXR: usize = 3;
    const SIZE: usize = 19;
    for p in RANKS {
        let text = a2av_program(p)
            .replace("\n    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)", CHIP_A2AV_FN)
            .replace(
                "data = pld.tensor.all_to_all_v(stage, data, signal, counts, recv)",
                "for r in pl.range(pld.world_size()):\n            self.coll(inputs[r], data, signal, send_counts[r], recv, device=r)",
            );
        let prog = parse(&text);
        let counts: Vec<f64> = (0..p * p).map(|i| [-2.0, 0.0, 1.0, 3.0, 7.0][(i * 7 + i / p) % 5]).collect();
        let inp = inputs(vec![
            (
                "inputs",
                HostTensor::from_f64(
                    DataType::FP32,
                    vec![p, p * MAXR, SIZE],
                    &rank_inputs(p, p * MAXR * SIZE, DataType::FP32),
                ),
            ),
            ("send_counts", HostTensor::from_f64(DataType::INT32, vec![p, p, 1], &counts)),
        ]);
        for schedule in SCHEDULES {
            let what = format!("chip all_to_all_v P={p} {schedule:?}");
            let low = pld_testkit::e2e::lower(&prog)
                .unwrap_or_else(|d| panic!("{what}: pipeline: {:?}", messages(&d)));
            assert!(!pld_ir::print_program(&low).contains("pld.tensor.all_to_all_v("), "{what}: not lowered");
            let cfg =
                pld_sim::SimConfig { schedule, allow_uninit_reads: true, ..pld_sim::SimConfig::ranks(p) };
            let model =
                pld_sim::run(&prog, "host", &inp, &cfg).unwrap_or_else(|e| panic!("{what} (model): {e}"));
            let cfg = pld_sim::SimConfig { check_fences: true, ..cfg };
            let kernel =
                pld_sim::run(&low, "host", &inp, &cfg).unwrap_or_else(|e| panic!("{what} (kernel): {e}"));
            assert_eq!(kernel.outputs, model.outputs, "{what}: output bytes differ");
            assert_eq!(traffic(&kernel, p), traffic(&model, p), "{what}: traffic differs");
        }
    }
}
