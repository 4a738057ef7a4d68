//! The wire format of what the ranks of a distributed run send to rank 0 when it ends: each
//! rank's share of the outcome (its traffic, counters, the output bytes it wrote, warnings,
//! modeled time) or its parked waits, and how rank 0 merges the shares.
//!
//! Guarantees: [`decode_share`] / [`decode_parked`] invert [`encode_share`] /
//! [`encode_parked`] exactly, and return `None` (never panic) on a truncated or corrupt
//! message; [`merge`] gives the outcome the in-process engine gives when every rank's
//! traffic is counted once (the host orchestrator's, replicated on every process, from rank 0
//! only) and every output byte takes the value its writer left (ranks applied in order).

use pld_ir::{FileId, Span};
use pld_sim::cost::BusFactor;
use pld_sim::timeline::CollectiveRun;
use pld_sim::{ParkedCore, RankShare, SimOutcome, Stats};
use std::collections::BTreeMap;

/// The rank of the host orchestrator in the traffic tables.
const HOST: usize = usize::MAX;

#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn u64(&mut self) -> Option<u64> {
        let (h, t) = self.0.split_first_chunk::<8>()?;
        self.0 = t;
        Some(u64::from_le_bytes(*h))
    }
    fn usize(&mut self) -> Option<usize> {
        usize::try_from(self.u64()?).ok()
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.usize()?;
        if n > self.0.len() {
            return None;
        }
        let (h, t) = self.0.split_at(n);
        self.0 = t;
        Some(h)
    }
    fn str(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }
    fn count(&mut self) -> Option<usize> {
        // Every counted item takes at least 8 bytes: a larger count is corrupt.
        self.usize().filter(|&n| n <= self.0.len() / 8 + 1)
    }
}

/// One rank's share of a successful run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Share {
    /// The rank.
    pub rank: usize,
    /// `(table, rank, op, bytes)`: table 0 remote, 1 local, 2 read+written.
    pub traffic: Vec<(u8, usize, String, u64)>,
    /// Its notifies, waits and barrier rounds.
    pub counters: [u64; 3],
    /// Scheduler steps it took.
    pub steps: u64,
    /// `(output, first byte, bytes)` it wrote.
    pub writes: Vec<(String, usize, Vec<u8>)>,
    /// Its warnings.
    pub warnings: Vec<String>,
    /// Its modeled time (ps).
    pub modeled_ps: u64,
    /// Its collective calls: `(name, seq, start, end, bytes, factor)` (factor 0 none, 1
    /// allreduce, 2 gather, 3 one).
    pub collectives: Vec<(String, u64, u64, u64, u64, u8)>,
}

/// The share of rank `rank` in `outcome` (`own`: the output spans it wrote, its collectives).
pub fn share_of(rank: usize, outcome: &SimOutcome, own: &RankShare) -> Share {
    let writes = &own.writes;
    let s = &outcome.stats;
    let mine = |r: usize| r == rank || (rank == 0 && r == HOST);
    let mut traffic = Vec::new();
    for (t, table) in [&s.remote_bytes, &s.local_bytes, &s.rw_bytes].into_iter().enumerate() {
        traffic.extend(
            table.iter().filter(|((r, _), _)| mine(*r)).map(|((r, op), b)| (t as u8, *r, op.clone(), *b)),
        );
    }
    let at = |v: &Vec<u64>| v.get(rank).copied().unwrap_or(0);
    let mut names: Vec<&String> = writes.keys().collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let Some(t) = outcome.outputs.get(name) else { continue };
        for &(lo, hi) in &writes[name] {
            if let Some(b) = t.data.get(lo..hi) {
                out.push((name.clone(), lo, b.to_vec()));
            }
        }
    }
    Share {
        rank,
        traffic,
        counters: [at(&s.notifies), at(&s.waits), at(&s.barrier_rounds)],
        steps: s.steps,
        writes: out,
        warnings: outcome.warnings.clone(),
        modeled_ps: outcome.timing.rank_ps.get(rank).copied().unwrap_or(0),
        collectives: own
            .collective_runs
            .iter()
            .map(|c| {
                let f = match c.factor {
                    None => 0,
                    Some(BusFactor::AllReduce) => 1,
                    Some(BusFactor::Gather) => 2,
                    Some(BusFactor::One) => 3,
                };
                (c.name.clone(), c.seq as u64, c.start, c.end, c.bytes, f)
            })
            .collect(),
    }
}

/// Encodes a share.
pub fn encode_share(s: &Share) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(s.rank as u64);
    w.u64(s.traffic.len() as u64);
    for (t, r, op, b) in &s.traffic {
        w.u64(u64::from(*t));
        w.u64(*r as u64);
        w.str(op);
        w.u64(*b);
    }
    s.counters.iter().for_each(|&c| w.u64(c));
    w.u64(s.steps);
    w.u64(s.writes.len() as u64);
    for (name, lo, b) in &s.writes {
        w.str(name);
        w.u64(*lo as u64);
        w.bytes(b);
    }
    w.u64(s.warnings.len() as u64);
    s.warnings.iter().for_each(|x| w.str(x));
    w.u64(s.modeled_ps);
    w.u64(s.collectives.len() as u64);
    for (name, seq, start, end, bytes, f) in &s.collectives {
        w.str(name);
        [*seq, *start, *end, *bytes, u64::from(*f)].iter().for_each(|&x| w.u64(x));
    }
    w.0
}

/// Decodes a share ([`encode_share`]); `None` when the bytes are not one.
pub fn decode_share(b: &[u8]) -> Option<Share> {
    let mut r = Reader(b);
    let rank = r.usize()?;
    let n = r.count()?;
    let mut traffic = Vec::with_capacity(n);
    for _ in 0..n {
        let t = u8::try_from(r.u64()?).ok().filter(|&t| t < 3)?;
        traffic.push((t, r.u64()? as usize, r.str()?, r.u64()?));
    }
    let counters = [r.u64()?, r.u64()?, r.u64()?];
    let steps = r.u64()?;
    let n = r.count()?;
    let mut writes = Vec::with_capacity(n);
    for _ in 0..n {
        writes.push((r.str()?, r.usize()?, r.bytes()?.to_vec()));
    }
    let n = r.count()?;
    let warnings = (0..n).map(|_| r.str()).collect::<Option<Vec<_>>>()?;
    let modeled_ps = r.u64()?;
    let n = r.count()?;
    let mut collectives = Vec::with_capacity(n);
    for _ in 0..n {
        let name = r.str()?;
        let (seq, start, end, bytes) = (r.u64()?, r.u64()?, r.u64()?, r.u64()?);
        let f = u8::try_from(r.u64()?).ok().filter(|&f| f < 4)?;
        collectives.push((name, seq, start, end, bytes, f));
    }
    r.0.is_empty().then_some(Share {
        rank,
        traffic,
        counters,
        steps,
        writes,
        warnings,
        modeled_ps,
        collectives,
    })
}

/// Rank 0's outcome made whole from every rank's share (rank order): traffic and counters of
/// each rank from its own share, every output byte from the rank that wrote it.
pub fn merge(mut outcome: SimOutcome, shares: &[Share], nranks: usize) -> SimOutcome {
    let mut stats = Stats {
        notifies: vec![0; nranks],
        waits: vec![0; nranks],
        barrier_rounds: vec![0; nranks],
        ..Stats::default()
    };
    let mut rank_ps = vec![0; nranks];
    for s in shares {
        for (t, r, op, b) in &s.traffic {
            let table: &mut BTreeMap<(usize, String), u64> = match t {
                0 => &mut stats.remote_bytes,
                1 => &mut stats.local_bytes,
                _ => &mut stats.rw_bytes,
            };
            *table.entry((*r, op.clone())).or_default() += b;
        }
        if s.rank < nranks {
            stats.notifies[s.rank] += s.counters[0];
            stats.waits[s.rank] += s.counters[1];
            stats.barrier_rounds[s.rank] += s.counters[2];
            rank_ps[s.rank] = s.modeled_ps;
        }
        stats.steps += s.steps;
        for (name, lo, b) in &s.writes {
            if let Some(dst) = outcome.outputs.get_mut(name).and_then(|t| t.data.get_mut(*lo..lo + b.len())) {
                dst.copy_from_slice(b);
            }
        }
        for w in &s.warnings {
            if !outcome.warnings.contains(w) {
                outcome.warnings.push(w.clone());
            }
        }
    }
    let runs: Vec<CollectiveRun> = shares
        .iter()
        .flat_map(|s| {
            s.collectives.iter().map(move |(name, seq, start, end, bytes, f)| CollectiveRun {
                name: name.clone(),
                rank: s.rank,
                seq: *seq as usize,
                start: *start,
                end: *end,
                bytes: *bytes,
                factor: [None, Some(BusFactor::AllReduce), Some(BusFactor::Gather), Some(BusFactor::One)]
                    [usize::from(*f).min(3)],
                info: Default::default(),
            })
        })
        .collect();
    outcome.stats = stats;
    outcome.timing.rank_ps = rank_ps;
    outcome.timing.collectives = pld_sim::timeline::collective_times(&runs);
    outcome
}

/// Encodes parked waits.
pub fn encode_parked(parked: &[ParkedCore]) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(parked.len() as u64);
    for p in parked {
        w.u64(p.rank as u64);
        w.u64(p.core.map_or(u64::MAX, |c| c as u64));
        w.str(&p.kernel);
        w.u64(u64::from(p.span.file.0));
        w.u64(u64::from(p.span.lo));
        w.u64(u64::from(p.span.hi));
        w.str(&p.cell);
        w.str(&p.predicate);
        w.u64(p.value as u32 as u64);
        w.u64(p.writers.len() as u64);
        p.writers.iter().for_each(|&x| w.u64(x as u64));
    }
    w.0
}

/// Decodes parked waits ([`encode_parked`]).
pub fn decode_parked(b: &[u8]) -> Option<Vec<ParkedCore>> {
    let mut r = Reader(b);
    let n = r.count()?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let rank = r.usize()?;
        let core = r.u64()?;
        let core = (core != u64::MAX).then_some(core as usize);
        let kernel = r.str()?;
        let file = FileId(u32::try_from(r.u64()?).ok()?);
        let lo = u32::try_from(r.u64()?).ok()?;
        let hi = u32::try_from(r.u64()?).ok()?;
        let cell = r.str()?;
        let predicate = r.str()?;
        let value = u32::try_from(r.u64()?).ok()? as i32;
        let k = r.count()?;
        let writers = (0..k).map(|_| r.usize()).collect::<Option<Vec<_>>>()?;
        out.push(ParkedCore {
            rank,
            core,
            kernel,
            span: Span { file, lo, hi },
            cell,
            predicate,
            value,
            writers,
        });
    }
    r.0.is_empty().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share() -> Share {
        Share {
            rank: 2,
            traffic: vec![(0, 2, "pld.put".into(), 4096), (2, 2, "tile.load".into(), 12)],
            counters: [3, 4, 1],
            steps: 99,
            writes: vec![("y".into(), 8, vec![1, 2, 3, 4])],
            warnings: vec!["w".into()],
            modeled_ps: 1234,
            collectives: vec![("builtin.tensor.allreduce_mesh".into(), 0, 10, 50, 4096, 1)],
        }
    }

    #[test]
    fn a_share_survives_the_wire_and_truncation_is_refused() {
        let s = share();
        let b = encode_share(&s);
        assert_eq!(decode_share(&b), Some(s));
        for cut in [0, 1, 8, b.len() / 2, b.len() - 1] {
            assert_eq!(decode_share(&b[..cut]), None, "cut at {cut}");
        }
        let mut longer = b.clone();
        longer.push(0);
        assert_eq!(decode_share(&longer), None);
    }

    #[test]
    fn parked_waits_survive_the_wire() {
        let p = vec![ParkedCore {
            rank: 1,
            core: Some(3),
            kernel: "k".into(),
            span: Span { file: FileId(2), lo: 10, hi: 20 },
            cell: "sig[0] on rank 1".into(),
            predicate: "Ge 1".into(),
            value: -5,
            writers: vec![0, 3],
        }];
        let b = encode_parked(&p);
        assert_eq!(decode_parked(&b), Some(p));
        assert_eq!(decode_parked(&b[..b.len() - 3]), None);
    }

    #[test]
    fn merge_takes_each_ranks_traffic_and_written_bytes() {
        let mut outputs = std::collections::HashMap::new();
        outputs.insert("y".to_string(), pld_sim::HostTensor::zeros(pld_ir::DataType::INT32, vec![4]));
        let base = SimOutcome {
            outputs,
            stats: Stats::default(),
            trace: None,
            warnings: Vec::new(),
            timing: pld_sim::timeline::Timing {
                rank_ps: vec![0; 3],
                collectives: Vec::new(),
                model: String::new(),
            },
        };
        let zero = Share {
            rank: 0,
            traffic: vec![(1, 0, "a".into(), 5), (1, HOST, "h".into(), 7)],
            ..Share::default()
        };
        let merged = merge(base, &[zero, share()], 3);
        assert_eq!(merged.stats.local_bytes.get(&(0, "a".to_string())), Some(&5));
        assert_eq!(merged.stats.local_bytes.get(&(HOST, "h".to_string())), Some(&7));
        assert_eq!(merged.stats.remote_total(2), 4096);
        assert_eq!(merged.stats.notifies, vec![0, 0, 3]);
        assert_eq!(merged.timing.rank_ps, vec![0, 0, 1234]);
        assert_eq!(&merged.outputs["y"].data[8..12], &[1, 2, 3, 4]);
        assert_eq!(merged.warnings, vec!["w".to_string()]);
        assert_eq!(merged.timing.collectives.len(), 1);
        assert_eq!((merged.timing.collectives[0].ranks, merged.timing.collectives[0].time_ps), (1, 40));
    }
}
