//! Calls between DSL functions are type-checked against the callee's annotations: one
//! mismatch per checked property (kind, dtype, rank, static dim, inconsistent dynamic
//! binding, direction, scalar dtype), each asserted with its message, the argument's
//! line:col and the label at the parameter's annotation; plus the correct calls that must
//! keep passing (`self.k(...)`, `device=r` dispatch, `deps=` submits, `@pl.jit` forms).

use pld_frontend::{parse_program, ParseOptions};
use pld_ir::SourceMap;

const HEAD: &str = concat!(
    "import pypto.language as pl\n",                                      // 1
    "import pypto.language.distributed as pld\n",                         // 2
    "\n",                                                                 // 3
    "NR = pl.dynamic(\"NR\")\n",                                          // 4
    "\n",                                                                 // 5
    "@pl.program\n",                                                      // 6
    "class P:\n",                                                         // 7
    "    @pl.function(type=pl.FunctionType.InCore)\n",                    // 8
    "    def k(\n",                                                       // 9
    "        self,\n",                                                    // 10
    "        a: pl.Tensor[[NR, 8], pl.FP32],\n",                          // 11
    "        b: pl.Tensor[[NR, 8], pl.FP32],\n",                          // 12
    "        out: pl.Out[pl.Tensor[[4, 8], pl.FP32]],\n",                 // 13
    "        sig: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],\n", // 14
    "        n: pl.Scalar[pl.INT32],\n",                                  // 15
    "    ):\n",                                                           // 16
    "        pass\n",                                                     // 17
    "\n",                                                                 // 18
    "    @pl.function(type=pl.FunctionType.Orchestration)\n",             // 19
    "    def orch(\n",                                                    // 20
    "        self,\n",                                                    // 21
    "        x: pl.Tensor[[2, 8], pl.FP32],\n",                           // 22
    "        y: pl.Tensor[[4, 8], pl.FP32],\n",                           // 23
    "        o: pl.Out[pl.Tensor[[4, 8], pl.FP32]],\n",                   // 24
    "        s: pl.InOut[pld.DistributedTensor[[2, 1], pl.INT32]],\n",    // 25
    "        f: pl.InOut[pld.DistributedTensor[[2, 1], pl.FP32]],\n",     // 26
    "        h: pl.Tensor[[2, 8], pl.FP16],\n",                           // 27
    "        t3: pl.Tensor[[2, 8, 1], pl.FP32],\n",                       // 28
    "        w: pl.Out[pl.Tensor[[4, 6], pl.FP32]],\n",                   // 29
    "        big: pl.Tensor[[3, 4, 8], pl.FP32],\n",                      // 30
    "    ):\n",                                                           // 31
);

/// The call is on line 32; `self.k(` ends at column 16, so the first argument starts there.
const CALL_LINE: usize = 32;

fn program(call: &str) -> String {
    format!("{HEAD}        {call}\n")
}

/// Parses with one call in `orch`; returns (message, arg line:col, label line:col, label) of
/// its one diagnostic, whose first label is at the parameter.
fn one(call: &str) -> (String, (usize, usize), (usize, usize), String) {
    let (m, at, labels) = one_with_labels(call);
    let (note, label) = labels[0].clone();
    (m, at, note, label)
}

/// Like [`one`], with every label as (line:col, text).
#[allow(clippy::type_complexity)]
fn one_with_labels(call: &str) -> (String, (usize, usize), Vec<((usize, usize), String)>) {
    let _ = pld_ops::registry();
    let src = program(call);
    let mut sm = SourceMap::new();
    let d = match parse_program(&mut sm, "t.py", &src, &ParseOptions::default()) {
        Ok(p) => panic!("accepted `{call}`:\n{}", pld_ir::print_program(&p)),
        Err(d) => d,
    };
    let d: Vec<_> = d.iter().collect();
    assert_eq!(d.len(), 1, "{:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>());
    let (_, line, col) = d[0].location(&sm).expect("located");
    assert!(!d[0].labels.is_empty(), "a label at the parameter");
    let labels = d[0]
        .labels
        .iter()
        .map(|(span, label)| (sm.get(span.file).expect("label file").line_col(span.lo), label.clone()))
        .collect();
    (d[0].message.clone(), (line, col), labels)
}

fn accepts(src: &str) {
    let _ = pld_ops::registry();
    let mut sm = SourceMap::new();
    if let Err(d) = parse_program(&mut sm, "t.py", src, &ParseOptions::default()) {
        panic!("rejected:\n{}", d.render(&sm));
    }
}

#[test]
fn a_correct_call_binds_nr_to_a_static_dim_and_passes() {
    accepts(&program("self.k(x, x, o, s, 3)"));
    // Views of a read-only input may be read; views of a writable output are writable.
    accepts(&program("self.k(x, x[0:2], o[0:4], s, 2)"));
}

#[test]
fn kind_a_plain_tensor_for_a_window_parameter() {
    let (m, at, note, label) = one("self.k(x, x, o, o, 3)");
    assert_eq!(m, "argument 4 (`o`) is a pl.Tensor, but parameter `sig` is declared pld.DistributedTensor");
    assert_eq!(at, (CALL_LINE, 25));
    assert_eq!(note, (14, 14));
    assert_eq!(label, "parameter `sig` of `k` declared here");
}

#[test]
fn dtype_an_fp32_window_for_an_int32_signal() {
    let (m, at, note, _) = one("self.k(x, x, o, f, 3)");
    assert_eq!(m, "argument 4 (`f`) has dtype pl.FP32, but parameter `sig` is declared with dtype pl.INT32");
    assert_eq!(at, (CALL_LINE, 25));
    assert_eq!(note, (14, 14));
    let (m, at, note, _) = one("self.k(h, x, o, s, 3)");
    assert_eq!(m, "argument 1 (`h`) has dtype pl.FP16, but parameter `a` is declared with dtype pl.FP32");
    assert_eq!(at, (CALL_LINE, 16));
    assert_eq!(note, (11, 12));
}

#[test]
fn rank_a_3d_tensor_for_a_2d_parameter() {
    let (m, at, note, _) = one("self.k(t3, x, o, s, 3)");
    assert_eq!(
        m,
        "argument 1 (`t3`) has rank 3 (shape [2, 8, 1]), but parameter `a` is declared with rank 2 (shape [NR, 8])"
    );
    assert_eq!(at, (CALL_LINE, 16));
    assert_eq!(note, (11, 12));
}

#[test]
fn static_dim_differs_from_the_declared_one() {
    let (m, at, note, _) = one("self.k(x, x, w, s, 3)");
    assert_eq!(m, "argument 3 (`w`) has dimension 1 = 6, but parameter `out` declares 8");
    assert_eq!(at, (CALL_LINE, 22));
    assert_eq!(note, (13, 14));
}

#[test]
fn dynamic_dim_bound_to_two_values_in_one_call() {
    // `a` binds NR = 2, then `b` brings 4 rows.
    let (m, at, labels) = one_with_labels("self.k(x, y, o, s, 3)");
    assert_eq!(
        m,
        "argument 2 (`y`) has dimension 0 = 4, but `NR` of parameter `b` is already bound to 2 by an \
         earlier argument of this call (`NR` is one value per call)"
    );
    assert_eq!(at, (CALL_LINE, 19));
    assert_eq!(
        labels,
        vec![
            ((12, 12), "parameter `b` of `k` declared here".to_string()),
            ((CALL_LINE, 16), "`NR` bound to 2 here".to_string()),
        ]
    );
}

#[test]
fn direction_a_read_only_input_for_an_out_parameter() {
    let (m, at, note, label) = one("self.k(x, x, y, s, 3)");
    assert_eq!(
        m,
        "argument 3 (`y`) is read-only here (it comes from an input parameter, not pl.Out / pl.InOut), \
         but parameter `out` of `k` is pl.Out and is written"
    );
    assert_eq!(at, (CALL_LINE, 22));
    assert_eq!(note, (13, 14));
    assert_eq!(label, "parameter `out` of `k` declared here");
    // A view of a read-only input is read-only too.
    let (m, at, _, _) = one("self.k(x, x, big[0], s, 3)");
    assert!(m.starts_with("argument 3 is read-only here"), "{m}");
    assert_eq!(at, (CALL_LINE, 22));
}

#[test]
fn scalar_a_float_for_an_int32_scalar() {
    let (m, at, note, _) = one("self.k(x, x, o, s, 1.5)");
    assert_eq!(m, "argument 5 is a pl.Scalar[pl.FP32], but parameter `n` is declared pl.Scalar[pl.INT32]");
    assert_eq!(at, (CALL_LINE, 28));
    assert_eq!(note, (15, 12));
}

/// The `@pl.jit` forms: host dispatch with `device=r` into a per-device orchestration that
/// calls a kernel; a wrong dtype through the `device=r` dispatch is reported there.
const JIT: &str = concat!(
    "import pypto.language as pl\n",                                         // 1
    "import pypto.language.distributed as pld\n",                            // 2
    "\n",                                                                    // 3
    "NR = pl.dynamic(\"NR\")\n",                                             // 4
    "\n",                                                                    // 5
    "@pl.jit.incore\n",                                                      // 6
    "def bump(x: pl.Tensor[[16], pl.FP32], y: pl.Out[pl.Tensor[[16], pl.FP32]]):\n", // 7
    "    t = pl.load(x, [0], [16])\n",                                       // 8
    "    y = pl.store(t, [0], y)\n",                                         // 9
    "    return y\n",                                                        // 10
    "\n",                                                                    // 11
    "@pl.jit\n",                                                             // 12
    "def per_device(x: pl.Tensor[[16], pl.FP32], y: pl.Out[pl.Tensor[[16], pl.FP32]]):\n", // 13
    "    return bump(x, y)\n",                                               // 14
    "\n",                                                                    // 15
    "@pl.jit.host\n",                                                        // 16
    "def entry(x: pl.Tensor[[NR, 16], pl.FP32], y: pl.Out[pl.Tensor[[NR, 16], pl.FP32]], z: pl.Out[pl.Tensor[[NR, 16], pl.INT32]]):\n", // 17
    "    for r in pl.range(pld.world_size()):\n",                            // 18
);

#[test]
fn jit_forms_check_device_dispatch_arguments() {
    accepts(&format!("{JIT}        per_device(x[r], y[r], device=r)\n"));
    let _ = pld_ops::registry();
    let src = format!("{JIT}        per_device(x[r], z[r], device=r)\n");
    let mut sm = SourceMap::new();
    let d = parse_program(&mut sm, "t.py", &src, &ParseOptions::default()).expect_err("rejected");
    let d: Vec<_> = d.iter().collect();
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].message,
        "argument 2 has dtype pl.INT32, but parameter `y` is declared with dtype pl.FP32"
    );
    assert_eq!(d[0].location(&sm).map(|(_, l, c)| (l, c)), Some((19, 26)));
    let (lspan, _) = &d[0].labels[0];
    assert_eq!(sm.get(lspan.file).map(|f| f.line_col(lspan.lo)), Some((13, 48)));
    // Passing the host's read-only input as the kernel's output, through the orchestration.
    let src = format!("{JIT}        per_device(x[r], x[r], device=r)\n");
    let mut sm = SourceMap::new();
    let d = parse_program(&mut sm, "t.py", &src, &ParseOptions::default()).expect_err("rejected");
    assert!(d.iter().any(|x| x.message.starts_with("argument 2 is read-only here")), "{d}");
}

#[test]
fn task_submits_with_deps_are_checked_too() {
    let call = "self.k(x, x, w, s, 3, deps=[])";
    let (m, at, _, _) = one(call);
    assert_eq!(m, "argument 3 (`w`) has dimension 1 = 6, but parameter `out` declares 8");
    assert_eq!(at, (CALL_LINE, 22));
}

#[test]
fn kind_a_tensor_for_a_scalar_parameter() {
    let (m, at, note, _) = one("self.k(x, x, o, s, x)");
    assert_eq!(m, "argument 5 (`x`) is a pl.Tensor, but parameter `n` is declared pl.Scalar");
    assert_eq!(at, (CALL_LINE, 28));
    assert_eq!(note, (15, 12));
}

/// Kernel-to-kernel calls: a tile parameter takes a tile, not the tensor it was loaded from.
const TILES: &str = concat!(
    "import pypto.language as pl\n", // 1
    "\n",                            // 2
    "@pl.program\n",                 // 3
    "class T:\n",                    // 4
    "    @pl.function(type=pl.FunctionType.InCore)\n", // 5
    "    def helper(self, t: pl.Tile[[8, 8], pl.FP32, pl.MemorySpace.Vec], out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):\n", // 6
    "        out = pl.store(t, [0, 0], out)\n", // 7
    "        return out\n",                     // 8
    "\n",                                       // 9
    "    @pl.function(type=pl.FunctionType.InCore)\n", // 10
    "    def k(self, x: pl.Tensor[[8, 8], pl.FP32], out: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):\n", // 11
    "        t = pl.load(x, [0, 0], [8, 8])\n", // 12
);

#[test]
fn kind_a_tensor_for_a_tile_parameter() {
    accepts(&format!("{TILES}        out = self.helper(t, out)\n        return out\n"));
    let _ = pld_ops::registry();
    let src = format!("{TILES}        out = self.helper(x, out)\n        return out\n");
    let mut sm = SourceMap::new();
    let d = parse_program(&mut sm, "t.py", &src, &ParseOptions::default()).expect_err("rejected");
    let d: Vec<_> = d.iter().collect();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].message, "argument 1 (`x`) is a pl.Tensor, but parameter `t` is declared pl.Tile");
    assert_eq!(d[0].location(&sm).map(|(_, l, c)| (l, c)), Some((13, 27)));
    let (lspan, _) = &d[0].labels[0];
    assert_eq!(sm.get(lspan.file).map(|f| f.line_col(lspan.lo)), Some((6, 25)));
}
