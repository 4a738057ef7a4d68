//! Which program units of a file a command works on, and whether its `--bind`s fit them.
//!
//! Guarantees: `--program NAME` selects the unit named NAME; `--entry NAME` the unit whose
//! host function (else whose function) is NAME; both together select by `--program` and
//! leave the entry to the command. Without a selection, `check` and `compile` take every
//! unit and `run` the only one. A selection that names nothing, or that several units match,
//! is a usage error (exit 2) listing the candidates and naming `--entry` and `--program`.
//! Only selected units are lowered. Every `--bind NAME=VALUE` must name a bindable name of a
//! selected unit (a builder parameter, a local its builder assigns under control flow that
//! does not fold, or a dynamic dimension) and its value must fit the parameter's annotation;
//! otherwise it is a usage error with its own message. The frontend's warnings about the
//! loaded units are printed on stderr (rendered like errors, as `warning:`) and change no exit
//! code.

use crate::driver::{self, Failure};
use pld_frontend::{ParseOptions, UnitInfo};
use pld_ir::{Program, SourceMap, Target};
use std::path::Path;

/// The arguments `pld check` and `pld compile` share: the target and which units of the file
/// (and with which builder bindings) they work on.
#[derive(clap::Args)]
pub struct UnitArgs {
    /// Target profile.
    #[arg(long, default_value = "a2a3", value_parser = driver::parse_target)]
    pub target: Target,
    /// Only this program (`@pl.program` class or host entry); default: every one.
    #[arg(long)]
    pub program: Option<String>,
    /// Only the program whose host function this is.
    #[arg(long, value_name = "HOST")]
    pub entry: Option<String>,
    /// Binds a parameter of a program-building Python function: NAME=VALUE (repeatable).
    #[arg(long = "bind", value_name = "NAME=VALUE", value_parser = driver::parse_binding)]
    pub bind: Vec<(String, String)>,
}

impl UnitArgs {
    /// Loads every unit of `path` these arguments select ([`load_all`]); `ranks` (the
    /// command's `--ranks`) binds the builder parameters that are the rank count.
    pub fn load_all(&self, path: &Path, ranks: Option<usize>) -> Result<(Vec<Program>, SourceMap), Failure> {
        let sel = Selection { program: self.program.as_deref(), entry: self.entry.as_deref() };
        load_all(path, self.target, sel, &self.bind, ranks)
    }
}

/// What the command line selects.
#[derive(Clone, Copy, Debug, Default)]
pub struct Selection<'a> {
    /// `--program NAME`.
    pub program: Option<&'a str>,
    /// `--entry NAME` (`run` only).
    pub entry: Option<&'a str>,
}

/// Loads the single unit `sel` selects (for `run`).
pub fn load_one(
    path: &Path,
    target: Target,
    sel: Selection<'_>,
    bind: &[(String, String)],
    ranks: Option<usize>,
) -> Result<(Program, SourceMap), Failure> {
    let (mut programs, sources) = load(path, target, sel, bind, ranks, false)?;
    match programs.pop() {
        Some(p) if programs.is_empty() => Ok((p, sources)),
        _ => Err(Failure::usage(format!("{}: expected one program", path.display()))),
    }
}

/// Loads the units `sel` selects, or every unit without a selection (for `check`, `compile`).
pub fn load_all(
    path: &Path,
    target: Target,
    sel: Selection<'_>,
    bind: &[(String, String)],
    ranks: Option<usize>,
) -> Result<(Vec<Program>, SourceMap), Failure> {
    load(path, target, sel, bind, ranks, true)
}

/// Whether this process keeps the frontend's notes and warnings to itself: an MPI process
/// other than rank 0, which loads the same program as rank 0 and would repeat them.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes this process print no frontend notes or warnings from now on (an MPI process other
/// than rank 0: rank 0 prints them once for the run).
pub fn quiet() {
    QUIET.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn quiet_now() -> bool {
    QUIET.load(std::sync::atomic::Ordering::Relaxed)
}

/// Prints `note` on stderr unless this process already did (a `--sweep` loads its file once
/// per size) or is [`quiet`].
fn note_once(note: String) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if !said.contains(&note) && !quiet_now() {
        eprintln!("{note}");
        said.push(note);
    }
}

/// The user's bindings plus, with `--ranks N`, `NAME=N` for every builder parameter of `units`
/// that is the rank count ([`pld_frontend::Bindable::is_rank_count`]) and no `--bind` names;
/// each such binding is said in a `note:` on stderr, once per process.
fn with_rank_bindings(
    bind: &[(String, String)],
    units: &[UnitInfo],
    ranks: Option<usize>,
) -> Vec<(String, String)> {
    let mut out = bind.to_vec();
    let Some(n) = ranks else { return out };
    for b in units.iter().flat_map(|u| &u.bindable).filter(|b| b.is_rank_count()) {
        if out.iter().all(|(k, _)| *k != b.name) {
            note_once(format!(
                "note: builder parameter `{}` of `{}` is the rank count: bound from --ranks ({}={n}; --bind {}=VALUE overrides)",
                b.name, b.builder, b.name, b.name
            ));
            out.push((b.name.clone(), n.to_string()));
        }
    }
    out
}

fn load(
    path: &Path,
    target: Target,
    sel: Selection<'_>,
    bind: &[(String, String)],
    ranks: Option<usize>,
    all: bool,
) -> Result<(Vec<Program>, SourceMap), Failure> {
    let mut sources = SourceMap::new();
    let text = crate::limits::read_source(path, &mut sources)?;
    let name = path.display().to_string();
    let module = pld_frontend::parse_module(&mut sources, &name, &text)
        .map_err(|d| Failure::Diagnostics(d, sources.clone()))?;
    let given = ParseOptions { bindings: bind.to_vec(), ..ParseOptions::for_target(target) };
    let bind = &with_rank_bindings(bind, &module.units(&given), ranks);
    let opts = ParseOptions { bindings: bind.to_vec(), ..ParseOptions::for_target(target) };
    let units = module.units(&opts);
    let chosen = choose(&name, &units, sel, all)?;
    let picked: Vec<&UnitInfo> = units.iter().filter(|u| chosen.contains(&u.name)).collect();
    check_bind_values(bind, &picked)?;
    let mut programs = Vec::new();
    let mut diags = pld_ir::Diagnostics::new();
    let mut warnings = pld_ir::Diagnostics::new();
    if chosen.is_empty() {
        // No unit at all: the frontend says so, with the file's position.
        let e = pld_frontend::parse_program(&mut sources, &name, &text, &opts).err().unwrap_or_default();
        return Err(Failure::Diagnostics(e, sources));
    }
    // Every unit: one parse (the module's own diagnostics once); a selection: that unit only.
    let each: Vec<Option<&String>> =
        if chosen.len() == units.len() { vec![None] } else { chosen.iter().map(Some).collect() };
    for unit in each {
        let opts = ParseOptions { program: unit.cloned(), ..opts.clone() };
        match module.programs_and_warnings(&opts) {
            Ok((ps, w)) => {
                programs.extend(ps.into_iter().filter(|p| unit.is_none_or(|u| *u == p.name)));
                warnings.extend(w);
            }
            Err(d) => diags.extend(d),
        }
    }
    if let (Some(entry), true) = (sel.entry, programs.len() > 1) {
        // Units sharing a name (two builders' `class P`): the entry tells them apart.
        programs.retain(|p| p.function(entry).is_some());
    }
    let unknown = unknown_binds(bind, &picked, &programs);
    if !unknown.is_empty() {
        return Err(Failure::usage(unknown_message(&unknown, &picked)));
    }
    if diags.has_errors() {
        return Err(Failure::Diagnostics(diags, sources));
    }
    if !warnings.is_empty() && !quiet_now() {
        // The frontend's warnings: printed by every command that loads a program, never
        // changing its exit code (once per run: not by a [`quiet`] MPI process).
        eprintln!("{}", driver::render(&warnings, &sources));
    }
    if let (Some(entry), true) = (sel.entry, all) {
        // `run` names a missing entry itself; `check` and `compile` would work on nothing.
        if !programs.iter().any(|p| p.function(entry).is_some()) {
            let functions: Vec<&str> =
                programs.iter().flat_map(|p| p.functions.iter().map(|f| f.name.as_str())).collect();
            return Err(Failure::usage(format!(
                "--entry {entry}: no function `{entry}` in {name} (functions: {})",
                functions.join(", ")
            )));
        }
    }
    Ok((programs, sources))
}

/// The names of the selected units.
fn choose(file: &str, units: &[UnitInfo], sel: Selection<'_>, all: bool) -> Result<Vec<String>, Failure> {
    if let Some(want) = sel.program {
        return match units.iter().filter(|u| u.name == want).count() {
            0 => Err(Failure::usage(format!(
                "--program {want}: {file} defines no program named `{want}` (programs: {})",
                listing(units)
            ))),
            1 => Ok(vec![want.to_string()]),
            n => Err(Failure::usage(format!(
                "--program {want} is ambiguous: {n} programs of {file} are named `{want}` ({}); select one with --entry HOST",
                listing(&units.iter().filter(|u| u.name == want).cloned().collect::<Vec<_>>())
            ))),
        };
    }
    if let Some(entry) = sel.entry {
        let hosts: Vec<&UnitInfo> = units.iter().filter(|u| u.hosts.iter().any(|h| h == entry)).collect();
        let found = if hosts.is_empty() {
            units.iter().filter(|u| u.functions.iter().any(|f| f == entry)).collect()
        } else {
            hosts
        };
        return match found.as_slice() {
            [one] => Ok(vec![one.name.clone()]),
            // The command reports the missing entry inside the only program.
            [] if units.len() == 1 => Ok(vec![units[0].name.clone()]),
            [] => Err(Failure::usage(format!(
                "--entry {entry}: no function `{entry}` in any program of {file} (programs: {})",
                listing(units)
            ))),
            many => Err(Failure::usage(format!(
                "--entry {entry} is ambiguous: {} programs of {file} define it ({}); select one with --program NAME",
                many.len(),
                many.iter().map(|u| u.name.as_str()).collect::<Vec<_>>().join(", ")
            ))),
        };
    }
    match units {
        [one] => Ok(vec![one.name.clone()]),
        [] => Ok(Vec::new()),
        _ if all => Ok(units.iter().map(|u| u.name.clone()).collect()),
        many => Err(Failure::usage(format!(
            "{file} defines {} programs: {}; select one with --entry HOST or --program NAME",
            many.len(),
            listing(many)
        ))),
    }
}

/// `name (entry host)` per unit, for messages.
fn listing(units: &[UnitInfo]) -> String {
    units
        .iter()
        .map(|u| match u.hosts.as_slice() {
            [] => u.name.clone(),
            [h] if *h == u.name => format!("{} (entry {h})", u.name),
            hs => format!("{} (entry {})", u.name, hs.join(" or ")),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A bound value that does not fit its parameter's annotation.
fn check_bind_values(bind: &[(String, String)], units: &[&UnitInfo]) -> Result<(), Failure> {
    for (k, v) in bind {
        let Some(b) = units.iter().flat_map(|u| &u.bindable).find(|b| &b.name == k) else { continue };
        if let Err(why) = pld_frontend::bind_value(v, b.kind) {
            return Err(Failure::usage(format!("--bind {k}={v}: {why}")));
        }
    }
    Ok(())
}

/// Bound names that no selected unit can take.
fn unknown_binds<'b>(
    bind: &'b [(String, String)],
    units: &[&UnitInfo],
    programs: &[Program],
) -> Vec<&'b str> {
    bind.iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| {
            !units
                .iter()
                .any(|u| u.bindable.iter().any(|b| b.name == *k) || u.dyn_syms.iter().any(|s| s == k))
                && !programs.iter().any(|p| p.dyn_syms.iter().any(|s| s == k))
        })
        .collect()
}

fn unknown_message(unknown: &[&str], units: &[&UnitInfo]) -> String {
    let mut builders: Vec<(String, Vec<String>)> = Vec::new();
    for b in units.iter().flat_map(|u| &u.bindable).filter(|b| b.param) {
        match builders.iter_mut().find(|(n, _)| *n == b.builder) {
            Some((_, ps)) if !ps.contains(&b.name) => ps.push(b.name.clone()),
            Some(_) => {}
            None => builders.push((b.builder.clone(), vec![b.name.clone()])),
        }
    }
    let mut dims: Vec<&str> = Vec::new();
    for d in units.iter().flat_map(|u| &u.dyn_syms) {
        if !dims.contains(&d.as_str()) {
            dims.push(d);
        }
    }
    let mut known: Vec<String> =
        builders.iter().map(|(b, ps)| format!("`{b}` takes {}", ps.join(", "))).collect();
    if !dims.is_empty() {
        known.push(format!("dynamic dimensions: {}", dims.join(", ")));
    }
    let names = unknown.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    if known.is_empty() {
        format!("--bind {names}: the program has no builder parameter or dynamic dimension to bind")
    } else {
        format!("--bind {names}: no such builder parameter or dynamic dimension ({})", known.join("; "))
    }
}
