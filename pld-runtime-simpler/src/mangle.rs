//! Kernel names the runtime directory cannot spell: a kernel named like a C++ keyword (or a
//! name the generated C++ reserves, [`crate::is_reserved`]) is renamed before emission, so
//! ptoas' C++ function, the wrapper that calls it, its file name, its `KERNELS` entry and the
//! `.pto` module all use one legal name.
//!
//! Guarantees: the renaming is deterministic — kernels are visited in program order and
//! `<name>` becomes `<name>_k`, or `<name>_k2`, `<name>_k3`, … when that name is already a
//! function of the program or was given to an earlier kernel (never a collision); every call
//! (`Callee::Func`) of a renamed kernel is renamed with it; no other function is touched (chip
//! orchestrators name only directories and `callables[…]` keys, host callbacks name Python
//! modules). A program with nothing to rename is returned as `None` (emitted unchanged).

use crate::is_reserved;
use pld_ir::{Callee, ExprKind, Program};
use std::collections::{HashMap, HashSet};

/// The program with every reserved kernel name mangled, or `None` when there is none.
pub fn mangle_kernel_names(program: &Program) -> Option<Program> {
    let mut taken: HashSet<String> = program.functions.iter().map(|f| f.name.clone()).collect();
    let mut renames: HashMap<String, String> = HashMap::new();
    for f in &program.functions {
        if !pld_codegen_pto::is_kernel(f.kind) || !is_reserved(&f.name) {
            continue;
        }
        let new = (1..)
            .map(|i| if i == 1 { format!("{}_k", f.name) } else { format!("{}_k{i}", f.name) })
            .find(|n| !taken.contains(n))
            .expect("an unbounded range has a free name");
        taken.insert(new.clone());
        renames.insert(f.name.clone(), new);
    }
    if renames.is_empty() {
        return None;
    }
    let mut out = program.clone();
    for f in &mut out.functions {
        if let Some(n) = renames.get(&f.name) {
            f.name.clone_from(n);
        }
        f.body.walk_mut(&mut |s| {
            s.for_each_expr_mut(&mut |e| {
                e.walk_mut(&mut |e| {
                    if let ExprKind::Call(c) = &mut e.kind {
                        if let Callee::Func(name) = &mut c.callee {
                            if let Some(n) = renames.get(name.as_str()) {
                                name.clone_from(n);
                            }
                        }
                    }
                })
            })
        });
    }
    Some(out)
}
