//! Functions and programs.
//!
//! A [`Program`] owns its functions in order; names are unique (the verifier checks it). A
//! [`Function`] owns its value arena, its parameters with directions, its return types and
//! its body.

use crate::expr::Attr;
use crate::span::Span;
use crate::stmt::Block;
use crate::types::Type;
use crate::value::{ValueId, Values};

/// The kinds of functions in the three-level distributed model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FunctionKind {
    /// Host orchestration (`@pl.jit.host`, `level=HOST, role=Orchestrator`).
    Host,
    /// Chip orchestration (`@pl.jit`, `FunctionType.Orchestration`).
    ChipOrch,
    /// A device kernel before the core split (`@pl.jit.incore`, `FunctionType.InCore`).
    InCore,
    /// A cube kernel.
    Aic,
    /// A vector kernel.
    Aiv,
    /// Anything else (`FunctionType.Opaque`): plain helpers.
    Opaque,
}

impl FunctionKind {
    /// Whether this is a device kernel (InCore, AIC or AIV).
    pub fn is_incore(self) -> bool {
        matches!(self, FunctionKind::InCore | FunctionKind::Aic | FunctionKind::Aiv)
    }

    /// The `pl.FunctionType` member the printer uses.
    pub fn dsl_name(self) -> &'static str {
        match self {
            FunctionKind::Host => "Host",
            FunctionKind::ChipOrch => "Orchestration",
            FunctionKind::InCore => "InCore",
            FunctionKind::Aic => "AIC",
            FunctionKind::Aiv => "AIV",
            FunctionKind::Opaque => "Opaque",
        }
    }
}

/// Direction of a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Direction {
    /// Read only.
    #[default]
    In,
    /// Written only (`pl.Out[...]`).
    Out,
    /// Read and written (`pl.InOut[...]`).
    InOut,
}

/// A function parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// The value bound to the parameter.
    pub value: ValueId,
    /// Its direction.
    pub dir: Direction,
}

/// A function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// Unique name within the program.
    pub name: String,
    /// Kind.
    pub kind: FunctionKind,
    /// Parameters, in order.
    pub params: Vec<Param>,
    /// Return types.
    pub ret: Vec<Type>,
    /// The value arena.
    pub values: Values,
    /// The body.
    pub body: Block,
    /// Extra constant attributes (e.g. `core_num` of an SPMD kernel, the waiter marker).
    pub attrs: Vec<(String, Attr)>,
    /// Where it was declared.
    pub span: Span,
}

impl Function {
    /// An empty function.
    pub fn new(name: impl Into<String>, kind: FunctionKind) -> Function {
        Function {
            name: name.into(),
            kind,
            params: Vec::new(),
            ret: Vec::new(),
            values: Values::default(),
            body: Block::new(),
            attrs: Vec::new(),
            span: Span::DUMMY,
        }
    }

    /// Types of the parameters, in order.
    pub fn param_types(&self) -> Vec<Type> {
        self.params.iter().map(|p| self.values.ty(p.value).clone()).collect()
    }

    /// The attribute named `name`.
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// The result type of a call to this function: unit-less calls are `Unknown`, one return
    /// is that type, several are a tuple.
    pub fn call_type(&self) -> Type {
        match self.ret.len() {
            0 => Type::Unknown,
            1 => self.ret[0].clone(),
            _ => Type::Tuple(self.ret.clone()),
        }
    }
}

/// A whole program.
#[derive(Clone, Debug, Default)]
pub struct Program {
    /// Program name (the `@pl.program` class name).
    pub name: String,
    /// Named symbolic dims declared with `pl.dynamic`, in declaration order.
    pub dyn_syms: Vec<String>,
    /// The functions, in declaration order.
    pub functions: Vec<Function>,
    /// The dynamic dims the program as written uses as the rank count, recorded by the pass
    /// pipeline before it lowers anything ([`Program::rank_counts`], D-cli-10). A fact about
    /// how a run binds the program, not part of what it computes: equality ignores it.
    pub rank_count_dims: Option<Vec<String>>,
}

impl PartialEq for Program {
    fn eq(&self, other: &Program) -> bool {
        self.name == other.name && self.dyn_syms == other.dyn_syms && self.functions == other.functions
    }
}
impl Eq for Program {}

impl Program {
    /// An empty program.
    pub fn new(name: impl Into<String>) -> Program {
        Program { name: name.into(), ..Program::default() }
    }

    /// The function named `name`.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }

    /// The function named `name`, mutably.
    pub fn function_mut(&mut self, name: &str) -> Option<&mut Function> {
        self.functions.iter_mut().find(|f| f.name == name)
    }

    /// Adds a function (replacing none; the verifier reports duplicate names).
    pub fn add_function(&mut self, f: Function) {
        self.functions.push(f);
    }

    /// The host orchestration functions.
    pub fn host_functions(&self) -> impl Iterator<Item = &Function> {
        self.functions.iter().filter(|f| f.kind == FunctionKind::Host)
    }
}
