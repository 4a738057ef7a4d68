//! The `tile-buffer-reuse` verifier rule on hand-made typed kernels: a tile named after a
//! later allocation took its bytes is a violation; an elementwise instruction writing its
//! destination on exactly a source's bytes (in place), and an alias of a buffer, are not.
//! And the address planner on the program that showed it (D-cg-31): a yield expression's tiles
//! stay off the bytes of the body tiles it reads.

mod common;

use pld_codegen_pto::pto::{Dps, Inst, Line, OpClass, Operand, TileBuf};
use pld_codegen_pto::verify::{verify_kernel, Kernel, TilePlan};
use pld_codegen_pto::{emit_program, CodegenOptions};
use pld_ir::{SourceMap, Span, Target};

const ROW: &str = "!pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=16, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>";
const TWO_ROWS: &str = "!pto.tile_buf<loc=vec, dtype=f32, rows=2, cols=16, v_row=?, v_col=?, blayout=row_major, slayout=none_box, fractal=512, pad=0>";

fn line(inst: Inst) -> Line {
    Line { indent: 1, inst, span: Span::DUMMY }
}

fn alloc(ssa: &str, ty: &str, slot: usize) -> Line {
    let ty = TileBuf::parse(ty).expect("a long-form tile type");
    line(Inst::AllocTile { result: ssa.into(), slot, valid_row: None, valid_col: None, ty })
}

/// An instruction of class `class` reading `ins` and writing `out`, all of type `ty`.
fn op(name: &'static str, class: OpClass, ins: &[&str], out: &str, ty: &str) -> Line {
    let o = |s: &str| Operand::new(s, TileBuf::parse(ty).expect("a long-form tile type"));
    let dps = Dps { class, ..Dps::new(name, ins.iter().map(|s| o(s)).collect(), vec![o(out)]) };
    line(Inst::Dps(dps))
}

fn kernel(lines: Vec<Line>, addrs: Vec<u64>) -> Kernel {
    let n = addrs.len();
    let plan =
        TilePlan { addrs: Some(addrs), aliases: vec![None; n], freed_at: vec![None; n], high: Vec::new() };
    Kernel { name: "k".into(), span: Span::DUMMY, target: Target::A2A3, params: Vec::new(), lines, plan }
}

fn reuse_violations(k: &Kernel) -> Vec<String> {
    let all = verify_kernel(k).into_iter().map(|d| d.message);
    all.filter(|m| m.contains("[pto verifier: tile-buffer-reuse]")).collect()
}

/// What `pl.yield_(pl.add(pl.mul(acc, row), row))` lowered to: the product took `%row`'s
/// bytes (in place, fine), then the sum read `%row` again (it holds the product now).
fn yield_expression(product_at: u64) -> Kernel {
    let lines = vec![
        alloc("%acc", ROW, 0),
        alloc("%row", ROW, 1),
        alloc("%prod", ROW, 2),
        op("pto.tmul", OpClass::Elementwise, &["%acc", "%row"], "%prod", ROW),
        alloc("%sum", ROW, 3),
        op("pto.tadd", OpClass::Elementwise, &["%prod", "%row"], "%sum", ROW),
    ];
    kernel(lines, vec![0, 64, product_at, 128])
}

#[test]
fn a_tile_read_after_a_later_allocation_took_its_bytes_is_a_violation() {
    let v = reuse_violations(&yield_expression(64));
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(
        v[0].contains(
            "pto.tadd: names tile %row (64..128 of vec), whose bytes tile %prod (64..128) already took"
        ),
        "{}",
        v[0]
    );
    // The product on bytes of its own: nothing is taken.
    assert!(reuse_violations(&yield_expression(192)).is_empty());
}

#[test]
fn in_place_is_exactly_the_same_bytes_of_an_elementwise_source() {
    // `%b` on `%a`'s bytes, written by the instruction that reads `%a`: in place.
    let lines = vec![
        alloc("%a", ROW, 0),
        alloc("%b", ROW, 1),
        op("pto.tadds", OpClass::Elementwise, &["%a"], "%b", ROW),
    ];
    assert!(reuse_violations(&kernel(lines.clone(), vec![0, 0])).is_empty());
    // Overlapping only partly (a two-row destination from byte 32 on): a violation.
    let lines = vec![
        alloc("%a", TWO_ROWS, 0),
        alloc("%b", TWO_ROWS, 1),
        op("pto.tadds", OpClass::Elementwise, &["%a"], "%b", TWO_ROWS),
    ];
    let v = reuse_violations(&kernel(lines, vec![0, 64 - 32]));
    assert!(
        v.len() == 1 && v[0].contains("names tile %a (0..128 of vec), whose bytes tile %b (32..160)"),
        "{v:?}"
    );
    // The same bytes but not an elementwise op (a transpose reads other elements than it writes).
    let lines =
        vec![alloc("%a", ROW, 0), alloc("%b", ROW, 1), op("pto.ttrans", OpClass::Other, &["%a"], "%b", ROW)];
    assert_eq!(reuse_violations(&kernel(lines, vec![0, 0])).len(), 1);
}

#[test]
fn an_alias_shares_its_buffer_and_takes_nothing() {
    let lines = vec![
        alloc("%a", ROW, 0),
        alloc("%view", ROW, 1),
        op("pto.tadds", OpClass::Elementwise, &["%view"], "%a", ROW),
        op("pto.tadds", OpClass::Elementwise, &["%a"], "%view", ROW),
    ];
    let mut k = kernel(lines, vec![0, 0]);
    // Without the alias `%view` took `%a`'s bytes: writing `%a` after that is a violation (the
    // in-place read of `%a` into `%view` is not).
    let v = reuse_violations(&k);
    assert!(v.len() == 1 && v[0].contains("names tile %a (0..64 of vec), whose bytes tile %view"), "{v:?}");
    k.plan.aliases[1] = Some(0);
    assert!(reuse_violations(&k).is_empty());
}

/// The corpus program whose yield expression re-reads a body tile (its kernel comes first).
const MAC_ROWS: &str = include_str!("../../pld-cli/tests/corpus/yield_expression_rereads_body_tile.py");

/// The `addr` constant of `%ssa`'s `pto.alloc_tile` in `pto`.
fn addr_of<'a>(pto: &'a str, ssa: &str) -> &'a str {
    let head = format!("{ssa} = pto.alloc_tile addr = ");
    let line = pto.lines().find_map(|l| l.trim().strip_prefix(head.as_str()));
    line.and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no allocation of {ssa} in\n{pto}"))
}

#[test]
fn a_yield_expression_places_its_tiles_off_the_body_tiles_it_reads() {
    common::init();
    for target in [Target::A2A3, Target::A5] {
        let mut sources = SourceMap::new();
        let opts = pld_frontend::ParseOptions::default();
        let mut p = pld_frontend::parse_program(&mut sources, "user.py", MAC_ROWS, &opts).expect("parses");
        let popts = pld_passes::PipelineOptions { target, ..Default::default() };
        pld_passes::run_pipeline(&mut p, &popts).expect("the pass pipeline");
        let out = emit_program(&p, &CodegenOptions { target });
        let out = out.unwrap_or_else(|d| panic!("{:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>()));
        let pto = &out.modules[0].1;
        // The product (`%tile`, written by `pto.tmul`) and the sum (`%1`) each have bytes of
        // their own: `%row` still holds the row when the sum reads it.
        let (row, product, sum) = (addr_of(pto, "%row"), addr_of(pto, "%tile"), addr_of(pto, "%1"));
        assert!(row != product && row != sum && product != sum, "{row} {product} {sum}\n{pto}");
        assert!(pto.contains("pto.tadd ins(%tile, %row"), "{pto}");
    }
}
