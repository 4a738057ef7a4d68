//! # pld-runtime-simpler — the Simpler runtime's program directory
//!
//! The second backend (`pld compile --emit runtime`): a directory of Python and C++ that the
//! Simpler runtime loads, fed by the same lowered IR as the `.pto` modules and embedding them
//! (spec: `runtime_artifacts.md`). It sits above `pld-codegen-pto` (it calls
//! [`pld_codegen_pto::emit_program`] for the kernels); codegen never depends on it. Every
//! Python and C++ file is rendered from its template under `templates/` ([`template`]).
//!
//! Guarantees:
//! - [`emit`] returns every file of the directory as `(relative path, text)`, sorted by path:
//!   `distributed_meta.json` (schema 2, [`meta`]), `orchestration/host_orch.py` ([`host`]),
//!   one `next_levels/<chip>/` per chip orchestrator with `kernel_config.py`,
//!   `orchestration/<chip>.cpp` ([`chip`]) and `kernels/{aiv,aic}/<kernel>.cpp` wrappers plus
//!   `ptoas/<unit>.pto` ([`kernel`]), one `next_levels/<variant>/` per builtin collective
//!   variant ([`variant`]), one `sub_workers/<name>.py` per host callback ([`subworker`])
//!   and `run.py` ([`runpy`]). No top-level `kernel_config.py` or
//!   `compiled_meta.json` is ever written (§10 M14).
//! - Func ids are dense from 0 per chip program in first-call order (a mixed group takes the
//!   AIC id, then the AIV id); builtin variants use 0.
//! - Argument order agrees everywhere: the host adds a chip's tensors in chip-parameter order,
//!   then one ordering token per comm domain touched, then scalars and CommContexts; the chip
//!   orchestration adds a kernel's tensors in kernel-parameter order, then its scalars; the
//!   wrapper unpacks tensors, then scalars (§10 M1, M2).
//! - Wrappers are left unassembled (an `#error` between the two sentinels) until ptoas runs
//!   ([`ptoas`]); the same program always gives byte-identical files.
//! - A kernel named like a C++ keyword is renamed (`double` → `double_k`, [`mangle`]) in every
//!   artifact that names it; the host entry's Python name goes through [`ident`].
//! - Anything the emitter cannot express is a diagnostic naming the construct, never a panic.

#![deny(missing_docs)]

pub mod chip;
pub mod host;
pub mod host_templates;
mod indent;
pub mod kernel;
pub mod mangle;
pub mod meta;
pub mod ptoas;
pub mod results;
pub mod runpy;
pub mod subworker;
pub mod template;
pub mod variant;

use pld_codegen_pto::CodegenOptions;
use pld_ir::{
    Attr, BinOp, DataType, Diagnostic, Diagnostics, Direction, Expr, ExprKind, Function, FunctionKind,
    Program, Span, Target, Type, UnOp,
};

/// The runtime name every emitted chip uses (`RUNTIME_CONFIG["runtime"]`, §10 R5).
pub const RUNTIME: &str = "tensormap_and_ringbuffer";

/// The orchestration symbol the AICPU looks up (`ORCHESTRATION["function_name"]`).
pub const ORCH_ENTRY: &str = "aicpu_orchestration_entry";

/// Options of one runtime-directory emission.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeOptions {
    /// The target architecture.
    pub target: Target,
    /// The runtime platform recorded in the metadata (`a2a3sim`, `a2a3`, `a5sim`, `a5`).
    pub platform: String,
    /// Physical device ids, one per rank (`world_size = len`).
    pub device_ids: Vec<i64>,
    /// The program's source files `(name, text)`, indexed by `FileId`: a host callback's
    /// `sub_workers/` module carries its file's text ([`subworker`]).
    pub sources: Vec<(String, String)>,
    /// The `--bind NAME=VALUE` values the program was built with, as written (a host
    /// callback sees them as globals, as under `pld run`).
    pub binds: Vec<(String, String)>,
}

impl RuntimeOptions {
    /// Defaults for `target` and `ranks` ranks: the target's CPU platform, devices `0..ranks`.
    pub fn new(target: Target, ranks: usize) -> RuntimeOptions {
        let platform = format!("{}sim", target.name());
        RuntimeOptions {
            target,
            platform,
            device_ids: (0..ranks.max(1) as i64).collect(),
            sources: Vec::new(),
            binds: Vec::new(),
        }
    }

    fn codegen(&self) -> CodegenOptions {
        CodegenOptions { target: self.target }
    }

    /// `Ascend910B` for a2a3, `Ascend950` for a5.
    pub fn backend_type(&self) -> &'static str {
        match self.target {
            Target::A5 => "Ascend950",
            _ => "Ascend910B",
        }
    }

    /// The launch-spec method that sets a task's core count (`set_block_num` / `set_core_num`).
    pub fn core_count_method(&self) -> &'static str {
        match self.target {
            Target::A5 => "set_core_num",
            _ => "set_block_num",
        }
    }
}

/// The emitted directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuntimeDir {
    /// `(path relative to the root, text)`, sorted by path.
    pub files: Vec<(String, String)>,
    /// Every ptoas unit: `(chip directory, unit name)`; its `.pto` is
    /// `next_levels/<chip>/ptoas/<unit>.pto`.
    pub units: Vec<(String, String)>,
}

/// Emits the runtime directory of a lowered program.
pub fn emit(program: &Program, opts: &RuntimeOptions) -> Result<RuntimeDir, Diagnostics> {
    let mangled = mangle::mangle_kernel_names(program);
    let program = mangled.as_ref().unwrap_or(program);
    let mut diags = Diagnostics::new();
    let cg = opts.codegen();
    let out = pld_codegen_pto::emit_program(program, &cg)?;
    let host = match host_entry(program) {
        Ok(h) => h,
        Err(d) => {
            diags.push(d);
            return Err(diags);
        }
    };
    let mut files: Vec<(String, String)> = Vec::new();
    let mut units = Vec::new();
    let callbacks = subworker::callbacks(program);
    let returned = match results::host_results(program, host) {
        Ok(r) => r,
        Err(d) => {
            diags.push(d);
            return Err(diags);
        }
    };
    files.push(("distributed_meta.json".into(), meta::render(host, callbacks.len(), &returned, opts)));
    let chips = chip::chip_programs(program);
    let mut variants = Vec::new();
    let result = (|| -> Result<(), Diagnostic> {
        for c in &chips {
            let dir = format!("next_levels/{}", c.func.name);
            for (path, text) in chip::render(program, c, opts)? {
                files.push((format!("{dir}/{path}"), text));
            }
            for (path, text) in kernel::render_chip(program, c, opts, &out.modules)? {
                files.push((format!("{dir}/{path}"), text));
            }
            for u in c.units() {
                units.push((c.func.name.clone(), u));
            }
        }
        for v in variant::variants(program, &cg)? {
            let dir = format!("next_levels/{}", v.variant);
            for (path, text) in variant::render(program, &v, opts, &out.modules)? {
                files.push((format!("{dir}/{path}"), text));
            }
            units.push((v.variant.clone(), v.kernel_name()));
            variants.push(v);
        }
        files.push((
            "orchestration/host_orch.py".into(),
            host::render(program, host, &returned, &variants, opts)?,
        ));
        for f in &callbacks {
            files.push((format!("sub_workers/{}.py", f.name), subworker::render(f, opts)?));
        }
        files.push(("run.py".into(), runpy::render(host, opts)));
        Ok(())
    })();
    if let Err(d) = result {
        diags.push(d);
        return Err(diags);
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    units.sort();
    Ok(RuntimeDir { files, units })
}

/// The program's host orchestrator: the unique `Host` function.
fn host_entry(program: &Program) -> Result<&Function, Diagnostic> {
    let hosts: Vec<&Function> = program.functions.iter().filter(|f| f.kind == FunctionKind::Host).collect();
    match hosts.as_slice() {
        [h] => Ok(h),
        // A chip-only program is what the reference builds as a single-chip (L2) directory, a
        // different layout (top-level kernel_config.py) this emitter does not write (D-cg-22).
        [] => {
            let at = program
                .functions
                .iter()
                .find(|f| f.kind == FunctionKind::ChipOrch)
                .or(program.functions.first())
                .map_or(Span::DUMMY, |f| f.span);
            Err(Diagnostic::error(
                at,
                format!(
                    "program '{}' has no host orchestrator (`@pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)`); the runtime directory is a distributed (L3) build and needs one",
                    program.name
                ),
            )
            .with_note("add a host orchestrator that dispatches the chip orchestrator with `device=r`; a single-chip (L2) directory is not emitted by pld"))
        }
        _ => Err(Diagnostic::error(
            hosts[1].span,
            format!(
                "program '{}' has {} host orchestrators; the runtime directory describes one (select one with --entry)",
                program.name,
                hosts.len()
            ),
        )),
    }
}

/// A diagnostic for a construct the runtime emitter does not express.
pub(crate) fn unsupported(span: Span, what: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::error(span, format!("runtime directory: {what} is not supported by `--emit runtime`"))
        .with_note("the simulator (`pld run`) and `--emit pto` still accept it")
}

/// The expression that reads dynamic dim `sym` from the first tensor parameter (of `tensors`,
/// `(value, C name)`) one of whose dims `read(dim, name, index)` can recover it from; else the
/// "not supported" diagnostic of `f` saying `missing`.
pub(crate) fn read_dynamic_dim<'a>(
    f: &Function,
    tensors: impl IntoIterator<Item = (pld_ir::ValueId, &'a str)>,
    read: impl Fn(&Expr, &str, usize) -> Option<String>,
    missing: impl std::fmt::Display,
) -> Result<String, Diagnostic> {
    let found = tensors.into_iter().find_map(|(v, name)| {
        let t = f.values.ty(v).as_tensor_like()?;
        t.shape.iter().enumerate().find_map(|(i, d)| read(d, name, i))
    });
    found.ok_or_else(|| unsupported(f.span, missing))
}

/// `IN` / `OUT` / `INOUT` (the `ArgDirection` member names).
pub fn arg_direction(d: Direction) -> &'static str {
    match d {
        Direction::In => "IN",
        Direction::Out => "OUT",
        Direction::InOut => "INOUT",
    }
}

/// The C type of a scalar dtype in the orchestration and the wrapper.
pub fn c_type(d: DataType) -> Option<&'static str> {
    Some(match d {
        DataType::BOOL => "bool",
        DataType::INT8 => "int8_t",
        DataType::INT16 => "int16_t",
        DataType::INT32 => "int32_t",
        DataType::INT64 | DataType::INDEX | DataType::TASK_ID => "int64_t",
        DataType::UINT8 => "uint8_t",
        DataType::UINT16 => "uint16_t",
        DataType::UINT32 => "uint32_t",
        DataType::UINT64 => "uint64_t",
        DataType::FP16 => "half",
        DataType::BF16 => "bfloat16_t",
        DataType::FP32 => "float",
        _ => return None,
    })
}

/// The `simpler.task_interface.DataType` member of a dtype.
pub fn simpler_dtype(d: DataType) -> Option<&'static str> {
    Some(match d {
        DataType::FP16 => "FLOAT16",
        DataType::FP32 => "FLOAT32",
        DataType::BF16 => "BFLOAT16",
        DataType::INT8 => "INT8",
        DataType::INT16 => "INT16",
        DataType::INT32 => "INT32",
        DataType::INT64 => "INT64",
        DataType::UINT8 => "UINT8",
        DataType::UINT16 => "UINT16",
        DataType::UINT32 => "UINT32",
        DataType::UINT64 => "UINT64",
        DataType::BOOL => "BOOL",
        _ => return None,
    })
}

/// The `torch` dtype of a tensor dtype.
pub fn torch_dtype(d: DataType) -> Option<&'static str> {
    Some(match d {
        DataType::FP16 => "torch.float16",
        DataType::FP32 => "torch.float32",
        DataType::BF16 => "torch.bfloat16",
        DataType::INT8 => "torch.int8",
        DataType::INT16 => "torch.int16",
        DataType::INT32 => "torch.int32",
        DataType::INT64 => "torch.int64",
        DataType::UINT8 => "torch.uint8",
        DataType::BOOL => "torch.bool",
        _ => return None,
    })
}

/// C++ and Python keywords, and names the generated code itself uses, that an IR name may
/// collide with.
const RESERVED: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "asm",
    "auto",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "class",
    "const",
    "constexpr",
    "continue",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "nullptr",
    "operator",
    "or",
    "private",
    "protected",
    "public",
    "register",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "template",
    "this",
    "throw",
    "true",
    "try",
    "typedef",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "while",
    "xor",
    "args",
    "None",
    "True",
    "False",
    "def",
    "lambda",
    "pass",
    "in",
    "is",
    "with",
    "yield",
    "from",
    "import",
    "global",
    "raise",
    "del",
    "elif",
    "except",
    "finally",
    "assert",
    "async",
    "await",
    "nonlocal",
    "tensors",
    "orch",
    "config",
    "world_size",
    "torch",
    "callables",
    "range",
    "max",
    "min",
    "kernel_entry",
    "orch_args",
    "params",
];

/// Whether `name` is a C++ or Python keyword, or a name the generated code uses itself.
pub fn is_reserved(name: &str) -> bool {
    RESERVED.contains(&name)
}

/// A C/Python identifier for an IR name (`.` and other punctuation become `_`; a reserved
/// name gets a `_v` suffix).
pub fn ident(name: &str) -> String {
    let mut s: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'v');
    }
    if is_reserved(&s) {
        s.push_str("_v");
    }
    s
}

/// The parameter kinds of a device-side signature, in IR order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A tensor (or DistributedTensor) of that dtype and direction.
    Tensor {
        /// Element type.
        dtype: DataType,
        /// Direction.
        dir: Direction,
        /// Whether it is a window view.
        window: bool,
    },
    /// A scalar.
    Scalar(DataType),
    /// A CommContext pointer.
    Ctx,
}

/// The kinds of a function's parameters (other types are a diagnostic).
pub fn param_kinds(f: &Function) -> Result<Vec<(String, ParamKind)>, Diagnostic> {
    f.params
        .iter()
        .map(|p| {
            let name = ident(f.values.name(p.value));
            let kind = match f.values.ty(p.value) {
                Type::Tensor(t) => ParamKind::Tensor { dtype: t.dtype, dir: p.dir, window: false },
                Type::DistTensor(d) => ParamKind::Tensor { dtype: d.tensor.dtype, dir: p.dir, window: true },
                Type::Scalar(d) => ParamKind::Scalar(*d),
                Type::CommCtx => ParamKind::Ctx,
                other => {
                    return Err(unsupported(
                        f.span,
                        format_args!("parameter '{name}' of '{}' of type {}", f.name, other.kind_name()),
                    ))
                }
            };
            Ok((name, kind))
        })
        .collect()
}

/// C++ text of an integer/boolean expression; `var` names values.
pub(crate) fn c_expr(
    f: &Function,
    e: &Expr,
    var: &dyn Fn(&Function, pld_ir::ValueId) -> String,
) -> Result<String, Diagnostic> {
    Ok(match &e.kind {
        ExprKind::Int(v) => format!("{v}"),
        ExprKind::Float(b) => format!("{:?}", b.get()),
        ExprKind::Bool(b) => if *b { "true" } else { "false" }.to_string(),
        ExprKind::Var(v) => var(f, *v),
        ExprKind::Sym(s) => ident(s),
        ExprKind::Unary(UnOp::Neg, a) => format!("(-{})", c_expr(f, a, var)?),
        ExprKind::Unary(UnOp::Not, a) => format!("(!{})", c_expr(f, a, var)?),
        ExprKind::Binary(op, a, b) => {
            let (x, y) = (c_expr(f, a, var)?, c_expr(f, b, var)?);
            match op {
                BinOp::Min => format!("(({x}) < ({y}) ? ({x}) : ({y}))"),
                BinOp::Max => format!("(({x}) > ({y}) ? ({x}) : ({y}))"),
                BinOp::FloorDiv | BinOp::Div => format!("({x} / {y})"),
                BinOp::And => format!("({x} && {y})"),
                BinOp::Or => format!("({x} || {y})"),
                _ => format!("({x} {} {y})", op.symbol()),
            }
        }
        _ => return Err(unsupported(e.span, "this expression in a chip orchestrator")),
    })
}

/// Python text of an integer/boolean expression; `var` names values, `world` is the text of
/// `pld.system.world_size()`.
pub(crate) fn py_expr(e: &Expr, var: &dyn Fn(pld_ir::ValueId) -> String) -> Result<String, Diagnostic> {
    Ok(match &e.kind {
        ExprKind::Int(v) => format!("{v}"),
        ExprKind::Float(b) => format!("{:?}", b.get()),
        ExprKind::Bool(b) => if *b { "True" } else { "False" }.to_string(),
        ExprKind::Var(v) => var(*v),
        ExprKind::Sym(s) => ident(s),
        ExprKind::Unary(UnOp::Neg, a) => format!("(-{})", py_expr(a, var)?),
        ExprKind::Unary(UnOp::Not, a) => format!("(not {})", py_expr(a, var)?),
        ExprKind::Binary(op, a, b) => {
            let (x, y) = (py_expr(a, var)?, py_expr(b, var)?);
            match op {
                BinOp::Min | BinOp::Max => format!("{}({x}, {y})", op.symbol()),
                _ => format!("({x} {} {y})", op.symbol()),
            }
        }
        ExprKind::Call(c) if c.callee.name() == WORLD_SIZE => "world_size".to_string(),
        // A host scalar converted for a scalar parameter (`pl.cast(r, pl.FP32)`).
        ExprKind::Call(c) if c.callee.name() == SCALAR_CAST && c.args.len() == 1 => {
            let x = py_expr(&c.args[0], var)?;
            match c.attr("dtype") {
                Some(Attr::DType(d)) if d.is_float() => format!("float({x})"),
                Some(Attr::DType(d)) if *d == pld_ir::DataType::BOOL => format!("bool({x})"),
                Some(Attr::DType(_)) => format!("int({x})"),
                _ => return Err(unsupported(e.span, "a cast without a dtype in a host orchestrator")),
            }
        }
        _ => return Err(unsupported(e.span, "this expression in a host orchestrator")),
    })
}

/// The op name of `pld.system.world_size()`.
pub(crate) const WORLD_SIZE: &str = pld_ir::vocab::WORLD_SIZE;
use pld_ir::vocab::SCALAR_CAST;

/// An integer attribute of a function (`core_num`, …).
pub(crate) fn fn_attr_int(f: &Function, name: &str) -> Option<i64> {
    match f.attr(name) {
        Some(Attr::Int(v)) => Some(*v),
        _ => None,
    }
}

/// A boolean attribute of a function (`sync_start`, `dual_aiv_dispatch`, …).
pub(crate) fn fn_attr_bool(f: &Function, name: &str) -> bool {
    matches!(f.attr(name), Some(Attr::Bool(true)))
}
