//! Builtin collective variants (`next_levels/<variant>/`, `runtime_artifacts.md` §6),
//! rendered from pld's own lowerings ([`pld_codegen_pto::builtin`]).
//!
//! Guarantees:
//! - The directory name is the variant string the host uses as its `callables[…]` key; the
//!   orchestration is `orchestration/<entry>.cpp`, the kernel `kernels/aiv/<entry>_kernel.cpp`
//!   (func id 0) and its unit `ptoas/<entry>_kernel.pto`.
//! - The orchestration reads the host's dispatch exactly as §6.2 lays it out: tensors
//!   `0..k-1` are the window arguments (tensor `k`, the ordering token, is never read),
//!   `scalar(0)` the domain size, `scalar(1)` the CommContext address and, for the mesh
//!   allreduce, `scalar(2)` the core count; `expected_arg_count` is `k + 2` (`+ 1`). The task
//!   adds the window tensors with the kernel's directions, then the CommContext once per
//!   window argument (pld's kernel takes one per window, all of one domain); a multi-core
//!   mesh allreduce launches `core_num` blocks with a synchronous start.

use crate::chip::Core;
use crate::kernel::{kernel_config, module_text, tensor_signature, wrapper, ConfigKernel};
use crate::{param_kinds, ParamKind, RuntimeOptions};
use pld_codegen_pto::CodegenOptions;
use pld_ir::{Call, Diagnostic, Direction, Function, Program};
use std::fmt::Write as _;

/// One builtin variant.
#[derive(Clone, Debug)]
pub struct Variant {
    /// The variant name (`builtin.tensor.allreduce__sum__fp32`).
    pub variant: String,
    /// Its op (`builtin.tensor.allreduce`).
    pub op: String,
    /// The rendered kernel.
    pub kernel: Function,
    /// The core count the host passes (mesh allreduce only).
    pub core_num: i64,
}

impl Variant {
    /// The entry symbol.
    pub fn entry(&self) -> String {
        pld_codegen_pto::builtin::entry_symbol(&self.variant)
    }

    /// The kernel name (`<entry>_kernel`).
    pub fn kernel_name(&self) -> String {
        format!("{}_kernel", self.entry())
    }

    /// Whether the host passes a core count (the mesh allreduce).
    pub fn takes_core_num(&self) -> bool {
        pld_codegen_pto::emit::builtin_variant::takes_core_num(&self.op)
    }

    /// The number of window arguments.
    pub fn windows(&self) -> Result<Vec<Direction>, Diagnostic> {
        tensor_signature(&self.kernel)
    }
}

/// Every builtin variant the program dispatches, in variant order.
pub fn variants(program: &Program, opts: &CodegenOptions) -> Result<Vec<Variant>, Diagnostic> {
    let (calls, diags) = pld_codegen_pto::builtin::builtin_calls(program, opts);
    if let Some(d) = diags.into_iter().next() {
        return Err(d);
    }
    let mut out = Vec::new();
    for (variant, (host, call)) in calls {
        let kernel = pld_codegen_pto::builtin::render(&variant, host, &call, opts)?;
        out.push(Variant { variant, op: call.callee.name().to_string(), core_num: core_num(&call), kernel });
    }
    Ok(out)
}

fn core_num(c: &Call) -> i64 {
    c.attr_int("core_num").unwrap_or(1).max(1)
}

/// The files of one variant directory.
pub fn render(
    program: &Program,
    v: &Variant,
    opts: &RuntimeOptions,
    modules: &[(String, String)],
) -> Result<Vec<(String, String)>, Diagnostic> {
    let _ = program;
    let entry = v.entry();
    let kname = v.kernel_name();
    let dirs = v.windows()?;
    let mut files = vec![
        (format!("ptoas/{kname}.pto"), module_text(modules, &kname, &v.kernel)?),
        (format!("kernels/aiv/{kname}.cpp"), wrapper(&v.kernel, &kname)?),
        (
            "kernel_config.py".to_string(),
            kernel_config(
                &entry,
                &dirs,
                &[ConfigKernel { func_id: 0, name: kname.clone(), core: Core::Aiv, signature: dirs.clone() }],
            ),
        ),
    ];
    let ctxs = param_kinds(&v.kernel)?.iter().filter(|(_, k)| matches!(k, ParamKind::Ctx)).count();
    let k = dirs.len();
    let expected = k + 2 + usize::from(v.takes_core_num());
    let mut windows = String::new();
    let mut args = String::new();
    for (i, d) in dirs.iter().enumerate() {
        let add = match d {
            Direction::In => "add_input",
            _ => "add_inout",
        };
        let _ = writeln!(windows, "const ChipTensor& window_{i} = orch_args.tensor({i}).ref();");
        let _ = writeln!(args, "params.{add}(window_{i});");
    }
    for _ in 0..ctxs {
        args.push_str("params.add_scalar(device_ctx);\n");
    }
    let (core_num_param, launch) = if v.takes_core_num() {
        (
            "int16_t core_num = static_cast<int16_t>(orch_args.scalar(2));".to_string(),
            format!(
                "if (core_num > 1) {{\n    params.launch_spec.{}(core_num);\n    params.launch_spec.set_require_sync_start(true);\n}}",
                opts.core_count_method()
            ),
        )
    } else {
        (String::new(), String::new())
    };
    let s = VariantOrchestrationCpp {
        variant: &v.variant,
        prelude: &crate::chip::OrchestrationPrelude { expected_arg_count: &expected.to_string() }.render(),
        windows: &windows,
        token: &k.to_string(),
        core_num_param: &core_num_param,
        args: &args,
        launch: &launch,
        entry: &entry,
    }
    .render();
    files.push((format!("orchestration/{entry}.cpp"), s));
    Ok(files)
}

crate::template::template! {
    /// `templates/variant_orchestration.cpp`: a builtin variant's orchestration source.
    pub struct VariantOrchestrationCpp = "variant_orchestration.cpp" {
        /// The variant's name.
        variant,
        /// The includes and the config function (window tensors + ordering token + scalars).
        prelude,
        /// The window tensors' references.
        windows,
        /// The ordering token's tensor index.
        token,
        /// The core-count scalar, for a variant that takes one.
        core_num_param,
        /// The task's arguments.
        args,
        /// The launch spec, for a variant that takes a core count.
        launch,
        /// The variant's entry symbol.
        entry,
    }
}

/// This module's templates, for the hole checks of [`crate::template`].
#[cfg(test)]
pub(crate) fn all_templates() -> Vec<(&'static str, &'static str, &'static [&'static str])> {
    vec![(VariantOrchestrationCpp::FILE, VariantOrchestrationCpp::TEXT, VariantOrchestrationCpp::HOLES)]
}
