//! The `tile-buffer-reuse` rule: no instruction names a tile after a later allocation took
//! (part of) its buffer.
//!
//! Guarantees: the lines are read in print order (an allocation precedes every use of its
//! tile, and an allocation that reuses a buffer comes after the tile it takes it from); an
//! allocation takes the buffer of every earlier tile of the same memory whose byte range it
//! overlaps, unless the two share a buffer by aliasing; from then on any instruction naming the
//! earlier tile is a violation, except one elementwise instruction whose destination is the
//! taking tile on exactly the same bytes (PTO's in-place form, `tadd ins(%a, %b) outs(%a')`
//! with `%a'` on `%a`'s bytes, reads each element before it writes it). Without an address
//! plan the rule is silent (`level3-addresses` reports that).

use super::code::Code;
use super::OpClass;
use crate::pto::Inst;
use pld_ir::Diagnostic;
use std::collections::HashMap;

/// One allocated tile: its buffer (the slot it aliases, or its own), memory and byte range.
struct Placed<'k> {
    root: usize,
    loc: &'k str,
    range: (u64, u64),
    /// The tile whose allocation took this one's bytes, if any.
    taken_by: Option<&'k str>,
}

pub(super) fn reuse(c: &Code<'_>, out: &mut Vec<Diagnostic>) {
    let Some(addrs) = &c.k.plan.addrs else { return };
    let mut placed: HashMap<&str, Placed<'_>> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    for l in c.lines() {
        match &l.inst {
            Inst::AllocTile { result, slot, ty, .. } => {
                let Some(&addr) = addrs.get(*slot) else { continue };
                let root = c.k.plan.aliases.get(*slot).copied().flatten().unwrap_or(*slot);
                let range = (addr, addr.saturating_add(ty.bytes().max(0) as u64));
                for name in &order {
                    let Some(p) = placed.get_mut(name) else { continue };
                    let overlaps = p.range.0 < range.1 && range.0 < p.range.1;
                    if p.taken_by.is_none() && p.root != root && p.loc == ty.loc && overlaps {
                        p.taken_by = Some(result.as_str());
                    }
                }
                placed.insert(result.as_str(), Placed { root, loc: ty.loc.as_str(), range, taken_by: None });
                order.push(result.as_str());
            }
            Inst::Dps(d) => {
                for (k, o) in d.ins.iter().chain(&d.outs).enumerate() {
                    let Some(p) = placed.get(o.value.as_str()) else { continue };
                    let Some(taker) = p.taken_by else { continue };
                    let in_place = k < d.ins.len()
                        && d.class == OpClass::Elementwise
                        && d.outs.iter().any(|w| w.value == taker)
                        && placed.get(taker).is_some_and(|t| t.range == p.range);
                    if in_place {
                        continue;
                    }
                    let (t0, t1) = placed.get(taker).map_or((0, 0), |t| t.range);
                    let msg = format!(
                        "names tile {} ({}..{} of {}), whose bytes tile {taker} ({t0}..{t1}) already took",
                        o.value, p.range.0, p.range.1, p.loc
                    );
                    out.push(
                        c.error(Some(l), "tile-buffer-reuse", msg)
                            .with_note("a tile must stay allocated until its last use; the address plan let a later tile reuse its buffer while it was still read"),
                    );
                }
            }
            _ => {}
        }
    }
}
