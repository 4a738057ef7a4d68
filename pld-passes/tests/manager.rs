//! The pass manager and the public pipeline API: pass names and order, unknown names,
//! stop-after, dumps, and verification failures that name the pass.

mod common;
use common::*;
use pld_ir::{DataType, Diagnostics, Direction, Expr, FunctionBuilder, FunctionKind, Program, StmtKind};
use pld_passes::{manager, Pass, PassCx, PipelineOptions};

fn tiny() -> Program {
    let mut fb = FunctionBuilder::new("k", FunctionKind::InCore);
    let x = fb.param("x", tensor(&[8, 8], DataType::FP32), Direction::In);
    let y = fb.param("y", tensor(&[8, 8], DataType::FP32), Direction::In);
    fb.body(|b| {
        let v = b.assign_op(
            "v",
            "tile.load",
            vec![Expr::var(x), Expr::ints(&[0, 0]), Expr::ints(&[8, 8])],
            vec![],
        )?;
        let dead = b.assign_op("dead", "tile.adds", vec![Expr::var(v), Expr::float(1.0)], vec![])?;
        let _ = dead;
        b.eval_op("tile.store", vec![Expr::var(v), Expr::ints(&[0, 0]), Expr::var(y)], vec![])?;
        Ok(())
    })
    .unwrap();
    let mut p = Program::new("p");
    p.add_function(fb.finish());
    p
}

#[test]
fn pass_names_follow_the_spec_order() {
    let names = pld_passes::pass_names();
    let pos =
        |n: &str| names.iter().position(|x| *x == n).unwrap_or_else(|| panic!("{n} missing from {names:?}"));
    assert!(pos("ConvertTensorToTileOps") < pos("LowerCompositeOps"));
    assert!(pos("LowerCompositeOps") < pos("LowerAutoVectorSplit"));
    assert!(pos("LowerAutoVectorSplit") < pos("ExpandMixedKernel"));
    assert_eq!(names.last(), Some(&"DeadCodeElimination"));
}

#[test]
fn unknown_pass_lists_valid_names() {
    init();
    let mut p = tiny();
    let opts = PipelineOptions { stop_after: Some("NoSuchPass".into()), ..PipelineOptions::default() };
    let err = pld_passes::run_pipeline(&mut p, &opts).unwrap_err();
    let m = messages(&err);
    assert!(m.contains("unknown pass `NoSuchPass`"), "{m}");
    assert!(m.contains("ConvertTensorToTileOps") && m.contains("ExpandMixedKernel"), "{m}");
    let err = pld_passes::run_pipeline_with_dumps(&mut p, &PipelineOptions::default(), "Nope").unwrap_err();
    assert!(messages(&err).contains("valid passes:"));
}

#[test]
fn dump_after_prints_the_ir_after_that_pass() {
    init();
    let mut p = tiny();
    let dump =
        pld_passes::run_pipeline_with_dumps(&mut p, &PipelineOptions::default(), "ConvertTensorToTileOps")
            .unwrap();
    // After ConvertTensorToTileOps: still InCore, y upgraded to Out, the dead add still there.
    check_in_order(&dump, &["FunctionType.InCore", "y: pl.Out[", "pl.tile.adds"]);
    // The full pipeline ran: kernel retyped, dead code removed.
    let end = pld_ir::print_program(&p);
    assert!(end.contains("FunctionType.AIV"), "{end}");
    assert!(!end.contains("tile.adds"), "DCE removed the dead add:\n{end}");
}

#[test]
fn stop_after_stops() {
    init();
    let mut p = tiny();
    let opts =
        PipelineOptions { stop_after: Some("ConvertTensorToTileOps".into()), ..PipelineOptions::default() };
    pld_passes::run_pipeline(&mut p, &opts).unwrap();
    assert_eq!(p.function("k").map(|f| f.kind), Some(FunctionKind::InCore));
}

/// A pass that breaks the IR: it appends a use of a value defined nowhere.
struct Breaker;
impl Pass for Breaker {
    fn name(&self) -> &'static str {
        "Breaker"
    }
    fn run(&self, p: &mut Program, _cx: &mut PassCx) -> Result<(), Diagnostics> {
        let f = &mut p.functions[0];
        let ghost = f.values.add("ghost", pld_ir::Type::Scalar(DataType::INDEX), pld_ir::Span::DUMMY);
        f.body.stmts.push(pld_ir::Stmt::new(StmtKind::Return(vec![Expr::var(ghost)]), pld_ir::Span::DUMMY));
        Ok(())
    }
}

#[test]
fn verification_failure_names_the_pass() {
    init();
    let mut p = tiny();
    let mut cx = PassCx::default();
    let err = manager::run_passes(&mut p, &[&Breaker], &mut cx, true, &mut |_, _| {}).unwrap_err();
    let m = messages(&err);
    assert!(m.contains("after Breaker"), "{m}");
    // Without verification the broken IR goes through.
    let mut p = tiny();
    manager::run_passes(&mut p, &[&Breaker], &mut cx, false, &mut |_, _| {}).unwrap();
}

/// A pass that claims a property it does not establish.
struct Liar;
impl Pass for Liar {
    fn name(&self) -> &'static str {
        "Liar"
    }
    fn produced(&self) -> &'static [pld_passes::Property] {
        &[pld_passes::Property::MixedKernelExpanded]
    }
    fn run(&self, _p: &mut Program, _cx: &mut PassCx) -> Result<(), Diagnostics> {
        Ok(())
    }
}

#[test]
fn produced_property_is_checked() {
    init();
    let mut p = tiny();
    let err =
        manager::run_passes(&mut p, &[&Liar], &mut PassCx::default(), true, &mut |_, _| {}).unwrap_err();
    let m = messages(&err);
    assert!(m.contains("InCore function `k` was not split") && m.contains("Liar"), "{m}");
}

/// `tiny` plus a host-side caller `c` of `k` (so removing `k` strands a call).
fn with_caller() -> Program {
    let mut p = tiny();
    let mut fb = FunctionBuilder::new("c", FunctionKind::ChipOrch);
    let x = fb.param("x", tensor(&[8, 8], DataType::FP32), Direction::In);
    let y = fb.param("y", tensor(&[8, 8], DataType::FP32), Direction::In);
    fb.body(|b| {
        let call = pld_ir::Call::new(
            pld_ir::Callee::Func("k".into()),
            vec![Expr::var(x), Expr::var(y)],
            vec![],
            pld_ir::Type::Unknown,
        );
        b.eval(Expr::new(pld_ir::ExprKind::Call(Box::new(call)), pld_ir::Span::DUMMY));
        Ok(())
    })
    .unwrap();
    p.add_function(fb.finish());
    p
}

/// Appends a use of an undefined value to `f` (breaks it).
fn break_function(f: &mut pld_ir::Function) {
    let ghost = f.values.add("ghost", pld_ir::Type::Scalar(DataType::INDEX), pld_ir::Span::DUMMY);
    f.body.stmts.push(pld_ir::Stmt::new(StmtKind::Return(vec![Expr::var(ghost)]), pld_ir::Span::DUMMY));
}

/// Breaks `k` and reports it (incremental verification must still see it).
struct ReportingBreaker;
impl Pass for ReportingBreaker {
    fn name(&self) -> &'static str {
        "ReportingBreaker"
    }
    fn run(&self, p: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        cx.report_changes();
        let f = p.functions.iter_mut().find(|f| f.name == "k").unwrap();
        break_function(f);
        cx.changed("k");
        Ok(())
    }
}

/// Breaks `k` but reports no change at all (a wrong report).
struct SilentBreaker;
impl Pass for SilentBreaker {
    fn name(&self) -> &'static str {
        "SilentBreaker"
    }
    fn run(&self, p: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        cx.report_changes();
        let f = p.functions.iter_mut().find(|f| f.name == "k").unwrap();
        break_function(f);
        Ok(())
    }
}

/// Reports changing nothing and changes nothing.
struct Idle;
impl Pass for Idle {
    fn name(&self) -> &'static str {
        "Idle"
    }
    fn run(&self, _p: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        cx.report_changes();
        Ok(())
    }
}

/// Removes `k` and reports no change to the (untouched) caller `c`.
struct Remover;
impl Pass for Remover {
    fn name(&self) -> &'static str {
        "Remover"
    }
    fn run(&self, p: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        cx.report_changes();
        p.functions.retain(|f| f.name != "k");
        Ok(())
    }
}

#[test]
fn a_reported_broken_function_is_caught_after_its_pass() {
    init();
    for audit_reports in [true, false] {
        let mut p = with_caller();
        let mut cx = PassCx::default();
        cx.audit_reports = audit_reports;
        let err = manager::run_passes(&mut p, &[&ReportingBreaker, &Idle], &mut cx, true, &mut |_, _| {})
            .unwrap_err();
        let m = messages(&err);
        assert!(m.contains("after ReportingBreaker") && m.contains("ghost"), "{m}");
    }
}

#[test]
fn an_unreported_change_fails_the_audit() {
    init();
    let mut p = with_caller();
    let mut cx = PassCx::default();
    cx.audit_reports = true;
    let err = manager::run_passes(&mut p, &[&SilentBreaker], &mut cx, true, &mut |_, _| {}).unwrap_err();
    let m = messages(&err);
    assert!(m.contains("SilentBreaker changed function `k` but did not report it"), "{m}");
}

#[test]
fn without_the_audit_an_unreported_change_is_caught_by_the_final_verification() {
    init();
    let mut p = with_caller();
    let mut cx = PassCx::default();
    cx.audit_reports = false;
    let err =
        manager::run_passes(&mut p, &[&SilentBreaker, &Idle], &mut cx, true, &mut |_, _| {}).unwrap_err();
    let m = messages(&err);
    // Neither pass's own verification looked at `k` (both reported it unchanged); the
    // whole-program verification after the last pass did.
    assert!(m.contains("ghost") && m.contains("final whole-program verification"), "{m}");
    assert!(!m.contains("after SilentBreaker") && !m.contains("after Idle"), "{m}");
}

#[test]
fn removing_a_function_reverifies_its_unchanged_callers() {
    init();
    let mut p = with_caller();
    let mut cx = PassCx::default();
    cx.audit_reports = true;
    let err = manager::run_passes(&mut p, &[&Remover], &mut cx, true, &mut |_, _| {}).unwrap_err();
    let m = messages(&err);
    assert!(m.contains("call of undefined function `k`") && m.contains("after Remover"), "{m}");
}
