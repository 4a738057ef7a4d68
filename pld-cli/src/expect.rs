//! Checked outputs of `pld run`: `--expect NAME=PATH.npy` (repeatable) and `--check-golden`
//! (the program file's NumPy golden function, run through `pld-py`), with `--rtol`/`--atol`.
//!
//! Guarantees: every checked output prints one line — its max abs / rel error and, when it
//! differs, the count of wrong elements and the first few wrong indices with both values (the
//! nccl-tests "#wrong" habit); floats compare as `|got - want| <= atol + rtol * |want|` with
//! defaults by dtype (NaN matches NaN only), integers and booleans exactly. Any differing
//! output is exit 4 ([`Failure::Mismatch`]); an unknown NAME, a shape or dtype that does not
//! match, or a golden that cannot run is a usage error (exit 2).

use crate::driver::Failure;
use crate::npy;
use clap::Args;
use pld_ir::{DataType, Direction, Function};
use pld_sim::HostTensor;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How many wrong indices a mismatch line shows.
const SHOW_WRONG: usize = 5;

/// The output-checking flags of `pld run`.
#[derive(Args, Clone, Default)]
pub struct CheckArgs {
    /// Compare an output with an expected array: NAME=PATH.npy (repeatable); exit 4 if it differs.
    #[arg(long = "expect", value_name = "NAME=PATH.npy")]
    pub expect: Vec<String>,
    /// Run the file's NumPy golden (`golden_<entry>` or `golden`) and compare every output.
    #[arg(long)]
    pub check_golden: bool,
    /// Relative tolerance for float outputs (default by dtype: FP32 1e-5, FP16 1e-3, BF16 1e-2).
    #[arg(long, value_parser = parse_tolerance)]
    pub rtol: Option<f64>,
    /// Absolute tolerance for float outputs (default by dtype: FP32 1e-5, FP16 1e-3, BF16 1e-2).
    #[arg(long, value_parser = parse_tolerance)]
    pub atol: Option<f64>,
}

/// A tolerance: a non-negative number (`inf` accepts every finite difference). A NaN or
/// negative one would fail every comparison that is not exact, so it is a usage error.
fn parse_tolerance(s: &str) -> Result<f64, String> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| *v >= 0.0)
        .ok_or_else(|| format!("`{s}` is not a non-negative number"))
}

impl CheckArgs {
    /// Whether any check was asked for.
    pub fn any(&self) -> bool {
        !self.expect.is_empty() || self.check_golden
    }
}

/// What the golden needs besides the outputs.
pub struct GoldenCx<'a> {
    /// The program file.
    pub file: &'a Path,
    /// The host entry that ran.
    pub entry: &'a str,
    /// Its function (parameter names and directions).
    pub func: &'a Function,
    /// The values every parameter started with.
    pub inputs: &'a HashMap<String, HostTensor>,
    /// World size.
    pub ranks: usize,
    /// `--bind` values.
    pub binds: &'a [(String, String)],
}

/// What the checks found: the wrong elements over every checked output (the results
/// table's `#wrong`) and the outputs that differ.
pub struct Verdict {
    /// Wrong elements, summed over the checked outputs.
    pub wrong: u64,
    /// Outputs checked.
    pub checked: usize,
    /// Names of the outputs that differ.
    pub differ: Vec<String>,
}

impl Verdict {
    /// `Ok` when no output differs, else the mismatch (exit 4).
    pub fn into_result(self) -> Result<(), Failure> {
        if self.differ.is_empty() {
            return Ok(());
        }
        Err(Failure::Mismatch(format!(
            "{} of {} checked output(s) differ: {}",
            self.differ.len(),
            self.checked,
            self.differ.join(", ")
        )))
    }
}

/// Runs the requested checks on `outputs`, printing one line per checked output (with
/// `print`; else only those that differ); a usage problem (unknown output, shape, golden that
/// cannot run) is the error.
pub fn check(
    args: &CheckArgs,
    outputs: &HashMap<String, HostTensor>,
    cx: &GoldenCx<'_>,
    print: bool,
) -> Result<Verdict, Failure> {
    let mut wanted: Vec<(String, String, HostTensor)> = Vec::new();
    for spec in &args.expect {
        let (name, path) = split_spec(spec)?;
        let got = outputs
            .get(name)
            .ok_or_else(|| no_output(cx.entry, name, outputs.keys().map(String::as_str).collect()))?;
        let want = npy::read(&PathBuf::from(path), got.dtype)
            .map_err(|e| Failure::usage(format!("--expect {name}: {e}")))?;
        if want.shape != got.shape {
            return Err(Failure::usage(format!(
                "--expect {name}: {path} has shape {:?}, the output is {:?}",
                want.shape, got.shape
            )));
        }
        wanted.push((name.to_string(), path.to_string(), want));
    }
    if args.check_golden {
        let g = golden(cx)?;
        if print {
            outln!("  golden: {} (python3)", g.function);
        }
        for (name, want) in g.outputs {
            wanted.push((name, g.function.clone(), want));
        }
    }
    let mut v = Verdict { wrong: 0, checked: wanted.len(), differ: Vec::new() };
    for (name, from, want) in &wanted {
        let Some(got) = outputs.get(name) else { continue };
        let (rtol, atol) = tolerances(got.dtype, args);
        let c = compare(got, want, rtol, atol);
        if print || c.wrong > 0 {
            outln!("  check {name} vs {from}: {}", c.describe(got.dtype, rtol, atol));
        }
        if c.wrong > 0 {
            v.wrong += c.wrong as u64;
            v.differ.push(name.clone());
        }
    }
    Ok(v)
}

/// `(rtol, atol)` for `dtype`: zero for integers and booleans, the flags or a dtype default
/// for floats.
pub fn tolerances(dtype: DataType, args: &CheckArgs) -> (f64, f64) {
    if !dtype.is_float() {
        return (0.0, 0.0);
    }
    let default = match dtype {
        DataType::FP16 => 1e-3,
        DataType::BF16 => 1e-2,
        _ => 1e-5,
    };
    (args.rtol.unwrap_or(default), args.atol.unwrap_or(default))
}

/// The result of comparing one output.
pub struct Comparison {
    /// Elements outside the tolerance.
    pub wrong: usize,
    /// Elements compared.
    pub total: usize,
    /// Largest `|got - want|` (NaN pairs left out).
    pub max_abs: f64,
    /// Largest `|got - want| / |want|` over non-zero `want`.
    pub max_rel: f64,
    /// The first wrong elements: (flat index, got, want).
    pub first: Vec<(usize, f64, f64)>,
    shape: Vec<usize>,
}

impl Comparison {
    fn describe(&self, dtype: DataType, rtol: f64, atol: f64) -> String {
        let tol = if dtype.is_float() { format!("rtol {rtol:e}, atol {atol:e}") } else { "exact".into() };
        let rel = if self.max_rel == 0.0 { "0".to_string() } else { format!("{:.3e}", self.max_rel) };
        let errs = format!("max abs err {}, max rel err {rel}", fmt(self.max_abs));
        if self.wrong == 0 {
            return format!("ok, {} elements, {errs} ({tol})", self.total);
        }
        let shown: Vec<String> = self
            .first
            .iter()
            .map(|&(i, g, w)| {
                format!("{:?} got {} want {}", unflatten(i, &self.shape), value(dtype, g), value(dtype, w))
            })
            .collect();
        format!(
            "MISMATCH #wrong {} of {}, {errs} ({tol}); first wrong: {}",
            self.wrong,
            self.total,
            shown.join("; ")
        )
    }
}

/// Compares `got` with `want` (same shape) element by element.
pub fn compare(got: &HostTensor, want: &HostTensor, rtol: f64, atol: f64) -> Comparison {
    let (g, w) = (got.to_f64(), want.to_f64());
    let mut c = Comparison {
        wrong: 0,
        total: g.len(),
        max_abs: 0.0,
        max_rel: 0.0,
        first: Vec::new(),
        shape: got.shape.clone(),
    };
    for (i, (&a, &e)) in g.iter().zip(&w).enumerate() {
        let ok = if a.is_nan() || e.is_nan() {
            a.is_nan() && e.is_nan()
        } else if a == e {
            true
        } else {
            let d = (a - e).abs();
            c.max_abs = c.max_abs.max(d);
            if e != 0.0 {
                c.max_rel = c.max_rel.max(d / e.abs());
            }
            d <= atol + rtol * e.abs()
        };
        if !ok {
            c.wrong += 1;
            if c.first.len() < SHOW_WRONG {
                c.first.push((i, a, e));
            }
        }
    }
    c
}

fn unflatten(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        let n = shape[d].max(1);
        idx[d] = i % n;
        i /= n;
    }
    idx
}

/// An element as its dtype prints it: floats (all 32 bits or narrower) by their shortest
/// `f32` form (`0.1`, not `0.10000000149011612`).
fn value(dtype: DataType, v: f64) -> String {
    if dtype.is_float() && v.fract() != 0.0 && (1e-4..1e9).contains(&v.abs()) {
        return format!("{}", v as f32);
    }
    fmt(v)
}

fn fmt(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if (1e-4..1e9).contains(&v.abs()) {
        format!("{v}")
    } else {
        format!("{v:.3e}")
    }
}

/// `--expect SPEC` split into its NAME and PATH.
fn split_spec(spec: &str) -> Result<(&str, &str), Failure> {
    spec.split_once('=').ok_or_else(|| Failure::usage(format!("--expect `{spec}` is not NAME=PATH.npy")))
}

/// `--expect NAME` names no output of `entry`, whose outputs are `names`.
fn no_output(entry: &str, name: &str, mut names: Vec<&str>) -> Failure {
    names.sort_unstable();
    Failure::usage(format!(
        "--expect {name}: `{entry}` has no output `{name}` (outputs: {})",
        names.join(", ")
    ))
}

/// Before simulating, right after the program is loaded: an `--expect NAME` that is not one of
/// the entry's outputs (its `Out`/`InOut` tensor parameters, the tensors the run writes back),
/// and `--check-golden` on a file that defines no module-level golden function
/// (`def golden_<entry>(` or `def golden(`), are usage errors now, not after the run.
pub fn precheck(args: &CheckArgs, file: &Path, entry: &str, func: &Function) -> Result<(), Failure> {
    let outputs: Vec<&str> = func
        .params
        .iter()
        .filter(|p| p.dir != Direction::In && matches!(func.values.ty(p.value), pld_ir::Type::Tensor(_)))
        .map(|p| func.values.name(p.value))
        .collect();
    for spec in &args.expect {
        let (name, _) = split_spec(spec)?;
        if !outputs.contains(&name) {
            return Err(no_output(entry, name, outputs));
        }
    }
    if !args.check_golden {
        return Ok(());
    }
    let text = std::fs::read_to_string(file)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", file.display())))?;
    let names = [format!("golden_{entry}"), "golden".to_string()];
    let defines = |n: &str| {
        text.lines().any(|l| {
            l.strip_prefix("def ")
                .and_then(|r| r.strip_prefix(n))
                .is_some_and(|r| r.trim_start().starts_with('('))
        })
    };
    if names.iter().any(|n| defines(n)) {
        return Ok(());
    }
    let list: Vec<String> = names.iter().map(|n| format!("def {n}(tensors, params)")).collect();
    Err(Failure::usage(format!(
        "--check-golden: {} defines no golden function ({}), checked before running",
        file.display(),
        list.join(" or ")
    )))
}

/// Runs the file's golden on the run's initial values.
fn golden(cx: &GoldenCx<'_>) -> Result<pld_py::Golden, Failure> {
    let text = std::fs::read_to_string(cx.file)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", cx.file.display())))?;
    let mut tensors = Vec::new();
    for p in &cx.func.params {
        let name = cx.func.values.name(p.value).to_string();
        if let Some(t) = cx.inputs.get(&name) {
            tensors.push(pld_py::GoldenTensor { name, dir: p.dir, tensor: t.clone() });
        } else if p.dir != Direction::In {
            return Err(Failure::usage(format!("--check-golden: output `{name}` has no initial value")));
        }
    }
    let mut params = vec![("ranks".to_string(), pld_py::ParamValue::Int(cx.ranks as i64))];
    params.extend(cx.binds.iter().map(|(k, v)| (k.clone(), pld_py::ParamValue::parse(v))));
    let candidates = [format!("golden_{}", cx.entry), "golden".to_string()];
    let name = cx.file.display().to_string();
    pld_py::Python::from_env().golden((&name, &text), &candidates, &tensors, &params).map_err(|e| {
        let mut msg = format!("--check-golden: {}", e.message);
        for n in e.notes {
            msg.push_str("\n  = ");
            msg.push_str(&n);
        }
        Failure::usage(msg)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_compare_with_tolerance_integers_exactly() {
        let args = CheckArgs::default();
        let got = HostTensor::from_f64(DataType::FP32, vec![2, 3], &[1.0, 2.0, 3.0, 4.0, f64::NAN, 6.0]);
        let want =
            HostTensor::from_f64(DataType::FP32, vec![2, 3], &[1.0, 2.000001, 3.5, 4.0, f64::NAN, 0.0]);
        let (rtol, atol) = tolerances(DataType::FP32, &args);
        let c = compare(&got, &want, rtol, atol);
        assert_eq!(c.wrong, 2);
        assert_eq!(c.first.iter().map(|f| f.0).collect::<Vec<_>>(), vec![2, 5]);
        assert_eq!(unflatten(5, &[2, 3]), vec![1, 2]);
        assert_eq!(c.max_abs, 6.0);
        assert_eq!(value(DataType::FP32, f64::from(0.1f32)), "0.1");
        assert_eq!(value(DataType::INT32, 7.0), "7");
        let ints = HostTensor::from_f64(DataType::INT32, vec![2], &[1.0, 2.0]);
        let close = HostTensor::from_f64(DataType::INT32, vec![2], &[1.0, 3.0]);
        let (r, a) = tolerances(DataType::INT32, &CheckArgs { rtol: Some(1.0), atol: Some(5.0), ..args });
        assert_eq!((r, a), (0.0, 0.0));
        assert_eq!(compare(&ints, &close, r, a).wrong, 1);
    }
}
