//! Unit tests of the simulated world.

use super::*;
use crate::clock::SHARE_FROM;

#[test]
fn the_host_orchestrators_traffic_is_its_own() {
    // The host runs as rank usize::MAX; its host-tensor accesses count under that rank,
    // apart from the ranks' traffic under the same op.
    let mut w = World::new(2);
    let buf = w.host_buffer(vec![0; 16]);
    let v = TRef {
        mem: Mem::Host(buf),
        owner: usize::MAX,
        base: 0,
        shape: vec![4].into(),
        strides: vec![1].into(),
        dtype: DataType::FP32,
    };
    w.read(&Access::of(usize::MAX, &v, None, &[0], &[4], "tensor.read")).expect("host read");
    w.read(&Access::of(1, &v, None, &[1], &[2], "tensor.read")).expect("rank read");
    w.flush_traffic();
    let op = "tensor.read".to_string();
    assert_eq!(w.tally.stats.local_bytes.get(&(usize::MAX, op.clone())), Some(&16));
    assert_eq!(w.tally.stats.local_bytes.get(&(1, op)), Some(&8));
    assert_eq!(w.tally.stats.local_bytes.len(), 2);
}

#[test]
fn a_new_persistent_call_drops_the_last_calls_pending_traffic() {
    // A call that faulted before its end-of-run flush leaves counters pending.
    let mut w = World::new(2);
    w.count(1, 0, false, 8, 16);
    w.count(1, 0, true, 16, 32);
    w.next_call(false);
    w.flush_traffic();
    assert!(
        w.tally.stats.local_bytes.is_empty() && w.tally.stats.remote_bytes.is_empty(),
        "{:?}",
        w.tally.stats
    );
    assert!(w.tally.stats.rw_bytes.is_empty(), "{:?}", w.tally.stats);
}

#[test]
fn arenas_are_garbage_outside_zeroed_ranges() {
    // Unsorted, overlapping, and one range past the end.
    let zeroed = [(40, 64), (8, 16), (12, 20), (90, 200)];
    let one = arenas(3, 100, &zeroed);
    assert_eq!(one.len(), 3);
    for a in &one {
        assert_eq!(a.len(), 100);
        for (i, &b) in a.iter().enumerate() {
            let zero = zeroed.iter().any(|&(lo, hi)| (lo..hi).contains(&i));
            assert_eq!(b, if zero { 0 } else { GARBAGE }, "byte {i}");
        }
    }
    assert!(arenas(0, 100, &zeroed).is_empty());
}

#[test]
fn a_mapped_arena_is_garbage_outside_zeroed_ranges_and_zero_inside() {
    // Large enough for its own mapping, whose zero ranges are faulted in, not written.
    let size = crate::arena::HUGE_MIN + 10_000;
    let zeroed = [(4096 * 3 + 5, size - 7000), (100, 4096), (size - 10, size + 50)];
    let made = arenas(1, size, &zeroed);
    let a = &made[0];
    assert_eq!(a.len(), size);
    let zero = |i: usize| zeroed.iter().any(|&(lo, hi)| (lo..hi).contains(&i));
    let wrong = (0..size).find(|&i| a[i] != if zero(i) { 0 } else { GARBAGE });
    assert_eq!(wrong, None, "mapped: {}", a.is_mapped());
}

fn world2() -> (World, TRef, TRef) {
    world_n(2)
}

/// `n` ranks in one domain: a 10-element FP32 `data` buffer and a 2-cell `signal`.
fn world_n(n: usize) -> (World, TRef, TRef) {
    world_with(n, 10)
}

/// `n` ranks in one domain: an `elems`-element FP32 `data` buffer (a `[1, elems]` view) and
/// a zeroed 2-cell INT32 `signal` (a `[2, 1]` view).
fn world_with(n: usize, elems: i64) -> (World, TRef, TRef) {
    let mut w = World::new(n);
    let d = w.add_domain((0..n).collect());
    let a = w.alloc(d, "data", elems as u64 * 4);
    let s = w.alloc(d, "signal", 2 * 4);
    w.shared.allocs[s].zeroed = true;
    w.finalize().expect("finalize");
    let view = |alloc: usize, shape: Vec<i64>, dtype: DataType, w: &World| TRef {
        mem: Mem::Window { domain: d, alloc },
        owner: 0,
        base: w.shared.allocs[alloc].offset,
        strides: TRef::packed_strides(&shape),
        shape: shape.into(),
        dtype,
    };
    let dv = view(a, vec![1, elems], DataType::FP32, &w);
    let sv = view(s, vec![2, 1], DataType::INT32, &w);
    (w, dv, sv)
}

#[test]
fn carving_contexts_and_translation() {
    let (w, dv, sv) = world2();
    assert_eq!(w.shared.allocs[0].offset, 0);
    assert_eq!(w.shared.allocs[1].offset, 64, "40 bytes round up to 64");
    let c0 = &w.shared.domains[0].ctx[0];
    let c1 = &w.shared.domains[0].ctx[1];
    assert_eq!((c0.rank_id, c1.rank_id, c0.rank_num), (0, 1, 2));
    assert_ne!(c0.windows_in[1], c1.windows_in[1], "each rank maps the windows at its own addresses");
    let r = w.resolve(0, &dv, Some(1), 8, Span::DUMMY, "t").expect("resolve");
    assert_eq!((r.owner, r.offset), (1, 8));
    // Garbage fill for the float buffer, zero for the signal.
    assert!(read(&w.shared.domains[0].wins[1])[..40].iter().all(|&b| b == GARBAGE));
    let cell = w.cell_addr(0, &sv, Some(1), &[1, 0], Span::DUMMY, "t").expect("cell");
    assert_eq!(w.cell_value(cell), 0);
}

#[test]
fn bounds_and_peers() {
    let (mut w, dv, _) = world2();
    let e = w.resolve(0, &dv, Some(2), 0, Span::DUMMY, "t").expect_err("peer 2");
    assert_eq!(e.kind, ReportKind::PeerOutOfRange);
    let e = w.read(&Access::of(0, &dv, Some(1), &[0, 8], &[1, 4], "t")).expect_err("past the view");
    assert_eq!(e.kind, ReportKind::OutOfBounds);
    // A view whose base was moved past its buffer is caught at the address level.
    let shifted = TRef { base: dv.base + 40, ..dv.clone() };
    let e = w
        .write(&Access::of(0, &shifted, Some(1), &[0, 0], &[1, 2], "t"), &[1.0, 2.0], false)
        .expect_err("outside");
    assert_eq!(e.kind, ReportKind::OutOfBounds);
    assert!(e.message.contains("outside buffer 'data'"), "{}", e.message);
}

#[test]
fn read_written_bytes_count_both_sides_of_each_tile_operation() {
    let (mut w, dv, _) = world2();
    let a = |op| Access::of(0, &dv, None, &[0, 0], &[1, 4], op);
    w.write(&a("store"), &[1.0, 2.0, 3.0, 4.0], false).expect("store");
    w.read(&a("load")).expect("load");
    let mut acc = vec![0u8; 4 * 4];
    let combine = Data::ReadReduce { acc: &mut acc, acc_dt: DataType::FP32, rop: ReduceOp::Sum };
    w.access(&a("combine"), combine).expect("combine");
    w.write(&a("atomic"), &[1.0; 4], true).expect("atomic");
    w.flush_traffic();
    let rw = |op: &str| w.tally.stats.rw_bytes.get(&(0, op.to_string())).copied();
    // 16 window bytes each: a copy counts them twice (window + tile); the combine reads
    // them and reads and writes its 4 accumulators; the atomic reads its 4 operands and
    // reads and writes the window.
    assert_eq!(rw("store"), Some(32));
    assert_eq!(rw("load"), Some(32));
    assert_eq!(rw("combine"), Some(16 + 2 * 16));
    assert_eq!(rw("atomic"), Some(16 + 32));
    assert_eq!(w.tally.stats.local_bytes.values().sum::<u64>(), 4 * 16, "the memory side alone");
}

#[test]
fn races_need_a_notify_wait_edge() {
    let (mut w, dv, _) = world2();
    w.write(&Access::of(0, &dv, None, &[0, 0], &[1, 4], "store"), &[1.0, 2.0, 3.0, 4.0], false)
        .expect("write");
    let mut r1 = dv.clone();
    r1.owner = 1;
    let e = w.read(&Access::of(1, &r1, Some(0), &[0, 0], &[1, 4], "remote_load")).expect_err("race");
    assert_eq!(e.kind, ReportKind::Race);
    // Release by rank 0 into a cell, acquire by rank 1: ordered.
    let (mut w, dv, _) = world2();
    w.write(&Access::of(0, &dv, None, &[0, 0], &[1, 4], "store"), &[1.0, 2.0, 3.0, 4.0], false)
        .expect("write");
    w.release_into(0, (0, 1, 64));
    w.acquire_from(1, (0, 1, 64));
    let v = w.read(&Access::of(1, &r1, Some(0), &[0, 0], &[1, 4], "remote_load")).expect("ordered");
    assert_eq!(v, vec![1.0, 2.0, 3.0, 4.0]);
    // Atomic adds from two ranks commute.
    let (mut w, dv, _) = world2();
    w.write(&Access::of(0, &dv, None, &[0, 0], &[1, 2], "store"), &[0.0, 0.0], false).expect("init");
    w.release_into(0, (0, 1, 64));
    w.acquire_from(1, (0, 1, 64));
    w.write(&Access::of(0, &dv, None, &[0, 0], &[1, 2], "put"), &[1.0, 1.0], true).expect("atomic 0");
    w.write(&Access::of(1, &r1, Some(0), &[0, 0], &[1, 2], "put"), &[2.0, 2.0], true).expect("atomic 1");
    assert_eq!(
        w.read(&Access::of(0, &dv, None, &[0, 0], &[1, 2], "load")).ok(),
        None,
        "plain read vs unordered atomic races"
    );
}
#[test]
fn notifies_in_a_row_order_what_came_before_them_and_not_what_came_after() {
    // Both clock representations: joined in place (few ranks) and shared snapshots.
    for n in [2, SHARE_FROM + 2] {
        let store = |w: &mut World, dv: &TRef, vals: &[f64]| {
            w.write(&Access::of(0, dv, None, &[0, 0], &[1, 2], "store"), vals, false)
        };
        let load = |w: &mut World, dv: &TRef| {
            let r1 = TRef { owner: 1, ..dv.clone() };
            w.read(&Access::of(1, &r1, Some(0), &[0, 0], &[1, 2], "remote_load"))
        };
        // Written before both notifies: ordered for whoever acquires either cell.
        let (mut w, dv, _) = world_n(n);
        store(&mut w, &dv, &[1.0, 2.0]).expect("write");
        w.release_into(0, (0, 1, 64));
        w.release_into(0, (0, 1, 68));
        w.acquire_from(1, (0, 1, 68));
        assert_eq!(load(&mut w, &dv).expect("ordered"), vec![1.0, 2.0], "P={n}");
        // Written after the notifies: the pending clock advance makes it unordered with
        // the reader, though rank 0 neither notified nor waited in between.
        let (mut w, dv, _) = world_n(n);
        store(&mut w, &dv, &[1.0, 2.0]).expect("write");
        w.release_into(0, (0, 1, 64));
        w.release_into(0, (0, 1, 68));
        store(&mut w, &dv, &[3.0, 4.0]).expect("write after the notifies");
        w.acquire_from(1, (0, 1, 68));
        assert_eq!(load(&mut w, &dv).expect_err("race").kind, ReportKind::Race, "P={n}");
    }
}

#[test]
fn a_cell_entry_stays_small() {
    // A full-barrier protocol keeps O(P²) cells per window (~260k in all at P=64).
    assert!(std::mem::size_of::<CellMeta>() <= 56, "{}", std::mem::size_of::<CellMeta>());
}

#[test]
fn many_ranks_share_released_clocks_between_cells() {
    // Runs `(rank, release?, cell offset)` steps on a world of more than SHARE_FROM ranks
    // and returns the clocks of cells 64 and 68.
    let run = |steps: &[(usize, bool, u64)]| {
        let (mut w, _, _) = world_n(SHARE_FROM + 2);
        for &(g, release, cell) in steps {
            if release {
                w.release_into(g, (0, 1, cell));
            } else {
                w.acquire_from(g, (0, 1, cell));
            }
        }
        let st = lock(&w.shared.domains[0].wins[1].state);
        let shared = |o: u64| match &st.cells[&o].vc {
            CellClock::Shared(a) => Arc::clone(a),
            other => panic!("not a shared clock: {other:?}"),
        };
        (shared(64), shared(68))
    };
    let (a, b) = run(&[(0, true, 64), (0, true, 68)]);
    assert!(Arc::ptr_eq(&a, &b), "two cells notified back to back hold one snapshot");
    // A notify after the rank acquired the cell's clock (an epilogue) takes its snapshot
    // as the cell's clock; one into a clock it has not acquired joins the two.
    let (a, b) = run(&[(1, true, 64), (1, true, 68), (0, false, 64), (0, true, 64), (0, true, 68)]);
    assert!(Arc::ptr_eq(&a, &b), "the acquired cell's clock is covered by the notifier's");
    let (a, b) = run(&[(1, true, 64), (0, true, 68), (0, true, 64)]);
    assert!(!Arc::ptr_eq(&a, &b), "an unacquired clock is joined, not replaced");
    assert_eq!(&a[..2], &[1, 1], "rank 0's clock joined with rank 1's");
    // Few ranks: each cell keeps its own clock.
    let (mut w, _, _) = world_n(2);
    w.release_into(0, (0, 1, 64));
    w.release_into(0, (0, 1, 68));
    let st = lock(&w.shared.domains[0].wins[1].state);
    assert!(matches!(st.cells[&64].vc, CellClock::Own(_)) && matches!(st.cells[&68].vc, CellClock::Own(_)));
    assert_eq!(st.cells[&64].vc.as_slice(), st.cells[&68].vc.as_slice());
}

#[test]
fn races_are_found_among_many_records() {
    // 10,000 disjoint writes by rank 0 (more than any fixed record cap), then an unordered
    // read by rank 1 of the very first one: still a race, naming the oldest writer.
    let mut w = World::new(2);
    let d = w.add_domain(vec![0, 1]);
    let a = w.alloc(d, "big", 10_000 * 4);
    w.finalize().expect("finalize");
    let v = TRef {
        mem: Mem::Window { domain: d, alloc: a },
        owner: 0,
        base: 0,
        shape: vec![1, 10_000].into(),
        strides: vec![10_000, 1].into(),
        dtype: DataType::FP32,
    };
    for i in 0..10_000 {
        w.write(&Access::of(0, &v, None, &[0, i], &[1, 1], "store"), &[i as f64], false).expect("write");
    }
    let r1 = TRef { owner: 1, ..v.clone() };
    let e = w.read(&Access::of(1, &r1, Some(0), &[0, 0], &[1, 2], "remote_load")).expect_err("race");
    assert_eq!(e.kind, ReportKind::Race);
    assert!(e.message.contains("touch bytes [0, 4)"), "{}", e.message);
    // A wide write by rank 0 subsumes the small records it covers and is ordered after them.
    w.write(&Access::of(0, &v, None, &[0, 0], &[1, 10_000], "store"), &vec![1.0; 10_000], false)
        .expect("cover");
    let recs: usize =
        w.shared.domains.iter().flat_map(|d| &d.wins).map(|x| lock(&x.state).record_count()).sum();
    assert_eq!(recs, 1, "covered records are dropped");
    let e = w.read(&Access::of(1, &r1, Some(0), &[0, 9_999], &[1, 1], "remote_load")).expect_err("race");
    assert!(e.message.contains("[39996, 40000)"), "{}", e.message);
}

#[test]
fn a_wait_polled_after_a_later_notify_is_ordered_only_after_the_credit_it_needs() {
    // Rank 0 stores round 0, notifies rank 1, stores round 1 (nothing orders it after rank
    // 1's read of round 0) and notifies again; rank 1 polls `Ge 1` only now and reads rank
    // 0's row. The first credit satisfied the wait: the read races with the round-1 store,
    // exactly as when rank 1 polls between the two notifies.
    use crate::world::Access;
    use pld_runtime_abi::NotifyOp;
    // The notify and wait ops, as their semantics drive the world: address the cell, then act.
    let notify = |w: &mut World, g: usize, sig: &TRef, peer: i64, value: i32| {
        let r = w.cell_addr(g, sig, Some(peer), &[0, 0], Span::DUMMY, "notify")?;
        let n = Notifier { g, who: "k", group: None, span: Span::DUMMY, op: "notify" };
        let checked = w.check_notify(n)?;
        w.notify_cell(checked, r, value, NotifyOp::AtomicAdd)
    };
    let wait = |w: &mut World, g: usize, sig: &TRef, expected: i32| {
        let r = w.cell_addr(g, sig, None, &[0, 0], Span::DUMMY, "wait")?;
        w.wait_cell(g, r, expected, true, Span::DUMMY, "k")
    };
    for poll_late in [false, true] {
        let (mut w, dv, sv) = world_with(2, 4);
        let mut sv1 = sv.clone();
        sv1.owner = 1;
        let mut dv1 = dv.clone();
        dv1.owner = 1;
        let store = |w: &mut World, v: f64| {
            w.write(&Access::of(0, &dv, None, &[0, 0], &[1, 4], "tile.store"), &[v; 4], false)
        };
        store(&mut w, 1.0).expect("round 0 store");
        notify(&mut w, 0, &sv, 1, 1).expect("notify");
        let read = |w: &mut World| {
            let at = wait(w, 1, &sv1, 1).expect("wait");
            assert!(at.is_none(), "the wait is satisfied");
            w.read(&Access::of(1, &dv1, Some(0), &[0, 0], &[1, 4], "remote_load"))
        };
        let first = if poll_late { None } else { Some(read(&mut w).expect("round 0 read is ordered")) };
        let second = store(&mut w, 2.0);
        if !poll_late {
            assert_eq!(first, Some(vec![1.0; 4]));
            assert_eq!(second.expect_err("round-1 store races the read").kind, ReportKind::Race);
            continue;
        }
        second.expect("nobody read yet");
        notify(&mut w, 0, &sv, 1, 1).expect("notify 2");
        let e = read(&mut w).expect_err("the late poll is ordered after the first credit only");
        assert_eq!(e.kind, ReportKind::Race, "{}", e.message);
    }
}

#[test]
fn a_race_between_a_short_and_a_long_record_is_found_whichever_came_first() {
    // Records under 16 KiB and longer ones sit on different granule levels of the race index
    // (D-sim-7): an access of either length must still meet an unordered one of the other.
    let cols = 32 * 1024; // 128 KiB of FP32
    let remote = |dv: &TRef| TRef { owner: 1, ..dv.clone() };
    // Long write by rank 0, then rank 1's unordered 4-byte read inside it.
    let (mut w, dv, _) = fixture::two_ranks(1, cols, 0, true);
    w.write(&Access::of(0, &dv, None, &[0, 0], &[1, cols], "tile.store"), &vec![1.0; cols as usize], false)
        .expect("long write");
    let e = w
        .read(&Access::of(1, &remote(&dv), Some(0), &[0, 20_000], &[1, 1], "remote_load"))
        .expect_err("race");
    assert_eq!(e.kind, ReportKind::Race);
    assert!(e.message.contains("touch bytes [80000, 80004)"), "{}", e.message);
    // Short write by rank 0, then rank 1's unordered 64 KiB read over it.
    let (mut w, dv, _) = fixture::two_ranks(1, cols, 0, true);
    w.write(&Access::of(0, &dv, None, &[0, 20_000], &[1, 1], "tile.store"), &[1.0], false)
        .expect("short write");
    let e = w
        .read(&Access::of(1, &remote(&dv), Some(0), &[0, 16_384], &[1, 16_384], "remote_load"))
        .expect_err("race");
    assert_eq!(e.kind, ReportKind::Race);
    assert!(e.message.contains("touch bytes [80000, 80004)"), "{}", e.message);
    // A long write subsumes the short records it covers (same rank: ordered after them).
    let (mut w, dv, _) = fixture::two_ranks(1, cols, 0, true);
    for i in 0..8 {
        w.write(&Access::of(0, &dv, None, &[0, i * 1000], &[1, 10], "tile.store"), &[2.0; 10], false)
            .expect("short writes");
    }
    w.write(&Access::of(0, &dv, None, &[0, 0], &[1, cols], "tile.store"), &vec![3.0; cols as usize], false)
        .expect("covering write");
    let recs: usize =
        w.shared.domains.iter().flat_map(|d| &d.wins).map(|x| lock(&x.state).record_count()).sum();
    assert_eq!(recs, 1, "the covered short records are dropped");
}
