//! §4 of tests_e2e.md (point-to-point primitives) on the simulator, for P=2 as specified and
//! for larger rings: notify/wait handshake, self-notify credit reset, put (ring, chunked,
//! pipelined, row subregion, atomic-add reduce to root), get, remote_store (tile, halves with
//! Set, tensor-level computed value), the BF16 RAW ordering across kernels; plus the credit
//! leak and Set/AtomicAdd mixing reports.

use pld_ir::DataType;
use pld_sim::{run, HostTensor, Inputs, ReportKind, Schedule, SimConfig, SimError, SimOutcome};

fn parse(text: &str) -> pld_ir::Program {
    let _ = pld_ops::registry();
    match pld_frontend::parse_str(text) {
        Ok(p) => p,
        Err(d) => panic!("parse failed: {:?}", d.iter().map(|x| x.message.clone()).collect::<Vec<_>>()),
    }
}

fn stack(dt: DataType, per: &[Vec<f64>], shape: &[usize]) -> HostTensor {
    let mut s = vec![per.len()];
    s.extend_from_slice(shape);
    HostTensor::from_f64(dt, s, &per.concat())
}

fn unstack(t: &HostTensor) -> Vec<Vec<f64>> {
    let v = t.to_f64();
    let p = t.shape[0];
    v.chunks(v.len() / p).map(<[f64]>::to_vec).collect()
}

fn go(prog: &pld_ir::Program, p: usize, inputs: Inputs, sched: Schedule) -> Result<SimOutcome, SimError> {
    run(prog, "host", &inputs, &SimConfig { schedule: sched, ..SimConfig::ranks(p) })
}

fn ok(prog: &pld_ir::Program, p: usize, inputs: Inputs, what: &str) -> SimOutcome {
    let base = go(prog, p, inputs.clone(), Schedule::Deterministic).unwrap_or_else(|e| panic!("{what}: {e}"));
    for seed in [1, 2, 3] {
        let o = go(prog, p, inputs.clone(), Schedule::Random(seed))
            .unwrap_or_else(|e| panic!("{what} seed {seed}: {e}"));
        assert_eq!(o.outputs, base.outputs, "{what}: seed {seed} differs");
    }
    base
}

/// One kernel `step` (body given) behind a chip orchestrator, dispatched on every rank with
/// `peer = (r+1) % P`, `prev = (r-1) % P`, `me = r`.
const P2P: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

R = __R__
C = __C__
NR = pl.dynamic("NR")

@pl.program
class P2P:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, inp: pl.Tensor[[R, C], pl.__DT__], out: pl.Out[pl.Tensor[[R, C], pl.__DT__]],
             src: pl.InOut[pld.DistributedTensor[[R, C], pl.__DT__]], dst: pl.InOut[pld.DistributedTensor[[R, C], pl.__DT__]],
             signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
             me: pl.Scalar[pl.INDEX], peer: pl.Scalar[pl.INDEX], prev: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]):
        __BODY__
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, inp: pl.Tensor[[R, C], pl.__DT__], out: pl.Out[pl.Tensor[[R, C], pl.__DT__]],
             src: pl.InOut[pld.DistributedTensor[[R, C], pl.__DT__]], dst: pl.InOut[pld.DistributedTensor[[R, C], pl.__DT__]],
             signal: pl.InOut[pld.DistributedTensor[[1, 1], pl.INT32]],
             me: pl.Scalar[pl.INDEX], peer: pl.Scalar[pl.INDEX], prev: pl.Scalar[pl.INDEX], n: pl.Scalar[pl.INDEX]):
        out = self.step(inp, out, src, dst, signal, me, peer, prev, n)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, inputs: pl.Tensor[[NR, R, C], pl.__DT__], outputs: pl.Out[pl.Tensor[[NR, R, C], pl.__DT__]]):
        src_buf = pld.alloc_window_buffer(R * C * __BYTES__, name="src")
        dst_buf = pld.alloc_window_buffer(R * C * __BYTES__, name="dst")
        sig_buf = pld.alloc_window_buffer(4, name="signal")
        ws = pld.world_size()
        for r in pl.range(ws):
            src = pld.window(src_buf, [R, C], dtype=pl.__DT__)
            dst = pld.window(dst_buf, [R, C], dtype=pl.__DT__)
            signal = pld.window(sig_buf, [1, 1], dtype=pl.INT32)
            self.chip(inputs[r], outputs[r], src, dst, signal, r, (r + 1) % ws, (r + ws - 1) % ws, ws, device=r)
"#;

fn p2p(r: usize, c: usize, dt: DataType, body: &str) -> pld_ir::Program {
    parse(
        &P2P.replace("__R__", &r.to_string())
            .replace("__C__", &c.to_string())
            .replace("__DT__", dt.dsl_name())
            .replace("__BYTES__", &dt.bytes().to_string())
            .replace("__BODY__", body),
    )
}

const STAGE_IN: &str = "t = pl.load(inp, [0, 0], [R, C])\n        pl.store(t, [0, 0], src)";
const HANDSHAKE: &str = "pld.system.notify(signal, peer, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)\n        pld.system.wait(signal, [0, 0], 1, cmp=pld.WaitCmp.Ge)";
const COPY_DST: &str = "x = pl.load(dst, [0, 0], [R, C])\n        pl.store(x, [0, 0], out)";

fn ramp_rows(p: usize, r: usize, c: usize, step: f64) -> Vec<Vec<f64>> {
    (0..p).map(|k| (0..r * c).map(|i| step * k as f64 + i as f64).collect()).collect()
}

fn ring_push(v: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let p = v.len();
    (0..p).map(|r| v[(r + p - 1) % p].clone()).collect()
}

fn ring_pull(v: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let p = v.len();
    (0..p).map(|r| v[(r + 1) % p].clone()).collect()
}

fn inputs_of(dt: DataType, per: &[Vec<f64>], r: usize, c: usize) -> Inputs {
    let mut i = Inputs::new();
    i.insert("inputs".into(), stack(dt, per, &[r, c]));
    i
}

#[test]
fn put_ring_chunked_and_pipelined() {
    let cases: [(usize, usize, &str); 4] = [
        (1, 64, "atomic=pld.AtomicType.None_"),
        (8, 128, "atomic=pld.AtomicType.None_, chunk_rows=4, chunk_cols=64, pipeline=True"),
        (8, 64, "atomic=pld.AtomicType.None_, chunk_rows=2, chunk_cols=32"),
        (5, 33, "atomic=pld.AtomicType.None_, chunk_rows=2, chunk_cols=16"),
    ];
    for (r, c, kw) in cases {
        let body = format!("{STAGE_IN}\n        pld.tensor.put(dst, peer, src, {kw})\n        {HANDSHAKE}\n        {COPY_DST}");
        let prog = p2p(r, c, DataType::FP32, &body);
        for p in [2, 3, 4, 8] {
            let per = ramp_rows(p, r, c, 1000.0);
            let out = ok(&prog, p, inputs_of(DataType::FP32, &per, r, c), &format!("put {kw} P={p}"));
            assert_eq!(unstack(&out.outputs["outputs"]), ring_push(&per), "put {kw} P={p}");
            for k in 0..p {
                assert_eq!(
                    out.stats.remote_of(k, "pld.tensor.put"),
                    (r * c * 4) as u64,
                    "put traffic {kw} P={p} rank {k}"
                );
            }
        }
    }
}

#[test]
fn put_row_subregion_get_and_remote_store() {
    let p2 = |p: usize| ramp_rows(p, 2, 64, 100.0);
    // Row subregion put: my row 0 lands in the peer's row 1.
    let body = format!("{STAGE_IN}\n        pld.tensor.put(dst, peer, src, [1, 0], [0, 0], [1, C], atomic=pld.AtomicType.None_)\n        {HANDSHAKE}\n        x = pl.load(dst, [1, 0], [1, C])\n        pl.store(x, [0, 0], out)");
    let prog = p2p(2, 64, DataType::FP32, &body);
    for p in [2, 3, 4] {
        let per = p2(p);
        let got =
            unstack(&ok(&prog, p, inputs_of(DataType::FP32, &per, 2, 64), "row put").outputs["outputs"]);
        for k in 0..p {
            assert_eq!(&got[k][..64], &per[(k + p - 1) % p][..64], "row put P={p} rank {k}");
        }
    }
    // Get: stage in, tell the rank that reads me (prev) that my src is ready, then pull from peer.
    let body = format!("{STAGE_IN}\n        pld.system.notify(signal, prev, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)\n        pld.system.wait(signal, [0, 0], 1, cmp=pld.WaitCmp.Ge)\n        pld.tensor.get(dst, peer, src)\n        {COPY_DST}");
    let prog = p2p(2, 64, DataType::FP32, &body);
    for p in [2, 3, 4, 8] {
        let per = p2(p);
        let out = ok(&prog, p, inputs_of(DataType::FP32, &per, 2, 64), "get");
        assert_eq!(unstack(&out.outputs["outputs"]), ring_pull(&per), "get P={p}");
        assert_eq!(out.stats.remote_of(0, "pld.tensor.get"), 2 * 64 * 4);
    }
    // Row subregion get.
    let body = format!("{STAGE_IN}\n        pld.system.notify(signal, prev, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)\n        pld.system.wait(signal, [0, 0], 1, cmp=pld.WaitCmp.Ge)\n        pld.tensor.get(dst, peer, src, [1, 0], [0, 0], [1, C])\n        x = pl.load(dst, [1, 0], [1, C])\n        pl.store(x, [0, 0], out)");
    let prog = p2p(2, 64, DataType::FP32, &body);
    let per = p2(2);
    let got = unstack(&ok(&prog, 2, inputs_of(DataType::FP32, &per, 2, 64), "row get").outputs["outputs"]);
    assert_eq!(&got[0][..64], &per[1][..64]);
    assert_eq!(&got[1][..64], &per[0][..64]);
    // remote_store of a tile, of two halves with a Set handshake, of a computed tensor.
    let bodies = [
        (format!("t = pl.load(inp, [0, 0], [R, C])\n        pld.tile.remote_store(t, dst, peer, [0, 0])\n        {HANDSHAKE}\n        {COPY_DST}"), 1.0),
        (format!("lo = pl.load(inp, [0, 0], [R, 32])\n        hi = pl.load(inp, [0, 32], [R, 32])\n        pld.tile.remote_store(lo, dst, peer, [0, 0])\n        pld.tile.remote_store(hi, dst, peer, [0, 32])\n        pld.system.notify(signal, peer, [0, 0], 1, op=pld.NotifyOp.Set)\n        pld.system.wait(signal, [0, 0], 1, cmp=pld.WaitCmp.Ge)\n        {COPY_DST}"), 1.0),
        (format!("scaled = pl.tensor.add(inp, inp)\n        pld.tensor.remote_store(scaled, dst, peer, [0, 0])\n        {HANDSHAKE}\n        {COPY_DST}"), 2.0),
    ];
    for (body, scale) in bodies {
        let prog = p2p(1, 64, DataType::FP32, &body);
        for p in [2, 3, 4] {
            let per = ramp_rows(p, 1, 64, 100.0);
            let got = unstack(
                &ok(&prog, p, inputs_of(DataType::FP32, &per, 1, 64), "remote_store").outputs["outputs"],
            );
            let want: Vec<Vec<f64>> =
                ring_push(&per).iter().map(|v| v.iter().map(|x| x * scale).collect()).collect();
            assert_eq!(got, want, "remote_store P={p}: {body}");
        }
    }
}

#[test]
fn atomic_put_reduces_to_root() {
    // Every rank atomically adds its [16,16] INT32 block into the root's accumulator, which the
    // root zeroes first and then releases the others (an atomic add reads what it adds into:
    // an integer window is not zero until written); only the root waits for all notifies.
    let body = "if me == 0:\n            z = pl.full([R, C], 0, dtype=pl.INT32)\n            pl.store(z, [0, 0], dst)\n            for q in pl.range(1, n):\n                pld.system.notify(signal, q, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)\n        else:\n            pld.system.wait(signal, [0, 0], 1, cmp=pld.WaitCmp.Ge)\n        t = pl.load(inp, [0, 0], [R, C])\n        pl.store(t, [0, 0], src)\n        pld.tensor.put(dst, 0, src, atomic=pld.AtomicType.Add)\n        pld.system.notify(signal, 0, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)\n        if me == 0:\n            pld.system.wait(signal, [0, 0], n, cmp=pld.WaitCmp.Ge)\n            x = pl.load(dst, [0, 0], [R, C])\n            pl.store(x, [0, 0], out)";
    let prog = p2p(16, 16, DataType::INT32, body);
    for p in [2, 3, 4, 8] {
        let per: Vec<Vec<f64>> = (0..p).map(|k| vec![(10 + 22 * k) as f64; 256]).collect();
        let out = ok(&prog, p, inputs_of(DataType::INT32, &per, 16, 16), "atomic put");
        let want: f64 = (0..p).map(|k| (10 + 22 * k) as f64).sum();
        assert!(unstack(&out.outputs["outputs"])[0].iter().all(|&x| x == want), "atomic put P={p}");
    }
}

#[test]
fn notify_wait_handshake_and_self_credit_reset() {
    // 4.1: tag r+1 into the next rank's cell, read back own cell (scalar path).
    let body = "pld.system.notify(signal, peer, [0, 0], me + 1, op=pld.NotifyOp.AtomicAdd)\n        pld.system.wait(signal, [0, 0], 1, cmp=pld.WaitCmp.Ge)\n        v = pl.tensor.read(signal, [0, 0])\n        pl.tensor.write(out, [0, 0], v)";
    let prog = p2p(1, 1, DataType::INT32, body);
    for p in [2, 3, 4] {
        let per = vec![vec![0.0]; p];
        let got =
            unstack(&ok(&prog, p, inputs_of(DataType::INT32, &per, 1, 1), "handshake").outputs["outputs"]);
        let want: Vec<Vec<f64>> = (0..p).map(|r| vec![((r + p - 1) % p + 1) as f64]).collect();
        assert_eq!(got, want, "handshake P={p}");
    }
    // 4.2: four credits in, wait for them, subtract them with a negative self-notify.
    let body = "for i in pl.unroll(4):\n            pld.system.notify(signal, peer, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)\n        pld.system.wait(signal, [0, 0], 4, cmp=pld.WaitCmp.Ge)\n        pld.system.notify(signal, me, [0, 0], -4, op=pld.NotifyOp.AtomicAdd)\n        v = pl.tensor.read(signal, [0, 0])\n        pl.tensor.write(out, [0, 0], v)";
    let prog = p2p(1, 1, DataType::INT32, body);
    for p in [2, 4] {
        let got = unstack(
            &ok(&prog, p, inputs_of(DataType::INT32, &vec![vec![0.0]; p], 1, 1), "credit reset").outputs
                ["outputs"],
        );
        assert_eq!(got, vec![vec![0.0]; p]);
    }
    // Subtracting one credit too few leaves the cell at 1: a credit leak.
    let leak = p2p(
        1,
        1,
        DataType::INT32,
        &body
            .replace("-4", "-3")
            .replace("v = pl.tensor.read(signal, [0, 0])\n        pl.tensor.write(out, [0, 0], v)", "w = 0"),
    );
    match go(&leak, 2, inputs_of(DataType::INT32, &vec![vec![0.0]; 2], 1, 1), Schedule::Deterministic) {
        Err(SimError::Fault(r)) => {
            assert_eq!(r.kind, ReportKind::CreditLeak, "{r}");
            assert!(
                r.text.contains("signal[0] on rank 0 = 1") && r.text.contains("signal[0] on rank 1 = 1"),
                "{r}"
            );
        }
        other => panic!("expected a credit leak, got {other:?}"),
    }
    // Set after AtomicAdd on one cell is reported with both writers.
    let mixed = p2p(1, 1, DataType::INT32, "pld.system.notify(signal, peer, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)\n        pld.system.notify(signal, peer, [0, 0], 5, op=pld.NotifyOp.Set)");
    match go(&mixed, 2, inputs_of(DataType::INT32, &vec![vec![0.0]; 2], 1, 1), Schedule::Deterministic) {
        Err(SimError::Fault(r)) => {
            assert_eq!(r.kind, ReportKind::MixedNotify, "{r}");
            assert!(r.text.contains("Set by rank") && r.text.contains("already wrote with AtomicAdd"), "{r}");
        }
        other => panic!("expected a mixing report, got {other:?}"),
    }
    // And AtomicAdd after Set, naming the Set's rank.
    let mixed = p2p(1, 1, DataType::INT32, "pld.system.notify(signal, peer, [0, 0], 5, op=pld.NotifyOp.Set)\n        pld.system.notify(signal, peer, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)");
    match go(&mixed, 2, inputs_of(DataType::INT32, &vec![vec![0.0]; 2], 1, 1), Schedule::Deterministic) {
        Err(SimError::Fault(r)) => {
            assert_eq!(r.kind, ReportKind::MixedNotify, "{r}");
            assert!(r.text.contains("AtomicAdd by rank") && r.text.contains("already wrote with Set"), "{r}");
            assert!(r.to_string().contains("the earlier Set is at"), "{r}");
        }
        other => panic!("expected a mixing report, got {other:?}"),
    }
}

const RAW: &str = r#"
import pypto.language as pl
import pypto.language.distributed as pld

N = 2
D = 64

@pl.program
class RemoteStoreRaw:
    @pl.function(type=pl.FunctionType.InCore)
    def push_step(self, src: pl.Tensor[[N, D], pl.BF16], win: pl.InOut[pld.DistributedTensor[[N, D], pl.BF16]],
                  done: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]], me: pl.Scalar[pl.INDEX]) -> pld.DistributedTensor[[N, D], pl.BF16]:
        peer = (me + 1) % N
        t = pl.load(src, [me, 0], [1, D])
        pld.tile.remote_store(t, win, peer, [me, 0])
        for q in pl.range(N):
            if q != me:
                pld.system.notify(done, q, [me, 0], 1, op=pld.NotifyOp.AtomicAdd)
        for q in pl.range(N):
            if q != me:
                pld.system.wait(done, [q, 0], 1, cmp=pld.WaitCmp.Ge)
        return win

    @pl.function(type=pl.FunctionType.InCore)
    def read_step(self, win: pld.DistributedTensor[[N, D], pl.BF16], out: pl.Out[pl.Tensor[[N, D], pl.BF16]]):
        t = pl.load(win, [0, 0], [N, D])
        pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip(self, src: pl.Tensor[[N, D], pl.BF16], out: pl.Out[pl.Tensor[[N, D], pl.BF16]],
             win: pl.InOut[pld.DistributedTensor[[N, D], pl.BF16]], done: pl.InOut[pld.DistributedTensor[[N, 1], pl.INT32]],
             me: pl.Scalar[pl.INDEX]):
        win = self.push_step(src, win, done, me)
        out = self.read_step(win, out)
        return out

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, srcs: pl.Tensor[[N, N, D], pl.BF16], outs: pl.Out[pl.Tensor[[N, N, D], pl.BF16]]):
        win_buf = pld.alloc_window_buffer(N * D * 2, name="win")
        done_buf = pld.alloc_window_buffer(N * 4, name="done")
        for r in pl.range(pld.world_size()):
            win = pld.window(win_buf, [N, D], dtype=pl.BF16)
            done = pld.window(done_buf, [N, 1], dtype=pl.INT32)
            self.chip(srcs[r], outs[r], win, done, r, device=r)
"#;

#[test]
fn remote_store_window_raw_ordering_bf16() {
    let prog = parse(RAW);
    let srcs: Vec<Vec<f64>> = (0..2).map(|k| (0..128).map(|i| (k * 128 + i) as f64).collect()).collect();
    let mut inp = Inputs::new();
    inp.insert("srcs".into(), stack(DataType::BF16, &srcs, &[2, 64]));
    // `read_step` loads the whole window, the row nobody wrote included: a fault by default,
    // a warning with `allow_uninit_reads` (which this test uses to see the garbage pattern).
    let e = go(&prog, 2, inp.clone(), Schedule::Deterministic).expect_err("the unwritten row is read");
    match e {
        SimError::Fault(r) => {
            assert_eq!(r.kind, ReportKind::UninitRead, "{r}");
            assert!(r.text.contains("buffer 'win'") && r.text.contains("read_step"), "{r}");
        }
        other => panic!("expected an uninitialised-read fault, got {other}"),
    }
    let cfg = SimConfig { allow_uninit_reads: true, ..SimConfig::ranks(2) };
    let out = run(&prog, "host", &inp, &cfg).unwrap_or_else(|e| panic!("raw: {e}"));
    assert!(
        out.warnings.iter().any(|w| w.contains("buffer 'win'") && w.contains("undefined")),
        "{:?}",
        out.warnings
    );
    let got = unstack(&out.outputs["outs"]);
    for q in 0..2 {
        let s = (q + 1) % 2;
        let want: Vec<f64> =
            srcs[s][s * 64..(s + 1) * 64].iter().map(|&x| pld_sim::elem::round(DataType::BF16, x)).collect();
        assert_eq!(&got[q][s * 64..(s + 1) * 64], &want[..], "rank {q}");
        // The row nobody wrote still holds the garbage pattern.
        assert!(got[q][q * 64..(q + 1) * 64].iter().all(|x| x.is_nan()), "rank {q} unwritten row");
    }
}

#[test]
fn persistent_worker_reset_and_retained_windows() {
    // 4.1: the handshake adds tag r+1 into the next rank's cell. With window reset every call
    // reads [2, 1]; without it the retained signal accumulates. On the second call the retained
    // cells already satisfy both waits, so what a rank reads depends on whether its peer's new
    // notify landed first: the deterministic schedule (a core runs until it blocks, rank 1's
    // turn first) has rank 1 read its retained 1 and rank 0 read 2 + 2 = 4.
    let body = "pld.system.notify(signal, peer, [0, 0], me + 1, op=pld.NotifyOp.AtomicAdd)\n        pld.system.wait(signal, [0, 0], 1, cmp=pld.WaitCmp.Ge)\n        v = pl.tensor.read(signal, [0, 0])\n        pl.tensor.write(out, [0, 0], v)";
    let prog = p2p(1, 1, DataType::INT32, body);
    let inp = inputs_of(DataType::INT32, &[vec![0.0], vec![0.0]], 1, 1);
    let cfg = SimConfig::ranks(2);
    let mut reset = pld_sim::Persistent::new(true);
    for call in 0..3 {
        let out = reset.call(&prog, "host", &inp, &cfg).unwrap_or_else(|e| panic!("call {call}: {e}"));
        assert_eq!(unstack(&out.outputs["outputs"]), vec![vec![2.0], vec![1.0]], "reset call {call}");
    }
    let mut keep = pld_sim::Persistent::new(false);
    let got: Vec<Vec<Vec<f64>>> = (0..2)
        .map(|call| {
            unstack(
                &keep.call(&prog, "host", &inp, &cfg).unwrap_or_else(|e| panic!("call {call}: {e}")).outputs
                    ["outputs"],
            )
        })
        .collect();
    assert_eq!(got, vec![vec![vec![2.0], vec![1.0]], vec![vec![4.0], vec![1.0]]]);
    // 4.2: the self-clearing credit reset needs no window reset: every call ends at zero.
    let body = "for i in pl.unroll(4):\n            pld.system.notify(signal, peer, [0, 0], 1, op=pld.NotifyOp.AtomicAdd)\n        pld.system.wait(signal, [0, 0], 4, cmp=pld.WaitCmp.Ge)\n        pld.system.notify(signal, me, [0, 0], -4, op=pld.NotifyOp.AtomicAdd)\n        v = pl.tensor.read(signal, [0, 0])\n        pl.tensor.write(out, [0, 0], v)";
    let prog = p2p(1, 1, DataType::INT32, body);
    let mut keep = pld_sim::Persistent::new(false);
    for call in 0..3 {
        let out = keep.call(&prog, "host", &inp, &cfg).unwrap_or_else(|e| panic!("call {call}: {e}"));
        assert_eq!(unstack(&out.outputs["outputs"]), vec![vec![0.0], vec![0.0]], "credit reset call {call}");
    }
}
