//! The per-function emitter: the emission context [`FnCx`] (text sections, SSA names, the
//! value environment) and the building blocks op emitters share. Each concern lives in its own
//! submodule: `values` (the typed values an IR value is bound to), `scalar` (constants and
//! scalar arithmetic), `tiles` (tile buffer types and allocation), `addrs` (tile-address
//! planning), `views` (tensor views, partitions and the peer-offset sequence), `signature`
//! (parameters and the view prologue), `walk` (the statement walk) and `print` (the typed body
//! lines and assembling the function text, each allocation's address from the plan).
//!
//! Guarantees:
//! - The signature follows the runtime calling order (codegen.md §1.2, checklist C4): tensor
//!   pointers, then scalars and CommContext pointers, then one `index` per dynamic shape
//!   symbol, then hidden parameters that the body used (the deferred-completion args, then
//!   the SPMD block index and count).
//! - Every constant is hoisted and deduplicated; every SSA value has one type (P8); offsets,
//!   sizes, shapes and strides are `index` (P5); partition views check V7 for static values.
//! - The peer-offset sequence is emitted inline at each remote operand, in the calling
//!   function (C1/C2): three `pto.load_scalar`, the byte delta divided by the element size,
//!   `pto.addptr`, then the peer `pto.make_tensor_view`.
//! - The walk never names an op: calls go through the emitter table; a missing emitter is a
//!   diagnostic naming the op (with a note when a pass would have lowered it).

mod addrs;
mod names;
mod print;
mod scalar;
mod signature;
mod tiles;
mod values;
mod views;
mod walk;

pub use values::{val_kind, FnOut, Idx, TensorRef, Val, BLOCK_IDX_SYM, BLOCK_NUM_SYM};

use crate::pto::{Inst, Line};
use crate::CodegenOptions;
use addrs::TileAlloc;
use names::{Code, Consts, Names};
use pld_ir::{Call, Diagnostic, Expr, ExprKind, Function, Program, Span, TileType, ValueId};
use values::Env;

/// The emission state of one function; op emitters use its public helpers. Each concern
/// is its own part: the SSA names, the hoisted constants, the instruction sections, the value
/// environment and the tile allocation.
pub struct FnCx<'a> {
    /// The program.
    pub program: &'a Program,
    /// The function being emitted.
    pub func: &'a Function,
    /// Codegen options.
    pub opts: &'a CodegenOptions,
    /// The span of the statement being emitted (for diagnostics).
    pub span: Span,
    /// Set by emitters that register a deferred wait.
    pub uses_deferred: bool,
    names: Names,
    consts: Consts,
    code: Code,
    env: Env,
    tiles: TileAlloc,
}

/// Sanitises an IR name into an MLIR identifier fragment.
pub(super) fn sanitize(name: &str) -> String {
    let mut s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'v');
    }
    s
}

/// The trailing `.pto` parameters that carry a kernel's SPMD block identity (codegen.md §1.2,
/// `runtime_artifacts.md` §5.3): the wrapper's `kernel_entry` fills them from the runtime's
/// `get_block_idx(args)` / `get_block_num(args)`. The hardware built-ins
/// (`pto.get_block_idx` / `pto.get_block_num`) are never emitted: Simpler does not program
/// those registers under its dispatch, so they read stale values.
pub const BLOCK_ID_PARAMS: [&str; 2] = ["%__pypto_spmd_block_idx", "%__pypto_spmd_block_num"];

/// The hidden `!pto.ptr<i64>` parameter a kernel that registers a deferred wait receives
/// (the runtime's raw argument block, handed to `pypto_register_counter_completion`).
pub const DEFERRED_ARGS_PARAM: &str = "%__pypto_deferred_raw_args";

/// Whether `f` reads its SPMD block identity (then its signature ends with
/// [`BLOCK_ID_PARAMS`], both of them, after every other parameter).
pub fn uses_block_ids(f: &Function) -> bool {
    let mut found = false;
    f.body.walk_exprs(&mut |e| {
        if let ExprKind::Sym(s) = &e.kind {
            found |= s == BLOCK_IDX_SYM || s == BLOCK_NUM_SYM;
        }
    });
    found
}

/// Emits one kernel function.
pub fn emit_function(program: &Program, func: &Function, opts: &CodegenOptions) -> Result<FnOut, Diagnostic> {
    let mut cx = FnCx {
        program,
        func,
        opts,
        span: func.span,
        uses_deferred: false,
        names: Names::default(),
        consts: Consts::default(),
        code: Code::default(),
        env: Env::default(),
        tiles: TileAlloc::default(),
    };
    let params = cx.bind_params()?;
    cx.emit_views()?;
    cx.code.in_prologue = false;
    cx.emit_top_block(&func.body.stmts)?;
    cx.finish(params)
}

impl<'a> FnCx<'a> {
    // ----------------------------------------------------------------------------------
    // Diagnostics and text
    // ----------------------------------------------------------------------------------

    /// An error at the current statement, naming the function.
    pub fn err(&self, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::error(self.span, msg)
    }

    /// Appends a typed instruction at the current depth of the current section; the line
    /// carries the span of the statement being lowered ([`FnCx::span`], set by the walk).
    pub fn push(&mut self, inst: Inst) {
        self.code.push(inst, self.span);
    }

    /// Starts collecting the lines of a nested region (ended by [`FnCx::close_region`]).
    pub(super) fn open_region(&mut self) {
        self.code.open_region();
    }

    /// Ends the innermost region: returns its lines and appends to the enclosing one again.
    pub(super) fn close_region(&mut self) -> Vec<Line> {
        self.code.close_region()
    }

    /// A fresh numeric temporary (`%N`).
    pub fn tmp(&mut self) -> String {
        self.names.tmp()
    }

    /// A readable SSA name derived from `hint`, or a numeric temporary when taken.
    pub fn named(&mut self, hint: &str) -> String {
        self.names.named(&sanitize(hint))
    }

    /// The IR name of a value, sanitised.
    pub fn value_name(&self, v: ValueId) -> String {
        sanitize(self.func.values.name(v))
    }

    // ----------------------------------------------------------------------------------
    // Constants and scalar arithmetic
    // ----------------------------------------------------------------------------------

    // ----------------------------------------------------------------------------------
    // Values
    // ----------------------------------------------------------------------------------

    /// Binds IR value `v` to `val`.
    pub fn bind(&mut self, v: ValueId, val: Val) {
        self.env.values.insert(v, val);
    }

    /// Evaluates an operand expression to its binding (variables, nested calls, scalars).
    pub fn value(&mut self, e: &Expr) -> Result<Val, Diagnostic> {
        match &e.kind {
            ExprKind::Var(v) => match self.env.values.get(v) {
                Some(val) => Ok(val.clone()),
                None => Err(self.err(format!(
                    "value '{}' has no pto binding in kernel '{}'",
                    self.func.values.name(*v),
                    self.func.name
                ))),
            },
            ExprKind::Call(c) => self.emit_call(c, &[]),
            _ => {
                let (ssa, ty) = self.scalar(e)?;
                Ok(Val::Scalar { ssa, ty })
            }
        }
    }

    /// The tensor behind operand `e`; `what` names the operand for diagnostics (`op target`).
    pub fn tensor(&mut self, e: &Expr, what: &str) -> Result<TensorRef, Diagnostic> {
        match self.value(e)? {
            Val::Tensor(t) => Ok(t),
            other => Err(self.err(format!(
                "{what} must be a tensor parameter of the kernel (pto views are made from parameters), got a {}",
                val_kind(&other)
            ))),
        }
    }

    /// The tile behind operand `e`.
    pub fn tile(&mut self, e: &Expr, what: &str) -> Result<(String, TileType), Diagnostic> {
        match self.value(e)? {
            Val::Tile { ssa, tile } => Ok((ssa, tile)),
            other => Err(self.err(format!("{what} must be a tile, got a {}", val_kind(&other)))),
        }
    }

    /// The CommContext pointer behind operand `e`.
    pub fn ctx(&mut self, e: &Expr, what: &str) -> Result<String, Diagnostic> {
        match self.value(e)? {
            Val::Ctx { ssa } => Ok(ssa),
            other => Err(self.err(format!("{what} must be a CommCtx, got a {}", val_kind(&other)))),
        }
    }

    // ----------------------------------------------------------------------------------
    // Tiles
    // ----------------------------------------------------------------------------------

    /// Evaluates an op-call argument that must be a tuple literal.
    pub fn tuple_arg<'c>(&self, call: &'c Call, i: usize, what: &str) -> Result<&'c [Expr], Diagnostic> {
        match call.args.get(i).and_then(|a| a.as_tuple()) {
            Some(t) => Ok(t),
            None => Err(self.err(format!("{} {what} must be a tuple", call.callee.name()))),
        }
    }

    /// Argument `i` of an op call.
    pub fn arg<'c>(&self, call: &'c Call, i: usize, what: &str) -> Result<&'c Expr, Diagnostic> {
        call.args
            .get(i)
            .ok_or_else(|| self.err(format!("{} is missing its {what} argument", call.callee.name())))
    }

    /// The readable name hint for a call's result.
    pub fn result_hint(&self, targets: &[ValueId], fallback: &str) -> String {
        targets.first().map_or_else(|| fallback.to_string(), |t| self.value_name(*t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised() {
        assert_eq!(sanitize("x__ssa.v0"), "x__ssa_v0");
        assert_eq!(sanitize("0abc"), "v0abc");
        assert_eq!(sanitize(""), "v");
    }
}
