//! Diagnostics of task-id scopes: `pl.manual_scope()`, `with pl.at(...) as tid` and
//! `deps=[...]`, each asserted with its message, line and column.

use pld_frontend::{parse_program, ParseOptions};
use pld_ir::SourceMap;

const HEAD: &str = concat!(
    "import pypto.language as pl\n",
    "import pypto.language.distributed as pld\n",
    "\n",
    "@pl.program\n",
    "class P:\n",
    "    @pl.function(type=pl.FunctionType.InCore)\n",
    "    def k(self, x: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:\n",
    "        return x\n",
    "\n",
    "    @pl.function(type=pl.FunctionType.Orchestration)\n",
    "    def orch(self, x: pl.Tensor[[8, 8], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[8, 8], pl.FP32]:\n",
);

// The first body line of `orch` is line 12.
const L: usize = 12;

fn one(body: &str) -> (String, usize, usize) {
    let _ = pld_ops::registry();
    let src = format!("{HEAD}{body}        return x\n");
    let mut sm = SourceMap::new();
    let d = match parse_program(&mut sm, "t.py", &src, &ParseOptions::default()) {
        Ok(p) => panic!("accepted:\n{}", pld_ir::print_program(&p)),
        Err(d) => d,
    };
    let d: Vec<_> = d.iter().collect();
    assert_eq!(d.len(), 1, "{:?}", d.iter().map(|x| &x.message).collect::<Vec<_>>());
    let (_, line, col) = d[0].location(&sm).expect("located");
    (d[0].message.clone(), line, col)
}

#[test]
fn a_dependency_that_is_not_a_task_id_is_rejected_where_it_is_written() {
    let (m, line, col) = one("        with pl.at(level=pl.Level.CORE_GROUP, deps=[n]):\n            pass\n");
    assert_eq!(m, "a task dependency must be a task id, got pl.Scalar[pl.INDEX]");
    assert_eq!((line, col), (L, 53));
    let (m, line, col) = one("        y = self.k(x, deps=[n])\n");
    assert_eq!(m, "a task dependency must be a task id, got pl.Scalar[pl.INDEX]");
    assert_eq!((line, col), (L, 29));
}

#[test]
fn deps_must_be_a_list() {
    let (m, line, col) = one("        with pl.at(level=pl.Level.CORE_GROUP, deps=n):\n            pass\n");
    assert_eq!(m, "deps= takes a list of task ids, e.g. `deps=[wait_tid]`");
    assert_eq!((line, col), (L, 52));
}

#[test]
fn only_pl_at_binds_a_task_id() {
    let (m, line, col) = one("        with pl.manual_scope() as s:\n            pass\n");
    assert!(m.contains("binds nothing: only pl.at(...) binds a task id"), "{m}");
    assert_eq!((line, col), (L, 35));
    let (m, line, col) = one("        with pl.at(level=pl.Level.CORE_GROUP) as (a, b):\n            pass\n");
    assert_eq!(m, "`with pl.at(...) as name` binds one task id name");
    assert_eq!((line, col), (L, 50));
}

#[test]
fn pl_at_takes_keywords_only() {
    let (m, line, col) = one("        with pl.at(pl.Level.CORE_GROUP):\n            pass\n");
    assert_eq!(m, "pl.at takes keyword arguments only");
    assert_eq!((line, col), (L, 20));
}

#[test]
fn an_unknown_scope_lists_the_manual_scope() {
    let (m, line, col) = one("        with pl.auto_scope():\n            pass\n");
    assert_eq!(m, "unsupported `with` scope `pl.auto_scope`");
    assert_eq!((line, col), (L, 14));
}

#[test]
fn deps_on_a_scope_that_is_not_a_task_is_rejected() {
    let (m, line, col) = one("        with pl.spmd(4, deps=[n]):\n            pass\n");
    assert_eq!(m, "deps=[...] orders task launches; `pl.spmd` is not launched as a task here");
    assert_eq!((line, col), (L, 25));
}
