//! Data movement: reads, writes and atomic accumulates of window and host-tensor regions, with
//! their race, definedness and traffic bookkeeping.
//!
//! Guarantees: every element is encoded and decoded exactly as [`crate::elem`] does; every
//! window access is recorded with the race index and counted in the traffic before it returns.

use super::*;

/// The bytes `[lo, hi)` of domain rank `owner`'s window that one checked access touches.
#[derive(Clone, Copy, Debug)]
pub(super) struct Touch {
    pub(super) domain: usize,
    pub(super) alloc: usize,
    pub(super) owner: usize,
    pub(super) lo: u64,
    pub(super) hi: u64,
    /// Bytes moved (`hi - lo` unless the region is strided).
    pub(super) bytes: u64,
    /// The interned (op, kernel) race site, when the caller knows it.
    pub(super) site: Option<u32>,
    /// Whether the accessing rank is not the owner.
    pub(super) remote: bool,
}

impl World {
    /// Reads the region of `a` as `f64` lanes, row-major over its shape.
    pub fn read(&mut self, a: &Access<'_>) -> Result<Vec<f64>, Fault> {
        let mut out = Vec::new();
        self.access(a, Data::ReadF64(&mut out))?;
        Ok(out)
    }

    /// Reads the region of `a` as its raw little-endian `view.dtype` bytes (row-major) into
    /// `out` (cleared first): the same checks and accounting as [`World::read`].
    pub fn read_bytes_into(&mut self, a: &Access<'_>, out: &mut Vec<u8>) -> Result<(), Fault> {
        out.clear();
        self.access(a, Data::ReadBytes(out))
    }

    /// Writes `data` (row-major over the region's shape) into the region of `a`; `atomic`
    /// accumulates instead.
    pub fn write(&mut self, a: &Access<'_>, data: &[f64], atomic: bool) -> Result<(), Fault> {
        if atomic {
            return self.access(a, Data::AtomicF64(data));
        }
        let mut scratch = std::mem::take(&mut self.local.scratch);
        encode_values(a.view.dtype, data, &mut scratch);
        let r = self.access(a, Data::WriteBytes(&scratch));
        self.local.scratch = scratch;
        r
    }

    /// Writes raw elements of `src_dt` (row-major) into the region of `a`; `atomic` accumulates
    /// instead. A plain write of another dtype than the view's converts per element exactly as
    /// [`World::write`] of the decoded values would.
    pub fn write_bytes(
        &mut self,
        a: &Access<'_>,
        src: &[u8],
        src_dt: DataType,
        atomic: bool,
    ) -> Result<(), Fault> {
        if atomic {
            return self.access(a, Data::AtomicBytes(src, src_dt));
        }
        if src_dt == a.view.dtype {
            return self.access(a, Data::WriteBytes(src));
        }
        let eb = src_dt.bytes().max(1) as usize;
        let vals: Vec<f64> = src.chunks_exact(eb).map(|b| elem::decode(src_dt, b)).collect();
        self.write(a, &vals, false)
    }

    pub(super) fn access(&mut self, a: &Access<'_>, mut data: Data<'_>) -> Result<(), Fault> {
        let Access { g, view, offs, shape, span, op, .. } = *a;
        let dt = view.dtype;
        if !elem::supported(dt) {
            return Err(Fault::runtime(span, format!("{op}: dtype {dt} is not supported by the simulator")));
        }
        if let Data::AtomicBytes(_, sdt) | Data::ReadReduce { acc_dt: sdt, .. } = data {
            if !elem::supported(sdt) {
                return Err(Fault::runtime(
                    span,
                    format!("{op}: dtype {sdt} is not supported by the simulator"),
                ));
            }
        }
        if shape.iter().any(|&s| s <= 0) {
            return Ok(());
        }
        // Remote views share the local view's shape; a region past it is a bounds error too.
        self.check_in_view(view, offs, shape, (span, op, g))?;
        if let Some((start, numel)) = Self::single_run(view, offs, shape) {
            // One contiguous run (every tile row, every packed chunk): no row list to build.
            return self.access_rows(a, &mut data, &[start], numel, 1);
        }
        let mut starts = std::mem::take(&mut self.local.starts);
        let (cols, cstride) = Self::region_rows(view, offs, shape, &mut starts);
        let r = self.access_rows(a, &mut data, &starts, cols, cstride);
        self.local.starts = starts;
        r
    }

    fn access_rows(
        &mut self,
        a: &Access<'_>,
        data: &mut Data<'_>,
        starts: &[i64],
        cols: i64,
        cstride: i64,
    ) -> Result<(), Fault> {
        let Access { g, view, peer, span, op, who, .. } = *a;
        let kind = data.kind();
        let eb = view.dtype.bytes() as i64;
        let dt = view.dtype;
        let numel = starts.len() as i64 * cols;
        if let Some(n) = data.elems(eb as usize) {
            if n as i64 != numel {
                return Err(Fault::runtime(
                    span,
                    format!("{op}: {n} values for a region of {numel} elements"),
                ));
            }
        }
        let (mut lo_e, mut hi_e) = (i64::MAX, i64::MIN);
        for &s in starts {
            let e = s + (cols - 1) * cstride;
            lo_e = lo_e.min(s.min(e));
            hi_e = hi_e.max(s.max(e));
        }
        let bytes = (numel * eb) as u64;
        data.reserve(numel as usize, eb as usize);
        match view.mem {
            Mem::Host(buf) => {
                let b = view.base as i64;
                let Some(hb) = self.shared.host.get(buf).map(Arc::clone) else {
                    return Err(Fault::new(
                        ReportKind::HostOutOfBounds,
                        span,
                        format!("{op} on rank {g}: access outside a host tensor of 0 bytes"),
                    ));
                };
                let mut mem = hb.lock().unwrap_or_else(|e| e.into_inner());
                let len = mem.len() as i64;
                if b + lo_e * eb < 0 || b + (hi_e + 1) * eb > len {
                    return Err(Fault::new(
                        ReportKind::HostOutOfBounds,
                        span,
                        format!("{op} on rank {g}: access outside a host tensor of {len} bytes"),
                    ));
                }
                mem.ready((b + lo_e * eb) as usize, (b + (hi_e + 1) * eb) as usize);
                let rows = Rows { base: b, starts, cols, cstride, eb };
                rows.apply(dt, &mut mem, data);
                let (lo, hi) = ((b + lo_e * eb) as u64, (b + (hi_e + 1) * eb) as u64);
                self.dep(g, crate::drive::Space::Host(buf as u32), lo, hi, kind.into());
                if kind != AccessKind::Read {
                    self.tally.progress_at = self.tally.stats.steps;
                }
                if self.shared.backend.is_some() && kind != AccessKind::Read {
                    let spans = &mut self.local.host_writes;
                    rows.spans(|at, n, _| spans.push((buf, at, at + n)));
                }
                drop(mem);
                let site = self.intern(op, who);
                self.count(g, site, false, bytes, data.read_written(bytes, eb as u64));
            }
            Mem::Window { domain, alloc } => {
                let first = self.resolve(g, view, peer, lo_e * eb, span, op)?;
                // The last byte lies `extent` past the first: in the same window when the window
                // reaches that far (windows never overlap), else resolved on its own.
                let extent = ((hi_e + 1 - lo_e) * eb - 1) as u64;
                let last = if first.offset + extent < self.shared.domains[domain].win_size {
                    Resolved { offset: first.offset + extent, ..first }
                } else {
                    self.resolve(g, view, peer, (hi_e + 1) * eb - 1, span, op)?
                };
                let al = &self.shared.allocs[alloc];
                let writes = kind != AccessKind::Read;
                let limit = if writes { al.offset + al.size } else { al.offset + al.rounded };
                if first.owner != last.owner || first.offset < al.offset || last.offset >= limit {
                    return Err(Fault::new(
                        ReportKind::OutOfBounds,
                        span,
                        format!(
                            "{op} on rank {g}: bytes [{}, {}] of the window of domain rank {} are outside buffer '{}' [{}, {})",
                            first.offset, last.offset, last.owner, al.name, al.offset, limit
                        ),
                    ));
                }
                // Base byte of element 0 in the owner's window.
                let base0 = first.offset as i64 - lo_e * eb;
                let remote = self.shared.domains[domain].drank(g) != Some(first.owner);
                let (lo, hi) = (first.offset, last.offset + 1);
                let at = Touch { domain, alloc, owner: first.owner, lo, hi, bytes, site: None, remote };
                let rows = Rows { base: base0, starts, cols, cstride, eb };
                self.touch(a, at, &rows, data)?;
            }
        }
        Ok(())
    }

    /// The part of a window access after its address checks: records defined bytes, checks
    /// and records the race candidate (unless a plain write leaves every byte as it was),
    /// moves the bytes, notes unfenced writes and counts the traffic.
    pub(super) fn touch(
        &mut self,
        a: &Access<'_>,
        at: Touch,
        rows: &Rows<'_>,
        data: &mut Data<'_>,
    ) -> Result<(), Fault> {
        let Access { g, view, span, op, who, .. } = *a;
        let (dt, kind) = (view.dtype, data.kind());
        let Touch { domain, alloc, owner, lo, hi, bytes, site, remote } = at;
        let writes = kind != AccessKind::Read;
        let site = site.unwrap_or_else(|| self.intern(op, who));
        let win_size = self.shared.domains[domain].win_size;
        // Borrowed, not cloned: the window's reference count is shared by the workers of a
        // parallel run, and bumping it on every access made its cache line bounce.
        let win: &Window = &self.shared.domains[domain].wins[owner];
        let mut guard = lock(&win.state);
        let st = &mut *guard;
        // Bytes are defined when written (or zeroed by `--zero-windows`) or when they are
        // signal cells, never by their dtype; an atomic add reads what it adds into (D-sim-22).
        // A distributed run sees only its own rank's writes: definedness is not judged there.
        let defined = kind == AccessKind::Write
            || st.note_defined(lo, hi, false, self.shared.allocs[alloc].defined)
            || st.has_cells(
                self.shared.allocs[alloc].offset,
                self.shared.allocs[alloc].offset + self.shared.allocs[alloc].rounded,
            )
            || self.shared.backend.is_some();
        if !defined && !self.shared.checks.allow_uninit_reads && self.tally.uninit.len() < MAX_UNINIT {
            // Reported when the run ends, unless a fault comes first (a read that a peer's
            // unordered write follows is a race whichever of the two ran first) or the bytes
            // turn out to be signal cells.
            let writers = st.writers_of(alloc);
            let f = super::uninit::fault(self, a, owner, alloc, lo, hi, &writers);
            self.tally.uninit.push(((domain, owner, lo, hi), Box::new(f)));
        }
        if writes {
            st.note_defined(lo, hi, true, false);
            st.note_writer(alloc, g);
        } else {
            // A data read of signal cells uses their value (a tag, a count): what they hold
            // is not left over.
            st.observe_cells(lo, hi);
        }
        // A plain write that leaves every byte as it was (a self-copy, an idempotent re-store)
        // cannot be observed by a reader, but it still orders against an atomic add or a write
        // that changes the bytes: it is recorded as a rewrite (see `AccessKind::Rewrite`).
        let silent = match data {
            Data::WriteBytes(src) if self.shared.backend.is_none() => rows.equal(&read(win), src),
            _ => false,
        };
        if writes && !silent {
            // Progress for the liveness budget (`World::idle_steps`): bytes changed, or an
            // atomic add landed.
            self.tally.progress_at = self.tally.stats.steps;
        }
        if let Some(log) = &mut self.local.deps {
            let space = crate::drive::Space::Window { domain: domain as u32, owner: owner as u32 };
            log.push(crate::drive::Ev { by: g as u32, space, lo, hi, kind: kind.into() });
        }
        if self.shared.checks.races {
            let kind = if silent { AccessKind::Rewrite } else { kind };
            // A release since this rank's last access advances its clock now.
            let (vc, rel) = self.ranks[g].clocks();
            rel.settle(vc, g);
            if let Err(other) = st.record(vc, &mut self.local.drop_ids, win_size, g, lo, hi, kind, site, span)
            {
                drop(guard);
                return Err(self.race_fault(domain, owner, g, lo, hi, kind, span, op, who, &other));
            }
        }
        // Checked and recorded: the bytes move without holding the checker state, so other
        // ranks' accesses to this window are checked meanwhile, and reads share the bytes.
        drop(guard);
        if let Some(b) = self.shared.backend.clone() {
            Self::remote_apply(&*b, (domain, owner, lo, hi), dt, rows, data, (span, op))?;
        } else if writes {
            rows.apply(dt, &mut write(win), data);
        } else {
            rows.apply_read(dt, &read(win), data);
        }
        if !defined && self.shared.checks.allow_uninit_reads {
            self.warn_undefined(owner, alloc, g, lo, hi, op);
        }
        if writes && self.shared.checks.fences {
            self.ranks[g].unfenced.get_or_insert((site, alloc, span));
        }
        let (win, write) = ((domain, owner), writes);
        self.local.meter.touched(TouchRec { win, lo, hi, write, remote });
        self.count(g, site, remote, bytes, data.read_written(bytes, dt.bytes()));
        Ok(())
    }

    /// Warns (once per rank and buffer) that rank `g` read bytes `[lo, hi)` of buffer `alloc`
    /// in the window of domain rank `owner` that nothing wrote in this run.
    fn warn_undefined(&mut self, owner: usize, alloc: usize, g: usize, lo: u64, hi: u64, op: &str) {
        if self.ranks.get_mut(g).is_none_or(|s| s.warned.insert((alloc, "undefined"))) {
            let al = &self.shared.allocs[alloc];
            self.tally.warnings.push(format!(
                "rank {g} read bytes [{}, {}) of buffer '{}' (window of domain rank {owner}) with {op}, but nothing wrote all of them in this run: they hold undefined (garbage) bytes",
                lo.saturating_sub(al.offset),
                hi.saturating_sub(al.offset),
                al.name
            ));
        }
    }
}

/// Encodes `d` as `dt` elements into `out` (cleared first), rounding exactly as
/// [`elem::encode`] does.
fn encode_values(dt: DataType, d: &[f64], out: &mut Vec<u8>) {
    out.clear();
    out.resize(d.len() * dt.bytes() as usize, 0);
    elem::encode_all(dt, d, out);
}

/// `acc[i] = round(acc_dt, reduce(op, acc[i], src[i]))` over raw elements (`acc` of `acc_dt`,
/// `src` of `src_dt`, the same element count). The FP32 sum of FP32 runs on `f32` directly:
/// an `f32` addition rounds exactly as the `f64` sum rounded to `f32` does (53 ≥ 2·24 + 2).
pub fn reduce_bytes(acc_dt: DataType, acc: &mut [u8], src_dt: DataType, src: &[u8], op: ReduceOp) {
    if acc_dt == DataType::FP32 && src_dt == DataType::FP32 && op == ReduceOp::Sum {
        for (a, s) in acc.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
            let x =
                f32::from_le_bytes([a[0], a[1], a[2], a[3]]) + f32::from_le_bytes([s[0], s[1], s[2], s[3]]);
            a.copy_from_slice(&x.to_le_bytes());
        }
        return;
    }
    let (ae, se) = (acc_dt.bytes().max(1) as usize, src_dt.bytes().max(1) as usize);
    for (a, s) in acc.chunks_exact_mut(ae).zip(src.chunks_exact(se)) {
        let v = elem::reduce(op, elem::decode(acc_dt, a), elem::decode(src_dt, s));
        elem::encode(acc_dt, v, a);
    }
}

/// What an access does with its region (row-major element order throughout).
pub(crate) enum Data<'a> {
    /// Append the elements as `f64`.
    ReadF64(&'a mut Vec<f64>),
    /// Append the raw bytes.
    ReadBytes(&'a mut Vec<u8>),
    /// Reduce the elements into raw `acc_dt` accumulators.
    ReadReduce { acc: &'a mut [u8], acc_dt: DataType, rop: ReduceOp },
    /// Plain write of raw bytes of the view's dtype.
    WriteBytes(&'a [u8]),
    /// Atomic add of `f64` values, rounded per element to the view's dtype.
    AtomicF64(&'a [f64]),
    /// Atomic add of raw elements of the given dtype.
    AtomicBytes(&'a [u8], DataType),
}

impl Data<'_> {
    #[inline]
    pub(super) fn kind(&self) -> AccessKind {
        match self {
            Data::ReadF64(_) | Data::ReadBytes(_) | Data::ReadReduce { .. } => AccessKind::Read,
            Data::WriteBytes(_) => AccessKind::Write,
            Data::AtomicF64(_) | Data::AtomicBytes(..) => AccessKind::Atomic,
        }
    }

    /// The element count the data side brings (`None` for appending reads); `eb` = bytes of
    /// the view's dtype.
    #[inline]
    pub(super) fn elems(&self, eb: usize) -> Option<usize> {
        match self {
            Data::ReadF64(_) | Data::ReadBytes(_) => None,
            Data::ReadReduce { acc, acc_dt, .. } => Some(acc.len() / acc_dt.bytes().max(1) as usize),
            Data::WriteBytes(b) => Some(b.len() / eb.max(1)),
            Data::AtomicF64(d) => Some(d.len()),
            Data::AtomicBytes(b, dt) => Some(b.len() / dt.bytes().max(1) as usize),
        }
    }

    /// The bytes an access of `bytes` memory bytes (elements of `eb` bytes) reads plus writes
    /// on both sides ([`Stats::rw_bytes`]): the memory bytes, and the tile side — a load writes
    /// its tile, a store reads it, a load-combine reads and writes its accumulator, an atomic
    /// add reads its operand (and the memory it adds into).
    #[inline]
    fn read_written(&self, bytes: u64, eb: u64) -> u64 {
        let n = bytes / eb.max(1);
        bytes
            + match self {
                Data::ReadF64(_) | Data::ReadBytes(_) | Data::WriteBytes(_) => bytes,
                Data::ReadReduce { acc_dt, .. } => 2 * n * acc_dt.bytes(),
                Data::AtomicF64(_) => 2 * bytes,
                Data::AtomicBytes(_, sdt) => n * sdt.bytes() + bytes,
            }
    }

    fn reserve(&mut self, numel: usize, eb: usize) {
        match self {
            Data::ReadF64(out) => out.reserve(numel),
            Data::ReadBytes(out) => out.reserve(numel * eb),
            _ => {}
        }
    }
}

/// The rows of a region in one memory: byte `base + (start + c * cstride) * eb` holds
/// column `c` of the row starting at element `start`.
pub(super) struct Rows<'a> {
    pub(super) base: i64,
    pub(super) starts: &'a [i64],
    pub(super) cols: i64,
    pub(super) cstride: i64,
    pub(super) eb: i64,
}

impl Rows<'_> {
    fn at(&self, s: i64, c: i64) -> usize {
        (self.base + (s + c * self.cstride) * self.eb) as usize
    }

    /// Whether `mem` already holds the encoded bytes `enc` (row-major) at every element.
    fn equal(&self, mem: &[u8], enc: &[u8]) -> bool {
        let (eb, row) = (self.eb as usize, (self.cols * self.eb) as usize);
        self.starts.iter().zip(enc.chunks_exact(row.max(1))).all(|(&s, e)| {
            if self.cstride == 1 {
                let at = self.at(s, 0);
                mem[at..at + row] == *e
            } else {
                (0..self.cols).all(|c| {
                    let at = self.at(s, c);
                    mem[at..at + eb] == e[c as usize * eb..(c as usize + 1) * eb]
                })
            }
        })
    }

    /// Calls `f(bytes, k)` for every contiguous run of the region in row-major order (a whole
    /// row when the innermost dim is packed, else one element), `k` = its first element's index.
    fn runs(&self, mem: &mut [u8], mut f: impl FnMut(&mut [u8], usize)) {
        self.spans(|at, len, k| f(&mut mem[at..at + len], k));
    }

    /// [`Rows::runs`] over bytes that are only read.
    fn runs_read(&self, mem: &[u8], mut f: impl FnMut(&[u8], usize)) {
        self.spans(|at, len, k| f(&mem[at..at + len], k));
    }

    /// Calls `f(byte offset, byte length, first element index)` for every contiguous run.
    pub(super) fn spans(&self, mut f: impl FnMut(usize, usize, usize)) {
        let (eb, row) = (self.eb as usize, (self.cols * self.eb) as usize);
        let mut k = 0usize;
        for &s in self.starts {
            if self.cstride == 1 {
                f(self.at(s, 0), row, k);
                k += self.cols as usize;
            } else {
                for c in 0..self.cols {
                    f(self.at(s, c), eb, k);
                    k += 1;
                }
            }
        }
    }

    /// Performs a read access on `mem` (elements of `dt`); any other access is left to
    /// [`Rows::apply`].
    pub(super) fn apply_read(&self, dt: DataType, mem: &[u8], data: &mut Data<'_>) {
        let eb = self.eb as usize;
        match data {
            Data::ReadF64(out) => self.runs_read(mem, |run, _| elem::decode_all(dt, run, out)),
            Data::ReadBytes(out) => self.runs_read(mem, |run, _| out.extend_from_slice(run)),
            Data::ReadReduce { acc, acc_dt, rop } => {
                let ae = acc_dt.bytes() as usize;
                self.runs_read(mem, |run, k| {
                    let n = run.len() / eb;
                    reduce_bytes(*acc_dt, &mut acc[k * ae..(k + n) * ae], dt, run, *rop);
                });
            }
            Data::WriteBytes(_) | Data::AtomicF64(_) | Data::AtomicBytes(..) => {}
        }
    }

    /// Performs the access on `mem` (elements of `dt`).
    pub(super) fn apply(&self, dt: DataType, mem: &mut [u8], data: &mut Data<'_>) {
        let eb = self.eb as usize;
        match data {
            Data::ReadF64(_) | Data::ReadBytes(_) | Data::ReadReduce { .. } => self.apply_read(dt, mem, data),
            Data::WriteBytes(src) => {
                self.runs(mem, |run, k| run.copy_from_slice(&src[k * eb..k * eb + run.len()]));
            }
            Data::AtomicF64(d) => self.runs(mem, |run, k| {
                for (i, e) in run.chunks_exact_mut(eb).enumerate() {
                    let v = elem::decode(dt, e) + d[k + i];
                    elem::encode(dt, v, e);
                }
            }),
            Data::AtomicBytes(src, sdt) => {
                let se = sdt.bytes() as usize;
                self.runs(mem, |run, k| {
                    let n = run.len() / eb;
                    let s = &src[k * se..(k + n) * se];
                    for (e, x) in run.chunks_exact_mut(eb).zip(s.chunks_exact(se)) {
                        let v = elem::decode(dt, e) + elem::decode(*sdt, x);
                        elem::encode(dt, v, e);
                    }
                });
            }
        }
    }
}
