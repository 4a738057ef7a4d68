//! End to end through the real frontend and pass pipeline: the reference programs of
//! codegen.md (§2 and Appendix A) and the repository examples compile to PTO modules whose
//! comm structure matches the reference compiler's output.

mod common;
use common::*;
use pld_codegen_pto::{emit_program, CodegenOptions, CodegenOutput};
use std::path::Path;

fn compile(path: &Path) -> CodegenOutput {
    init();
    let text = std::fs::read_to_string(path).unwrap();
    let mut p = match pld_frontend::parse_str(&text) {
        Ok(p) => p,
        Err(d) => {
            panic!("{}: parse failed: {:?}", path.display(), d.iter().map(|x| &x.message).collect::<Vec<_>>())
        }
    };
    if let Err(d) = pld_passes::run_pipeline(&mut p, &pld_passes::PipelineOptions::default()) {
        panic!("{}: pipeline failed: {:?}", path.display(), d.iter().map(|x| &x.message).collect::<Vec<_>>());
    }
    match emit_program(&p, &CodegenOptions::default()) {
        Ok(o) => o,
        Err(d) => panic!(
            "{}: codegen failed: {:?}",
            path.display(),
            d.iter().map(|x| &x.message).collect::<Vec<_>>()
        ),
    }
}

fn program_file(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs").join(name)
}

#[test]
fn reference_kernel_p_through_the_pipeline() {
    let out = compile(&program_file("kernel_p.py"));
    let text = module(&out, "kernel.pto");
    check(
        text,
        r#"
        CHECK: func.func @kernel(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>, %arg3: !pto.ptr<i32>, %arg4: i32, %arg5: !pto.ptr<i64>, %arg6: !pto.ptr<i64>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
        CHECK: pto.tload ins(%x_pview
        CHECK: pto.tstore
        CHECK-SAME: {atomicType = #pto<atomic_type atomic_add>}
        CHECK-NEXT: pto.cmo.cacheinvalid
        CHECK-NEXT: pto.fence.barrier_all #pto.fence_scope<gm>
        CHECK: pto.comm.tput(
        CHECK-SAME: {atomicType = #pto<atomic_type atomic_none>}
        CHECK: pto.fence.barrier_all
        CHECK: pto.barrier <PIPE_ALL>
        CHECK-NEXT: pto.comm.tnotify(
        CHECK-SAME: {notifyOp = #pto<notify_op atomic_add>}
        CHECK: pto.comm.twait(
        CHECK-NEXT: pto.cmo.cacheinvalid all #pto.address_space<gm>
        CHECK: pto.tload ins(
        CHECK: pto.tstore ins(
        CHECK-NOT: atomicType
        CHECK: pto.comm.tget(
        CHECK: return
        "#,
    );
    assert_peer_sequences(text, 5);
    assert_no_helpers(text);
}

#[test]
fn reference_kernel_q_through_the_pipeline() {
    let out = compile(&program_file("kernel_q.py"));
    let text = module(&out, "kernel2.pto");
    check(
        text,
        r#"
        CHECK: func.func @kernel2(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: !pto.ptr<i32>, %arg3: i32, %arg4: i32, %arg5: !pto.ptr<i64>, %arg6: !pto.ptr<i64>, %arg7: !pto.ptr<i64>)
        CHECK: = pto.load_scalar %arg7[%c2_index] : !pto.ptr<i64> -> i64
        CHECK-NEXT: %me = arith.trunci
        CHECK: arith.shrui
        CHECK: pto.alloc_tile
        CHECK-SAME: rows=4, cols=32
        CHECK: pto.alloc_tile
        CHECK-SAME: rows=4, cols=32
        CHECK: pto.comm.tput(
        CHECK-SAME: !pto.partition_tensor_view<16x64xf16>, !pto.partition_tensor_view<16x64xf16>, !pto.tile_buf<loc=vec, dtype=f16, rows=4, cols=32
        CHECK-SAME: {atomicType = #pto<atomic_type atomic_add>}
        CHECK: pto.comm.tget(
        CHECK-SAME: : !pto.partition_tensor_view<?x64xf16>, !pto.partition_tensor_view<?x64xf16>, !pto.tile_buf<loc=vec, dtype=f16, rows=4, cols=32
        CHECK: scf.for
        CHECK: pto.comm.tnotify(
        CHECK-SAME: {notifyOp = #pto<notify_op set>}
        CHECK: }
        CHECK: pto.comm.twait(
        CHECK-SAME: {cmp = #pto<wait_cmp eq>}
        "#,
    );
    let tput = text.lines().find(|l| l.contains("pto.comm.tput(")).unwrap();
    assert!(
        tput.contains("buf(%")
            && tput.split("buf(").nth(1).unwrap().split(')').next().unwrap().contains(", "),
        "pipelined put uses ping/pong: {tput}"
    );
    let tget = text.lines().find(|l| l.contains("pto.comm.tget(")).unwrap();
    assert!(
        !tget.split("buf(").nth(1).unwrap().split(')').next().unwrap().contains(", "),
        "unpipelined get has one stage: {tget}"
    );
    assert_peer_sequences(text, 3);
}

#[test]
fn repository_examples_compile_to_pto() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    for name in ["put_get_ring.py", "quickstart_allreduce.py", "allreduce_intrinsics.py", "remote_store.py"] {
        let out = compile(&dir.join(name));
        assert!(!out.modules.is_empty(), "{name}");
        for (m, text) in &out.modules {
            assert!(text.starts_with("module attributes {pto.target_arch = \"a2a3\"}"), "{m}");
            assert_no_helpers(text);
        }
        assert!(out.orchestration.contains("\"dispatches\""));
    }
}

#[test]
fn incore_collectives_lower_to_emittable_primitives() {
    let out = compile(&program_file("incore_collectives.py"));
    let k = module(&out, "k.pto");
    check(
        k,
        r#"
        CHECK: func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<i32>, %arg2: !pto.ptr<i64>, %arg3: !pto.ptr<i64>, %arg4: index)
        CHECK: %sig_view = pto.make_tensor_view %arg1, shape = [%arg4, %c1_index], strides = [%c1_index, %arg4] {layout = #pto.layout<dn>}
        CHECK: pto.comm.tnotify(
        CHECK: pto.comm.twait(
        CHECK: %acc_loaded = pto.alloc_tile addr = %c0_i64
        CHECK: %acc = pto.alloc_tile addr = %c416_i64
        CHECK-SAME: pad=1>
        CHECK-NEXT: pto.tfillpad ins(%acc_loaded
        CHECK: pto.tload ins(%data_peer_pview : !pto.partition_tensor_view<1x?xf32>)
        CHECK: pto.tmax ins(%acc, %recv_full
        CHECK: pto.tmov ins(%acc_next
        CHECK-SAME: outs(%acc :
        CHECK: %store_value = pto.alloc_tile addr = %c416_i64
        CHECK: pto.tstore ins(%store_value
        CHECK: pto.cmo.cacheinvalid
        CHECK-SAME: single_cache_line
        CHECK-NEXT: pto.fence.barrier_all
        CHECK: %cn2_i32 : !pto.partition_tensor_view<1x1xi32>, i32) {notifyOp = #pto<notify_op atomic_add>}
        "#,
    );
    assert_no_helpers(k);
    let k2 = module(&out, "k2.pto");
    check(
        k2,
        r#"
        CHECK: %gather_stage = pto.alloc_tile
        CHECK: scf.for
        CHECK: pto.comm.tput(%t_peer_pview, %inp_local_pview, buf(%gather_stage)
        CHECK: pto.comm.tget(
        CHECK-SAME: buf(%bcast_stage)
        "#,
    );
}

#[test]
fn host_allreduce_renders_its_builtin_kernel() {
    let out = compile(&program_file("host_allreduce.py"));
    let names: Vec<&str> = out.modules.iter().map(|m| m.0.as_str()).collect();
    assert_eq!(names, ["builtin_tensor_allreduce__sum__fp32_kernel.pto", "fill.pto"]);
    let k = module(&out, "builtin_tensor_allreduce__sum__fp32_kernel.pto");
    check(
        k,
        r#"
        CHECK: func.func @builtin_tensor_allreduce__sum__fp32_kernel(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<i32>, %arg2: !pto.ptr<i64>, %arg3: !pto.ptr<i64>, %arg4: index) attributes {pto.kernel_kind = #pto.kernel_kind<vector>}
        CHECK: = pto.make_tensor_view %arg1, shape = [%arg4, %c1_index], strides = [%c1_index, %arg4] {layout = #pto.layout<dn>}
        CHECK: pto.comm.tnotify(
        CHECK: pto.comm.twait(
        CHECK-NEXT: pto.cmo.cacheinvalid all #pto.address_space<gm>
        CHECK: _peer_pview : !pto.partition_tensor_view<1x?xf32>) outs(%recv
        CHECK: pto.tadd ins(
        CHECK: pto.tstore ins(%store_value
        CHECK-NEXT: partition_view
        CHECK-NEXT: pto.cmo.cacheinvalid
        CHECK-SAME: single_cache_line
        CHECK-NEXT: pto.fence.barrier_all #pto.fence_scope<gm>
        "#,
    );
    assert_no_helpers(k);
    check(
        &out.orchestration,
        r#"
        CHECK: "name": "builtin_tensor_allreduce__sum__fp32_kernel",
        CHECK-NEXT: "module": "builtin_tensor_allreduce__sum__fp32_kernel.pto",
        CHECK: "callee": "builtin.tensor.allreduce__sum__fp32",
        CHECK-NEXT: "level": "builtin",
        CHECK-NEXT: "device": "r",
        CHECK: "ranks": "all",
        CHECK: "kind": "window",
        CHECK-NEXT: "expr": "data",
        CHECK-NEXT: "buffer": "data_buf",
        CHECK: "kind": "comm_ctx",
        CHECK-NEXT: "buffer": "data_buf",
        CHECK: "builtins": [
        CHECK: "variant": "builtin.tensor.allreduce__sum__fp32",
        CHECK-NEXT: "entry": "builtin_tensor_allreduce__sum__fp32",
        CHECK-NEXT: "kernel_name": "builtin_tensor_allreduce__sum__fp32_kernel",
        CHECK-NEXT: "module": "builtin_tensor_allreduce__sum__fp32_kernel.pto",
        CHECK: "reduce_inst": "TADD",
        "#,
    );
}

#[test]
fn mixed_gemm_with_a_window_anchor_becomes_one_module_with_both_lanes() {
    let out = compile(&program_file("mixed_gemm.py"));
    let names: Vec<&str> = out.modules.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["gemm.pto"], "one module for the split kernel");
    let text = module(&out, "gemm.pto");
    check(
        text,
        r#"
        CHECK: module attributes {pto.target_arch = "a2a3"} {
        CHECK-NEXT: func.func @gemm_aic(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: !pto.ptr<f32>, %arg3: !pto.ptr<i32>, %arg4: !pto.ptr<i64>) attributes {pto.kernel_kind = #pto.kernel_kind<cube>} {
        CHECK-NOT: func.func
        CHECK: %a_mat = pto.alloc_tile
        CHECK-SAME: loc=mat, dtype=f16, rows=64, cols=64
        CHECK: pto.tload ins(%a_pview
        CHECK-SAME: outs(%a_mat : !pto.tile_buf<loc=mat
        CHECK: pto.tload ins(%b_pview
        CHECK-SAME: outs(%b_mat : !pto.tile_buf<loc=mat
        CHECK: pto.tmov ins(%a_mat
        CHECK-SAME: outs(%a_l : !pto.tile_buf<loc=left
        CHECK: pto.tmov ins(%b_mat
        CHECK-SAME: outs(%b_r : !pto.tile_buf<loc=right
        CHECK: pto.tmatmul ins(%a_l, %b_r
        CHECK-SAME: outs(%acc : !pto.tile_buf<loc=acc, dtype=f32
        CHECK: pto.tstore ins(%acc
        CHECK-NOT: pto.texpands
        CHECK-NOT: pto.fence
        CHECK: return
        CHECK: func.func @gemm_aiv(%arg0: !pto.ptr<f16>, %arg1: !pto.ptr<f16>, %arg2: !pto.ptr<f32>, %arg3: !pto.ptr<i32>, %arg4: !pto.ptr<i64>) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {
        CHECK-NOT: pto.tload
        CHECK: pto.texpands ins(%c0_i32 : i32) outs(%z : !pto.tile_buf<loc=vec, dtype=i32, rows=1, cols=8
        CHECK-NEXT: %scratch_pview = pto.partition_view %scratch_view
        CHECK-NEXT: pto.tstore ins(%z
        CHECK-NEXT: = pto.partition_view %scratch_view
        CHECK-NEXT: pto.cmo.cacheinvalid
        CHECK-NEXT: pto.fence.barrier_all #pto.fence_scope<gm>
        CHECK-NOT: pto.tmatmul
        CHECK: return
        CHECK-NEXT: }
        CHECK-NEXT: }
        "#,
    );
    assert_no_helpers(text);
    // Both lanes are described as kernels of the one module, launched as a group.
    let orch = &out.orchestration;
    assert!(orch.contains("\"name\": \"gemm_aic\"") && orch.contains("\"name\": \"gemm_aiv\""), "{orch}");
    assert_eq!(orch.matches("\"module\": \"gemm.pto\"").count(), 2, "{orch}");
}

#[test]
fn multi_block_host_allreduce_partitions_tiles_block_cyclically() {
    let out = compile(&program_file("host_allreduce_multicore.py"));
    let k = module(&out, "builtin_tensor_allreduce__sum__fp32_kernel.pto");
    // 1041 FP32 elements: full tiles 0..4 at 256 elements, block b of the C launched blocks
    // (the trailing __pypto_spmd_block_num parameter, core_num = 4 here) takes b, b+C, …; the 17-element tail (tile 4)
    // belongs to block 4 % C; every signal access uses column b. Seed: each block runs the
    // ready barrier once, then a read-done barrier per tile (generation 2 + (t - b) / C)
    // before its store, then the epilogue of 1 + its tile count.
    check(
        k,
        r#"
        CHECK: func.func @builtin_tensor_allreduce__sum__fp32_kernel(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<i32>, %arg2: !pto.ptr<i64>, %arg3: !pto.ptr<i64>, %arg4: index, %__pypto_spmd_block_idx: i32, %__pypto_spmd_block_num: i32) attributes {pto.kernel_kind = #pto.kernel_kind<vector>}
        CHECK-NOT: pto.get_block_
        CHECK: %signal_view = pto.make_tensor_view %arg1, shape = [%arg4, %c4_index], strides = [%c4_index, %c1_index]
        CHECK: = arith.index_cast %__pypto_spmd_block_idx : i32 to index
        CHECK-NEXT: = arith.cmpi slt,
        CHECK-SAME: %c4_index : index
        CHECK-NEXT: scf.if
        CHECK: = arith.index_cast %__pypto_spmd_block_idx
        CHECK: %signal_slice_view = pto.make_tensor_view
        CHECK-SAME: shape = [%arg4, %c1_index], strides = [%c4_index, %c1_index]
        CHECK: pto.comm.tnotify(
        CHECK: pto.comm.twait(%signal_local_pview, %c1_i32
        CHECK-SAME: {cmp = #pto<wait_cmp ge>}
        CHECK: = arith.index_cast %__pypto_spmd_block_idx : i32 to index
        CHECK-NEXT: = arith.index_cast %__pypto_spmd_block_num : i32 to index
        CHECK-NEXT: scf.for %t_idx =
        CHECK-SAME: to %c4_index step %
        CHECK: = arith.muli %t_idx, %c256_index : index
        CHECK: sizes = [%c1_index, %c256_index]
        CHECK: pto.tadd ins(
        CHECK: pto.comm.tnotify(
        CHECK: = arith.index_cast %__pypto_spmd_block_num
        CHECK: = arith.floordivsi
        CHECK: pto.comm.twait(
        CHECK: pto.tstore
        CHECK: pto.fence.barrier_all #pto.fence_scope<gm>
        CHECK: = arith.remsi %c4_index,
        CHECK: = arith.select
        CHECK-NEXT: = arith.cmpi eq,
        CHECK-NEXT: scf.if
        CHECK: sizes = [%c1_index, %c17_index]
        CHECK: pto.tadd ins(
        CHECK: pto.comm.twait(
        CHECK: pto.tstore
        CHECK: pto.comm.tnotify(
        CHECK: = arith.remsi %c4_index,
        CHECK: = arith.select
        CHECK-NEXT: = arith.cmpi ne,
        CHECK-NEXT: scf.if
        CHECK: pto.comm.tnotify(
        CHECK: return
        "#,
    );
    assert_no_helpers(k);
    // Every signal access goes through block b's column view, never the whole signal.
    assert!(!k.contains("pto.partition_view %signal_view"), "{k}");
    // One ready barrier per block: the only wait on generation 1 sits before the tile loop.
    assert_eq!(k.matches("pto.comm.twait(%signal_local_pview, %c1_i32").count(), 1, "{k}");
    check(
        &out.orchestration,
        r#"
        CHECK: "core_num": 4,
        CHECK: "launch_core_count_method": "set_block_num"
        "#,
    );
}

fn compile_text(text: &str) -> Result<CodegenOutput, Vec<String>> {
    init();
    let mut p =
        pld_frontend::parse_str(text).map_err(|d| d.iter().map(|x| x.message.clone()).collect::<Vec<_>>())?;
    pld_passes::run_pipeline(&mut p, &pld_passes::PipelineOptions::default())
        .map_err(|d| d.iter().map(|x| x.message.clone()).collect::<Vec<_>>())?;
    emit_program(&p, &CodegenOptions::default()).map_err(|d| d.iter().map(|x| x.message.clone()).collect())
}

/// Seed: "InCore lowering uses UB-bounded chunks; the host builtin uses 256-element chunks".
/// The single-block builtin kernel is the InCore mesh expansion, asked for the builtin's tile:
/// a 1000-element FP32 allreduce runs four 256-element tiles (not one 16 KiB chunk), each with
/// its read-done barrier, as the simulator's model of the builtin does.
#[test]
fn single_block_host_allreduce_kernel_works_in_the_seeds_256_element_tiles() {
    let out = compile_text(SINGLE_BLOCK_1000).unwrap_or_else(|e| panic!("{e:?}"));
    let k = module(&out, "builtin_tensor_allreduce__sum__fp32_kernel.pto");
    check(
        k,
        r#"
        CHECK: pto.comm.twait(
        CHECK: scf.for %col_idx = %c0_index to %c1000_index step %c256_index {
        CHECK: pto.alloc_tile
        CHECK-SAME: rows=1, cols=256
        CHECK: pto.tadd ins(
        CHECK: pto.comm.twait(
        CHECK: pto.tstore ins(%store_value
        "#,
    );
}

/// D-ops-12/13: host collectives over 128 Ki-element FP32 rows (512 KiB, where the reference's
/// kernels hold whole-row tiles against a 192 KiB UB) render kernels that fit: every tile gets a
/// planned UB address. The reduce_scatter reduces its row in 4096-element chunks, each stored
/// before the read-done wait; the allgather's puts slide the full-row transfer through a
/// 4096-element stage.
#[test]
fn host_collectives_over_long_rows_render_kernels_that_fit_ub() {
    let out = compile_text(LONG_ROWS).unwrap_or_else(|e| panic!("{e:?}"));
    for name in
        ["builtin_tensor_reduce_scatter__sum__fp32_kernel.pto", "builtin_tensor_allgather__fp32_kernel.pto"]
    {
        let k = module(&out, name);
        assert!(!k.contains("cols=131072"), "{name}:\n{k}");
        assert_eq!(
            k.matches("pto.alloc_tile").count(),
            k.matches("pto.alloc_tile addr = ").count(),
            "{name}:\n{k}"
        );
    }
    check(
        module(&out, "builtin_tensor_reduce_scatter__sum__fp32_kernel.pto"),
        r#"
        CHECK: pto.comm.twait(
        CHECK: scf.for %col_idx = %c0_index to %c131072_index step %c4096_index {
        CHECK: pto.alloc_tile addr =
        CHECK-SAME: rows=1, cols=4096
        CHECK: pto.tadd ins(
        CHECK: pto.tstore ins(%store_value
        CHECK: pto.comm.twait(
        "#,
    );
    check(
        module(&out, "builtin_tensor_allgather__fp32_kernel.pto"),
        r#"
        CHECK: pto.alloc_tile addr =
        CHECK-SAME: rows=1, cols=4096
        CHECK: pto.comm.tput(
        CHECK-SAME: 1x131072xf32
        "#,
    );
}

const LONG_ROWS: &str = r#"import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 131072

@pl.program
class LongRows:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, stage: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]], data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]]):
        t = pl.full([1, 1024], 1.0, dtype=pl.FP32)
        pl.store(t, [0, 0], stage)
        pl.store(t, [0, 0], data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def fill_orch(self, stage: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]], data: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.FP32]]):
        data = self.fill(stage, data)
        return data

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        stage_buf = pld.alloc_window_buffer(SIZE * 4, name="stage")
        data_buf = pld.alloc_window_buffer(pld.world_size() * SIZE * 4, name="data")
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4, name="signal")
        stage = pld.window(stage_buf, [1, SIZE], dtype=pl.FP32)
        data = pld.window(data_buf, [NR, SIZE], dtype=pl.FP32)
        signal = pld.window(sig_buf, [NR], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.fill_orch(stage, data, device=r)
        data = pld.tensor.reduce_scatter(data, signal, op=pld.ReduceOp.Sum)
        data = pld.tensor.allgather(stage, data, signal)
"#;

const SINGLE_BLOCK_1000: &str = r#"import pypto.language as pl
import pypto.language.distributed as pld

SIZE = 1000
NR = pl.dynamic("NR")

@pl.program
class AR:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        t = pl.load(inp, [0, 0], [1, SIZE])
        pl.store(t, [0, 0], data)
        return data

    @pl.function(type=pl.FunctionType.Orchestration)
    def fill_orch(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.Out[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        data = self.fill(inp, data)
        return data

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32]):
        data_buf = pld.alloc_window_buffer(SIZE * 4, name="data")
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        for r in pl.range(pld.world_size()):
            self.fill_orch(inputs[r], data, device=r)
        data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)
"#;

#[test]
fn a_variant_called_with_one_and_four_blocks_renders_the_multi_block_kernel() {
    let base = std::fs::read_to_string(program_file("host_allreduce_multicore.py")).unwrap();
    let last = "        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, core_num=4)";
    assert!(base.contains(last));
    // A one-block call first, then the four-block one: the kernel must serve both.
    let two = base.replace(
        last,
        &format!(
            "        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, core_num=1)\n{last}"
        ),
    );
    let out = compile_text(&two).unwrap_or_else(|m| panic!("{m:?}"));
    let k = module(&out, "builtin_tensor_allreduce__sum__fp32_kernel.pto");
    assert!(k.contains("%__pypto_spmd_block_num: i32") && !k.contains("pto.get_block_num"), "{k}");
}

/// A variant's kernel is rendered for one set of static shapes; a call of the same collective
/// with other shapes is its own variant (`<spec>__s2`), rendered for its shapes.
#[test]
fn calls_of_one_collective_with_other_shapes_are_their_own_variant() {
    let base = std::fs::read_to_string(program_file("host_allreduce_multicore.py")).unwrap();
    let last = "        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, core_num=4)";
    let other = base
        .replace(
            "        data_buf = pld.alloc_window_buffer(SIZE * 4)",
            "        data_buf = pld.alloc_window_buffer(SIZE * 4)\n        small_buf = pld.alloc_window_buffer(64 * 4)",
        )
        .replace(
            last,
            &format!(
                "{last}\n        small = pld.window(small_buf, [1, 64], dtype=pl.FP32)\n        small = pld.tensor.allreduce(small, signal, op=pld.ReduceOp.Sum, core_num=4)"
            ),
        );
    let out = compile_text(&other).unwrap_or_else(|e| panic!("{e:?}"));
    let first = module(&out, "builtin_tensor_allreduce__sum__fp32_kernel.pto");
    let second = module(&out, "builtin_tensor_allreduce__sum__fp32__s2_kernel.pto");
    assert_ne!(first, second.replace("__s2", ""), "the two variants are rendered for their own shapes");
}

/// Lowers `file` (a GEMM program with `a [P, 64, 64]`, `b [64, 64]`, `c [P, 64, 64]`), runs
/// it on `ranks` simulated ranks under `schedule` and checks `c[r] = a[r] @ b`.
fn check_gemm_on_the_simulator(file: &str, ranks: usize, schedule: pld_sim::Schedule) {
    init();
    let text = std::fs::read_to_string(program_file(file)).unwrap();
    let mut p =
        pld_frontend::parse_str(&text).unwrap_or_else(|d| panic!("{:?}", d.iter().collect::<Vec<_>>()));
    pld_passes::run_pipeline(&mut p, &pld_passes::PipelineOptions::default())
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()));
    assert!(p.function("gemm_aic").is_some() && p.function("gemm_aiv").is_some());
    let m = 64usize;
    let a: Vec<f64> = (0..ranks * m * m).map(|i| ((i * 7) % 5) as f64 - 2.0).collect();
    let b: Vec<f64> = (0..m * m).map(|i| ((i * 3) % 7) as f64 - 3.0).collect();
    let mut inputs = pld_sim::Inputs::new();
    inputs.insert("a".into(), pld_sim::HostTensor::from_f64(pld_ir::DataType::FP16, vec![ranks, m, m], &a));
    inputs.insert("b".into(), pld_sim::HostTensor::from_f64(pld_ir::DataType::FP16, vec![m, m], &b));
    let cfg = pld_sim::SimConfig { schedule, ..pld_sim::SimConfig::ranks(ranks) };
    let out =
        pld_sim::run(&p, "host_orch", &inputs, &cfg).unwrap_or_else(|e| panic!("simulation failed: {e:?}"));
    let c = out.outputs["c"].to_f64();
    for r in 0..ranks {
        for i in 0..m {
            for j in 0..m {
                let want: f64 = (0..m).map(|k| a[r * m * m + i * m + k] * b[k * m + j]).sum();
                assert_eq!(c[r * m * m + i * m + j], want, "{file}: rank {r} c[{i}][{j}]");
            }
        }
    }
}

#[test]
fn lowered_mixed_gemm_computes_the_product_on_the_simulator() {
    // The split program (gemm_aic + gemm_aiv launched as one group) is what codegen emits;
    // running it checks the split kept the GEMM on the cube lane and the anchor on the other.
    check_gemm_on_the_simulator("mixed_gemm.py", 2, pld_sim::Schedule::Deterministic);
}

#[test]
fn mixed_gemm_with_a_handshake_publishes_from_the_vector_lane_only() {
    let out = compile(&program_file("mixed_gemm_barrier.py"));
    let names: Vec<&str> = out.modules.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["gemm.pto"]);
    let text = module(&out, "gemm.pto");
    let (aic, aiv) = text.split_at(text.find("func.func @gemm_aiv").expect("gemm_aiv in the module"));
    assert!(aic.contains("func.func @gemm_aic") && aic.contains("pto.tmatmul"), "{aic}");
    assert!(!aic.contains("pto.comm.tnotify"), "the cube lane must not publish:\n{aic}");
    assert_eq!(aiv.matches("pto.comm.tnotify(").count(), 1, "{aiv}");
    assert!(!aiv.contains("pto.tmatmul"), "{aiv}");
    // The wait is shared: both lanes wait for the previous rank.
    assert_eq!(aic.matches("pto.comm.twait(").count(), 1, "{aic}");
    assert_eq!(aiv.matches("pto.comm.twait(").count(), 1, "{aiv}");
    check(
        aiv,
        r#"
        CHECK: pto.barrier <PIPE_ALL>
        CHECK-NEXT: pto.comm.tnotify(
        CHECK-SAME: {notifyOp = #pto<notify_op atomic_add>}
        CHECK: pto.comm.twait(
        CHECK-NEXT: pto.cmo.cacheinvalid all #pto.address_space<gm>
        "#,
    );
    assert_no_helpers(text);
    for schedule in
        [pld_sim::Schedule::Deterministic, pld_sim::Schedule::Random(1), pld_sim::Schedule::Random(7)]
    {
        check_gemm_on_the_simulator("mixed_gemm_barrier.py", 3, schedule);
    }
}

/// A host ring allreduce on a static rank count: the builtin's signal is
/// `[2*(NR-1)+1, NR]`; the rendered kernel hands the round rows to the ring expansion and ends
/// with a return barrier (notify, wait, self-clear) on the last row.
#[test]
fn the_ring_builtin_kernel_ends_with_a_return_barrier_on_its_last_row() {
    let text = r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = 4
SIZE = 64

@pl.program
class HostRing:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        t = pl.load(inp, [0, 0], [1, SIZE])
        pl.store(t, [0, 0], data)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(self, inp: pl.Tensor[[1, SIZE], pl.FP32], data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.FP32]]):
        self.fill(inp, data)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self, inputs: pl.Tensor[[NR, 1, SIZE], pl.FP32]):
        data_buf = pld.alloc_window_buffer(SIZE * 4)
        signal_buf = pld.alloc_window_buffer((2 * (NR - 1) + 1) * NR * 4)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.FP32)
        signal = pld.window(signal_buf, [2 * (NR - 1) + 1, NR], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip_orch(inputs[r], data, device=r)
        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, mode="ring")
"#;
    let out = compile_text(text).unwrap_or_else(|m| panic!("{m:?}"));
    let k = module(&out, "builtin_tensor_allreduce_ring__sum__fp32_kernel.pto");
    // The return row starts at element 2*(NR-1)*NR = 24 of the signal.
    let tail = &k[k
        .rfind("arith.muli %c6_index, %c4_index")
        .unwrap_or_else(|| panic!("no return-row offset:\n{k}"))..];
    let notifies: Vec<&str> = tail.lines().filter(|l| l.contains("pto.comm.tnotify")).collect();
    let waits = tail.lines().filter(|l| l.contains("pto.comm.twait")).count();
    assert_eq!(notifies.len(), 2, "one credit per peer, then the clear:\n{tail}");
    assert!(notifies[0].contains("%c1_i32") && notifies[1].contains("%cn1_i32"), "{tail}");
    assert_eq!(waits, 1, "{tail}");
}

/// A builtin kernel the lowering cannot build is reported at the host call that needs it
/// (its source text), with the lowering's reason and the variant — not as an error without a
/// location.
#[test]
fn a_builtin_kernel_that_cannot_be_built_is_reported_at_its_host_call() {
    init();
    let base = std::fs::read_to_string(program_file("host_allreduce_multicore.py")).unwrap();
    let last = "        data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, core_num=4)";
    // An FP16 variant over a window with a dynamic row count: a multi-block kernel needs a
    // static extent.
    let call = "rows = pld.tensor.allreduce(rows, signal, op=pld.ReduceOp.Sum, core_num=4)";
    let text = base.replace(
        last,
        &format!(
            "{last}\n        rows_buf = pld.alloc_window_buffer(pld.world_size() * 16 * 2)\n        rows = pld.window(rows_buf, [NR, 16], dtype=pl.FP16)\n        {call}"
        ),
    );
    let mut p =
        pld_frontend::parse_str(&text).unwrap_or_else(|d| panic!("{:?}", d.iter().collect::<Vec<_>>()));
    pld_passes::run_pipeline(&mut p, &pld_passes::PipelineOptions::default())
        .unwrap_or_else(|d| panic!("{:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()));
    let diags: Vec<_> = emit_program(&p, &CodegenOptions::default()).unwrap_err().into_iter().collect();
    let kernel: Vec<_> = diags.iter().filter(|d| d.message.starts_with("builtin kernel")).collect();
    assert_eq!(kernel.len(), 1, "{diags:?}");
    assert!(
        kernel[0].message.starts_with(
            "builtin kernel builtin.tensor.allreduce__sum__fp16: core_num=4 needs a static data extent"
        ),
        "{diags:?}"
    );
    let at = kernel[0].span;
    assert_eq!(&text[at.lo as usize..at.hi as usize], call, "{diags:?}");
}
