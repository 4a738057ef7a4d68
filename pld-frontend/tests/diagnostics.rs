//! Every frontend diagnostic: its message, its line and column, its notes; several
//! diagnostics are collected in one run; rendering shows file:line:col and a caret.

use pld_frontend::{parse_program, parse_programs, ParseOptions};
use pld_ir::{Diagnostics, SourceMap, Type};

const HEAD: &str = "import pypto.language as pl\nimport pypto.language.distributed as pld\n\n";

/// Parses `body` (appended after the two import lines and a blank line, so it starts on
/// line 4) and returns `(message, line, col, notes)` of every diagnostic.
fn diags_with(body: &str, opts: &ParseOptions) -> Vec<(String, usize, usize, Vec<String>)> {
    let _ = pld_ops::registry();
    let src = format!("{HEAD}{body}");
    let mut sm = SourceMap::new();
    let err: Diagnostics = match parse_programs(&mut sm, "t.py", &src, opts) {
        Ok(p) => {
            panic!("expected diagnostics, got:\n{}", p.iter().map(pld_ir::print_program).collect::<String>())
        }
        Err(d) => d,
    };
    err.iter()
        .map(|d| {
            let (_, line, col) = d.location(&sm).expect("diagnostic has a location");
            (d.message.clone(), line, col, d.notes.clone())
        })
        .collect()
}

fn diags(body: &str) -> Vec<(String, usize, usize, Vec<String>)> {
    diags_with(body, &ParseOptions::default())
}

fn one(body: &str) -> (String, usize, usize, Vec<String>) {
    let mut d = diags(body);
    assert_eq!(d.len(), 1, "expected exactly one diagnostic: {d:#?}");
    d.remove(0)
}

fn incore(stmts: &str) -> String {
    format!(
        "@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n    def k(self, data: pld.DistributedTensor[[1, 64], pl.FP32], n: pl.Scalar[pl.INDEX]):\n{stmts}"
    )
}

// Line of the first statement inside `incore(...)`: HEAD is 3 lines, then 4 header lines.
const L: usize = 8;

#[test]
fn unknown_op_suggests_the_nearest_name() {
    let body = incore("        v = pld.tensor.windw(data, [1], dtype=pl.FP32)\n");
    let (msg, line, col, notes) = one(&body);
    assert_eq!(msg, "unknown op `pld.tensor.windw`");
    assert_eq!((line, col), (L, 13));
    assert!(notes.is_empty(), "{notes:?}");
    // The suggestion is a `help:` line, with the error's code.
    let mut sm = SourceMap::new();
    let err = parse_programs(&mut sm, "t.py", &format!("{HEAD}{body}"), &ParseOptions::default())
        .expect_err("unknown op");
    let d = err.iter().next().expect("one diagnostic");
    assert_eq!(d.help, ["did you mean `pld.tensor.window`?"]);
    assert_eq!(d.code(), Some(pld_ir::codes::UNKNOWN_OP));
}

#[test]
fn unknown_function_is_named() {
    let (msg, line, col, _) = one(&incore("        v = self.missing(data)\n"));
    assert_eq!(msg, "call of unknown function `missing`");
    assert_eq!((line, col), (L, 13));
}

#[test]
fn wrong_positional_count_is_reported_at_the_call() {
    let (msg, line, col, _) =
        one(&incore("        ctx = pld.get_comm_ctx(data)\n        r = pld.system.rank(ctx, 1)\n"));
    assert_eq!(msg, "pld.system.rank takes 1 positional argument, but got 2");
    assert_eq!((line, col), (L + 1, 13));
}

#[test]
fn unknown_keyword_lists_the_known_ones() {
    let (msg, line, col, notes) = one(&incore(
        "        pld.system.notify(data, peer=0, offsets=[0, 0], value=1, op=pld.NotifyOp.Set, bogus=3)\n",
    ));
    assert_eq!(msg, "unknown kwarg 'bogus' for operator 'pld.system.notify'");
    assert_eq!((line, col), (L, 87));
    assert_eq!(notes, vec!["known keyword arguments: target, peer, offsets, value, op".to_string()]);
}

#[test]
fn argument_given_twice() {
    let (msg, line, col, _) = one(&incore("        ctx = pld.get_comm_ctx(data, tensor=data)\n"));
    assert_eq!(msg, "argument `tensor` of pld.system.get_comm_ctx is given twice");
    assert_eq!((line, col), (L, 38));
}

#[test]
fn unknown_enum_member_lists_members() {
    let (msg, line, col, notes) =
        one(&incore("        pld.system.notify(data, 0, [0, 0], 1, op=pld.NotifyOp.Add)\n"));
    assert_eq!(msg, "`Add` is not a member of pld.NotifyOp");
    assert_eq!((line, col), (L, 50));
    assert_eq!(notes, vec!["members: NotifyOp.AtomicAdd or NotifyOp.Set".to_string()]);
}

#[test]
fn a_member_of_another_enum_is_rejected_at_the_value() {
    // Regression: `op=pld.WaitCmp.Ge` became NotifyOp.Set's payload 1 and passed silently.
    let (msg, line, col, notes) =
        one(&incore("        pld.system.notify(data, 0, [0, 0], 1, op=pld.WaitCmp.Ge)\n"));
    assert_eq!(
        msg,
        "kwarg 'op' for operator 'pld.system.notify' takes a pld.NotifyOp member, got pld.WaitCmp.Ge"
    );
    assert_eq!((line, col), (L, 50));
    assert_eq!(notes, vec!["members: NotifyOp.AtomicAdd or NotifyOp.Set".to_string()]);
    let (msg, _, _, _) = one(&incore("        pld.system.wait(data, [0, 0], 1, cmp=pld.ReduceOp.Max)\n"));
    assert_eq!(
        msg,
        "kwarg 'cmp' for operator 'pld.system.wait' takes a pld.WaitCmp member, got pld.ReduceOp.Max"
    );
}

#[test]
fn an_unnamed_or_shapeless_window_buffer_is_diagnosed_at_the_call() {
    // Regression: a bare call or a tuple assignment said "missing kwarg 'name'", a kwarg the
    // user never writes; an empty shape list silently allocated one element.
    let host = |stmt: &str| {
        format!(
            "@pl.program\nclass P:\n    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n    def h(self):\n{stmt}"
        )
    };
    let rhs = "pld.alloc_window_buffer must appear as the RHS of a simple assignment";
    for (stmt, col) in
        [("        pld.alloc_window_buffer(8)\n", 9), ("        a, b = pld.alloc_window_buffer(8), 0\n", 16)]
    {
        let d = diags(&host(stmt));
        assert!(
            d.iter().any(|(m, line, c, _)| m.starts_with(rhs) && (*line, *c) == (L, col)),
            "{stmt}: {d:#?}"
        );
    }
    let d = diags(&host("        b = pld.alloc_window_buffer([], dtype=pl.FP32)\n"));
    assert!(
        d.iter().any(|(m, line, c, _)| m == "pld.alloc_window_buffer shape must be non-empty"
            && (*line, *c) == (L, 37)),
        "{d:#?}"
    );
}

#[test]
fn an_integer_literal_past_64_bits_says_so() {
    // Regression: it was "not a DSL value (None, bytes and complex are not supported)".
    let (msg, line, col, _) =
        one(&incore("        pld.system.notify(data, 0, [0, 0], 99999999999999999999, op=0)\n"));
    assert_eq!(msg, "this integer literal does not fit in 64 signed bits");
    assert_eq!((line, col), (L, 44));
}

#[test]
fn a_misspelled_decorator_is_named_with_the_nearest_one() {
    // Regression: `@pl.jit.hots` left the host entry out as plain Python and check said ok.
    let src = "@pl.jit.incore\ndef k(x: pl.Tensor[[1, 64], pl.FP32]):\n    pass\n\n\n@pl.jit.hots\ndef h(x: pl.Tensor[[1, 64], pl.FP32]):\n    k(x)\n";
    let d = diags(src);
    assert!(
        d.iter().any(|(m, line, col, notes)| m == "unknown decorator `@pl.jit.hots`"
            && (*line, *col) == (9, 2)
            && notes == &vec!["did you mean `@pl.jit.host`?".to_string()]),
        "{d:#?}"
    );
    let d = diags("@pl.programm\nclass P:\n    pass\n");
    assert!(d.iter().any(|(m, line, _, _)| m == "unknown decorator `@pl.programm`" && *line == 4), "{d:#?}");
    let d = diags(&incore(
        "        pass\n\n    @pl.functon(type=pl.FunctionType.InCore)\n    def k2(self):\n        pass\n",
    ));
    assert!(
        d.iter().any(|(m, _, _, notes)| m == "unknown decorator `@pl.functon`"
            && notes == &vec!["did you mean `@pl.function`?".to_string()]),
        "{d:#?}"
    );
}

#[test]
fn enum_payload_out_of_range_comes_from_the_registry() {
    let (msg, line, col, _) = one(&incore("        pld.system.notify(data, 0, [0, 0], 1, op=7)\n"));
    assert_eq!(msg, "pld.system.notify op must be NotifyOp.AtomicAdd or NotifyOp.Set (got int 7)");
    assert_eq!((line, col), (L, 9));
}

#[test]
fn deducer_errors_carry_the_argument_span() {
    let (msg, line, col, _) = one(&incore("        w = pld.window(n, [1, 64], dtype=pl.FP32)\n"));
    assert!(msg.starts_with("pld.tensor.window 'buf' must have type Ptr"), "{msg}");
    assert_eq!((line, col), (L, 24));
}

#[test]
fn deducer_sees_the_function_kind() {
    let (msg, line, col, _) = one(&incore("        ws = pld.world_size()\n"));
    assert!(
        msg.starts_with("pld.system.world_size() can only be called in HOST orchestration context"),
        "{msg}"
    );
    assert_eq!((line, col), (L, 14));
}

#[test]
fn missing_parameter_annotation() {
    let (msg, line, col, notes) =
        one("@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n    def k(self, a: pl.Scalar[pl.INT32], b):\n        return\n");
    assert_eq!(msg, "parameter `b` of `k` has no type annotation");
    assert_eq!((line, col), (7, 41));
    assert_eq!(notes.len(), 1);
}

#[test]
fn unsupported_annotation() {
    let (msg, line, col, _) =
        one("@pl.jit.incore\ndef k(a: pl.Tensor[[4], pl.FP32], b: list[int]):\n    return\n");
    assert_eq!(msg, "unsupported type annotation");
    assert_eq!((line, col), (5, 38));
}

#[test]
fn redefinition_in_one_scope_is_rejected_in_strict_ssa() {
    let body = incore("        x = n + 1\n        x = n + 2\n");
    let opts = ParseOptions { strict_ssa: true, ..ParseOptions::default() };
    let d = diags_with(&body, &opts);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].0, "variable `x` is already defined in this scope");
    assert_eq!((d[0].1, d[0].2), (L + 1, 9));
    // The decorator can ask for it too.
    let body = "@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore, strict_ssa=True)\n    def k(self, n: pl.Scalar[pl.INDEX]):\n        y = n\n        y = n\n";
    let d = diags(body);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!((d[0].0.as_str(), d[0].1, d[0].2), ("variable `y` is already defined in this scope", 9, 9));
}

#[test]
fn reassignment_defines_a_new_value_by_default() {
    let _ = pld_ops::registry();
    let src = format!("{HEAD}{}", incore("        x = n + 1\n        x = x + 2\n        return x\n"));
    let p = pld_frontend::parse_str(&src).expect("non-strict reassignment parses");
    let f = &p.functions[0];
    assert_eq!(f.values.len(), 4, "two params and two distinct values named x");
}

#[test]
fn inner_value_used_outside_without_yield() {
    let (msg, line, col, notes) =
        one(&incore("        for i in pl.range(4):\n            t = i + n\n        return t\n"));
    assert_eq!(msg, "`t` is defined inside the for loop and used outside it without pl.yield_");
    assert_eq!((line, col), (L + 2, 16));
    assert!(notes[0].contains("init_values"), "{notes:?}");
}

#[test]
fn loop_variable_is_not_visible_after_the_loop() {
    let (msg, line, col, _) =
        one(&incore("        for i in pl.range(4):\n            pass\n        return i\n"));
    assert_eq!(msg, "`i` is defined inside the for loop and used outside it without pl.yield_");
    assert_eq!((line, col), (L + 2, 16));
}

#[test]
fn scalar_reassigned_in_an_explicit_loop_is_stale_after_it() {
    let (msg, line, col, _) = one(&incore(
        "        acc = 0\n        for i, (c,) in pl.range(4, init_values=(0,)):\n            acc = acc + i\n            c_out = pl.yield_(c)\n        return acc\n",
    ));
    assert_eq!(msg, "`acc` is reassigned inside the for loop and used after it without pl.yield_");
    assert_eq!((line, col), (L + 4, 16));
}

#[test]
fn plain_reassignment_in_a_loop_is_carried() {
    let _ = pld_ops::registry();
    let src = format!(
        "{HEAD}{}",
        incore(
            "        acc = 0\n        for i in pl.range(4):\n            acc = acc + i\n        return acc\n"
        )
    );
    let p = pld_frontend::parse_str(&src).expect("plain syntax is carried");
    let f = &p.functions[0];
    let pld_ir::StmtKind::For { iter_args, results, body, .. } = &f.body.stmts[1].kind else {
        panic!("expected a for loop: {:?}", f.body.stmts[1].kind)
    };
    assert_eq!((iter_args.len(), results.len()), (1, 1));
    assert!(matches!(body.stmts.last().map(|s| &s.kind), Some(pld_ir::StmtKind::Yield(v)) if v.len() == 1));
    let pld_ir::StmtKind::Return(r) = &f.body.stmts[2].kind else { panic!("expected return") };
    assert_eq!(r[0].as_var(), Some(results[0]), "the return reads the loop result");
}

#[test]
fn if_branch_value_used_after_without_yield() {
    let (msg, line, col, notes) = one(&incore("        if n > 0:\n            z = 1\n        return z\n"));
    assert_eq!(msg, "`z` is defined inside the if statement and used outside it without pl.yield_");
    assert_eq!((line, col), (L + 2, 16));
    assert_eq!(notes, vec!["yield it from both branches: `x = pl.yield_(value)`".to_string()]);
}

#[test]
fn yield_only_in_one_branch() {
    let (msg, line, col, _) =
        one(&incore("        if n > 0:\n            z = pl.yield_(1)\n        return\n"));
    assert_eq!(msg, "only one branch of this if ends in pl.yield_");
    assert_eq!((line, col), (L, 9));
}

#[test]
fn loop_with_init_values_needs_named_yield() {
    let (msg, line, col, _) =
        one(&incore("        for i, (a,) in pl.range(4, init_values=(0,)):\n            b = a + i\n"));
    assert_eq!(msg, "a loop with init_values must end in `names = pl.yield_(...)`");
    assert_eq!((line, col), (L, 9));
}

#[test]
fn init_values_need_a_tuple_target() {
    let (msg, line, col, _) =
        one(&incore("        for i in pl.range(4, init_values=(0,)):\n            pass\n"));
    assert_eq!(msg, "loop target must be a tuple when init_values is given");
    assert_eq!((line, col), (L, 13));
}

#[test]
fn yield_outside_a_body() {
    let (msg, line, col, _) = one(&incore("        x = pl.yield_(n)\n"));
    assert_eq!(msg, "pl.yield_ outside a loop or if body");
    assert_eq!((line, col), (L, 9));
}

#[test]
fn undefined_name() {
    let (msg, line, col, _) = one(&incore("        x = nope + 1\n"));
    assert_eq!(msg, "undefined name `nope`");
    assert_eq!((line, col), (L, 13));
}

#[test]
fn unsupported_syntax_is_diagnosed_not_panicked() {
    let d = diags(&incore(
        "        f = lambda q: q\n        for i in pl.range(3):\n            break\n        n[0] = 1\n        x = n ** 2\n",
    ));
    let got: Vec<(&str, usize, usize)> = d.iter().map(|(m, l, c, _)| (m.as_str(), *l, *c)).collect();
    assert_eq!(
        got,
        vec![
            ("unsupported expression in a DSL function", L, 13),
            ("`break` / `continue` are not supported in DSL functions", L + 2, 13),
            ("assignment to a subscript needs a tensor or a pl.Array, got ScalarType", L + 3, 9),
            ("unsupported operator (supported: + - * / // %)", L + 4, 13),
        ]
    );
}

#[test]
fn scalar_operators_reject_tensors() {
    let (msg, line, col, notes) = one(&incore("        x = data + 1\n"));
    assert_eq!(msg, "operator `+` applies to scalars, but this operand is a DistributedTensorType");
    assert_eq!((line, col), (L, 13));
    assert_eq!(notes, vec!["use the op form for tensors and tiles, e.g. pl.add(a, b)".to_string()]);
}

#[test]
fn function_call_arity_and_keywords() {
    let body = "@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n    def k(self, a: pl.Scalar[pl.INT32]):\n        return\n\n    @pl.function(type=pl.FunctionType.Orchestration)\n    def o(self, a: pl.Scalar[pl.INT32]):\n        self.k(a, a)\n        self.k(b=a)\n";
    let d = diags(body);
    let got: Vec<(&str, usize, usize)> = d.iter().map(|(m, l, c, _)| (m.as_str(), *l, *c)).collect();
    assert_eq!(
        got,
        vec![
            ("`k` takes 1 argument(s), but 2 were given", 12, 9),
            ("unknown keyword argument `b` for `k`", 13, 16),
        ]
    );
}

#[test]
fn syntax_errors_have_a_location() {
    let (msg, line, col, _) = one("@pl.jit.incore\ndef k(a: pl.Scalar[pl.INT32]:\n    return\n");
    assert!(msg.starts_with("syntax error: "), "{msg}");
    assert_eq!(line, 5);
    assert!(col >= 28, "column {col}");
}

#[test]
fn unbound_builder_parameter_is_explained_and_bindable() {
    let body = "def build(n_ranks: int):\n    nr = n_ranks\n\n    @pl.program\n    class B:\n        @pl.function(type=pl.FunctionType.InCore)\n        def k(self, s: pld.DistributedTensor[[nr, 1], pl.INT32]):\n            return\n\n    return B\n";
    let (msg, line, col, notes) = one(body);
    assert_eq!(
        msg,
        "`nr` depends on `n_ranks`, which is a parameter of the enclosing Python function `build`; its value is only known at run time"
    );
    assert_eq!((line, col), (10, 47));
    assert_eq!(notes, vec!["bind it with `--bind n_ranks=VALUE`".to_string()]);
    let opts = ParseOptions { bindings: vec![("n_ranks".into(), "4".into())], ..ParseOptions::default() };
    let mut sm = SourceMap::new();
    let p = parse_program(&mut sm, "b.py", &format!("{HEAD}{body}"), &opts).expect("binding resolves it");
    let ty = p.functions[0].param_types()[0].clone();
    assert_eq!(ty.shape().and_then(pld_ir::types::static_dims), Some(vec![4, 1]));
}

#[test]
fn several_diagnostics_are_collected_across_functions() {
    let body = "@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n    def a(self, n: pl.Scalar[pl.INDEX]):\n        x = bogus1\n        y = pl.nonexistent_op(n)\n\n    @pl.function(type=pl.FunctionType.InCore)\n    def b(self, n):\n        return\n";
    let d = diags(body);
    let got: Vec<(&str, usize, usize)> = d.iter().map(|(m, l, c, _)| (m.as_str(), *l, *c)).collect();
    assert_eq!(
        got,
        vec![
            ("parameter `n` of `b` has no type annotation", 12, 17),
            ("undefined name `bogus1`", 8, 13),
            ("unknown op `pl.nonexistent_op`", 9, 13),
        ]
    );
}

#[test]
fn several_programs_need_a_selection() {
    let _ = pld_ops::registry();
    let one_prog = |name: &str| {
        format!("@pl.program\nclass {name}:\n    @pl.function(type=pl.FunctionType.InCore)\n    def k(self, n: pl.Scalar[pl.INDEX]):\n        return\n\n")
    };
    let src = format!("{HEAD}{}{}", one_prog("First"), one_prog("Second"));
    let mut sm = SourceMap::new();
    let err = parse_program(&mut sm, "two.py", &src, &ParseOptions::default()).expect_err("ambiguous");
    assert_eq!(err.0[0].message, "two.py defines 2 programs; select one");
    assert_eq!(err.0[0].notes, vec!["programs defined: First, Second".to_string()]);
    let opts = ParseOptions { program: Some("Second".into()), ..ParseOptions::default() };
    let p = parse_program(&mut sm, "two.py", &src, &opts).expect("selected");
    assert_eq!(p.name, "Second");
    let empty =
        parse_program(&mut sm, "none.py", "import os\n", &ParseOptions::default()).expect_err("nothing");
    assert_eq!(empty.0[0].message, "no DSL program found in none.py");
}

#[test]
fn rendering_shows_file_line_column_and_caret() {
    let _ = pld_ops::registry();
    let src = format!("{HEAD}{}", incore("        v = pld.tensor.windw(data, [1], dtype=pl.FP32)\n"));
    let mut sm = SourceMap::new();
    let err = parse_program(&mut sm, "k.py", &src, &ParseOptions::default()).expect_err("unknown op");
    let text = err.render(&sm);
    assert_eq!(
        text,
        "error[E0001]: unknown op `pld.tensor.windw`\n --> k.py:8:13\n  |\n8 |         v = pld.tensor.windw(data, [1], dtype=pl.FP32)\n  |             ^^^^^^^^^^^^^^^^\n  |\n  = help: did you mean `pld.tensor.window`?\n"
    );
}

#[test]
fn a_failed_statement_does_not_cascade() {
    let (msg, line, col, _) = one(&incore(
        "        for i, (a,) in sorted(range(4), init_values=(0,)):\n            b = pl.yield_(a)\n        c = b + 1\n        d = c * 2\n",
    ));
    assert_eq!(msg, "unsupported loop iterator `sorted`");
    assert_eq!((line, col), (L, 24));
}

#[test]
fn decorator_attributes_and_host_callbacks() {
    let _ = pld_ops::registry();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus/decorators.py");
    let src = std::fs::read_to_string(path).expect("corpus file");
    let p = pld_frontend::parse_str(&src).expect("parses");
    let kinds: Vec<(&str, pld_ir::FunctionKind)> =
        p.functions.iter().map(|f| (f.name.as_str(), f.kind)).collect();
    use pld_ir::FunctionKind::*;
    assert_eq!(
        kinds,
        vec![
            ("incore", InCore),
            ("aiv", Aiv),
            ("aic", Aic),
            ("chip", ChipOrch),
            ("check", Opaque),
            ("host", Host)
        ]
    );
    assert_eq!(p.functions[0].attrs, vec![("core_num".to_string(), pld_ir::Attr::Int(4))]);
    let check = &p.functions[4];
    assert!(check.body.stmts.is_empty(), "a SubWorker body is Python, not DSL");
    assert_eq!(check.attr("role"), Some(&pld_ir::Attr::Str("SubWorker".into())));
    assert_eq!(check.params.len(), 1);
}

#[test]
fn builder_locals_fold_conditionals_and_control_flow_bindings() {
    let _ = pld_ops::registry();
    // The `if` folds once `n` is bound (Python's branch is taken); a name assigned in a
    // `for` is only known at run time unless bound.
    let body = "def build(n: int, cols=16):\n    rows = 8 if n == 1 else 2\n    if n > 4:\n        extra = 3\n    else:\n        extra = 5\n    for i in range(2):\n        more = i\n\n    @pl.program\n    class B:\n        @pl.function(type=pl.FunctionType.InCore)\n        def k(self, t: pl.Tensor[[rows, cols * extra + more], pl.FP32]):\n            return\n\n    return B\n";
    let src = format!("{HEAD}{body}");
    let shape = |bindings: Vec<(String, String)>| {
        let opts = ParseOptions { bindings, ..ParseOptions::default() };
        let mut sm = SourceMap::new();
        let p = parse_program(&mut sm, "b.py", &src, &opts).map_err(|d| d.0[0].message.clone())?;
        Ok::<_, String>(p.functions[0].param_types()[0].shape().and_then(pld_ir::types::static_dims))
    };
    assert_eq!(shape(vec![("n".into(), "1".into()), ("more".into(), "0".into())]), Ok(Some(vec![8, 80])));
    assert_eq!(shape(vec![("n".into(), "7".into()), ("more".into(), "1".into())]), Ok(Some(vec![2, 49])));
    assert_eq!(
        shape(vec![("n".into(), "7".into())]),
        Err("`more` is assigned under Python control flow in `build`; its value is only known at run time"
            .into())
    );
}

#[test]
fn the_structural_verifier_runs_on_parsed_programs() {
    let d = diags(&incore(
        "        for i, (a,) in pl.range(4, init_values=(0,)):\n            b = pl.yield_(a)\n            c = 1\n",
    ));
    let got: Vec<(&str, usize, usize)> = d.iter().map(|(m, l, c, _)| (m.as_str(), *l, *c)).collect();
    assert_eq!(
        got,
        vec![
            ("loop with 1 iter-arg(s) must end its body with a yield", L, 9),
            ("yield must be the last statement of its block", L + 1, 13),
        ]
    );
}

#[test]
fn deeply_nested_expressions_are_rejected_not_overflowed() {
    let deep = format!("{}n{}", "(".repeat(260), " + 1)".repeat(260));
    let d = diags(&incore(&format!("        x = {deep}\n")));
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].0, "expression nested more than 200 levels deep");
    assert_eq!(d[0].1, L);
}

#[test]
fn deeply_nested_statements_and_annotations_are_rejected_not_overflowed() {
    let mut body = String::from("@pl.jit.incore\ndef k(n: pl.Scalar[pl.INDEX]):\n");
    for i in 0..300 {
        let pad = "    ".repeat(i + 1);
        body.push_str(&format!(
            "{pad}{}\n",
            if i % 2 == 0 { "if n > 0:" } else { "with pl.at(level=pl.Level.CORE_GROUP):" }
        ));
    }
    body.push_str(&format!("{}x = 1\n", "    ".repeat(301)));
    let d = diags(&body);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].0, "statements nested more than 64 levels deep");
    assert_eq!(d[0].1, 4 + 2 + 65);

    let ty = format!("{}pl.Scalar[pl.INT32]{}", "pl.Tuple[".repeat(300), "]".repeat(300));
    let d = diags(&format!("@pl.jit.incore\ndef k(n: {ty}):\n    return\n"));
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].0, "type annotation nested more than 64 levels deep");
}

#[test]
fn recursive_calls_need_an_annotated_return() {
    let body = "@pl.jit.incore\ndef f(n: pl.Scalar[pl.INDEX]):\n    return g(n)\n\n\n@pl.jit.incore\ndef g(n: pl.Scalar[pl.INDEX]):\n    return f(n)\n";
    let (msg, line, col, notes) = one(body);
    assert_eq!(msg, "cannot infer the return type of `f` (recursive call)");
    assert_eq!((line, col), (11, 12));
    assert_eq!(notes, vec!["annotate it: `def f(...) -> ...:`".to_string()]);
    // Forward references resolve when the callee's return type can be inferred.
    let _ = pld_ops::registry();
    let ok = "@pl.jit\ndef a(n: pl.Scalar[pl.INDEX]):\n    return b(n)\n\n\n@pl.jit.incore\ndef b(n: pl.Scalar[pl.INDEX]):\n    return n + 1\n";
    let p = pld_frontend::parse_str(&format!("{HEAD}{ok}")).expect("forward call");
    assert_eq!(p.functions[0].ret, vec![Type::Scalar(pld_ir::DataType::INDEX)]);
}

#[test]
fn internal_only_ops_are_rejected_in_user_programs() {
    let body = incore(
        "        t = pl.create_tile([1, 64], dtype=pl.FP32)\n        pld.tile.get(data, 1, data, t)\n",
    );
    let (msg, line, col, _) = one(&body);
    assert_eq!(
        msg,
        "operator 'pld.tile.get' is internal-only and cannot be created from user-facing op creation paths"
    );
    assert_eq!((line, col), (L + 1, 9));
    // IR dumps (which contain the internal forms) parse with `allow_internal`.
    let src = format!("{HEAD}{body}");
    let mut sm = SourceMap::new();
    let opts = ParseOptions { allow_internal: true, ..ParseOptions::default() };
    assert!(parse_program(&mut sm, "t.py", &src, &opts).is_ok());
}

#[test]
fn a_missing_colon_says_what_was_expected() {
    let (msg, line, _, _) = one("@pl.jit.incore\ndef k(a: pl.Scalar[pl.INT32])\n    return\n");
    assert_eq!(msg, "syntax error: expected ':'");
    assert_eq!(line, 5);
}

#[test]
fn a_missing_trailing_argument_is_named_even_with_keywords() {
    // `peer` and `src` given by keyword, `dst` positionally: `offsets` and the rest are absent.
    let (msg, line, col, notes) =
        one(&incore("        pld.system.notify(data, peer=n, value=1, op=pld.NotifyOp.AtomicAdd)\n"));
    assert_eq!(msg, "missing argument `offsets` of pld.system.notify");
    assert_eq!((line, col), (L, 9));
    assert_eq!(notes, vec!["pld.system.notify(target, peer, offsets, value)".to_string()]);
}

#[test]
fn missing_trailing_arguments_are_all_named() {
    let (msg, line, col, notes) =
        one(&incore("        pld.system.notify(data, n, op=pld.NotifyOp.AtomicAdd)\n"));
    assert_eq!(msg, "missing arguments `offsets` and `value` of pld.system.notify");
    assert_eq!((line, col), (L, 9));
    assert_eq!(notes, vec!["pld.system.notify(target, peer, offsets, value)".to_string()]);
}
