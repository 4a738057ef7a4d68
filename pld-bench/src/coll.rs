//! Collective workloads for the simulator benchmarks: DSL programs whose host function runs
//! one collective (`pld.tensor.*` in the host orchestrator, lowered by the pipeline to
//! per-rank `builtin.tensor.*` dispatches, as the CLI runs them) over windows of a given
//! payload, plus the algorithm's lower bound of bytes moved per rank.
//!
//! Guarantees: [`Workload::text`] is a complete DSL program with entry `host` that needs no
//! host inputs (windows start zeroed, see [`Workload::config`], and the collective's source
//! window is then filled with nonzero values); [`Workload::payload`] is the
//! `S` of the lower-bound formulas; [`Workload::must_hold`] counts every byte the run has to
//! keep (all ranks' windows plus the host tensors).

use pld_sim::{Schedule, SimConfig};

/// Which collective.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coll {
    /// Mesh allreduce (every rank reads every peer's data).
    MeshAllreduce,
    /// Ring allreduce (reduce-scatter then allgather around the ring).
    RingAllreduce,
    /// Allgather of one row per rank.
    Allgather,
    /// All-to-all-v with one row per destination (every count 1).
    AllToAllV,
    /// Reduce-scatter of a `[P, SIZE]` window: rank `r` ends with the sum of every rank's row `r`.
    ReduceScatter,
    /// Broadcast of a `[1, SIZE]` window from rank 0.
    Broadcast,
}

impl Coll {
    /// Every collective, in table order.
    pub const ALL: [Coll; 6] = [
        Coll::MeshAllreduce,
        Coll::RingAllreduce,
        Coll::Allgather,
        Coll::AllToAllV,
        Coll::ReduceScatter,
        Coll::Broadcast,
    ];

    /// The collectives the simulator benchmarks name (criterion runs these; the table
    /// also has reduce_scatter and broadcast, for their lower bounds).
    pub const CORE: [Coll; 4] = [Coll::MeshAllreduce, Coll::RingAllreduce, Coll::Allgather, Coll::AllToAllV];

    /// Short name for tables and bench ids.
    pub fn name(self) -> &'static str {
        match self {
            Coll::MeshAllreduce => "allreduce_mesh",
            Coll::RingAllreduce => "allreduce_ring",
            Coll::Allgather => "allgather",
            Coll::AllToAllV => "all_to_all_v",
            Coll::ReduceScatter => "reduce_scatter",
            Coll::Broadcast => "broadcast",
        }
    }

    /// Substring of the simulator's op kinds (Stats keys) that belong to this collective.
    pub fn stats_kind(self) -> &'static str {
        match self {
            Coll::MeshAllreduce | Coll::RingAllreduce => "allreduce",
            Coll::Allgather => "allgather",
            Coll::AllToAllV => "all_to_all_v",
            Coll::ReduceScatter => "reduce_scatter",
            Coll::Broadcast => "broadcast",
        }
    }

    /// Name of the lower bound used for this collective.
    pub fn bound_name(self) -> &'static str {
        match self {
            Coll::MeshAllreduce | Coll::RingAllreduce => "2(P-1)/P*S",
            Coll::Allgather | Coll::AllToAllV | Coll::ReduceScatter => "(P-1)/P*S",
            Coll::Broadcast => "S",
        }
    }

    /// Lower bound of bytes moved (sent or received over the wire) per rank for payload `s`.
    pub fn lower_bound(self, p: usize, s: u64) -> f64 {
        let (p, s) = (p as f64, s as f64);
        match self {
            Coll::MeshAllreduce | Coll::RingAllreduce => 2.0 * (p - 1.0) / p * s,
            Coll::Allgather | Coll::AllToAllV | Coll::ReduceScatter => (p - 1.0) / p * s,
            Coll::Broadcast => s,
        }
    }
}

/// One simulator workload: a collective at `p` ranks over `payload` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workload {
    /// The collective.
    pub coll: Coll,
    /// Rank count.
    pub p: usize,
    /// Requested payload in bytes (FP32; rounded down to whole rows as described per collective).
    pub bytes: u64,
    /// Collective calls in a loop (1 for a single call).
    pub iters: usize,
}

impl Workload {
    /// A single call.
    pub fn new(coll: Coll, p: usize, bytes: u64) -> Workload {
        Workload { coll, p, bytes, iters: 1 }
    }

    /// FP32 row length in elements.
    ///
    /// Allreduce and broadcast: one `[1, SIZE]` vector of `bytes`. Allgather: the gathered
    /// `[P, SIZE]` output is `bytes`. All-to-all-v and reduce-scatter: each rank's `[P, SIZE]`
    /// window is `bytes`.
    pub fn size(&self) -> usize {
        let elems = (self.bytes / 4) as usize;
        match self.coll {
            Coll::MeshAllreduce | Coll::RingAllreduce | Coll::Broadcast => elems.max(1),
            Coll::Allgather | Coll::AllToAllV | Coll::ReduceScatter => (elems / self.p).max(1),
        }
    }

    /// `S` of the lower-bound formula, in bytes (the payload after rounding to rows).
    pub fn payload(&self) -> u64 {
        let row = self.size() as u64 * 4;
        match self.coll {
            Coll::MeshAllreduce | Coll::RingAllreduce | Coll::Broadcast => row,
            Coll::Allgather | Coll::AllToAllV | Coll::ReduceScatter => row * self.p as u64,
        }
    }

    /// Bytes of all ranks' windows plus host tensors: what the run must hold.
    pub fn must_hold(&self) -> u64 {
        let p = self.p as u64;
        let row = self.size() as u64 * 4;
        let per_rank = match self.coll {
            Coll::MeshAllreduce | Coll::Broadcast => row + 4 * p,
            Coll::ReduceScatter => row * p + 4 * p,
            Coll::RingAllreduce => row + 4 * (2 * (p - 1) + 1) * p,
            // stage [1, SIZE] + data [P, SIZE] + signal [P]
            Coll::Allgather => row + row * p + 4 * p,
            // stage + data [P, SIZE] + signal, counts, recv [P, 1]
            Coll::AllToAllV => 2 * row * p + 3 * 4 * p,
        };
        let host = if self.coll == Coll::AllToAllV { 4 * p * p } else { 0 };
        per_rank * p + host
    }

    /// The simulator configuration: `p` ranks, zeroed windows, race checking on (as the CLI).
    pub fn config(&self, schedule: Schedule) -> SimConfig {
        SimConfig { schedule, zero_windows: true, max_steps: u64::MAX / 2, ..SimConfig::ranks(self.p) }
    }

    /// The windows: `(name, shape, dtype, element count expression)`; the first is touched.
    fn windows(&self) -> Vec<(&'static str, String, &'static str, String)> {
        let n = self.size();
        let f = "pl.FP32";
        let i = "pl.INT32";
        match self.coll {
            Coll::MeshAllreduce | Coll::Broadcast => vec![
                ("data", format!("[1, {n}]"), f, format!("{n}")),
                ("signal", "[NR]".into(), i, "pld.world_size()".into()),
            ],
            Coll::ReduceScatter => vec![
                ("data", format!("[NR, {n}]"), f, format!("pld.world_size() * {n}")),
                ("signal", "[NR]".into(), i, "pld.world_size()".into()),
            ],
            Coll::RingAllreduce => vec![
                ("data", format!("[1, {n}]"), f, format!("{n}")),
                (
                    "signal",
                    "[2 * (NR - 1) + 1, NR]".into(),
                    i,
                    "(2 * (pld.world_size() - 1) + 1) * pld.world_size()".into(),
                ),
            ],
            Coll::Allgather => vec![
                ("stage", format!("[1, {n}]"), f, format!("{n}")),
                ("data", format!("[NR, {n}]"), f, format!("pld.world_size() * {n}")),
                ("signal", "[NR]".into(), i, "pld.world_size()".into()),
            ],
            Coll::AllToAllV => vec![
                ("stage", format!("[NR, {n}]"), f, format!("pld.world_size() * {n}")),
                ("data", format!("[NR, {n}]"), f, format!("pld.world_size() * {n}")),
                ("signal", "[NR, 1]".into(), i, "pld.world_size()".into()),
                ("counts", "[NR, 1]".into(), i, "pld.world_size()".into()),
                ("recv", "[NR, 1]".into(), i, "pld.world_size()".into()),
            ],
        }
    }

    /// The DSL program (entry `host`).
    ///
    /// A per-rank `prepare` kernel takes every window (a window must reach a chip dispatch)
    /// and fills the collective's source window with real values (see `fill_source`); for
    /// all_to_all_v it also publishes the send counts. Then the host runs the collective; with
    /// `iters > 1` both run in a loop (fresh data every iteration), with `iters == 0` the
    /// collective is left out (the preparation alone, to time it).
    pub fn text(&self) -> String {
        let wins = self.windows();
        let a2av = self.coll == Coll::AllToAllV;
        let mut params: Vec<String> = wins
            .iter()
            .map(|(w, shape, dt, _)| format!("{w}: pl.InOut[pld.DistributedTensor[{shape}, {dt}]]"))
            .collect();
        if a2av {
            params.insert(0, "cnt: pl.Tensor[[NR, 1], pl.INT32]".into());
        }
        let params = params.join(", ");
        let names: Vec<&str> = wins.iter().map(|w| w.0).collect();
        let args = if a2av { format!("cnt, {}", names.join(", ")) } else { names.join(", ") };
        let first = wins[0].0;
        let mut k = String::new();
        k.push_str(&format!(
            "    @pl.function(type=pl.FunctionType.InCore)\n    def prepare(self, {params}):\n"
        ));
        k.push_str(&self.fill_source());
        if a2av {
            k.push_str("        c = pl.load(cnt, [0, 0], [NR, 1])\n        pl.store(c, [0, 0], counts)\n");
        }
        k.push_str(&format!("        return {first}\n\n"));
        k.push_str(&format!(
            "    @pl.function(type=pl.FunctionType.Orchestration)\n    def prepare_orch(self, {params}):\n"
        ));
        k.push_str(&format!("        {first} = self.prepare({args})\n        return {first}\n\n"));
        let mut h = String::from("    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n");
        if a2av {
            h.push_str("    def host(self, ones: pl.Tensor[[NR, NR, 1], pl.INT32]):\n");
        } else {
            h.push_str("    def host(self):\n");
        }
        for (w, _, dt, numel) in &wins {
            let eb = if *dt == "pl.FP32" || *dt == "pl.INT32" { 4 } else { 2 };
            h.push_str(&format!("{IND}{w}_buf = pld.alloc_window_buffer({numel} * {eb}, name=\"{w}\")\n"));
        }
        for (w, shape, dt, _) in &wins {
            h.push_str(&format!("{IND}{w} = pld.window({w}_buf, {shape}, dtype={dt})\n"));
        }
        let dargs = if a2av { format!("ones[r], {}", names.join(", ")) } else { names.join(", ") };
        // In a loop every iteration prepares fresh data, as a training step brings new
        // gradients: an allreduce then never runs on its own (equal or overflowed) results.
        let (head, pad) = if self.iters > 1 {
            (format!("{IND}for it in pl.range({}):\n", self.iters), format!("{IND}    "))
        } else {
            (String::new(), IND.to_string())
        };
        h.push_str(&head);
        h.push_str(&format!(
            "{pad}for r in pl.range(pld.world_size()):\n{pad}    self.prepare_orch({dargs}, device=r)\n"
        ));
        let call = match self.coll {
            Coll::MeshAllreduce => {
                "data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, mode=\"mesh\")"
            }
            Coll::RingAllreduce => {
                "data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum, mode=\"ring\")"
            }
            Coll::Allgather => "data = pld.tensor.allgather(stage, data, signal)",
            Coll::AllToAllV => "data = pld.tensor.all_to_all_v(stage, data, signal, counts, recv)",
            Coll::ReduceScatter => "data = pld.tensor.reduce_scatter(data, signal, op=pld.ReduceOp.Sum)",
            Coll::Broadcast => "data = pld.tensor.broadcast(data, signal, root=0)",
        };
        if self.iters > 0 {
            h.push_str(&format!("{pad}{call}\n"));
        }
        format!(
            "import pypto.language as pl\nimport pypto.language.distributed as pld\n\n\
             NR = pl.dynamic(\"NR\")\n\n@pl.program\nclass Bench:\n{k}{h}"
        )
    }

    /// The prepare kernel's body that fills the collective's source window with real values
    /// (`rank + 1` in every element): a reduction then changes every byte it stores back, and
    /// a copy moves values its target does not hold yet, so no store is an idempotent re-store
    /// (which the race checker may skip) as it would be over zeroed windows.
    fn fill_source(&self) -> String {
        let n = self.size();
        let tile = (1..=n.min(FILL_TILE)).rev().find(|t| n % t == 0).unwrap_or(1);
        let (src, rows) = match self.coll {
            Coll::MeshAllreduce | Coll::RingAllreduce | Coll::Broadcast => ("data", None),
            Coll::Allgather => ("stage", None),
            Coll::AllToAllV => ("stage", Some("NR")),
            Coll::ReduceScatter => ("data", Some("NR")),
        };
        let mut b = format!(
            "{IND}ctx = pld.get_comm_ctx({src})\n{IND}fill = pl.full([1, {tile}], pld.rank(ctx) + 1, dtype=pl.FP32)\n"
        );
        let count = n / tile;
        let store = |indent: &str, row: &str| {
            format!("{indent}for i in pl.range({count}):\n{indent}    pl.store(fill, [{row}, i * {tile}], {src})\n")
        };
        match rows {
            None => b.push_str(&store(IND, "0")),
            Some(nr) => {
                b.push_str(&format!("{IND}for j in pl.range({nr}):\n"));
                b.push_str(&store(&format!("{IND}    "), "j"));
            }
        }
        b
    }

    /// Host inputs: all_to_all_v needs its send counts (1 row to every destination).
    pub fn inputs(&self) -> pld_sim::Inputs {
        let mut m = pld_sim::Inputs::new();
        if self.coll == Coll::AllToAllV {
            let p = self.p;
            m.insert("ones".into(), pld_sim::HostTensor::from_i32(vec![p, p, 1], &vec![1; p * p]));
        }
        m
    }
}

const IND: &str = "        ";

/// Elements per tile of the source fill (4 KiB of FP32). When the simulator held a tile as
/// `f64` lanes, a 16 KiB FP32 fill tile (32 KiB in the simulator, plus its encoded copy) was the
/// largest single allocation of a 64 KiB run — the preparation's memory, not the collective's;
/// kept, so the rows stay comparable with older builds (D-sim-31).
const FILL_TILE: usize = 1024;
