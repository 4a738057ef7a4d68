//! Builtin collective kernels: every `builtin.tensor.*` variant a host orchestrator dispatches
//! is rendered as its own PTO module, `<entry>_kernel.pto`.
//!
//! The reference ships these as prebuilt C++ templates; pld renders them from the same
//! algorithm the InCore collectives use: a vector kernel whose parameters are the builtin's
//! window arguments (plus one CommContext each) is built with the builder, the collective's
//! registered `Composite` lowering expands it into notify/wait/remote_load/put/get and tile
//! arithmetic, the data-before-signal markers of `InsertCommFence` are added, and the result
//! goes through the ordinary function emitter.
//!
//! Guarantees: one kernel per distinct variant, in variant order; a rank-1 signal is viewed as
//! the `[NR, 1]` mesh signal the lowering addresses; dynamic extents become `index`
//! parameters; anything the lowering or the emitter cannot express is a diagnostic naming
//! the builtin. A mesh allreduce with `core_num = C > 1` renders an SPMD kernel: block `b`
//! (`pto.get_block_idx`) reduces the 256-element tiles `b, b + C, …` on signal column `b`
//! (`multi_block_mesh`); every other builtin is single-block.

use crate::CodegenOptions;
use pld_ir::registry::LoweringKind;
use pld_ir::{
    Attr, Call, Callee, Diagnostic, Direction, Expr, Function, FunctionBuilder, FunctionKind, Program, Span,
    TensorType, Type, BUILTIN_MESH_TILE,
};
use std::collections::BTreeMap;

/// The entry symbol of a variant: non-alphanumerics become `_`.
pub fn entry_symbol(variant: &str) -> String {
    variant.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect()
}

/// Every builtin call of the host/chip orchestrators, one per variant: the first occurrence,
/// or a later one with a larger `core_num` (a multi-block kernel also serves one-block
/// launches, not the other way round).
///
/// A variant is rendered once with its arguments' static shapes, so calls of one variant
/// whose argument types differ are reported as a diagnostic (one per variant) rather than
/// silently served by a kernel typed for other shapes.
pub fn builtin_calls<'p>(
    program: &'p Program,
    opts: &CodegenOptions,
) -> (BTreeMap<String, (&'p Function, Call)>, Vec<Diagnostic>) {
    let mut out: BTreeMap<String, (&'p Function, Call)> = BTreeMap::new();
    let mut diags = Vec::new();
    let mut reported = std::collections::BTreeSet::new();
    for f in &program.functions {
        if !matches!(f.kind, FunctionKind::Host | FunctionKind::ChipOrch) {
            continue;
        }
        f.body.walk_exprs(&mut |e| {
            let Some(c) = e.as_call() else { return };
            let Callee::Op(def) = &c.callee else { return };
            if !def.name.starts_with("builtin.tensor.") {
                return;
            }
            let (variant, _) = crate::orch::builtin_spec(c, opts);
            let Some((host, prev)) = out.get(&variant) else {
                out.insert(variant, (f, c.clone()));
                return;
            };
            // Shapes and dtypes only: the windows an argument is bound to differ by call.
            let types = |h: &Function, k: &Call| -> Vec<Option<(Vec<Expr>, pld_ir::DataType)>> {
                k.args
                    .iter()
                    .map(|a| a.ty(&h.values).as_tensor_like().map(|t| (t.shape.clone(), t.dtype)))
                    .collect()
            };
            if types(host, prev) != types(f, c) {
                if reported.insert(variant.clone()) {
                    diags.push(
                        Diagnostic::error(
                            e.span,
                            format!(
                                "builtin kernel {variant}: this call's arguments have other shapes than an earlier call of the same variant; a variant is rendered once, for one set of shapes"
                            ),
                        )
                        .with_note("use one shape per collective and dtype, or call the collective inside a kernel"),
                    );
                }
                return;
            }
            let cores = |k: &Call| k.attr_int("core_num").unwrap_or(1);
            if cores(c) > cores(prev) {
                out.insert(variant, (f, c.clone()));
            }
        });
    }
    (out, diags)
}

/// A kernel parameter type for a host argument: dynamic dims become symbols, the window
/// binding is dropped (kernel parameters do not carry it).
fn kernel_type(tt: &TensorType, dist: bool, param: &str) -> Type {
    let shape: Vec<Expr> = tt
        .shape
        .iter()
        .enumerate()
        .map(|(k, d)| if d.as_int().is_some() { d.clone() } else { Expr::sym(format!("{param}_dim{k}")) })
        .collect();
    if dist {
        Type::dist_tensor(shape, tt.dtype)
    } else {
        Type::tensor(shape, tt.dtype)
    }
}

/// Renders the kernel of one builtin variant.
pub fn render(
    variant: &str,
    host: &Function,
    call: &Call,
    opts: &CodegenOptions,
) -> Result<Function, Diagnostic> {
    let op = call.callee.name();
    let span = Span::DUMMY;
    let err = |m: String| Diagnostic::error(span, format!("builtin kernel {variant}: {m}"));
    let Some(def) = call.op() else { return Err(err("not an op call".into())) };
    let short = op.trim_start_matches("builtin.tensor.");
    let (composite, mut attrs): (String, Vec<(&str, Attr)>) = match short {
        "allreduce" | "allreduce_ring" => {
            let mode = if short == "allreduce_ring" { "ring" } else { "mesh" };
            (
                "pld.tensor.allreduce".into(),
                vec![
                    ("op", Attr::Int(call.attr_int("op").unwrap_or(0))),
                    ("mode", Attr::Str(mode.into())),
                    ("core_num", Attr::Int(1)),
                ],
            )
        }
        other => (format!("pld.tensor.{other}"), Vec::new()),
    };
    for (k, v) in &call.attrs {
        if !matches!(k.as_str(), "dtype" | "core_num" | "op" | "mode") {
            attrs.push((k.as_str(), v.clone()));
        }
    }
    if short == "reduce_scatter" {
        attrs.push(("op", Attr::Int(call.attr_int("op").unwrap_or(0))));
    }
    let Some(cdef) = pld_ir::registry().lookup(&composite) else {
        return Err(err(format!("the collective {composite} is not registered")));
    };
    let Some(lowering) = cdef.lowering(LoweringKind::Composite) else {
        return Err(err(format!("{composite} has no composite lowering to render it from")));
    };
    // Multi-block mesh allreduce (seed "Host multi-core AllReduce"): block-cyclic tiles.
    let blocks = if short == "allreduce" { call.attr_int("core_num").unwrap_or(1).max(1) } else { 1 };
    let name = format!("{}_kernel", entry_symbol(variant));
    let mut fb = FunctionBuilder::new(&name, FunctionKind::Aiv).target(opts.target);
    let mut params = Vec::new();
    let mut dists = Vec::new();
    for (i, a) in call.args.iter().enumerate() {
        let pname = def.params.get(i).map_or_else(|| format!("arg{i}"), |p| p.name.to_string());
        let ty = a.ty(&host.values);
        let Some(tt) = ty.as_tensor_like() else {
            return Err(err(format!("argument {pname} is a {}, not a tensor", ty.kind_name())));
        };
        // Inputs read only locally are plain tensors on the InCore path.
        let dist = matches!(ty, Type::DistTensor(_)) && !matches!(pname.as_str(), "input" | "send_counts");
        let kt = kernel_type(tt, dist, &pname);
        let dir = if def.params.get(i).is_some_and(|p| p.effect.writes()) {
            Direction::InOut
        } else {
            Direction::In
        };
        let id = fb.param(&pname, kt, dir);
        if dist {
            dists.push(pname.clone());
        }
        params.push((pname, id));
    }
    for d in &dists {
        fb.param(format!("{d}_ctx"), Type::CommCtx, Direction::In);
    }
    // The ring builtin's signal has one row per round plus a final return-barrier row: the
    // rounds go to the composite, the last row gets a barrier of its own after it.
    let mut return_row = None;
    let built = fb.body(|b| {
        let mut args = Vec::new();
        for (pname, id) in &params {
            let mut e = Expr::var(*id);
            if pname == "signal" && short == "allreduce_ring" {
                if let Some(tt) = b.values.ty(*id).as_tensor_like().cloned().filter(|t| t.rank() == 2) {
                    let rounds = match tt.shape[0].as_int() {
                        Some(r) => Expr::int(r - 1),
                        None => Expr::binary(pld_ir::BinOp::Sub, tt.shape[0].clone(), Expr::int(1)),
                    };
                    let v = b.assign_op(
                        "signal_rounds",
                        "tensor.slice",
                        vec![
                            e.clone(),
                            Expr::tuple(vec![rounds.clone(), tt.shape[1].clone()]),
                            Expr::ints(&[0, 0]),
                        ],
                        vec![],
                    )?;
                    return_row = Some((e, rounds, tt.shape[1].clone()));
                    e = Expr::var(v);
                }
            } else if pname == "signal" {
                if let Some(tt) = b.values.ty(*id).as_tensor_like().cloned() {
                    if tt.rank() == 1 {
                        let shape = Expr::tuple(vec![tt.shape[0].clone(), Expr::int(1)]);
                        let v = b.assign_op("signal_2d", "tensor.view", vec![e, shape], vec![])?;
                        e = Expr::var(v);
                    } else if tt.rank() == 2
                        && tt.shape[1].as_int() != Some(1)
                        && short == "allreduce"
                        && blocks == 1
                    {
                        // `[NR, stride]` multi-block signal: the single block uses column 0.
                        let shape = Expr::tuple(vec![tt.shape[0].clone(), Expr::int(1)]);
                        let v = b.assign_op(
                            "signal_col0",
                            "tensor.slice",
                            vec![e, shape, Expr::ints(&[0, 0])],
                            vec![],
                        )?;
                        e = Expr::var(v);
                    }
                }
            }
            args.push(e);
        }
        if blocks > 1 {
            let [data, signal] = args.as_slice() else {
                return Err(Diagnostic::error(span, "expects (src, signal)"));
            };
            return multi_block_mesh(b, data, signal, blocks, &|b, c| {
                let c = b.op(&composite, c, attrs.clone())?;
                let Some(c) = c.as_call().cloned() else { return Ok(()) };
                (lowering.run)(b, &c, &[], span)
            });
        }
        let c = b.op(&composite, args, attrs.clone())?;
        let Some(mut c) = c.as_call().cloned() else { return Ok(()) };
        if short == "allreduce" {
            // The seed's host builtin works in 256-element tiles (one ready barrier, one
            // read-done barrier per tile), not the InCore lowering's 16 KiB chunks. Set on
            // the deduced call, which goes straight to the lowering (never into the IR).
            c.set_attr(pld_ir::BUILTIN_TILE_ELEMS_ATTR, Attr::Int(BUILTIN_MESH_TILE));
        }
        (lowering.run)(b, &c, &[], span)?;
        if let Some((signal, row, nr)) = return_row.take() {
            return_barrier(b, signal, row, nr, span)?;
        }
        Ok(())
    });
    built.map_err(|d| err(d.message))?;
    let mut f = fb.finish();
    let mut diags = pld_ir::Diagnostics::new();
    pld_ir::comm_fence::insert_comm_fences(&mut f, &mut diags);
    if let Some(d) = diags.iter().next() {
        return Err(err(d.message.clone()));
    }
    Ok(f)
}

/// The ring builtin's final return barrier on signal row `row` (`[1, NR]`, viewed as the
/// `[NR, 1]` mesh layout): the barrier collective's own lowering — every rank adds one credit
/// on each peer, waits for all of theirs, and clears them — so no rank returns while a peer
/// may still read its window.
fn return_barrier(
    b: &mut pld_ir::Builder<'_>,
    signal: Expr,
    row: Expr,
    nr: Expr,
    span: Span,
) -> Result<(), Diagnostic> {
    let last = b.assign_op(
        "signal_return",
        "tensor.slice",
        vec![signal, Expr::tuple(vec![Expr::int(1), nr.clone()]), Expr::tuple(vec![row, Expr::int(0)])],
        vec![],
    )?;
    let col = b.assign_op(
        "signal_return_col",
        "tensor.view",
        vec![Expr::var(last), Expr::tuple(vec![nr, Expr::int(1)])],
        vec![],
    )?;
    let c = b.op("pld.tensor.barrier", vec![Expr::var(col)], vec![])?;
    let (Some(c), Some(lowering)) = (
        c.as_call().cloned(),
        pld_ir::registry().lookup("pld.tensor.barrier").and_then(|d| d.lowering(LoweringKind::Composite)),
    ) else {
        return Err(Diagnostic::error(span, "pld.tensor.barrier has no composite lowering"));
    };
    (lowering.run)(b, &c, &[], span)
}

/// Emits the reduction of one tile: `(builder, [chunk, signal column])`.
type ReduceTile<'r> = dyn Fn(&mut pld_ir::Builder<'_>, Vec<Expr>) -> Result<(), Diagnostic> + 'r;

/// The body of a `core_num = C > 1` mesh allreduce kernel. Block `b` (`pto.get_block_idx`,
/// see [`crate::func::BLOCK_IDX_SYM`]) of the `C = pto.get_block_num` launched blocks owns
/// the 256-element tiles `b, b + C, …` of the
/// flattened data and uses signal column `b` (`[NR, stride]` signal: block `b` of rank `me`
/// notifies `[me, b]` on each peer and waits on its own `[p, b]`), so every (peer, block)
/// pair has its own counter. Each tile is reduced by the InCore mesh lowering (`reduce`)
/// on the `[1, 256]` window slice with the `[NR, 1]` signal column: a ready barrier, the
/// per-chunk read-done barrier before the store, and the self-clearing epilogue, so a lane
/// returns to zero after every tile and after the call. A ragged last tile (`E % 256`
/// elements) belongs to block `(E / 256) % C`. Blocks at or beyond the signal stride own no
/// lane and retire at once (the same blocks on every rank). Blocks without tiles run no
/// barrier; every rank skips the same ones, so the protocol stays symmetric. The data extent
/// must be static (the tiles are static windows).
fn multi_block_mesh(
    b: &mut pld_ir::Builder<'_>,
    data: &Expr,
    signal: &Expr,
    blocks: i64,
    reduce: &ReduceTile<'_>,
) -> Result<(), Diagnostic> {
    use pld_ir::BinOp;
    let span = b.span;
    let dt = b.type_of(data);
    let Some(tt) = dt.as_tensor_like().cloned() else {
        return Err(Diagnostic::error(span, "data is not a tensor"));
    };
    let Some(numel) = tt.shape.iter().try_fold(1i64, |a, d| d.as_int().and_then(|x| a.checked_mul(x))) else {
        return Err(Diagnostic::error(
            span,
            format!("core_num={blocks} needs a static data extent (block-cyclic {BUILTIN_MESH_TILE}-element tiles), got a dynamic shape"),
        ));
    };
    let st = b.type_of(signal);
    let Some(sig) = st.as_tensor_like().cloned().filter(|s| s.rank() == 2) else {
        return Err(Diagnostic::error(
            span,
            format!("core_num={blocks} needs a [world_size, stride >= core_num] signal"),
        ));
    };
    let flat =
        b.assign_op("data_flat", "tensor.view", vec![data.clone(), Expr::ints(&[1, numel])], vec![])?;
    let bid = Expr::sym(crate::func::BLOCK_IDX_SYM);
    // The launched block count, read at run time like the reference template's trailing
    // `core_num` scalar: one rendered variant serves every core_num.
    let nblk = Expr::sym(crate::func::BLOCK_NUM_SYM);
    let full = numel / BUILTIN_MESH_TILE;
    let tail = numel % BUILTIN_MESH_TILE;
    let owns_lane = Expr::binary(BinOp::Lt, bid.clone(), sig.shape[1].clone());
    b.if_then(owns_lane, |b| {
        let lane = b.assign_op(
            "signal_lane",
            "tensor.slice",
            vec![
                signal.clone(),
                Expr::tuple(vec![sig.shape[0].clone(), Expr::int(1)]),
                Expr::tuple(vec![Expr::int(0), bid.clone()]),
            ],
            vec![],
        )?;
        let tile_at = |b: &mut pld_ir::Builder<'_>, name: &str, off: Expr, n: i64| {
            b.assign_op(
                name,
                "tensor.slice",
                vec![Expr::var(flat), Expr::ints(&[1, n]), Expr::tuple(vec![Expr::int(0), off])],
                vec![],
            )
        };
        if full > 0 {
            b.for_range("t", (bid.clone(), Expr::int(full), nblk.clone()), vec![], |b, t, _| {
                let off = Expr::binary(BinOp::Mul, Expr::var(t), Expr::int(BUILTIN_MESH_TILE));
                let chunk = tile_at(b, "chunk", off, BUILTIN_MESH_TILE)?;
                reduce(b, vec![Expr::var(chunk), Expr::var(lane)])?;
                Ok(vec![])
            })?;
        }
        if tail > 0 {
            let owner_blk = Expr::binary(BinOp::Mod, Expr::int(full), nblk.clone());
            let owner = Expr::binary(BinOp::Eq, bid.clone(), owner_blk);
            b.if_then(owner, |b| {
                let chunk = tile_at(b, "tail", Expr::int(full * BUILTIN_MESH_TILE), tail)?;
                reduce(b, vec![Expr::var(chunk), Expr::var(lane)])
            })?;
        }
        Ok(())
    })
}
