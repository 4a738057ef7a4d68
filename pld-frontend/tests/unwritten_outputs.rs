//! The frontend's warning channel (`Module::programs_and_warnings`): a `pl.Out` parameter that
//! no path of its function writes is a warning at the parameter; writing it through an op, a
//! view, a loop carry, a callee's `pl.Out` parameter or a `return` is a write (D-fe-15).

use pld_frontend::{parse_module, ParseOptions};
use pld_ir::{Severity, SourceMap};

const PROGRAM: &str = r#"import pypto.language as pl

N = 64


@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def store_in_loop(self, x: pl.Tensor[[4, N], pl.FP32], y: pl.Out[pl.Tensor[[4, N], pl.FP32]]):
        for i, (acc,) in pl.range(4, init_values=(y,)):
            t = pl.load(x, [i, 0], [1, N])
            acc = pl.store(t, [i, 0], acc)
            acc = pl.yield_(acc)

    @pl.function(type=pl.FunctionType.InCore)
    def reads_only(self, x: pl.Tensor[[4, N], pl.FP32], y: pl.Tensor[[4, N], pl.FP32]):
        t = pl.load(y, [0, 0], [1, N])

    @pl.function(type=pl.FunctionType.Orchestration)
    def passes_to_out(self, x: pl.Tensor[[4, N], pl.FP32], y: pl.Out[pl.Tensor[[4, N], pl.FP32]]):
        self.store_in_loop(x, y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def passes_to_input(self, x: pl.Tensor[[4, N], pl.FP32], y: pl.Out[pl.Tensor[[4, N], pl.FP32]]):
        self.reads_only(x, y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def returns_it(self, x: pl.Tensor[[4, N], pl.FP32], y: pl.Out[pl.Tensor[[4, N], pl.FP32]]):
        return self.store_in_loop(x, y)
"#;

#[test]
fn only_the_output_no_path_writes_is_warned_about() {
    let _ = pld_ops::registry();
    let mut sources = SourceMap::new();
    let module = parse_module(&mut sources, "p.py", PROGRAM).expect("syntax");
    let (programs, warnings) = module.programs_and_warnings(&ParseOptions::default()).expect("accepted");
    assert_eq!(programs.len(), 1);
    let messages: Vec<&str> = warnings.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        ["output `y` of `passes_to_input` is never written"],
        "{}",
        warnings.render(&sources)
    );
    assert!(warnings.iter().all(|d| d.severity == Severity::Warning));
    let text = warnings.render(&sources);
    assert!(text.starts_with("warning: output `y`"), "{text}");
    assert!(text.contains("p.py:24:62"), "at the parameter's line: {text}");
}
