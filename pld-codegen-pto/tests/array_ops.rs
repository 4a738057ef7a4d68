//! On-core arrays through the frontend, the pass pipeline and codegen: `pl.array.create` is a
//! `pto.declare_local_array`, reads are `pto.local_array_get`, writes `pto.local_array_set`
//! on the same declaration (SSA updates realised in place, also across loops and ifs — no
//! scf iter_arg carries an array); integer indices are `index`-cast, `index` values are cast
//! to the element type; TASK_ID arrays are rejected in a kernel.

mod common;
use common::*;
use pld_codegen_pto::{emit_program, CodegenOptions, CodegenOutput};
use pld_ir::Diagnostics;

const HISTOGRAM: &str = r#"
import pypto.language as pl

@pl.program
class Hist:
    @pl.function(type=pl.FunctionType.InCore)
    def hist(self, idx: pl.Tensor[[8, 2], pl.INT32], out: pl.Out[pl.Tensor[[4, 1], pl.INT32]], lim: pl.Scalar[pl.INT32]):
        counts = pl.array.create(4, pl.INT32)
        for e in pl.range(4):
            counts[e] = 0
        for t in pl.range(8):
            for k in pl.range(2):
                eid = pl.read(idx, [t, k])
                cur = counts[eid]
                counts[eid] = cur + 1
        for e in pl.range(4):
            c = counts[e]
            if c > lim:
                counts[e] = lim
        for e in pl.range(4):
            pl.write(out, [e, 0], counts[e])
        seen = pl.array.create(2, pl.BOOL)
        seen[1] = True
"#;

fn compile(text: &str) -> Result<CodegenOutput, Diagnostics> {
    init();
    let mut p = pld_frontend::parse_str(text).unwrap_or_else(|d| panic!("parse failed: {d}"));
    pld_passes::run_pipeline(&mut p, &pld_passes::PipelineOptions::default())
        .unwrap_or_else(|d| panic!("pipeline failed: {d}"));
    emit_program(&p, &CodegenOptions::default())
}

#[test]
fn histogram_kernel_uses_one_local_array_updated_in_place() {
    let out = compile(HISTOGRAM).unwrap_or_else(|d| panic!("codegen failed: {d}"));
    let text = only(&out);
    check(
        text,
        r#"
        CHECK: %counts = pto.declare_local_array -> !pto.local_array<4xi32>
        CHECK-NEXT: scf.for %e_idx = %c0_index to %c4_index step %c1_index {
        CHECK-NEXT: pto.local_array_set %counts[%e_idx], %c0_i32 : !pto.local_array<4xi32>, i32
        CHECK-NEXT: }
        CHECK: %eid = pto.load_scalar %arg0[
        CHECK-SAME: : !pto.ptr<i32> -> i32
        CHECK-NEXT: %eid_idx = arith.index_cast %eid : i32 to index
        CHECK-NEXT: %cur = pto.local_array_get %counts[%eid_idx] : !pto.local_array<4xi32> -> i32
        CHECK: pto.local_array_set %counts[
        CHECK-SAME: : !pto.local_array<4xi32>, i32
        CHECK: %c = pto.local_array_get %counts[
        CHECK-SAME: : !pto.local_array<4xi32> -> i32
        CHECK: scf.if
        CHECK-NEXT: pto.local_array_set %counts[
        CHECK-SAME: ], %arg2 : !pto.local_array<4xi32>, i32
        CHECK: %elem = pto.local_array_get %counts[
        CHECK-SAME: : !pto.local_array<4xi32> -> i32
        CHECK-NEXT: pto.store_scalar %elem, %arg1[
        CHECK: %seen = pto.declare_local_array -> !pto.local_array<2xi1>
        CHECK-NEXT: pto.local_array_set %seen[%c1_index], %ctrue_i1 : !pto.local_array<2xi1>, i1
        "#,
    );
    // One declaration per array; every version of `counts` is the same storage, and no
    // scf loop or if carries it as a value.
    assert_eq!(count(text, "pto.declare_local_array"), 2, "{text}");
    assert_eq!(count(text, "iter_args"), 0, "{text}");
    assert_eq!(count(text, "scf.yield"), 0, "{text}");
}

#[test]
fn index_values_are_cast_to_the_element_type() {
    let out = compile(
        r#"
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4], pl.INT64], y: pl.Out[pl.Tensor[[4], pl.INT64]]):
        arr = pl.array.create(4, pl.INT64)
        for i in pl.range(4):
            arr[i] = i
        pl.write(y, [3], arr[3])
"#,
    )
    .unwrap_or_else(|d| panic!("codegen failed: {d}"));
    check(
        only(&out),
        r#"
        CHECK: %arr = pto.declare_local_array -> !pto.local_array<4xi64>
        CHECK: scf.for %i_idx = %c0_index to %c4_index step %c1_index {
        CHECK-NEXT: = arith.index_cast %i_idx : index to i64
        CHECK-NEXT: pto.local_array_set %arr[%i_idx], %
        CHECK-SAME: : !pto.local_array<4xi64>, i64
        CHECK: pto.local_array_get %arr[%c3_index] : !pto.local_array<4xi64> -> i64
        "#,
    );
}

#[test]
fn a_task_id_array_has_no_kernel_form() {
    let r = compile(
        r#"
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4], pl.INT32]):
        ids = pl.array.create(4, pl.TASK_ID)
        ids[0] = ids[1]
"#,
    );
    let d = match r {
        Ok(o) => panic!("a TASK_ID array must not compile in a kernel:\n{}", only(&o)),
        Err(d) => d,
    };
    assert!(d.to_string().contains("TASK_ID arrays are an orchestration-only construct"), "{d}");
}
