//! The per-function emitter: signature, constants, tensor-view prologue, body walk, and the
//! building blocks op emitters share (scalar arithmetic, tile allocation, partition views and
//! the inline CommContext peer-offset sequence).
//!
//! Guarantees:
//! - The signature follows the runtime calling order (codegen.md §1.2, checklist C4): tensor
//!   pointers, then scalars and CommContext pointers, then one `index` per dynamic shape
//!   symbol, then hidden parameters that the body used.
//! - Every constant is hoisted and deduplicated; every SSA value has one type (P8); offsets,
//!   sizes, shapes and strides are `index` (P5); partition views check V7 for static values.
//! - The peer-offset sequence is emitted inline at each remote operand, in the calling
//!   function (C1/C2): three `pto.load_scalar`, the byte delta divided by the element size,
//!   `pto.addptr`, then the peer `pto.make_tensor_view`.
//! - The walk never names an op: calls go through the emitter table; a missing emitter is a
//!   diagnostic naming the op (with a note when a pass would have lowered it).

use crate::mlir::{self, MTy};
use crate::verify::{Fact, KernelFacts, OpClass, TileBuf};
use crate::{emitters, CodegenOptions};
use pld_ir::registry::LoweringKind;
use pld_ir::{
    BinOp, Call, Callee, DataType, Diagnostic, Expr, ExprKind, Function, FunctionKind, Layout, Program, Span,
    Stmt, StmtKind, TensorType, TileType, Type, UnOp, ValueId,
};
use std::collections::{HashMap, HashSet};

/// The reserved symbol a synthesized kernel body uses for the block index of an SPMD launch
/// (`pto.get_block_idx`, cast to `index`); it never becomes a signature parameter.
pub const BLOCK_IDX_SYM: &str = "__pld_block_idx";

/// The reserved symbol for the launched block count (`pto.get_block_num`, cast to `index`).
pub const BLOCK_NUM_SYM: &str = "__pld_block_num";

/// A tensor operand: a tensor-like parameter of the kernel (or a value aliasing one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorRef {
    /// Readable base name (the parameter's IR name, sanitised).
    pub name: String,
    /// Index of the parameter among the function's parameters.
    pub param: usize,
    /// Identity of its tensor view (the parameter index, or a fresh key for a derived view).
    pub key: usize,
    /// The pointer argument (`%argK`).
    pub ptr: String,
    /// The tensor type.
    pub ty: TensorType,
    /// Whether the parameter is a window-bound DistributedTensor.
    pub dist: bool,
    /// The paired CommContext argument, for a DistributedTensor.
    pub ctx: Option<String>,
}

/// What an IR value is bound to in the emitted function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Val {
    /// No value (side-effect-only call).
    Unit,
    /// A scalar SSA value.
    Scalar {
        /// SSA name.
        ssa: String,
        /// Its type.
        ty: MTy,
    },
    /// A tile buffer.
    Tile {
        /// SSA name of the `pto.alloc_tile`.
        ssa: String,
        /// Its IR type.
        tile: TileType,
    },
    /// A tensor parameter.
    Tensor(TensorRef),
    /// A CommContext pointer (`!pto.ptr<i64>`).
    Ctx {
        /// SSA name.
        ssa: String,
    },
    /// An on-core array (`pto.declare_local_array`); updates write it in place, so every
    /// version of an IR array value binds to the same declaration.
    Array {
        /// SSA name of the declaration.
        ssa: String,
        /// Its IR type.
        ty: pld_ir::ArrayType,
    },
}

/// The text of one emitted function.
#[derive(Clone, Debug)]
pub struct FnOut {
    /// The `func.func` text, indented for a module body.
    pub text: String,
    /// Whether the function registered a deferred wait (the module needs the declaration).
    pub uses_deferred: bool,
    /// What the PTO verifier checks before the module is written.
    pub facts: KernelFacts,
}

/// An `index` operand that may still be folded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Idx {
    /// A constant.
    Const(i64),
    /// An SSA value of type `index`.
    Ssa(String),
}

#[derive(Clone, Debug)]
struct ViewInfo {
    ssa: String,
    shape: Vec<String>,
    strides: Vec<String>,
    layout: &'static str,
}

#[derive(Clone, Debug)]
struct AllocSlot {
    /// Byte address inside its buffer.
    addr: u64,
    /// The slot whose buffer this allocation aliases (a new valid region on the same memory).
    alias: Option<usize>,
}

const ADDR_MARK: char = '\u{1}';

/// The emission state of one function; op emitters use its public helpers.
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
    consts: Vec<String>,
    const_names: HashMap<String, String>,
    prologue: Vec<String>,
    body: Vec<String>,
    in_prologue: bool,
    indent: usize,
    names: HashSet<String>,
    next_tmp: usize,
    env: HashMap<ValueId, Val>,
    views: HashMap<usize, ViewInfo>,
    sym_params: HashMap<String, String>,
    allocs: Vec<AllocSlot>,
    tile_types: HashMap<String, String>,
    tile_slots: HashMap<String, usize>,
    next_view: usize,
    bump: HashMap<&'static str, u64>,
    high: HashMap<&'static str, u64>,
    pub(crate) facts: Vec<Fact>,
}

/// Sanitises an IR name into an MLIR identifier fragment.
fn sanitize(name: &str) -> String {
    let mut s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'v');
    }
    s
}

/// Collects the symbolic dims of `dims` in first-seen order.
fn collect_syms(dims: &[Expr], out: &mut Vec<String>) {
    for d in dims {
        d.walk(&mut |e| {
            if let ExprKind::Sym(s) = &e.kind {
                if !out.contains(s) {
                    out.push(s.clone());
                }
            }
        });
    }
}

/// Emits one kernel function.
pub fn emit_function(program: &Program, func: &Function, opts: &CodegenOptions) -> Result<FnOut, Diagnostic> {
    let mut cx = FnCx {
        program,
        func,
        opts,
        span: func.span,
        uses_deferred: false,
        consts: Vec::new(),
        const_names: HashMap::new(),
        prologue: Vec::new(),
        body: Vec::new(),
        in_prologue: true,
        indent: 1,
        names: HashSet::new(),
        next_tmp: 0,
        env: HashMap::new(),
        views: HashMap::new(),
        sym_params: HashMap::new(),
        allocs: Vec::new(),
        tile_types: HashMap::new(),
        tile_slots: HashMap::new(),
        next_view: 0,
        bump: HashMap::new(),
        high: HashMap::new(),
        facts: Vec::new(),
    };
    let params = cx.bind_params()?;
    cx.emit_views()?;
    cx.in_prologue = false;
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

    /// Appends one line at the current indentation of the current section.
    pub fn line(&mut self, text: impl AsRef<str>) {
        let pad = "  ".repeat(self.indent);
        let l = format!("{pad}{}", text.as_ref());
        if self.in_prologue {
            self.prologue.push(l);
        } else {
            self.body.push(l);
        }
    }

    /// A fresh numeric temporary (`%N`).
    pub fn tmp(&mut self) -> String {
        loop {
            let n = format!("%{}", self.next_tmp);
            self.next_tmp += 1;
            if self.names.insert(n.clone()) {
                return n;
            }
        }
    }

    /// A readable SSA name derived from `hint`, or a numeric temporary when taken.
    pub fn named(&mut self, hint: &str) -> String {
        let n = format!("%{}", sanitize(hint));
        if self.names.insert(n.clone()) {
            n
        } else {
            self.tmp()
        }
    }

    /// The IR name of a value, sanitised.
    pub fn value_name(&self, v: ValueId) -> String {
        sanitize(self.func.values.name(v))
    }

    // ----------------------------------------------------------------------------------
    // Constants and scalar arithmetic
    // ----------------------------------------------------------------------------------

    fn constant(&mut self, value: String, label: String, ty: MTy) -> String {
        let key = format!("{value}:{}", ty.name());
        if let Some(n) = self.const_names.get(&key) {
            return n.clone();
        }
        let mut name = format!("%c{label}_{}", ty.name());
        if !self.names.insert(name.clone()) {
            name = self.tmp();
        }
        self.consts.push(format!("  {name} = arith.constant {value} : {}", ty.name()));
        self.const_names.insert(key, name.clone());
        name
    }

    /// A hoisted integer constant (`%c16_index`, `%cn1_i32`).
    pub fn const_int(&mut self, v: i64, ty: MTy) -> String {
        if ty == MTy::I1 {
            let (value, label) = if v != 0 { ("true", "true") } else { ("false", "false") };
            return self.constant(value.into(), label.into(), ty);
        }
        if ty.is_float() {
            return self.const_float(v as f64, ty);
        }
        let label = if v < 0 { format!("n{}", v.unsigned_abs()) } else { v.to_string() };
        self.constant(v.to_string(), label, ty)
    }

    /// A hoisted float constant.
    pub fn const_float(&mut self, v: f64, ty: MTy) -> String {
        let value = float_literal(v, ty);
        let label = value.replace('-', "n").replace('.', "p").replace('+', "");
        self.constant(value, label, ty)
    }

    /// Materialises an [`Idx`].
    pub fn idx(&mut self, i: &Idx) -> String {
        match i {
            Idx::Const(v) => self.const_int(*v, MTy::Index),
            Idx::Ssa(s) => s.clone(),
        }
    }

    /// `a * b` over `index`, folded when both are constant.
    pub fn mul_idx(&mut self, a: &Idx, b: &Idx) -> Idx {
        match (a, b) {
            (Idx::Const(x), Idx::Const(y)) => Idx::Const(x.saturating_mul(*y)),
            (Idx::Const(1), other) | (other, Idx::Const(1)) => other.clone(),
            _ => {
                let (x, y) = (self.idx(a), self.idx(b));
                let t = self.tmp();
                self.line(format!("{t} = arith.muli {x}, {y} : index"));
                Idx::Ssa(t)
            }
        }
    }

    /// Converts SSA value `v` of type `from` to type `to`.
    pub fn cast(&mut self, v: &str, from: MTy, to: MTy) -> Result<String, Diagnostic> {
        if from == to {
            return Ok(v.to_string());
        }
        let (f, t) = (from.name(), to.name());
        let op = match (from, to) {
            (MTy::Index, _) if to.int_width().is_some() => "arith.index_cast",
            (_, MTy::Index) if from.int_width().is_some() => "arith.index_cast",
            (MTy::I1, _) if to.int_width().is_some() => "arith.extui",
            (_, _) if from.int_width().is_some() && to.int_width().is_some() => {
                if to.int_width() > from.int_width() {
                    "arith.extsi"
                } else {
                    "arith.trunci"
                }
            }
            (_, _) if from.int_width().is_some() && to.is_float() => {
                if from == MTy::Index {
                    let i = self.cast(v, from, MTy::Int(64))?;
                    return self.cast(&i, MTy::Int(64), to);
                }
                "arith.sitofp"
            }
            (_, _) if from.is_float() && to.int_width().is_some() => {
                if to == MTy::Index {
                    let i = self.cast(v, from, MTy::Int(64))?;
                    return self.cast(&i, MTy::Int(64), to);
                }
                "arith.fptosi"
            }
            (_, _) if from.is_float() && to.is_float() => {
                if to.float_width() > from.float_width() {
                    "arith.extf"
                } else {
                    "arith.truncf"
                }
            }
            _ => return Err(self.err(format!("cannot convert a {f} value to {t}"))),
        };
        let r = self.tmp();
        self.line(format!("{r} = {op} {v} : {f} to {t}"));
        Ok(r)
    }

    /// Evaluates a scalar expression in its natural type.
    pub fn scalar(&mut self, e: &Expr) -> Result<(String, MTy), Diagnostic> {
        match &e.kind {
            ExprKind::Int(v) => Ok((self.const_int(*v, MTy::Index), MTy::Index)),
            ExprKind::Float(b) => Ok((self.const_float(b.get(), MTy::F32), MTy::F32)),
            ExprKind::Bool(b) => Ok((self.const_int(i64::from(*b), MTy::I1), MTy::I1)),
            ExprKind::Sym(s) if s == BLOCK_IDX_SYM || s == BLOCK_NUM_SYM => {
                // Emitted at each use: a use inside a region must not define an SSA value
                // that a later use outside the region would reference.
                let inst = if s == BLOCK_IDX_SYM { "pto.get_block_idx" } else { "pto.get_block_num" };
                let raw = self.tmp();
                self.line(format!("{raw} = {inst}"));
                let idx = self.tmp();
                self.line(format!("{idx} = arith.index_cast {raw} : i64 to index"));
                Ok((idx, MTy::Index))
            }
            ExprKind::Sym(s) => match self.sym_params.get(s) {
                Some(p) => Ok((p.clone(), MTy::Index)),
                None => Err(self.err(format!(
                    "dynamic dim '{s}' is not bound by any tensor parameter of kernel '{}'; pto codegen needs every symbolic extent to be a runtime parameter",
                    self.func.name
                ))),
            },
            ExprKind::Var(v) => match self.env.get(v) {
                Some(Val::Scalar { ssa, ty }) => Ok((ssa.clone(), *ty)),
                Some(other) => Err(self.err(format!(
                    "value '{}' is used as a scalar but is a {}",
                    self.func.values.name(*v),
                    val_kind(other)
                ))),
                None => Err(self.err(format!(
                    "value '{}' has no pto binding in kernel '{}'",
                    self.func.values.name(*v),
                    self.func.name
                ))),
            },
            ExprKind::Call(c) => match self.emit_call(c, &[])? {
                Val::Scalar { ssa, ty } => Ok((ssa, ty)),
                other => Err(self.err(format!("{} is used as a scalar but yields a {}", c.callee.name(), val_kind(&other)))),
            },
            ExprKind::Unary(UnOp::Neg, a) => {
                let (x, t) = self.scalar(a)?;
                let r = self.tmp();
                if t.is_float() {
                    self.line(format!("{r} = arith.negf {x} : {}", t.name()));
                } else {
                    let z = self.const_int(0, t);
                    self.line(format!("{r} = arith.subi {z}, {x} : {}", t.name()));
                }
                Ok((r, t))
            }
            ExprKind::Unary(UnOp::Not, a) => {
                let x = self.scalar_as(a, MTy::I1)?;
                let one = self.const_int(1, MTy::I1);
                let r = self.tmp();
                self.line(format!("{r} = arith.xori {x}, {one} : i1"));
                Ok((r, MTy::I1))
            }
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b),
            ExprKind::Str(_) | ExprKind::DType(_) | ExprKind::Tuple(_) => {
                Err(self.err(format!("`{e}` is not a scalar expression pto codegen can evaluate")))
            }
        }
    }

    fn binary(&mut self, op: BinOp, a: &Expr, b: &Expr) -> Result<(String, MTy), Diagnostic> {
        if matches!(op, BinOp::And | BinOp::Or) {
            let x = self.scalar_as(a, MTy::I1)?;
            let y = self.scalar_as(b, MTy::I1)?;
            let r = self.tmp();
            let o = if op == BinOp::And { "andi" } else { "ori" };
            self.line(format!("{r} = arith.{o} {x}, {y} : i1"));
            return Ok((r, MTy::I1));
        }
        // The operand type: a literal adopts the other side's type.
        let lit = |e: &Expr| matches!(e.kind, ExprKind::Int(_) | ExprKind::Float(_));
        let (x, y, t) = if lit(a) && !lit(b) {
            let (y, t) = self.scalar(b)?;
            (self.scalar_as(a, t)?, y, t)
        } else if lit(b) {
            let (x, t) = self.scalar(a)?;
            (x, self.scalar_as(b, t)?, t)
        } else {
            let (x, ta) = self.scalar(a)?;
            let (y, tb) = self.scalar(b)?;
            let t = common_type(ta, tb);
            (self.cast(&x, ta, t)?, self.cast(&y, tb, t)?, t)
        };
        let f = t.is_float();
        let r = self.tmp();
        let ty = t.name();
        let cmp = |p_int: &str, p_f: &str| {
            if f {
                format!("arith.cmpf {p_f},")
            } else {
                format!("arith.cmpi {p_int},")
            }
        };
        let text = match op {
            BinOp::Add => format!("arith.{} {x}, {y} : {ty}", if f { "addf" } else { "addi" }),
            BinOp::Sub => format!("arith.{} {x}, {y} : {ty}", if f { "subf" } else { "subi" }),
            BinOp::Mul => format!("arith.{} {x}, {y} : {ty}", if f { "mulf" } else { "muli" }),
            BinOp::Div => format!("arith.{} {x}, {y} : {ty}", if f { "divf" } else { "divsi" }),
            BinOp::FloorDiv if !f => format!("arith.floordivsi {x}, {y} : {ty}"),
            BinOp::Mod if f => format!("arith.remf {x}, {y} : {ty}"),
            BinOp::Mod => return self.floor_mod(&r, &x, &y, t),
            BinOp::Min => format!("arith.{} {x}, {y} : {ty}", if f { "minimumf" } else { "minsi" }),
            BinOp::Max => format!("arith.{} {x}, {y} : {ty}", if f { "maximumf" } else { "maxsi" }),
            BinOp::Eq => format!("{} {x}, {y} : {ty}", cmp("eq", "oeq")),
            BinOp::Ne => format!("{} {x}, {y} : {ty}", cmp("ne", "one")),
            BinOp::Lt => format!("{} {x}, {y} : {ty}", cmp("slt", "olt")),
            BinOp::Le => format!("{} {x}, {y} : {ty}", cmp("sle", "ole")),
            BinOp::Gt => format!("{} {x}, {y} : {ty}", cmp("sgt", "ogt")),
            BinOp::Ge => format!("{} {x}, {y} : {ty}", cmp("sge", "oge")),
            _ => {
                return Err(
                    self.err(format!("operator `{}` on {ty} is not supported by pto codegen", op.symbol()))
                )
            }
        };
        self.line(format!("{r} = {text}"));
        Ok((r, if op.is_comparison() { MTy::I1 } else { t }))
    }

    /// Python's `%` on integers: the remainder takes the divisor's sign (`arith.remsi`
    /// truncates, so a non-zero remainder whose sign differs from the divisor's is shifted).
    fn floor_mod(&mut self, r: &str, x: &str, y: &str, t: MTy) -> Result<(String, MTy), Diagnostic> {
        let ty = t.name();
        self.line(format!("{r} = arith.remsi {x}, {y} : {ty}"));
        let z = self.const_int(0, t);
        let (nz, rn, yn, sd, fix, adj, res) =
            (self.tmp(), self.tmp(), self.tmp(), self.tmp(), self.tmp(), self.tmp(), self.tmp());
        self.line(format!("{nz} = arith.cmpi ne, {r}, {z} : {ty}"));
        self.line(format!("{rn} = arith.cmpi slt, {r}, {z} : {ty}"));
        self.line(format!("{yn} = arith.cmpi slt, {y}, {z} : {ty}"));
        self.line(format!("{sd} = arith.xori {rn}, {yn} : i1"));
        self.line(format!("{fix} = arith.andi {nz}, {sd} : i1"));
        self.line(format!("{adj} = arith.addi {r}, {y} : {ty}"));
        self.line(format!("{res} = arith.select {fix}, {adj}, {r} : {ty}"));
        Ok((res, t))
    }

    /// Evaluates a scalar expression as type `ty` (literals are emitted directly in `ty`).
    pub fn scalar_as(&mut self, e: &Expr, ty: MTy) -> Result<String, Diagnostic> {
        match &e.kind {
            ExprKind::Int(v) => Ok(self.const_int(*v, ty)),
            ExprKind::Float(b) if ty.is_float() => Ok(self.const_float(b.get(), ty)),
            ExprKind::Bool(b) => {
                let one = self.const_int(i64::from(*b), MTy::I1);
                self.cast(&one, MTy::I1, ty)
            }
            ExprKind::Var(v) if ty == MTy::Index => {
                let (x, t) = self.scalar(e)?;
                if t == MTy::Index {
                    return Ok(x);
                }
                if t.int_width().is_none() {
                    return self.cast(&x, t, ty);
                }
                let name = self.named(&format!("{}_idx", self.value_name(*v)));
                self.line(format!("{name} = arith.index_cast {x} : {} to index", t.name()));
                Ok(name)
            }
            _ => {
                let (x, t) = self.scalar(e)?;
                self.cast(&x, t, ty)
            }
        }
    }

    /// An `index` offset clamped at 0: constants fold, runtime values get `arith.maxsi` (V7).
    pub fn offset(&mut self, e: &Expr) -> Result<(String, Option<i64>), Diagnostic> {
        if let Some(v) = e.as_int() {
            let v = v.max(0);
            return Ok((self.const_int(v, MTy::Index), Some(v)));
        }
        let x = self.scalar_as(e, MTy::Index)?;
        let z = self.const_int(0, MTy::Index);
        let r = self.tmp();
        self.line(format!("{r} = arith.maxsi {x}, {z} : index"));
        Ok((r, None))
    }

    /// An `index` size: a constant or a runtime value (no clamp).
    pub fn size(&mut self, e: &Expr) -> Result<(String, Option<i64>), Diagnostic> {
        if let Some(v) = e.as_int() {
            return Ok((self.const_int(v, MTy::Index), Some(v)));
        }
        Ok((self.scalar_as(e, MTy::Index)?, None))
    }

    // ----------------------------------------------------------------------------------
    // Values
    // ----------------------------------------------------------------------------------

    /// Binds IR value `v` to `val`.
    pub fn bind(&mut self, v: ValueId, val: Val) {
        self.env.insert(v, val);
    }

    /// Evaluates an operand expression to its binding (variables, nested calls, scalars).
    pub fn value(&mut self, e: &Expr) -> Result<Val, Diagnostic> {
        match &e.kind {
            ExprKind::Var(v) => match self.env.get(v) {
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

    /// The static 2-D `(rows, cols)` of a tile (rank 1 → one row; rank > 2 folds leading dims).
    pub fn tile_dims(&self, t: &TileType) -> Result<(i64, i64), Diagnostic> {
        let Some(s) = t.static_shape() else {
            let shape: Vec<String> = t.shape.iter().map(|d| d.to_string()).collect();
            return Err(self.err(format!(
                "tile of shape [{}] has a dynamic physical shape; pto tile buffers need static rows/cols (use a static shape with a dynamic valid_shape)",
                shape.join(", ")
            )));
        };
        let (rows, cols) = match s.len() {
            0 => return Err(self.err("a rank-0 tile has no pto tile buffer form")),
            1 => (1, s[0]),
            n => {
                let rows = s[..n - 1].iter().try_fold(1i64, |a, d| a.checked_mul(*d));
                match rows {
                    Some(r) => (r, s[n - 1]),
                    None => return Err(self.err("tile rows overflow a 64-bit extent")),
                }
            }
        };
        if rows.checked_mul(cols).and_then(|e| e.checked_mul(8)).is_none() {
            return Err(
                self.err(format!("tile of {rows}x{cols} elements is too large for a pto tile buffer"))
            );
        }
        if rows <= 0 || cols <= 0 {
            return Err(self.err(format!("pto tile buffers need positive rows/cols, got {rows}x{cols}")));
        }
        Ok((rows, cols))
    }

    /// The tile-buffer type string of `t` (checklist P2).
    pub fn tile_type(&self, t: &TileType) -> Result<String, Diagnostic> {
        let (rows, cols) = self.tile_dims(t)?;
        let loc = mlir::loc(t.memory).map_err(|m| self.err(m))?;
        let elem = mlir::elem(t.dtype).map_err(|m| self.err(m))?;
        let ty = mlir::tile_buf(loc, elem, rows, cols);
        // A static column vector is a col_major tile (it pairs with a DN view).
        Ok(if cols == 1 && rows > 1 && loc == "vec" {
            ty.replace("blayout=row_major", "blayout=col_major")
        } else {
            ty
        })
    }

    /// The element spelling of `d`, or a diagnostic.
    pub fn elem(&self, d: DataType) -> Result<&'static str, Diagnostic> {
        mlir::elem(d).map_err(|m| self.err(m))
    }

    /// The effective valid extent of a tile as `(rows, cols)` index operands.
    pub fn tile_valid(&mut self, t: &TileType) -> Result<(Idx, Idx), Diagnostic> {
        let v = t.effective_valid_shape().to_vec();
        let mut ops = Vec::new();
        for d in &v {
            ops.push(match d.as_int() {
                Some(x) => Idx::Const(x),
                None => Idx::Ssa(self.scalar_as(d, MTy::Index)?),
            });
        }
        Ok(match ops.len() {
            0 => return Err(self.err("a rank-0 tile has no pto tile buffer form")),
            1 => (Idx::Const(1), ops[0].clone()),
            n => {
                let mut rows = Idx::Const(1);
                for o in &ops[..n - 1] {
                    rows = self.mul_idx(&rows, o);
                }
                (rows, ops[n - 1].clone())
            }
        })
    }

    /// The tile-buffer type of tile SSA `ssa` (its own type when it was allocated with a
    /// non-default pad value, else the type derived from `t`).
    pub fn tile_ty(&self, ssa: &str, t: &TileType) -> Result<String, Diagnostic> {
        match self.tile_types.get(ssa) {
            Some(ty) => Ok(ty.clone()),
            None => self.tile_type(t),
        }
    }

    /// Records that tile SSA `ssa` (a view such as a `pto.subview` result, not an allocation)
    /// has the tile-buffer type `ty`; later uses print that type. A view has no buffer of its
    /// own, so it cannot be aliased by `tile.set_validshape` / `tile.reshape`.
    pub fn bind_tile_view(&mut self, ssa: &str, ty: String) {
        self.tile_types.insert(ssa.to_string(), ty);
    }

    /// Emits `pto.alloc_tile` for a tile of type `t` named after `hint`; returns its SSA.
    pub fn alloc_tile(&mut self, hint: &str, t: &TileType) -> Result<String, Diagnostic> {
        self.alloc_tile_with(hint, t, 0, None)
    }

    /// [`FnCx::alloc_tile`] with a pad value (`pad=` field: 0 null, 1 zero, 2 max, 3 min) and
    /// optionally aliasing the buffer of tile SSA `alias_of` (same address, new valid region).
    pub fn alloc_tile_with(
        &mut self,
        hint: &str,
        t: &TileType,
        pad: u8,
        alias_of: Option<&str>,
    ) -> Result<String, Diagnostic> {
        let mut ty = self.tile_type(t)?;
        if pad != 0 {
            ty = ty.replace("pad=0>", &format!("pad={pad}>"));
        }
        self.alloc_typed(hint, t, ty, alias_of)
    }

    pub(crate) fn alloc_typed(
        &mut self,
        hint: &str,
        t: &TileType,
        ty: String,
        alias_of: Option<&str>,
    ) -> Result<String, Diagnostic> {
        let (rows, cols) = self.tile_dims(t)?;
        let loc = mlir::loc(t.memory).map_err(|m| self.err(m))?;
        let (vr, vc) = self.tile_valid(t)?;
        if let (Idx::Const(r), Idx::Const(c)) = (&vr, &vc) {
            if *r > rows || *c > cols || *r < 0 || *c < 0 {
                return Err(self.err(format!("tile valid extent {r}x{c} exceeds its {rows}x{cols} buffer")));
            }
        }
        let valid_consts = [
            if let Idx::Const(r) = vr { Some(r) } else { None },
            if let Idx::Const(c) = vc { Some(c) } else { None },
        ];
        let (vr, vc) = (self.idx(&vr), self.idx(&vc));
        let bytes = (rows * cols) as u64 * t.dtype.bytes();
        let alias = match alias_of {
            Some(a) => match self.tile_slots.get(a) {
                Some(s) => Some(self.allocs[*s].alias.unwrap_or(*s)),
                None => return Err(self.err(format!("tile {a} has no buffer to alias"))),
            },
            None => None,
        };
        // Stack allocation: a region's tiles are released when the region ends (see
        // `emit_region`), so sibling branches and successive loops reuse the same space.
        let addr = match alias {
            Some(target) => self.allocs[target].addr,
            None => {
                let off = self.bump.entry(loc).or_insert(0);
                let addr = *off;
                *off += bytes.div_ceil(32) * 32;
                let high = self.high.entry(loc).or_insert(0);
                *high = (*high).max(*off);
                addr
            }
        };
        let slot = self.allocs.len();
        self.allocs.push(AllocSlot { addr, alias });
        let name = self.named(hint);
        self.tile_slots.insert(name.clone(), slot);
        if ty != self.tile_type(t)? {
            self.tile_types.insert(name.clone(), ty.clone());
        }
        let Some(buf) = TileBuf::parse(&ty) else {
            return Err(self.err(format!("tile {name} has no long-form tile buffer type ({ty})")));
        };
        // A static v_row/v_col in the type takes no operand (ptoas AllocTileOp::verify).
        let mut operands = String::new();
        if buf.v_row.is_none() {
            operands.push_str(&format!("valid_row = {vr} "));
        }
        if buf.v_col.is_none() {
            operands.push_str(&format!("valid_col = {vc} "));
        }
        self.facts.push(Fact::Alloc {
            ssa: name.clone(),
            ty: buf,
            valid: valid_consts,
            slot,
            alias_of: alias,
            span: self.span,
        });
        self.line(format!("{name} = pto.alloc_tile {ADDR_MARK}{slot}{ADDR_MARK}{operands}: {ty}"));
        Ok(name)
    }

    /// A rectangular sub-tensor of `base` (`tensor.slice`): the base pointer advanced by the
    /// flat element offset of `offsets` (dotted with `base`'s strides) and a view of shape
    /// `ty.shape` that keeps `base`'s strides and layout.
    pub fn derive_slice(
        &mut self,
        base: &TensorRef,
        ty: TensorType,
        offsets: &[Expr],
    ) -> Result<TensorRef, Diagnostic> {
        let Some(parent) = self.views.get(&base.key).cloned() else {
            return Err(self.err(format!("tensor '{}' has no local view", base.name)));
        };
        if offsets.len() != parent.strides.len() || ty.rank() != parent.strides.len() {
            return Err(self.err(format!("tensor.slice of '{}' must keep its rank", base.name)));
        }
        let mut flat: Option<String> = None;
        for (o, st) in offsets.iter().zip(&parent.strides) {
            if o.as_int() == Some(0) {
                continue;
            }
            let (x, _) = self.offset(o)?;
            let term = self.tmp();
            self.line(format!("{term} = arith.muli {x}, {st} : index"));
            flat = Some(match flat {
                None => term,
                Some(prev) => {
                    let r = self.tmp();
                    self.line(format!("{r} = arith.addi {prev}, {term} : index"));
                    r
                }
            });
        }
        let ptr = match flat {
            None => base.ptr.clone(),
            Some(off) => {
                let pty = mlir::ptr(base.ty.dtype).map_err(|m| self.err(m))?;
                let p = self.tmp();
                self.line(format!("{p} = pto.addptr {}, {off} : {pty} -> {pty}", base.ptr));
                p
            }
        };
        self.next_view += 1;
        let t = TensorRef { key: usize::MAX - self.next_view, ty, ptr, ..base.clone() };
        let mut shape = Vec::new();
        for d in &t.ty.shape.clone() {
            let i = self.dim_idx(d)?;
            shape.push(self.idx(&i));
        }
        let ssa = self.named(&format!("{}_slice_view", t.name));
        let info = ViewInfo { ssa, shape, strides: parent.strides.clone(), layout: parent.layout };
        let vty = self.view_type(&t)?;
        let l = self.view_line(&info.ssa, &t.ptr, &info, &vty);
        self.line(l);
        self.views.insert(t.key, info);
        Ok(t)
    }

    /// Emits a `pto.make_tensor_view` of `base`'s pointer under the tensor type `ty` (a
    /// reinterpreting view such as `tensor.view`); returns the derived tensor.
    pub fn derive_view(&mut self, base: &TensorRef, ty: TensorType) -> Result<TensorRef, Diagnostic> {
        self.next_view += 1;
        let t = TensorRef { key: usize::MAX - self.next_view, ty, ..base.clone() };
        let mut info = self.compute_view(&t)?;
        info.ssa = self.named(&format!("{}_view", t.name));
        let vty = self.view_type(&t)?;
        let l = self.view_line(&info.ssa, &t.ptr, &info, &vty);
        self.line(l);
        self.views.insert(t.key, info);
        Ok(t)
    }

    // ----------------------------------------------------------------------------------
    // Tensor views
    // ----------------------------------------------------------------------------------

    fn dim_idx(&mut self, d: &Expr) -> Result<Idx, Diagnostic> {
        Ok(match d.as_int() {
            Some(v) => Idx::Const(v),
            None => Idx::Ssa(self.scalar_as(d, MTy::Index)?),
        })
    }

    fn compute_view(&mut self, t: &TensorRef) -> Result<ViewInfo, Diagnostic> {
        let rank = t.ty.rank();
        if rank == 0 {
            return Err(self.err(format!(
                "tensor '{}' has rank 0; pto tensor views need at least one dimension",
                t.name
            )));
        }
        let mut shape = Vec::new();
        for d in &t.ty.shape.clone() {
            shape.push(self.dim_idx(d)?);
        }
        let view = t.ty.view.clone();
        let explicit = view.as_ref().map(|v| v.stride.clone()).filter(|s| !s.is_empty());
        let col_vector = rank >= 2 && t.ty.shape[rank - 1].as_int() == Some(1) && view.is_none();
        let layout = t.ty.layout();
        let (strides, layout_s) = if let Some(st) = explicit {
            if st.len() != rank {
                return Err(self.err(format!(
                    "tensor '{}' has {} strides for rank {rank}",
                    t.name,
                    st.len()
                )));
            }
            let mut out = Vec::new();
            for s in &st {
                out.push(self.dim_idx(s)?);
            }
            (out, if layout == Layout::Dn { "dn" } else { "nd" })
        } else if col_vector || (layout == Layout::Dn && rank >= 2) {
            let mut out = vec![Idx::Const(1); rank];
            out[rank - 1] = shape[rank - 2].clone();
            let mut block = self.mul_idx(&shape[rank - 2], &shape[rank - 1]);
            for k in (0..rank - 2).rev() {
                out[k] = block.clone();
                block = self.mul_idx(&block, &shape[k]);
            }
            (out, "dn")
        } else if layout == Layout::Nz {
            return Err(
                self.err(format!("tensor '{}' has NZ layout; pto codegen supports ND and DN views", t.name))
            );
        } else {
            let mut out = vec![Idx::Const(1); rank];
            for k in (0..rank - 1).rev() {
                out[k] = self.mul_idx(&out[k + 1], &shape[k + 1]);
            }
            (out, "nd")
        };
        let shape_s: Vec<String> = shape.iter().map(|i| self.idx(i)).collect();
        let strides_s: Vec<String> = strides.iter().map(|i| self.idx(i)).collect();
        Ok(ViewInfo { ssa: String::new(), shape: shape_s, strides: strides_s, layout: layout_s })
    }

    fn view_line(&self, ssa: &str, ptr: &str, v: &ViewInfo, ty: &str) -> String {
        format!(
            "{ssa} = pto.make_tensor_view {ptr}, shape = [{}], strides = [{}] {{layout = #pto.layout<{}>}} : {ty}",
            v.shape.join(", "),
            v.strides.join(", "),
            v.layout
        )
    }

    /// The `!pto.tensor_view<?x…>` type of a tensor.
    pub fn view_type(&self, t: &TensorRef) -> Result<String, Diagnostic> {
        Ok(mlir::tensor_view(t.ty.rank(), self.elem(t.ty.dtype)?))
    }

    /// The prologue (local) view of a tensor parameter.
    pub fn local_view(&mut self, t: &TensorRef) -> Result<String, Diagnostic> {
        match self.views.get(&t.key) {
            Some(v) => Ok(v.ssa.clone()),
            None => Err(self.err(format!("tensor '{}' has no local view", t.name))),
        }
    }

    /// The shape and stride operands of a tensor parameter's local view.
    pub fn view_operands(&self, t: &TensorRef) -> Result<(Vec<String>, Vec<String>), Diagnostic> {
        match self.views.get(&t.key) {
            Some(v) => Ok((v.shape.clone(), v.strides.clone())),
            None => Err(self.err(format!("tensor '{}' has no local view", t.name))),
        }
    }

    /// The element size in bytes of a tensor used remotely (sub-byte dtypes are rejected).
    fn elem_bytes(&self, t: &TensorRef) -> Result<i64, Diagnostic> {
        if t.ty.dtype.bits() % 8 != 0 {
            return Err(self.err(format!(
                "remote access to '{}' needs a whole-byte element type, got {}",
                t.name, t.ty.dtype
            )));
        }
        Ok(t.ty.dtype.bytes() as i64)
    }

    /// Emits the inline CommContext peer-offset sequence, `pto.addptr` and the peer
    /// `pto.make_tensor_view` for remote operand `t` on rank `peer`; returns the view SSA.
    pub fn peer_view(&mut self, t: &TensorRef, peer: &Expr, op: &str) -> Result<String, Diagnostic> {
        if !t.dist {
            return Err(self.err(format!(
                "{op}: '{}' is not a DistributedTensor; only window-bound tensors can be addressed on a peer",
                t.name
            )));
        }
        let Some(ctx) = t.ctx.clone() else {
            return Err(self.err(format!(
                "{op}: distributed tensor '{}' has no CommContext parameter in kernel '{}'",
                t.name, self.func.name
            ))
            .with_note("run the pass pipeline (MaterializeDistTensorCtx appends one CommCtx parameter per DistributedTensor parameter)"));
        };
        let eb = self.elem_bytes(t)?;
        let peer_idx = self.scalar_as(peer, MTy::Index)?;
        let slot_rank = self.const_int(pld_runtime_abi::SLOT_RANK_PAIR as i64, MTy::Index);
        let slot_win = self.const_int(pld_runtime_abi::SLOT_WINDOWS_IN as i64, MTy::Index);
        let div = self.const_int(eb, MTy::Int(64));
        let pair = self.tmp();
        self.line(format!("{pair} = pto.load_scalar {ctx}[{slot_rank}] : !pto.ptr<i64> -> i64"));
        let rk32 = self.tmp();
        self.line(format!("{rk32} = arith.trunci {pair} : i64 to i32"));
        let rk = self.tmp();
        self.line(format!("{rk} = arith.index_cast {rk32} : i32 to index"));
        let lb_off = self.tmp();
        self.line(format!("{lb_off} = arith.addi {slot_win}, {rk} : index"));
        let lbase = self.tmp();
        self.line(format!("{lbase} = pto.load_scalar {ctx}[{lb_off}] : !pto.ptr<i64> -> i64"));
        let pb_off = self.tmp();
        self.line(format!("{pb_off} = arith.addi {slot_win}, {peer_idx} : index"));
        let pbase = self.tmp();
        self.line(format!("{pbase} = pto.load_scalar {ctx}[{pb_off}] : !pto.ptr<i64> -> i64"));
        let dbytes = self.tmp();
        self.line(format!("{dbytes} = arith.subi {pbase}, {lbase} : i64"));
        let delems = self.tmp();
        self.line(format!("{delems} = arith.divsi {dbytes}, {div} : i64"));
        let delta = self.tmp();
        self.line(format!("{delta} = arith.index_cast {delems} : i64 to index"));
        let ptr_ty = mlir::ptr(t.ty.dtype).map_err(|m| self.err(m))?;
        let pptr = self.tmp();
        self.line(format!("{pptr} = pto.addptr {}, {delta} : {ptr_ty} -> {ptr_ty}", t.ptr));
        let info = match self.views.get(&t.key) {
            Some(v) => v.clone(),
            None => return Err(self.err(format!("tensor '{}' has no local view", t.name))),
        };
        let vty = self.view_type(t)?;
        let view = self.tmp();
        let l = self.view_line(&view, &pptr, &info, &vty);
        self.line(l);
        Ok(view)
    }

    /// Emits a `pto.partition_view` of `view` (a view of `t`); returns `(ssa, type)`.
    ///
    /// Offsets are clamped at 0; a size of `None`-valued static dims prints `?`; static sizes
    /// are checked against static source dims (V7).
    pub fn partition(
        &mut self,
        view: &str,
        t: &TensorRef,
        offsets: &[Expr],
        sizes: &[Expr],
        hint: &str,
    ) -> Result<(String, String), Diagnostic> {
        let sizes = self.sizes(sizes)?;
        self.partition_sized(view, t, offsets, &sizes, hint)
    }

    /// Evaluates partition sizes once, so several views can share the same SSA values.
    pub fn sizes(&mut self, sizes: &[Expr]) -> Result<Vec<(String, Option<i64>)>, Diagnostic> {
        sizes.iter().map(|s| self.size(s)).collect()
    }

    /// [`FnCx::partition`] with sizes evaluated by [`FnCx::sizes`].
    pub fn partition_sized(
        &mut self,
        view: &str,
        t: &TensorRef,
        offsets: &[Expr],
        sizes: &[(String, Option<i64>)],
        hint: &str,
    ) -> Result<(String, String), Diagnostic> {
        let rank = t.ty.rank();
        if offsets.len() != rank || sizes.len() != rank {
            return Err(self.err(format!(
                "partition of '{}' needs {rank} offsets and sizes, got {} and {}",
                t.name,
                offsets.len(),
                sizes.len()
            )));
        }
        let mut offs = Vec::new();
        let mut szs = Vec::new();
        let mut dims = Vec::new();
        let mut offsets_c = Vec::new();
        for (k, (o, (ss, sv))) in offsets.iter().zip(sizes).enumerate() {
            let (os, ov) = self.offset(o)?;
            offsets_c.push(ov);
            if let Some(v) = *sv {
                if v <= 0 {
                    return Err(self.err(format!(
                        "partition of '{}' has size {v} in dimension {k}; sizes must be positive",
                        t.name
                    )));
                }
                if let Some(d) = t.ty.shape[k].as_int() {
                    if v.checked_add(ov.unwrap_or(0)).is_none_or(|end| end > d) {
                        return Err(self.err(format!(
                            "partition of '{}' exceeds dimension {k} (offset={}, size={v}, dim={d})",
                            t.name,
                            ov.unwrap_or(0)
                        )));
                    }
                }
            }
            offs.push(os);
            szs.push(ss.clone());
            dims.push(*sv);
        }
        self.facts.push(Fact::Partition {
            tensor: t.name.clone(),
            dims: t.ty.shape.iter().map(|d| d.as_int()).collect(),
            offsets: offsets_c,
            sizes: dims.clone(),
            span: self.span,
        });
        let vty = self.view_type(t)?;
        let pty = mlir::partition_view(&dims, self.elem(t.ty.dtype)?);
        let name = self.named(hint);
        self.line(format!(
            "{name} = pto.partition_view {view}, offsets = [{}], sizes = [{}] : {vty} -> {pty}",
            offs.join(", "),
            szs.join(", ")
        ));
        Ok((name, pty))
    }

    /// Sizes of a 2-D tile extent written into a rank-`rank` tensor: leading dims 1.
    pub fn tile_region(t: &TileType, rank: usize) -> Vec<Expr> {
        let v = t.effective_valid_shape();
        let mut out = vec![Expr::int(1); rank];
        let n = v.len().min(rank).min(2);
        for i in 0..n {
            out[rank - n + i] = v[v.len() - n + i].clone();
        }
        out
    }

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

    // ----------------------------------------------------------------------------------
    // Parameters, prologue, assembly
    // ----------------------------------------------------------------------------------

    fn bind_params(&mut self) -> Result<Vec<String>, Diagnostic> {
        let f = self.func;
        let mut tensors = Vec::new();
        let mut scalars = Vec::new();
        let mut dists = Vec::new();
        let mut ctxs = Vec::new();
        for (i, p) in f.params.iter().enumerate() {
            match f.values.ty(p.value) {
                Type::Tensor(_) => tensors.push(i),
                Type::DistTensor(_) => {
                    tensors.push(i);
                    dists.push(i);
                }
                Type::Scalar(_) => scalars.push(i),
                Type::CommCtx => {
                    scalars.push(i);
                    ctxs.push(i);
                }
                other => {
                    return Err(Diagnostic::error(
                        f.values.get(p.value).map_or(f.span, |d| d.span.or(f.span)),
                        format!(
                        "kernel '{}' parameter '{}' has type {}, which has no pto calling-convention slot",
                        f.name,
                        f.values.name(p.value),
                        other.kind_name()
                    ),
                    ))
                }
            }
        }
        if !ctxs.is_empty() && ctxs.len() != dists.len() {
            return Err(self.err(format!(
                "kernel '{}' has {} DistributedTensor parameters but {} CommCtx parameters; they must pair one to one",
                f.name,
                dists.len(),
                ctxs.len()
            )));
        }
        let mut sig = Vec::new();
        let mut arg_of = HashMap::new();
        for (n, &i) in tensors.iter().chain(scalars.iter()).enumerate() {
            let a = format!("%arg{n}");
            self.names.insert(a.clone());
            arg_of.insert(i, a);
        }
        let ctx_of: HashMap<usize, String> =
            dists.iter().zip(&ctxs).map(|(d, c)| (*d, arg_of[c].clone())).collect();
        for &i in &tensors {
            let p = &f.params[i];
            let ty = f.values.ty(p.value);
            let Some(tt) = ty.as_tensor_like() else { continue };
            let a = arg_of[&i].clone();
            let ptr = mlir::ptr(tt.dtype).map_err(|m| self.err(m))?;
            sig.push(format!("{a}: {ptr}"));
            let t = TensorRef {
                name: sanitize(f.values.name(p.value)),
                param: i,
                key: i,
                ptr: a,
                ty: tt.clone(),
                dist: matches!(ty, Type::DistTensor(_)),
                ctx: ctx_of.get(&i).cloned(),
            };
            self.env.insert(p.value, Val::Tensor(t));
        }
        for &i in &scalars {
            let p = &f.params[i];
            let a = arg_of[&i].clone();
            match f.values.ty(p.value) {
                Type::CommCtx => {
                    sig.push(format!("{a}: !pto.ptr<i64>"));
                    self.env.insert(p.value, Val::Ctx { ssa: a });
                }
                Type::Scalar(d) => {
                    let t = MTy::of_scalar(*d).map_err(|m| self.err(m))?;
                    self.scalar_fact(format!("parameter '{}'", f.values.name(p.value)), &t);
                    sig.push(format!("{a}: {}", t.name()));
                    self.env.insert(p.value, Val::Scalar { ssa: a, ty: t });
                }
                _ => {}
            }
        }
        let mut syms = Vec::new();
        for &i in &tensors {
            if let Some(tt) = f.values.ty(f.params[i].value).as_tensor_like() {
                collect_syms(&tt.shape, &mut syms);
            }
        }
        let base = tensors.len() + scalars.len();
        for (k, s) in syms.iter().enumerate() {
            let a = format!("%arg{}", base + k);
            self.names.insert(a.clone());
            sig.push(format!("{a}: index"));
            self.sym_params.insert(s.clone(), a);
        }
        Ok(sig)
    }

    fn emit_views(&mut self) -> Result<(), Diagnostic> {
        let f = self.func;
        let mut used = HashSet::new();
        f.body.walk_exprs(&mut |e| {
            if let ExprKind::Var(v) = e.kind {
                used.insert(v);
            }
        });
        for p in &f.params {
            if !used.contains(&p.value) {
                continue;
            }
            let Some(Val::Tensor(t)) = self.env.get(&p.value).cloned() else { continue };
            let mut info = self.compute_view(&t)?;
            info.ssa = self.named(&format!("{}_view", t.name));
            let vty = self.view_type(&t)?;
            let l = self.view_line(&info.ssa, &t.ptr, &info, &vty);
            self.line(l);
            self.views.insert(t.key, info);
        }
        Ok(())
    }

    fn finish(mut self, mut sig: Vec<String>) -> Result<FnOut, Diagnostic> {
        if self.uses_deferred {
            sig.push("%__pypto_deferred_raw_args: !pto.ptr<i64>".into());
        }
        // Tile addresses were assigned at allocation time; none are printed when a buffer's
        // high-water mark exceeds its capacity, which the verifier reports (level3-addresses).
        let fits = self.high.iter().all(|(loc, h)| *h <= mlir::capacity(loc, self.opts.target));
        let addrs: Vec<u64> = self.allocs.iter().map(|a| a.addr).collect();
        let mut high: Vec<(String, u64)> = self.high.iter().map(|(l, h)| (l.to_string(), *h)).collect();
        high.sort();
        let facts = KernelFacts {
            kernel: self.func.name.clone(),
            span: self.func.span,
            target: self.opts.target,
            facts: std::mem::take(&mut self.facts),
            addrs: fits.then(|| addrs.clone()),
            high,
        };
        let mut addr_text = Vec::new();
        for a in &addrs {
            addr_text.push(if fits {
                format!("addr = {} ", self.const_int(*a as i64, MTy::Int(64)))
            } else {
                String::new()
            });
        }
        let kind = match self.func.kind {
            FunctionKind::Aic => " attributes {pto.kernel_kind = #pto.kernel_kind<cube>}",
            _ => " attributes {pto.kernel_kind = #pto.kernel_kind<vector>}",
        };
        let mut out = format!("  func.func @{}({}){kind} {{\n", self.func.name, sig.join(", "));
        for l in self.consts.iter().chain(&self.prologue) {
            out.push_str(l);
            out.push('\n');
        }
        for l in &self.body {
            out.push_str(&substitute_addrs(l, &addr_text));
            out.push('\n');
        }
        out.push_str("  return\n  }\n");
        Ok(FnOut { text: out, uses_deferred: self.uses_deferred, facts })
    }

    // ----------------------------------------------------------------------------------
    // Statements
    // ----------------------------------------------------------------------------------

    fn emit_top_block(&mut self, stmts: &[Stmt]) -> Result<(), Diagnostic> {
        for (i, s) in stmts.iter().enumerate() {
            if let StmtKind::Return(_) = s.kind {
                if i + 1 != stmts.len() {
                    self.span = s.span;
                    return Err(self.err("an early return has no pto form; return at the end of the kernel"));
                }
                continue;
            }
            self.emit_stmt(s)?;
        }
        Ok(())
    }

    /// Emits a nested block; returns its trailing yield values, if any. Tiles allocated in
    /// the block are released at its end (values defined inside never escape it).
    fn emit_nested(&mut self, stmts: &[Stmt]) -> Result<Option<Vec<Expr>>, Diagnostic> {
        let saved = self.bump.clone();
        let from = self.allocs.len();
        let r = self.emit_nested_inner(stmts);
        self.bump = saved;
        self.facts.push(Fact::Release { from });
        r
    }

    fn emit_nested_inner(&mut self, stmts: &[Stmt]) -> Result<Option<Vec<Expr>>, Diagnostic> {
        let mut yields = None;
        for s in stmts {
            match &s.kind {
                StmtKind::Yield(v) => yields = Some(v.clone()),
                StmtKind::Return(_) => {
                    self.span = s.span;
                    return Err(self.err("a return inside a loop or branch has no pto form"));
                }
                _ => self.emit_stmt(s)?,
            }
        }
        Ok(yields)
    }

    fn emit_stmt(&mut self, s: &Stmt) -> Result<(), Diagnostic> {
        self.span = s.span;
        match &s.kind {
            StmtKind::Assign { targets, value } => {
                let val = match &value.kind {
                    ExprKind::Call(c) => self.emit_call(c, targets)?,
                    _ => self.value(value)?,
                };
                match targets.as_slice() {
                    [t] => self.bind(*t, val),
                    [] => {}
                    _ => {
                        return Err(
                            self.err("tuple unpacking has no pto form; assign one value per statement")
                        );
                    }
                }
                Ok(())
            }
            StmtKind::Eval(e) => {
                match &e.kind {
                    ExprKind::Call(c) => {
                        self.emit_call(c, &[])?;
                    }
                    _ => {
                        self.value(e)?;
                    }
                }
                Ok(())
            }
            StmtKind::For { var, start, stop, step, iter_args, body, results, .. } => {
                let lb = self.scalar_as(start, MTy::Index)?;
                let ub = self.scalar_as(stop, MTy::Index)?;
                let st = self.scalar_as(step, MTy::Index)?;
                let iv = self.named(&format!("{}_idx", self.value_name(*var)));
                self.bind(*var, Val::Scalar { ssa: iv.clone(), ty: MTy::Index });
                // Scalar carries become scf iter_args; buffers (tiles, tensors) are carried in place.
                let mut scf_args = Vec::new();
                let mut carried = Vec::new();
                for (k, a) in iter_args.iter().enumerate() {
                    let init = self.value(&a.init)?;
                    match init {
                        Val::Scalar { ssa, ty } => {
                            let n = self.named(&self.value_name(a.value));
                            self.bind(a.value, Val::Scalar { ssa: n.clone(), ty });
                            scf_args.push((k, n, ssa, ty));
                        }
                        other => {
                            self.bind(a.value, other.clone());
                            carried.push((k, other));
                        }
                    }
                }
                let head = format!("scf.for {iv} = {lb} to {ub} step {st}");
                let res_name = if scf_args.is_empty() { None } else { Some(self.tmp()) };
                match &res_name {
                    None => self.line(format!("{head} {{")),
                    Some(r) => {
                        let inits: Vec<String> =
                            scf_args.iter().map(|(_, n, i, _)| format!("{n} = {i}")).collect();
                        let tys: Vec<String> = scf_args.iter().map(|(_, _, _, t)| t.name()).collect();
                        let lhs =
                            if scf_args.len() == 1 { r.clone() } else { format!("{r}:{}", scf_args.len()) };
                        self.line(format!(
                            "{lhs} = {head} iter_args({}) -> ({}) {{",
                            inits.join(", "),
                            tys.join(", ")
                        ));
                    }
                }
                self.indent += 1;
                let ys = self.emit_nested(&body.stmts)?.unwrap_or_default();
                let kinds: Vec<(usize, MTy)> = scf_args.iter().map(|(k, _, _, t)| (*k, *t)).collect();
                self.yield_carried(&ys, &kinds, &carried)?;
                self.indent -= 1;
                self.line("}");
                self.bind_loop_results(res_name.as_deref(), &kinds, carried, results);
                Ok(())
            }
            StmtKind::If { cond, then_body, else_body, results } => {
                let c = self.scalar_as(cond, MTy::I1)?;
                // Result kinds are decided by the then-branch's yield types after emission; we
                // pre-declare tiles (carried in place) and use scf results for scalars.
                let rtys: Vec<Type> = results.iter().map(|r| self.func.values.ty(*r).clone()).collect();
                let mut scalar_res = Vec::new();
                let mut tile_res = Vec::new();
                // Tensors and contexts are not values in PTO: both branches must yield the same one.
                let mut same_res = Vec::new();
                for (k, t) in rtys.iter().enumerate() {
                    match t {
                        Type::Scalar(d) => scalar_res.push((k, MTy::of_scalar(*d).map_err(|m| self.err(m))?)),
                        Type::Tile(tt) => {
                            let name = self.value_name(results[k]);
                            let ssa = self.alloc_tile(&name, tt)?;
                            tile_res.push((k, Val::Tile { ssa, tile: tt.clone() }));
                        }
                        Type::Tensor(_) | Type::DistTensor(_) | Type::CommCtx | Type::Array(_) => {
                            same_res.push(k)
                        }
                        other => {
                            return Err(
                                self.err(format!("an if yielding a {} has no pto form", other.kind_name()))
                            );
                        }
                    }
                }
                let res_name = if scalar_res.is_empty() { None } else { Some(self.tmp()) };
                match &res_name {
                    None => self.line(format!("scf.if {c} {{")),
                    Some(r) => {
                        let tys: Vec<String> = scalar_res.iter().map(|(_, t)| t.name()).collect();
                        let lhs = if scalar_res.len() == 1 {
                            r.clone()
                        } else {
                            format!("{r}:{}", scalar_res.len())
                        };
                        self.line(format!("{lhs} = scf.if {c} -> ({}) {{", tys.join(", ")));
                    }
                }
                self.indent += 1;
                let ys = self.emit_nested(&then_body.stmts)?.unwrap_or_default();
                self.yield_carried(&ys, &scalar_res, &tile_res)?;
                let mut same_vals = Vec::new();
                for k in &same_res {
                    match ys.get(*k) {
                        Some(y) => same_vals.push(self.value(y)?),
                        None => return Err(self.err("an if branch yields fewer values than the if defines")),
                    }
                }
                self.indent -= 1;
                if !else_body.stmts.is_empty()
                    || res_name.is_some()
                    || !tile_res.is_empty()
                    || !same_res.is_empty()
                {
                    self.line("} else {");
                    self.indent += 1;
                    let ys = self.emit_nested(&else_body.stmts)?.unwrap_or_default();
                    self.yield_carried(&ys, &scalar_res, &tile_res)?;
                    for (j, k) in same_res.iter().enumerate() {
                        let other = match ys.get(*k) {
                            Some(y) => self.value(y)?,
                            None => {
                                return Err(self.err("an if branch yields fewer values than the if defines"))
                            }
                        };
                        if other != same_vals[j] {
                            return Err(self.err(
                                "the branches of an if yield different tensors; pto has no tensor select",
                            ));
                        }
                    }
                    self.indent -= 1;
                }
                self.line("}");
                for (j, k) in same_res.iter().enumerate() {
                    self.bind(results[*k], same_vals[j].clone());
                }
                for (j, (k, ty)) in scalar_res.iter().enumerate() {
                    if let Some(r) = &res_name {
                        let ssa = if scalar_res.len() == 1 { r.clone() } else { format!("{r}#{j}") };
                        self.bind(results[*k], Val::Scalar { ssa, ty: *ty });
                    }
                }
                for (k, v) in tile_res {
                    self.bind(results[k], v);
                }
                Ok(())
            }
            StmtKind::While { iter_args, cond, body, results } => {
                self.emit_while(iter_args, cond, body, results)
            }
            StmtKind::Scope { body, .. } => {
                for s in &body.stmts {
                    if let StmtKind::Yield(_) = s.kind {
                        continue;
                    }
                    self.emit_stmt(s)?;
                }
                Ok(())
            }
            StmtKind::Yield(_) => Ok(()),
            StmtKind::Return(_) => Ok(()),
        }
    }

    /// `scf.while`: scalar carries are region arguments (condition region, then body region);
    /// buffers are carried in place like in `for`.
    fn emit_while(
        &mut self,
        iter_args: &[pld_ir::IterArg],
        cond: &Expr,
        body: &pld_ir::Block,
        results: &[ValueId],
    ) -> Result<(), Diagnostic> {
        let mut scalars = Vec::new();
        let mut carried = Vec::new();
        for (k, a) in iter_args.iter().enumerate() {
            match self.value(&a.init)? {
                Val::Scalar { ssa, ty } => scalars.push((k, a.value, ssa, ty)),
                other => {
                    self.bind(a.value, other.clone());
                    carried.push((k, other));
                }
            }
        }
        let tys: Vec<String> = scalars.iter().map(|(_, _, _, t)| t.name()).collect();
        let tylist = tys.join(", ");
        let mut before = Vec::new();
        for (_, v, init, ty) in &scalars {
            let n = self.named(&self.value_name(*v));
            self.bind(*v, Val::Scalar { ssa: n.clone(), ty: *ty });
            before.push((n, init.clone()));
        }
        let res = if scalars.is_empty() { None } else { Some(self.tmp()) };
        let inits: Vec<String> = before.iter().map(|(n, i)| format!("{n} = {i}")).collect();
        let lhs = match &res {
            None => String::new(),
            Some(r) if scalars.len() == 1 => format!("{r} = "),
            Some(r) => format!("{r}:{} = ", scalars.len()),
        };
        self.line(format!("{lhs}scf.while ({}) : ({tylist}) -> ({tylist}) {{", inits.join(", ")));
        self.indent += 1;
        let c = self.scalar_as(cond, MTy::I1)?;
        let names: Vec<String> = before.iter().map(|(n, _)| n.clone()).collect();
        if names.is_empty() {
            self.line(format!("scf.condition({c})"));
        } else {
            self.line(format!("scf.condition({c}) {} : {tylist}", names.join(", ")));
        }
        self.indent -= 1;
        self.line("} do {");
        let mut after = Vec::new();
        for (_, v, _, ty) in &scalars {
            let n = self.named(&format!("{}_body", self.value_name(*v)));
            self.bind(*v, Val::Scalar { ssa: n.clone(), ty: *ty });
            after.push(format!("{n}: {}", ty.name()));
        }
        if !after.is_empty() {
            self.line(format!("^bb0({}):", after.join(", ")));
        }
        self.indent += 1;
        let ys = self.emit_nested(&body.stmts)?.unwrap_or_default();
        let kinds: Vec<(usize, MTy)> = scalars.iter().map(|(k, _, _, t)| (*k, *t)).collect();
        self.yield_carried(&ys, &kinds, &carried)?;
        if kinds.is_empty() {
            self.line("scf.yield");
        }
        self.indent -= 1;
        self.line("}");
        self.bind_loop_results(res.as_deref(), &kinds, carried, results);
        Ok(())
    }

    /// After a loop: binds its results — scalar carries to the scf result `res` (`%r` or
    /// `%r#j`), buffers carried in place to their buffer.
    fn bind_loop_results(
        &mut self,
        res: Option<&str>,
        scalars: &[(usize, MTy)],
        carried: Vec<(usize, Val)>,
        results: &[ValueId],
    ) {
        for (j, (k, ty)) in scalars.iter().enumerate() {
            if let (Some(r), Some(rv)) = (res, results.get(*k)) {
                let ssa = if scalars.len() == 1 { r.to_string() } else { format!("{r}#{j}") };
                self.bind(*rv, Val::Scalar { ssa, ty: *ty });
            }
        }
        for (k, v) in carried {
            if let Some(rv) = results.get(k) {
                self.bind(*rv, v);
            }
        }
    }

    /// Ends a loop or branch body: `scf.yield` for scalar carries, `pto.tmov` into carried
    /// buffers whose yielded tile differs, and a check that carried tensors stay the same.
    fn yield_carried(
        &mut self,
        ys: &[Expr],
        scalars: &[(usize, MTy)],
        bufs: &[(usize, Val)],
    ) -> Result<(), Diagnostic> {
        for (k, v) in bufs {
            let Some(y) = ys.get(*k) else { continue };
            let yv = self.value(y)?;
            match (v, &yv) {
                (Val::Tile { ssa: dst, tile: dt }, Val::Tile { ssa: src, tile: st }) if dst != src => {
                    let (sty, dty) = (self.tile_ty(src, st)?, self.tile_ty(dst, dt)?);
                    let text = format!("pto.tmov ins({src} : {sty}) outs({dst} : {dty})");
                    self.tile_op("pto.tmov", OpClass::Other, &[(src, &sty), (dst, &dty)], text);
                }
                (Val::Tile { .. }, Val::Tile { .. }) => {}
                (a, b) if a == b => {}
                _ => return Err(self.err("a loop-carried or branch-merged buffer must stay the same tensor")),
            }
        }
        if !scalars.is_empty() {
            let mut vals = Vec::new();
            let mut tys = Vec::new();
            for (k, t) in scalars {
                let Some(y) = ys.get(*k) else {
                    return Err(self.err("a loop or branch body yields fewer values than it carries"));
                };
                vals.push(self.scalar_as(y, *t)?);
                tys.push(t.name());
            }
            self.line(format!("scf.yield {} : {}", vals.join(", "), tys.join(", ")));
        }
        Ok(())
    }

    /// Emits one op call through the emitter table.
    pub fn emit_call(&mut self, c: &Call, targets: &[ValueId]) -> Result<Val, Diagnostic> {
        let def = match &c.callee {
            Callee::Op(d) => *d,
            Callee::Func(name) => {
                return Err(self.err(format!(
                    "kernel '{}' calls function '{name}'; pto kernels cannot call helper functions (a helper without pto.kernel_kind breaks mixed modules)",
                    self.func.name
                ))
                .with_note("inline the helper into the kernel"));
            }
        };
        let Some(reg) = emitters().of(def) else {
            let mut d = self.err(format!("op {} has no pto emitter", def.name));
            if def.lowering(LoweringKind::TensorToTile).is_some() {
                d = d.with_note(format!(
                    "{} is lowered by ConvertTensorToTileOps; run the pass pipeline before pto codegen",
                    def.name
                ));
            } else if def.lowering(LoweringKind::Composite).is_some() {
                d = d.with_note(format!(
                    "{} is expanded by LowerCompositeOps; run the pass pipeline before pto codegen",
                    def.name
                ));
            }
            return Err(d);
        };
        (reg.emit)(self, c, targets)
    }

    /// The readable name hint for a call's result.
    pub fn result_hint(&self, targets: &[ValueId], fallback: &str) -> String {
        targets.first().map_or_else(|| fallback.to_string(), |t| self.value_name(*t))
    }
}

fn substitute_addrs(line: &str, addrs: &[String]) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(p) = rest.find(ADDR_MARK) {
        out.push_str(&rest[..p]);
        let after = &rest[p + ADDR_MARK.len_utf8()..];
        let Some(q) = after.find(ADDR_MARK) else {
            out.push_str(&rest[p..]);
            return out;
        };
        if let Some(a) = after[..q].parse::<usize>().ok().and_then(|i| addrs.get(i)) {
            out.push_str(a);
        }
        rest = &after[q + ADDR_MARK.len_utf8()..];
    }
    out.push_str(rest);
    out
}

/// An MLIR float literal for `v` as a value of `ty`: the shortest decimal that round-trips
/// the `f32` value, always with a '.' in the mantissa (the literal grammar requires it);
/// infinities and NaN as hexadecimal bit patterns.
fn float_literal(v: f64, ty: MTy) -> String {
    let x = v as f32;
    if !x.is_finite() {
        let bits32 = x.to_bits();
        return match ty {
            MTy::BF16 => format!("0x{:04X}", bits32 >> 16),
            MTy::F16 => {
                let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
                format!("0x{:04X}", sign | if x.is_nan() { 0x7E00 } else { 0x7C00 })
            }
            _ => format!("0x{bits32:08X}"),
        };
    }
    let s = format!("{x:e}");
    match s.split_once('e') {
        Some((m, e)) if !m.contains('.') => format!("{m}.0e{e}"),
        _ => s,
    }
}

/// The type two operands of a binary operation are brought to.
fn common_type(a: MTy, b: MTy) -> MTy {
    if a == b {
        a
    } else if a.is_float() || b.is_float() {
        if a.float_width() >= b.float_width() && a.is_float() {
            a
        } else {
            b
        }
    } else if a == MTy::Index || b == MTy::Index {
        MTy::Index
    } else if a.int_width() >= b.int_width() {
        a
    } else {
        b
    }
}

/// A short name of a binding's kind, for diagnostics.
pub fn val_kind(v: &Val) -> &'static str {
    match v {
        Val::Unit => "unit value",
        Val::Scalar { .. } => "scalar",
        Val::Tile { .. } => "tile",
        Val::Tensor(_) => "tensor",
        Val::Ctx { .. } => "CommCtx",
        Val::Array { .. } => "array",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_literals_parse_as_mlir_floats() {
        assert_eq!(float_literal(2.0, MTy::F32), "2.0e0");
        assert_eq!(float_literal(0.1, MTy::F32), "1e-1".replace("1e", "1.0e"));
        assert_eq!(float_literal(1.2345678, MTy::F32), "1.2345678e0");
        assert_eq!(float_literal(-0.5, MTy::F32), "-5.0e-1");
        assert_eq!(float_literal(f64::INFINITY, MTy::F32), "0x7F800000");
        assert_eq!(float_literal(f64::NEG_INFINITY, MTy::F16), "0xFC00");
        assert_eq!(float_literal(f64::NEG_INFINITY, MTy::BF16), "0xFF80");
    }

    #[test]
    fn names_are_sanitised() {
        assert_eq!(sanitize("x__ssa.v0"), "x__ssa_v0");
        assert_eq!(sanitize("0abc"), "v0abc");
        assert_eq!(sanitize(""), "v");
    }
}
