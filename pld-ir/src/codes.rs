//! The error codes pld attaches to its diagnostics and fault reports, and what
//! `pld explain CODE` prints for each: one table, the only place codes are defined.
//!
//! Guarantees: every code is unique, five characters (`E` and four digits); every entry has a
//! one-line summary, an explanation, a minimal wrong example and its fixed form. Compile-time
//! codes are `E00xx` (calls, names, kwargs), `E01xx` (per-family op rules, from the seed) and
//! `E02xx` (tile rules); run-time faults of the simulator are `E03xx`.

/// One error code and its explanation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorCode {
    /// `E0001`.
    pub code: &'static str,
    /// One line: what the error is.
    pub summary: &'static str,
    /// Why it is an error and how to fix it.
    pub explanation: &'static str,
    /// A minimal program fragment that has the error.
    pub wrong: &'static str,
    /// The same fragment, fixed.
    pub fixed: &'static str,
}

/// An op name the registry does not know.
pub const UNKNOWN_OP: &str = "E0001";
/// A keyword argument the callee does not take.
pub const UNKNOWN_KWARG: &str = "E0002";
/// An enum member that does not exist.
pub const UNKNOWN_ENUM_MEMBER: &str = "E0003";
/// A required argument is missing.
pub const MISSING_ARGUMENT: &str = "E0004";
/// An argument's type does not match the parameter.
pub const CALL_TYPE_MISMATCH: &str = "E0005";
/// Too many or too few positional arguments.
pub const ARGUMENT_COUNT: &str = "E0006";
/// A name that is not defined.
pub const UNKNOWN_NAME: &str = "E0007";
/// A keyword argument's value is of the wrong kind or out of range.
pub const BAD_KWARG_VALUE: &str = "E0008";
/// Window and window-buffer rules.
pub const WINDOW_RULE: &str = "E0101";
/// Signal (notify / wait) rules.
pub const SIGNAL_RULE: &str = "E0102";
/// Remote transfer (put / get / remote load and store) rules.
pub const TRANSFER_RULE: &str = "E0103";
/// Collective rules.
pub const COLLECTIVE_RULE: &str = "E0104";
/// Rules of the other distributed ops (system queries, barriers, deferred completion).
pub const DISTRIBUTED_RULE: &str = "E0105";
/// A collective reached under rank-dependent control flow.
pub const RANK_DIVERGENT_COLLECTIVE: &str = "E0106";
/// Tile rules (shapes, memory spaces, dtypes of tile ops).
pub const TILE_RULE: &str = "E0201";
/// Tensor-op rules (views, slices, reads).
pub const TENSOR_RULE: &str = "E0202";
/// Deadlock.
pub const DEADLOCK: &str = "E0301";
/// Data race.
pub const RACE: &str = "E0302";
/// Read of uninitialised window bytes.
pub const UNINIT_READ: &str = "E0303";
/// Wait satisfied by a stale credit.
pub const STALE_CREDIT: &str = "E0304";
/// Credit leak.
pub const CREDIT_LEAK: &str = "E0305";
/// Out-of-bounds window access.
pub const OUT_OF_BOUNDS: &str = "E0306";
/// Peer index out of range.
pub const PEER_OUT_OF_RANGE: &str = "E0307";
/// Set and atomic-add mixed on one signal cell.
pub const MIXED_NOTIFY: &str = "E0308";

/// Every code, in code order.
pub static CODES: &[ErrorCode] = &[
    ErrorCode {
        code: UNKNOWN_OP,
        summary: "unknown op",
        explanation: "The call names an op the registry does not know. `pld ops` lists every op; \
the diagnostic suggests the closest name.",
        wrong: "t = pl.ad(x, y)",
        fixed: "t = pl.add(x, y)",
    },
    ErrorCode {
        code: UNKNOWN_KWARG,
        summary: "unknown keyword argument",
        explanation: "The callee takes no keyword argument of that name. `pld ops NAME` prints an \
op's kwargs with their defaults; for a DSL function, its signature names its parameters.",
        wrong: "data = pld.tensor.allreduce(data, signal, opp=pld.ReduceOp.Sum)",
        fixed: "data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)",
    },
    ErrorCode {
        code: UNKNOWN_ENUM_MEMBER,
        summary: "unknown enum member",
        explanation: "The enum has no member of that name. The diagnostic lists the members.",
        wrong: "data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Add)",
        fixed: "data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)",
    },
    ErrorCode {
        code: MISSING_ARGUMENT,
        summary: "missing argument",
        explanation: "A required argument of the callee is not passed. The diagnostic names the \
missing parameter and shows the callee's signature.",
        wrong: "out = self.scale_step(x)            # def scale_step(self, x, out)",
        fixed: "out = self.scale_step(x, out)",
    },
    ErrorCode {
        code: CALL_TYPE_MISMATCH,
        summary: "argument type does not match the parameter",
        explanation: "An argument of a call to a DSL function has a type (kind, shape or dtype) \
other than the parameter's annotation. The diagnostic points at both.",
        wrong: "x: pl.Tensor[[1, 64], pl.FP32]\nout = self.step(x)    # def step(self, x: pl.Tensor[[1, 128], pl.FP32])",
        fixed: "x: pl.Tensor[[1, 128], pl.FP32]\nout = self.step(x)",
    },
    ErrorCode {
        code: ARGUMENT_COUNT,
        summary: "wrong number of positional arguments",
        explanation: "The op takes a fixed number of positional arguments (some optional).",
        wrong: "t = pl.add(x)",
        fixed: "t = pl.add(x, y)",
    },
    ErrorCode {
        code: UNKNOWN_NAME,
        summary: "unknown name",
        explanation: "The name is not a parameter, local, module constant or builder parameter \
in scope. The diagnostic suggests the closest name in scope.",
        wrong: "for r in pl.range(pld.world_size()):\n    self.step(inputs[rank], data, device=r)",
        fixed: "for r in pl.range(pld.world_size()):\n    self.step(inputs[r], data, device=r)",
    },
    ErrorCode {
        code: BAD_KWARG_VALUE,
        summary: "keyword argument of the wrong kind",
        explanation: "The kwarg exists but its value has the wrong kind (an int where an enum is \
expected, a name where a constant is expected) or is out of range.",
        wrong: "data = pld.tensor.allreduce(data, signal, op=0)",
        fixed: "data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)",
    },
    ErrorCode {
        code: WINDOW_RULE,
        summary: "window rule violated",
        explanation: "A window views a window buffer (`pld.alloc_window_buffer`) with a shape and \
dtype whose bytes fit the buffer; window buffers are allocated by the host orchestrator.",
        wrong: "buf = pld.alloc_window_buffer(64 * 4, name=\"data\")\ndata = pld.window(buf, [1, 128], dtype=pl.FP32)",
        fixed: "buf = pld.alloc_window_buffer(128 * 4, name=\"data\")\ndata = pld.window(buf, [1, 128], dtype=pl.FP32)",
    },
    ErrorCode {
        code: SIGNAL_RULE,
        summary: "signal rule violated",
        explanation: "Signals are INT32 windows; `notify` takes (signal, peer, value) and `wait` \
takes (signal, index, value) with a comparison; a signal cell is set or atomically added, \
never both.",
        wrong: "signal = pld.window(sig_buf, [NR], dtype=pl.FP32)",
        fixed: "signal = pld.window(sig_buf, [NR], dtype=pl.INT32)",
    },
    ErrorCode {
        code: TRANSFER_RULE,
        summary: "remote transfer rule violated",
        explanation: "`put`/`get` and remote loads and stores move data between a local tensor and \
a peer's window: the remote side must be a window, the shapes must match, the peer an integer \
rank.",
        wrong: "pld.tensor.put(local, peer, local)",
        fixed: "pld.tensor.put(data, peer, local)     # data: a window",
    },
    ErrorCode {
        code: COLLECTIVE_RULE,
        summary: "collective rule violated",
        explanation: "A collective takes a data window and a signal window sized for the ranks \
(`pld.world_size()` INT32 cells and more for the ring), with a reduce op from `pld.ReduceOp`.",
        wrong: "signal = pld.window(sig_buf, [2], dtype=pl.INT32)   # run with --ranks 4\ndata = pld.tensor.allreduce(data, signal)",
        fixed: "signal = pld.window(sig_buf, [NR], dtype=pl.INT32)\ndata = pld.tensor.allreduce(data, signal)",
    },
    ErrorCode {
        code: DISTRIBUTED_RULE,
        summary: "distributed op rule violated",
        explanation: "System queries, barriers and deferred completion are allowed only at the \
levels the seed names (for instance `pld.world_size()` in orchestration code).",
        wrong: "@pl.function(type=pl.FunctionType.InCore)\ndef k(self, ...):\n    n = pld.world_size()",
        fixed: "@pl.function(type=pl.FunctionType.InCore)\ndef k(self, ..., n: pl.Scalar[pl.INT32]):\n    ...",
    },
    ErrorCode {
        code: RANK_DIVERGENT_COLLECTIVE,
        summary: "collective under rank-dependent control flow",
        explanation: "Every rank must reach the same collectives in the same order: a collective \
waits for every rank of its domain, so a rank that skips it, or calls it a different number of \
times, leaves the others waiting forever (on hardware, until TWAIT's spin-count assert fires). \
`pld check` rejects a collective (`pld.tensor.*`, `pld.all_reduce` and the other ergonomic \
forms, at host, chip or InCore level) reached under an `if` or `while` whose condition depends \
on the rank, inside a `for` whose trip count does, or after a `return` only some ranks take. \
A value depends on the rank when it comes from `pld.rank(ctx)`, from an argument passed per \
device (`k(x[r], r, device=r)`), or is computed from one. Hand-written notify/wait protocols \
are not collectives and are not checked here: the simulator finds their deadlocks.",
        wrong: "me = pld.rank(ctx)\nif me == 0:\n    data = pld.all_reduce(data)",
        fixed: "me = pld.rank(ctx)\ndata = pld.all_reduce(data)     # every rank calls it\nif me == 0:\n    ...",
    },
    ErrorCode {
        code: TILE_RULE,
        summary: "tile rule violated",
        explanation: "Tile ops take tiles of matching shapes and dtypes in the memory spaces the op \
needs; a tile's shape is static and fits the on-core buffer.",
        wrong: "a = pl.load(x, [0, 0], [1, 64])\nb = pl.load(y, [0, 0], [1, 32])\nc = pl.add(a, b)",
        fixed: "a = pl.load(x, [0, 0], [1, 64])\nb = pl.load(y, [0, 0], [1, 64])\nc = pl.add(a, b)",
    },
    ErrorCode {
        code: TENSOR_RULE,
        summary: "tensor op rule violated",
        explanation: "Tensor views, slices and reads stay inside the tensor and use as many \
offsets as the tensor has dimensions.",
        wrong: "row = x[0, 0:200]     # x: pl.Tensor[[1, 128], pl.FP32]",
        fixed: "row = x[0, 0:128]",
    },
    ErrorCode {
        code: DEADLOCK,
        summary: "deadlock",
        explanation: "Every unfinished rank waits on a signal no rank is left to notify. The \
report shows the wait-for graph: who waits on which cell, who could still notify it, and the \
cycle or the missing notifier. A frequent cause is a rank-divergent branch (`if me != 0:`) \
that skips a notify another rank waits for.",
        wrong: "if me != 0:\n    pld.tensor.notify(signal, peer, 1)\npld.tensor.wait(signal, me, 1)",
        fixed: "pld.tensor.notify(signal, peer, 1)\npld.tensor.wait(signal, me, 1)",
    },
    ErrorCode {
        code: RACE,
        summary: "data race",
        explanation: "Two ranks access the same window bytes, at least one writing, with no \
notify/wait or barrier ordering them.",
        wrong: "pld.tensor.put(data, peer, local)\nt = pl.load(data, [0, 0], [1, 64])   # peer's put unordered",
        fixed: "pld.tensor.put(data, peer, local)\npld.tensor.notify(signal, peer, 1)\npld.tensor.wait(signal, me, 1)\nt = pl.load(data, [0, 0], [1, 64])",
    },
    ErrorCode {
        code: UNINIT_READ,
        summary: "read of uninitialised window bytes",
        explanation: "A window was read where nothing wrote it yet. Wait for the writer's notify \
before reading, or write the bytes first.",
        wrong: "t = pl.load(data, [0, 0], [1, 64])   # before any rank stored into data",
        fixed: "pl.store(x_tile, [0, 0], data)\nt = pl.load(data, [0, 0], [1, 64])",
    },
    ErrorCode {
        code: STALE_CREDIT,
        summary: "wait satisfied by a stale credit",
        explanation: "A wait was released by credits an earlier call of the protocol deposited \
on the same cell, so it did not wait for this call's notify. Reset the cell (a self-clearing \
wait) or use a fresh cell per call.",
        wrong: "for i in pl.range(2):\n    pld.tensor.notify(signal, peer, 1, op=pld.NotifyOp.AtomicAdd)\n    pld.tensor.wait(signal, me, 1, cmp=pld.WaitCmp.Ge)",
        fixed: "for i in pl.range(2):\n    pld.tensor.notify(signal, peer, 1, op=pld.NotifyOp.AtomicAdd)\n    pld.tensor.wait(signal, me, i + 1, cmp=pld.WaitCmp.Ge)",
    },
    ErrorCode {
        code: CREDIT_LEAK,
        summary: "credit leak",
        explanation: "A self-clearing signal cell is non-zero when the run ends: a notify had no \
matching wait. The report points at the notify.",
        wrong: "pld.tensor.notify(signal, peer, 1)\npld.tensor.notify(signal, peer, 1)\npld.tensor.wait(signal, me, 1)",
        fixed: "pld.tensor.notify(signal, peer, 1)\npld.tensor.wait(signal, me, 1)",
    },
    ErrorCode {
        code: OUT_OF_BOUNDS,
        summary: "out-of-bounds window or host tensor access",
        explanation: "A load, store or transfer touches bytes outside the window or host tensor. On a host \
tensor whose extent is a dynamic dimension (`pl.dynamic`), the report names the dimension and where \
its value came from (`--bind NAME=VALUE` or `--ranks`).",
        wrong: "t = pl.load(data, [0, 64], [1, 128])   # data: [1, 128]",
        fixed: "t = pl.load(data, [0, 0], [1, 128])",
    },
    ErrorCode {
        code: PEER_OUT_OF_RANGE,
        summary: "peer index out of range",
        explanation: "A peer rank is negative or not below the number of ranks (`--ranks`). \
Wrap it with `% pld.world_size()`.",
        wrong: "peer = me + 1",
        fixed: "peer = (me + 1) % pld.world_size()",
    },
    ErrorCode {
        code: MIXED_NOTIFY,
        summary: "set and atomic-add mixed on one signal cell",
        explanation: "One signal cell was both set and atomically added during a run; its value \
then depends on the order. Use one notify op per cell.",
        wrong: "pld.tensor.notify(signal, peer, 1)\npld.tensor.notify(signal, peer, 1, op=pld.NotifyOp.AtomicAdd)",
        fixed: "pld.tensor.notify(signal, peer, 1, op=pld.NotifyOp.AtomicAdd)\npld.tensor.notify(signal, peer, 1, op=pld.NotifyOp.AtomicAdd)",
    },
];

/// The code of an op rule a deducer enforces, by the op's family (`core` splits into tile
/// and tensor ops by the op's namespace).
pub fn for_family(family: &str, op: &str) -> &'static str {
    match family {
        "window" => WINDOW_RULE,
        "system_sync" => SIGNAL_RULE,
        "put_get" | "tile_remote" => TRANSFER_RULE,
        "collectives" | "collective_api" => COLLECTIVE_RULE,
        "core" if op.split('.').next() == Some("tile") => TILE_RULE,
        "core" => TENSOR_RULE,
        _ => DISTRIBUTED_RULE,
    }
}

/// The entry of `code` (case-insensitive; `E1`, `e0001` and `0001` all name `E0001`).
pub fn lookup(code: &str) -> Option<&'static ErrorCode> {
    let digits = code.trim().trim_start_matches(['E', 'e']);
    let n: u32 = digits.parse().ok()?;
    CODES.iter().find(|c| c.code[1..].parse::<u32>().ok() == Some(n))
}

/// The text `pld explain CODE` prints.
pub fn explain(c: &ErrorCode) -> String {
    format!(
        "{}: {}\n\n{}\n\nWrong:\n\n{}\n\nFixed:\n\n{}\n",
        c.code,
        c.summary,
        c.explanation,
        indent(c.wrong),
        indent(c.fixed)
    )
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_well_formed_and_complete() {
        assert!(CODES.len() >= 20);
        for (i, c) in CODES.iter().enumerate() {
            assert!(
                c.code.len() == 5
                    && c.code.starts_with('E')
                    && c.code[1..].chars().all(|d| d.is_ascii_digit())
            );
            assert!(CODES[..i].iter().all(|o| o.code != c.code), "{} twice", c.code);
            assert!(!c.summary.is_empty() && !c.explanation.is_empty());
            assert_ne!(c.wrong, c.fixed, "{}", c.code);
        }
        for c in [
            UNKNOWN_OP,
            UNKNOWN_KWARG,
            UNKNOWN_ENUM_MEMBER,
            MISSING_ARGUMENT,
            CALL_TYPE_MISMATCH,
            ARGUMENT_COUNT,
        ]
        .into_iter()
        .chain([UNKNOWN_NAME, BAD_KWARG_VALUE, WINDOW_RULE, SIGNAL_RULE, TRANSFER_RULE, COLLECTIVE_RULE])
        .chain([DISTRIBUTED_RULE, TILE_RULE, TENSOR_RULE, DEADLOCK, RACE, UNINIT_READ, STALE_CREDIT])
        .chain([
            CREDIT_LEAK,
            OUT_OF_BOUNDS,
            PEER_OUT_OF_RANGE,
            MIXED_NOTIFY,
            RANK_DIVERGENT_COLLECTIVE,
        ]) {
            assert_eq!(lookup(c).map(|e| e.code), Some(c), "every constant is in the table");
        }
        assert_eq!(lookup("e1").map(|c| c.code), Some(UNKNOWN_OP));
        assert_eq!(lookup("E0301").map(|c| c.code), Some(DEADLOCK));
        assert!(lookup("E9999").is_none() && lookup("x").is_none());
    }
}
