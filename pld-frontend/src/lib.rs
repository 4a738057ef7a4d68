//! # pld-frontend — PTO Python DSL source → pld IR
//!
//! Reads DSL programs (`import pypto.language as pl`, `import pypto.language.distributed as
//! pld`) without running Python: `rustpython-parser` supplies the syntax tree, this crate the
//! DSL semantics. Guarantees:
//!
//! - every IR node built here carries the [`Span`] of the source it came from,
//!   in a file added to the caller's [`SourceMap`], so diagnostics render with
//!   `file:line:col` and a caret;
//! - op calls are built only through [`pld_ir::Expr::op_call`] (the registry deducers run
//!   with the enclosing function's kind), keyword arguments are resolved against the op's
//!   schema, ABI enum members become their pinned integers;
//! - everything in a file that is not DSL (imports, helper functions, `main()`, golden
//!   functions) is skipped, never rejected;
//! - wrong DSL gives [`Diagnostics`] (collected, several per run where possible) and never a
//!   panic;
//! - `parse(print(p))` is [`structurally_equal`] to `p` for every program this crate
//!   produces.
//!
//! Program units: each `@pl.program` class is one [`Program`]. The module-level DSL
//! functions (`@pl.jit`, `@pl.jit.incore`, `@pl.jit.host`, `@pl.function`) form one program
//! per host entry — the host and the functions it reaches through calls, named after the
//! host — or a single program (named after its host, else its first function) when the
//! module has at most one host. [`Module::units`] lists the units (names, hosts, bindable
//! names) without lowering any; [`ParseOptions::program`] lowers only the selected unit.
//!
//! ## What is read
//!
//! - module constants and integer arithmetic on them (`SIZE = 256`, `N * SIZE`,
//!   `8 if size == 1 else 1`), `pl.FP32.get_byte()`, `NR = pl.dynamic("NR")`, dtype objects;
//!   parameters of program-building Python functions via [`ParseOptions::bindings`]
//!   (checked against their `int` / `bool` / `str` / `float` annotations by [`bind_value`]),
//!   and what those functions compute from them: assignments (tuple ones too) and
//!   `if`/`elif`/`else` chains whose conditions fold once the parameters are bound
//!   (`if mode == "ring": rows, cols = 2 * (n - 1), n`); a name whose value is only known
//!   at run time is reported once, at its first use, naming the `--bind` that fixes it;
//! - decorators `@pl.function(type=pl.FunctionType.InCore | Orchestration | AIC | AIV |
//!   Opaque)`, `@pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)`,
//!   `@pl.jit` / `@pl.jit.incore` / `@pl.jit.host`; other decorator keywords become function
//!   attributes; `role=pl.Role.SubWorker` callbacks keep their signature only;
//! - annotations `pl.Tensor[[..], dt]` (and `pl.Tensor((..), dt)`), `pl.Out[..]`,
//!   `pl.InOut[..]`, `pld.DistributedTensor[[..], dt]`, `pl.Tile[[..], dt, pl.MemorySpace.X]`,
//!   `pl.Scalar[dt]`, `pl.Tuple[..]`, `tuple[..]` returns, `pld.CommCtx`, `pld.Ptr`;
//! - statements: (annotated) assignment, tuple unpacking, augmented assignment, `return`,
//!   expression statements, `for i in pl.range/parallel/unroll(...)` with `init_values` and
//!   `x = pl.yield_(...)`, `for (a,) in pl.while_(init_values=...)` + `pl.cond(c)`, `while`,
//!   `if`/`elif`/`else` (with or without yields; plain reassignments are carried
//!   automatically), `with pl.at(...)`, `with pl.spmd(n)`, `for lane in pl.split_aiv(2)`,
//!   `with pld.comm_domain(...)`, subscript assignment `t[a:b, :] = v`;
//! - expressions: scalar arithmetic and comparisons, `and`/`or`/`not`, `min`/`max`, lists
//!   (tuples of offsets and shapes), `x[r]` / `x[i, j]` / `x[a:b]` on tensors and tiles,
//!   op calls by DSL name, calls of program functions with `device=r`.

mod annot;
mod body;
mod builders;
mod callcheck;
mod consts;
mod equal;
mod expr;
mod limits;
pub mod lint;
mod module;
mod syntax;
mod util;

pub use builders::{bind_value, BindKind, Bindable, RANK_COUNT_NAMES};
pub use equal::structurally_equal;
pub use limits::{MAX_NESTING, MAX_SOURCE_BYTES};
pub use module::Module;

use pld_ir::{Diagnostic, Diagnostics, Program, SourceMap, Span, Target};

/// Options of one parse.
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    /// The compilation target, passed to the op deducers.
    pub target: Target,
    /// Which program unit to return from [`parse_program`] when a file defines several
    /// (by `@pl.program` class name, or the jit unit's name); `None` = the only one.
    pub program: Option<String>,
    /// Reject a second assignment to a name in the same scope (the reference's
    /// `strict_ssa=True`); by default a reassignment defines a new value.
    pub strict_ssa: bool,
    /// Values for parameters of ordinary Python functions that build programs at run time
    /// (`def _build(n_ranks): ... @pl.program class P: ...`), as DSL constant expressions:
    /// `("n_ranks", "2")`, `("dtype", "pl.FP32")`.
    pub bindings: Vec<(String, String)>,
    /// Accept internal-only ops (`builtin.tensor.*`, `pld.tile.put`, …), as printed IR dumps
    /// after the pipeline contain them; user programs may not call them.
    pub allow_internal: bool,
}

impl ParseOptions {
    /// Default options for `target`.
    pub fn for_target(target: Target) -> ParseOptions {
        ParseOptions { target, ..ParseOptions::default() }
    }
}

/// Parses `text` (added to `sources` as `file_name`) into its one program unit.
///
/// A file with several units (e.g. several `@pl.program` classes) needs
/// [`ParseOptions::program`]; without it the error lists the unit names. Only the selected
/// unit is lowered, so the other units' builders need no bindings.
pub fn parse_program(
    sources: &mut SourceMap,
    file_name: &str,
    text: &str,
    opts: &ParseOptions,
) -> Result<Program, Diagnostics> {
    let file = sources.add(file_name, text);
    let mut programs = Module::parse(file, file_name, text)?.programs(opts)?;
    let file_span = Span::new(file, 0, 0);
    if let Some(want) = &opts.program {
        return match programs.iter().position(|p| &p.name == want) {
            Some(i) => Ok(programs.swap_remove(i)),
            None => Err(Diagnostic::error(file_span, format!("no program named `{want}` in {file_name}"))
                .with_note(format!("programs defined: {}", names(&programs)))
                .into()),
        };
    }
    match programs.len() {
        0 => Err(Diagnostic::error(file_span, format!("no DSL program found in {file_name}"))
            .with_note("expected a `@pl.program` class or `@pl.jit` / `@pl.function` functions")
            .into()),
        1 => Ok(programs.remove(0)),
        n => Err(Diagnostic::error(file_span, format!("{file_name} defines {n} programs; select one"))
            .with_note(format!("programs defined: {}", names(&programs)))
            .into()),
    }
}

/// One program unit of a file, as found before any function is lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitInfo {
    /// The unit's name ([`ParseOptions::program`] selects it).
    pub name: String,
    /// Its host functions (`@pl.jit.host`, `level=pl.Level.HOST`), in source order.
    pub hosts: Vec<String>,
    /// Every DSL function of the unit, in source order.
    pub functions: Vec<String>,
    /// The names a binding may set for it (parameters of its enclosing program-building
    /// functions, names they assign under control flow that does not fold).
    pub bindable: Vec<Bindable>,
    /// The `pl.dynamic` symbols declared by module or builder constants it sees.
    pub dyn_syms: Vec<String>,
}

/// Parses the syntax of `text` (added to `sources` as `file_name`), once for every later
/// question: [`Module::units`] lists its program units in source order without lowering any
/// (what a caller needs to select one; `opts.bindings` matter, as an `if` on a bound builder
/// parameter decides which classes exist), [`Module::programs`] lowers them. Only a syntax
/// error (or a source limit) fails here.
pub fn parse_module(sources: &mut SourceMap, file_name: &str, text: &str) -> Result<Module, Diagnostics> {
    let file = sources.add(file_name, text);
    Module::parse(file, file_name, text)
}

/// Parses every program unit of `text` (added to `sources` as `file_name`), in source order.
pub fn parse_programs(
    sources: &mut SourceMap,
    file_name: &str,
    text: &str,
    opts: &ParseOptions,
) -> Result<Vec<Program>, Diagnostics> {
    parse_module(sources, file_name, text)?.programs(opts)
}

/// Parses printed IR (e.g. a `--dump-after` dump), which may call internal-only ops.
pub fn parse_ir_str(text: &str) -> Result<Program, Diagnostics> {
    let mut sources = SourceMap::new();
    let opts = ParseOptions { allow_internal: true, ..ParseOptions::default() };
    parse_program(&mut sources, "<ir>", text, &opts)
}

/// Parses a string with default options (file name `<string>`).
pub fn parse_str(text: &str) -> Result<Program, Diagnostics> {
    let mut sources = SourceMap::new();
    parse_program(&mut sources, "<string>", text, &ParseOptions::default())
}

fn names(programs: &[Program]) -> String {
    programs.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
}
