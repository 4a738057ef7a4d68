//! The PTO verifier: one negative test per encoded rule (hand-made typed kernels, or a DSL
//! program that produced the violation), the user-facing diagnostics (the user's line, the
//! instruction and a fix), and the regression programs of issue #20 on both targets.

mod common;
use common::*;
use pld_codegen_pto::pto::{Dps, Inst, Line, Literal, OpClass, Operand, PtoType, TileBuf};
use pld_codegen_pto::verify::{rules::RULES, verify_kernel, Kernel, TilePlan};
use pld_codegen_pto::{emit_program, CodegenOptions, CodegenOutput, MTy};
use pld_ir::{Diagnostic, Diagnostics, FileId, SourceMap, Span, Target};

const F32_ROW: &str = "!pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=256, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>";

fn buf(ty: &str) -> TileBuf {
    TileBuf::parse(ty).expect("a long-form tile type")
}

fn line(inst: Inst) -> Line {
    Line { indent: 1, inst, span: Span::DUMMY }
}

/// `%c<v> = arith.constant <v> : index`.
fn konst(v: i64) -> Line {
    line(Inst::Const { result: format!("%c{v}"), value: Literal::Int(v), ty: MTy::Index })
}

/// A `pto.alloc_tile` of slot `slot` with no valid operands.
fn alloc(ssa: &str, ty: &str, slot: usize) -> Line {
    line(Inst::AllocTile { result: ssa.into(), slot, valid_row: None, valid_col: None, ty: buf(ty) })
}

/// A tile instruction of class `class` on `(ssa, type)` tiles, sources first, destination last.
fn tile_op(op: &'static str, class: OpClass, tiles: &[(&str, &str)]) -> Line {
    let mut ops: Vec<Operand> = tiles.iter().map(|(s, t)| Operand::new(*s, buf(t))).collect();
    let outs = ops.split_off(ops.len().saturating_sub(1));
    line(Inst::Dps(Dps { class, ..Dps::new(op, ops, outs) }))
}

/// A kernel `k` of `lines` whose slots are at `addrs` (`None`: no address plan fits), none
/// aliased or freed.
fn kernel(target: Target, lines: Vec<Line>, addrs: Option<Vec<u64>>) -> Kernel {
    let slots = lines
        .iter()
        .filter_map(|l| match &l.inst {
            Inst::AllocTile { slot, .. } => Some(slot + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let plan = TilePlan { addrs, aliases: vec![None; slots], freed_at: vec![None; slots], high: Vec::new() };
    Kernel { name: "k".into(), span: Span::DUMMY, target, params: Vec::new(), lines, plan }
}

/// The messages of `k`'s violations of rule `rule` (every violation names its rule).
fn violations(k: &Kernel, rule: &str) -> Vec<String> {
    let all: Vec<String> = verify_kernel(k).into_iter().map(|d| d.message).collect();
    let tag = format!("[pto verifier: {rule}]");
    all.into_iter().filter(|m| m.contains(&tag)).collect()
}

#[test]
fn every_rule_names_the_source_it_mirrors() {
    let ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
    for want in [
        "tile-row-align",
        "tile-valid-shape",
        "elementwise-one-tile-type",
        "tile-buffer-capacity",
        "level3-addresses",
        "comm-stage-vec",
        "partition-view",
        "signless-scalar",
    ] {
        assert!(ids.contains(&want), "missing rule {want}: {ids:?}");
    }
    for r in RULES {
        assert!(r.mirrors.len() > 20, "rule {} must name its source", r.id);
    }
}

#[test]
fn tile_types_round_trip() {
    let t = buf(F32_ROW);
    assert_eq!((t.rows, t.cols, t.valid[0], t.pad), (1, 256, None, 0));
    assert_eq!(t.to_string(), F32_ROW);
    assert_eq!(t.bytes(), 1024);
    assert!(TileBuf::parse("!pto.tile_buf<loc=vec, dtype=f32>").is_none());
    assert!(TileBuf::parse("!pto.partition_tensor_view<1x4xf32>").is_none());
}

#[test]
fn a_violation_points_at_its_instructions_line_and_names_the_instruction() {
    let bad_row = F32_ROW.replace("cols=256", "cols=4097");
    let at = Span::new(FileId(3), 40, 52);
    let mut a = alloc("%chunk", &bad_row, 0);
    a.span = at;
    let k = kernel(Target::A2A3, vec![a, alloc("%ok", F32_ROW, 1)], Some(vec![0, 16416]));
    let d: Vec<Diagnostic> = verify_kernel(&k);
    assert_eq!(d.len(), 1, "{:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>());
    assert_eq!(d[0].span, at, "the span of the line that allocated the tile");
    assert!(d[0].message.starts_with("kernel 'k': pto.alloc_tile: tile %chunk"), "{}", d[0].message);
    assert!(
        d[0].notes
            .iter()
            .any(|n| n.starts_with("in `%chunk = pto.alloc_tile addr = %c0_i64 : !pto.tile_buf<")),
        "{:?}",
        d[0].notes
    );
    // A line without a source (a builtin kernel's) falls back to the kernel's span.
    let mut k = k;
    k.span = Span::new(FileId(3), 1, 2);
    k.lines[0].span = Span::DUMMY;
    assert_eq!(verify_kernel(&k)[0].span, k.span);
}

#[test]
fn row_alignment_per_layout() {
    // Row-major: cols * 4 bytes; 4097 f32 is 16388 bytes (the allreduce chunk of issue #20).
    let bad_row = F32_ROW.replace("cols=256", "cols=4097");
    let k = kernel(Target::A2A3, vec![alloc("%chunk", &bad_row, 0)], Some(vec![0]));
    let v = violations(&k, "tile-row-align");
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].contains("16388 bytes"), "{}", v[0]);
    // Col-major column vector: rows * 4 bytes; 4 rows of i32 are 16 bytes.
    let col = "!pto.tile_buf<loc=vec, dtype=i32, rows=4, cols=1, v_row=?, v_col=?, blayout=col_major, slayout=none_box, fractal=512, pad=0>";
    let k = kernel(Target::A2A3, vec![alloc("%colv", col, 0)], Some(vec![0]));
    assert_eq!(violations(&k, "tile-row-align").len(), 1);
    let col8 = col.replace("rows=4", "rows=8");
    let k = kernel(Target::A2A3, vec![alloc("%colv", &col8, 0)], Some(vec![0]));
    assert!(violations(&k, "tile-row-align").is_empty());
    // Boxed (left, 512-byte fractal, row-major boxes of 16 x 32 bytes): 16x16 f16 is fine,
    // 16x8 is half a box.
    let left = "!pto.tile_buf<loc=left, dtype=f16, rows=16, cols=16, v_row=?, v_col=?, blayout=col_major, slayout=row_major, fractal=512, pad=0>";
    assert!(violations(&kernel(Target::A2A3, vec![alloc("%l", left, 0)], Some(vec![0])), "tile-row-align")
        .is_empty());
    let half = left.replace("cols=16", "cols=8");
    assert_eq!(
        violations(&kernel(Target::A2A3, vec![alloc("%l", &half, 0)], Some(vec![0])), "tile-row-align").len(),
        1
    );
    // An element type of no known size.
    let odd = F32_ROW.replace("dtype=f32", "dtype=f7");
    let v = violations(&kernel(Target::A2A3, vec![alloc("%o", &odd, 0)], Some(vec![0])), "tile-row-align");
    assert!(v.len() == 1 && v[0].contains("no known size"), "{v:?}");
}

#[test]
fn the_fix_keeps_the_constant_valid_operands_as_valid_shape() {
    let narrow = F32_ROW.replace("cols=256", "cols=5");
    let a = line(Inst::AllocTile {
        result: "%t".into(),
        slot: 0,
        valid_row: Some("%c1".into()),
        valid_col: Some("%c3".into()),
        ty: buf(&narrow),
    });
    let k = kernel(Target::A2A3, vec![konst(1), konst(3), a], Some(vec![0]));
    let d: Vec<Diagnostic> = verify_kernel(&k);
    assert_eq!(d.len(), 1);
    assert!(
        d[0].notes.iter().any(|n| n.contains("pad cols to 8 (shape [1, 8]) and pass valid_shape=[1, 3]")),
        "{:?}",
        d[0].notes
    );
}

#[test]
fn a_view_is_a_tile_type_of_its_own() {
    // A `pto.subview` result (no allocation of its own) with 5-column f32 rows.
    let view =
        F32_ROW.replace("cols=256", "cols=5").replace("v_col=?", "v_col=5").replace("v_row=?", "v_row=1");
    let op = tile_op("pto.tadds", OpClass::Elementwise, &[("%view", &view), ("%d", &view)]);
    let k = kernel(Target::A2A3, vec![alloc("%d", F32_ROW, 0), op], Some(vec![0]));
    let v = violations(&k, "tile-row-align");
    assert_eq!(v.len(), 1, "only the view, once: {v:?}");
    assert!(v[0].contains("pto.tadds: tile %view") && v[0].contains("20 bytes"), "{}", v[0]);
}

#[test]
fn valid_shape_must_lie_within_the_shape() {
    let over = F32_ROW.replace("v_col=?", "v_col=300");
    let k = kernel(Target::A2A3, vec![alloc("%t", &over, 0)], Some(vec![0]));
    assert_eq!(violations(&k, "tile-valid-shape").len(), 1);
    let a = line(Inst::AllocTile {
        result: "%t".into(),
        slot: 0,
        valid_row: Some("%c1".into()),
        valid_col: Some("%c257".into()),
        ty: buf(F32_ROW),
    });
    let v = violations(
        &kernel(Target::A2A3, vec![konst(1), konst(257), a.clone()], Some(vec![0])),
        "tile-valid-shape",
    );
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].contains("257"), "{}", v[0]);
    // A runtime valid operand is not checked.
    let v = violations(&kernel(Target::A2A3, vec![konst(1), a], Some(vec![0])), "tile-valid-shape");
    assert!(v.is_empty(), "{v:?}");
    // An instruction's operand is a tile type too.
    let empty = F32_ROW.replace("rows=1", "rows=0");
    let op = tile_op("pto.tmov", OpClass::Other, &[("%s", &empty), ("%d", F32_ROW)]);
    let v = violations(&kernel(Target::A2A3, vec![op], None), "tile-valid-shape");
    assert!(v.len() == 1 && v[0].contains("%s has a non-positive physical shape"), "{v:?}");
}

#[test]
fn elementwise_operands_are_one_tile_type() {
    let padded = F32_ROW.replace("pad=0", "pad=1");
    let op = |dst: &str, class: OpClass| {
        tile_op("pto.tadd", class, &[("%a", padded.as_str()), ("%b", padded.as_str()), ("%d", dst)])
    };
    // The builtin allreduce of issue #20: zero-padded sources, a pad=0 destination.
    let v = violations(
        &kernel(Target::A2A3, vec![op(F32_ROW, OpClass::Elementwise)], None),
        "elementwise-one-tile-type",
    );
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(
        v[0].contains("pto.tadd: source %a and destination %d") && v[0].contains("pad 1 vs 0"),
        "{}",
        v[0]
    );
    // Two sources that disagree are named as such.
    let mixed =
        tile_op("pto.tmax", OpClass::Elementwise, &[("%a", &padded), ("%b", F32_ROW), ("%d", &padded)]);
    let v = violations(&kernel(Target::A2A3, vec![mixed], None), "elementwise-one-tile-type");
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].contains("sources %a and %b"), "{}", v[0]);
    assert!(violations(
        &kernel(Target::A2A3, vec![op(&padded, OpClass::Elementwise)], None),
        "elementwise-one-tile-type"
    )
    .is_empty());
    // A conversion may change only the element type; an elementwise op may not.
    let f16 = padded.replace("dtype=f32", "dtype=f16");
    let v = violations(
        &kernel(Target::A2A3, vec![op(&f16, OpClass::Elementwise)], None),
        "elementwise-one-tile-type",
    );
    assert!(v.len() == 1 && v[0].contains("dtype f32 vs f16"), "{v:?}");
    assert!(violations(
        &kernel(Target::A2A3, vec![op(&f16, OpClass::Convert)], None),
        "elementwise-one-tile-type"
    )
    .is_empty());
    let f16_wide = f16.replace("cols=256", "cols=512");
    assert_eq!(
        violations(
            &kernel(Target::A2A3, vec![op(&f16_wide, OpClass::Convert)], None),
            "elementwise-one-tile-type"
        )
        .len(),
        1
    );
    // Loads and stores relate nothing.
    assert!(violations(
        &kernel(Target::A2A3, vec![op(&f16_wide, OpClass::Other)], None),
        "elementwise-one-tile-type"
    )
    .is_empty());
}

#[test]
fn tile_buffers_fit_and_do_not_overlap_while_live() {
    // 48 KiB f32 rows: four fit A2/A3's 192 KiB UB; a fifth at 192 KiB does not.
    let big = F32_ROW.replace("cols=256", "cols=12288");
    let five: Vec<Line> = (0..5).map(|i| alloc(&format!("%t{i}"), &big, i)).collect();
    let addrs: Vec<u64> = (0..5).map(|i| i as u64 * 49152).collect();
    let k = kernel(Target::A2A3, five.clone(), Some(addrs.clone()));
    let v = violations(&k, "tile-buffer-capacity");
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].contains("196608-byte capacity"), "{}", v[0]);
    // A5 has 256 KiB of UB.
    assert!(violations(&kernel(Target::A5, five, Some(addrs)), "tile-buffer-capacity").is_empty());
    // Two live tiles on one address overlap; after the first one's region is released they do not.
    let two = vec![alloc("%a", F32_ROW, 0), alloc("%b", F32_ROW, 1)];
    let mut k = kernel(Target::A2A3, two, Some(vec![0, 0]));
    let v = violations(&k, "tile-buffer-capacity");
    assert!(v.len() == 1 && v[0].contains("%b (0..1024 of vec) overlaps live tile %a"), "{v:?}");
    k.plan.freed_at[0] = Some(1);
    assert!(violations(&k, "tile-buffer-capacity").is_empty());
    // Freed only from a later slot on: still live when %b is allocated.
    k.plan.freed_at[0] = Some(2);
    assert_eq!(violations(&k, "tile-buffer-capacity").len(), 1);
    // An alias of a live tile's buffer is not an overlap.
    k.plan.freed_at[0] = None;
    k.plan.aliases[1] = Some(0);
    assert!(violations(&k, "tile-buffer-capacity").is_empty());
    // A misaligned address, and a slot the plan has no address for.
    let k = kernel(Target::A2A3, vec![alloc("%a", F32_ROW, 0), alloc("%b", F32_ROW, 1)], Some(vec![16]));
    let v = violations(&k, "tile-buffer-capacity");
    assert!(v.iter().any(|m| m.contains("%a address 16 is not 32-byte aligned")), "{v:?}");
    assert!(v.iter().any(|m| m.contains("%b has no address")), "{v:?}");
}

#[test]
fn level3_needs_every_address() {
    let mut k = kernel(Target::A2A3, vec![alloc("%t", F32_ROW, 0)], None);
    k.plan.high = vec![("vec".into(), 300_000)];
    let v = violations(&k, "level3-addresses");
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(
        v[0].contains("kernel 'k'") && v[0].contains("300000 bytes of vec (capacity 196608)"),
        "{}",
        v[0]
    );
    k.plan.addrs = Some(vec![0]);
    assert!(violations(&k, "level3-addresses").is_empty());
    // A kernel without tiles needs no addresses.
    assert!(violations(&kernel(Target::A2A3, vec![konst(1)], None), "level3-addresses").is_empty());
}

/// A `pto.comm.<op>` of a 1x256 `f32` view staged through `stages`.
fn transfer(op: &'static str, stages: &[(&str, &str)]) -> Line {
    let pv = PtoType::PartitionView { dims: vec![Some(1), Some(256)], elem: "f32" };
    let operands = vec![Operand::new("%dst", pv.clone()), Operand::new("%src", pv)];
    let buf = stages.iter().map(|(s, t)| Operand::new(*s, buf(t))).collect();
    line(Inst::Comm { op, operands, buf, attrs: Vec::new() })
}

#[test]
fn comm_staging_tiles_are_vec_tiles_of_the_source_dtype() {
    let k = |l: Line| kernel(Target::A2A3, vec![l], None);
    assert!(violations(&k(transfer("pto.comm.tput", &[("%s", F32_ROW)])), "comm-stage-vec").is_empty());
    let mat = F32_ROW.replace("loc=vec", "loc=mat");
    let v = violations(&k(transfer("pto.comm.tput", &[("%s", &mat)])), "comm-stage-vec");
    assert!(v.len() == 1 && v[0].contains("pto.comm.tput: staging tile %s is in mat"), "{v:?}");
    let f16 = F32_ROW.replace("dtype=f32", "dtype=f16");
    let v = violations(&k(transfer("pto.comm.tput", &[("%s", &f16)])), "comm-stage-vec");
    assert!(v.len() == 1 && v[0].contains("the transfer moves f32"), "{v:?}");
    let flat = F32_ROW.replace("rows=1", "rows=0");
    assert_eq!(violations(&k(transfer("pto.comm.tput", &[("%s", &flat)])), "comm-stage-vec").len(), 1);
    let half = F32_ROW.replace("cols=256", "cols=128");
    let pingpong = transfer("pto.comm.tget", &[("%ping", F32_ROW), ("%pong", &half)]);
    let v = violations(&k(pingpong), "comm-stage-vec");
    assert!(v.len() == 1 && v[0].contains("pong tile %pong"), "{v:?}");
}

/// A tensor view `%x_view` of static `dims` (`None`: the runtime value `%n`) and a partition
/// of it; constants for every static value.
fn partitioned(
    dims: &[Option<i64>],
    offsets: &[Option<i64>],
    sizes: &[Option<i64>],
    tail_slack: i64,
) -> Kernel {
    let mut values: Vec<i64> = dims.iter().chain(offsets).chain(sizes).flatten().copied().collect();
    values.sort_unstable();
    values.dedup();
    let name = |v: &Option<i64>| v.map_or_else(|| "%n".to_string(), |v| format!("%c{v}"));
    let mut lines: Vec<Line> = values.into_iter().map(konst).collect();
    let view_ty = PtoType::TensorView { rank: dims.len(), elem: "f32" };
    lines.push(line(Inst::MakeTensorView {
        result: "%x_view".into(),
        ptr: "%x".into(),
        shape: dims.iter().map(name).collect(),
        strides: dims.iter().map(|_| "%n".to_string()).collect(),
        layout: "nd",
        ty: view_ty.clone(),
    }));
    lines.push(line(Inst::PartitionView {
        result: "%x_pview".into(),
        view: "%x_view".into(),
        offsets: offsets.iter().map(name).collect(),
        sizes: sizes.iter().map(name).collect(),
        view_ty,
        ty: PtoType::PartitionView { dims: sizes.to_vec(), elem: "f32" },
        tail_slack,
    }));
    kernel(Target::A2A3, lines, None)
}

#[test]
fn partition_views_match_their_tensor_view() {
    let part =
        |offsets: &[Option<i64>], sizes: &[Option<i64>]| partitioned(&[Some(16), None], offsets, sizes, 0);
    // A padded FP16 tail may end up to its slack past the innermost extent, no further.
    let tail =
        |end: i64| partitioned(&[Some(1), Some(777)], &[Some(0), Some(768)], &[Some(1), Some(end - 768)], 15);
    assert!(violations(&tail(792), "partition-view").is_empty());
    assert_eq!(violations(&tail(793), "partition-view").len(), 1);
    assert!(violations(&part(&[Some(8), None], &[Some(8), Some(64)]), "partition-view").is_empty());
    let v = violations(&part(&[Some(9), None], &[Some(8), Some(64)]), "partition-view");
    assert!(
        v.len() == 1
            && v[0].contains("pto.partition_view: partition %x_pview of %x_view exceeds dimension 0"),
        "{v:?}"
    );
    // A runtime offset is not checked against the static dim; the size still is.
    assert!(violations(&part(&[None, None], &[Some(16), Some(64)]), "partition-view").is_empty());
    assert_eq!(violations(&part(&[None, None], &[Some(17), Some(64)]), "partition-view").len(), 1);
    assert_eq!(violations(&part(&[Some(0)], &[Some(8), Some(64)]), "partition-view").len(), 1);
    assert_eq!(violations(&part(&[Some(0), Some(0)], &[Some(0), Some(64)]), "partition-view").len(), 1);
    assert_eq!(violations(&part(&[Some(-1), Some(0)], &[Some(8), Some(64)]), "partition-view").len(), 1);
}

#[test]
fn scalars_are_types_pto_accepts() {
    let mut k = kernel(Target::A2A3, Vec::new(), None);
    k.params =
        [MTy::Int(32), MTy::Index, MTy::F16].into_iter().map(|t| ("%p".to_string(), t.into())).collect();
    assert!(violations(&k, "signless-scalar").is_empty());
    // An integer width pto has no scalar of, as a parameter, a tile op's operand and its result.
    k.params.push(("%odd".into(), MTy::Int(7).into()));
    let ins = vec![Operand::new("%t", buf(F32_ROW)), Operand::new("%w", MTy::Int(128))];
    let read = Dps { result: Some(("%r".into(), MTy::Int(24))), ..Dps::new("pto.tgetval", ins, Vec::new()) };
    k.lines.push(line(Inst::Dps(read)));
    let v = violations(&k, "signless-scalar");
    assert_eq!(v.len(), 3, "{v:?}");
    assert!(v[0].contains("kernel 'k': parameter %odd has scalar type i7"), "{}", v[0]);
    assert!(v[1].contains("pto.tgetval: result %r has scalar type i24"), "{}", v[1]);
    assert!(v[2].contains("scalar operand %w has scalar type i128"), "{}", v[2]);
}

// ----------------------------------------------------------------------------------------
// Programs
// ----------------------------------------------------------------------------------------

fn compile_src(text: &str, target: Target) -> (Result<CodegenOutput, Diagnostics>, SourceMap) {
    init();
    let mut sources = SourceMap::new();
    let opts = pld_frontend::ParseOptions::default();
    let mut p = match pld_frontend::parse_program(&mut sources, "user.py", text, &opts) {
        Ok(p) => p,
        Err(d) => panic!("parse failed: {:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()),
    };
    let popts = pld_passes::PipelineOptions { target, ..Default::default() };
    if let Err(d) = pld_passes::run_pipeline(&mut p, &popts) {
        panic!("pipeline failed: {:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>());
    }
    (emit_program(&p, &CodegenOptions { target }), sources)
}

/// The 1-based source line of a diagnostic's span.
fn line_of(sources: &SourceMap, span: Span) -> usize {
    let f = sources.get(span.file).expect("a real span");
    f.line_col(span.lo).0
}

const USER_COUNT_TILE: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class Counts:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, cnt: pl.Tensor[[4, 1], pl.INT32], out: pl.Out[pl.Tensor[[4, 1], pl.INT32]]):
        for d in pl.range(4):
            c = pl.load(cnt, [d, 0], [1, 1])
            pl.store(c, [d, 0], out)
"#;

#[test]
fn a_users_unaligned_tile_is_reported_at_the_users_line_with_the_fix() {
    for target in [Target::A2A3, Target::A5] {
        let (out, sources) = compile_src(USER_COUNT_TILE, target);
        let d = out.expect_err("a [1, 1] INT32 tile row is 4 bytes");
        let d: Vec<_> = d.iter().collect();
        assert_eq!(d.len(), 1, "{:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>());
        assert!(
            d[0].message.contains("kernel 'copy': pto.alloc_tile: tile %c")
                && d[0].message.contains("4 bytes"),
            "{}",
            d[0].message
        );
        assert_eq!(line_of(&sources, d[0].span), 10, "the pl.load line");
        assert!(
            d[0].notes.iter().any(|n| n.contains("pad cols to 8") && n.contains("valid_shape=[1, 1]")),
            "{:?}",
            d[0].notes
        );
    }
    // The suggested fix compiles.
    let fixed = USER_COUNT_TILE.replace("[1, 1])", "[1, 8], valid_shape=[1, 1])");
    let (out, _) = compile_src(&fixed, Target::A2A3);
    let out = out.expect("the padded tile is accepted");
    check(
        only(&out),
        "CHECK: %c = pto.alloc_tile addr = %c0_i64 valid_row = %c1_index valid_col = %c1_index : !pto.tile_buf<loc=vec, dtype=i32, rows=1, cols=8,",
    );
}

const USER_BIG_TILES: &str = r#"
import pypto.language as pl

@pl.program
class Big:
    @pl.function(type=pl.FunctionType.InCore)
    def big(self, x: pl.Tensor[[64, 1024], pl.FP32], y: pl.Out[pl.Tensor[[64, 1024], pl.FP32]]):
        t = pl.load(x, [0, 0], [64, 1024])
        u = pl.add(t, t)
        pl.store(u, [0, 0], y)
"#;

#[test]
fn tiles_past_ub_name_the_kernel_and_the_byte_counts() {
    // Two 256 KiB tiles: 512 KiB of UB on either target.
    for (target, cap) in [(Target::A2A3, 196608), (Target::A5, 262144)] {
        let (out, _) = compile_src(USER_BIG_TILES, target);
        let d = out.expect_err("512 KiB of tiles exceed UB");
        let msgs: Vec<&str> = d.iter().map(|x| x.message.as_str()).collect();
        assert!(
            msgs.iter().any(|m| m.contains("kernel 'big'")
                && m.contains("524288 bytes of vec")
                && m.contains(&format!("capacity {cap}"))
                && m.contains("level3")),
            "{msgs:?}"
        );
    }
}

const USER_MIXED_PADS: &str = r#"
import pypto.language as pl


@pl.program
class MixPad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 60], pl.FP32], y: pl.Out[pl.Tensor[[1, 64], pl.FP32]]):
        a = pl.load(x, [0, 0], [1, 64], valid_shape=[1, 60])
        f = pl.fillpad(a, 0.0)
        b = pl.load(x, [0, 0], [1, 64], valid_shape=[1, 60])
        c = pl.add(f, b)
        pl.store(c, [0, 0], y)
"#;

#[test]
fn a_users_elementwise_op_on_differently_filled_tiles_is_reported_at_its_line() {
    let (out, sources) = compile_src(USER_MIXED_PADS, Target::A2A3);
    let d = out.expect_err("a zero-filled and a plain source are two tile types");
    let d: Vec<_> = d.iter().collect();
    assert_eq!(d.len(), 1, "{:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>());
    assert!(
        d[0].message.contains("kernel 'k': pto.tadd: sources %f and %b")
            && d[0].message.contains("pad 1 vs 0"),
        "{}",
        d[0].message
    );
    assert_eq!(line_of(&sources, d[0].span), 12, "the pl.add line");
    assert!(d[0].notes.iter().any(|n| n.contains("pl.fillpad to both or to neither")), "{:?}", d[0].notes);
    // Filling both is accepted.
    let fixed =
        USER_MIXED_PADS.replace("c = pl.add(f, b)", "g = pl.fillpad(b, 0.0)\n        c = pl.add(f, g)");
    assert!(compile_src(&fixed, Target::A2A3).0.is_ok());
}

fn repo_file(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

fn compile_file(rel: &str, target: Target) -> CodegenOutput {
    let text = std::fs::read_to_string(repo_file(rel)).unwrap();
    match compile_src(&text, target).0 {
        Ok(o) => o,
        Err(d) => {
            panic!("{rel} on {}: {:?}", target.name(), d.iter().map(|x| &x.message).collect::<Vec<_>>())
        }
    }
}

/// Every tile instruction line of `text` whose `ins(...)`/`outs(...)` tile types differ.
fn mixed_type_ops(text: &str, inst: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.trim_start().starts_with(&format!("{inst} ins(")))
        .filter(|l| {
            let tys: Vec<&str> = l.match_indices("!pto.tile_buf<").map(|(i, _)| &l[i..]).collect();
            let ends: Vec<&str> = tys.iter().map(|t| &t[..t.find('>').map_or(t.len(), |e| e + 1)]).collect();
            ends.windows(2).any(|w| w[0] != w[1])
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn regression_4097_element_fp32_allreduce_stages_whole_32_byte_rows() {
    for target in [Target::A2A3, Target::A5] {
        let out = compile_file("examples/allreduce_intrinsics.py", target);
        for m in ["mesh_step.pto", "ring_step.pto"] {
            let text = module(&out, m);
            assert!(!text.contains("cols=4097"), "{m}: a 4097-wide tile row is 16388 bytes");
            check(
                text,
                r#"
                CHECK: %tput_stage_buf = pto.alloc_tile
                CHECK-SAME: valid_col = %c4104_index : !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=4104,
                CHECK-NEXT: %tput_stage = pto.alloc_tile addr = %c0_i64 valid_row = %c1_index valid_col = %c4097_index : !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=4104,
                CHECK: pto.comm.tput(
                CHECK-SAME: buf(%tput_stage) : !pto.partition_tensor_view<1x4097xf32>, !pto.partition_tensor_view<1x4097xf32>, !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=4104,
                "#,
            );
        }
    }
}

#[test]
fn regression_moe_count_tiles_are_padded_with_a_one_element_valid_region() {
    for target in [Target::A2A3, Target::A5] {
        let out = compile_file("examples/moe_all_to_all_v.py", target);
        let all: String = out.modules.iter().map(|m| m.1.as_str()).collect();
        assert!(!all.contains("dtype=i32, rows=1, cols=1,"), "no 4-byte INT32 tile rows");
        check(
            module(&out, "consume_step.pto"),
            "CHECK: %c = pto.alloc_tile addr =\nCHECK-SAME: valid_row = %c1_index valid_col = %c1_index : !pto.tile_buf<loc=vec, dtype=i32, rows=1, cols=8,",
        );
    }
}

const NARROW_TENSORS: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Narrow:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[1, 5], pl.FP32],
        y: pl.Tensor[[1, 5], pl.FP32],
        out: pl.Out[pl.Tensor[[1, 5], pl.FP32]],
        win: pl.InOut[pld.DistributedTensor[[1, 5], pl.FP32]],
    ):
        s = pl.add(x, y)
        out = pl.assemble(out, s, [0, 0])
        ctx = pld.get_comm_ctx(win)
        me = pld.rank(ctx)
        pld.tensor.remote_store(x, win, me, [0, 0])
"#;

#[test]
fn tensor_level_ops_load_whole_32_byte_rows_with_the_tensor_as_valid_region() {
    // Tensor arithmetic and remote_store on [1, 5] FP32 (20-byte rows) lower to [1, 8] tiles
    // whose valid region is the tensor's [1, 5]; every tile-type rule holds on both targets.
    for target in [Target::A2A3, Target::A5] {
        let (out, _) = compile_src(NARROW_TENSORS, target);
        let out = match out {
            Ok(o) => o,
            Err(d) => panic!("{:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()),
        };
        let text = only(&out);
        assert!(!text.contains("cols=5,"), "{text}");
        check(
            text,
            r#"
            CHECK: %x_vec = pto.alloc_tile addr = %c0_i64 valid_row = %c1_index valid_col = %c5_index : !pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=8,
            CHECK: pto.tadd ins(%x_vec, %y_vec
            CHECK: pto.tstore
            CHECK-SAME: !pto.partition_tensor_view<1x5xf32>
            "#,
        );
    }
}

const HOST_COLLECTIVE: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
SIZE = 1000

@pl.program
class HostCollective:
    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch(
        self,
        data: pl.InOut[pld.DistributedTensor[[1, SIZE], pl.DT]],
        rows: pl.InOut[pld.DistributedTensor[[NR, SIZE], pl.DT]],
        signal: pl.InOut[pld.DistributedTensor[[NR], pl.INT32]],
    ):
        pass

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host_orch(self):
        data_buf = pld.alloc_window_buffer([1, SIZE], dtype=pl.DT)
        rows_buf = pld.alloc_window_buffer([pld.world_size(), SIZE], dtype=pl.DT)
        sig_buf = pld.alloc_window_buffer(pld.world_size() * 4)
        data = pld.window(data_buf, [1, SIZE], dtype=pl.DT)
        rows = pld.window(rows_buf, [NR, SIZE], dtype=pl.DT)
        signal = pld.window(sig_buf, [NR], dtype=pl.INT32)
        for r in pl.range(pld.world_size()):
            self.chip_orch(data, rows, signal, device=r)
        CALL
"#;

#[test]
fn regression_host_builtin_reductions_keep_one_tile_type() {
    let calls = [
        ("allreduce", "data = pld.tensor.allreduce(data, op=pld.ReduceOp.Sum)"),
        ("reduce_scatter", "rows = pld.tensor.reduce_scatter(rows, signal, op=pld.ReduceOp.Sum)"),
    ];
    for (dt, elem) in [("FP32", "f32"), ("FP16", "f16")] {
        for (what, call) in calls {
            // The host reduce_scatter builtin takes FP32 data only (its lowering rejects FP16).
            if what == "reduce_scatter" && dt == "FP16" {
                continue;
            }
            let src = HOST_COLLECTIVE.replace("pl.DT", &format!("pl.{dt}")).replace("CALL", call);
            for target in [Target::A2A3, Target::A5] {
                let (out, _) = compile_src(&src, target);
                let out = match out {
                    Ok(o) => o,
                    Err(d) => panic!("{what} {dt}: {:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()),
                };
                let kernels: Vec<&(String, String)> =
                    out.modules.iter().filter(|m| m.0.starts_with("builtin_tensor_")).collect();
                assert!(!kernels.is_empty(), "{what} {dt}: no builtin kernel");
                let mut combines = 0;
                for (name, text) in kernels {
                    assert!(text.contains(&format!("dtype={elem}")), "{name}");
                    for inst in ["pto.tadd", "pto.tmax"] {
                        combines += text.matches(&format!("{inst} ins(")).count();
                        let mixed = mixed_type_ops(text, inst);
                        assert!(mixed.is_empty(), "{what} {dt} {name}: {mixed:?}");
                    }
                }
                assert!(combines > 0, "{what} {dt}: no combine op");
            }
        }
    }
}

/// Every program that reaches codegen passes the verifier on both targets: every example (all
/// of which compile), every codegen test program and every corpus program.
#[test]
fn every_example_and_test_program_passes_the_verifier_on_both_targets() {
    let mut dirs = vec!["examples", "pld-codegen-pto/tests/programs", "pld-passes/tests/filetests"];
    dirs.extend(["pld-frontend/tests/corpus", "pld-cli/tests/corpus"]);
    let mut compiled = 0;
    let mut examples = 0;
    for dir in dirs {
        let Ok(rd) = std::fs::read_dir(repo_file(dir)) else { continue };
        let mut files: Vec<_> =
            rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "py")).collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            for target in [Target::A2A3, Target::A5] {
                init();
                let mut sources = SourceMap::new();
                let opts = pld_frontend::ParseOptions::default();
                let name = path.display().to_string();
                // Files other stages reject on purpose (negative pass tests, multi-unit files,
                // unbound builders) never reach codegen; the examples must all get there.
                let Ok(mut p) = pld_frontend::parse_program(&mut sources, &name, &text, &opts) else {
                    assert!(dir != "examples", "{name} does not parse");
                    continue;
                };
                let popts = pld_passes::PipelineOptions { target, ..Default::default() };
                if pld_passes::run_pipeline(&mut p, &popts).is_err() {
                    assert!(dir != "examples" || name.contains("broken_"), "{name}: pipeline failed");
                    continue;
                }
                if let Err(d) = emit_program(&p, &CodegenOptions { target }) {
                    let msgs: Vec<&String> = d.iter().map(|x| &x.message).collect();
                    // A program with no PTO form (e.g. tile parameters) is another stage's
                    // test; a verifier violation never is, and every example has a PTO form.
                    let verifier = msgs.iter().any(|m| m.contains("[pto verifier:"));
                    assert!(!verifier && dir != "examples", "{name} on {}: {msgs:?}", target.name());
                    continue;
                }
                compiled += 1;
                examples += usize::from(dir == "examples");
            }
        }
    }
    assert!(examples >= 14, "only {examples} example compilations");
    assert!(compiled >= 40, "only {compiled} programs reached codegen");
}
