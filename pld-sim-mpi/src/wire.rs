//! The wire format of what the ranks of a distributed run send to rank 0 when it ends: each
//! rank's share of the outcome (its traffic, counters, the output bytes it wrote, warnings,
//! modeled time) or its parked waits, and how rank 0 merges the shares.
//!
//! Guarantees: a [`Message`] is its serde form in `postcard`'s compact binary encoding;
//! [`decode`] inverts [`encode`] exactly and returns a [`WireError`] (never panics) on bytes
//! that are not one whole message — truncated, corrupt, or followed by anything; [`merge`]
//! gives the outcome the in-process engine gives when every rank's traffic is counted once
//! (the host orchestrator's, replicated on every process, from rank 0 only) and every output
//! byte takes the value its writer left (ranks applied in order).

use pld_sim::timeline::CollectiveRun;
use pld_sim::{ParkedCore, RankShare, SimOutcome, Stats};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The rank of the host orchestrator in the traffic tables.
const HOST: usize = usize::MAX;

/// What one process sends rank 0 when the run ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Message {
    /// Its share of a successful run.
    Share(Share),
    /// Its waits parked when the watchdog called the run deadlocked.
    Parked(Vec<ParkedCore>),
}

/// Which traffic table a count belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Table {
    /// Bytes moved to or from a peer.
    Remote,
    /// Bytes moved locally.
    Local,
    /// Bytes read and written by read-modify-write accesses.
    ReadWritten,
}

/// One traffic count of a share.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Traffic {
    /// Its table.
    pub table: Table,
    /// The rank counted (or the host orchestrator, `usize::MAX`).
    pub rank: usize,
    /// The op.
    pub op: String,
    /// Bytes.
    pub bytes: u64,
}

/// Bytes of one output that a rank wrote.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Written {
    /// The output.
    pub output: String,
    /// Its first byte.
    pub lo: usize,
    /// The bytes.
    #[serde(with = "serde_bytes")]
    pub bytes: Vec<u8>,
}

/// One rank's share of a successful run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Share {
    /// The rank.
    pub rank: usize,
    /// Its traffic.
    pub traffic: Vec<Traffic>,
    /// Its notifies, waits and barrier rounds.
    pub counters: [u64; 3],
    /// Scheduler steps it took.
    pub steps: u64,
    /// The output bytes it wrote.
    pub writes: Vec<Written>,
    /// Its warnings.
    pub warnings: Vec<String>,
    /// Its modeled time (ps).
    pub modeled_ps: u64,
    /// Its collective calls.
    pub collectives: Vec<CollectiveRun>,
}

/// Bytes that are not one whole [`Message`].
#[derive(Debug, PartialEq)]
pub enum WireError {
    /// The encoding itself is broken (truncated, a bad tag, bad UTF-8, …).
    Malformed(postcard::Error),
    /// A whole message followed by this many more bytes.
    Trailing(usize),
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Malformed(e) => write!(f, "malformed message: {e}"),
            WireError::Trailing(n) => write!(f, "{n} byte(s) after a whole message"),
        }
    }
}

impl std::error::Error for WireError {}

/// Encodes a message.
pub fn encode(m: &Message) -> Result<Vec<u8>, WireError> {
    postcard::to_allocvec(m).map_err(WireError::Malformed)
}

/// Decodes a message ([`encode`]).
pub fn decode(b: &[u8]) -> Result<Message, WireError> {
    let (m, rest) = postcard::take_from_bytes::<Message>(b).map_err(WireError::Malformed)?;
    if rest.is_empty() {
        Ok(m)
    } else {
        Err(WireError::Trailing(rest.len()))
    }
}

/// The share of rank `rank` in `outcome` (`own`: the output spans it wrote, its collectives);
/// the bytes it wrote only `with_writes` (when rank 0 writes or checks the outputs).
pub fn share_of(rank: usize, outcome: &SimOutcome, own: &RankShare, with_writes: bool) -> Share {
    let writes = &own.writes;
    let s = &outcome.stats;
    let mine = |r: usize| r == rank || (rank == 0 && r == HOST);
    let mut traffic = Vec::new();
    let tables =
        [(Table::Remote, &s.remote_bytes), (Table::Local, &s.local_bytes), (Table::ReadWritten, &s.rw_bytes)];
    for (t, table) in tables {
        traffic.extend(table.iter().filter(|((r, _), _)| mine(*r)).map(|((r, op), b)| Traffic {
            table: t,
            rank: *r,
            op: op.clone(),
            bytes: *b,
        }));
    }
    let at = |v: &Vec<u64>| v.get(rank).copied().unwrap_or(0);
    let mut names: Vec<&String> = writes.keys().filter(|_| with_writes).collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let Some(t) = outcome.outputs.get(name) else { continue };
        for &(lo, hi) in &writes[name] {
            if let Some(b) = t.data.get(lo..hi) {
                out.push(Written { output: name.clone(), lo, bytes: b.to_vec() });
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
        collectives: own.collective_runs.clone(),
    }
}

/// Rank 0's outcome made whole from every rank's share, taken one at a time in rank order
/// (so rank 0 holds one share's bytes at once): traffic and counters of each rank from its
/// own share, every output byte from the rank that wrote it.
pub struct Merger {
    outcome: SimOutcome,
    stats: Stats,
    rank_ps: Vec<u64>,
    runs: Vec<CollectiveRun>,
}

impl Merger {
    /// Starts from rank 0's own outcome of a run on `nranks` ranks.
    pub fn new(outcome: SimOutcome, nranks: usize) -> Merger {
        let stats = Stats {
            notifies: vec![0; nranks],
            waits: vec![0; nranks],
            barrier_rounds: vec![0; nranks],
            ..Stats::default()
        };
        Merger { outcome, stats, rank_ps: vec![0; nranks], runs: Vec::new() }
    }

    /// Takes the next rank's share.
    pub fn add(&mut self, s: Share) {
        let stats = &mut self.stats;
        for t in &s.traffic {
            let table: &mut BTreeMap<(usize, String), u64> = match t.table {
                Table::Remote => &mut stats.remote_bytes,
                Table::Local => &mut stats.local_bytes,
                Table::ReadWritten => &mut stats.rw_bytes,
            };
            *table.entry((t.rank, t.op.clone())).or_default() += t.bytes;
        }
        if s.rank < self.rank_ps.len() {
            stats.notifies[s.rank] += s.counters[0];
            stats.waits[s.rank] += s.counters[1];
            stats.barrier_rounds[s.rank] += s.counters[2];
            self.rank_ps[s.rank] = s.modeled_ps;
        }
        stats.steps += s.steps;
        let outputs = &mut self.outcome.outputs;
        for w in &s.writes {
            let end = w.lo.saturating_add(w.bytes.len());
            if let Some(dst) = outputs.get_mut(&w.output).and_then(|t| t.data.get_mut(w.lo..end)) {
                dst.copy_from_slice(&w.bytes);
            }
        }
        for w in s.warnings {
            if !self.outcome.warnings.contains(&w) {
                self.outcome.warnings.push(w);
            }
        }
        let rank = s.rank;
        self.runs.extend(s.collectives.into_iter().map(|c| CollectiveRun { rank, ..c }));
    }

    /// The merged outcome.
    pub fn finish(mut self) -> SimOutcome {
        self.outcome.stats = self.stats;
        self.outcome.timing.rank_ps = self.rank_ps;
        self.outcome.timing.collectives = pld_sim::timeline::collective_times(&self.runs);
        self.outcome
    }
}

/// [`Merger`] over `shares` (rank order).
pub fn merge(outcome: SimOutcome, shares: impl IntoIterator<Item = Share>, nranks: usize) -> SimOutcome {
    let mut m = Merger::new(outcome, nranks);
    shares.into_iter().for_each(|s| m.add(s));
    m.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pld_ir::{FileId, Span};
    use pld_sim::cost::BusFactor;

    fn share() -> Share {
        Share {
            rank: 2,
            traffic: vec![
                Traffic { table: Table::Remote, rank: 2, op: "pld.put".into(), bytes: 4096 },
                Traffic { table: Table::ReadWritten, rank: 2, op: "tile.load".into(), bytes: 12 },
            ],
            counters: [3, 4, 1],
            steps: 99,
            writes: vec![Written { output: "y".into(), lo: 8, bytes: vec![1, 2, 3, 4] }],
            warnings: vec!["w".into()],
            modeled_ps: 1234,
            collectives: vec![CollectiveRun {
                name: "builtin.tensor.allreduce_mesh".into(),
                rank: 2,
                seq: 0,
                start: 10,
                end: 50,
                bytes: 4096,
                factor: Some(BusFactor::AllReduce),
                info: Default::default(),
            }],
        }
    }

    #[test]
    fn a_share_survives_the_wire_and_truncation_is_refused() {
        let m = Message::Share(share());
        let b = encode(&m).expect("encode");
        assert_eq!(decode(&b), Ok(m));
        for cut in [0, 1, 8, b.len() / 2, b.len() - 1] {
            assert!(matches!(decode(&b[..cut]), Err(WireError::Malformed(_))), "cut at {cut}");
        }
        let mut longer = b.clone();
        longer.push(0);
        assert_eq!(decode(&longer), Err(WireError::Trailing(1)));
    }

    #[test]
    fn a_bad_tag_is_an_error() {
        let mut b = encode(&Message::Share(share())).expect("encode");
        // The message's own tag, then (after the rank) the first traffic count's table.
        b[0] = 7;
        assert!(matches!(decode(&b), Err(WireError::Malformed(_))));
        let mut b = encode(&Message::Share(share())).expect("encode");
        assert_eq!((b[1], b[2], b[3]), (2, 2, 0), "rank 2, two counts, table Remote");
        b[3] = 3;
        assert!(matches!(decode(&b), Err(WireError::Malformed(_))));
    }

    #[test]
    fn parked_waits_survive_the_wire() {
        let p = Message::Parked(vec![ParkedCore {
            rank: 1,
            core: Some(3),
            kernel: "k".into(),
            span: Span { file: FileId(2), lo: 10, hi: 20 },
            cell: "sig[0] on rank 1".into(),
            predicate: "Ge 1".into(),
            value: -5,
            writers: vec![0, 3],
        }]);
        let b = encode(&p).expect("encode");
        assert_eq!(decode(&b), Ok(p));
        assert!(decode(&b[..b.len() - 3]).is_err());
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
            traffic: vec![
                Traffic { table: Table::Local, rank: 0, op: "a".into(), bytes: 5 },
                Traffic { table: Table::Local, rank: HOST, op: "h".into(), bytes: 7 },
            ],
            ..Share::default()
        };
        let merged = merge(base, [zero, share()], 3);
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
