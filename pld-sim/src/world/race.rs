//! The race index: per-window race records indexed by granule, and the race reports.
//!
//! Guarantees: two accesses to overlapping window bytes conflict unless both are reads or both
//! atomic, or a notify→wait edge orders them; the reported conflict is the oldest one a linear
//! scan of insertion-ordered records would find, and records are dropped only by subsumption.

use super::*;
use smallvec::SmallVec;

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

/// One race record; its start offset is kept beside it (see [`Shadow`]).
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

/// What every check of an access against a record reads: its bytes, rank, clock and kind,
/// listed in each granule the record touches (see [`Shadow`]).
#[derive(Clone, Copy, Debug)]
struct Entry {
    lo: u64,
    hi: u64,
    /// Slab slot of the record's other fields.
    id: u32,
    rank: u32,
    clock: u32,
    kind: AccessKind,
}

/// What a report or "the oldest" needs and no check does: the insertion number, site and
/// span of a record, in its slab slot.
#[derive(Clone, Copy, Debug)]
struct Cold {
    seq: u64,
    site: u32,
    span: Span,
}

/// A record the access subsumes: its slot and bytes (`drop` scratch of [`WinState::record`]).
pub(crate) type Subsumed = (u32, u64, u64);

/// Race records of one window, indexed by granule so an access visits only records that can
/// overlap it.
///
/// Records are kept whole (never split). Each is listed, by the [`Entry`] every check reads
/// (bytes, rank, clock, kind), in every granule it touches at its [`Level`]: a record shorter
/// than [`COARSE_FROM`] (16 KiB) in the 4 KiB granules, a longer one in the 64 KiB granules, so a record is listed in a handful of granules whatever its
/// length (a 64 KiB protocol transfer in one or two, not sixteen). Its insertion number, site and
/// span sit in a slab slot read only to pick the oldest conflict or to report it. An access
/// looks at the granules it touches on both levels and checks each overlapping record once (in
/// the granule of its level where the overlap starts) without leaving the granule's entry
/// list. Each record carries its insertion number `seq`, so "the oldest conflicting record" is
/// the same one a linear scan of an insertion-ordered list would report. Nothing is ever
/// dropped except by subsumption.
#[derive(Clone, Debug, Default)]
pub(super) struct Shadow {
    /// Cold record fields by slot; `None` = free slot.
    recs: Slab,
    free: Vec<u32>,
    /// Short records by fine granule, long ones by coarse granule.
    levels: [Level; 2],
}

/// One granule size's entry lists (order carries no meaning).
#[derive(Clone, Debug, Default)]
struct Level {
    grains: Vec<Grain>,
}

/// The entries of one granule: two inline (a granule written once, or read and then written
/// by a handful of ranks, allocates nothing), the rest on the heap.
type Grain = SmallVec<[Entry; 2]>;

/// The record slots of a [`Shadow`], in chunks of `1 << SLAB_SHIFT`: growing it moves (copies)
/// no records beyond the first chunk's, where one growing vector would copy them all at every
/// doubling.
#[derive(Clone, Debug, Default)]
struct Slab {
    /// Every chunk but the last is full.
    chunks: Vec<Vec<Option<Cold>>>,
}

/// Record slots per [`Slab`] chunk (log2).
const SLAB_SHIFT: u32 = 12;

impl Slab {
    fn get(&self, id: u32) -> Option<&Cold> {
        let id = id as usize;
        self.chunks.get(id >> SLAB_SHIFT)?.get(id & ((1 << SLAB_SHIFT) - 1))?.as_ref()
    }

    fn slot(&mut self, id: u32) -> &mut Option<Cold> {
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

/// Bytes per fine race-record granule (log2): 4 KiB.
const GRAIN_SHIFT: u32 = 12;
/// Bytes per coarse race-record granule (log2): 64 KiB.
const COARSE_SHIFT: u32 = 16;
/// Records of at least this many bytes (16 KiB) are listed per coarse granule (in at most
/// two when aligned), shorter ones per fine granule (in at most five).
const COARSE_FROM: u64 = 1 << (COARSE_SHIFT - 2);

/// The level (0 fine, 1 coarse) and granule shift of a record of bytes `[lo, hi)`.
#[inline]
fn level_of(lo: u64, hi: u64) -> (usize, u32) {
    if hi - lo >= COARSE_FROM {
        (1, COARSE_SHIFT)
    } else {
        (0, GRAIN_SHIFT)
    }
}

/// The granules of `1 << shift` bytes that bytes `[lo, hi)` touch.
#[inline]
fn grain_range(lo: u64, hi: u64, shift: u32) -> std::ops::Range<usize> {
    (lo >> shift) as usize..(((hi.max(lo + 1) - 1) >> shift) + 1) as usize
}

impl Shadow {
    /// Calls `f` with the entry of every record overlapping `[lo, hi)`, each once.
    #[inline]
    fn for_overlapping(&self, lo: u64, hi: u64, mut f: impl FnMut(&Entry)) {
        for (level, shift) in self.levels.iter().zip([GRAIN_SHIFT, COARSE_SHIFT]) {
            let range = grain_range(lo, hi, shift);
            let end = range.end.min(level.grains.len());
            for gi in range.start..end {
                for e in &level.grains[gi] {
                    if e.hi > lo && e.lo < hi && (lo.max(e.lo) >> shift) as usize == gi {
                        f(e);
                    }
                }
            }
        }
    }

    /// The insertion number of the record in slot `id`.
    fn seq(&self, id: u32) -> u64 {
        self.recs.get(id).map_or(u64::MAX, |c| c.seq)
    }

    /// The whole record in slot `id` (listed by entry `e`).
    fn whole(&self, e: &Entry) -> AccessRec {
        let c = self.recs.get(e.id).copied().unwrap_or(Cold { seq: 0, site: 0, span: Span::DUMMY });
        AccessRec { hi: e.hi, rank: e.rank, clock: e.clock, site: c.site, span: c.span, kind: e.kind }
    }

    fn remove(&mut self, (id, lo, hi): Subsumed) {
        if self.recs.slot(id).take().is_none() {
            return;
        }
        let (level, shift) = level_of(lo, hi);
        let grains = &mut self.levels[level].grains;
        for gi in grain_range(lo, hi, shift) {
            if let Some(list) = grains.get_mut(gi) {
                if let Some(k) = list.iter().position(|e| e.id == id) {
                    list.swap_remove(k);
                }
            }
        }
        self.free.push(id);
    }

    /// Adds a record; `win_size` (the window's bytes) sizes its level's granule table once, on
    /// its first growth, instead of regrowing (and copying) it as accesses reach further.
    fn insert(&mut self, lo: u64, seq: u64, rec: AccessRec, win_size: u64) {
        let (level, shift) = level_of(lo, rec.hi);
        let range = grain_range(lo, rec.hi, shift);
        let grains = &mut self.levels[level].grains;
        if grains.len() < range.end {
            let all = win_size.div_ceil(1 << shift) as usize;
            grains.reserve_exact(all.max(range.end) - grains.len());
            grains.resize_with(range.end, Grain::new);
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => self.recs.push_free(),
        };
        let e = Entry { lo, hi: rec.hi, id, rank: rec.rank, clock: rec.clock, kind: rec.kind };
        for gi in range {
            grains[gi].push(e);
        }
        *self.recs.slot(id) = Some(Cold { seq, site: rec.site, span: rec.span });
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
    /// §8.12: the others start as garbage). Both by binary search over the sorted, disjoint
    /// intervals: a buffer written in many separate pieces (strided rows) does not make every
    /// later access walk all of them.
    pub(super) fn note_defined(&mut self, lo: u64, hi: u64, write: bool, zeroed: bool) -> bool {
        let iv = &mut self.written;
        if write {
            // The intervals touching `[lo, hi)` (adjacent ones included) are consecutive:
            // from the first ending at or after `lo` to the last starting at or before `hi`.
            let first = iv.partition_point(|&(_, y)| y < lo);
            let end = iv.partition_point(|&(x, _)| x <= hi);
            let (mut a, mut b) = (lo, hi);
            if first < end {
                a = a.min(iv[first].0);
                b = b.max(iv[end - 1].1);
            }
            iv.splice(first..end, [(a, b)]);
            return true;
        }
        if zeroed {
            return true;
        }
        // The last interval starting at or before `lo` must reach `hi`.
        let at = iv.partition_point(|&(x, _)| x <= lo);
        at > 0 && iv[at - 1].1 >= hi
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
        drop: &mut Vec<Subsumed>,
        win_size: u64,
        g: usize,
        lo: u64,
        hi: u64,
        kind: AccessKind,
        site: u32,
        span: Span,
    ) -> Result<(), Box<(u64, AccessRec)>> {
        let clock = vc[g];
        let mut conflict: Option<(u64, Entry)> = None;
        drop.clear();
        let shadow = &self.shadow;
        shadow.for_overlapping(lo, hi, |e| {
            let o_rank = e.rank as usize;
            let ordered = o_rank == g || vc[o_rank] >= e.clock;
            if !ordered && e.kind.clashes(kind) {
                // Rare (a race is reported): only now is the slab read, for the oldest.
                let seq = shadow.seq(e.id);
                if conflict.is_none_or(|(s, _)| seq < s) {
                    conflict = Some((seq, *e));
                }
            }
            // Records the new access subsumes (covered and ordered before it).
            let covered = e.lo >= lo && e.hi <= hi;
            let subsumes = kind == AccessKind::Write || kind == e.kind;
            if covered && ordered && subsumes {
                drop.push((e.id, e.lo, e.hi));
            }
        });
        if let Some((_, e)) = conflict {
            return Err(Box::new((e.lo, self.shadow.whole(&e))));
        }
        for &d in drop.iter() {
            self.shadow.remove(d);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The race index's contract, stated as the linear scan it must agree with: records in
    /// insertion order, the first unordered clashing one reported, covered ordered ones dropped.
    #[derive(Default)]
    struct Linear {
        recs: Vec<(u64, AccessRec)>,
    }

    impl Linear {
        #[allow(clippy::too_many_arguments)]
        fn record(
            &mut self,
            vc: &[u32],
            g: usize,
            lo: u64,
            hi: u64,
            kind: AccessKind,
            site: u32,
            span: Span,
        ) -> Result<(), (u64, AccessRec)> {
            let overlaps = |o_lo: u64, o: &AccessRec| o.hi > lo && o_lo < hi;
            let ordered = |o: &AccessRec| o.rank as usize == g || vc[o.rank as usize] >= o.clock;
            if let Some((o_lo, o)) =
                self.recs.iter().find(|(o_lo, o)| overlaps(*o_lo, o) && !ordered(o) && o.kind.clashes(kind))
            {
                return Err((*o_lo, o.clone()));
            }
            self.recs.retain(|(o_lo, o)| {
                let covered = *o_lo >= lo && o.hi <= hi;
                !(covered && ordered(o) && (kind == AccessKind::Write || kind == o.kind))
            });
            self.recs.push((lo, AccessRec { hi, rank: g as u32, clock: vc[g], site, span, kind }));
            Ok(())
        }
    }

    /// A small xorshift generator: the same sequence on every run.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    fn key(lo: u64, r: &AccessRec) -> (u64, u64, u32, u32, u32, Span, AccessKind) {
        (lo, r.hi, r.rank, r.clock, r.site, r.span, r.kind)
    }

    #[test]
    fn the_granule_index_reports_and_keeps_exactly_what_a_linear_scan_does() {
        use AccessKind::*;
        const GRAIN: u64 = 1 << GRAIN_SHIFT;
        const COARSE_GRAIN: u64 = 1 << COARSE_SHIFT;
        let kinds = [Read, Write, Atomic, Rewrite];
        // Lengths within one granule, across two, over several, and unaligned, on both levels
        // (records on either side of the level threshold overlap one another).
        let lens = [
            1,
            4,
            64,
            1000,
            GRAIN - 4,
            GRAIN,
            GRAIN + 8,
            3 * GRAIN + 100,
            COARSE_FROM - 4,
            COARSE_FROM,
            COARSE_GRAIN + 12,
            2 * COARSE_GRAIN,
        ];
        let (mut races, mut drops) = (0, 0);
        for seed in 1..=12u64 {
            let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            let n = 3;
            let mut vcs: Vec<Vec<u32>> =
                (0..n).map(|g| (0..n).map(|j| u32::from(j == g)).collect()).collect();
            let (mut st, mut lin) = (WinState::default(), Linear::default());
            let mut scratch = Vec::new();
            let size = 4 * COARSE_GRAIN;
            for step in 0..3000u32 {
                let g = rng.below(n as u64) as usize;
                match rng.below(10) {
                    // A release and acquire: `g` joins another rank's clock (notify→wait).
                    0 | 1 => {
                        let from = rng.below(n as u64) as usize;
                        let src = vcs[from].clone();
                        vcs[from][from] += 1;
                        for (c, s) in vcs[g].iter_mut().zip(&src) {
                            *c = (*c).max(*s);
                        }
                    }
                    2 => vcs[g][g] += 1,
                    _ => {}
                }
                let len = lens[rng.below(lens.len() as u64) as usize];
                let lo = rng.below(size - len);
                let kind = kinds[rng.below(4) as usize];
                let site = rng.below(3) as u32;
                let span = Span { file: pld_ir::FileId(0), lo: step, hi: step + 1 };
                let before = lin.recs.len();
                let got = st.record(&vcs[g], &mut scratch, size, g, lo, lo + len, kind, site, span);
                let want = lin.record(&vcs[g], g, lo, lo + len, kind, site, span);
                match (got, want) {
                    (Ok(()), Ok(())) => drops += before + 1 - lin.recs.len(),
                    (Err(a), Err(b)) => {
                        races += 1;
                        assert_eq!(key(a.0, &a.1), key(b.0, &b.1), "seed {seed} step {step}");
                    }
                    (a, b) => {
                        panic!("seed {seed} step {step}: index {:?}, linear scan {:?}", a.is_ok(), b.is_ok())
                    }
                }
                assert_eq!(st.record_count(), lin.recs.len(), "seed {seed} step {step}: records kept");
            }
        }
        // The sequences exercise both outcomes and subsumption.
        assert!(races > 1000 && drops > 1000, "races {races}, drops {drops}");
    }

    #[test]
    fn defined_intervals_agree_with_a_byte_map() {
        const SIZE: u64 = 512;
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let (mut fully, mut partly, mut none) = (0, 0, 0);
        for _ in 0..20 {
            let mut st = WinState::default();
            let mut bytes = [false; SIZE as usize];
            for _ in 0..200 {
                let lo = rng.below(SIZE);
                let hi = lo + 1 + rng.below((SIZE - lo).min(40));
                let range = &bytes[lo as usize..hi as usize];
                let (all, any) = (range.iter().all(|&b| b), range.iter().any(|&b| b));
                assert_eq!(st.note_defined(lo, hi, false, false), all, "all of [{lo}, {hi})");
                assert!(st.note_defined(lo, hi, false, true), "a zeroed buffer is defined");
                match (all, any) {
                    (true, _) => fully += 1,
                    (false, true) => partly += 1,
                    (false, false) => none += 1,
                }
                if rng.below(3) == 0 {
                    st.note_defined(lo, hi, true, false);
                    bytes[lo as usize..hi as usize].fill(true);
                    // The intervals are exactly the byte map's runs: sorted, disjoint, merged.
                    let mut runs = Vec::new();
                    for (i, &b) in bytes.iter().enumerate() {
                        match runs.last_mut() {
                            Some((_, y)) if b && *y == i as u64 => *y += 1,
                            _ if b => runs.push((i as u64, i as u64 + 1)),
                            _ => {}
                        }
                    }
                    assert_eq!(st.written, runs);
                }
            }
        }
        assert!(fully > 100 && partly > 100 && none > 100, "{fully} {partly} {none}");
    }
}
