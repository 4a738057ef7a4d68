//! The host orchestrator's templates (`templates/host_*.py`): the file, a comm domain's
//! header, and the statements of each kind of dispatch, in the argument order the runtime
//! reads (`runtime_artifacts.md` §6, §7): a chip task adds its tensors, then one ordering token
//! per comm domain it touches, then its scalars; a builtin task its windows, its domain's
//! token, the domain size, the device context and the core count when the variant takes one.

crate::template::template! {
    /// `templates/host_orch.py`: the host orchestrator.
    pub struct HostOrchPy = "host_orch.py" {
        /// `_alloc_intermediates`' body: hoisted tensors and ordering tokens.
        intermediates,
        /// The entry's Python name.
        entry,
        /// The entry's body.
        body,
    }
}

crate::template::template! {
    /// `templates/host_domain.py`: the `with` header opening one comm domain.
    pub struct HostDomainPy = "host_domain.py" {
        /// The domain's name as a Python string literal.
        name,
        /// The domain's workers (a Python list).
        workers,
        /// The window size expression (the sum of the buffers' `nbytes`).
        window_size,
        /// One `CommBufferSpec(…),` per window buffer, in declaration order.
        buffers,
        /// The domain's name (its handle is `__<domain>`).
        domain,
    }
}

crate::template::template! {
    /// `templates/host_chip_task.py`: a chip dispatch.
    pub struct HostChipTaskPy = "host_chip_task.py" {
        /// The task arguments' variable.
        args,
        /// The `add_tensor` lines of the chip's tensors, in parameter order.
        tensors,
        /// The `add_tensor` lines of the ordering tokens, one per domain touched.
        tokens,
        /// The `add_scalar` lines.
        scalars,
        /// The chip callable's name as a Python string literal.
        chip,
        /// The worker expression (`None`: round robin).
        worker,
    }
}

crate::template::template! {
    /// `templates/host_builtin_task.py`: a builtin collective dispatch (§6.2).
    pub struct HostBuiltinTaskPy = "host_builtin_task.py" {
        /// The task arguments' variable.
        args,
        /// The `add_tensor` lines of the window arguments.
        windows,
        /// The comm domain.
        domain,
        /// The rank expression (`device=`).
        rank,
        /// The core-count `add_scalar` line, for a variant that takes one.
        core_num,
        /// The variant's name as a Python string literal.
        variant,
    }
}

crate::template::template! {
    /// `templates/host_sub_task.py`: a host callback dispatch.
    pub struct HostSubTaskPy = "host_sub_task.py" {
        /// The task arguments' variable.
        args,
        /// The `add_tensor` lines, in parameter order.
        tensors,
        /// The `add_scalar` lines.
        scalars,
        /// The callback's name as a Python string literal.
        callback,
    }
}

/// This module's templates, for the hole checks of [`crate::template`].
#[cfg(test)]
pub(crate) fn all_templates() -> Vec<(&'static str, &'static str, &'static [&'static str])> {
    vec![
        (HostOrchPy::FILE, HostOrchPy::TEXT, HostOrchPy::HOLES),
        (HostDomainPy::FILE, HostDomainPy::TEXT, HostDomainPy::HOLES),
        (HostChipTaskPy::FILE, HostChipTaskPy::TEXT, HostChipTaskPy::HOLES),
        (HostBuiltinTaskPy::FILE, HostBuiltinTaskPy::TEXT, HostBuiltinTaskPy::HOLES),
        (HostSubTaskPy::FILE, HostSubTaskPy::TEXT, HostSubTaskPy::HOLES),
    ]
}
