//! `pld run FILE.py`: compile and execute a program on the simulator.
//!
//! Picks the single host function unless `--entry` names one, binds dynamic dims from
//! `--ranks` and the input shapes, fills inputs that are not given deterministically from
//! `--seed` (and writes them to `DIR/inputs/NAME.npy`), writes every Out/InOut parameter to
//! `DIR/NAME.npy`, and prints a summary. A simulator fault exits 3 with its report.

use crate::driver::{self, Failure};
use crate::npy;
use crate::run_json::{CollectiveJson, OutputJson, RunJson};
use crate::select::{self, Selection};
use clap::Args;
use pld_ir::{Direction, ExprKind, FunctionKind, Program, Type};
use pld_sim::lazy::LazyInput;
use pld_sim::{HostTensor, Inputs, Schedule, SimConfig};
use std::collections::HashMap;
use std::path::PathBuf;

/// Arguments of `pld run`.
#[derive(Args, Clone)]
pub struct RunArgs {
    /// The DSL program.
    file: PathBuf,
    /// The host function to run (default: the only one); in a file of several programs it
    /// also selects the program whose host function it is.
    #[arg(long)]
    entry: Option<String>,
    /// Number of simulated ranks, 1 to 64: the runtime's CommContext holds at most 64 peers
    /// (COMM_MAX_RANK_NUM).
    #[arg(long, default_value_t = 2)]
    pub(crate) ranks: usize,
    /// An input tensor: NAME=PATH.npy (repeatable).
    #[arg(long = "input", value_name = "NAME=PATH.npy")]
    inputs: Vec<String>,
    /// Seed for inputs that are not given.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output folder.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Interleaving: det, random:SEED, pct:SEED (replays one `pld verify` schedule), parallel
    /// (ranks on worker threads: one, or one per core while that runs faster), or replay:PATH
    /// (the picks `pld verify --exhaustive` wrote for a refuting execution).
    #[arg(long, default_value = "det", value_parser = crate::replay::parse_schedule)]
    pub(crate) schedule: crate::replay::ScheduleArg,
    /// Simulated cores per rank (kernels running at once); 48 as on A2/A3 hardware.
    #[arg(long, default_value_t = 48)]
    cores: usize,
    /// Write a Chrome/Perfetto trace here.
    #[arg(long, value_name = "PATH.json")]
    pub(crate) trace: Option<PathBuf>,
    /// Keep every trace slice (by default short plain slices on a core are aggregated).
    #[arg(long = "trace-all")]
    pub(crate) trace_all: bool,
    /// Overrides a cost-model parameter of modeled time: KEY=VALUE (repeatable; keys
    /// alpha_ns, link_gbps, hbm_gbps, notify_ns, poll_ns, op_ns, launch_ns).
    #[arg(long = "cost", value_name = "KEY=VALUE")]
    cost: Vec<String>,
    /// Write the run's verdict as JSON here: `{"ok":true,...}` or the fault report (kind,
    /// message, location, rank, core, kernel, notes, text; a deadlock's wait-for graph).
    #[arg(long = "report-json", value_name = "PATH.json")]
    pub(crate) report_json: Option<PathBuf>,
    /// Target profile.
    #[arg(long, default_value = "a2a3", value_parser = driver::parse_target)]
    target: pld_ir::Target,
    /// The program to use when the file defines several (`@pl.program` class or host entry).
    #[arg(long)]
    program: Option<String>,
    /// Binds a parameter of a program-building Python function: NAME=VALUE (repeatable).
    #[arg(long = "bind", value_name = "NAME=VALUE", value_parser = driver::parse_binding)]
    pub(crate) bind: Vec<(String, String)>,
    /// Checked outputs: `--expect`, `--check-golden`, `--rtol`, `--atol`.
    #[command(flatten)]
    checks: crate::expect::CheckArgs,
    /// Total step budget (every statement, op and loop iteration is a step; default: none).
    #[arg(long, value_name = "N")]
    max_steps: Option<u64>,
    /// Liveness budget: steps in a row that move no data and change no signal cell.
    #[arg(long, value_name = "N", default_value_t = pld_sim::budget::DEFAULT_MAX_IDLE_STEPS)]
    max_idle_steps: u64,
    /// Wall-clock limit of the simulation in seconds (default: none).
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    timeout: Option<std::time::Duration>,
    /// Memory limit for inputs, windows and tiles: bytes or K/M/G/T (default: half the RAM).
    #[arg(long, value_name = "BYTES", value_parser = crate::limits::parse_bytes)]
    max_memory: Option<u64>,
    /// Report reads of window bytes nothing wrote as warnings instead of faults (exit 3).
    #[arg(long)]
    allow_uninit_reads: bool,
    /// The engine: inproc (every rank in this process) or mpi (one process per rank, under
    /// `mpirun -n RANKS`; needs a build with the `mpi` feature).
    #[arg(long, value_enum, default_value = "inproc")]
    engine: crate::engine::EngineKind,
    /// How builtin collective dispatches run: `model` (the simulator's protocol models, the
    /// fast path) or `lowered` (the kernels codegen emits, via MaterializeBuiltinKernels).
    #[arg(long, default_value = "model", value_parser = parse_builtins)]
    builtins: Builtins,
    /// Bytes per rank one step of a builtin collective's protocol model moves: consecutive
    /// kernel tiles taken together between one pair of barriers (bytes or K/M/G; `0`: tile by
    /// tile, as the kernel runs). Outputs and traffic do not depend on it; modeled time
    /// charges the tiles a step takes together as the kernel's tile-by-tile protocol.
    #[arg(long, value_name = "BYTES", value_parser = crate::limits::parse_bytes_or_zero,
          default_value_t = pld_sim::DEFAULT_PROTOCOL_GRAIN)]
    protocol_grain: u64,
    /// Runs the program at each size of a range, one results-table row per size and
    /// collective: NAME=START:END[:xF|:+N] (NAME a builder parameter or dynamic dimension, in
    /// its own unit; K/M/G suffixes are powers of 1024; default step x2).
    #[arg(long, value_name = "NAME=START:END:STEP", value_parser = crate::sweep::parse)]
    pub(crate) sweep: Option<crate::sweep::Sweep>,
    /// `pld verify`: explore this many PCT schedules after the deterministic one.
    #[arg(skip)]
    pub verify: Option<usize>,
    /// `pld verify --exhaustive`: its limits and where a refutation's replay file goes.
    #[arg(skip)]
    pub exhaustive: Option<crate::exhaustive::Exhaustive>,
    /// One size of a `--sweep`: print only the check verdicts and the results table's rows.
    #[arg(skip)]
    pub(crate) sweeping: bool,
}

/// A finished run (on rank 0): its outcome and, when outputs were checked, the verdict.
pub(crate) struct Ran {
    /// What the simulation produced.
    pub outcome: pld_sim::SimOutcome,
    /// The checks' verdict (`--expect`, `--check-golden`).
    pub verdict: Option<crate::expect::Verdict>,
}

fn parse_seconds(s: &str) -> Result<std::time::Duration, String> {
    s.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v > 0.0 && *v < 1e9)
        .map(std::time::Duration::from_secs_f64)
        .ok_or_else(|| format!("`{s}` is not a positive number of seconds"))
}

/// `--builtins`: which form of the builtin collectives the simulator runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Builtins {
    /// The protocol models (fast; cross-checked against the kernels by the tests).
    Model,
    /// The kernels codegen emits, run like any kernel.
    Lowered,
}

fn parse_builtins(s: &str) -> Result<Builtins, String> {
    match s {
        "model" => Ok(Builtins::Model),
        "lowered" => Ok(Builtins::Lowered),
        _ => Err(format!("unknown builtins form `{s}` (expected model or lowered)")),
    }
}

impl RunArgs {
    /// The program file.
    pub fn file(&self) -> &std::path::Path {
        &self.file
    }
}

/// Runs `pld run`.
pub fn run(args: &RunArgs) -> Result<(), Failure> {
    // First, so a Ctrl-C while the program compiles stops the run at its first poll too.
    let interrupt = crate::limits::interrupt_flag();
    if !(1..=pld_runtime_abi::COMM_MAX_RANK_NUM).contains(&args.ranks) {
        return Err(Failure::usage(format!("--ranks {} is outside 1..=64", args.ranks)));
    }
    if !(1..=4096).contains(&args.cores) {
        return Err(Failure::usage(format!("--cores {} is outside 1..=4096", args.cores)));
    }
    if (args.verify.is_some() || args.exhaustive.is_some())
        && args.engine != crate::engine::EngineKind::Inproc
    {
        return Err(Failure::usage("pld verify runs in-process only"));
    }
    let engine = crate::engine::Engine::start(
        args.engine,
        args.ranks,
        args.trace.is_some(),
        args.schedule.sched != Schedule::Deterministic || args.schedule.replay.is_some(),
    )?;
    if !engine.is_root() {
        // Every MPI process loads the program; rank 0 alone says what the frontend noticed.
        crate::select::quiet();
    }
    if let Some(sweep) = &args.sweep {
        return crate::sweep::run(args, sweep, &engine, &interrupt);
    }
    let ran = run_on(args, &engine, interrupt);
    // Every MPI process compiles and checks the same program: rank 0 alone reports.
    let Some(ran) = ran? else { return Ok(()) };
    if args.verify.is_none() {
        finish(args, &ran.outcome, ran.verdict.as_ref().map(|v| v.wrong))?;
    }
    ran.verdict.map_or(Ok(()), crate::expect::Verdict::into_result)
}

/// The one program unit `run` selects, its builders bound (a rank-count parameter from
/// `--ranks`).
fn load_selected(args: &RunArgs) -> Result<(pld_ir::Program, pld_ir::SourceMap), Failure> {
    let sel = Selection { program: args.program.as_deref(), entry: args.entry.as_deref() };
    select::load_one(&args.file, args.target, sel, &args.bind, Some(args.ranks))
}

/// The pipeline, then the checks `pld check` applies, before anything runs: a program the PTO
/// emitters or their verifier reject (a tile of dynamic physical shape, a kernel that calls
/// itself, …) stops here with the same diagnostic, so what `run` accepts, `check` and
/// `compile` accept too (D-cli-9); then, with `--builtins lowered`, the builtin kernels.
fn lower_checked(args: &RunArgs, program: &mut Program, sources: &pld_ir::SourceMap) -> Result<(), Failure> {
    let opts = pld_passes::PipelineOptions { target: args.target, ..Default::default() };
    pld_passes::run_pipeline(program, &opts).map_err(|d| Failure::Diagnostics(d, sources.clone()))?;
    pld_codegen_pto::emit_program(program, &pld_codegen_pto::CodegenOptions { target: args.target })
        .map_err(|d| Failure::Diagnostics(d, sources.clone()))?;
    if args.builtins == Builtins::Lowered {
        pld_passes::materialize_builtin_kernels(program, &opts)
            .map_err(|d| Failure::Diagnostics(d, sources.clone()))?;
    }
    Ok(())
}

/// `pld run` on a started engine: the outcome and the checks' verdict (`None` on an MPI
/// process other than rank 0).
pub(crate) fn run_on(
    args: &RunArgs,
    engine: &crate::engine::Engine,
    interrupt: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<Option<Ran>, Failure> {
    let (mut program, sources) = load_selected(args)?;
    let entry = pick_entry(&program, args.entry.as_deref())?;
    lower_checked(args, &mut program, &sources)?;
    let func = program.function(&entry).ok_or_else(|| Failure::usage(format!("entry `{entry}` vanished")))?;
    crate::expect::precheck(&args.checks, &args.file, &entry, func)?;
    crate::paths::check_distinct(
        &args.out,
        func,
        &args.inputs,
        args.trace.as_deref(),
        args.report_json.as_deref(),
    )?;

    let mut given: HashMap<String, PathBuf> = HashMap::new();
    for spec in &args.inputs {
        let (name, path) = spec
            .split_once('=')
            .ok_or_else(|| Failure::usage(format!("--input `{spec}` is not NAME=PATH.npy")))?;
        given.insert(name.to_string(), PathBuf::from(path));
    }
    let (mut syms, mut binding_sources) = bind_dims(args, &program)?;
    let mut inputs = Inputs::new();
    // Under the MPI engine every tensor is a source each process reads only where its rank
    // touches it (D-mpi-7); in-process, bytes.
    let distributed = engine.is_distributed();
    let mut lazy: HashMap<String, LazyInput> = HashMap::new();
    let mut rng = args.seed;
    let max_memory = args.max_memory.unwrap_or_else(pld_sim::limits::default_max_memory);
    let mut reserved = 0u64;
    // The given inputs first: their shapes bind the dimensions the other tensors' shapes use.
    read_given(
        func,
        given,
        distributed,
        &program,
        (&mut syms, &mut binding_sources),
        (&mut inputs, &mut lazy),
    )?;
    unbound_dims(&program, &syms)?;
    for p in &func.params {
        let name = func.values.name(p.value).to_string();
        let ty = func.values.ty(p.value);
        if inputs.contains_key(&name) || lazy.contains_key(&name) {
            continue;
        }
        if let Some(t) = ty.as_tensor() {
            // Outputs start zeroed, other tensors random; their shapes are evaluated here so
            // symbolic dims (`NR * MAXR`) bind the same way as the inputs'.
            let shape = static_shape(&name, &t.shape, &syms)?;
            crate::limits::reserve_input(
                &name,
                t.dtype,
                &shape,
                &t.shape,
                &sources,
                &mut reserved,
                max_memory,
            )?;
            let dtype = t.dtype;
            let l = if p.dir == Direction::Out {
                LazyInput { dtype, shape, source: std::sync::Arc::new(pld_sim::lazy::Zeros) }
            } else {
                let seeded = pld_sim::lazy::Seeded { dtype, state: rng };
                rng = seeded.after(shape.iter().product());
                let l = LazyInput { dtype, shape, source: std::sync::Arc::new(seeded) };
                if engine.is_root() {
                    npy::write_lazy(&args.out.join("inputs").join(format!("{name}.npy")), &l)
                        .map_err(Failure::usage)?;
                }
                l
            };
            if distributed {
                lazy.insert(name, l);
            } else {
                inputs.insert(name, l.materialize());
            }
            continue;
        }
        if p.dir == Direction::Out {
            continue;
        }
        match ty {
            Type::Scalar(_) => {
                return Err(Failure::usage(format!(
                "scalar parameter `{name}` needs a value: pass --input {name}=PATH.npy (a one-element array)"
            )))
            }
            other => {
                return Err(Failure::usage(format!(
                    "parameter `{name}` of type {other} cannot be given from the command line"
                )))
            }
        }
    }
    let cfg = SimConfig {
        cost: cost_model(args)?,
        trace_all: args.trace_all,
        schedule: args.schedule.sched,
        driver: crate::replay::driver(&args.schedule, args.ranks)?,
        trace: args.trace.is_some(),
        bindings: syms,
        binding_sources,
        host_callbacks: Some(std::sync::Arc::new(pld_py::Bridge::new(
            pld_py::Python::from_env().within(args.timeout),
            sources.clone(),
            args.bind.iter().map(|(k, v)| (k.clone(), pld_py::ParamValue::parse(v))).collect(),
        ))),
        sources: Some(sources),
        cores_per_rank: args.cores,
        max_steps: args.max_steps.unwrap_or(pld_sim::budget::DEFAULT_MAX_STEPS),
        max_idle_steps: args.max_idle_steps,
        max_memory,
        deadline: args.timeout.map(|t| std::time::Instant::now() + t),
        interrupt: Some(interrupt),
        allow_uninit_reads: args.allow_uninit_reads,
        protocol_grain: args.protocol_grain,
        lazy_inputs: lazy,
        ..SimConfig::ranks(args.ranks)
    };
    let Some(outcome) = simulate(args, engine, &program, &entry, &inputs, &cfg)? else {
        // Another MPI process: rank 0 reports the run.
        return Ok(None);
    };
    let verdict = if args.checks.any() {
        // The golden sees every input whole (under the MPI engine rank 0 fills the lazy ones now).
        let mut inputs = inputs;
        inputs.extend(cfg.lazy_inputs.iter().map(|(k, l)| (k.clone(), l.materialize())));
        let cx = crate::expect::GoldenCx {
            file: &args.file,
            entry: &entry,
            func,
            inputs: &inputs,
            ranks: args.ranks,
            binds: &args.bind,
        };
        Some(check_outputs(args, &outcome, &cx)?)
    } else {
        None
    };
    Ok(Some(Ran { outcome, verdict }))
}

/// The checks' verdict on a finished run. When they cannot run (a usage error: a golden that
/// raises), `--report-json` still gets the run's document, with the error in `check_error`.
fn check_outputs(
    args: &RunArgs,
    outcome: &pld_sim::SimOutcome,
    cx: &crate::expect::GoldenCx<'_>,
) -> Result<crate::expect::Verdict, Failure> {
    match crate::expect::check(&args.checks, &outcome.outputs, cx, !args.sweeping) {
        Err(Failure::Usage(msg)) => {
            if let Some(path) = &args.report_json {
                let doc = RunJson { check_error: Some(msg.clone()), ..run_doc(outcome, None) };
                driver::write_file(path, doc.text().as_bytes())?;
            }
            Err(Failure::Usage(msg))
        }
        other => other,
    }
}

/// Reads the `--input NAME=PATH` tensors (bytes in-process, sources under the MPI engine,
/// D-mpi-7), binding the dimensions their shapes give; an input naming no parameter is a
/// usage error.
fn read_given(
    func: &pld_ir::Function,
    mut given: HashMap<String, PathBuf>,
    distributed: bool,
    program: &Program,
    (syms, binding_sources): (&mut HashMap<String, i64>, &mut BindingSources),
    (inputs, lazy): (&mut Inputs, &mut HashMap<String, LazyInput>),
) -> Result<(), Failure> {
    for p in &func.params {
        let name = func.values.name(p.value).to_string();
        let ty = func.values.ty(p.value);
        if let Some(path) = given.remove(&name) {
            let t = ty.as_tensor_like().ok_or_else(|| {
                Failure::usage(format!("--input {name}: parameter `{name}` is not a tensor ({ty})"))
            })?;
            let input = |e: String| Failure::usage(format!("--input {name}: {e}"));
            let from = format!("the shape of --input {name}");
            if distributed {
                let l = npy::open_lazy(&path, t.dtype).map_err(input)?;
                bind_shape(&name, &t.shape, &l.shape, syms)?;
                lazy.insert(name, l);
            } else {
                let h = npy::read(&path, t.dtype).map_err(input)?;
                bind_shape(&name, &t.shape, &h.shape, syms)?;
                inputs.insert(name, h);
            }
            for s in program.dyn_syms.iter().filter(|s| syms.contains_key(*s)) {
                binding_sources.entry(s.clone()).or_insert_with(|| from.clone());
            }
        }
    }
    if let Some(name) = given.keys().next() {
        let names: Vec<String> = func.params.iter().map(|p| func.values.name(p.value).to_string()).collect();
        return Err(Failure::usage(format!(
            "--input {name}: `{}` has no parameter `{name}` (parameters: {})",
            func.name,
            names.join(", ")
        )));
    }
    Ok(())
}

/// The target's cost model with the `--cost KEY=VALUE` overrides.
fn cost_model(args: &RunArgs) -> Result<pld_sim::cost::CostModel, Failure> {
    let mut cost = pld_sim::cost::CostModel::for_target(args.target.name())
        .ok_or_else(|| Failure::usage(format!("no cost model for target {}", args.target.name())))?;
    for spec in &args.cost {
        cost.set(spec).map_err(Failure::usage)?;
    }
    Ok(cost)
}

/// Runs the simulation (`pld verify`: explores its schedules) and reports it; `None` on an MPI
/// process other than rank 0.
fn simulate(
    args: &RunArgs,
    engine: &crate::engine::Engine,
    program: &pld_ir::Program,
    entry: &str,
    inputs: &pld_sim::Inputs,
    cfg: &SimConfig,
) -> Result<Option<pld_sim::SimOutcome>, Failure> {
    if let Some(x) = &args.exhaustive {
        let base = crate::exhaustive::explore(program, entry, inputs, cfg, x, args.report_json.as_deref())?;
        write_outputs(args, &base)?;
        return Ok(Some(base));
    }
    if let Some(n) = args.verify {
        let base = crate::verify::explore(program, entry, inputs, cfg, n, args.report_json.as_deref())?;
        write_outputs(args, &base)?;
        return Ok(Some(base));
    }
    let result = crate::progress::shown(crate::progress::Work::Run, cfg, |cfg| {
        engine.run(program, entry, inputs, cfg)
    });
    let outcome = outcome_or_failure(result, args)?;
    match &outcome {
        Some(o) if args.sweeping => write_outputs(args, o)?,
        Some(o) => report_outcome(args, entry, o)?,
        None => {}
    }
    Ok(outcome)
}

/// The run's outcome (`None` on an MPI process other than rank 0), or the failure it ends in:
/// a fault report (also written to `--report-json`), an interrupt, or invalid inputs.
fn outcome_or_failure(
    result: Result<Option<pld_sim::SimOutcome>, pld_sim::SimError>,
    args: &RunArgs,
) -> Result<Option<pld_sim::SimOutcome>, Failure> {
    match result {
        Ok(outcome) => Ok(outcome),
        Err(pld_sim::SimError::Fault(report)) => {
            if let Some(path) = &args.report_json {
                let doc = RunJson { ok: false, report: Some(&report.json), ..RunJson::default() };
                driver::write_file(path, doc.text().as_bytes())?;
            }
            if report.kind == pld_sim::ReportKind::Interrupted {
                return Err(Failure::Interrupted(report.to_string()));
            }
            Err(Failure::Fault(report.to_string()))
        }
        Err(pld_sim::SimError::Invalid(d)) => {
            let msgs: Vec<String> = d.iter().map(|d| d.message.clone()).collect();
            Err(Failure::usage(msgs.join("; ")))
        }
    }
}

/// Writes the outputs of a verified run (its deterministic schedule's) into `--out`, and
/// prints its warnings.
fn write_outputs(args: &RunArgs, outcome: &pld_sim::SimOutcome) -> Result<(), Failure> {
    for (name, t) in &outcome.outputs {
        npy::write(&args.out.join(format!("{name}.npy")), t).map_err(Failure::usage)?;
    }
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    Ok(())
}

/// Writes the outputs and prints the run's summary: outputs with their checksums, per-rank
/// traffic and modeled time.
fn report_outcome(args: &RunArgs, entry: &str, outcome: &pld_sim::SimOutcome) -> Result<(), Failure> {
    let mut names: Vec<&String> = outcome.outputs.keys().collect();
    names.sort();
    outln!("ran `{entry}` on {} rank(s), schedule {}", args.ranks, args.schedule.name());
    for name in names {
        let t = &outcome.outputs[name];
        let path = args.out.join(format!("{name}.npy"));
        npy::write(&path, t).map_err(Failure::usage)?;
        outln!(
            "  {name}: {} {:?} sum={} fnv={:016x} -> {}",
            t.dtype,
            t.shape,
            fmt_sum(sum_of(t)),
            pld_sim::fnv::fnv1a(&t.data),
            path.display()
        );
    }
    let s = &outcome.stats;
    for r in 0..args.ranks {
        let remote = s.remote_total(r);
        let local: u64 = s.local_bytes.iter().filter(|((rr, _), _)| *rr == r).map(|(_, b)| b).sum();
        outln!(
            "  rank {r}: {remote} B remote, {local} B local, {} notifies, {} waits, {} barrier rounds",
            s.notifies.get(r).copied().unwrap_or(0),
            s.waits.get(r).copied().unwrap_or(0),
            s.barrier_rounds.get(r).copied().unwrap_or(0)
        );
    }
    print_timing(&outcome.timing);
    Ok(())
}

/// The `--report-json` rows of the outputs, sorted by name.
pub(crate) fn output_rows(outputs: &HashMap<String, HostTensor>) -> Vec<OutputJson<'_>> {
    let mut rows: Vec<OutputJson<'_>> = outputs
        .iter()
        .map(|(name, t)| OutputJson {
            name,
            dtype: t.dtype.to_string(),
            shape: &t.shape,
            sum: sum_of(t),
            fnv: format!("{:016x}", pld_sim::fnv::fnv1a(&t.data)),
        })
        .collect();
    rows.sort_by(|a, b| a.name.cmp(b.name));
    rows
}

/// The `--report-json` document of a finished run (`wrong`: the wrong elements, when checked).
fn run_doc(outcome: &pld_sim::SimOutcome, wrong: Option<u64>) -> RunJson<'_> {
    let t = &outcome.timing;
    RunJson {
        ok: true,
        modeled_ps: t.rank_ps.clone(),
        outputs: Some(output_rows(&outcome.outputs)),
        collectives: Some(t.collectives.iter().map(|c| CollectiveJson::of(c, wrong)).collect()),
        ..RunJson::default()
    }
}

/// After the checks: the collectives' results table (`#wrong` filled when outputs were
/// checked), `--report-json`, warnings and the trace.
fn finish(args: &RunArgs, outcome: &pld_sim::SimOutcome, wrong: Option<u64>) -> Result<(), Failure> {
    let t = &outcome.timing;
    if !t.collectives.is_empty() {
        outln!("{}", crate::table::header());
        outln!("{}", crate::table::units());
        for c in &t.collectives {
            outln!("{}", crate::table::row(c, wrong));
        }
    }
    if let Some(path) = &args.report_json {
        driver::write_file(path, run_doc(outcome, wrong).text().as_bytes())?;
    }
    for w in &outcome.warnings {
        eprintln!("warning: {w}");
    }
    if let (Some(path), Some(trace)) = (&args.trace, &outcome.trace) {
        driver::write_file(path, trace.as_bytes())?;
        outln!("  trace -> {}", path.display());
    }
    Ok(())
}

/// Modeled time per rank (the collectives follow in the results table).
fn print_timing(t: &pld_sim::timeline::Timing) {
    use pld_sim::timeline::fmt_ps;
    outln!("  modeled time ({}):", t.model);
    for (r, ps) in t.rank_ps.iter().enumerate() {
        outln!("    rank {r}: {}", fmt_ps(*ps));
    }
}

fn pick_entry(program: &Program, entry: Option<&str>) -> Result<String, Failure> {
    if let Some(e) = entry {
        return match program.function(e) {
            Some(_) => Ok(e.to_string()),
            None => Err(Failure::usage(format!(
                "no function `{e}` (functions: {})",
                program.functions.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")
            ))),
        };
    }
    let of_kind = |k: FunctionKind| -> Vec<&str> {
        program.functions.iter().filter(|f| f.kind == k).map(|f| f.name.as_str()).collect()
    };
    // The single host function; an L2 program without one runs its single chip orchestration.
    let (hosts, chips) = (of_kind(FunctionKind::Host), of_kind(FunctionKind::ChipOrch));
    match (hosts.as_slice(), chips.as_slice()) {
        ([one], _) | ([], [one]) => Ok(one.to_string()),
        ([], []) => {
            Err(Failure::usage("the program has no host or chip orchestration function; pass --entry FUNC"))
        }
        ([], many) => Err(Failure::usage(format!(
            "no host function and several chip orchestrations ({}); pass --entry FUNC",
            many.join(", ")
        ))),
        (many, _) => {
            Err(Failure::usage(format!("several host functions ({}); pass --entry FUNC", many.join(", "))))
        }
    }
}

/// Where each dynamic dimension's value came from, by name (for bounds reports).
type BindingSources = HashMap<String, String>;

/// Dynamic dimensions: `--bind NAME=INT` when given; else `--ranks` for the ones the program
/// uses as the rank count ([`Program::bind_rank_counts`], D-cli-10). The others are bound only
/// by the shape of an `--input` ([`unbound_dims`] says which nothing bound). Returns the
/// values and where each came from (for bounds reports).
fn bind_dims(args: &RunArgs, program: &Program) -> Result<(HashMap<String, i64>, BindingSources), Failure> {
    let mut syms: HashMap<String, i64> = HashMap::new();
    let mut sources: HashMap<String, String> = HashMap::new();
    for s in &program.dyn_syms {
        let (value, from) = match args.bind.iter().find(|(k, _)| k == s) {
            Some((_, v)) => (
                v.parse::<i64>().ok().filter(|v| *v > 0).ok_or_else(|| {
                    Failure::usage(format!("--bind {s}={v}: a dynamic dimension needs a positive integer"))
                })?,
                format!("--bind {s}={v}"),
            ),
            None => continue,
        };
        syms.insert(s.clone(), value);
        sources.insert(s.clone(), from);
    }
    for s in program.bind_rank_counts(args.ranks as i64, &mut syms) {
        sources.insert(s.clone(), pld_ir::rank_count::rank_count_source(&s));
    }
    Ok((syms, sources))
}

/// The dynamic dimensions the program's tensors and windows use that neither `--bind`,
/// `--ranks` (for the rank count) nor an `--input`'s shape bound: a usage error listing each
/// with its `--bind NAME=VALUE` (the rule's second half, shared with the library:
/// [`Program::unbound_dims`]).
fn unbound_dims(program: &Program, syms: &HashMap<String, i64>) -> Result<(), Failure> {
    let unbound = program.unbound_dims(syms);
    if unbound.is_empty() {
        return Ok(());
    }
    Err(Failure::usage(pld_ir::rank_count::unbound_dims_message(&unbound)))
}

fn bind_shape(
    name: &str,
    dims: &[pld_ir::Expr],
    actual: &[usize],
    syms: &mut HashMap<String, i64>,
) -> Result<(), Failure> {
    if dims.len() != actual.len() {
        return Err(Failure::usage(format!(
            "--input {name}: rank {} does not match the parameter's rank {}",
            actual.len(),
            dims.len()
        )));
    }
    for (i, (d, &a)) in dims.iter().zip(actual).enumerate() {
        if let ExprKind::Sym(s) = &d.kind {
            syms.entry(s.clone()).or_insert(a as i64);
        }
        if let Some(w) = d.eval_int(&|s| syms.get(s).copied()) {
            if w != a as i64 {
                return Err(Failure::usage(format!(
                    "--input {name}: dimension {i} is {a} but the parameter needs {w} (shape {actual:?})"
                )));
            }
        }
    }
    Ok(())
}

fn static_shape(
    name: &str,
    dims: &[pld_ir::Expr],
    syms: &HashMap<String, i64>,
) -> Result<Vec<usize>, Failure> {
    dims.iter()
        .map(|d| match d.eval_int(&|s| syms.get(s).copied()) {
            Some(v) if v >= 0 => Ok(v as usize),
            _ => Err(Failure::usage(format!(
                "parameter `{name}`: dimension `{d}` cannot be evaluated; pass --input {name}=PATH.npy"
            ))),
        })
        .collect()
}

/// The sum of `t`'s elements in order, decoded a chunk at a time (a whole `f64` copy of a
/// large output would be twice its size).
fn sum_of(t: &pld_sim::HostTensor) -> f64 {
    let eb = (t.dtype.bytes() as usize).max(1);
    let mut vals = Vec::new();
    // The neutral element `Iterator::sum` starts from, so the result is the one it gives.
    let mut sum = std::iter::empty::<f64>().sum::<f64>();
    for c in t.data.chunks(eb << 14) {
        vals.clear();
        pld_sim::elem::decode_all(t.dtype, c, &mut vals);
        sum = vals.iter().fold(sum, |s, v| s + v);
    }
    sum
}

fn fmt_sum(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.6}")
    }
}
