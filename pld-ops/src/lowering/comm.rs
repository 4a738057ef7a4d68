//! The shared building blocks of every InCore collective: the comm setup and the seed's
//! self-clearing credit barrier.
//!
//! `barrier(g)`: every rank adds +1 (AtomicAdd) into its own cell on every peer, then waits
//! until each peer's cell in its own signal is `>= g` (Ge). The epilogue subtracts the call's
//! total credit count back out of every peer's cell, so after every rank finished a call the
//! signal is all-zero again and the next call restarts at generation 1 — which is what
//! makes collectives legal inside loops and branches. Generations are counted per call.

use pld_ir::{Attr, BinOp, Builder, DataType, Diagnostic, Expr, Lowered, Type, UnOp, ValueId};
use pld_runtime_abi::{NotifyOp, WaitCmp};

/// How a signal's cells are addressed.
#[derive(Clone, Debug)]
pub enum Cells {
    /// Mesh `[NR, 1]`: rank `r`'s cell is `[r, 0]`.
    Mesh,
    /// Ring `[2(NR-1), NR]`: rank `r`'s cell on row `row` is `[row, r]`.
    Ring {
        /// The signal row.
        row: Expr,
    },
}

impl Cells {
    fn offsets(&self, rank: Expr) -> Expr {
        match self {
            Cells::Mesh => Expr::tuple(vec![rank, Expr::int(0)]),
            Cells::Ring { row } => Expr::tuple(vec![row.clone(), rank]),
        }
    }
}

/// The per-call communication state of one collective expansion.
pub struct Comm {
    /// `nranks(ctx)`.
    pub nranks: ValueId,
    /// `rank(ctx)`.
    pub my_rank: ValueId,
    /// The signal window.
    pub signal: Expr,
    generation: i64,
}

/// The binary index arithmetic the lowerings build with, one function per operator.
macro_rules! binary_exprs {
    ($($(#[$doc:meta])* $f:ident = $op:ident;)*) => {$(
        $(#[$doc])*
        pub fn $f(a: Expr, b: Expr) -> Expr {
            Expr::binary(BinOp::$op, a, b)
        }
    )*};
}

binary_exprs! {
    /// `a + b`, folded when static.
    add = Add;
    /// `a - b`, folded when static.
    sub = Sub;
    /// `a * b`, folded when static.
    mul = Mul;
    /// `a // b`, folded when static.
    floordiv = FloorDiv;
    /// `min(a, b)`, folded when static.
    min = Min;
    /// `max(a, b)`, folded when static.
    max = Max;
}

/// `ceil(a / b)` for positive `b`, folded when static.
pub fn ceil_div(a: Expr, b: i64) -> Expr {
    floordiv(add(a, Expr::int(b - 1)), Expr::int(b))
}
/// `-a`, folded for literals (so print/parse round trips stay equal).
pub fn neg(a: Expr) -> Expr {
    match a.as_int() {
        Some(v) => Expr::int(-v),
        None => Expr::new(pld_ir::ExprKind::Unary(UnOp::Neg, Box::new(a)), pld_ir::Span::DUMMY),
    }
}
/// The product of `dims`, folded when static.
pub fn product(dims: &[Expr]) -> Expr {
    dims.iter().cloned().reduce(mul).unwrap_or_else(|| Expr::int(1))
}

impl Comm {
    /// `ctx = get_comm_ctx(target)`, `nranks = nranks(ctx)`, `my_rank = rank(ctx)`.
    pub fn setup(b: &mut Builder<'_>, target: &Expr, signal: Expr) -> Result<Comm, Diagnostic> {
        let ctx = b.assign_op("ctx", "pld.system.get_comm_ctx", vec![target.clone()], vec![])?;
        let nranks = b.assign_op("nranks", "pld.system.nranks", vec![Expr::var(ctx)], vec![])?;
        let my_rank = b.assign_op("my_rank", "pld.system.rank", vec![Expr::var(ctx)], vec![])?;
        Ok(Comm { nranks, my_rank, signal, generation: 0 })
    }

    /// `for peer in range(nranks): if peer != my_rank: body(peer)`.
    pub fn for_each_peer(
        &self,
        b: &mut Builder<'_>,
        name: &str,
        body: impl FnOnce(&mut Builder<'_>, Expr) -> Result<(), Diagnostic>,
    ) -> Result<(), Diagnostic> {
        let me = self.my_rank;
        b.for_range(name, (Expr::int(0), Expr::var(self.nranks), Expr::int(1)), vec![], |b, peer, _| {
            let cond = Expr::binary(BinOp::Ne, Expr::var(peer), Expr::var(me));
            b.if_then(cond, |b| body(b, Expr::var(peer)))?;
            Ok(vec![])
        })?;
        Ok(())
    }

    /// Every peer gets `value` added into this rank's cell of its signal.
    pub fn notify_all(&self, b: &mut Builder<'_>, cells: &Cells, value: Expr) -> Result<(), Diagnostic> {
        let sig = self.signal.clone();
        let mine = cells.offsets(Expr::var(self.my_rank));
        self.for_each_peer(b, "peer", |b, peer| {
            b.eval_op(
                "pld.system.notify",
                vec![sig, peer, mine, value],
                vec![("op", Attr::Int(NotifyOp::AtomicAdd as i64))],
            )
        })
    }

    /// Waits until every peer's cell in this rank's signal is `>= expected`.
    pub fn wait_all(&self, b: &mut Builder<'_>, cells: &Cells, expected: Expr) -> Result<(), Diagnostic> {
        let sig = self.signal.clone();
        let cells = cells.clone();
        self.for_each_peer(b, "src", |b, src| {
            b.eval_op(
                "pld.system.wait",
                vec![sig, cells.offsets(src), expected],
                vec![("cmp", Attr::Int(WaitCmp::Ge as i64))],
            )
        })
    }

    /// One barrier at an explicit (possibly runtime) generation.
    pub fn barrier_at(&self, b: &mut Builder<'_>, cells: &Cells, expected: Expr) -> Result<(), Diagnostic> {
        self.notify_all(b, cells, Expr::int(1))?;
        self.wait_all(b, cells, expected)
    }

    /// The next call-local barrier (generation 1, 2, …); returns its generation.
    pub fn barrier(&mut self, b: &mut Builder<'_>, cells: &Cells) -> Result<i64, Diagnostic> {
        self.generation += 1;
        self.barrier_at(b, cells, Expr::int(self.generation))?;
        Ok(self.generation)
    }

    /// The common end of a mesh collective: one closing barrier, the self-clearing epilogue
    /// of `total` credits, and the statement's results bound to `value`.
    pub fn close(mut self, b: &mut Builder<'_>, total: Expr, results: &[ValueId], value: Expr) -> Lowered {
        self.barrier(b, &Cells::Mesh)?;
        self.epilogue(b, &Cells::Mesh, total)?;
        bind_result(b, results, value);
        Ok(())
    }

    /// The self-clearing epilogue: subtract `total` credits from every peer's cell of this
    /// rank's signal.
    pub fn epilogue(&self, b: &mut Builder<'_>, cells: &Cells, total: Expr) -> Result<(), Diagnostic> {
        let sig = self.signal.clone();
        let me = Expr::var(self.my_rank);
        let cells = cells.clone();
        let value = neg(total);
        self.for_each_peer(b, "src", |b, src| {
            b.eval_op(
                "pld.system.notify",
                vec![sig, me, cells.offsets(src), value],
                vec![("op", Attr::Int(NotifyOp::AtomicAdd as i64))],
            )
        })
    }
}

/// The `[NR, 1]` mesh signal check shared by every mesh collective.
pub fn check_mesh_signal(b: &Builder<'_>, op: &str, signal: &Expr) -> Result<(), Diagnostic> {
    let ty = b.type_of(signal);
    let Some(t) = ty.as_dist() else {
        return Err(Diagnostic::error(
            b.span,
            format!("{op} signal must be a DistributedTensor (window-bound), got {}", ty.kind_name()),
        ));
    };
    if t.rank() != 2 {
        return Err(Diagnostic::error(
            b.span,
            format!("{op} signal must be 2-D [NR, 1] inside a kernel, got rank {}", t.rank()),
        ));
    }
    if let Some(c) = t.shape[1].as_int() {
        if c != 1 {
            return Err(Diagnostic::error(
                b.span,
                format!("{op} mesh signal must have shape [NR, 1], got second dimension {c} (a ring-shaped signal cannot be reused for a mesh collective)"),
            ));
        }
    }
    Ok(())
}

/// Binds the original statement's result (if any) to `value`.
pub fn bind_result(b: &mut Builder<'_>, results: &[ValueId], value: Expr) {
    if !results.is_empty() {
        b.push(pld_ir::StmtKind::Assign { targets: results.to_vec(), value });
    }
}

/// Binds a lowered call to the original statement's results, or evaluates it for its effect
/// when there are none.
pub fn emit(b: &mut Builder<'_>, results: &[ValueId], e: Expr) {
    if results.is_empty() {
        b.eval(e);
    } else {
        bind_result(b, results, e);
    }
}

/// A Vec staging tile for a `[rows, cols]` put/get of a collective, bounded to one UB chunk
/// ([`pld_runtime_abi::ub_stage`]; D-ops-13), its rows padded to whole 32-byte blocks with the chunk
/// as its valid region.
pub fn ub_stage_tile(
    b: &mut Builder<'_>,
    name: &str,
    rows: i64,
    cols: i64,
    dtype: DataType,
) -> Result<ValueId, Diagnostic> {
    padded_stage_tile(b, name, pld_runtime_abi::ub_stage(rows, cols, dtype.bytes() as i64), dtype)
}

/// A Vec staging tile of `rows × cols` elements whose rows are padded to whole 32-byte blocks
/// (`tile.create` of the physical width, named `<name>_buf` when padded), with `rows × cols`
/// as its valid region (`tile.set_validshape`, named `name`).
pub fn padded_stage_tile(
    b: &mut Builder<'_>,
    name: &str,
    (rows, cols): (i64, i64),
    dtype: DataType,
) -> Result<ValueId, Diagnostic> {
    let pc = super::row_aligned_cols(cols, dtype.bytes() as i64);
    let buf = b.assign_op(
        if pc == cols { name.to_string() } else { format!("{name}_buf") },
        "tile.create",
        vec![Expr::ints(&[rows, pc])],
        vec![("dtype", Attr::DType(dtype)), ("target_memory", Attr::Str("Vec".into()))],
    )?;
    if pc == cols {
        return Ok(buf);
    }
    b.assign_op(name, "tile.set_validshape", vec![Expr::var(buf), Expr::int(rows), Expr::int(cols)], vec![])
}

/// The operands a collective's push loop keeps: this rank's `src` goes through the Vec
/// `stage` tile into the peers' `target` windows (`pld.tile.put` with `atomic=None_`).
pub struct StagedPush {
    /// The destination window.
    pub target: Expr,
    /// The local source.
    pub src: Expr,
    /// The Vec staging tile.
    pub stage: ValueId,
}

impl StagedPush {
    /// Pushes the `shape` region at `src_offsets` of the source to `dst_offsets` of peer
    /// `dest`'s window.
    pub fn to_peer(
        &self,
        b: &mut Builder<'_>,
        dest: Expr,
        (dst_offsets, src_offsets): (Expr, Expr),
        shape: Expr,
    ) -> Result<(), Diagnostic> {
        let args = vec![self.target.clone(), dest, self.src.clone(), Expr::var(self.stage)];
        b.eval_op(
            "pld.tile.put",
            [args, vec![dst_offsets, src_offsets, shape]].concat(),
            vec![("atomic", Attr::Int(0))],
        )
    }
}

/// Stores the first `valid` columns of the `[1, chunk]` tile `value` at `[row, col]` of `dst`
/// (`tile.set_validshape`, then `tile.store`): the store-back of every chunked collective.
pub fn store_valid_row(
    b: &mut Builder<'_>,
    value: ValueId,
    valid: Expr,
    (row, col): (Expr, Expr),
    dst: &Expr,
) -> Result<(), Diagnostic> {
    let store = b.assign_op(
        "store_value",
        "tile.set_validshape",
        vec![Expr::var(value), Expr::int(1), valid],
        vec![],
    )?;
    b.eval_op("tile.store", vec![Expr::var(store), Expr::tuple(vec![row, col]), dst.clone()], vec![])
}

/// The tensor fields of a tensor-like expression, or a diagnostic naming `op` and `what`.
pub fn tensor_of(b: &Builder<'_>, op: &str, what: &str, e: &Expr) -> Result<pld_ir::TensorType, Diagnostic> {
    match b.type_of(e) {
        Type::Tensor(t) => Ok(t),
        Type::DistTensor(d) => Ok(d.tensor),
        other => {
            Err(Diagnostic::error(b.span, format!("{op} {what} must be a tensor, got {}", other.kind_name())))
        }
    }
}
