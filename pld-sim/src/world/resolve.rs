//! Access resolution: peer addressing through the CommContext address arithmetic, bounds and
//! view checks, and the region-independent part of an access done once per instruction.
//!
//! Guarantees: a remote address is computed as the hardware does
//! (`local + windowsIn[peer] - windowsIn[me]`) and resolved back through the rank's own address
//! map, so a wrong pointer is a bounds report, never a silent hit on other memory.

use super::*;

/// One access: rank `g` touches the region `offs`/`shape` of `view` (of `peer`'s copy when
/// set) as op `op` of kernel `who` at `span` — what every window and host-tensor access of
/// [`World`] is given.
#[derive(Clone, Copy, Debug)]
pub struct Access<'a> {
    /// Global rank.
    pub g: usize,
    /// The local view.
    pub view: &'a TRef,
    /// Domain rank whose copy is accessed, or the local one.
    pub peer: Option<i64>,
    /// Region offsets.
    pub offs: &'a [i64],
    /// Region shape.
    pub shape: &'a [i64],
    /// Source span, for reports.
    pub span: Span,
    /// Op kind, for accounting and reports.
    pub op: &'a str,
    /// Kernel name, for reports.
    pub who: &'a str,
}

#[cfg(test)]
impl<'a> Access<'a> {
    /// A test access by rank `g` as op `op` of kernel `k` (no source span).
    pub(crate) fn of(
        g: usize,
        view: &'a TRef,
        peer: Option<i64>,
        offs: &'a [i64],
        shape: &'a [i64],
        op: &'a str,
    ) -> Access<'a> {
        Access { g, view, peer, offs, shape, span: Span::DUMMY, op, who: "k" }
    }
}

/// A window-bound view as rank `g` addresses it through `peer`: the region-independent checks
/// of an access, done once (see `World::access_at`).
#[derive(Clone, Debug)]
pub struct Located {
    g: usize,
    peer: Option<i64>,
    mem: Mem,
    view_owner: usize,
    dtype: DataType,
    domain: usize,
    alloc: usize,
    /// Domain rank whose window is accessed.
    owner: usize,
    /// Domain rank of `g`.
    me: usize,
    /// The interned (op, kernel) race site of the accessing instruction (whose op and kernel
    /// never change).
    site: u32,
}

impl Located {
    /// Whether this location was made for rank `g` accessing `view` through `peer`.
    fn serves(&self, g: usize, view: &TRef, peer: Option<i64>) -> bool {
        self.g == g
            && self.peer == peer
            && self.mem == view.mem
            && self.view_owner == view.owner
            && self.dtype == view.dtype
    }
}

impl World {
    /// Resolves the byte at `view.base + byte_off` of a local window view as seen through
    /// `peer` by global rank `g`, via the CommContext address arithmetic.
    pub fn resolve(
        &self,
        g: usize,
        view: &TRef,
        peer: Option<i64>,
        byte_off: i64,
        span: Span,
        op: &str,
    ) -> Result<Resolved, Fault> {
        let Mem::Window { domain, alloc } = view.mem else {
            return Err(Fault::runtime(
                span,
                format!("{op} needs a window-bound tensor, got a plain tensor"),
            ));
        };
        let dom = &self.shared.domains[domain];
        let Some(me) = dom.drank(g) else {
            return Err(Fault::new(
                ReportKind::OutOfBounds,
                span,
                format!(
                    "{op} on rank {g}: rank is not a member of the comm domain of buffer '{}'",
                    self.alloc_name(alloc)
                ),
            ));
        };
        let ctx = &dom.ctx[me];
        if view.owner != me {
            return Err(Fault::new(
                ReportKind::OutOfBounds,
                span,
                format!(
                    "{op} on rank {g}: view of buffer '{}' does not point into this rank's window",
                    self.alloc_name(alloc)
                ),
            ));
        }
        let local = ctx.windows_in[me].wrapping_add((view.base as i64 + byte_off) as u64);
        let addr = match peer {
            None => local,
            Some(p) => {
                if p < 0 || p >= i64::from(ctx.rank_num) {
                    return Err(Fault::new(
                        ReportKind::PeerOutOfRange,
                        span,
                        format!(
                            "{op} on rank {g}: peer index {p} is outside [0, {}) of the comm domain of buffer '{}'",
                            ctx.rank_num,
                            self.alloc_name(alloc)
                        ),
                    ));
                }
                ctx.peer_address(local, p as u32).unwrap_or(u64::MAX)
            }
        };
        // The window the access is aimed at first (the usual hit), then every window.
        let aimed = peer.map_or(me, |p| p as usize);
        let wins = &ctx.windows_in[..ctx.rank_num as usize];
        let hit = |i: usize, w: u64| (addr >= w && addr < w + ctx.win_size).then_some(i);
        let found = wins
            .get(aimed)
            .and_then(|&w| hit(aimed, w))
            .or_else(|| wins.iter().enumerate().find_map(|(i, &w)| hit(i, w)));
        if let Some(i) = found {
            return Ok(Resolved { domain, owner: i, offset: addr - wins[i] });
        }
        Err(Fault::new(
            ReportKind::OutOfBounds,
            span,
            format!("{op} on rank {g}: address {addr:#x} is outside every window of the comm domain (buffer '{}')", self.alloc_name(alloc)),
        ))
    }

    /// Element offsets (relative to the view base, in elements) of the rows of a region, and
    /// the row length: the region `offs`/`shape` of `view`, innermost dim contiguous or strided.
    pub(super) fn region_rows(view: &TRef, offs: &[i64], shape: &[i64], starts: &mut Vec<i64>) -> (i64, i64) {
        let n = shape.len();
        let (cols, col_stride) =
            if n == 0 { (1, 1) } else { (shape[n - 1], view.strides.get(n - 1).copied().unwrap_or(1)) };
        let lead = &shape[..n.saturating_sub(1)];
        let total: i64 = lead.iter().product();
        let mut idx_buf = [0i64; 8];
        let mut idx_heap = Vec::new();
        let idx: &mut [i64] = if lead.len() <= idx_buf.len() {
            &mut idx_buf[..lead.len()]
        } else {
            idx_heap.resize(lead.len(), 0);
            &mut idx_heap
        };
        starts.clear();
        starts.reserve(total.max(0) as usize);
        for _ in 0..total.max(0) {
            let mut e = 0i64;
            for (d, st) in view.strides.iter().enumerate().take(n) {
                let i = idx.get(d).copied().unwrap_or(0);
                e += (offs.get(d).copied().unwrap_or(0) + i) * st;
            }
            starts.push(e);
            for d in (0..lead.len()).rev() {
                idx[d] += 1;
                if idx[d] < lead[d] {
                    break;
                }
                idx[d] = 0;
            }
        }
        (cols, col_stride)
    }

    /// The region as one contiguous run of elements, when it is one: `(first element relative
    /// to the view base, element count)`. It is when, from the innermost dimension out, every
    /// dimension the region spans more than once continues the packed layout of the ones inside
    /// it, and only the outermost such dimension is partial.
    pub(super) fn single_run(view: &TRef, offs: &[i64], shape: &[i64]) -> Option<(i64, i64)> {
        let (mut start, mut numel, mut partial) = (0i64, 1i64, false);
        for d in (0..shape.len()).rev() {
            let stride = view.strides.get(d).copied().unwrap_or(1);
            start += offs.get(d).copied().unwrap_or(0) * stride;
            let n = shape[d];
            if n == 1 {
                continue;
            }
            if partial || stride != numel {
                return None;
            }
            numel *= n;
            partial = n != view.shape.get(d).copied().unwrap_or(1);
        }
        Some((start, numel))
    }

    /// Checks a region lies inside its tensor (static shape) — the view's own extent. Outside a
    /// host tensor, the report says so, names the parameter and, when the dim's extent is a
    /// symbolic dim's, the dim and how it was bound.
    pub(super) fn check_in_view(
        &self,
        view: &TRef,
        offs: &[i64],
        shape: &[i64],
        (span, op, g): (Span, &str, usize),
    ) -> Result<(), Fault> {
        for (d, (&o, &s)) in offs.iter().zip(shape).enumerate() {
            let dim = view.shape.get(d).copied().unwrap_or(1);
            if o < 0 || s < 0 || o + s > dim {
                let Mem::Host(buf) = view.mem else {
                    return Err(Fault::new(
                        ReportKind::OutOfBounds,
                        span,
                        format!(
                            "{op} on rank {g}: region dimension {d} [{o}, {}) exceeds the tensor extent {dim}",
                            o + s
                        ),
                    ));
                };
                let label = self.shared.host_labels.get(&buf);
                let what = label.map_or("a host tensor".to_string(), |l| format!("host tensor '{}'", l.name));
                let fault = Fault::new(
                    ReportKind::HostOutOfBounds,
                    span,
                    format!(
                        "{op} on rank {g}: region dimension {d} [{o}, {}) exceeds the extent {dim} of {what}",
                        o + s
                    ),
                );
                // The binding, when this view still has the parameter's dims (no reshape) and
                // the extent is the bound one (not a slice's).
                let bound = label
                    .filter(|l| l.dims.len() == view.shape.len())
                    .and_then(|l| l.dims.get(d)?.as_ref())
                    .filter(|b| b.value == dim);
                return Err(match bound {
                    Some(b) => fault.note(format!(
                        "dimension {d} of {what} is {} = {} (bound from {})",
                        b.name, b.value, b.from
                    )),
                    None => fault,
                });
            }
        }
        Ok(())
    }

    /// The checks of an access by rank `g` to `view` through `peer` that do not depend on
    /// the region, done once: `None` when any fails (the full path then reports it).
    fn locate(&mut self, a: &Access<'_>) -> Option<Located> {
        let Access { g, view, peer, op, who, .. } = *a;
        let Mem::Window { domain, alloc } = view.mem else { return None };
        let dom = &self.shared.domains[domain];
        let me = dom.drank(g)?;
        let n = dom.ctx.get(me)?.rank_num as usize;
        let owner = match peer {
            None => me,
            Some(p) => usize::try_from(p).ok().filter(|&p| p < n)?,
        };
        if view.owner != me || !elem::supported(view.dtype) {
            return None;
        }
        let site = self.intern(op, who);
        Some(Located {
            g,
            peer,
            mem: view.mem.clone(),
            view_owner: view.owner,
            dtype: view.dtype,
            domain,
            alloc,
            owner,
            me,
            site,
        })
    }

    /// [`World::access`] through a location cache (`at`, kept by the caller for repeated
    /// accesses to the same view): a region that is one contiguous run inside its buffer goes
    /// straight to [`World::touch`]; anything else — first use, another rank or view than
    /// the cached one, a strided region, a bounds error — takes the full path, so faults and
    /// their messages are those of [`World::access`].
    pub(crate) fn access_at(
        &mut self,
        at: &std::cell::OnceCell<Located>,
        a: &Access<'_>,
        mut data: Data<'_>,
    ) -> Result<(), Fault> {
        let fresh;
        let loc = match at.get() {
            Some(l) if l.serves(a.g, a.view, a.peer) => Some(l),
            Some(_) => {
                fresh = self.locate(a);
                fresh.as_ref()
            }
            None => {
                if let Some(l) = self.locate(a) {
                    let _ = at.set(l);
                }
                at.get()
            }
        };
        let plan = loc.and_then(|loc| self.plan_run(loc, a, &data));
        let Some((touch, start, numel)) = plan else {
            return self.access(a, data);
        };
        let eb = a.view.dtype.bytes() as i64;
        let rows = Rows { base: a.view.base as i64, starts: &[start], cols: numel, cstride: 1, eb };
        self.touch(a, touch, &rows, &mut data)
    }

    /// The bytes a located access touches, when its region is one contiguous run that passes
    /// every check of [`World::access`]: `(touch, first element, element count)`.
    fn plan_run(&self, loc: &Located, a: &Access<'_>, data: &Data<'_>) -> Option<(Touch, i64, i64)> {
        let Access { view, offs, shape, .. } = *a;
        let kind = data.kind();
        if let Data::AtomicBytes(_, sdt) | Data::ReadReduce { acc_dt: sdt, .. } = data {
            if !elem::supported(*sdt) {
                return None;
            }
        }
        if shape.len() != offs.len() || shape.iter().any(|&s| s <= 0) {
            return None;
        }
        let in_view = offs.iter().zip(shape).zip(&view.shape).all(|((&o, &s), &d)| o >= 0 && o + s <= d);
        if !in_view || offs.len() > view.shape.len() {
            return None;
        }
        let (start, numel) = Self::single_run(view, offs, shape)?;
        let eb = view.dtype.bytes() as i64;
        if data.elems(eb as usize).is_some_and(|n| n as i64 != numel) {
            return None;
        }
        let lo = view.base as i64 + start * eb;
        let hi = lo + numel * eb;
        let al = &self.shared.allocs[loc.alloc];
        let limit = if kind == AccessKind::Read { al.offset + al.rounded } else { al.offset + al.size };
        if lo < al.offset as i64 || hi > limit as i64 {
            return None;
        }
        let at = Touch {
            domain: loc.domain,
            alloc: loc.alloc,
            owner: loc.owner,
            lo: lo as u64,
            hi: hi as u64,
            bytes: (hi - lo) as u64,
            site: Some(loc.site),
            remote: loc.owner != loc.me,
        };
        Some((at, start, numel))
    }
}
