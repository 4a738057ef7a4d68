//! A rank's dispatch queue, run-length encoded over short periods.
//!
//! Guarantees: jobs come out in exactly the order they were pushed; a repeating sequence of
//! up to [`MAX_PERIOD`] jobs is held once with a count, so queued work does not grow with a
//! host loop's iteration count; jobs whose arguments cannot be compared are never folded.

use super::*;

/// A rank's dispatch queue, run-length encoded over short periods: a host loop whose body
/// dispatches the same sequence of up to [`MAX_PERIOD`] jobs N times holds the sequence once
/// with a count, so queued work does not grow with the iteration count.
#[derive(Default)]
pub(super) struct JobQueue<'p> {
    runs: VecDeque<Run<'p>>,
}

/// `jobs`, `count` times over; `pos` is the next job of the current repetition.
struct Run<'p> {
    jobs: Vec<Job<'p>>,
    count: usize,
    pos: usize,
}

/// Longest repeating dispatch sequence the queue folds.
const MAX_PERIOD: usize = 8;

impl<'p> JobQueue<'p> {
    pub(super) fn push_back(&mut self, job: Job<'p>) {
        self.runs.push_back(Run { jobs: vec![job], count: 1, pos: 0 });
        self.fold();
    }

    /// Folds the newest single jobs into a run when they repeat the run before them (one
    /// more repetition) or the same number of single jobs before them (a new run of two).
    fn fold(&mut self) {
        let single = |r: &Run<'_>| r.count == 1 && r.jobs.len() == 1 && r.pos == 0;
        for k in 1..=MAX_PERIOD {
            let n = self.runs.len();
            if n < k || !self.runs.range(n - k..).all(single) {
                return;
            }
            if n > k {
                let prev = &self.runs[n - k - 1];
                if prev.jobs.len() == k
                    && prev.pos == 0
                    && (0..k).all(|j| same_job(&prev.jobs[j], &self.runs[n - k + j].jobs[0]))
                {
                    self.runs.truncate(n - k);
                    if let Some(r) = self.runs.back_mut() {
                        r.count += 1;
                    }
                    return;
                }
            }
            if n >= 2 * k
                && self.runs.range(n - 2 * k..n - k).all(single)
                && (0..k).all(|j| same_job(&self.runs[n - 2 * k + j].jobs[0], &self.runs[n - k + j].jobs[0]))
            {
                self.runs.truncate(n - k);
                let jobs = self.runs.drain(n - 2 * k..).flat_map(|r| r.jobs).collect();
                self.runs.push_back(Run { jobs, count: 2, pos: 0 });
                return;
            }
        }
    }

    pub(super) fn pop_front(&mut self) -> Option<Job<'p>> {
        let run = self.runs.front_mut()?;
        let job = run.jobs[run.pos].clone();
        run.pos += 1;
        if run.pos == run.jobs.len() {
            run.pos = 0;
            run.count -= 1;
            if run.count == 0 {
                self.runs.pop_front();
            }
        }
        Some(job)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}

/// Whether two queued jobs are the same work (same function or op call, equal arguments);
/// conservative: values it cannot compare make them different.
fn same_job(a: &Job<'_>, b: &Job<'_>) -> bool {
    fn same_val(a: &Val, b: &Val) -> bool {
        match (a, b) {
            (Val::Unit, Val::Unit) => true,
            (Val::Int(x), Val::Int(y)) => x == y,
            (Val::Float(x), Val::Float(y)) => x.to_bits() == y.to_bits(),
            (Val::Bool(x), Val::Bool(y)) => x == y,
            (Val::Str(x), Val::Str(y)) => x == y,
            (Val::DType(x), Val::DType(y)) => x == y,
            (Val::Tensor(x), Val::Tensor(y)) => x == y,
            (Val::Ctx { domain: x }, Val::Ctx { domain: y }) => x == y,
            (Val::Alloc(x), Val::Alloc(y)) => x == y,
            (Val::Tuple(x), Val::Tuple(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_val(p, q))
            }
            _ => false,
        }
    }
    let args = |x: &[Val], y: &[Val]| x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_val(p, q));
    match (a, b) {
        (Job::Func { func: f, args: x }, Job::Func { func: g, args: y }) => {
            std::ptr::eq(*f, *g) && args(x, y)
        }
        (
            Job::Collective { f, call, args: x, span },
            Job::Collective { f: f2, call: call2, args: y, span: span2 },
        ) => *f as usize == *f2 as usize && std::ptr::eq(*call, *call2) && span == span2 && args(x, y),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pld_ir::{Function, FunctionKind};

    /// Pops every job, naming each by its function and first argument.
    fn drain(q: &mut JobQueue<'_>) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(job) = q.pop_front() {
            if let Job::Func { func, args } = job {
                out.push(format!("{}{:?}", func.name, args.first().and_then(Val::as_f64)));
            }
        }
        out
    }

    #[test]
    fn repeating_dispatch_sequences_are_held_once_and_replayed_in_order() {
        let (a, b, c) = (
            Function::new("a", FunctionKind::ChipOrch),
            Function::new("b", FunctionKind::ChipOrch),
            Function::new("c", FunctionKind::ChipOrch),
        );
        fn push<'p>(q: &mut JobQueue<'p>, want: &mut Vec<String>, f: &'p Function, x: i64) {
            q.push_back(Job::Func { func: f, args: vec![Val::Int(x)] });
            want.push(format!("{}{:?}", f.name, Some(x as f64)));
        }
        let mut q = JobQueue::default();
        let mut want = Vec::new();
        // c, then (a b) x 100 as a host loop with a prepare and a collective dispatch gives,
        // then a with another argument, then (a b c) x 3. (Folding is greedy: a period whose
        // own jobs repeat back to back, like a a b, is held as (a x 2) b per iteration.)
        push(&mut q, &mut want, &c, 0);
        for _ in 0..100 {
            push(&mut q, &mut want, &a, 1);
            push(&mut q, &mut want, &b, 1);
        }
        push(&mut q, &mut want, &a, 2);
        for _ in 0..3 {
            push(&mut q, &mut want, &a, 1);
            push(&mut q, &mut want, &b, 1);
            push(&mut q, &mut want, &c, 1);
        }
        let held: Vec<(usize, usize)> = q.runs.iter().map(|r| (r.jobs.len(), r.count)).collect();
        assert_eq!(held, [(1, 1), (2, 100), (1, 1), (3, 3)], "c | (a b) x 100 | a2 | (a b c) x 3");
        assert_eq!(drain(&mut q), want);
        assert!(q.is_empty());
    }
}
