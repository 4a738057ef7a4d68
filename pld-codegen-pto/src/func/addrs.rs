//! Tile-address planning: each tile allocation gets a slot whose byte address is assigned by a
//! per-memory stack (a region's tiles are released when it ends); each allocation line of the
//! body holds its slot as data ([`crate::pto::Inst::AllocTile`]) and the printer renders
//! that slot's `addr = ...` operand from this plan.
//!
//! Guarantees: an aliasing allocation shares its target's address; addresses are 32-byte
//! aligned; a region's trailing yield expression places its tiles off the bytes of the region's
//! tiles it reads (they are released, but still read; D-cg-31); no address is printed when a memory's high-water mark exceeds its capacity (the
//! verifier reports that, level3-addresses).

use super::{FnCx, Val};
use crate::mlir::{self, MTy};
use crate::pto::TileBuf;
use pld_ir::{Diagnostic, Expr};
use std::collections::HashMap;

/// The tile allocation of one function: each allocation's slot, the tile types that differ
/// from their IR type's, and the per-memory stack.
#[derive(Debug, Default)]
pub(crate) struct TileAlloc {
    /// Each allocation's slot.
    pub(super) slots: Vec<AllocSlot>,
    /// The tile-buffer type of each tile SSA whose type is not derived from its IR type
    /// (a pad value, an elementwise source's type, a subview).
    pub(super) types: HashMap<String, TileBuf>,
    /// The slot of each allocated tile SSA.
    pub(super) slot_of: HashMap<String, usize>,
    /// The next free byte per memory.
    pub(super) bump: HashMap<&'static str, u64>,
    /// The high-water mark per memory.
    pub(super) high: HashMap<&'static str, u64>,
    /// Byte ranges `(loc, start, end)` no new tile may take: the released tiles a yield
    /// expression still reads, while it is lowered.
    pub(super) reserved: Vec<(&'static str, u64, u64)>,
}

#[derive(Clone, Debug)]
pub(super) struct AllocSlot {
    /// Byte address inside its buffer.
    pub(super) addr: u64,
    /// Its memory and its size in bytes (whole 32-byte blocks).
    pub(super) loc: &'static str,
    pub(super) bytes: u64,
    /// The slot whose buffer this allocation aliases (a new valid region on the same memory).
    pub(super) alias: Option<usize>,
    /// The number of slots when the region that allocated it was released (`None` until then).
    pub(super) freed_at: Option<usize>,
}

/// The planner's state at the start of a nested region, restored at its end.
pub(super) struct Frame {
    bump: HashMap<&'static str, u64>,
    from: usize,
}

impl FnCx<'_> {
    /// Plans the slot of a new tile allocation of `bytes` bytes in memory `loc`, optionally
    /// aliasing the buffer of tile SSA `alias_of`; returns the slot.
    pub(super) fn plan_tile_slot(
        &mut self,
        loc: &'static str,
        bytes: u64,
        alias_of: Option<&str>,
    ) -> Result<usize, Diagnostic> {
        let alias = match alias_of {
            Some(a) => match self.tiles.slot_of.get(a) {
                Some(s) => Some(self.tiles.slots[*s].alias.unwrap_or(*s)),
                None => return Err(self.err(format!("tile {a} has no buffer to alias"))),
            },
            None => None,
        };
        // Stack allocation: a region's tiles are released when the region ends (see
        // `emit_nested`), so sibling branches and successive loops reuse the same space.
        let size = bytes.div_ceil(32) * 32;
        let addr = match alias {
            Some(target) => self.tiles.slots[target].addr,
            None => {
                let off = self.tiles.bump.entry(loc).or_insert(0);
                let mut addr = *off;
                // First fit above the stack top, off every reserved range.
                while let Some(end) = self
                    .tiles
                    .reserved
                    .iter()
                    .filter(|r| r.0 == loc && r.1 < addr + size && addr < r.2)
                    .map(|r| r.2)
                    .max()
                {
                    addr = end;
                }
                *off = addr + size;
                let high = self.tiles.high.entry(loc).or_insert(0);
                *high = (*high).max(*off);
                addr
            }
        };
        let slot = self.tiles.slots.len();
        self.tiles.slots.push(AllocSlot { addr, loc, bytes: size, alias, freed_at: None });
        Ok(slot)
    }

    /// Opens a nested region: its tiles are released by [`FnCx::release_frame`].
    pub(super) fn open_frame(&self) -> Frame {
        Frame { bump: self.tiles.bump.clone(), from: self.tiles.slots.len() }
    }

    /// Releases the tiles allocated since `frame` was opened: their space is reused by the
    /// next allocations (values defined in a region never escape it).
    pub(super) fn release_frame(&mut self, frame: Frame) {
        self.tiles.bump = frame.bump;
        let at = self.tiles.slots.len();
        for s in self.tiles.slots.iter_mut().skip(frame.from) {
            s.freed_at.get_or_insert(at);
        }
    }

    /// Reserves, until [`FnCx::end_reservations`], the bytes of every tile allocated since
    /// slot `from` (a region just released) that the yield expressions `ys` read.
    pub(super) fn reserve_read_by(&mut self, from: usize, ys: &[Expr]) {
        for v in ys.iter().flat_map(Expr::uses) {
            let Some(Val::Tile { ssa, .. }) = self.env.values.get(&v) else { continue };
            let Some(&s) = self.tiles.slot_of.get(ssa) else { continue };
            let root = self.tiles.slots[s].alias.unwrap_or(s);
            if root >= from {
                let r = &self.tiles.slots[root];
                self.tiles.reserved.push((r.loc, r.addr, r.addr + r.bytes));
            }
        }
    }

    /// Ends the reservations of [`FnCx::reserve_read_by`] (the yield has been lowered).
    pub(super) fn end_reservations(&mut self) {
        self.tiles.reserved.clear();
    }

    /// The planned address of every slot, whether they all fit their memories' capacities,
    /// and each memory's high-water mark (sorted by memory name).
    pub(super) fn address_plan(&self) -> (Vec<u64>, bool, Vec<(String, u64)>) {
        let fits = self.tiles.high.iter().all(|(loc, h)| *h <= mlir::capacity(loc, self.opts.target));
        let addrs: Vec<u64> = self.tiles.slots.iter().map(|a| a.addr).collect();
        let mut high: Vec<(String, u64)> = self.tiles.high.iter().map(|(l, h)| (l.to_string(), *h)).collect();
        high.sort();
        (addrs, fits, high)
    }

    /// The address constant of each slot (hoisted), or none when the plan does not fit.
    pub(super) fn address_operands(&mut self, addrs: &[u64], fits: bool) -> Vec<Option<String>> {
        addrs.iter().map(|a| fits.then(|| self.const_int(*a as i64, MTy::Int(64)))).collect()
    }
}
