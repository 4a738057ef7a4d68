//! Extensibility: a brand-new op declared and registered entirely in this file (no other
//! crate touched) is listed by the registry, resolves by name and alias, is printed in DSL
//! form, and is checked by the verifier through its own deducer.

use pld_ir::registry::{AttrDefault, AttrType};
use pld_ir::{
    register_op, Affinity, Attr, AttrDef, DataType, DeduceCx, Diagnostic, Direction, Effect, Expr,
    FunctionBuilder, FunctionKind, OpDef, ParamDef, SignalRole, Type,
};

/// `pld.tile.scale_rows(tile, *, factor=1)`: a made-up vector op for this test.
static SCALE_ROWS: OpDef = OpDef {
    name: "pld.tile.scale_rows",
    family: "test_extension",
    summary: "multiply every row of a tile by an integer factor (test-only op)",
    aliases: &["pld.scale_rows"],
    params: &[ParamDef::mem("tile", Effect::Read)],
    attrs: &[AttrDef::with_default("factor", AttrType::Int, AttrDefault::Int(1))],
    affinity: Affinity::Vector,
    no_duplicate: false,
    signal_role: SignalRole::None,
    rank_role: pld_ir::RankRole::None,
    builtin_variant: None,
    internal: false,
    effects: None,
    deduce: deduce_scale_rows,
    lowerings: &[],
};

fn deduce_scale_rows(cx: &DeduceCx<'_>) -> Result<Type, Diagnostic> {
    match cx.ty(0) {
        Type::Tile(t) if t.dtype.is_float() => Ok(cx.ty(0).clone()),
        Type::Tile(t) => {
            Err(cx.arg_error(0, format!("pld.tile.scale_rows needs a float tile, got {}", t.dtype)))
        }
        other => Err(cx
            .arg_error(0, format!("pld.tile.scale_rows tile must be a TileType, got {}", other.kind_name()))),
    }
}

register_op!(SCALE_ROWS);

fn tile_ty(d: DataType) -> Type {
    Type::tile(vec![Expr::int(4), Expr::int(16)], d, Some(pld_ir::MemorySpace::Vec))
}

#[test]
fn registry_lists_and_resolves_the_new_op() {
    let reg = pld_testkit::init();
    assert!(reg.ops().any(|r| r.def.name == "pld.tile.scale_rows" && r.file.ends_with("new_op.rs")));
    assert_eq!(reg.lookup("pld.scale_rows").map(|d| d.name), Some("pld.tile.scale_rows"));
    let listing = reg.listing();
    assert!(
        listing.contains("pld.tile.scale_rows [test_extension] (tile:r) {factor: int = 1} vector"),
        "{listing}"
    );
    // The built-in families are still all there.
    assert!(reg.lookup("pld.tensor.put").is_some());
}

#[test]
fn printer_and_verifier_handle_the_new_op() {
    pld_testkit::init();
    let mut fb = FunctionBuilder::new("kernel", FunctionKind::InCore);
    let x = fb.param("x", tile_ty(DataType::FP32), Direction::In);
    fb.body(|b| {
        let y = b.assign_op("y", "pld.scale_rows", vec![Expr::var(x)], vec![("factor", Attr::Int(3))])?;
        b.ret(vec![Expr::var(y)]);
        Ok(())
    })
    .unwrap();
    fb.returns(tile_ty(DataType::FP32));
    let mut f = fb.finish();
    let text = pld_ir::print_function(&f);
    assert!(text.contains("pld.tile.scale_rows(x, factor=3)"), "{text}");
    assert!(pld_ir::verify_function(&f).is_ok());

    // Retyping the parameter behind the call's back makes the verifier re-run the new
    // op's deducer and reject the call.
    if let Some(v) = f.values.get_mut(x) {
        v.ty = tile_ty(DataType::INT32);
    }
    let diags = pld_ir::verify_function(&f).unwrap_err();
    assert!(
        diags.iter().any(|d| d.message.contains("pld.tile.scale_rows needs a float tile, got int32")),
        "{diags}"
    );
}

#[test]
fn generic_schema_checks_apply_to_the_new_op() {
    pld_testkit::init();
    let mut fb = FunctionBuilder::new("kernel", FunctionKind::InCore);
    let x = fb.param("x", tile_ty(DataType::FP32), Direction::In);
    let r = fb.body(|b| {
        b.op("pld.tile.scale_rows", vec![Expr::var(x)], vec![("bogus", Attr::Int(1))])?;
        Ok(())
    });
    let d = r.unwrap_err();
    assert!(d.message.contains("unknown kwarg 'bogus' for operator 'pld.tile.scale_rows'"), "{}", d.message);
    let r = fb.body(|b| {
        b.op("pld.tile.scale_rows", vec![Expr::var(x), Expr::int(1)], vec![])?;
        Ok(())
    });
    assert!(r.unwrap_err().message.contains("takes 1 positional argument"));
}
