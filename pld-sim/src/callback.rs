//! Host callbacks: functions declared `@pl.function(level=pl.Level.HOST,
//! role=pl.Role.SubWorker)` whose body is ordinary Python, run for real by a
//! [`HostCallbacks`] implementation (`pld run` plugs in the `pld-py` bridge to the system
//! `python3`).
//!
//! Guarantees: a callback is a host-side fence — it runs after every dispatch the host issued
//! before it has finished on every rank, and nothing the host issues after it starts before it
//! returns (so it sees the data the program computed, and its writes are seen by what follows);
//! at the fence every rank's race-checker clock joins every other's. It receives copies of its
//! tensor arguments and only its `pl.Out`/`pl.InOut` tensors are written back, element for
//! element in the view's own layout. A call with no bridge configured, a callback that fails, or
//! one that returns tensors of another shape or dtype is a [`ReportKind::HostCallback`] fault
//! naming the callback and its declaration: never a silent skip, never zeros passed off as
//! results.

use crate::host::HostTensor;
use crate::report::{Fault, ReportKind};
use crate::value::{Mem, TRef, Val};
use crate::world::World;
use pld_ir::{Direction, Function, Program, Span};

/// One argument value of a host callback.
#[derive(Clone, Debug, PartialEq)]
pub enum CallbackArg {
    /// A tensor (a packed copy of the argument's elements).
    Tensor(HostTensor),
    /// An integer scalar.
    Int(i64),
    /// A floating-point scalar.
    Float(f64),
    /// A boolean scalar.
    Bool(bool),
}

/// One parameter of a host callback call.
#[derive(Clone, Debug, PartialEq)]
pub struct CallbackParam {
    /// Parameter name.
    pub name: String,
    /// Direction from the annotation (`pl.Out`, `pl.InOut`, plain = `In`).
    pub dir: Direction,
    /// The value; the bridge replaces the `Out`/`InOut` tensors with the results.
    pub value: CallbackArg,
}

/// One call of a host callback.
#[derive(Clone, Debug)]
pub struct HostCall {
    /// The callback's name.
    pub name: String,
    /// Its declaration (`def` line), to find its source and to report.
    pub span: Span,
    /// Arguments in parameter order.
    pub params: Vec<CallbackParam>,
}

/// Why a callback could not run, or failed.
#[derive(Clone, Debug, PartialEq)]
pub struct CallbackError {
    /// One line: what went wrong.
    pub message: String,
    /// Further lines (the missing module, the traceback's last lines, how to fix it).
    pub notes: Vec<String>,
}

/// Runs host callbacks. Implementations write the results into the `Out`/`InOut` tensors
/// of [`HostCall::params`] (same dtype and shape) and return warnings worth showing.
pub trait HostCallbacks: Send + Sync + std::fmt::Debug {
    /// Runs one call.
    fn call(&self, call: &mut HostCall) -> Result<Vec<String>, CallbackError>;
}

pub use pld_ir::results::is_host_callback;

/// What a call of callback `f` evaluates to: its `Out`/`InOut` arguments in order when it
/// declares that many results (`return out` is the reference's habit; the rule is
/// `pld_ir::results`), else nothing.
pub fn call_result(program: &Program, f: &Function, args: &[Val], span: Span) -> Result<Val, Fault> {
    let outs = f.params.iter().filter(|p| p.dir != Direction::In).count();
    let result =
        |k: usize| program.returned_param(f, k).and_then(|i| args.get(i).cloned()).unwrap_or(Val::Unit);
    match (f.ret.len(), outs) {
        (0, _) => Ok(Val::Unit),
        (1, 1) => Ok(result(0)),
        (r, o) if r == o => Ok(Val::Tuple((0..r).map(result).collect())),
        (r, o) => Err(Fault::new(
            ReportKind::HostCallback,
            span,
            format!(
                "host callback '{}' declares {r} result(s) but has {o} Out/InOut parameter(s)",
                f.name
            ),
        )
        .note("a callback's results come back only through its pl.Out / pl.InOut tensors (write `out[:] = ...`; `return out`)")),
    }
}

/// Runs callback `f` on `args` through `hooks` after the fence, writing its `Out`/`InOut`
/// tensors back; returns the bridge's warnings.
pub fn run(
    world: &mut World,
    f: &Function,
    args: &[Val],
    span: Span,
    hooks: Option<&dyn HostCallbacks>,
) -> Result<Vec<String>, Fault> {
    let fail = |msg: String| Fault::new(ReportKind::HostCallback, f.span, msg).note_at("called at", span);
    let Some(hooks) = hooks else {
        return Err(fail(format!("host callback '{}' cannot run: this run has no Python bridge", f.name))
            .note("`pld run` runs host callbacks through the system python3; a library caller sets SimConfig::host_callbacks"));
    };
    world.host_fence();
    let mut call = HostCall { name: f.name.clone(), span: f.span, params: Vec::new() };
    let mut views = Vec::new();
    for (p, a) in f.params.iter().zip(args) {
        let name = f.values.name(p.value).to_string();
        let value = match a {
            Val::Tensor(t) => {
                let h = gather(world, t)
                    .map_err(|why| fail(format!("host callback '{}': argument `{name}` {why}", f.name)))?;
                views.push((call.params.len(), t.clone()));
                CallbackArg::Tensor(h)
            }
            Val::Int(v) => CallbackArg::Int(*v),
            Val::Float(v) => CallbackArg::Float(*v),
            Val::Bool(v) => CallbackArg::Bool(*v),
            other => {
                return Err(fail(format!(
                    "host callback '{}': argument `{name}` ({}) cannot be passed to Python",
                    f.name,
                    other.kind()
                )))
            }
        };
        call.params.push(CallbackParam { name, dir: p.dir, value });
    }
    let warnings = hooks.call(&mut call).map_err(|e| {
        let prefix = format!("host callback '{}' ", f.name);
        let msg = match e.message.strip_prefix(&prefix) {
            Some(rest) => format!("'{}' {rest}", f.name),
            None => format!("'{}': {}", f.name, e.message),
        };
        let mut fault = fail(msg);
        for n in e.notes {
            fault = fault.note(n);
        }
        fault
    })?;
    for (i, view) in views {
        let p = &call.params[i];
        if p.dir == Direction::In {
            continue;
        }
        let CallbackArg::Tensor(h) = &p.value else {
            return Err(fail(format!("host callback '{}': result `{}` is not a tensor", f.name, p.name)));
        };
        let want: Vec<usize> = view.shape.iter().map(|&d| d.max(0) as usize).collect();
        if h.dtype != view.dtype || h.shape != want || h.data.len() != h.numel() * h.dtype.bytes() as usize {
            return Err(fail(format!(
                "host callback '{}': result `{}` is {} {:?}, the parameter is {} {:?}",
                f.name, p.name, h.dtype, h.shape, view.dtype, want
            )));
        }
        scatter(world, &view, &h.data);
    }
    Ok(warnings)
}

/// Byte offsets (from the buffer start) of every element of `t`, row-major.
fn element_offsets(t: &TRef) -> Vec<usize> {
    let eb = t.dtype.bytes() as i64;
    let numel = t.numel().max(0) as usize;
    let mut out = Vec::with_capacity(numel);
    let mut idx = vec![0i64; t.shape.len()];
    for _ in 0..numel {
        let e: i64 = idx.iter().zip(&t.strides).map(|(i, s)| i * s).sum();
        out.push((t.base as i64 + e * eb) as usize);
        for d in (0..idx.len()).rev() {
            idx[d] += 1;
            if idx[d] < t.shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

/// A packed copy of host tensor view `t`, or why it cannot be passed.
fn gather(world: &World, t: &TRef) -> Result<HostTensor, &'static str> {
    let Mem::Host(buf) = t.mem else { return Err("is a window buffer; a callback takes host tensors") };
    let cell = world.host_cell(buf).ok_or("has no host buffer")?;
    let mut bytes = cell.lock().unwrap_or_else(|e| e.into_inner());
    bytes.ready_all();
    let eb = t.dtype.bytes() as usize;
    let mut data = Vec::with_capacity(t.numel().max(0) as usize * eb);
    for off in element_offsets(t) {
        data.extend_from_slice(bytes.get(off..off + eb).ok_or("reaches past the end of its host buffer")?);
    }
    Ok(HostTensor { dtype: t.dtype, shape: t.shape.iter().map(|&d| d.max(0) as usize).collect(), data })
}

/// Writes packed `data` into host tensor view `t`.
fn scatter(world: &World, t: &TRef, data: &[u8]) {
    let Mem::Host(buf) = t.mem else { return };
    let Some(cell) = world.host_cell(buf) else { return };
    let mut bytes = cell.lock().unwrap_or_else(|e| e.into_inner());
    bytes.ready_all();
    let eb = t.dtype.bytes() as usize;
    for (k, off) in element_offsets(t).into_iter().enumerate() {
        if let (Some(dst), Some(src)) = (bytes.get_mut(off..off + eb), data.get(k * eb..(k + 1) * eb)) {
            dst.copy_from_slice(src);
        }
    }
}
