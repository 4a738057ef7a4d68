//! `FlattenTileNdTo2D`: N-D tiles become 2-D where the comm ops push them as 2-D regions.
//!
//! Afterwards: every tile pushed as a 2-D region (the local tile operand of an op that writes
//! a peer's window, `pld_ir::pushed_sources`: `pld.tile.remote_store`'s source) that is
//! fully valid, of rank > 2 and whose leading dims are statically 1 is reshaped
//! (`tile.reshape`) to its inner two dims first; the target and offsets keep their rank
//! (the op's contract addresses the leading target dims with extent 1). Sources with a
//! partial valid region or non-unit leading dims are left as they are (their leading dims
//! are rejected by the op's own deducer, or fold into the rows in codegen).

use crate::pass::{Pass, PassCx};
use crate::util::{call_stmt, map_block};
use pld_ir::{pushed_sources, Builder, Diagnostics, Expr, Program, Stmt, StmtKind, TileType, Values};

/// See the module docs.
pub struct FlattenTileNdTo2D;

impl Pass for FlattenTileNdTo2D {
    crate::pass_info!("FlattenTileNdTo2D");
    fn run(&self, program: &mut Program, cx: &mut PassCx) -> Result<(), Diagnostics> {
        cx.report_changes();
        let target = cx.target;
        crate::util::per_function(
            program,
            cx,
            |f| f.kind.is_incore(),
            |f, diags| {
                // Most kernels push 2-D tiles only: a read-only scan leaves them untouched.
                let mut any = false;
                f.body.walk(&mut |s| any |= flattened_source(s, &f.values).is_some());
                if !any {
                    return false;
                }
                let mut body = std::mem::take(&mut f.body);
                let kind = f.kind;
                let values = &mut f.values;
                map_block(
                    &mut body,
                    &mut |s| {
                        let Some((i, src, t)) = flattened_source(&s, values) else { return Ok(vec![s]) };
                        let rank = t.shape.len();
                        let mut b = Builder::new(values, kind);
                        b.target = target;
                        b.span = s.span;
                        let base = src.as_var().map_or("src".to_string(), |v| b.values.name(v).to_string());
                        let flat = b.assign_op(
                            format!("{base}_2d"),
                            crate::ops::TILE_RESHAPE,
                            vec![src.clone(), Expr::tuple(t.shape[rank - 2..].to_vec())],
                            vec![],
                        )?;
                        let mut s = s.clone();
                        if let StmtKind::Eval(e) | StmtKind::Assign { value: e, .. } = &mut s.kind {
                            if let Some(c) = e.as_call_mut() {
                                c.args[i] = Expr::var(flat);
                            }
                        }
                        let (mut out, _) = b.finish();
                        out.push(s);
                        Ok(out)
                    },
                    diags,
                );
                f.body = body;
                true
            },
        )
        .into_result(())
    }
}

/// The source argument of a 2-D push in `s` and its tile type, when that tile is to be
/// flattened (fully valid, rank > 2, leading dims statically 1).
fn flattened_source<'s>(s: &'s Stmt, values: &Values) -> Option<(usize, &'s Expr, TileType)> {
    let (call, _) = call_stmt(s)?;
    let def = call.op()?;
    pushed_sources(def, call).into_iter().find_map(|i| {
        let src = call.args.get(i)?;
        let t = src.ty(values).as_tile().cloned()?;
        let rank = t.shape.len();
        let leading_ones = t.shape[..rank.saturating_sub(2)].iter().all(|d| d.as_int() == Some(1));
        (rank > 2 && t.valid_shape.is_empty() && leading_ones).then_some((i, src, t))
    })
}
