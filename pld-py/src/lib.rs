//! # pld-py — pld's bridge to the system `python3`
//!
//! Runs the Python parts of a pld program that pld cannot compile: host callbacks
//! (`@pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)`, through [`Bridge`], which
//! implements [`pld_sim::HostCallbacks`]) and NumPy golden functions ([`Python::golden`]).
//!
//! Guarantees: one `python3` process per call, in a fresh temporary directory that is removed
//! afterwards; tensors cross as `.npy` files (BF16 as float32 values, since NumPy has no
//! bfloat16); the program file is never imported as a module and pypto is never needed — the
//! embedded driver (`bridge.py`) runs the file's module-level imports, constants and plain
//! helpers, then the one function, compiled without its decorators. Every way a call can fail
//! (no interpreter, no numpy, a module the code imports is missing, an exception in the user's
//! code, results of the wrong shape or dtype, a timeout) is a [`CallbackError`] saying which
//! one, with the traceback's last lines; nothing is returned that the Python code did not
//! compute.

use pld_ir::{DataType, Direction, SourceMap};
use pld_sim::{CallbackArg, CallbackError, HostCall, HostCallbacks, HostTensor};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The driver run by `python3` (see its header comment for the protocol).
const BRIDGE_PY: &str = include_str!("bridge.py");

/// Environment variable naming the interpreter (default `python3`).
pub const PYTHON_ENV: &str = "PLD_PYTHON";

/// Environment variable bounding one call, in seconds (default 600).
pub const TIMEOUT_ENV: &str = "PLD_PY_TIMEOUT_SECS";

/// The interpreter and the limits of one call.
#[derive(Clone, Debug)]
pub struct Python {
    /// Interpreter to run.
    pub exe: String,
    /// Longest a call may take before it is killed.
    pub timeout: Duration,
}

impl Python {
    /// `$PLD_PYTHON` (else `python3`), with `$PLD_PY_TIMEOUT_SECS` (else 600 s).
    pub fn from_env() -> Python {
        let exe =
            std::env::var(PYTHON_ENV).ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "python3".into());
        let secs = std::env::var(TIMEOUT_ENV).ok().and_then(|s| s.parse().ok()).unwrap_or(600);
        Python { exe, timeout: Duration::from_secs(secs) }
    }

    /// The same interpreter with calls bounded by `limit` too (the run's `--timeout`), so a
    /// callback that never returns cannot outlast the run's wall-clock limit.
    pub fn within(mut self, limit: Option<Duration>) -> Python {
        if let Some(t) = limit {
            self.timeout = self.timeout.min(t);
        }
        self
    }
}

/// A value of the golden function's `params` dict.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// An integer (`ranks`, integer binds).
    Int(i64),
    /// A float bind.
    Float(f64),
    /// A boolean bind.
    Bool(bool),
    /// Any other bind, as written.
    Str(String),
}

impl ParamValue {
    /// A `--bind` value: integer, float, `True`/`False`, else the string.
    pub fn parse(s: &str) -> ParamValue {
        if let Ok(v) = s.parse::<i64>() {
            return ParamValue::Int(v);
        }
        if let Ok(v) = s.parse::<f64>() {
            return ParamValue::Float(v);
        }
        match s {
            "True" | "true" => ParamValue::Bool(true),
            "False" | "false" => ParamValue::Bool(false),
            _ => ParamValue::Str(s.to_string()),
        }
    }

    /// The JSON value (a non-finite float is `null`).
    fn json(&self) -> Value {
        match self {
            ParamValue::Int(v) => json!(v),
            ParamValue::Float(v) => json!(v),
            ParamValue::Bool(b) => json!(b),
            ParamValue::Str(s) => json!(s),
        }
    }
}

/// One tensor parameter of a golden run.
#[derive(Clone, Debug)]
pub struct GoldenTensor {
    /// Parameter name (the key in `tensors`).
    pub name: String,
    /// Direction: the `Out`/`InOut` ones are returned.
    pub dir: Direction,
    /// Its value before the run (inputs: the run's inputs; outputs: their initial values).
    pub tensor: HostTensor,
}

/// What a golden function computed.
#[derive(Clone, Debug)]
pub struct Golden {
    /// The function that ran (`golden_<entry>` or `golden`).
    pub function: String,
    /// Expected final value of each `Out`/`InOut` parameter, in parameter order.
    pub outputs: Vec<(String, HostTensor)>,
}

impl Python {
    /// Runs the first of `candidates` that `file` (name, text) defines at module level as
    /// `golden(tensors, params)` and returns the expected `Out`/`InOut` values.
    pub fn golden(
        &self,
        file: (&str, &str),
        candidates: &[String],
        tensors: &[GoldenTensor],
        params: &[(String, ParamValue)],
    ) -> Result<Golden, CallbackError> {
        let s = Session::new()?;
        let mut entries = Vec::new();
        for (i, t) in tensors.iter().enumerate() {
            let (fname, dtype) = s.write_tensor(i, &t.tensor)?;
            entries.push(json!({
                "name": t.name,
                "dir": dir_name(t.dir),
                "kind": "tensor",
                "file": fname,
                "dtype": dtype,
                "shape": t.tensor.shape,
            }));
        }
        let gp: Vec<Value> = params.iter().map(|(k, v)| json!([k, v.json()])).collect();
        let manifest = json!({
            "mode": "golden",
            "file": file.0,
            "candidates": candidates,
            "params": entries,
            "golden_params": gp,
        });
        let res = s.run(self, &manifest, file.1)?;
        let mut outputs = Vec::new();
        for (i, t) in tensors.iter().enumerate() {
            if t.dir != Direction::In {
                outputs.push((t.name.clone(), s.read_tensor(i, &t.tensor)?));
            }
        }
        Ok(Golden { function: res.get("golden").unwrap_or_default(), outputs })
    }
}

/// Runs host callbacks through [`Python`], finding each callback's source in `sources`.
#[derive(Debug)]
pub struct Bridge {
    python: Python,
    sources: SourceMap,
    binds: Vec<(String, ParamValue)>,
}

impl Bridge {
    /// A bridge for a program parsed into `sources`; `binds` (the `--bind` values) are visible
    /// to callbacks as globals, as a builder's parameters are to the functions it defines.
    pub fn new(python: Python, sources: SourceMap, binds: Vec<(String, ParamValue)>) -> Bridge {
        Bridge { python, sources, binds }
    }
}

impl HostCallbacks for Bridge {
    fn call(&self, call: &mut HostCall) -> Result<Vec<String>, CallbackError> {
        let file = self.sources.get(call.span.file).ok_or_else(|| CallbackError {
            message: "its source file is not known".into(),
            notes: vec!["a host callback runs from the program's source text".into()],
        })?;
        let (line, _) = file.line_col(call.span.lo);
        let s = Session::new()?;
        let mut entries = Vec::new();
        for (i, p) in call.params.iter().enumerate() {
            let (name, dir) = (&p.name, dir_name(p.dir));
            entries.push(match &p.value {
                CallbackArg::Tensor(t) => {
                    let (fname, dtype) = s.write_tensor(i, t)?;
                    json!({ "name": name, "dir": dir, "kind": "tensor", "file": fname, "dtype": dtype })
                }
                CallbackArg::Int(v) => json!({ "name": name, "dir": dir, "kind": "scalar", "value": v }),
                CallbackArg::Float(v) => {
                    json!({ "name": name, "dir": dir, "kind": "scalar", "value": ParamValue::Float(*v).json() })
                }
                CallbackArg::Bool(v) => json!({ "name": name, "dir": dir, "kind": "scalar", "value": v }),
            });
        }
        let binds: serde_json::Map<String, Value> =
            self.binds.iter().map(|(k, v)| (k.clone(), v.json())).collect();
        let manifest = json!({
            "mode": "callback",
            "file": file.name,
            "function": call.name,
            "line": line,
            "params": entries,
            "binds": binds,
        });
        let res = s.run(&self.python, &manifest, &file.text)?;
        for (i, p) in call.params.iter_mut().enumerate() {
            if p.dir == Direction::In {
                continue;
            }
            if let CallbackArg::Tensor(t) = &p.value {
                let back = s.read_tensor(i, t)?;
                p.value = CallbackArg::Tensor(back);
            }
        }
        Ok(res.all("warnings"))
    }
}

fn dir_name(d: Direction) -> &'static str {
    match d {
        Direction::In => "in",
        Direction::Out => "out",
        Direction::InOut => "inout",
    }
}

/// The NumPy type string a tensor of `dtype` crosses as (BF16 crosses as float32 values).
fn crossing_type(dtype: DataType) -> Option<&'static str> {
    match dtype {
        DataType::BF16 => Some("<f4"),
        d => d.numpy_descr(),
    }
}

fn err(message: impl Into<String>) -> CallbackError {
    CallbackError { message: message.into(), notes: Vec::new() }
}

/// The `key value` lines of result.txt.
struct Outcome(Vec<(String, String)>);

impl Outcome {
    fn get(&self, key: &str) -> Option<String> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    }

    fn all(&self, key: &str) -> Vec<String> {
        self.0.iter().filter(|(k, _)| k == key).map(|(_, v)| v.clone()).collect()
    }
}

/// One call's temporary directory (removed on drop).
struct Session {
    dir: PathBuf,
}

impl Session {
    fn new() -> Result<Session, CallbackError> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let name = format!("pld-py-{}-{}-{nanos}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&dir).map_err(|e| err(format!("cannot create {}: {e}", dir.display())))?;
        Ok(Session { dir })
    }

    fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, CallbackError> {
        let p = self.dir.join(name);
        std::fs::write(&p, bytes).map_err(|e| err(format!("cannot write {}: {e}", p.display())))?;
        Ok(p)
    }

    /// Writes tensor `i` as `i.npy`; returns the file name and the type string it crossed as.
    fn write_tensor(&self, i: usize, t: &HostTensor) -> Result<(String, &'static str), CallbackError> {
        use npyz::WriterBuilder;
        let ts =
            crossing_type(t.dtype).ok_or_else(|| err(format!("dtype {} cannot cross to Python", t.dtype)))?;
        let crossing = if t.dtype == DataType::BF16 {
            HostTensor::from_f64(DataType::FP32, t.shape.clone(), &t.to_f64())
        } else {
            t.clone()
        };
        let dtype = npyz::DType::Plain(ts.parse().map_err(|e| err(format!("type string {ts}: {e}")))?);
        let shape: Vec<u64> = t.shape.iter().map(|&d| d as u64).collect();
        let mut out = Vec::with_capacity(128 + crossing.data.len());
        npyz::WriteOptions::new_header_only()
            .dtype(dtype)
            .shape(&shape)
            .writer(&mut out)
            .write_header_only()
            .map_err(|e| err(e.to_string()))?;
        out.extend_from_slice(&crossing.data);
        let name = format!("{i}.npy");
        self.write(&name, &out)?;
        Ok((name, ts))
    }

    /// Reads result `out_i.npy`, which must have `like`'s shape and crossing dtype.
    fn read_tensor(&self, i: usize, like: &HostTensor) -> Result<HostTensor, CallbackError> {
        let p = self.dir.join(format!("out_{i}.npy"));
        let bytes = std::fs::read(&p).map_err(|e| err(format!("no result {}: {e}", p.display())))?;
        let npy = npyz::NpyFile::new(&bytes[..]).map_err(|e| err(format!("result {i} is not .npy: {e}")))?;
        let want = crossing_type(like.dtype).unwrap_or("?");
        let got = match npy.dtype() {
            npyz::DType::Plain(ts) => ts.to_string(),
            other => return Err(err(format!("result {i} has a structured dtype {other:?}"))),
        };
        let norm = |s: &str| s.replace(['|', '='], "<");
        let shape: Vec<usize> = npy.shape().iter().map(|&d| d as usize).collect();
        if norm(&got) != norm(want) || shape != like.shape {
            return Err(err(format!(
                "a result came back as {got} {shape:?}, but the tensor is {} {:?} ({want})",
                like.dtype, like.shape
            )));
        }
        let eb = if like.dtype == DataType::BF16 { 4 } else { like.dtype.bytes() as usize };
        let nbytes = like.numel() * eb;
        let off = bytes.len().checked_sub(nbytes).ok_or_else(|| err(format!("result {i} is truncated")))?;
        let data = bytes[off..].to_vec();
        if like.dtype == DataType::BF16 {
            let vals = HostTensor { dtype: DataType::FP32, shape: shape.clone(), data }.to_f64();
            return Ok(HostTensor::from_f64(DataType::BF16, shape, &vals));
        }
        Ok(HostTensor { dtype: like.dtype, shape, data })
    }

    /// Runs the driver on `manifest` with the program text `source`.
    fn run(&self, py: &Python, manifest: &Value, source: &str) -> Result<Outcome, CallbackError> {
        let bridge = self.write("bridge.py", BRIDGE_PY.as_bytes())?;
        self.write("source.py", source.as_bytes())?;
        let manifest = self.write("manifest.json", manifest.to_string().as_bytes())?;
        let stderr_path = self.dir.join("stderr.txt");
        let stderr = std::fs::File::create(&stderr_path)
            .map_err(|e| err(format!("cannot create stderr file: {e}")))?;
        let mut child = Command::new(&py.exe)
            .arg("-B")
            .arg(&bridge)
            .arg(&manifest)
            .stdin(Stdio::null())
            .stdout(Stdio::inherit())
            .stderr(stderr)
            .spawn()
            .map_err(|e| CallbackError {
                message: format!("cannot start `{}`: {e}", py.exe),
                notes: vec![format!(
                    "host callbacks and goldens run in the system python3 with numpy; install python3, or set {PYTHON_ENV} to an interpreter"
                )],
            })?;
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if start.elapsed() > py.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(CallbackError {
                        message: format!("python3 did not finish within {:.1} s", py.timeout.as_secs_f64()),
                        notes: vec![format!(
                            "raise the limit with {TIMEOUT_ENV}=SECONDS (and pld run --timeout)"
                        )],
                    });
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(err(format!("waiting for python3: {e}"))),
            }
        };
        let Ok(text) = std::fs::read_to_string(self.dir.join("result.txt")) else {
            let tail = tail_lines(&stderr_path, 6);
            return Err(CallbackError {
                message: format!("`{}` exited with {status} and no result", py.exe),
                notes: tail,
            });
        };
        let lines: Vec<(String, String)> = text
            .lines()
            .filter_map(|l| l.split_once(' ').map(|(k, v)| (k.to_string(), v.to_string())))
            .collect();
        let out = Outcome(lines);
        if out.get("status").as_deref() == Some("ok") {
            return Ok(out);
        }
        Err(CallbackError {
            message: out.get("message").unwrap_or_else(|| "the Python side failed".into()),
            notes: out.all("notes"),
        })
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn tail_lines(path: &Path, n: usize) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bind_values_parse_by_kind_and_nan_is_json_null() {
        assert_eq!(ParamValue::parse("4"), ParamValue::Int(4));
        assert_eq!(ParamValue::parse("0.5"), ParamValue::Float(0.5));
        assert_eq!(ParamValue::parse("True"), ParamValue::Bool(true));
        assert_eq!(ParamValue::parse("ring"), ParamValue::Str("ring".into()));
        assert_eq!(ParamValue::Float(f64::NAN).json(), Value::Null);
        assert_eq!(crossing_type(DataType::BF16), Some("<f4"));
    }

    #[test]
    fn bf16_crosses_as_float32_and_rounds_back() {
        let s = Session::new().unwrap();
        let t = HostTensor::from_f64(DataType::BF16, vec![3], &[1.0, -2.5, 3.0]);
        let (name, ts) = s.write_tensor(0, &t).unwrap();
        assert_eq!((name.as_str(), ts), ("0.npy", "<f4"));
        // Play Python: the result file is the float32 array, one value nudged below BF16's step.
        let bytes = std::fs::read(s.dir.join("0.npy")).unwrap();
        let mut out = bytes.clone();
        let n = out.len();
        out[n - 4..].copy_from_slice(&3.0001f32.to_le_bytes());
        std::fs::write(s.dir.join("out_0.npy"), out).unwrap();
        let back = s.read_tensor(0, &t).unwrap();
        assert_eq!(back, t, "3.0001 rounds to BF16 3.0");
        let dir = s.dir.clone();
        drop(s);
        assert!(!dir.exists(), "the session directory is removed");
    }
}
