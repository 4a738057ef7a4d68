//! Typed PTO instructions: what an emitter pushes instead of text.
//!
//! Guarantees: an instruction holds its op name, its operands (SSA names), its attributes and
//! its result with a typed [`PtoType`]; nothing here renders text (that is [`super::print`]).

use super::scf::{ScfFor, ScfIf, ScfWhile};
use super::types::{PtoType, TileBuf};
use crate::mlir::MTy;
use pld_ir::Span;

/// One typed instruction of a function's prologue or body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inst {
    /// `<result> = arith.constant <value> : <ty>` (hoisted to the top of the function).
    Const {
        /// The SSA name.
        result: String,
        /// The value.
        value: Literal,
        /// Its type.
        ty: MTy,
    },
    /// `<result> = <op> [<pred>, ]<operands> : <ty>`: an `arith` operation whose operands
    /// and result share one type (comparisons yield `i1` but print their operand type).
    Arith {
        /// The SSA name of the result.
        result: String,
        /// The op (`arith.addi`).
        op: &'static str,
        /// The predicate of a comparison (`slt`, `oeq`).
        pred: Option<&'static str>,
        /// The operands.
        operands: Vec<String>,
        /// The operand type.
        ty: MTy,
    },
    /// `<result> = <op> <operand> : <from> to <to>`: a conversion.
    Cast {
        /// The SSA name of the result.
        result: String,
        /// The op (`arith.index_cast`).
        op: &'static str,
        /// The converted value.
        operand: String,
        /// Its type.
        from: MTy,
        /// The result type.
        to: MTy,
    },
    /// A tile instruction in destination-passing style.
    Dps(Dps),
    /// `<result> = pto.alloc_tile [addr = <slot's address>] [valid_row = …] [valid_col = …]
    /// : <ty>`; the address comes from the function's address plan.
    AllocTile {
        /// The SSA name of the tile.
        result: String,
        /// The allocation's slot in the address plan.
        slot: usize,
        /// The `valid_row` operand (absent when the type fixes it).
        valid_row: Option<String>,
        /// The `valid_col` operand (absent when the type fixes it).
        valid_col: Option<String>,
        /// The tile buffer type.
        ty: TileBuf,
    },
    /// `<result> = pto.load_scalar <ptr>[<offset>] : <ptr_ty> -> <ty>`.
    LoadScalar {
        /// The SSA name of the result.
        result: String,
        /// The pointer.
        ptr: String,
        /// The element offset (`index`).
        offset: String,
        /// The pointer type.
        ptr_ty: PtoType,
        /// The loaded type.
        ty: MTy,
    },
    /// `pto.store_scalar <value>, <ptr>[<offset>] : <ptr_ty>, <ty>`.
    StoreScalar {
        /// The stored value.
        value: String,
        /// The pointer.
        ptr: String,
        /// The element offset (`index`).
        offset: String,
        /// The pointer type.
        ptr_ty: PtoType,
        /// The stored type.
        ty: MTy,
    },
    /// `<result> = pto.declare_local_array -> <ty>`.
    DeclareArray {
        /// The SSA name of the array.
        result: String,
        /// Its `!pto.local_array` type.
        ty: PtoType,
    },
    /// `<result> = pto.local_array_get <array>[<index>] : <array_ty> -> <ty>`.
    ArrayGet {
        /// The SSA name of the element.
        result: String,
        /// The array.
        array: String,
        /// The index.
        index: String,
        /// The array's type.
        array_ty: PtoType,
        /// The element type.
        ty: MTy,
    },
    /// `pto.local_array_set <array>[<index>], <value> : <array_ty>, <ty>`.
    ArraySet {
        /// The array.
        array: String,
        /// The index.
        index: String,
        /// The stored value.
        value: String,
        /// The array's type.
        array_ty: PtoType,
        /// The element type.
        ty: MTy,
    },
    /// `<result> = pto.addptr <ptr>, <offset> : <ty> -> <ty>`.
    AddPtr {
        /// The SSA name of the result.
        result: String,
        /// The base pointer.
        ptr: String,
        /// The element offset.
        offset: String,
        /// The pointer type.
        ty: PtoType,
    },
    /// `<result> = pto.make_tensor_view <ptr>, shape = [..], strides = [..]
    /// {layout = #pto.layout<..>} : <ty>`.
    MakeTensorView {
        /// The SSA name of the view.
        result: String,
        /// The base pointer.
        ptr: String,
        /// The shape operands.
        shape: Vec<String>,
        /// The stride operands.
        strides: Vec<String>,
        /// The layout keyword (`nd`, `dn`).
        layout: &'static str,
        /// The view type.
        ty: PtoType,
    },
    /// `<result> = pto.partition_view <view>, offsets = [..], sizes = [..] : <view_ty> -> <ty>`.
    PartitionView {
        /// The SSA name of the partition.
        result: String,
        /// The tensor view.
        view: String,
        /// The offset operands.
        offsets: Vec<String>,
        /// The size operands.
        sizes: Vec<String>,
        /// The tensor view's type.
        view_ty: PtoType,
        /// The partition's type.
        ty: PtoType,
        /// Elements the innermost size may run past the tensor's extent (not printed): a
        /// remote load with `allow_physical_tail_padding` rounds an FP16 tail's read span up
        /// to 32 bytes, less than one 32-byte unit past the end; 0 for every other partition.
        tail_slack: i64,
    },
    /// `<result> = pto.subview <src>[<r>, <c>] sizes [R, C] valid [<vr>, <vc>] : <src_ty> -> <ty>`.
    Subview {
        /// The SSA name of the view.
        result: String,
        /// The source tile.
        src: String,
        /// The row and column offsets.
        offsets: [String; 2],
        /// The static rows and cols.
        sizes: [i64; 2],
        /// The valid-row and valid-col operands.
        valid: [String; 2],
        /// The source's type.
        src_ty: TileBuf,
        /// The view's type.
        ty: TileBuf,
    },
    /// A synchronisation instruction without operands.
    Sync(SyncOp),
    /// `pto.cmo.cacheinvalid <view> single_cache_line : <ty>`.
    CacheInvalidLine {
        /// The partition view.
        view: String,
        /// Its type.
        ty: PtoType,
    },
    /// `<op>(<a>, …[, buf(<s>, …)] : <ta>, …[, <ts>, …])[ {<attr> = <value>}]`: a comm
    /// instruction (`pto.comm.tput`, `pto.comm.tnotify`, …).
    Comm {
        /// The op.
        op: &'static str,
        /// The operands.
        operands: Vec<Operand>,
        /// The staging tiles (the `buf(…)` group; empty for none).
        buf: Vec<Operand>,
        /// The op's attributes.
        attrs: Vec<(&'static str, &'static str)>,
    },
    /// `func.call @pypto_register_counter_completion(%__pypto_deferred_raw_args, <signal>,
    /// <offset>, <expected>) : (...) -> ()`: a deferred wait handed to the runtime.
    RegisterCompletion {
        /// The signal's `!pto.ptr<i32>`.
        signal: String,
        /// The element offset (`i64`, -1 when out of bounds).
        offset: String,
        /// The expected value (`i64`).
        expected: String,
    },
    /// A `scf.for` loop.
    For(ScfFor),
    /// A `scf.if`.
    If(ScfIf),
    /// A `scf.while` loop.
    While(ScfWhile),
    /// `scf.yield[ <values> : <types>]`.
    Yield {
        /// The yielded values.
        values: Vec<String>,
        /// Their types.
        types: Vec<MTy>,
    },
    /// `scf.condition(<cond>)[ <values> : <types>]`.
    Condition {
        /// The `i1` condition.
        cond: String,
        /// The values passed on.
        values: Vec<String>,
        /// Their types.
        types: Vec<MTy>,
    },
}

/// The value of an `arith.constant`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Literal {
    /// An integer (`16`, `-1`).
    Int(i64),
    /// `true` / `false`.
    Bool(bool),
    /// A float, held as the bits of its `f32` value (floats are emitted at `f32` precision).
    Float(u32),
}

/// A synchronisation instruction without operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncOp {
    /// `pto.barrier <PIPE_ALL>`.
    BarrierAll,
    /// `pto.fence.barrier_all #pto.fence_scope<gm>`.
    FenceGm,
    /// `pto.cmo.cacheinvalid all #pto.address_space<gm>`.
    CacheInvalidAll,
}

/// How a tile instruction relates its operands' tile types (what the PTO verifier checks of
/// it; not printed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpClass {
    /// Sources and destination are one tile type (`tadd`, `tmax`, `tmuls`, …).
    Elementwise,
    /// One tile type except the element type (`tcvt`).
    Convert,
    /// Each operand only has to be a well-formed tile (`tload`, `tstore`, reductions, …).
    Other,
}

/// `[<result> = ]<op> ins(<a>[ {attr}], … : <ta>, …) outs(<d> : <td>)[ {<attr> = <value>, …}]`
/// (a scalar result prints `outs : <ty>`): a tile instruction in destination-passing style.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dps {
    /// The op (`pto.tadd`).
    pub op: &'static str,
    /// How the op relates its operands' tile types.
    pub class: OpClass,
    /// A scalar result (`pto.tgetval`), printed before the op and as the `outs` type.
    pub result: Option<(String, MTy)>,
    /// The sources.
    pub ins: Vec<Operand>,
    /// The destinations.
    pub outs: Vec<Operand>,
    /// The op's attributes, in print order.
    pub attrs: Vec<(&'static str, &'static str)>,
}

impl Dps {
    /// `op ins(ins) outs(outs)` with no attributes and no scalar result.
    pub fn new(op: &'static str, ins: Vec<Operand>, outs: Vec<Operand>) -> Dps {
        Dps { op, class: OpClass::Other, result: None, ins, outs, attrs: Vec::new() }
    }

    /// [`Dps::new`] for an op whose sources and destination are one tile type.
    pub fn elementwise(op: &'static str, ins: Vec<Operand>, outs: Vec<Operand>) -> Dps {
        Dps { class: OpClass::Elementwise, ..Dps::new(op, ins, outs) }
    }

    /// [`Dps::new`] for a conversion: one tile type apart from the element type.
    pub fn convert(op: &'static str, ins: Vec<Operand>, outs: Vec<Operand>) -> Dps {
        Dps { class: OpClass::Convert, ..Dps::new(op, ins, outs) }
    }

    /// The tile operands `(ssa, type)`, sources first, destinations last.
    pub fn tiles(&self) -> impl Iterator<Item = (&str, &TileBuf)> {
        self.ins.iter().chain(&self.outs).filter_map(|o| o.ty.as_tile().map(|t| (o.value.as_str(), t)))
    }
}

/// An operand of a [`Dps`] instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operand {
    /// The SSA name.
    pub value: String,
    /// Its type.
    pub ty: PtoType,
    /// An attribute on the operand (`{isBinary = true}`).
    pub attr: Option<(&'static str, &'static str)>,
}

impl Operand {
    /// `value : ty`.
    pub fn new(value: impl Into<String>, ty: impl Into<PtoType>) -> Operand {
        Operand { value: value.into(), ty: ty.into(), attr: None }
    }

    /// `value {name = attr} : ty`.
    pub fn with_attr(mut self, name: &'static str, attr: &'static str) -> Operand {
        self.attr = Some((name, attr));
        self
    }
}

/// The kind of core a kernel function runs on (its `pto.kernel_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelKind {
    /// The cube core (`aic`).
    Cube,
    /// A vector core.
    Vector,
}

/// An instruction at its nesting depth (two spaces of indentation each), with the source span
/// of the IR statement that produced it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The nesting depth.
    pub indent: usize,
    /// The instruction.
    pub inst: Inst,
    /// The span of the IR statement whose lowering pushed it (the function's own span for
    /// the signature's views; [`Span::DUMMY`] in a builtin kernel, which has no source).
    pub span: Span,
}
