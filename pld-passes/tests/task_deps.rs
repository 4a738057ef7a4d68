//! Explicit task dependencies: `pl.manual_scope()`, `with pl.at(...) as tid` and
//! `deps=[tid]` survive outlining as task submits (`self.k(..., deps=[...])` whose last
//! result is the task id), the manual scope stays around them in the orchestration function,
//! and the printed IR re-parses to the same program.

mod common;
use common::*;

fn source() -> String {
    std::fs::read_to_string(format!("{}/../examples/deferred_completion.py", env!("CARGO_MANIFEST_DIR")))
        .expect("example")
}

fn compile(text: &str) -> Result<pld_ir::Program, String> {
    let mut p = pld_frontend::parse_str(text).map_err(|e| messages(&e))?;
    pld_passes::run_pipeline(&mut p, &pld_passes::PipelineOptions::default()).map_err(|e| messages(&e))?;
    Ok(p)
}

#[test]
fn scopes_with_task_ids_outline_to_submits_inside_the_manual_scope() {
    init();
    let p = compile(&source()).unwrap_or_else(|e| panic!("{e}"));
    let t = func_text(&p, "chip_orch");
    check_in_order(
        &t,
        &[
            "with pl.manual_scope():",
            "for slot in pl.range(",
            // The waiter binds its id and has no dependencies of its own.
            "wait_tid: pl.Scalar[pl.TASK_ID] = self.chip_orch_incore_0(",
            "deps=[])",
            // The consumer waits for it.
            "self.chip_orch_incore_0_1(",
            "deps=[wait_tid])",
            // The publisher is a plain call: no id, no edge.
            "self.chip_orch_incore_0_2(",
        ],
    );
    let publisher = t.lines().find(|l| l.contains("self.chip_orch_incore_0_2(")).unwrap();
    assert!(!publisher.contains("deps="), "{publisher}");
    assert_eq!(count(&t, "deps=["), 2, "{t}");
    let waiter = p.function("chip_orch_incore_0").unwrap();
    assert!(waiter.attr("deferred_completion_waiter").is_some(), "{}", func_text(&p, "chip_orch_incore_0"));
}

#[test]
fn printed_submits_reparse_to_the_same_program() {
    init();
    let before = pld_frontend::parse_str(&source()).unwrap_or_else(|e| panic!("{}", messages(&e)));
    let again = pld_frontend::parse_ir_str(&pld_ir::print_program(&before))
        .unwrap_or_else(|e| panic!("{}", messages(&e)));
    pld_frontend::structurally_equal(&before, &again).unwrap();
    let after = compile(&source()).unwrap();
    let text = pld_ir::print_program(&after);
    let again = pld_frontend::parse_ir_str(&text).unwrap_or_else(|e| panic!("{}\n{text}", messages(&e)));
    pld_frontend::structurally_equal(&after, &again).unwrap_or_else(|e| panic!("{e}\n{text}"));
}

#[test]
fn a_dependency_must_be_a_task_id() {
    init();
    let bad = source().replace("deps=[wait_tid]", "deps=[slot]");
    let e = compile(&bad).unwrap_err();
    assert!(e.contains("a task dependency must be a task id, got pl.Scalar[pl.INDEX]"), "{e}");
    let bad = source().replace("deps=[wait_tid]", "deps=wait_tid");
    let e = compile(&bad).unwrap_err();
    assert!(e.contains("deps= takes a list of task ids"), "{e}");
    let bad = source().replace("with pl.manual_scope():", "with pl.manual_scope() as m:");
    let e = compile(&bad).unwrap_err();
    assert!(e.contains("only pl.at(...) binds a task id"), "{e}");
}

#[test]
fn an_unbound_submit_outside_a_manual_scope_keeps_its_outputs() {
    init();
    // A consumer with deps= but no `as` name, whose result is used later: the outliner
    // invents the id (`_tid`) so the outputs still unpack.
    let text = r#"
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, x: pl.Tensor[[8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP) as first:
            t = pl.load(x, [0, 0], [8, 8])
            y = pl.store(t, [0, 0], y)
        with pl.at(level=pl.Level.CORE_GROUP, deps=[first]):
            u = pl.load(y, [0, 0], [8, 8])
            v = pl.add(u, u)
            y = pl.store(v, [0, 0], y)
        return y
"#;
    let p = compile(text).unwrap_or_else(|e| panic!("{e}"));
    let t = func_text(&p, "orch");
    check_in_order(
        &t,
        &["y_1, first = self.orch_incore_0(x, y, deps=[])", "y_2, _tid = self.", "(y_1, deps=[first])"],
    );
}

#[test]
fn a_waiter_inside_a_launch_scope_is_rejected_but_loops_are_fine() {
    init();
    // The example's waiters sit in a loop inside the manual scope: accepted (above). Under a
    // pl.spmd launch they are not their own task.
    let bad = source().replace(
        "            for slot in pl.range(WAITERS):\n",
        "          with pl.spmd(1):\n            for slot in pl.range(WAITERS):\n",
    );
    assert_ne!(bad, source());
    let e = compile(&bad).unwrap_err();
    assert!(e.contains("must be the body of its own CORE_GROUP / InCore task, not nested in pl.spmd"), "{e}");
}
