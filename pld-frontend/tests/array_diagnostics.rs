//! Misuse of on-core arrays (`pl.array`) is a diagnostic at the offending node: subscript
//! assignment on a non-array, non-integer or out-of-range index, slices and multi-indices,
//! wrong arity, a value of another dtype, a bad `pl.Array[...]` annotation, and an array
//! crossing a function boundary (the verifier's ArrayNotEscaped rule).

use pld_frontend::{parse_programs, ParseOptions};
use pld_ir::SourceMap;

const HEAD: &str = "import pypto.language as pl\n\n";

/// An InCore kernel whose body is `stmts`; its first statement is on line 7.
fn kernel(stmts: &str) -> String {
    format!(
        "{HEAD}@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n    def k(self, x: pl.Tensor[[8], pl.INT32], n: pl.Scalar[pl.INT32]):\n{stmts}"
    )
}

const L: usize = 7;

/// `(message, line, col, notes)` of every diagnostic of `src`.
fn diags(src: &str) -> Vec<(String, usize, usize, Vec<String>)> {
    let _ = pld_ops::registry();
    let mut sm = SourceMap::new();
    match parse_programs(&mut sm, "t.py", src, &ParseOptions::default()) {
        Ok(p) => {
            panic!("expected diagnostics, got:\n{}", p.iter().map(pld_ir::print_program).collect::<String>())
        }
        Err(d) => d
            .iter()
            .map(|d| {
                let (_, line, col) = d.location(&sm).expect("diagnostic has a location");
                (d.message.clone(), line, col, d.notes.clone())
            })
            .collect(),
    }
}

fn one(src: &str) -> (String, usize, usize, Vec<String>) {
    let mut d = diags(src);
    assert_eq!(d.len(), 1, "expected exactly one diagnostic: {d:#?}");
    d.remove(0)
}

const CREATE: &str = "        a = pl.array.create(4, pl.INT32)\n";

#[test]
fn subscript_assignment_on_a_scalar_is_rejected() {
    let (msg, line, col, _) = one(&kernel("        n[0] = 1\n"));
    assert_eq!(msg, "assignment to a subscript needs a tensor or a pl.Array, got ScalarType");
    assert_eq!((line, col), (L, 9));
}

#[test]
fn a_float_index_is_rejected_at_the_index() {
    let (msg, line, col, _) = one(&kernel(&format!("{CREATE}        a[1.5] = 2\n")));
    assert_eq!(msg, "array.update_element index must have an integer dtype, got fp32");
    assert_eq!((line, col), (L + 1, 11));
    let (msg, line, col, _) = one(&kernel(&format!("{CREATE}        v = a[1.5]\n")));
    assert_eq!(msg, "array.get_element index must have an integer dtype, got fp32");
    assert_eq!((line, col), (L + 1, 15));
}

#[test]
fn a_constant_index_out_of_range_is_rejected() {
    let (msg, line, col, _) = one(&kernel(&format!("{CREATE}        a[4] = 1\n")));
    assert_eq!(msg, "array.update_element index 4 is out of range for an array of extent 4");
    assert_eq!((line, col), (L + 1, 11));
}

#[test]
fn slices_and_multi_indices_are_rejected() {
    let (msg, line, col, notes) = one(&kernel(&format!("{CREATE}        v = a[0:2]\n")));
    assert_eq!(msg, "a pl.Array takes one integer index, not a slice");
    assert_eq!((line, col), (L + 1, 15));
    assert_eq!(notes, vec!["read or write one element at a time: arr[i]".to_string()]);
    let (msg, _, _, _) = one(&kernel(&format!("{CREATE}        a[0, 1] = 3\n")));
    assert_eq!(msg, "a pl.Array is 1-D and takes one index, got 2");
}

#[test]
fn wrong_arity_and_value_dtype_are_rejected() {
    let (msg, line, col, notes) = one(&kernel(&format!("{CREATE}        v = pl.array.get_element(a)\n")));
    assert_eq!(msg, "missing argument `index` of array.get_element");
    assert_eq!(notes, vec!["array.get_element(array, index)".to_string()]);
    assert_eq!((line, col), (L + 1, 13));
    let (msg, _, _, _) = one(&kernel(&format!("{CREATE}        v = pl.array.get_element(a, 0, 1)\n")));
    assert_eq!(msg, "array.get_element takes 2 positional arguments, but got 3");
    let (msg, line, col, notes) = one(&kernel(&format!("{CREATE}        a[0] = pl.cast(n, pl.INT64)\n")));
    assert_eq!(msg, "array.update_element value dtype (int64) must match the array dtype (int32)");
    assert_eq!((line, col), (L + 1, 16));
    assert_eq!(notes, vec!["convert it first: pl.cast(value, pl.INT32)".to_string()]);
    let (msg, _, _, _) = one(&kernel("        a = pl.array.create(n, pl.INT32)\n"));
    assert_eq!(msg, "array.create extent must be a compile-time integer constant, got ScalarType");
}

#[test]
fn bad_array_annotations_are_rejected() {
    let (msg, line, col, _) =
        one(&kernel("        a: pl.Array[0, pl.INT32] = pl.array.create(4, pl.INT32)\n"));
    assert_eq!(msg, "a pl.Array extent must be a positive integer constant");
    assert_eq!((line, col), (L, 21));
    let (msg, _, _, _) = one(&kernel("        a: pl.Array[4] = pl.array.create(4, pl.INT32)\n"));
    assert_eq!(msg, "pl.Array takes an extent and a dtype, e.g. pl.Array[8, pl.INT32]");
}

#[test]
fn an_array_parameter_fails_verification() {
    let _ = pld_ops::registry();
    let src = format!(
        "{HEAD}@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.InCore)\n    def k(self, a: pl.Array[4, pl.INT32]) -> pl.Scalar[pl.INT32]:\n        return a[0]\n"
    );
    let mut sm = SourceMap::new();
    let p = match parse_programs(&mut sm, "t.py", &src, &ParseOptions::default()) {
        Ok(mut p) => p.remove(0),
        Err(d) => {
            // A frontend that verifies while parsing reports the same rule.
            assert!(d.to_string().contains("cannot cross a function boundary"), "{d}");
            return;
        }
    };
    let d = pld_ir::verify_program(&p).expect_err("an array parameter must not verify");
    let r = d.render(&sm);
    assert!(r.contains("parameter #0 (`a`) has type pl.Array[4, pl.INT32]"), "{r}");
    assert!(r.contains("t.py:6:"), "the diagnostic points at the parameter: {r}");
}
