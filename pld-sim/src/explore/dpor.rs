//! Source-set DPOR with sleep sets (Abdulla, Aronis, Jonsson, Sagonas, POPL 2014, Algorithm
//! 1), stateless: every execution re-runs the program from a fresh world, replaying a prefix
//! of picks, then explores; the races of each new step are analysed once it has run.
//!
//! Guarantees: with `naive` off, every complete execution the search finishes is of a distinct
//! Mazurkiewicz trace (the sleep sets), and every trace of the program is finished by some
//! execution (source sets over the races of [`Step::dependent`]); a thread picked where its
//! wait cannot complete parks without a step and is never picked there again. With `naive`
//! on, every interleaving of steps is run (every runnable thread at every node): the
//! reference the tests compare the search against.

use crate::drive::{Driver, Ev, Step, Stop, Tid};
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeSet;

/// One state of the current execution: the picks made there and what is known about it.
#[derive(Default)]
struct Node {
    /// This execution's picks here: threads that parked without a step, then the step's.
    picks: Vec<Tid>,
    /// Threads runnable when the node was first reached.
    runnable: Vec<Tid>,
    /// Threads known to park here (their wait cannot complete in this state).
    blocked: BTreeSet<Tid>,
    /// Threads to explore from here.
    backtrack: BTreeSet<Tid>,
    /// Threads explored (or being explored) from here.
    done: BTreeSet<Tid>,
    /// The sleep set: threads whose step from here is covered elsewhere, with that step.
    sleep: Vec<(Tid, Step)>,
    /// Whether the node was reached for the first time in this execution.
    fresh: bool,
    /// The step taken from here in this execution, its thread's dense index and its index
    /// among that thread's steps, and its happens-before clock (per dense thread: how many of
    /// its steps happen before or are this one).
    step: Option<(Step, usize, u32, Vec<u32>)>,
}

/// The search state, kept across executions; the scheduler drives it through [`Driver`].
#[derive(Default)]
pub struct Dpor {
    naive: bool,
    nodes: Vec<Node>,
    /// The current node of this execution.
    n: usize,
    /// Nodes before it replay their recorded picks.
    target: usize,
    /// The next recorded pick of the node being replayed.
    rpos: usize,
    /// Every pick of this execution.
    pub picks: Vec<Tid>,
    /// This execution was stopped by the search (all runnable threads asleep or explored).
    pub stopped: bool,
    /// A replayed step differed from its recording (the simulator is not deterministic).
    pub diverged: Option<String>,
    /// The sleep set the next fresh node starts with.
    next_sleep: Vec<(Tid, Step)>,
    /// Dense thread indices and per-thread step counts of this execution.
    dense: HashMap<Tid, usize>,
    counts: Vec<u32>,
    /// Races whose reversal was added to a backtrack set.
    pub reversals: u64,
}

impl Dpor {
    /// A search; `naive`: every interleaving, no reduction.
    pub fn new(naive: bool) -> Dpor {
        Dpor { naive, ..Dpor::default() }
    }

    /// Prepares the next execution: `false` when the search is complete.
    pub fn next_execution(&mut self) -> bool {
        while let Some(node) = self.nodes.last_mut() {
            if let Some((st, ..)) = node.step.take() {
                node.done.insert(st.tid);
                if !self.naive {
                    node.sleep.push((st.tid, st));
                }
            }
            if node.candidates().next().is_some() {
                node.picks.clear();
                node.fresh = false;
                self.target = self.nodes.len() - 1;
                self.reset_run();
                return true;
            }
            self.nodes.pop();
        }
        false
    }

    /// Starts the first execution.
    pub fn first_execution(&mut self) {
        self.nodes.clear();
        self.target = 0;
        self.reset_run();
    }

    fn reset_run(&mut self) {
        self.n = 0;
        self.rpos = 0;
        self.picks.clear();
        self.stopped = false;
        self.next_sleep.clear();
        self.counts.iter_mut().for_each(|c| *c = 0);
    }

    fn dense(&mut self, t: Tid) -> usize {
        let next = self.dense.len();
        let ix = *self.dense.entry(t).or_insert(next);
        if self.counts.len() <= ix {
            self.counts.resize(ix + 1, 0);
        }
        ix
    }

    /// The happens-before clock of step `e` (of dense thread `ti`, its `li`-th) at node `n`,
    /// and the nodes whose steps race with it (dependent, other thread, not ordered through
    /// another step).
    fn clock_and_races(&self, e: &Step, ti: usize, li: u32) -> (Vec<u32>, Vec<usize>) {
        let mut c = vec![0u32; self.counts.len()];
        let mut races = Vec::new();
        for i in (0..self.n).rev() {
            let Some((s, tj, lj, cj)) = &self.nodes[i].step else { continue };
            if c[*tj] > *lj || !s.dependent(e) {
                continue;
            }
            if s.tid != e.tid {
                races.push(i);
            }
            for (x, y) in c.iter_mut().zip(cj) {
                *x = (*x).max(*y);
            }
        }
        c[ti] = li + 1;
        (c, races)
    }

    /// Adds to node `i`'s backtrack set a thread that starts an execution reversing the race
    /// of its step with `e` (clock `ce`), unless one already does.
    fn reverse(&mut self, i: usize, e: &Step, ce: &[u32]) {
        let Some((_, ti, li, _)) = &self.nodes[i].step else { return };
        let (ti, li) = (*ti, *li);
        let hb_i = |c: &[u32]| c.get(ti).copied().unwrap_or(0) > li;
        // v = the steps after i not happening after it, then e; its initials are the threads
        // of the steps of v with no step of v before them in happens-before.
        let mut first_in_v: HashMap<usize, u32> = HashMap::default();
        let mut initials: Vec<Tid> = Vec::new();
        let after = |c: &[u32], first: &HashMap<usize, u32>| {
            first.iter().any(|(&t, &l)| c.get(t).copied().unwrap_or(0) > l)
        };
        for j in i + 1..self.n {
            let Some((s, tj, lj, cj)) = &self.nodes[j].step else { continue };
            if hb_i(cj) {
                continue;
            }
            if !after(cj, &first_in_v) {
                initials.push(s.tid);
            }
            first_in_v.entry(*tj).or_insert(*lj);
        }
        if !after(ce, &first_in_v) {
            initials.push(e.tid);
        }
        let node = &mut self.nodes[i];
        if initials.iter().any(|t| node.backtrack.contains(t)) {
            return;
        }
        let asleep = |t: &Tid| node.sleep.iter().any(|(q, _)| q == t);
        let pick = if initials.contains(&e.tid) && !asleep(&e.tid) {
            Some(e.tid)
        } else {
            initials.iter().copied().find(|t| !asleep(t))
        };
        if let Some(q) = pick {
            node.backtrack.insert(q);
            self.reversals += 1;
        }
    }
}

impl Node {
    /// Threads still to explore from here.
    fn candidates(&self) -> impl Iterator<Item = Tid> + '_ {
        self.backtrack.iter().copied().filter(move |t| {
            !self.done.contains(t) && !self.blocked.contains(t) && !self.sleep.iter().any(|(q, _)| q == t)
        })
    }
}

impl Driver for Dpor {
    fn pick(&mut self, runnable: &[Tid]) -> Result<Tid, Stop> {
        if self.n < self.target {
            let t = self.nodes[self.n].picks.get(self.rpos).copied();
            self.rpos += 1;
            let Some(t) = t.filter(|t| runnable.contains(t)) else {
                self.diverged
                    .get_or_insert_with(|| format!("replayed pick at node {} is not runnable", self.n));
                return Err(Stop::Explored);
            };
            self.picks.push(t);
            return Ok(t);
        }
        if self.n == self.nodes.len() {
            let sleep = std::mem::take(&mut self.next_sleep);
            let mut node = Node { sleep, fresh: true, runnable: runnable.to_vec(), ..Node::default() };
            if self.naive {
                node.backtrack.extend(runnable.iter().copied());
            }
            self.nodes.push(node);
        }
        let node = &mut self.nodes[self.n];
        // A thread to explore that is parked here cannot move here (see `Dpor::reverse`).
        let parked: Vec<Tid> = node.candidates().filter(|t| !runnable.contains(t)).collect();
        node.blocked.extend(parked);
        let mut pick = node.candidates().next();
        if pick.is_none() && node.fresh && node.step.is_none() {
            pick = runnable.iter().copied().find(|t| {
                !node.blocked.contains(t) && !node.done.contains(t) && !node.sleep.iter().any(|(q, _)| q == t)
            });
        }
        let Some(t) = pick else {
            self.stopped = true;
            return Err(Stop::Explored);
        };
        node.backtrack.insert(t);
        node.done.insert(t);
        node.picks.push(t);
        self.picks.push(t);
        Ok(t)
    }

    fn ran(&mut self, tid: Tid, evs: Vec<Ev>, parked: bool) {
        let Some(node) = self.nodes.get_mut(self.n) else { return };
        if evs.is_empty() && parked {
            // Parked without touching shared state: no step; the thread cannot move here.
            node.blocked.insert(tid);
            return;
        }
        let ti = self.dense(tid);
        let li = self.counts[ti];
        let step = Step::new(tid, evs, li == 0);
        self.counts[ti] += 1;
        if self.n < self.target {
            let recorded = self.nodes[self.n].step.as_ref().map(|s| &s.0);
            if recorded != Some(&step) {
                let was = recorded.map_or("none".to_string(), |r| format!("{} {:?}", r.tid, r.evs));
                let msg = format!(
                    "the replayed step at node {} differs: was {was}, now {} {:?}",
                    self.n, step.tid, step.evs
                );
                self.diverged.get_or_insert(msg);
            }
            self.n += 1;
            self.rpos = 0;
            return;
        }
        let (clock, races) = self.clock_and_races(&step, ti, li);
        if !self.naive {
            for i in races {
                self.reverse(i, &step, &clock);
            }
            let node = &mut self.nodes[self.n];
            self.next_sleep = node.sleep.iter().filter(|(_, s)| !s.dependent(&step)).cloned().collect();
            if step.halts {
                // The fault ends the run, so it is dependent with the next step of every
                // other thread, which never ran: each of them goes first in another execution.
                let others: Vec<Tid> = node.runnable.iter().copied().filter(|t| *t != tid).collect();
                node.backtrack.extend(others);
            }
        }
        self.nodes[self.n].step = Some((step, ti, li, clock));
        self.n += 1;
    }
}

impl Dpor {
    /// The Mazurkiewicz trace of the execution just run, as a hash: its steps (thread, index
    /// in the thread, events) and the order of every dependent pair. Two executions get the
    /// same key exactly when they order only independent steps differently (up to hashing).
    pub fn class_key(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let steps: Vec<(&Step, u32)> = self.nodes[..self.n.min(self.nodes.len())]
            .iter()
            .filter_map(|n| n.step.as_ref())
            .map(|s| (&s.0, s.2))
            .collect();
        let mut items: Vec<(Tid, u32, &[Ev])> = steps.iter().map(|(s, l)| (s.tid, *l, &s.evs[..])).collect();
        let mut edges = Vec::new();
        for (i, (a, la)) in steps.iter().enumerate() {
            for (b, lb) in &steps[i + 1..] {
                if a.tid != b.tid && a.dependent(b) {
                    edges.push(((a.tid, *la), (b.tid, *lb)));
                }
            }
        }
        items.sort_unstable();
        edges.sort_unstable();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        items.hash(&mut h);
        edges.hash(&mut h);
        h.finish()
    }

    /// Steps in the execution just run.
    pub fn depth(&self) -> usize {
        self.n
    }
}
