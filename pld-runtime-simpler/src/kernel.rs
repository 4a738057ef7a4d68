//! Kernel wrappers (`kernels/{aiv,aic}/<kernel>.cpp`, `runtime_artifacts.md` §5), the ptoas
//! units beside them (`ptoas/<unit>.pto`) and `kernel_config.py` (§3).
//!
//! Guarantees:
//! - A wrapper is: header (`__gm__`/`__aicore__` fallbacks, `pto-inst.hpp`, `tensor.h`, the
//!   async API and `intrinsic.h` only when used, `using namespace pto;`), the sentinel
//!   `// --- ptoas-generated code ---`, the ptoas body (an `#error` naming `pld assemble`
//!   until ptoas ran), and the sentinel `// --- Kernel entry point ---` before
//!   `kernel_entry(__gm__ int64_t* args)`, which unpacks `args[0..T-1]` as `ChipTensor*`
//!   (element pointer = `buffer.addr + start_offset`), then `args[T..]` as scalars (union bit
//!   reinterpretation) and CommContext pointers in IR order, recovers every dynamic dim from a
//!   tensor's `shapes[]` in the `.pto` signature's first-seen order, and forwards them in the
//!   `.pto` signature order, with the raw `args` for a deferred-completion kernel, then the
//!   SPMD block index and count read with `get_block_idx(args)` / `get_block_num(args)` for a
//!   kernel that uses them (never the CCE built-ins).
//! - `kernel_config.py` is relocatable (`_ROOT_DIR = Path(__file__).parent`), lists kernels
//!   sorted by func id with their core type and tensor-only signature, and the orchestration
//!   signature lists one direction per tensor parameter of the chip function.

use crate::chip::{ChipProgram, Core};
use crate::{
    arg_direction, c_type, ident, param_kinds, read_dynamic_dim, unsupported, ParamKind, RuntimeOptions,
};
use pld_ir::{BinOp, Diagnostic, Direction, Expr, ExprKind, Function, Program};
use std::fmt::Write as _;

/// The line before the ptoas body.
pub const PTOAS_SENTINEL: &str = "// --- ptoas-generated code ---";
/// The line before `kernel_entry`.
pub const ENTRY_SENTINEL: &str = "// --- Kernel entry point ---";
/// The first line of an unassembled body.
pub const UNASSEMBLED: &str = "// pld: kernel body not assembled yet";

/// The files of a chip's kernels: wrappers, ptoas units and `kernel_config.py`.
pub fn render_chip(
    program: &Program,
    chip: &ChipProgram<'_>,
    opts: &RuntimeOptions,
    modules: &[(String, String)],
) -> Result<Vec<(String, String)>, Diagnostic> {
    let _ = (program, opts);
    let mut files = Vec::new();
    for unit in chip.units() {
        files.push((format!("ptoas/{unit}.pto"), module_text(modules, &unit, chip.func)?));
    }
    let mut kernels = Vec::new();
    for k in &chip.kernels {
        files.push((format!("kernels/{}/{}.cpp", k.core.dir(), k.func.name), wrapper(k.func, &k.unit)?));
        kernels.push(ConfigKernel {
            func_id: k.func_id,
            name: k.func.name.clone(),
            core: k.core,
            signature: tensor_signature(k.func)?,
        });
    }
    let orch_sig = tensor_signature(chip.func)?;
    files.push(("kernel_config.py".into(), kernel_config(&chip.func.name, &orch_sig, &kernels)));
    Ok(files)
}

/// The `.pto` text of a unit.
pub(crate) fn module_text(
    modules: &[(String, String)],
    unit: &str,
    at: &Function,
) -> Result<String, Diagnostic> {
    let file = format!("{unit}.pto");
    modules
        .iter()
        .find(|(n, _)| *n == file)
        .map(|(_, t)| t.clone())
        .ok_or_else(|| unsupported(at.span, format_args!("kernel module '{file}' missing from codegen")))
}

/// One `KERNELS` entry.
pub struct ConfigKernel {
    /// Func id.
    pub func_id: i64,
    /// Kernel name (= wrapper file stem).
    pub name: String,
    /// Core.
    pub core: Core,
    /// Tensor directions.
    pub signature: Vec<Direction>,
}

/// The direction of every tensor parameter of `f`, in order.
pub fn tensor_signature(f: &Function) -> Result<Vec<Direction>, Diagnostic> {
    Ok(param_kinds(f)?
        .into_iter()
        .filter_map(|(_, k)| match k {
            ParamKind::Tensor { dir, .. } => Some(dir),
            _ => None,
        })
        .collect())
}

fn sig_list(sig: &[Direction]) -> String {
    format!("[{}]", sig.iter().map(|d| format!("_D.{}", arg_direction(*d))).collect::<Vec<_>>().join(", "))
}

/// Renders `kernel_config.py`; `orch` is the orchestration source's stem.
pub fn kernel_config(orch: &str, orch_sig: &[Direction], kernels: &[ConfigKernel]) -> String {
    let directions = !orch_sig.is_empty() || kernels.iter().any(|k| !k.signature.is_empty());
    let mut sorted: Vec<&ConfigKernel> = kernels.iter().collect();
    sorted.sort_by_key(|k| k.func_id);
    let entries: String = sorted
        .into_iter()
        .map(|k| {
            KernelConfigEntryPy {
                func_id: &k.func_id.to_string(),
                name: &k.name,
                core_type: k.core.dir(),
                signature: &sig_list(&k.signature),
            }
            .render()
        })
        .collect();
    KernelConfigPy {
        import_directions: if directions {
            "from simpler.task_interface import ArgDirection as _D\n\n"
        } else {
            ""
        },
        runtime: crate::RUNTIME,
        orchestration: orch,
        orchestration_entry: crate::ORCH_ENTRY,
        orchestration_signature: &sig_list(orch_sig),
        kernels: &entries,
    }
    .render()
}

crate::template::template! {
    /// `templates/kernel_config.py`: a chip program's kernels and orchestration.
    pub struct KernelConfigPy = "kernel_config.py" {
        /// The `ArgDirection as _D` import, when a signature lists a direction.
        import_directions,
        /// `RUNTIME_CONFIG["runtime"]`.
        runtime,
        /// The orchestration source's stem.
        orchestration,
        /// The orchestration symbol.
        orchestration_entry,
        /// The orchestration's tensor directions (`[_D.IN, …]`).
        orchestration_signature,
        /// The `KERNELS` entries ([`KernelConfigEntryPy`]), by func id.
        kernels,
    }
}

crate::template::template! {
    /// `templates/kernel_config_entry.py`: one `KERNELS` entry.
    pub struct KernelConfigEntryPy = "kernel_config_entry.py" {
        /// Func id.
        func_id,
        /// Kernel name (= wrapper file stem).
        name,
        /// `aiv` / `aic`.
        core_type,
        /// Tensor directions (`[_D.IN, …]`).
        signature,
    }
}

crate::template::template! {
    /// `templates/kernel_wrapper.cpp`: one kernel's wrapper, unassembled.
    pub struct KernelWrapperCpp = "kernel_wrapper.cpp" {
        /// The kernel's name.
        kernel,
        /// Its ptoas unit.
        unit,
        /// The async API and `intrinsic.h` includes, when used.
        extra_includes,
        /// [`DEFERRED_COMPLETION`] and a blank line, for a deferred-completion kernel.
        deferred_completion,
        /// [`PTOAS_SENTINEL`].
        ptoas_sentinel,
        /// [`UNASSEMBLED`].
        unassembled,
        /// [`ENTRY_SENTINEL`].
        entry_sentinel,
        /// `kernel_entry`'s statements unpacking `args`.
        unpack,
        /// The kernel's arguments.
        forward,
    }
}

crate::template::template! {
    /// `templates/kernel_tensor_arg.cpp`: `kernel_entry` unpacking a tensor argument (element
    /// pointer = `buffer.addr + start_offset`).
    pub struct KernelTensorArgCpp = "kernel_tensor_arg.cpp" {
        /// The parameter's name.
        name,
        /// Its index in `args`.
        index,
        /// Its element's C type.
        ctype,
    }
}

crate::template::template! {
    /// `templates/kernel_scalar_arg.cpp`: `kernel_entry` unpacking a scalar argument (union
    /// bit reinterpretation of the 64-bit slot).
    pub struct KernelScalarArgCpp = "kernel_scalar_arg.cpp" {
        /// The parameter's name.
        name,
        /// Its index in `args`.
        index,
        /// Its C type.
        ctype,
    }
}

crate::template::template! {
    /// `templates/kernel_context_arg.cpp`: `kernel_entry` unpacking a CommContext pointer.
    pub struct KernelContextArgCpp = "kernel_context_arg.cpp" {
        /// The parameter's name.
        name,
        /// Its index in `args`.
        index,
    }
}

/// This module's templates, for the hole checks of [`crate::template`].
#[cfg(test)]
pub(crate) fn all_templates() -> Vec<(&'static str, &'static str, &'static [&'static str])> {
    vec![
        (KernelConfigPy::FILE, KernelConfigPy::TEXT, KernelConfigPy::HOLES),
        (KernelConfigEntryPy::FILE, KernelConfigEntryPy::TEXT, KernelConfigEntryPy::HOLES),
        (KernelWrapperCpp::FILE, KernelWrapperCpp::TEXT, KernelWrapperCpp::HOLES),
        ("deferred_completion.cpp", DEFERRED_COMPLETION, &[]),
        (KernelTensorArgCpp::FILE, KernelTensorArgCpp::TEXT, KernelTensorArgCpp::HOLES),
        (KernelScalarArgCpp::FILE, KernelScalarArgCpp::TEXT, KernelScalarArgCpp::HOLES),
        (KernelContextArgCpp::FILE, KernelContextArgCpp::TEXT, KernelContextArgCpp::HOLES),
    ]
}

/// Whether a kernel uses deferred completion (its `.pto` signature ends with the raw args).
pub fn uses_deferred(f: &Function) -> bool {
    let mut found = false;
    f.body.walk_exprs(&mut |e| {
        if let Some(c) = e.as_call() {
            found |= matches!(&c.callee, pld_ir::Callee::Op(def) if def.signal_role == pld_ir::SignalRole::DeferredWait);
        }
    });
    found
}

/// How to recover dynamic dim `sym` from a tensor extent `d` (`ext` is the extent's C++
/// text): `Some(expr)` when `d` is `sym`, `sym * c`, `c * sym`, `sym + c` or `sym - c`.
fn invert(d: &Expr, sym: &str, ext: &str) -> Option<String> {
    let is_sym = |e: &Expr| matches!(&e.kind, ExprKind::Sym(s) if s == sym);
    match &d.kind {
        ExprKind::Sym(s) if s == sym => Some(ext.to_string()),
        ExprKind::Binary(BinOp::Mul, a, b) if is_sym(a) && b.as_int().is_some_and(|c| c != 0) => {
            Some(format!("({ext} / {})", b.as_int()?))
        }
        ExprKind::Binary(BinOp::Mul, a, b) if is_sym(b) && a.as_int().is_some_and(|c| c != 0) => {
            Some(format!("({ext} / {})", a.as_int()?))
        }
        ExprKind::Binary(BinOp::Add, a, b) if is_sym(a) => Some(format!("({ext} - {})", b.as_int()?)),
        ExprKind::Binary(BinOp::Sub, a, b) if is_sym(a) => Some(format!("({ext} + {})", b.as_int()?)),
        _ => None,
    }
}

/// The wrapper `.cpp` of one kernel (unassembled).
pub fn wrapper(f: &Function, unit: &str) -> Result<String, Diagnostic> {
    let params = param_kinds(f)?;
    let deferred = uses_deferred(f);
    let blocks = pld_codegen_pto::func::uses_block_ids(f);
    let mut s = String::new();
    let mut forward = Vec::new();
    let mut k = 0usize;
    let mut tensor_names = Vec::new();
    for (p, (name, kind)) in f.params.iter().zip(&params) {
        if let ParamKind::Tensor { dtype, .. } = kind {
            let ct = c_type(*dtype)
                .ok_or_else(|| unsupported(f.span, format_args!("a tensor of dtype {}", dtype.dsl_name())))?;
            s.push_str(&KernelTensorArgCpp { name, index: &k.to_string(), ctype: ct }.render());
            forward.push(name.clone());
            tensor_names.push((p.value, name.clone()));
            k += 1;
        }
    }
    for (name, kind) in &params {
        match kind {
            ParamKind::Scalar(d) => {
                let ct = c_type(*d)
                    .ok_or_else(|| unsupported(f.span, format_args!("a scalar of dtype {}", d.dsl_name())))?;
                s.push_str(&KernelScalarArgCpp { name, index: &k.to_string(), ctype: ct }.render());
                forward.push(name.clone());
                k += 1;
            }
            ParamKind::Ctx => {
                s.push_str(&KernelContextArgCpp { name, index: &k.to_string() }.render());
                forward.push(name.clone());
                k += 1;
            }
            ParamKind::Tensor { .. } => {}
        }
    }
    // Dynamic dims, in the `.pto` signature's first-seen order over the tensor parameters.
    let mut syms: Vec<String> = Vec::new();
    for (v, _) in &tensor_names {
        if let Some(t) = f.values.ty(*v).as_tensor_like() {
            for d in &t.shape {
                d.walk(&mut |e| {
                    if let ExprKind::Sym(x) = &e.kind {
                        if !syms.contains(x) {
                            syms.push(x.clone());
                        }
                    }
                });
            }
        }
    }
    for sym in &syms {
        let e = read_dynamic_dim(
            f,
            tensor_names.iter().map(|(v, tn)| (*v, tn.as_str())),
            |d, tn, i| invert(d, sym, &format!("static_cast<int64_t>({tn}_tensor->shapes[{i}])")),
            format_args!(
                "dynamic dim '{sym}' of kernel '{}' seen only in extents that cannot be inverted",
                f.name
            ),
        )?;
        let _ = writeln!(s, "int64_t {} = {e};", ident(sym));
        forward.push(ident(sym));
    }
    if deferred {
        forward.push("args".into());
    }
    if blocks {
        // The runtime's logical block identity (Simpler's `LocalContext`), never the CCE
        // built-ins, which it does not program.
        for (p, get) in pld_codegen_pto::func::BLOCK_ID_PARAMS.iter().zip(["get_block_idx", "get_block_num"])
        {
            let name = p.trim_start_matches('%');
            let _ = writeln!(s, "int32_t {name} = {get}(args);");
            forward.push(name.into());
        }
    }
    let mut includes = String::new();
    if deferred {
        includes.push_str("#if !__has_include(\"pto_async_kernel_api.h\")\n#error \"deferred completion needs the runtime's pto_async_kernel_api.h on the include path\"\n#endif\n#include \"pto_async_kernel_api.h\"\n");
    }
    if blocks || deferred {
        includes.push_str("#include \"intrinsic.h\"\n");
    }
    let adapter = if deferred { format!("{DEFERRED_COMPLETION}\n") } else { String::new() };
    Ok(KernelWrapperCpp {
        kernel: &f.name,
        unit,
        extra_includes: &includes,
        deferred_completion: &adapter,
        ptoas_sentinel: PTOAS_SENTINEL,
        unassembled: UNASSEMBLED,
        entry_sentinel: ENTRY_SENTINEL,
        unpack: &s,
        forward: &forward.join(", "),
    }
    .render())
}

/// The implementation of the `.pto` module's `pypto_register_counter_completion` declaration
/// (`runtime_artifacts.md` §5.4): registers the counter `counter_base + element_offset` to
/// complete the task once it reaches `expected` (`templates/deferred_completion.cpp`).
pub const DEFERRED_COMPLETION: &str = include_str!("../templates/deferred_completion.cpp");
