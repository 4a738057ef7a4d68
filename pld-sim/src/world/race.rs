//! The race index: per-window race records indexed by granule, and the race reports.
//!
//! Guarantees: two accesses to overlapping window bytes conflict unless both are reads or both
//! atomic, or a notify→wait edge orders them; the reported conflict is the oldest one a linear
//! scan of insertion-ordered records would find, and records are dropped only by subsumption.

use super::*;

/// The checker state of a window (see [`Window`]).
#[derive(Debug, Default)]
pub struct WinState {
    /// Race records.
    shadow: Shadow,
    /// Insertion counter of race records.
    seq: u64,
    /// Written byte intervals, sorted and disjoint.
    written: Vec<(u64, u64)>,
    /// Signal-cell metadata keyed by byte offset.
    pub cells: BTreeMap<u64, CellMeta>,
    /// Per buffer: the global ranks that wrote any byte of it in this window (bit `g`).
    wrote: BTreeMap<usize, u64>,
}

/// Interned (op, kernel) names of race records.
#[derive(Debug, Default)]
pub(super) struct Sites {
    list: Vec<(String, String)>,
    ids: HashMap<(String, String), u32>,
}

/// Access kinds for the race checker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    /// Plain read.
    Read,
    /// Plain write.
    Write,
    /// Atomic accumulate.
    Atomic,
    /// A plain write that left every byte as it was: no reader can tell it happened, but an
    /// atomic add or a byte-changing write unordered with it gives an order-dependent result.
    Rewrite,
}

impl AccessKind {
    /// Whether an earlier access of kind `self` and a later one of kind `later`, unordered and
    /// by different ranks, are a race.
    fn clashes(self, later: AccessKind) -> bool {
        use AccessKind::*;
        !matches!(
            (self, later),
            (Read, Read) | (Atomic, Atomic) | (Read | Rewrite, Rewrite) | (Rewrite, Read) | (Write, Rewrite)
        )
    }
}

/// One race record; its start offset is the first half of its key in [`Shadow`].
#[derive(Clone, Debug)]
pub(super) struct AccessRec {
    hi: u64,
    rank: u32,
    clock: u32,
    /// Interned (op, kernel) pair (index into `World::sites`).
    site: u32,
    span: Span,
    kind: AccessKind,
}

/// Race records of one window, indexed by granule so an access visits only records that can
/// overlap it.
///
/// Records are kept whole (never split) in a slab and listed in every [`GRAIN`]-byte granule
/// they touch; an access looks only at the granules it touches and visits each overlapping
/// record once (in the granule where the overlap starts). Each record carries its insertion
/// number `seq`, so "the oldest conflicting record" is the same one a linear scan of an
/// insertion-ordered list would report. Nothing is ever dropped except by subsumption. An
/// access costs O(granules touched + records listed there): a chunked protocol that touches
/// each chunk a few times keeps a handful of records per granule.
#[derive(Clone, Debug, Default)]
pub(super) struct Shadow {
    /// Record slab: `(lo, seq, record)`; `None` = free slot.
    recs: Slab,
    free: Vec<u32>,
    /// Record ids listed per granule.
    grains: Vec<Grain>,
}

/// The record slots of a [`Shadow`], in chunks of `1 << SLAB_SHIFT`: growing it moves (copies)
/// no records beyond the first chunk's, where one growing vector would copy them all at every
/// doubling.
#[derive(Clone, Debug, Default)]
struct Slab {
    /// Every chunk but the last is full.
    chunks: Vec<Vec<Option<(u64, u64, AccessRec)>>>,
}

/// Record slots per [`Slab`] chunk (log2).
const SLAB_SHIFT: u32 = 12;

impl Slab {
    fn get(&self, id: u32) -> Option<&(u64, u64, AccessRec)> {
        let id = id as usize;
        self.chunks.get(id >> SLAB_SHIFT)?.get(id & ((1 << SLAB_SHIFT) - 1))?.as_ref()
    }

    fn slot(&mut self, id: u32) -> &mut Option<(u64, u64, AccessRec)> {
        let id = id as usize;
        &mut self.chunks[id >> SLAB_SHIFT][id & ((1 << SLAB_SHIFT) - 1)]
    }

    /// A new empty slot.
    fn push_free(&mut self) -> u32 {
        let full = self.chunks.last().is_none_or(|c| c.len() == 1 << SLAB_SHIFT);
        if full {
            // The first chunk grows as needed (a small run keeps few records); later ones are
            // allocated whole.
            let cap = if self.chunks.is_empty() { 0 } else { 1 << SLAB_SHIFT };
            self.chunks.push(Vec::with_capacity(cap));
        }
        let k = self.chunks.len() - 1;
        let chunk = &mut self.chunks[k];
        chunk.push(None);
        ((k << SLAB_SHIFT) + chunk.len() - 1) as u32
    }
}

/// The record ids of one granule: a few inline (no allocation for the common case of a chunk
/// touched by a handful of ranks), the rest in a vector. Order carries no meaning.
#[derive(Clone, Debug, Default)]
struct Grain {
    n: u32,
    inline: [u32; GRAIN_INLINE],
    more: Vec<u32>,
}

const GRAIN_INLINE: usize = 6;

impl Grain {
    fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.inline[..self.n as usize].iter().chain(&self.more).copied()
    }

    fn push(&mut self, id: u32) {
        if (self.n as usize) < GRAIN_INLINE {
            self.inline[self.n as usize] = id;
            self.n += 1;
        } else {
            self.more.push(id);
        }
    }

    fn remove(&mut self, id: u32) {
        let n = self.n as usize;
        if let Some(k) = self.inline[..n].iter().position(|&x| x == id) {
            match self.more.pop() {
                Some(x) => self.inline[k] = x,
                None => {
                    self.inline[k] = self.inline[n - 1];
                    self.n -= 1;
                }
            }
        } else if let Some(k) = self.more.iter().position(|&x| x == id) {
            self.more.swap_remove(k);
        }
    }
}

/// Bytes per race-record granule (log2).
const GRAIN_SHIFT: u32 = 10;
/// Bytes per race-record granule.
pub const GRAIN: u64 = 1 << GRAIN_SHIFT;

impl Shadow {
    fn grain_range(lo: u64, hi: u64) -> std::ops::Range<usize> {
        (lo >> GRAIN_SHIFT) as usize..(((hi.max(lo + 1) - 1) >> GRAIN_SHIFT) + 1) as usize
    }

    /// Calls `f` with the key `(lo, seq)`, slab id and record of every record overlapping
    /// `[lo, hi)`, each once.
    fn for_overlapping<'a>(&'a self, lo: u64, hi: u64, mut f: impl FnMut((u64, u64), u32, &'a AccessRec)) {
        let range = Self::grain_range(lo, hi);
        let end = range.end.min(self.grains.len());
        for gi in range.start..end {
            for id in self.grains[gi].ids() {
                let Some((o_lo, seq, o)) = self.recs.get(id) else { continue };
                if o.hi > lo && *o_lo < hi && (lo.max(*o_lo) >> GRAIN_SHIFT) as usize == gi {
                    f((*o_lo, *seq), id, o);
                }
            }
        }
    }

    fn remove(&mut self, id: u32) {
        let Some((lo, _, rec)) = self.recs.slot(id).take() else { return };
        for gi in Self::grain_range(lo, rec.hi) {
            if let Some(list) = self.grains.get_mut(gi) {
                list.remove(id);
            }
        }
        self.free.push(id);
    }

    /// Adds a record; `win_size` (the window's bytes) sizes the granule table once, on its
    /// first growth, instead of regrowing (and copying) it as accesses reach further.
    fn insert(&mut self, lo: u64, seq: u64, rec: AccessRec, win_size: u64) {
        let range = Self::grain_range(lo, rec.hi);
        if self.grains.len() < range.end {
            let all = win_size.div_ceil(GRAIN) as usize;
            self.grains.reserve_exact(all.max(range.end) - self.grains.len());
            self.grains.resize_with(range.end, Grain::default);
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => self.recs.push_free(),
        };
        for gi in range {
            self.grains[gi].push(id);
        }
        *self.recs.slot(id) = Some((lo, seq, rec));
    }

    /// Live records.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.recs.chunks.iter().flat_map(|c| c.iter()).flatten().count()
    }
}

impl WinState {
    /// The number of race records kept.
    #[cfg(test)]
    pub(super) fn record_count(&self) -> usize {
        self.shadow.len()
    }

    /// Drops every race record (a persistent worker's next call).
    pub(super) fn forget_records(&mut self) {
        self.shadow = Shadow::default();
    }

    /// Whether window bytes `[lo, hi)` (a buffer's window range) hold a signal cell (a 4-byte
    /// cell a notify or wait addressed): a signal buffer, zero from the start.
    pub(super) fn has_cells(&self, lo: u64, hi: u64) -> bool {
        lo < hi && self.cells.range(lo..hi).next().is_some()
    }

    /// Marks the signal cells among bytes `[lo, hi)` as read by a data op.
    pub(super) fn observe_cells(&mut self, lo: u64, hi: u64) {
        if self.cells.is_empty() {
            return;
        }
        for (_, m) in self.cells.range_mut(lo.saturating_sub(3)..hi) {
            if let Some(l) = m.ledger.as_deref_mut() {
                l.observed = true;
            }
        }
    }

    /// Marks all `len` bytes defined and written by no rank (zeroed by contract).
    pub(super) fn define_all(&mut self, len: u64) {
        self.written = vec![(0, len)];
        self.wrote.clear();
    }

    /// Notes that global rank `g` wrote bytes of buffer `alloc` in this window.
    pub(super) fn note_writer(&mut self, alloc: usize, g: usize) {
        *self.wrote.entry(alloc).or_default() |= 1u64.checked_shl(g as u32).unwrap_or(0);
    }

    /// The global ranks that wrote any byte of buffer `alloc` in this window, and the byte
    /// intervals written so far (window offsets).
    pub(super) fn writers_of(&self, alloc: usize) -> (Vec<usize>, Vec<(u64, u64)>) {
        let mask = self.wrote.get(&alloc).copied().unwrap_or(0);
        ((0..64).filter(|g| mask >> g & 1 == 1).collect(), self.written.clone())
    }

    /// Records written bytes `[lo, hi)` (`write`), or tells whether the read bytes `[lo, hi)`
    /// are all defined: written in this run, or in a buffer that starts zeroed (runtime.md
    /// §8.12: the others start as garbage).
    pub(super) fn note_defined(&mut self, lo: u64, hi: u64, write: bool, zeroed: bool) -> bool {
        let iv = &mut self.written;
        if write {
            let (mut a, mut b) = (lo, hi);
            iv.retain(|&(x, y)| {
                let touches = x <= b && a <= y;
                if touches {
                    a = a.min(x);
                    b = b.max(y);
                }
                !touches
            });
            let at = iv.partition_point(|&(x, _)| x < a);
            iv.insert(at, (a, b));
            return true;
        }
        zeroed || iv.iter().any(|&(x, y)| x <= lo && hi <= y)
    }

    /// Checks an access of `kind` by rank `g` (vector clock `vc`) to bytes `[lo, hi)` against
    /// the race records, then records it, dropping the records it subsumes (covered and
    /// ordered before it; `drop` is reused scratch space). `Err` carries the oldest conflicting
    /// record unordered with it (lowest insertion number, as a linear scan would find), as
    /// `(its first byte, record)`; nothing is recorded then.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record(
        &mut self,
        vc: &[u32],
        drop: &mut Vec<u32>,
        win_size: u64,
        g: usize,
        lo: u64,
        hi: u64,
        kind: AccessKind,
        site: u32,
        span: Span,
    ) -> Result<(), Box<(u64, AccessRec)>> {
        let clock = vc[g];
        let mut conflict: Option<((u64, u64), &AccessRec)> = None;
        drop.clear();
        self.shadow.for_overlapping(lo, hi, |key, id, o| {
            let (o_lo, o_rank) = (key.0, o.rank as usize);
            if o_rank != g {
                let clash = o.kind.clashes(kind);
                if clash && vc[o_rank] < o.clock && conflict.is_none_or(|(k, _)| key.1 < k.1) {
                    conflict = Some((key, o));
                }
            }
            // Records the new access subsumes (covered and ordered before it).
            let covered = o_lo >= lo && o.hi <= hi;
            let ordered = o_rank == g || vc[o_rank] >= o.clock;
            let subsumes = kind == AccessKind::Write || kind == o.kind;
            if covered && ordered && subsumes {
                drop.push(id);
            }
        });
        if let Some(((o_lo, _), o)) = conflict {
            return Err(Box::new((o_lo, o.clone())));
        }
        for &id in drop.iter() {
            self.shadow.remove(id);
        }
        let seq = self.seq;
        self.seq += 1;
        self.shadow.insert(lo, seq, AccessRec { hi, rank: g as u32, clock, site, span, kind }, win_size);
        Ok(())
    }
}

impl World {
    /// The host-side fence around a host callback: every rank's clock joins every other's
    /// (all device work before the callback happens before all device work after it).
    pub(crate) fn host_fence(&mut self) {
        for (g, st) in self.ranks.iter_mut().enumerate() {
            st.released.settle(&mut st.vc, g);
        }
        let width = self.ranks.iter().map(|s| s.vc.len()).max().unwrap_or(0);
        let mut join = vec![0u32; width];
        for st in &self.ranks {
            for (j, &c) in join.iter_mut().zip(&st.vc) {
                *j = (*j).max(c);
            }
        }
        for (g, st) in self.ranks.iter_mut().enumerate() {
            st.vc.clone_from(&join);
            if let Some(own) = st.vc.get_mut(g) {
                *own += 1;
            }
        }
    }

    /// The index of the (op, kernel) pair; a run uses only a handful of them.
    pub(super) fn intern(&mut self, op: &str, who: &str) -> u32 {
        // This handle's own copy first: a run has a handful of sites, and the shared table's
        // lock would be taken by every access of every worker of a parallel run.
        if let Some(&(_, _, i)) = self.local.site_cache.iter().find(|(o, w, _)| o == op && w == who) {
            return i;
        }
        let mut s = self.shared.sites.lock().unwrap_or_else(|e| e.into_inner());
        let key = (op.to_string(), who.to_string());
        let i = match s.ids.get(&key) {
            Some(&i) => i,
            None => {
                let i = s.list.len() as u32;
                s.list.push(key.clone());
                s.ids.insert(key.clone(), i);
                i
            }
        };
        drop(s);
        self.local.site_cache.push((key.0, key.1, i));
        i
    }

    /// The (op, kernel) names of a race site.
    pub(super) fn site(&self, i: u32) -> (String, String) {
        let s = self.shared.sites.lock().unwrap_or_else(|e| e.into_inner());
        s.list.get(i as usize).cloned().unwrap_or_default()
    }

    /// The race report of an access by rank `g` to bytes `[lo, hi)` of the window of domain
    /// rank `owner` that `other` (the oldest unordered conflicting record) clashes with.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn race_fault(
        &self,
        domain: usize,
        owner: usize,
        g: usize,
        lo: u64,
        hi: u64,
        kind: AccessKind,
        span: Span,
        op: &str,
        who: &str,
        other: &(u64, AccessRec),
    ) -> Fault {
        let (o_lo, o) = other;
        let site = self.site(o.site);
        let dname = |k: AccessKind| match k {
            AccessKind::Read => "read",
            AccessKind::Write | AccessKind::Rewrite => "write",
            AccessKind::Atomic => "atomic add",
        };
        let at = lo.max(*o_lo);
        let buf = self.alloc_at(domain, at).map_or("?", |al| al.name.as_str());
        Fault::new(
            ReportKind::Race,
            span,
            format!(
                "{} by rank {g} ({op} in {who}) and {} by rank {} ({} in {}) touch bytes [{at}, {}) of buffer '{buf}' in the window of domain rank {owner} with no notify→wait ordering between them",
                dname(kind),
                dname(o.kind),
                o.rank,
                site.0,
                site.1,
                hi.min(o.hi)
            ),
        )
        .note_at("the other access is at", o.span)
        .note("publish data before the notify that releases it, and wait before touching what a peer may still read or write")
    }
}
