//! Value liveness of one function body, so a thread drops each value it binds where the value
//! is read for the last time rather than when the function returns (a kernel's large tiles
//! would otherwise all stay alive together; docs/DECISIONS.md D-sim-35).
//!
//! Guarantees: never early. A value is dropped at a point only if no execution path from
//! there reads it before it is bound again: a value read in a loop body, in a `while`
//! condition or after the loop stays alive across every iteration; a loop's carried values
//! stay alive for the loop's exit; a value read on either branch of an `if` stays alive into
//! that branch; a value bound again (rebinding) is dropped only once its last read before the
//! new binding is done. The analysis is standard backward liveness over the structured
//! blocks, iterated to its fixed point at every loop; the interpreter ([`super::Thread`])
//! applies it at block positions, at block entries and after a loop's head.
//!
//! Beside it, per call statement, the op it calls and that op's simulator semantics, looked up
//! once per analysed function instead of at every execution (a kernel's loop runs its
//! statements thousands of times); a lookup for another op than the recorded one falls back
//! to the registry, so the record can save time but never pick other semantics.

use crate::sem::SemKind;
use pld_ir::{Block, Callee, Expr, Function, OpDef, Program, Stmt, StmtKind, ValueId};
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::sync::{Arc, Mutex};

/// A set of one function's values, as bits (inline up to 128 values: the analysis makes and
/// drops sets at every statement of every fixed-point round).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Set(SmallVec<[u64; 2]>);

impl Set {
    fn new(n: usize) -> Set {
        Set(smallvec::smallvec![0; n.div_ceil(64)])
    }

    fn insert(&mut self, v: ValueId) {
        if let Some(w) = self.0.get_mut(v.index() / 64) {
            *w |= 1 << (v.index() % 64);
        }
    }

    fn contains(&self, v: ValueId) -> bool {
        self.0.get(v.index() / 64).is_some_and(|w| w & (1 << (v.index() % 64)) != 0)
    }

    fn union(mut self, o: &Set) -> Set {
        self.0.iter_mut().zip(&o.0).for_each(|(a, b)| *a |= b);
        self
    }

    fn minus(mut self, o: &Set) -> Set {
        self.0.iter_mut().zip(&o.0).for_each(|(a, b)| *a &= !b);
        self
    }

    fn ids(&self) -> Box<[ValueId]> {
        let mut out = Vec::new();
        for (k, &w) in self.0.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                out.push(ValueId((k * 64 + w.trailing_zeros() as usize) as u32));
                w &= w - 1;
            }
        }
        out.into_boxed_slice()
    }
}

/// What the interpreter drops in one block.
#[derive(Debug, Default)]
struct BlockLive {
    /// Per position `0..=len`: the values to drop on reaching it (position 0: on entering
    /// the block; position `k > 0`: once statement `k - 1` is done).
    at: Vec<Box<[ValueId]>>,
    /// Per statement: the values to drop after a loop's head (bounds and initial values
    /// evaluated, carried values bound), before its first iteration or its exit.
    head: Vec<Box<[ValueId]>>,
    /// Per statement: the values its call reads for the last time, each read once there (the
    /// call may take them instead of a copy).
    last: Vec<Box<[ValueId]>>,
    /// Per statement: the ids of its nested blocks (body; then and else).
    nested: Vec<[u32; 2]>,
    /// Per statement: the op its call calls, with the op's semantics.
    ops: Vec<Option<OpSem>>,
}

/// An op a call statement calls, and its simulator semantics (`None`: it has none).
#[derive(Clone, Copy)]
struct OpSem {
    def: &'static OpDef,
    kind: Option<SemKind>,
}

impl std::fmt::Debug for OpSem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.def.name, if self.kind.is_some() { "simulated" } else { "no semantics" })
    }
}

impl OpSem {
    fn of(s: &Stmt) -> Option<OpSem> {
        match &s.call()?.callee {
            Callee::Op(def) => Some(OpSem { def, kind: crate::sem::of(def) }),
            Callee::Func(_) => None,
        }
    }
}

/// The liveness of one function: per block (each numbered before the blocks nested in it, the
/// body is block 0) what to drop where.
#[derive(Debug, Default)]
pub(super) struct Live {
    blocks: Vec<BlockLive>,
}

const NONE: &[ValueId] = &[];

/// The liveness of every function a run activates, each looked up on its first activation and
/// shared by every later one, on every rank and worker (a collective's kernel is activated
/// once per rank and call: recomputing it each time was half of a small run's time).
///
/// Keyed by the function's address: a run's functions are borrowed from its program for the
/// whole run, so no address is freed and reused while the cache lives. A function first met
/// in this run is looked up in the process's `Seen` cache before it is analysed.
///
/// It also keeps, per launched function, which parameter each result is
/// ([`Program::returned_param`]: a walk of the body and its callees, once per launch before).
#[derive(Debug, Default)]
pub struct Lives {
    live: Mutex<FxHashMap<usize, Arc<Live>>>,
    returned: Mutex<FxHashMap<usize, Arc<[Option<usize>]>>>,
}

impl Lives {
    /// The liveness of `f`'s body, looked up once per cache.
    pub(super) fn of(&self, f: &Function) -> Arc<Live> {
        once_per_run(&self.live, f, || SEEN.of(f))
    }

    /// For each result of `f` (a function of `program`, the run's program), the parameter it
    /// is, looked up once per cache.
    pub(super) fn returned(&self, program: &Program, f: &Function) -> Arc<[Option<usize>]> {
        once_per_run(&self.returned, f, || {
            (0..Program::result_count(f)).map(|k| program.returned_param(f, k)).collect()
        })
    }
}

/// `map`'s entry for `f`'s address, made by `make` if it has none. Made outside the lock: a
/// second worker making the same entry meanwhile gets an equal one, and the first inserted
/// stays.
fn once_per_run<T: ?Sized>(
    map: &Mutex<FxHashMap<usize, Arc<T>>>,
    f: &Function,
    make: impl FnOnce() -> Arc<T>,
) -> Arc<T> {
    let key = std::ptr::from_ref(f) as usize;
    if let Some(v) = lock(map).get(&key) {
        return Arc::clone(v);
    }
    let v = make();
    Arc::clone(lock(map).entry(key).or_insert(v))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The functions whose liveness this process computed lately, across runs: a program run
/// many times (a benchmark's best of N, `pld verify` and `explore` trying schedule after
/// schedule, a test suite) is analysed once. An entry holds a copy of its function and is
/// used only for a function equal to it (the whole body, every value and span compared; the
/// name and value count pick the candidates), so an edited function, or another program's
/// function of the same name, is analysed afresh: the cache can cost a comparison, never a
/// wrong drop.
#[derive(Debug, Default)]
struct Seen(Mutex<Vec<(Function, Arc<Live>)>>);

/// Functions [`Seen`] holds at most (the oldest goes first).
const SEEN_MAX: usize = 64;

static SEEN: std::sync::LazyLock<Seen> = std::sync::LazyLock::new(Seen::default);

impl Seen {
    fn of(&self, f: &Function) -> Arc<Live> {
        let alike = |g: &Function| g.name == f.name && g.values.len() == f.values.len() && g == f;
        if let Some((_, l)) = lock(&self.0).iter().find(|(g, _)| alike(g)) {
            return Arc::clone(l);
        }
        let live = Arc::new(Live::of(f));
        let mut seen = lock(&self.0);
        if seen.len() >= SEEN_MAX {
            seen.remove(0);
        }
        seen.push((f.clone(), Arc::clone(&live)));
        live
    }
}

impl Live {
    /// The liveness of `f`'s body.
    pub(super) fn of(f: &Function) -> Live {
        let n = f.values.len();
        let mut a = Analysis { n, live: Live::default() };
        let end = Set::new(n);
        let mut params = Set::new(n);
        f.params.iter().for_each(|p| params.insert(p.value));
        a.block(&f.body, &end, &[], Some(params));
        a.live
    }

    /// The values to drop on reaching position `pos` of block `block`.
    pub(super) fn at(&self, block: u32, pos: usize) -> &[ValueId] {
        self.blocks.get(block as usize).and_then(|b| b.at.get(pos)).map_or(NONE, |v| v)
    }

    /// The values to drop after the head of the loop at `pos` of `block`.
    pub(super) fn head(&self, block: u32, pos: usize) -> &[ValueId] {
        self.blocks.get(block as usize).and_then(|b| b.head.get(pos)).map_or(NONE, |v| v)
    }

    /// The values the call statement at `pos` of `block` reads for the last time.
    pub(super) fn last(&self, block: u32, pos: usize) -> &[ValueId] {
        self.blocks.get(block as usize).and_then(|b| b.last.get(pos)).map_or(NONE, |v| v)
    }

    /// The semantics of op `def`, called by the statement at `pos` of `block`: recorded by the
    /// analysis, or looked up when the statement's recorded op is another.
    pub(super) fn op_sem(&self, block: u32, pos: usize, def: &OpDef) -> Option<SemKind> {
        match self.blocks.get(block as usize).and_then(|b| b.ops.get(pos)).copied().flatten() {
            Some(o) if std::ptr::eq(o.def, def) => o.kind,
            _ => crate::sem::of(def),
        }
    }

    /// Nested block `k` (0: body or then, 1: else) of the statement at `pos` of `block`.
    pub(super) fn nested(&self, block: u32, pos: usize, k: usize) -> u32 {
        self.blocks.get(block as usize).and_then(|b| b.nested.get(pos)).map_or(u32::MAX, |n| n[k])
    }
}

struct Analysis {
    n: usize,
    live: Live,
}

impl Analysis {
    fn set(&self, vs: impl IntoIterator<Item = ValueId>) -> Set {
        let mut s = Set::new(self.n);
        vs.into_iter().for_each(|v| s.insert(v));
        s
    }

    fn uses(&self, es: &[&Expr]) -> Set {
        self.set(es.iter().flat_map(|e| e.uses()))
    }

    /// Values live on entering `b`, given those live at its end (`end`); `owner`: what a
    /// yield directly in it binds. With `record`, numbers the block, records its drops (and
    /// its nested blocks') and returns its id; `record` holds the values bound on entering
    /// it that it may drop at once (a function's parameters).
    fn block(&mut self, b: &Block, end: &Set, owner: &[ValueId], record: Option<Set>) -> (Set, u32) {
        let Some(entering) = record else {
            let mut live = end.clone();
            for s in b.stmts.iter().rev() {
                live = self.stmt(s, &live, owner, false).0;
            }
            return (live, u32::MAX);
        };
        let id = self.live.blocks.len() as u32;
        self.live.blocks.push(BlockLive::default());
        // One backward pass computes what is live before each statement and records it (a
        // loop's fixed point is computed once per pass: a second pass to record would redo
        // every nested loop's).
        let n = b.stmts.len();
        let mut live = vec![end.clone(); n + 1];
        let mut recs = Vec::with_capacity(n);
        for (k, s) in b.stmts.iter().enumerate().rev() {
            let (before, rec) = self.stmt(s, &live[k + 1], owner, true);
            live[k] = before;
            recs.push(rec.unwrap_or_default());
        }
        recs.reverse();
        let mut bl = BlockLive { at: vec![entering.minus(&live[0]).ids()], ..BlockLive::default() };
        for (k, (s, rec)) in b.stmts.iter().zip(recs).enumerate() {
            let done = live[k].clone().union(&rec.defs);
            bl.at.push(done.minus(&live[k + 1]).ids());
            bl.head.push(rec.head);
            bl.last.push(self.last_reads(s, &live[k + 1]));
            bl.nested.push(rec.nested);
            bl.ops.push(OpSem::of(s));
        }
        self.live.blocks[id as usize] = bl;
        (live.swap_remove(0), id)
    }

    /// The values a call statement reads for the last time (dead after it, or bound again
    /// by it), each read exactly once in it.
    fn last_reads(&self, s: &Stmt, after: &Set) -> Box<[ValueId]> {
        if s.call().is_none() {
            return Box::new([]);
        }
        let mut seen = Vec::new();
        s.for_each_expr(&mut |e| seen.extend(e.uses()));
        let defs = self.set(s.defs());
        let once = |v: &ValueId| seen.iter().filter(|u| *u == v).count() == 1;
        let dead = |v: &ValueId| !after.contains(*v) || defs.contains(*v);
        seen.iter().copied().filter(|v| once(v) && dead(v)).collect()
    }

    /// Values live before `s` given those live after it (`out`). With `rec`, also what it
    /// records: every value it may bind, the values to drop after its head and its nested
    /// blocks' ids.
    fn stmt(&mut self, s: &Stmt, out: &Set, owner: &[ValueId], rec: bool) -> (Set, Option<Rec>) {
        let mut r = Rec { defs: self.set(s.defs()), ..Rec::default() };
        let live = match &s.kind {
            StmtKind::Assign { targets, value } => {
                self.uses(&[value]).union(&out.clone().minus(&self.set(targets.iter().copied())))
            }
            StmtKind::Eval(value) => self.uses(&[value]).union(out),
            StmtKind::Return(vals) => self.uses(&vals.iter().collect::<Vec<_>>()),
            StmtKind::Yield(vals) => {
                r.defs = self.set(owner.iter().copied());
                self.uses(&vals.iter().collect::<Vec<_>>()).union(&out.clone().minus(&r.defs))
            }
            StmtKind::For { var, start, stop, step, iter_args, body, results, .. } => {
                let carried: Vec<ValueId> = iter_args.iter().map(|a| a.value).collect();
                let exit =
                    out.clone().minus(&self.set(results.iter().copied())).union(&self.set(carried.clone()));
                let var = self.set([*var]);
                let l = self.fixed_point(&exit, |a, l| a.block(body, l, &carried, None).0.minus(&var));
                let mut heads: Vec<&Expr> = vec![start, stop, step];
                heads.extend(iter_args.iter().map(|a| &a.init));
                if rec {
                    let (_, id) = self.block(body, &l, &carried, Some(l.clone().union(&var)));
                    r.nested = [id, u32::MAX];
                    r.defs = r.defs.union(&self.nested_defs(body));
                    r.head = self.uses(&heads).union(&self.set(carried.clone())).minus(&l).ids();
                }
                self.uses(&heads).union(&l.minus(&self.set(carried)))
            }
            StmtKind::While { iter_args, cond, body, results } => {
                let carried: Vec<ValueId> = iter_args.iter().map(|a| a.value).collect();
                let exit =
                    out.clone().minus(&self.set(results.iter().copied())).union(&self.set(carried.clone()));
                let exit = exit.union(&self.uses(&[cond]));
                let l = self.fixed_point(&exit, |a, l| a.block(body, l, &carried, None).0);
                let inits: Vec<&Expr> = iter_args.iter().map(|a| &a.init).collect();
                if rec {
                    let (_, id) = self.block(body, &l, &carried, Some(l.clone()));
                    r.nested = [id, u32::MAX];
                    r.defs = r.defs.union(&self.nested_defs(body));
                    r.head = self.uses(&inits).union(&self.set(carried.clone())).minus(&l).ids();
                }
                self.uses(&inits).union(&l.minus(&self.set(carried)))
            }
            StmtKind::If { cond, then_body, else_body, results } => {
                let t = self.block(then_body, out, results, None).0;
                let e = self.block(else_body, out, results, None).0;
                let before = self.uses(&[cond]).union(&t).union(&e);
                if rec {
                    let (_, ti) = self.block(then_body, out, results, Some(before.clone()));
                    let (_, ei) = self.block(else_body, out, results, Some(before.clone()));
                    r.nested = [ti, ei];
                    r.defs = r.defs.union(&self.nested_defs(then_body)).union(&self.nested_defs(else_body));
                }
                before
            }
            StmtKind::Scope { args, body, .. } => {
                let bound = self.set(s.defs());
                let inside = self.block(body, out, owner, None).0;
                let before = self.uses(&args.iter().collect::<Vec<_>>()).union(&inside.minus(&bound));
                if rec {
                    let (_, id) = self.block(body, out, owner, Some(before.clone().union(&bound)));
                    r.nested = [id, u32::MAX];
                    r.defs = r.defs.union(&self.nested_defs(body));
                }
                before
            }
        };
        (live, rec.then_some(r))
    }

    /// The least `l ⊇ exit` with `l = exit ∪ body(l)`: what is live at a loop body's end.
    fn fixed_point(&mut self, exit: &Set, mut body: impl FnMut(&mut Analysis, &Set) -> Set) -> Set {
        let mut l = exit.clone();
        loop {
            let next = body(self, &l).union(exit);
            if next == l {
                return l;
            }
            l = next;
        }
    }

    /// Every value a statement nested in `b` binds.
    fn nested_defs(&self, b: &Block) -> Set {
        let mut s = Set::new(self.n);
        b.walk(&mut |st| st.defs().into_iter().for_each(|v| s.insert(v)));
        s
    }
}

/// What [`Analysis::stmt`] records about one statement.
struct Rec {
    defs: Set,
    head: Box<[ValueId]>,
    nested: [u32; 2],
}

impl Default for Rec {
    fn default() -> Rec {
        Rec { defs: Set(SmallVec::new()), head: Box::new([]), nested: [u32::MAX; 2] }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(body: &str) -> Function {
        let src = format!(
            r#"
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 4], pl.FP32], y: pl.Out[pl.Tensor[[1, 4], pl.FP32]], n: pl.Scalar[pl.INDEX]):
{body}"#
        );
        let _ = pld_ops::registry();
        let prog = pld_frontend::parse_str(&src).expect("parses");
        prog.function("k").expect("kernel k").clone()
    }

    /// The names of the values dropped at position `pos` of block `block`.
    fn dropped(f: &Function, live: &Live, block: u32, pos: usize) -> Vec<String> {
        let mut v: Vec<String> = live.at(block, pos).iter().map(|v| f.values.name(*v).to_string()).collect();
        v.sort();
        v
    }

    /// Every position of `block` (entry `0` to end `len`) where `name` is dropped.
    fn where_dropped(f: &Function, live: &Live, block: u32, len: usize, name: &str) -> Vec<usize> {
        (0..=len).filter(|&p| dropped(f, live, block, p).iter().any(|n| n == name)).collect()
    }

    #[test]
    fn a_cache_computes_each_function_once_and_keeps_functions_apart() {
        let f = kernel("        t = pl.load(x, [0, 0], [1, 4])\n        pl.store(t, [0, 0], y)\n");
        let g = kernel("        t = pl.load(x, [0, 0], [1, 4])\n        u = pl.add(t, t)\n        pl.store(u, [0, 0], y)\n");
        let lives = Lives::default();
        let (a, b, c) = (lives.of(&f), lives.of(&f), lives.of(&g));
        assert!(Arc::ptr_eq(&a, &b), "the second activation reuses the first's analysis");
        assert!(!Arc::ptr_eq(&a, &c), "another function has its own");
        assert_eq!(dropped(&g, &c, 0, 1), dropped(&g, &Live::of(&g), 0, 1), "cached equals fresh");
    }

    #[test]
    fn a_later_run_reuses_an_equal_functions_analysis_and_never_an_edited_ones() {
        let f = kernel("        t = pl.load(x, [0, 0], [1, 4])\n        u = pl.add(t, t)\n        pl.store(u, [0, 0], y)\n");
        let first = Lives::default().of(&f);
        // Another run, another copy of the program (another address): the same analysis.
        let mut g = f.clone();
        assert!(Arc::ptr_eq(&first, &Lives::default().of(&g)), "an equal function is not analysed again");
        // The same address with another body (a program edited between runs): analysed afresh.
        assert_eq!(dropped(&g, &first, 0, 2), vec!["t"], "u is stored after the add");
        g.body.stmts.remove(2);
        let edited = Lives::default().of(&g);
        assert!(!Arc::ptr_eq(&first, &edited), "an edited function is analysed afresh");
        assert_eq!(dropped(&g, &edited, 0, 2), vec!["t", "u"], "u, never read now, goes right after the add");
    }

    #[test]
    fn a_value_read_in_a_loop_body_lives_across_every_iteration_and_goes_after_the_loop() {
        let f = kernel(
            "        t = pl.load(x, [0, 0], [1, 4])
        for i, (acc,) in pl.range(3, init_values=(t,)):
            u = pl.add(acc, t)
            acc2 = pl.yield_(u)
        pl.store(acc2, [0, 0], y)
",
        );
        let live = Live::of(&f);
        let body = live.nested(0, 1, 0);
        assert_eq!(
            where_dropped(&f, &live, body, 2, "t"),
            Vec::<usize>::new(),
            "t is read by every iteration"
        );
        assert_eq!(where_dropped(&f, &live, 0, 3, "t"), vec![2], "t goes once the loop is done");
        assert_eq!(
            where_dropped(&f, &live, body, 2, "acc"),
            vec![1],
            "the carried value goes after its last read"
        );
        assert_eq!(
            where_dropped(&f, &live, body, 2, "u"),
            vec![2],
            "the yielded value is the next carried one"
        );
        assert_eq!(dropped(&f, &live, 0, 1), vec!["x"], "the input goes after the load");
        assert_eq!(dropped(&f, &live, 0, 3), vec!["acc2", "y"]);
        let last: Vec<&str> = live.last(body, 0).iter().map(|v| f.values.name(*v)).collect();
        assert_eq!(last, vec!["acc"], "the add may take acc, never t");
    }

    #[test]
    fn a_while_condition_keeps_what_it_reads_alive() {
        let f = kernel(
            "        t = pl.load(x, [0, 0], [1, 4])
        lim = n + 1
        for (c, acc) in pl.while_(init_values=(0, t)):
            pl.cond(c < lim)
            s = pl.add(acc, t)
            c2, acc2 = pl.yield_(c + 1, s)
        pl.store(acc2, [0, 0], y)
",
        );
        let live = Live::of(&f);
        let body = live.nested(0, 2, 0);
        assert!(where_dropped(&f, &live, body, 2, "lim").is_empty(), "lim is read by every condition");
        assert!(where_dropped(&f, &live, body, 2, "t").is_empty());
        assert_eq!(where_dropped(&f, &live, 0, 4, "lim"), vec![3]);
        assert_eq!(where_dropped(&f, &live, body, 2, "acc"), vec![1]);
    }

    #[test]
    fn a_value_read_on_one_branch_stays_until_that_branch_reads_it() {
        let f = kernel(
            "        t = pl.load(x, [0, 0], [1, 4])
        w = pl.load(x, [0, 0], [1, 4])
        z = pl.load(x, [0, 0], [1, 4])
        if n > 0:
            a = pl.add(t, w)
            r = pl.yield_(a)
        else:
            b = pl.mul(w, z)
            r = pl.yield_(b)
        s = pl.add(r, w)
        pl.store(s, [0, 0], y)
",
        );
        let live = Live::of(&f);
        let (then, other) = (live.nested(0, 3, 0), live.nested(0, 3, 1));
        assert!(where_dropped(&f, &live, then, 2, "w").is_empty(), "w is read after the if");
        assert!(where_dropped(&f, &live, other, 2, "w").is_empty());
        assert_eq!(
            where_dropped(&f, &live, then, 2, "t"),
            vec![1],
            "t goes after its read on the then branch"
        );
        assert_eq!(where_dropped(&f, &live, other, 2, "t"), vec![0], "and on entering the else branch");
        assert_eq!(
            where_dropped(&f, &live, other, 2, "z"),
            vec![1],
            "z goes after its read on the else branch"
        );
        assert_eq!(where_dropped(&f, &live, then, 2, "z"), vec![0], "and on entering the then branch");
        // Where the if ends, what a branch dropped is dropped again (harmlessly); never before.
        assert_eq!(where_dropped(&f, &live, 0, 6, "t"), vec![4]);
        assert_eq!(where_dropped(&f, &live, 0, 6, "z"), vec![4]);
        assert_eq!(where_dropped(&f, &live, 0, 6, "w"), vec![5]);
        assert_eq!(where_dropped(&f, &live, 0, 6, "r"), vec![5]);
    }

    #[test]
    fn a_rebound_name_drops_each_binding_after_its_own_last_read() {
        let f = kernel(
            "        t = pl.load(x, [0, 0], [1, 4])
        t = pl.add(t, t)
        u = pl.mul(t, t)
        t = pl.add(u, t)
        pl.store(t, [0, 0], y)
",
        );
        let live = Live::of(&f);
        let stmts = &f.body.stmts;
        let reads = |k: usize| -> Vec<ValueId> {
            let mut seen = Vec::new();
            stmts[k].for_each_expr(&mut |e| seen.extend(e.uses()));
            seen
        };
        // Nothing dropped at a position is read later before being bound again ...
        for k in 0..=stmts.len() {
            for &v in live.at(0, k) {
                for (later, st) in stmts.iter().enumerate().skip(k) {
                    assert!(!reads(later).contains(&v), "{v} dropped at {k} but read by statement {later}");
                    if st.defs().contains(&v) {
                        break;
                    }
                }
            }
        }
        // ... and every binding of `t` goes right after the statement that reads it last.
        let t: Vec<ValueId> =
            (0..f.values.len() as u32).map(ValueId).filter(|v| f.values.name(*v) == "t").collect();
        assert!(t.len() >= 3, "three bindings of t: {t:?}");
        for v in t {
            let last = (0..stmts.len()).filter(|&k| reads(k).contains(&v)).max().expect("t is read");
            assert!(live.at(0, last + 1).contains(&v), "{v} is dropped once statement {last} is done");
        }
    }

    #[test]
    fn a_call_statements_semantics_are_recorded_and_never_stand_for_another_op() {
        let f = kernel(
            "        t = pl.load(x, [0, 0], [1, 4])\n        pl.store(t, [0, 0], y)\n        return y\n",
        );
        let live = Live::of(&f);
        let op = |k: usize| match &f.body.stmts[k].call().expect("a call").callee {
            Callee::Op(def) => *def,
            Callee::Func(_) => panic!("an op call"),
        };
        let (load, store) = (op(0), op(1));
        assert_eq!(live.blocks[0].ops[0].map(|o| o.def.name), Some(load.name));
        assert!(live.blocks[0].ops[2].is_none(), "a return calls nothing");
        let addr = |k: Option<SemKind>| match k {
            Some(SemKind::Op(f)) => f as usize,
            Some(SemKind::Owning(f)) => f as usize,
            Some(SemKind::Collective { f, .. }) => f as usize,
            Some(SemKind::Noop) => 1,
            None => 0,
        };
        assert_ne!(addr(crate::sem::of(load)), addr(crate::sem::of(store)));
        assert_eq!(addr(live.op_sem(0, 0, load)), addr(crate::sem::of(load)));
        // Asked about the store at the load's position, it answers for the store.
        assert_eq!(addr(live.op_sem(0, 0, store)), addr(crate::sem::of(store)));
        assert_eq!(addr(live.op_sem(7, 0, store)), addr(crate::sem::of(store)), "unknown position");
    }
}
