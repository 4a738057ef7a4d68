//! Every op that can survive the pass pipeline has a pto emitter and simulator semantics, or
//! is listed below with the reason it needs none (D6 in docs/decisions/ir.md).
//!
//! The rule: an op survives the pipeline when it offers no lowering the pipeline runs
//! (`lowering_kinds()` is empty but for the on-request `BuiltinKernel`) — every lowering kind rewrites the op away at each level its pass runs
//! (`ConvertTensorToTileOps` in kernels; `LowerCompositeOps`, `LowerHostTensorCollectives`
//! and `LowerL2TensorCollectives` at the levels a collective may be called from). A
//! surviving op reaches the simulator at whatever level it is called, so it must have
//! semantics, without exception. It needs an emitter unless it can only run in host or chip
//! orchestration code, which codegen describes in the orchestration JSON instead of emitting
//! ([`NO_EMITTER`]). An op whose canonicalizer always redirects the call to another op at
//! call-build time never enters the IR at all ([`CANONICALIZED_AWAY`]).

use pld_ir::table::OpId;

/// Surviving ops that never reach a kernel body, so no pto emitter exists for them.
const NO_EMITTER: &[(&str, &str)] = &[
    // The per-device builtin dispatches the host/chip collective lowerings create in
    // orchestration functions; codegen renders each variant as its own kernel module
    // (`builtin::render`), it never emits the dispatch call itself.
    ("builtin.tensor.all_to_all", "orchestration dispatch of a rendered builtin kernel"),
    ("builtin.tensor.all_to_all_v", "orchestration dispatch of a rendered builtin kernel"),
    ("builtin.tensor.allgather", "orchestration dispatch of a rendered builtin kernel"),
    ("builtin.tensor.allreduce", "orchestration dispatch of a rendered builtin kernel"),
    ("builtin.tensor.allreduce_ring", "orchestration dispatch of a rendered builtin kernel"),
    ("builtin.tensor.barrier", "orchestration dispatch of a rendered builtin kernel"),
    ("builtin.tensor.broadcast", "orchestration dispatch of a rendered builtin kernel"),
    ("builtin.tensor.reduce_scatter", "orchestration dispatch of a rendered builtin kernel"),
    // Host orchestration only: window allocation and the world size become entries of the
    // orchestration description (window buffers, comm domains), not kernel instructions.
    ("pld.tensor.alloc_window_buffer", "host-only: a window buffer of the orchestration description"),
    ("pld.tensor.window", "host-only: a window view of the orchestration description"),
    ("pld.system.world_size", "host-only: the comm domain size of the orchestration description"),
];

/// Ops whose registered canonicalizer always redirects the call to another op, so no call of
/// them is ever built (the ergonomic collective spellings belong here when they are ops).
const CANONICALIZED_AWAY: &[(&str, &str)] = &[
    ("pld.all_gather", "ergonomic spelling: canonicalized onto its pld.tensor.* op when the call is built"),
    ("pld.all_reduce", "ergonomic spelling: canonicalized onto its pld.tensor.* op when the call is built"),
    ("pld.all_to_all", "ergonomic spelling: canonicalized onto its pld.tensor.* op when the call is built"),
    ("pld.all_to_all_v", "ergonomic spelling: canonicalized onto its pld.tensor.* op when the call is built"),
    ("pld.barrier", "ergonomic spelling: canonicalized onto its pld.tensor.* op when the call is built"),
    ("pld.broadcast", "ergonomic spelling: canonicalized onto its pld.tensor.* op when the call is built"),
    (
        "pld.reduce_scatter",
        "ergonomic spelling: canonicalized onto its pld.tensor.* op when the call is built",
    ),
];

/// The `BuiltinKernel` lowering only runs on request, after the pipeline
/// (`MaterializeBuiltinKernels`), so an op offering only it survives the pipeline.
fn survives(def: &pld_ir::OpDef) -> bool {
    def.lowering_kinds().iter().all(|k| *k == pld_ir::LoweringKind::BuiltinKernel)
        && !CANONICALIZED_AWAY.iter().any(|(n, _)| *n == def.name)
}

#[test]
fn every_surviving_op_has_an_emitter_and_simulator_semantics() {
    let reg = pld_testkit::init();
    let emitters = pld_codegen_pto::emitters();
    let mut missing = Vec::new();
    for r in reg.ops().filter(|r| survives(r.def)) {
        let name = r.def.name;
        if pld_sim::sem::of(r.def).is_none() {
            missing.push(format!("{name} has no simulator semantics (registered at {}:{})", r.file, r.line));
        }
        if emitters.of(r.def).is_none() && !NO_EMITTER.iter().any(|(n, _)| *n == name) {
            missing.push(format!("{name} has no pto emitter (registered at {}:{})", r.file, r.line));
        }
    }
    assert!(missing.is_empty(), "incomplete op tables:\n{}", missing.join("\n"));
}

#[test]
fn every_exemption_names_a_surviving_op_without_an_emitter() {
    let reg = pld_testkit::init();
    let emitters = pld_codegen_pto::emitters();
    for (name, reason) in NO_EMITTER {
        assert!(!reason.is_empty());
        let def = reg.lookup(name).unwrap_or_else(|| panic!("exempt op {name} is not registered"));
        assert_eq!(def.name, *name, "exemptions name canonical ops");
        assert!(survives(def), "exempt op {name} is lowered away: drop it from the list");
        assert!(emitters.of(def).is_none(), "exempt op {name} has an emitter: drop it from the list");
    }
}

#[test]
fn every_canonicalized_away_op_has_a_canonicalizer() {
    let reg = pld_testkit::init();
    for (name, reason) in CANONICALIZED_AWAY {
        assert!(!reason.is_empty());
        let def = reg.lookup(name).unwrap_or_else(|| panic!("listed op {name} is not registered"));
        assert_eq!(def.name, *name, "the list names canonical ops");
        assert!(reg.canonicalizer(name).is_some(), "{name} has no canonicalizer: drop it from the list");
    }
}

#[test]
fn ids_are_dense_and_index_both_tables() {
    let reg = pld_testkit::init();
    let emitters = pld_codegen_pto::emitters();
    for (i, r) in reg.ops().enumerate() {
        let id = reg.id(r.def.name).expect("registered op has an id");
        assert_eq!(id.index(), i, "ids follow the sorted op list");
        assert_eq!(reg.id_of(r.def), Some(id));
        assert_eq!(reg.op(id).name, r.def.name);
        assert_eq!(emitters.get(id).is_some(), emitters.get(r.def.name).is_some());
        assert_eq!(pld_sim::sem::of(r.def).is_some(), pld_sim::sem::lookup(r.def.name).is_some());
    }
    assert_eq!(reg.id("no.such.op"), None);
    let ids: Vec<OpId> = reg.ops().filter_map(|r| reg.id(r.def.name)).collect();
    assert!(ids.windows(2).all(|w| w[0].index() + 1 == w[1].index()) && ids.len() == reg.len());
}
