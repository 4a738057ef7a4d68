//! Program-building functions as users write them: `if`/`elif` chains on bound parameters
//! fold (tuple and augmented assignments included), string, bool and float bindings, one
//! diagnostic per unbound parameter, and units listed — and lowered — one at a time.

use pld_frontend::{bind_value, parse_module, parse_program, parse_programs, BindKind, ParseOptions};
use pld_ir::{ExprKind, SourceMap};

const HEAD: &str =
    "import pypto.language as pl\nimport pypto.language.distributed as pld\n\nNR = pl.dynamic(\"NR\")\n\n";

/// A builder choosing its signal shape by mode, the reference's system-test way.
const MODES: &str = r#"
def build(mode: str, rows: int = 4, pipelined: bool = False):
    if mode == "ring":
        sig_rows, sig_cols = 2 * (NR - 1), NR
    elif mode == "mesh" and not pipelined:
        sig_rows, sig_cols = NR, 1
    elif mode == "mesh":
        sig_rows, sig_cols = NR, 2
    else:
        raise ValueError("unknown mode")
    data_rows = rows * 2 if pipelined else rows
    data_rows += 2

    @pl.program
    class Modes:
        @pl.function(type=pl.FunctionType.InCore)
        def k(
            self,
            data: pl.InOut[pld.DistributedTensor[[data_rows, 64], pl.FP32]],
            sig: pl.InOut[pld.DistributedTensor[[sig_rows, sig_cols], pl.INT32]],
        ):
            return

        @pl.function(type=pl.FunctionType.InCore)
        def k2(self, sig: pl.InOut[pld.DistributedTensor[[sig_rows, sig_cols], pl.INT32]]):
            return

    return Modes
"#;

fn bindings(pairs: &[(&str, &str)]) -> ParseOptions {
    let _ = pld_ops::registry();
    ParseOptions {
        bindings: pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    }
}

/// A diagnostic as `(message, line, col, notes, label count)`.
type Seen = (String, usize, usize, Vec<String>, usize);

/// The printed parameter types of the only function of the only unit.
fn param_types(src: &str, opts: &ParseOptions) -> Result<Vec<String>, Vec<Seen>> {
    let mut sm = SourceMap::new();
    match parse_program(&mut sm, "b.py", src, opts) {
        Ok(p) => Ok(p.functions[0].param_types().iter().map(|t| t.to_string()).collect()),
        Err(d) => Err(d
            .iter()
            .map(|d| {
                let (_, l, c) = d.location(&sm).expect("located");
                (d.message.clone(), l, c, d.notes.clone(), d.labels.len())
            })
            .collect()),
    }
}

#[test]
fn an_if_elif_chain_on_bound_parameters_folds_with_tuple_assignments() {
    let src = format!("{HEAD}{MODES}");
    let ring = param_types(&src, &bindings(&[("mode", "ring")])).expect("ring builds");
    assert_eq!(ring[1], "pld.DistributedTensor[[2 * (NR - 1), NR], pl.INT32]");
    assert_eq!(ring[0], "pld.DistributedTensor[[6, 64], pl.FP32]");
    let mesh = param_types(&src, &bindings(&[("mode", "\"mesh\"")])).expect("a quoted string binds too");
    assert_eq!(mesh[1], "pld.DistributedTensor[[NR, 1], pl.INT32]");
    let piped = param_types(&src, &bindings(&[("mode", "mesh"), ("pipelined", "True"), ("rows", "3")]))
        .expect("builds");
    assert_eq!(
        piped,
        vec!["pld.DistributedTensor[[8, 64], pl.FP32]", "pld.DistributedTensor[[NR, 2], pl.INT32]"]
    );
}

#[test]
fn the_raise_a_binding_reaches_is_the_error() {
    let src = format!("{HEAD}{MODES}");
    let err = param_types(&src, &bindings(&[("mode", "tree")])).expect_err("raises");
    assert_eq!(err.len(), 1, "{err:?}");
    assert_eq!(
        (err[0].0.as_str(), err[0].1, err[0].2),
        ("`build` raises here with the bound values, so it builds no program", 15, 9)
    );
}

#[test]
fn an_unbound_parameter_is_one_diagnostic_at_its_first_use() {
    let src = format!("{HEAD}{MODES}");
    let err = param_types(&src, &bindings(&[])).expect_err("mode is unbound");
    assert_eq!(err.len(), 1, "{err:?}");
    let (msg, line, col, notes, labels) = &err[0];
    assert_eq!(
        msg,
        "`sig_rows` depends on `mode`, which is a parameter of the enclosing Python function `build`; its value is only known at run time"
    );
    assert_eq!((*line, *col), (25, 50));
    assert_eq!(notes, &vec!["bind it with `--bind mode=VALUE`".to_string()]);
    assert_eq!(*labels, 1, "the use in `k2` is a label of the same diagnostic");
}

#[test]
fn bindings_are_checked_against_the_annotation() {
    let int = |t: &str| bind_value(t, BindKind::Int).map(|e| e.kind);
    assert_eq!(int("8"), Ok(ExprKind::Int(8)));
    assert_eq!(int("-3"), Ok(ExprKind::Int(-3)));
    assert_eq!(int("eight"), Err("`eight` is not an integer (the parameter is an `int`)".into()));
    assert_eq!(
        int("9223372036854775808"),
        Err("`9223372036854775808` is out of range (an integer binding must fit in 64 signed bits)".into())
    );
    assert_eq!(bind_value("ring", BindKind::Str).map(|e| e.kind), Ok(ExprKind::Str("ring".into())));
    assert_eq!(bind_value("42", BindKind::Str).map(|e| e.kind), Ok(ExprKind::Str("42".into())));
    assert_eq!(bind_value("False", BindKind::Bool).map(|e| e.kind), Ok(ExprKind::Bool(false)));
    assert_eq!(bind_value("true", BindKind::Bool).map(|e| e.kind), Ok(ExprKind::Bool(true)));
    assert!(bind_value("1", BindKind::Bool).is_err());
    assert!(matches!(bind_value("2.5", BindKind::Float).map(|e| e.kind), Ok(ExprKind::Float(_))));
    assert_eq!(
        bind_value("pl.FP16", BindKind::Any).map(|e| e.kind),
        Ok(ExprKind::DType(pld_ir::DataType::FP16))
    );
    assert_eq!(bind_value("ring", BindKind::Any).map(|e| e.kind), Ok(ExprKind::Str("ring".into())));
    assert!(bind_value("1 +", BindKind::Any).is_err());
}

/// Two builders, each needing its own parameter.
const TWO: &str = r#"
def build_a(n: int):
    @pl.program
    class A:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[n, 16], pl.FP32]):
            return

    return A


def build_b(flag: bool, scale: float = 0.5):
    if flag and scale < 1:
        cols = 32
    else:
        cols = 64

    @pl.program
    class B:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[4, cols], pl.FP32]):
            return

    return B
"#;

#[test]
fn units_are_listed_without_lowering_and_a_selection_lowers_only_itself() {
    let src = format!("{HEAD}{TWO}");
    let mut sm = SourceMap::new();
    let units = parse_module(&mut sm, "two.py", &src).expect("parses").units(&bindings(&[]));
    let names: Vec<&str> = units.iter().map(|u| u.name.as_str()).collect();
    assert_eq!(names, vec!["A", "B"]);
    let params = |u: &pld_frontend::UnitInfo| -> Vec<(String, String, BindKind)> {
        u.bindable.iter().filter(|b| b.param).map(|b| (b.builder.clone(), b.name.clone(), b.kind)).collect()
    };
    assert_eq!(params(&units[0]), vec![("build_a".into(), "n".into(), BindKind::Int)]);
    assert_eq!(
        params(&units[1]),
        vec![
            ("build_b".into(), "flag".into(), BindKind::Bool),
            ("build_b".into(), "scale".into(), BindKind::Float)
        ]
    );
    // B alone needs only `flag`; A's unbound `n` is never looked at.
    let opts = ParseOptions { program: Some("B".into()), ..bindings(&[("flag", "True")]) };
    let b = parse_program(&mut sm, "two.py", &src, &opts).expect("B alone");
    assert_eq!(b.functions[0].param_types()[0].to_string(), "pl.Tensor[[4, 32], pl.FP32]");
    // Every unit at once needs both.
    let err = parse_programs(&mut sm, "two.py", &src, &bindings(&[("flag", "True")])).expect_err("n unbound");
    assert_eq!(err.len(), 1);
    assert_eq!(err.0[0].notes, vec!["bind it with `--bind n=VALUE`".to_string()]);
}
