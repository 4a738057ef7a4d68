//! The distributed seam without MPI: a [`WindowBackend`] whose "processes" are threads of this
//! test (windows in shared byte vectors, collectives through a barrier), each running
//! [`pld_sim::run_distributed`] for its own rank. Merging every rank's share gives the outputs
//! and traffic of the in-process run, and a deadlock gives the in-process report.

use pld_ir::DataType;
use pld_sim::world::{Poll, RankState, Watchdog, WindowBackend};
use pld_sim::{HostTensor, Inputs, RankShare, ReportKind, SimConfig, SimError, SimOutcome};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

const RING: &str = include_str!("../../examples/put_get_ring.py");

fn parse(text: &str) -> pld_ir::Program {
    let () = pld_ops::LINKED;
    pld_frontend::parse_str(text).unwrap_or_else(|d| panic!("parse failed: {d:?}"))
}

/// One domain's windows: members and each member's bytes.
type Domain = (Vec<usize>, Vec<Mutex<Vec<u8>>>);

/// What the thread "processes" share.
struct Shared {
    p: usize,
    barrier: Barrier,
    domains: Mutex<Vec<Domain>>,
    slots: Mutex<Vec<Vec<u8>>>,
    watch: Mutex<Watch>,
}

#[derive(Default)]
struct Watch {
    /// Per rank: state (None: running), steps, polls.
    ranks: Vec<(Option<RankState>, u64, u64)>,
    snapshot: Option<(Instant, u64, Vec<u64>)>,
    verdict: Option<Poll>,
}

struct Rank {
    me: usize,
    shared: Arc<Shared>,
}

impl Rank {
    fn with<R>(&self, domain: usize, owner: usize, f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
        let doms = self.shared.domains.lock().unwrap();
        let mut bytes = doms[domain].1[owner].lock().unwrap();
        f(&mut bytes)
    }

    fn cell(&self, domain: usize, owner: usize, offset: u64, f: impl FnOnce(i32) -> i32) -> i32 {
        self.with(domain, owner, |b| {
            let o = offset as usize;
            let old = i32::from_le_bytes(b[o..o + 4].try_into().unwrap());
            b[o..o + 4].copy_from_slice(&f(old).to_le_bytes());
            old
        })
    }
}

impl Watchdog for Rank {
    fn poll(&self, state: RankState, steps: u64) -> Poll {
        let mut w = self.shared.watch.lock().unwrap();
        if let Some(v) = w.verdict {
            return v;
        }
        let polls = w.ranks[self.me].2 + 1;
        w.ranks[self.me] = (Some(state), steps, polls);
        if w.ranks.iter().all(|r| r.0 == Some(RankState::Done)) {
            w.verdict = Some(Poll::Finished);
            return Poll::Finished;
        }
        if w.ranks.iter().any(|r| r.0.is_none()) {
            w.snapshot = None;
            return Poll::Go;
        }
        let total: u64 = w.ranks.iter().map(|r| r.1).sum();
        let polls: Vec<u64> = w.ranks.iter().map(|r| r.2).collect();
        match &w.snapshot {
            Some((t, s, p)) if *s == total => {
                let polled =
                    (0..polls.len()).all(|r| w.ranks[r].0 == Some(RankState::Done) || polls[r] >= p[r] + 3);
                if polled && t.elapsed() >= Duration::from_millis(100) {
                    w.verdict = Some(Poll::Deadlock);
                    return Poll::Deadlock;
                }
            }
            _ => w.snapshot = Some((Instant::now(), total, polls)),
        }
        Poll::Go
    }
}

impl WindowBackend for Rank {
    fn rank(&self) -> usize {
        self.me
    }

    fn create(
        &self,
        domain: usize,
        members: &[usize],
        size: u64,
        fill: &dyn Fn(&mut [u8]),
    ) -> Result<(), String> {
        {
            let mut doms = self.shared.domains.lock().unwrap();
            if doms.len() == domain {
                let wins = members.iter().map(|_| Mutex::new(vec![0u8; size as usize])).collect();
                doms.push((members.to_vec(), wins));
            }
            if let Some(d) = members.iter().position(|&g| g == self.me) {
                fill(&mut doms[domain].1[d].lock().unwrap());
            }
        }
        self.shared.barrier.wait();
        Ok(())
    }

    fn get(&self, domain: usize, owner: usize, offset: u64, out: &mut [u8]) {
        let o = offset as usize;
        self.with(domain, owner, |b| out.copy_from_slice(&b[o..o + out.len()]));
    }

    fn put(&self, domain: usize, owner: usize, offset: u64, src: &[u8]) {
        let o = offset as usize;
        self.with(domain, owner, |b| b[o..o + src.len()].copy_from_slice(src));
    }

    fn accumulate(&self, domain: usize, owner: usize, offset: u64, src: &[u8], dt: DataType) -> bool {
        if dt != DataType::FP32 {
            return false;
        }
        let o = offset as usize;
        self.with(domain, owner, |b| {
            for (k, x) in src.chunks_exact(4).enumerate() {
                let at = o + 4 * k;
                let sum = f32::from_le_bytes(b[at..at + 4].try_into().unwrap())
                    + f32::from_le_bytes(x.try_into().unwrap());
                b[at..at + 4].copy_from_slice(&sum.to_le_bytes());
            }
        });
        true
    }

    fn fetch_add(&self, domain: usize, owner: usize, offset: u64, v: i32) -> i32 {
        self.cell(domain, owner, offset, |old| old.wrapping_add(v))
    }

    fn swap(&self, domain: usize, owner: usize, offset: u64, v: i32) -> i32 {
        self.cell(domain, owner, offset, |_| v)
    }

    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        self.shared.slots.lock().unwrap()[self.me] = mine.to_vec();
        self.shared.barrier.wait();
        let all = self.shared.slots.lock().unwrap().clone();
        self.shared.barrier.wait();
        all
    }

    fn next_epoch(&self) {
        self.shared.barrier.wait();
        {
            let mut w = self.shared.watch.lock().unwrap();
            w.ranks[self.me].0 = None;
            w.verdict = None;
            w.snapshot = None;
        }
        self.shared.barrier.wait();
    }
}

/// Every rank's result of one distributed run of `entry` on `p` thread "processes".
fn distributed(
    program: &pld_ir::Program,
    inputs: &Inputs,
    cfg: &SimConfig,
) -> Vec<Result<(SimOutcome, RankShare), SimError>> {
    distributed_each(program, inputs, &vec![cfg.clone(); cfg.nranks])
}

/// [`distributed`] with each "process" given its own configuration (`cfgs[rank]`).
fn distributed_each(
    program: &pld_ir::Program,
    inputs: &Inputs,
    cfgs: &[SimConfig],
) -> Vec<Result<(SimOutcome, RankShare), SimError>> {
    let p = cfgs.len();
    let shared = Arc::new(Shared {
        p,
        barrier: Barrier::new(p),
        domains: Mutex::new(Vec::new()),
        slots: Mutex::new(vec![Vec::new(); p]),
        watch: Mutex::new(Watch { ranks: vec![(None, 0, 0); p], ..Watch::default() }),
    });
    assert_eq!(shared.p, p);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..p)
            .map(|me| {
                let b = Arc::new(Rank { me, shared: Arc::clone(&shared) });
                let cfg = &cfgs[me];
                s.spawn(move || pld_sim::run_distributed(program, "host_orch", inputs, cfg, b))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("rank thread")).collect()
    })
}

/// Merges every rank's written output spans onto rank 0's outcome (as the MPI engine does).
fn merged_outputs(results: Vec<Result<(SimOutcome, RankShare), SimError>>) -> SimOutcome {
    let mut shares = results.into_iter();
    let (mut merged, _) = shares.next().unwrap().expect("rank 0");
    for (r, share) in shares.enumerate() {
        let (outcome, share) = share.unwrap_or_else(|e| panic!("rank {}: {e}", r + 1));
        for (name, spans) in share.writes {
            for (lo, hi) in spans {
                let src = &outcome.outputs[&name].data[lo..hi];
                merged.outputs.get_mut(&name).unwrap().data[lo..hi].copy_from_slice(src);
            }
        }
    }
    merged
}

/// A lazy input's source that records the byte ranges a "process" asked it for.
#[derive(Debug)]
struct Recording {
    inner: pld_sim::lazy::Seeded,
    asked: Mutex<Vec<(usize, usize)>>,
}

impl pld_sim::lazy::HostSource for Recording {
    fn fill(&self, offset: usize, out: &mut [u8]) {
        self.asked.lock().unwrap().push((offset, offset + out.len()));
        self.inner.fill(offset, out);
    }
}

#[test]
fn each_process_reads_only_the_input_rows_its_rank_touches() {
    // Rows of four chunks, so rank r's row is chunks [4r, 4r + 4) of `inputs`.
    let row = 4 * pld_sim::lazy::CHUNK;
    let text = RING.replace("\nSIZE = 128\n", &format!("\nSIZE = {}\n", row / 4));
    assert_ne!(text, RING, "the example's SIZE moved");
    let program = parse(&text);
    let p = 3;
    let seeded = pld_sim::lazy::Seeded { dtype: DataType::FP32, state: 7 };
    let input = |source: Arc<dyn pld_sim::lazy::HostSource>| pld_sim::lazy::LazyInput {
        dtype: DataType::FP32,
        shape: vec![p, 1, row / 4],
        source,
    };
    let mut whole = SimConfig::ranks(p);
    whole.lazy_inputs.insert("inputs".into(), input(Arc::new(seeded)));
    let want = pld_sim::run(&program, "host_orch", &Inputs::new(), &whole).expect("in-process run");
    let sources: Vec<Arc<Recording>> =
        (0..p).map(|_| Arc::new(Recording { inner: seeded, asked: Mutex::new(Vec::new()) })).collect();
    let cfgs: Vec<SimConfig> = sources
        .iter()
        .map(|s| {
            let mut cfg = SimConfig::ranks(p);
            cfg.lazy_inputs.insert("inputs".into(), input(s.clone()));
            cfg
        })
        .collect();
    let merged = merged_outputs(distributed_each(&program, &Inputs::new(), &cfgs));
    for name in ["pushed", "pulled"] {
        assert_eq!(merged.outputs[name].data, want.outputs[name].data, "output {name}");
    }
    for (r, s) in sources.iter().enumerate() {
        let asked = s.asked.lock().unwrap();
        let read: usize = asked.iter().map(|(lo, hi)| hi - lo).sum();
        assert_eq!(read, row, "rank {r} read {read} bytes of the input: {asked:?}");
        assert!(asked.iter().all(|&(lo, hi)| lo >= r * row && hi <= (r + 1) * row), "rank {r}: {asked:?}");
    }
}

fn ring_inputs(p: usize) -> Inputs {
    let vals: Vec<f32> = (0..p * 128).map(|i| i as f32 * 0.5 - 7.0).collect();
    let mut inputs = Inputs::new();
    inputs.insert("inputs".into(), HostTensor::from_f32(vec![p, 1, 128], &vals));
    inputs
}

#[test]
fn every_rank_on_its_own_world_gives_the_in_process_outputs_and_traffic() {
    let program = parse(RING);
    let entry =
        program.functions.iter().find(|f| f.kind == pld_ir::FunctionKind::Host).map(|f| f.name.clone());
    assert_eq!(entry.as_deref(), Some("host_orch"), "the example's host function");
    for p in [2, 3, 4] {
        let cfg = SimConfig::ranks(p);
        let inputs = ring_inputs(p);
        let want = pld_sim::run(&program, "host_orch", &inputs, &cfg).expect("in-process run");
        let mut shares = distributed(&program, &inputs, &cfg).into_iter();
        let (mut merged, _) = shares.next().unwrap().expect("rank 0");
        // Rank 0's outputs hold its own writes; every other rank's written spans go on top.
        for (r, share) in shares.enumerate() {
            let (outcome, share) = share.unwrap_or_else(|e| panic!("rank {}: {e}", r + 1));
            for (name, spans) in share.writes {
                for (lo, hi) in spans {
                    let src = &outcome.outputs[&name].data[lo..hi];
                    merged.outputs.get_mut(&name).unwrap().data[lo..hi].copy_from_slice(src);
                }
            }
            for (k, b) in outcome.stats.remote_bytes {
                if k.0 == r + 1 {
                    *merged.stats.remote_bytes.entry(k).or_default() += b;
                }
            }
        }
        let mut names: Vec<&String> = want.outputs.keys().collect();
        names.sort();
        assert_eq!(names.len(), 2, "pushed and pulled");
        for name in names {
            assert_eq!(merged.outputs[name].data, want.outputs[name].data, "P={p}: output {name}");
        }
        for r in 0..p {
            assert_eq!(
                merged.stats.remote_total(r),
                want.stats.remote_total(r),
                "P={p}: rank {r} remote bytes"
            );
            assert!(want.stats.remote_total(r) > 0);
        }
    }
}

#[test]
fn a_distributed_deadlock_merges_into_the_in_process_report() {
    let text = RING.replace(
        "pld.system.wait(signal, [prv, 0], 1, cmp=pld.WaitCmp.Ge)",
        "pld.system.wait(signal, [prv, 0], 2, cmp=pld.WaitCmp.Ge)",
    );
    assert_ne!(text, RING, "the example's wait moved");
    let program = parse(&text);
    let cfg = SimConfig::ranks(3);
    let inputs = ring_inputs(3);
    let Err(SimError::Fault(want)) = pld_sim::run(&program, "host_orch", &inputs, &cfg) else {
        panic!("the in-process run does not deadlock");
    };
    let mut waits = Vec::new();
    for (r, res) in distributed(&program, &inputs, &cfg).into_iter().enumerate() {
        match res {
            Err(SimError::Fault(rep)) => match rep.kind {
                ReportKind::Deadlock(parked) => {
                    assert!(parked.iter().all(|w| w.rank == r), "rank {r} reports only its own waits");
                    waits.extend(parked);
                }
                other => panic!("rank {r}: {other:?}"),
            },
            other => panic!("rank {r}: {:?}", other.map(|_| ())),
        }
    }
    let got = pld_sim::deadlock_report(waits, &cfg);
    assert_eq!(got.text, want.text);
    assert!(got.text.contains("written so far by ranks [0]"), "{}", got.text);
}
