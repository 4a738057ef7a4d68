//! The benchmark workloads are real programs: the generated compiler workloads parse, go
//! through the whole pipeline and emit PTO, and grow linearly in statements with their scale;
//! every collective workload compiles, simulates, and moves exactly the bytes its algorithm
//! should (so the table's moved/LB column measures the simulator, not a broken workload), over
//! a source window its prepare kernel filled completely; the hand-written kernel computes its
//! allreduce and reads each peer once.

use pld_bench::coll::{Coll, Workload};
use pld_bench::kernel::HandAllreduce;
use pld_bench::{compile, count_stmts, emit, gen, parse, rw_bytes, simulate};
use pld_sim::{Schedule, SimConfig};

fn setup() {
    pld_bench::init().expect("op registry is consistent");
}

#[test]
fn generated_programs_compile_and_scale_linearly() {
    setup();
    let stmts: Vec<usize> = [1, 2, 3]
        .iter()
        .map(|&k| {
            let text = gen::program(k);
            let p = parse(&text).unwrap_or_else(|e| panic!("scale {k} does not parse: {e}"));
            let n = count_stmts(&p);
            let lowered = compile(&text).unwrap_or_else(|e| panic!("scale {k} does not compile: {e}"));
            let len = emit(&lowered).unwrap_or_else(|e| panic!("scale {k} does not emit: {e}"));
            assert!(len > 0, "scale {k}: empty PTO output");
            n
        })
        .collect();
    let unit = stmts[1] - stmts[0];
    assert!(unit >= 30, "one unit is a realistic kernel, got {unit} statements");
    assert_eq!(stmts[2] - stmts[1], unit, "every unit adds the same statements: {stmts:?}");
}

#[test]
fn collective_workloads_move_the_expected_bytes() {
    setup();
    for coll in Coll::ALL {
        for p in [2usize, 3, 4] {
            let w = Workload::new(coll, p, 4096);
            let prog = compile(&w.text()).unwrap_or_else(|e| panic!("{coll:?} P={p}: {e}\n{}", w.text()));
            let out = simulate(&prog, &w.inputs(), &w.config(Schedule::Deterministic))
                .unwrap_or_else(|e| panic!("{coll:?} P={p}: {e}"));
            let kind = coll.stats_kind();
            let s = w.payload();
            let rw = rw_bytes(&out.stats, kind);
            if coll == Coll::MeshAllreduce {
                // Per rank: its own tiles loaded (S read, S written to the tile), P-1 peers'
                // combined in (S read, S read and written in the accumulator), the result
                // stored (S read from the tile, S written).
                assert_eq!(rw, p as u64 * (2 * s + 3 * (p as u64 - 1) * s + 2 * s), "{coll:?} P={p}");
            }
            assert!(rw > 0, "{coll:?} P={p}: no tile traffic counted");
            for r in 0..p {
                let got = out.stats.remote_of(r, kind);
                // Mesh reads (P-1)·S; ring allreduce, allgather and all-to-all meet their bound
                // (ring segments of S/P rounded to whole elements: one element per step).
                let (want, slack) = match coll {
                    Coll::MeshAllreduce => ((p as u64 - 1) * s, 0),
                    Coll::RingAllreduce => (coll.lower_bound(p, s).round() as u64, 2 * (p as u64 - 1) * 4),
                    // Non-root ranks read the root's data; the root moves nothing.
                    Coll::Broadcast if r == 0 => (0, 0),
                    _ => (coll.lower_bound(p, s).round() as u64, 0),
                };
                assert!(
                    got.abs_diff(want) <= slack,
                    "{coll:?} P={p} rank {r}: remote bytes {got}, want {want}"
                );
            }
            assert!(w.must_hold() >= s * p as u64, "{coll:?}: must_hold counts every rank's data");
            // The prepare kernel fills the whole source window (all_to_all_v also stores its
            // [P, 1] send counts), so the collective never runs on zeroed windows.
            let row = w.size() as u64 * 4;
            let filled = match coll {
                Coll::AllToAllV => p as u64 * row + 4 * p as u64,
                Coll::ReduceScatter => p as u64 * row,
                _ => row,
            };
            for r in 0..p {
                let stored = out.stats.local_bytes.get(&(r, "tile.store".to_string())).copied();
                assert_eq!(stored, Some(filled), "{coll:?} P={p} rank {r}: prepare stores");
            }
        }
    }
}

#[test]
fn a_loop_of_collectives_repeats_the_traffic() {
    setup();
    let one = Workload::new(Coll::RingAllreduce, 4, 4096);
    let three = Workload { iters: 3, ..one };
    let run = |w: &Workload| {
        let prog = compile(&w.text()).unwrap_or_else(|e| panic!("{e}"));
        simulate(&prog, &w.inputs(), &w.config(Schedule::Deterministic)).unwrap_or_else(|e| panic!("{e}"))
    };
    let (a, b) = (run(&one), run(&three));
    for r in 0..4 {
        assert_eq!(b.stats.remote_of(r, "allreduce"), 3 * a.stats.remote_of(r, "allreduce"), "rank {r}");
    }
}

#[test]
fn the_hand_written_kernel_sums_every_rank_and_reads_each_peer_once() {
    setup();
    for p in [2usize, 3] {
        let k = HandAllreduce { p, size: 3 * 256, tile: 256 };
        let prog = compile(&k.text()).unwrap_or_else(|e| panic!("{e}"));
        let cfg = SimConfig::ranks(p);
        let out = simulate(&prog, &k.inputs(), &cfg).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.outputs["outputs"], k.expected(), "P={p}");
        for r in 0..p {
            let remote = out.stats.remote_of(r, "remote_load");
            assert_eq!(remote, ((p - 1) * k.size * 4) as u64, "P={p} rank {r}");
        }
    }
}
