//! The repository's example programs (DSL text, parsed by pld-frontend) go through the whole
//! verified pipeline, and the printed IR after the last pass has the expected shape.

mod common;
use common::*;

fn compile(path: &str) -> Result<pld_ir::Program, String> {
    let text = std::fs::read_to_string(format!("{}/../{path}", env!("CARGO_MANIFEST_DIR")))
        .map_err(|e| e.to_string())?;
    let mut p = pld_frontend::parse_str(&text).map_err(|e| messages(&e))?;
    pld_passes::run_pipeline(&mut p, &pld_passes::PipelineOptions::default()).map_err(|e| messages(&e))?;
    Ok(p)
}

#[test]
fn every_example_compiles_through_the_verified_pipeline() {
    init();
    for ex in [
        "examples/quickstart_allreduce.py",
        "examples/allreduce_intrinsics.py",
        "examples/put_get_ring.py",
        "examples/broken_divergent_barrier.py",
    ] {
        let p = compile(ex).unwrap_or_else(|e| panic!("{ex}: {e}"));
        let t = pld_ir::print_program(&p);
        assert!(!t.contains("FunctionType.InCore"), "{ex}: an InCore kernel survived:\n{t}");
        assert!(!t.contains("pld.tensor.put(") && !t.contains("pld.tensor.allreduce("), "{ex}:\n{t}");
        assert!(t.contains("pld.CommCtx"), "{ex}: contexts are parameters:\n{t}");
        assert!(t.contains("pld.comm_domain("), "{ex}: host windows live in a comm domain:\n{t}");
    }
}

#[test]
fn allreduce_intrinsics_lowers_both_schedules() {
    init();
    let t = pld_ir::print_program(&compile("examples/allreduce_intrinsics.py").unwrap());
    // Mesh on 4097 FP32: two chunks of 4096, epilogue 1 + 2.
    check_in_order(&t, &["for col in pl.range(0, 4097, 4096):", "-3, op=pld.NotifyOp.AtomicAdd"]);
    // Ring with a runtime rank count: full-width sub-chunks, both phases.
    check_in_order(&t, &["for rs_col in pl.range(0, ", "for ag_col in pl.range(0, "]);
}
