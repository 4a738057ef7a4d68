//! The kernels of the host/chip `builtin.tensor.*` dispatches (`LoweringKind::BuiltinKernel`),
//! built in one place for both consumers: codegen renders each variant's kernel as its own
//! PTO module, and `MaterializeBuiltinKernels` turns each dispatch into a call of the same
//! kernel so the simulator runs it like any other kernel.
//!
//! The reference ships these kernels as prebuilt C++ templates; pld builds them from the
//! algorithm the InCore collectives use: a vector kernel whose parameters are the builtin's
//! operands (plus one `CommCtx` per window) is built with the builder, the collective's
//! registered `Composite` lowering expands it into notify/wait/remote_load/put/get and tile
//! arithmetic, and `InsertCommFence`'s data-before-signal markers are added
//! ([`pld_ir::comm_fence`]).
//!
//! Guarantees: a rank-1 signal is viewed as the `[NR, 1]` mesh signal the lowering addresses;
//! the ring builtin's last signal row is a return barrier of its own; a mesh allreduce with
//! `core_num = C > 1` is an SPMD kernel (block `b` reduces the 256-element tiles `b, b + C, …`
//! on signal column `b`); anything the lowering cannot express is a diagnostic. Two forms
//! differ only where PTO needs it (a `KernelRequest` in the lowering context): for emission, dynamic extents
//! become `<param>_dim<k>` symbols (the kernel's `index` parameters) and the block index and
//! count stay the reserved symbols; for a dispatch, the host's own extents are kept (one that
//! names a host value becomes a leading `index` parameter the call passes) and a
//! `C`-block launch becomes `C` dispatches of the kernel specialised to block `b` of `C`
//! (blocks of one rank run one after another: a valid interleaving of the SPMD grid, the same
//! on every rank).

use super::comm::store_valid_row;
use pld_ir::registry::LoweringKind;
use pld_ir::{
    register_lowering, Attr, BinOp, Builder, Call, DataType, Diagnostic, Direction, Expr, ExprKind, Function,
    FunctionBuilder, FunctionKind, Span, Target, TensorType, Type, ValueId, Values, BLOCK_IDX_SYM,
    BLOCK_NUM_SYM,
};
use pld_runtime_abi::BUILTIN_MESH_TILE;

/// A kernel parameter type for a host argument: each dim as `dim(k, d)` gives it; the window
/// binding is dropped (kernel parameters do not carry it).
fn kernel_type(tt: &TensorType, dist: bool, dim: &mut dyn FnMut(usize, &Expr) -> Expr) -> Type {
    let shape: Vec<Expr> = tt.shape.iter().enumerate().map(|(k, d)| dim(k, d)).collect();
    if dist {
        Type::dist_tensor(shape, tt.dtype)
    } else {
        Type::tensor(shape, tt.dtype)
    }
}

/// Whether extent `d` names a value of the caller (a `world_size` the host computed, or a
/// host call such as `pld.world_size()` written in the window's shape), which a kernel cannot
/// see.
fn names_a_value(d: &Expr) -> bool {
    let mut found = false;
    d.walk(&mut |x| found |= matches!(x.kind, ExprKind::Var(_) | ExprKind::Call(_)));
    found
}

/// The collective a builtin expands through and the attributes of its composite call.
fn composite_of(call: &Call) -> (String, Vec<(&str, Attr)>) {
    let short = call.callee.name().trim_start_matches("builtin.tensor.");
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
    (composite, attrs)
}

/// Whether operand `pname` of a builtin is a window the kernel addresses on peers (inputs
/// read only locally are plain tensors, as on the InCore path).
fn is_peer_window(ty: &Type, pname: &str) -> bool {
    matches!(ty, Type::DistTensor(_)) && !matches!(pname, "input" | "send_counts")
}

/// The blocks a builtin launches: `core_num` of a mesh allreduce (seed "Host multi-core
/// AllReduce": block-cyclic tiles), one for every other builtin.
fn launch_blocks(call: &Call) -> i64 {
    if call.callee.name() == "builtin.tensor.allreduce" {
        call.attr_int("core_num").unwrap_or(1).max(1)
    } else {
        1
    }
}

/// Builds the kernel `name` of builtin `call` (typed against the caller's `values`).
/// `for_pto` selects the emission form (see the module docs). Returns the kernel and, for the
/// dispatch form, the caller's extents its leading `index` parameters take: a dynamic extent
/// that names a caller value (not a bound symbol) becomes such a parameter (in the PTO form
/// every dynamic extent is a `<param>_dim<k>` symbol, the signature's `index` parameter).
pub fn build(
    name: &str,
    values: &Values,
    call: &Call,
    target: Target,
    for_pto: bool,
) -> Result<(Function, Vec<Expr>), Diagnostic> {
    let span = Span::DUMMY;
    let Some(def) = call.op() else { return Err(Diagnostic::error(span, "not an op call")) };
    let short = call.callee.name().trim_start_matches("builtin.tensor.").to_string();
    let (composite, attrs) = composite_of(call);
    let Some(cdef) = pld_ir::registry().lookup(&composite) else {
        return Err(Diagnostic::error(span, format!("the collective {composite} is not registered")));
    };
    let Some(lowering) = cdef.lowering(LoweringKind::Composite) else {
        return Err(Diagnostic::error(
            span,
            format!("{composite} has no composite lowering to render it from"),
        ));
    };
    let blocks = launch_blocks(call);
    let mut fb = FunctionBuilder::new(name, FunctionKind::Aiv).target(target);
    let pname_of = |i: usize| def.params.get(i).map_or_else(|| format!("arg{i}"), |p| p.name.to_string());
    // Dispatch form: an extent naming a caller value becomes a leading `index` parameter.
    let mut extents = Vec::new();
    let mut extent_params = std::collections::HashMap::new();
    if !for_pto {
        for (i, a) in call.args.iter().enumerate() {
            let Some(tt) = a.ty(values).as_tensor_like().cloned() else { continue };
            for (k, d) in tt.shape.iter().enumerate().filter(|(_, d)| names_a_value(d)) {
                let id =
                    fb.param(format!("{}_dim{k}", pname_of(i)), Type::Scalar(DataType::INDEX), Direction::In);
                extent_params.insert((i, k), id);
                extents.push(d.clone());
            }
        }
    }
    let mut params = Vec::new();
    let mut dists = Vec::new();
    for (i, a) in call.args.iter().enumerate() {
        let pname = pname_of(i);
        let ty = a.ty(values);
        let Some(tt) = ty.as_tensor_like() else {
            return Err(Diagnostic::error(
                span,
                format!("argument {pname} is a {}, not a tensor", ty.kind_name()),
            ));
        };
        let dist = is_peer_window(&ty, &pname);
        let kt = kernel_type(tt, dist, &mut |k, d| {
            if d.as_int().is_some() {
                d.clone()
            } else if for_pto {
                Expr::sym(format!("{pname}_dim{k}"))
            } else {
                extent_params.get(&(i, k)).map_or_else(|| d.clone(), |v| Expr::var(*v))
            }
        });
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
    fb.body(|b| {
        let mut args = Vec::new();
        let mut return_row = None;
        for (pname, id) in &params {
            let e = Expr::var(*id);
            let e = if pname == "signal" { signal_view(b, e, &short, blocks, &mut return_row)? } else { e };
            args.push(e);
        }
        if blocks > 1 {
            let [data, signal] = args.as_slice() else {
                return Err(Diagnostic::error(span, "expects (src, signal)"));
            };
            let reduce = super::allreduce::reduce_op_name(call.attr_int("op").unwrap_or(0))?;
            return multi_block_mesh(b, data, signal, blocks, reduce);
        }
        let c = b.op(&composite, args, attrs.clone())?;
        let Some(mut c) = c.as_call().cloned() else { return Ok(()) };
        if short == "allreduce" {
            // The seed's host builtin works in 256-element tiles (one ready barrier, one
            // read-done barrier per tile), not the InCore lowering's 16 KiB chunks. Set on
            // the deduced call, which goes straight to the lowering (never into the IR).
            c.set_attr(super::allreduce::BUILTIN_TILE_ELEMS_ATTR, Attr::Int(BUILTIN_MESH_TILE));
        }
        (lowering.run)(b, &c, &[], span)?;
        if let Some((signal, row, nr)) = return_row.take() {
            return_barrier(b, signal, row, nr, span)?;
        }
        Ok(())
    })?;
    let mut f = fb.finish();
    let mut diags = pld_ir::Diagnostics::new();
    pld_ir::comm_fence::insert_comm_fences(&mut f, &mut diags);
    if let Some(d) = diags.iter().next() {
        return Err(Diagnostic::error(span, d.message.clone()));
    }
    Ok((f, extents))
}

/// The signal operand as the composite lowering addresses it: a rank-1 signal as `[NR, 1]`;
/// a single-block `[NR, stride]` signal's column 0; the ring signal without its last row
/// (recorded in `return_row` as `(signal, row, NR)` for the return barrier).
fn signal_view(
    b: &mut Builder<'_>,
    e: Expr,
    short: &str,
    blocks: i64,
    return_row: &mut Option<(Expr, Expr, Expr)>,
) -> Result<Expr, Diagnostic> {
    let Some(tt) = b.type_of(&e).as_tensor_like().cloned() else { return Ok(e) };
    if short == "allreduce_ring" {
        if tt.rank() != 2 {
            return Ok(e);
        }
        // The ring builtin's signal has one row per round plus a final return-barrier row: the
        // rounds go to the composite, the last row gets a barrier of its own after it.
        let rounds = match tt.shape[0].as_int() {
            Some(r) => Expr::int(r - 1),
            None => Expr::binary(BinOp::Sub, tt.shape[0].clone(), Expr::int(1)),
        };
        let v = b.assign_op(
            "signal_rounds",
            "tensor.slice",
            vec![e.clone(), Expr::tuple(vec![rounds.clone(), tt.shape[1].clone()]), Expr::ints(&[0, 0])],
            vec![],
        )?;
        *return_row = Some((e, rounds, tt.shape[1].clone()));
        return Ok(Expr::var(v));
    }
    if tt.rank() == 1 {
        let shape = Expr::tuple(vec![tt.shape[0].clone(), Expr::int(1)]);
        let v = b.assign_op("signal_2d", "tensor.view", vec![e, shape], vec![])?;
        return Ok(Expr::var(v));
    }
    if tt.rank() == 2 && tt.shape[1].as_int() != Some(1) && short == "allreduce" && blocks == 1 {
        // `[NR, stride]` multi-block signal: the single block uses column 0.
        let shape = Expr::tuple(vec![tt.shape[0].clone(), Expr::int(1)]);
        let v = b.assign_op("signal_col0", "tensor.slice", vec![e, shape, Expr::ints(&[0, 0])], vec![])?;
        return Ok(Expr::var(v));
    }
    Ok(e)
}

/// The ring builtin's final return barrier on signal row `row` (`[1, NR]`, viewed as the
/// `[NR, 1]` mesh layout): the barrier collective's own lowering — every rank adds one credit
/// on each peer, waits for all of theirs, and clears them — so no rank returns while a peer
/// may still read its window.
fn return_barrier(
    b: &mut Builder<'_>,
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

/// The body of a `core_num = C > 1` mesh allreduce kernel (seed "Kernel partitioning").
/// Block `b` ([`BLOCK_IDX_SYM`]) of the `C` ([`BLOCK_NUM_SYM`]) launched blocks owns the
/// 256-element tiles `b, b + C, …` of the flattened data and uses signal column `b`
/// (`[NR, stride]` signal: block `b` of rank `me` notifies `[me, b]` on each peer and waits on
/// its own `[p, b]`), so every (peer, block) pair has its own counter. Each block runs the
/// ready barrier once (also a block with no tile: ranks stay symmetric and `core_num` may
/// exceed the tile count), then per owned tile: load its own tile, combine every peer's in
/// rank order, the read-done barrier (generation `2 + i` for its `i`-th tile) before the
/// store; then the self-clearing epilogue of `1 + tiles` credits. A ragged last tile
/// (`E % 256` elements) belongs to block `(E / 256) % C`. Blocks at or beyond the signal
/// stride own no lane and retire at once (the same blocks on every rank). The data extent
/// must be static (the tiles are static windows).
fn multi_block_mesh(
    b: &mut Builder<'_>,
    data: &Expr,
    signal: &Expr,
    blocks: i64,
    reduce: &str,
) -> Result<(), Diagnostic> {
    use super::allreduce::{fold_peers, load_chunk, remote_chunk};
    use super::comm::{add, floordiv, sub, Cells, Comm};
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
    let flat = Expr::var(flat);
    let bid = Expr::sym(BLOCK_IDX_SYM);
    // The launched block count, read at run time like the reference template's trailing
    // `core_num` scalar: one rendered variant serves every core_num.
    let nblk = Expr::sym(BLOCK_NUM_SYM);
    let tile = BUILTIN_MESH_TILE;
    let full = numel / tile;
    let tail = numel % tile;
    let dtype = tt.dtype;
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
        let cells = Cells::Mesh;
        let mut comm = Comm::setup(b, &flat, Expr::var(lane))?;
        comm.barrier(b, &cells)?;
        let (me, nranks) = (comm.my_rank, comm.nranks);
        let comm = &comm;
        // Tile `t` (`col = t * 256`, `valid` elements): reduce, read-done barrier, store.
        let reduce_tile = |b: &mut Builder<'_>, t: Expr, valid: i64| -> Result<(), Diagnostic> {
            let col = Expr::binary(BinOp::Mul, t.clone(), Expr::int(tile));
            let valid = Expr::int(valid);
            let acc0 = load_chunk(b, &flat, Expr::int(0), col.clone(), tile, valid.clone(), "acc")?;
            let acc = fold_peers(b, (me, nranks), acc0, reduce, |b, peer| {
                remote_chunk(b, &flat, Expr::var(peer), Expr::int(0), col.clone(), tile, valid.clone(), dtype)
            })?;
            let nth = floordiv(sub(t, bid.clone()), nblk.clone());
            comm.barrier_at(b, &cells, add(Expr::int(2), nth))?;
            store_valid_row(b, acc, valid, (Expr::int(0), col), &flat)
        };
        if full > 0 {
            b.for_range("t", (bid.clone(), Expr::int(full), nblk.clone()), vec![], |b, t, _| {
                reduce_tile(b, Expr::var(t), tile)?;
                Ok(vec![])
            })?;
        }
        // Whole tiles this block owns: ceil((full - b) / C), never negative (b < C).
        let owned =
            floordiv(add(sub(Expr::int(full), bid.clone()), sub(nblk.clone(), Expr::int(1))), nblk.clone());
        if tail == 0 {
            return comm.epilogue(b, &cells, add(Expr::int(1), owned));
        }
        let owner_blk = Expr::binary(BinOp::Mod, Expr::int(full), nblk.clone());
        b.if_then(Expr::binary(BinOp::Eq, bid.clone(), owner_blk.clone()), |b| {
            reduce_tile(b, Expr::int(full), tail)?;
            comm.epilogue(b, &cells, add(Expr::int(2), owned.clone()))
        })?;
        b.if_then(Expr::binary(BinOp::Ne, bid.clone(), owner_blk), |b| {
            comm.epilogue(b, &cells, add(Expr::int(1), owned.clone()))
        })
    })
}

/// `f` specialised to block `block` of `blocks`: every block-index / block-count symbol
/// becomes that constant.
fn specialise_block(f: &Function, name: String, block: i64, blocks: i64) -> Function {
    let mut g = f.clone();
    g.name = name;
    g.body.walk_mut(&mut |s| {
        s.for_each_expr_mut(&mut |e| {
            e.walk_mut(&mut |x| {
                if let ExprKind::Sym(s) = &x.kind {
                    if s == BLOCK_IDX_SYM {
                        *x = Expr::int(block).at(x.span);
                    } else if s == BLOCK_NUM_SYM {
                        *x = Expr::int(blocks).at(x.span);
                    }
                }
            })
        })
    });
    g
}

/// The `BuiltinKernel` lowering of a builtin dispatch. With a `KernelRequest` it only builds the
/// kernel (into `b.new_functions`); otherwise the dispatch becomes a call of the kernel on the
/// same device, passing one `pld.system.get_comm_ctx` per peer-addressed window (one call per
/// block of a multi-block launch, each of a kernel specialised to its block).
fn lower_dispatch(
    b: &mut Builder<'_>,
    call: &Call,
    results: &[ValueId],
    span: Span,
) -> Result<(), Diagnostic> {
    b.span = span;
    let for_pto = b.context.kernel_request.is_some();
    let name = match &b.context.kernel_request {
        Some(request) => request.name.clone(),
        None => {
            let caller = b.context.function.clone().unwrap_or_else(|| "host".to_string());
            let short = call.callee.name().rsplit('.').next().unwrap_or("builtin");
            format!("{caller}_{short}_kernel_{}", b.values.len())
        }
    };
    let (kernel, extents) = build(&name, b.values, call, b.target, for_pto).map_err(|d| d.or_span(span))?;
    if for_pto {
        b.new_functions.push(kernel);
        return Ok(());
    }
    let params = call.op().map_or(&[][..], |d| d.params);
    let mut args = extents;
    args.extend(call.args.iter().cloned());
    for (i, a) in call.args.iter().enumerate() {
        let pname = params.get(i).map_or("arg", |p| p.name);
        if is_peer_window(&b.type_of(a), pname) {
            let base = a.as_var().map_or_else(|| pname.to_string(), |v| b.values.name(v).to_string());
            let c = b.assign_op(format!("{base}_ctx"), "pld.system.get_comm_ctx", vec![a.clone()], vec![])?;
            args.push(Expr::var(c));
        }
    }
    let blocks = launch_blocks(call);
    let kernels: Vec<Function> = if blocks > 1 {
        (0..blocks).map(|k| specialise_block(&kernel, format!("{name}_b{k}"), k, blocks)).collect()
    } else {
        vec![kernel]
    };
    for k in kernels {
        let e = b.func_call(&k.name, args.clone(), call.device.clone(), Type::Unknown);
        b.eval(e);
        b.new_functions.push(k);
    }
    if !results.is_empty() {
        let alias = call.args.iter().find(|a| b.type_of(a) == call.ty).cloned();
        let Some(alias) = alias else {
            return Err(Diagnostic::error(
                span,
                format!("{} result aliases none of its operands", call.callee.name()),
            ));
        };
        b.push(pld_ir::StmtKind::Assign { targets: results.to_vec(), value: alias });
    }
    Ok(())
}

register_lowering!("builtin.tensor.allreduce", LoweringKind::BuiltinKernel, lower_dispatch);
register_lowering!("builtin.tensor.allreduce_ring", LoweringKind::BuiltinKernel, lower_dispatch);
register_lowering!("builtin.tensor.barrier", LoweringKind::BuiltinKernel, lower_dispatch);
register_lowering!("builtin.tensor.broadcast", LoweringKind::BuiltinKernel, lower_dispatch);
register_lowering!("builtin.tensor.reduce_scatter", LoweringKind::BuiltinKernel, lower_dispatch);
register_lowering!("builtin.tensor.allgather", LoweringKind::BuiltinKernel, lower_dispatch);
register_lowering!("builtin.tensor.all_to_all", LoweringKind::BuiltinKernel, lower_dispatch);
register_lowering!("builtin.tensor.all_to_all_v", LoweringKind::BuiltinKernel, lower_dispatch);
