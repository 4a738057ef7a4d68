//! The crate's entry points: a run ([`run`]), one process of a distributed run
//! ([`run_distributed`]) and a persistent worker's calls ([`Persistent`]) — each binds the
//! entry function's parameters from the inputs and bindings, builds the world and hands it to
//! the scheduler ([`crate::sched`]), then takes the outputs, stats, trace and modeled times.
//!
//! Guarantees: a run that cannot start (bad rank count, unknown entry, unbound dimension,
//! missing or mistyped input) is [`SimError::Invalid`] before anything runs; a fault is
//! [`SimError::Fault`] with its report rendered against the configured sources; outputs take
//! their buffers' bytes once the run is over.

use crate::config::{Schedule, SimConfig};
use crate::host::{HostTensor, Inputs};
use crate::report::{Fault, ParkedCore, Report};
use crate::value::{Mem, TRef, Val};
use crate::world::Stats;
use crate::{elem, limits, sched, sem, timeline, trace, world};
use pld_ir::{DataType, Diagnostic, Diagnostics, Program, Span, Type};
use std::collections::HashMap;

/// A successful run.
#[derive(Clone, Debug)]
pub struct SimOutcome {
    /// Out/InOut host parameters after the run.
    pub outputs: HashMap<String, HostTensor>,
    /// Accounting.
    pub stats: Stats,
    /// Chrome trace JSON, when requested.
    pub trace: Option<String>,
    /// Warnings that did not stop the run (counter wrap-around; undefined-byte reads with
    /// `allow_uninit_reads`).
    pub warnings: Vec<String>,
    /// Modeled time: per rank, per collective call ([`timeline`]).
    pub timing: timeline::Timing,
}

/// Why a run failed.
#[derive(Clone, Debug)]
pub enum SimError {
    /// The program ran and broke a rule (deadlock, race, bounds, …).
    Fault(Report),
    /// The run could not start (bad entry, missing inputs, bad configuration).
    Invalid(Diagnostics),
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Fault(r) => write!(f, "{r}"),
            SimError::Invalid(d) => {
                for x in d.iter() {
                    writeln!(f, "error: {}", x.message)?;
                }
                Ok(())
            }
        }
    }
}

pub(crate) fn invalid(msg: impl Into<String>) -> SimError {
    let mut d = Diagnostics::new();
    d.push(Diagnostic::error(Span::DUMMY, msg));
    SimError::Invalid(d)
}

/// The value of a dim expression (literals, bound symbols, integer arithmetic).
fn eval_dim(e: &pld_ir::Expr, syms: &HashMap<String, i64>) -> Option<i64> {
    match &e.kind {
        pld_ir::ExprKind::Int(v) => Some(*v),
        pld_ir::ExprKind::Sym(s) => syms.get(s).copied(),
        pld_ir::ExprKind::Binary(op, a, b) => op.fold_int(eval_dim(a, syms)?, eval_dim(b, syms)?),
        pld_ir::ExprKind::Unary(pld_ir::UnOp::Neg, a) => eval_dim(a, syms)?.checked_neg(),
        _ => None,
    }
}

fn unify(dims: &[pld_ir::Expr], actual: &[usize], syms: &mut HashMap<String, i64>) {
    for (d, &a) in dims.iter().zip(actual) {
        if let pld_ir::ExprKind::Sym(s) = &d.kind {
            syms.entry(s.clone()).or_insert(a as i64);
        }
    }
}

/// Runs `entry` of `program` on `cfg.nranks` ranks with `inputs` bound to its parameters.
pub fn run(program: &Program, entry: &str, inputs: &Inputs, cfg: &SimConfig) -> Result<SimOutcome, SimError> {
    run_in(None, None, program, entry, inputs, cfg).map(|(o, _)| o)
}

/// The byte spans `[lo, hi)` of each output that this process's rank wrote (a distributed
/// run's outputs hold only those; the engine merges every rank's).
pub type OutputWrites = HashMap<String, Vec<(usize, usize)>>;

/// What a distributed run's process knows only about its own rank, for the engine to merge.
#[derive(Clone, Debug, Default)]
pub struct RankShare {
    /// The output byte spans this rank wrote.
    pub writes: OutputWrites,
    /// This rank's collective calls ([`timeline::collective_times`] groups every rank's).
    pub collective_runs: Vec<timeline::CollectiveRun>,
}

/// Runs `entry` as one process of a distributed run: the host orchestrator runs here as on
/// every process, but only the device work of global rank `backend.rank()`, its window bytes
/// behind `backend` ([`world::WindowBackend`]). Race and undefined-byte checks need every
/// rank's accesses in one place and are off. A deadlock report holds this rank's waits only
/// (see [`deadlock_report`] to merge them).
pub fn run_distributed(
    program: &Program,
    entry: &str,
    inputs: &Inputs,
    cfg: &SimConfig,
    backend: std::sync::Arc<dyn world::WindowBackend>,
) -> Result<(SimOutcome, RankShare), SimError> {
    if cfg.schedule == Schedule::Parallel {
        return Err(invalid(
            "a distributed run is one rank per process: the parallel schedule is in-process only",
        ));
    }
    run_in(None, Some(backend), program, entry, inputs, cfg)
}

/// The deadlock report of a distributed run from every rank's parked waits (in rank order):
/// the report the in-process engine gives for the same waits.
pub fn deadlock_report(parked: Vec<ParkedCore>, cfg: &SimConfig) -> Report {
    let mut live: Vec<usize> = parked.iter().map(|p| p.rank).collect();
    live.dedup();
    sched::deadlock_fault(parked, &live, cfg.nranks, cfg).render(cfg.sources.as_ref())
}

/// A persistent worker: comm-domain windows are allocated by the first call and kept for
/// the following ones (pypto `prepare(persistent=True)`); with `reset` every named buffer is
/// zeroed before each later call (`reset_persistent_windows=True`), otherwise the previous
/// contents — signals included — survive.
pub struct Persistent {
    world: Option<world::World>,
    reset: bool,
}

impl Persistent {
    /// A worker that has not run yet.
    pub fn new(reset: bool) -> Persistent {
        Persistent { world: None, reset }
    }

    /// Runs one call (the program, entry and rank count must stay the same across calls).
    pub fn call(
        &mut self,
        program: &Program,
        entry: &str,
        inputs: &Inputs,
        cfg: &SimConfig,
    ) -> Result<SimOutcome, SimError> {
        if let Some(w) = &mut self.world {
            if w.nranks() != cfg.nranks {
                return Err(invalid(format!(
                    "persistent worker has {} ranks, call asks for {}",
                    w.nranks(),
                    cfg.nranks
                )));
            }
            w.next_call(self.reset);
        }
        run_in(Some(&mut self.world), None, program, entry, inputs, cfg).map(|(o, _)| o)
    }
}

/// A host tensor parameter's argument: its shape from the bindings (or its input), its bytes
/// reserved against the memory cap, filled from its input (or zeroed for an output), and
/// recorded in `outs` when the run writes it back.
fn host_tensor_arg(
    world: &mut world::World,
    (func, p, name): (&pld_ir::Function, &pld_ir::Param, String),
    t: &pld_ir::TensorType,
    inputs: &Inputs,
    (syms, from): (&HashMap<String, i64>, &HashMap<String, String>),
    cfg: &SimConfig,
    outs: &mut Vec<(String, usize, DataType, Vec<i64>)>,
) -> Result<Val, SimError> {
    let shape: Vec<i64> = t
        .shape
        .iter()
        .map(|d| eval_dim(d, syms))
        .collect::<Option<_>>()
        .or_else(|| inputs.get(&name).map(|h| h.shape.iter().map(|&x| x as i64).collect()))
        .or_else(|| cfg.lazy_inputs.get(&name).map(|h| h.shape.iter().map(|&x| x as i64).collect()))
        .ok_or_else(|| invalid(format!("cannot determine the shape of parameter '{name}'")))?;
    if !elem::supported(t.dtype) {
        return Err(invalid(format!(
            "parameter '{name}' has dtype {} which the simulator does not support",
            t.dtype
        )));
    }
    let shape_span =
        t.shape.iter().map(|d| d.span).filter(|s| !s.is_dummy()).reduce(Span::to).unwrap_or(func.span);
    let size = limits::byte_size(t.dtype, &shape).map_err(|m| {
        SimError::Fault(
            Fault::runtime(shape_span, format!("parameter '{name}': {m}")).render(cfg.sources.as_ref()),
        )
    })?;
    world
        .reserve_host(size, &format!("host tensor '{name}'"))
        .map_err(|f| SimError::Fault(f.at(shape_span).render(cfg.sources.as_ref())))?;
    let lazy = cfg.lazy_inputs.get(&name).filter(|_| !inputs.contains_key(&name));
    let given = inputs.get(&name).map(|h| (h.dtype, &h.shape)).or(lazy.map(|l| (l.dtype, &l.shape)));
    if let Some((dtype, given_shape)) = given {
        if dtype != t.dtype || given_shape.iter().map(|&x| x as i64).collect::<Vec<_>>() != shape {
            return Err(invalid(format!(
                "input '{name}' is {dtype} {given_shape:?} but the parameter is {} {:?}",
                t.dtype, shape
            )));
        }
    }
    let buf = match (inputs.get(&name), lazy) {
        (Some(h), _) => world.host_buffer(h.data.clone()),
        // A distributed process fills only what it touches; in-process, every byte now.
        (None, Some(l)) if world.distributed_rank().is_some() => {
            world.host_lazy(size as usize, l.source.clone())
        }
        (None, Some(l)) => world.host_buffer(l.materialize().data),
        (None, None) if p.dir != pld_ir::Direction::In => world.host_buffer(vec![0u8; size as usize]),
        (None, None) => return Err(invalid(format!("missing input '{name}'"))),
    };
    let dims = t
        .shape
        .iter()
        .map(|d| match &d.kind {
            pld_ir::ExprKind::Sym(s) => Some(world::DimBinding {
                name: s.clone(),
                value: *syms.get(s)?,
                from: from.get(s).cloned().unwrap_or_else(|| "the run".to_string()),
            }),
            _ => None,
        })
        .collect();
    world.label_host(buf, &name, dims);
    let tref = TRef {
        mem: Mem::Host(buf),
        owner: 0,
        base: 0,
        strides: TRef::packed_strides(&shape),
        shape: shape.as_slice().into(),
        dtype: t.dtype,
    };
    if p.dir != pld_ir::Direction::In {
        outs.push((name, buf, t.dtype, shape));
    }
    Ok(Val::tensor(tref))
}

fn run_in(
    keep: Option<&mut Option<world::World>>,
    backend: Option<std::sync::Arc<dyn world::WindowBackend>>,
    program: &Program,
    entry: &str,
    inputs: &Inputs,
    cfg: &SimConfig,
) -> Result<(SimOutcome, RankShare), SimError> {
    if !(1..=64).contains(&cfg.nranks) {
        return Err(invalid(format!("rank count {} is outside 1..=64", cfg.nranks)));
    }
    if let Some(d) = sem::duplicates().first() {
        return Err(invalid(d.clone()));
    }
    let Some(func) = program.function(entry) else {
        return Err(invalid(format!("entry function '{entry}' is not in the program")));
    };
    // Symbolic dims by the one rule `pld run` applies (D-cli-10): explicit bindings, the
    // rank count for the dims the program uses as one, then input shapes; still unbound is
    // an error. `from` says where each value came from, for bounds reports on host tensors.
    let mut syms = cfg.bindings.clone();
    let mut from: HashMap<String, String> =
        cfg.bindings.iter().map(|(k, v)| (k.clone(), format!("the binding {k}={v}"))).collect();
    from.extend(cfg.binding_sources.iter().map(|(k, v)| (k.clone(), v.clone())));
    for s in program.bind_rank_counts(cfg.nranks as i64, &mut syms) {
        from.insert(s.clone(), pld_ir::rank_count::rank_count_source(&s));
    }
    for p in &func.params {
        let name = func.values.name(p.value);
        let given = inputs.get(name).map(|h| &h.shape).or(cfg.lazy_inputs.get(name).map(|l| &l.shape));
        if let (Some(t), Some(shape)) = (func.values.ty(p.value).as_tensor_like(), given) {
            unify(&t.shape, shape, &mut syms);
            for d in &t.shape {
                if let pld_ir::ExprKind::Sym(s) = &d.kind {
                    from.entry(s.clone()).or_insert_with(|| format!("the shape of input '{name}'"));
                }
            }
        }
    }
    let unbound = program.unbound_dims(&syms);
    if !unbound.is_empty() {
        return Err(invalid(pld_ir::rank_count::unbound_dims_message(&unbound)));
    }
    let (mut world, keep) = match keep {
        Some(slot) => match slot.take() {
            Some(w) => (w, Some(slot)),
            None => (world::World::new(cfg.nranks), Some(slot)),
        },
        None => (world::World::new(cfg.nranks), None),
    };
    let checks = world::Checks {
        races: cfg.check_races,
        fences: cfg.check_fences,
        allow_uninit_reads: cfg.allow_uninit_reads,
    };
    world.begin_run(cfg.max_memory, checks);
    world.set_protocol_grain(cfg.protocol_grain);
    if let Some(b) = backend {
        // A distributed run checks no races (see `World::set_backend`).
        world.set_backend(b);
    }
    world.ensure_world_domain();
    let mut args = Vec::new();
    let mut outs = Vec::new();
    for p in &func.params {
        let name = func.values.name(p.value).to_string();
        let ty = func.values.ty(p.value);
        match ty {
            Type::Tensor(t) => {
                args.push(host_tensor_arg(
                    &mut world,
                    (func, p, name),
                    t,
                    inputs,
                    (&syms, &from),
                    cfg,
                    &mut outs,
                )?);
            }
            Type::Scalar(dt) => {
                let v = inputs.get(&name).and_then(|h| h.to_f64().first().copied());
                let Some(v) = v.or_else(|| syms.get(&name).map(|&x| x as f64)) else {
                    return Err(invalid(format!("missing scalar input '{name}'")));
                };
                args.push(if dt.is_float() { Val::Float(v) } else { Val::Int(v as i64) });
            }
            other => {
                return Err(invalid(format!(
                    "parameter '{name}' of type {other} cannot be given from the host"
                )))
            }
        }
    }
    let mut sched = sched::Sched::new(program, cfg, syms);
    let result = match sched.run(&mut world, func, args) {
        // A wait that an earlier generation's credit passed on a self-clearing signal came
        // before (and usually causes) whatever fault followed: it is the report.
        Err(f) => Err(world.generation_check().err().unwrap_or(f)),
        Ok(()) => Ok(()),
    };
    let world_rank = world.distributed_rank();
    let (result, world::RunEnd { stats, warnings, host }) = world.end_run(result);
    let mut writes = OutputWrites::new();
    for &(buf, lo, hi) in world.host_writes() {
        if let Some((name, ..)) = outs.iter().find(|o| o.1 == buf) {
            writes.entry(name.clone()).or_default().push((lo, hi));
        }
    }
    if let Some(slot) = keep {
        *slot = Some(world);
    }
    if let Err(f) = result {
        return Err(SimError::Fault(f.render(cfg.sources.as_ref())));
    }
    // The run is over and `host` is ours: each output takes its buffer's bytes (a copy would
    // hold every output twice at the end of the run). A distributed process other than rank
    // 0 hands on only the bytes it wrote, so a lazy buffer's untouched chunks stay unfilled.
    let rest_unfilled = world_rank.is_some_and(|r| r != 0);
    let outputs = outs
        .into_iter()
        .map(|(name, buf, dtype, shape)| {
            let data = host
                .get(buf)
                .map(|h| std::mem::take(&mut *h.lock().unwrap_or_else(|e| e.into_inner())))
                .map(|h| if rest_unfilled { h.into_unfilled() } else { h.into_bytes() })
                .unwrap_or_default();
            (name, HostTensor { dtype, shape: shape.iter().map(|&x| x as usize).collect(), data })
        })
        .collect();
    let trace = cfg.trace.then(|| trace::chrome_trace(&sched.rec, cfg.cores_per_rank, cfg.sources.as_ref()));
    let timing = timeline::Timing {
        rank_ps: sched.rank_times(),
        collectives: timeline::collective_times(&sched.rec.collectives),
        model: cfg.cost.describe(),
    };
    let share = RankShare { writes, collective_runs: std::mem::take(&mut sched.rec.collectives) };
    Ok((SimOutcome { outputs, stats, trace, warnings, timing }, share))
}
