//! The host orchestrator reads and writes host tensors itself (it runs as no rank): the run
//! completes, the writes land, and the traffic is accounted to no rank.

use pld_sim::{run, HostTensor, Inputs, SimConfig};

const PROGRAM: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class HostAccess:
    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.InOut[pl.Tensor[[4], pl.FP32]]):
        v = pl.tensor.read(x, [3])
        pl.tensor.write(x, [0], v)
"#;

#[test]
fn the_host_orchestrator_reads_and_writes_host_tensors() {
    let _ = pld_ops::registry();
    let prog = pld_frontend::parse_str(PROGRAM).expect("parses");
    let mut inputs = Inputs::new();
    inputs.insert("x".into(), HostTensor::from_f32(vec![4], &[1.0, 2.0, 3.0, 4.0]));
    let out = run(&prog, "host", &inputs, &SimConfig::ranks(2)).expect("runs");
    assert_eq!(out.outputs["x"].to_f32(), vec![4.0, 2.0, 3.0, 4.0]);
    for r in 0..2 {
        assert!(out.stats.local_bytes.keys().all(|(g, _)| *g != r), "{:?}", out.stats.local_bytes);
    }
}
