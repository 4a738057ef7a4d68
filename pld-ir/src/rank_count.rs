//! Which `pl.dynamic` dimensions of a program are the rank count: the ones a run binds from
//! `--ranks` when no `--bind` gives them (D-cli-10). Every other dynamic dimension is data:
//! bound by `--bind` or by the shape of an `--input`, never by a silent default.
//!
//! Guarantees: a dimension symbol is the rank count when the program uses it as one, and only
//! then:
//! - it is the extent of a tensor dimension that a rank indexes — the variable of a device
//!   loop (`for r in pl.range(pld.world_size())`, or a loop to a kernel's `pld.system.nranks`),
//!   or a rank query (`pld.system.rank`) — as an offset of a view or access of that tensor
//!   (`x[r]`, `pl.load(x, [rank, 0], …)`);
//! - or it appears in the shape of a window (`pld.DistributedTensor`): windows are the
//!   symmetric per-rank memory the seed sizes by the rank count (`[NR, 1]` signals,
//!   `[2*(NR-1), NR]` ring signals, `[NR, SIZE]` gather targets, `[NR*MAXR, SIZE]` inboxes).
//!
//! Copies of a rank or of the rank count through assignments count as the rank or the count.
//!
//! The binding rule itself is here too, so `pld run` and the library (`pld_sim::run`) apply
//! one implementation: `--bind` first, then the rank count for the rank-count dimensions
//! ([`Program::bind_rank_counts`]), then the inputs' shapes; a dimension a shape uses that is
//! still unbound is an error ([`Program::unbound_dims`], [`unbound_dims_message`]).

use crate::expr::{Expr, ExprKind};
use crate::func::{Function, Program};
use crate::stmt::StmtKind;
use crate::types::Type;
use crate::value::ValueId;
use crate::vocab::{NRANKS, RANK, WORLD_SIZE};
use std::collections::{HashMap, HashSet};

impl Program {
    /// The dynamic dimensions that take the rank count: those recorded before lowering
    /// ([`Program::rank_count_dims`]), else the ones [`Program::rank_count_syms`] finds now.
    pub fn rank_counts(&self) -> Vec<String> {
        self.rank_count_dims.clone().unwrap_or_else(|| self.rank_count_syms())
    }

    /// Records [`Program::rank_count_syms`] of the program as it is now, unless recorded
    /// already (the pass pipeline calls it before lowering).
    pub fn record_rank_counts(&mut self) {
        if self.rank_count_dims.is_none() {
            self.rank_count_dims = Some(self.rank_count_syms());
        }
    }

    /// Binds every rank-count dimension ([`Program::rank_counts`]) that `syms` does not bind
    /// yet to `nranks`; returns the ones it bound. The first half of the one binding rule
    /// (D-cli-10) that `pld run` and `pld_sim::run` share; [`Program::unbound_dims`] is the
    /// second.
    pub fn bind_rank_counts(&self, nranks: i64, syms: &mut HashMap<String, i64>) -> Vec<String> {
        let mut bound = Vec::new();
        for s in self.rank_counts() {
            if !syms.contains_key(&s) {
                syms.insert(s.clone(), nranks);
                bound.push(s);
            }
        }
        bound
    }

    /// The dynamic dimensions a tensor or window shape of the program uses that `syms` does
    /// not bind, in `dyn_syms` order: after `--bind`, the rank count and the inputs' shapes,
    /// each is an error ([`unbound_dims_message`]), never a silent default.
    pub fn unbound_dims(&self, syms: &HashMap<String, i64>) -> Vec<String> {
        let mut used = Vec::new();
        for f in &self.functions {
            for (_, d) in f.values.iter() {
                if let Some(t) = d.ty.as_tensor_like() {
                    Expr::collect_syms(t.shape.iter(), &mut used);
                }
            }
        }
        self.dyn_syms.iter().filter(|s| used.contains(s) && !syms.contains_key(*s)).cloned().collect()
    }
}

/// Where a rank-count dimension's value came from, for reports.
pub fn rank_count_source(sym: &str) -> String {
    format!("--ranks; `{sym}` is the rank count and no --bind {sym}=... was given")
}

/// The error for dynamic dimensions nothing bound ([`Program::unbound_dims`]), naming the
/// `--bind NAME=VALUE` of each.
pub fn unbound_dims_message(unbound: &[String]) -> String {
    let names = unbound.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ");
    let binds = unbound.iter().map(|s| format!("--bind {s}=VALUE")).collect::<Vec<_>>().join(" ");
    format!(
        "dynamic dimension{} {names} {} not bound: pass {binds}, or an --input whose shape has it (only a dimension the program uses as the rank count — indexed by a device loop or a rank, or in a window's shape — takes --ranks)",
        if unbound.len() == 1 { "" } else { "s" },
        if unbound.len() == 1 { "is" } else { "are" },
    )
}

impl Program {
    /// The dynamic dimensions of the program (of [`Program::dyn_syms`]) that it uses as the
    /// rank count, in `dyn_syms` order (see the module docs for the rule).
    pub fn rank_count_syms(&self) -> Vec<String> {
        let mut found = Vec::new();
        for f in &self.functions {
            window_syms(f, &mut found);
            rank_indexed_syms(f, &mut found);
        }
        self.dyn_syms.iter().filter(|s| found.contains(s)).cloned().collect()
    }
}

/// Symbols in the shapes of the windows of `f` (parameters and locals).
fn window_syms(f: &Function, out: &mut Vec<String>) {
    for (_, d) in f.values.iter() {
        if let Type::DistTensor(t) = &d.ty {
            Expr::collect_syms(t.tensor.shape.iter(), out);
        }
    }
}

/// Symbols that are the extent of a tensor dimension indexed by a rank.
fn rank_indexed_syms(f: &Function, out: &mut Vec<String>) {
    let ranks = rank_values(f);
    let is_rank = |e: &Expr| match &e.kind {
        ExprKind::Var(v) => ranks.contains(v),
        ExprKind::Call(c) => c.callee.name() == RANK,
        _ => false,
    };
    f.body.walk_exprs(&mut |e| {
        let Some(c) = e.as_call() else { return };
        let Some(t) = c.args.first().and_then(|a| a.ty(&f.values).as_tensor_like().cloned()) else {
            return;
        };
        for a in &c.args[1..] {
            let ExprKind::Tuple(offsets) = &a.kind else { continue };
            if offsets.len() != t.shape.len() {
                continue;
            }
            for (k, o) in offsets.iter().enumerate() {
                if is_rank(o) {
                    if let ExprKind::Sym(s) = &t.shape[k].kind {
                        if !out.contains(s) {
                            out.push(s.clone());
                        }
                    }
                }
            }
        }
    });
}

/// The values of `f` that hold a rank: device-loop variables over a rank count
/// (`pld.world_size()`, `pld.system.nranks`, or a copy of either), results of
/// `pld.system.rank`, and copies.
fn rank_values(f: &Function) -> HashSet<ValueId> {
    let mut counts: HashSet<ValueId> = HashSet::new();
    let mut ranks: HashSet<ValueId> = HashSet::new();
    // Assignments come before their uses in a walk, so one pass sees each copy's source.
    f.body.walk(&mut |s| match &s.kind {
        StmtKind::Assign { targets, value } if targets.len() == 1 => {
            let is = |set: &HashSet<ValueId>, name: &str| match &value.kind {
                ExprKind::Var(v) => set.contains(v),
                ExprKind::Call(c) => c.callee.name() == name,
                _ => false,
            };
            if is(&counts, WORLD_SIZE) || is(&counts, NRANKS) {
                counts.insert(targets[0]);
            } else if is(&ranks, RANK) {
                ranks.insert(targets[0]);
            }
        }
        StmtKind::For { var, stop, .. } => {
            let to_count = match &stop.kind {
                ExprKind::Var(v) => counts.contains(v),
                ExprKind::Call(c) => [WORLD_SIZE, NRANKS].contains(&c.callee.name()),
                _ => false,
            };
            if to_count {
                ranks.insert(*var);
            }
        }
        _ => {}
    });
    ranks
}
