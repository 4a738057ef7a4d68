//! Which `role=pl.Role.SubWorker` functions are Python host callbacks: a HOST-level one
//! keeps only its signature (its body is Python, run by `pld run` through python3); a kernel
//! the reference prints with that role (`type=InCore, level=CHIP_DIE, role=SubWorker`) is
//! DSL and keeps its body.

const SRC: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld
import torch

@pl.program
class Roles:
    @pl.function(type=pl.FunctionType.InCore, level=pl.Level.CHIP_DIE, role=pl.Role.SubWorker)
    def kernel(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        t = pl.load(x, [0, 0], [16, 16])
        pl.store(t, [0, 0], y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.SubWorker)
    def post(y: pl.Tensor[[16, 16], pl.FP32], z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        z[:] = torch.relu(y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             z: pl.Out[pl.Tensor[[16, 16], pl.FP32]]):
        self.kernel(x, y)
        self.post(y, z)
"#;

#[test]
fn only_host_level_subworkers_are_python() {
    let _ = pld_ops::registry();
    let p = pld_frontend::parse_str(SRC).expect("parses");
    let kernel = p.function("kernel").expect("kernel");
    assert_eq!(kernel.kind, pld_ir::FunctionKind::InCore);
    assert!(!kernel.body.stmts.is_empty(), "an InCore kernel with role=SubWorker is DSL");
    let post = p.function("post").expect("post");
    assert_eq!(post.kind, pld_ir::FunctionKind::Opaque);
    assert!(post.body.stmts.is_empty(), "a HOST SubWorker body is Python");
    assert_eq!(post.params.len(), 2);
    assert_eq!(post.params[1].dir, pld_ir::Direction::Out);
}
