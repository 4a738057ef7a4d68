//! Unit tests of [`World::fork`] and [`World::join`]: the rank state a handle changed comes
//! back whole, and the ranks it did not hold stay as they were.

use super::*;
use pld_runtime_abi::NotifyOp;

/// Two ranks with every check on; rank 1's views of a `[1, 4]` FP32 `data` and the `signal`.
fn world() -> (World, TRef, TRef) {
    super::fixture::two_ranks(1, 4, 1, true)
}

#[test]
fn every_piece_of_rank_state_a_handle_changed_comes_back_on_join() {
    let (mut w, data, sig) = world();
    let (rank0, before) = (format!("{:?}", w.ranks[0]), w.ranks[1].clone());
    let mut h = w.fork(&[1]);
    assert!(w.ranks[1].vc.is_empty(), "a held rank's state lives in the handle alone");
    // Rank 1, in the handle: reads bytes nothing wrote (a warning), notifies rank 0 with a
    // single credit (a release, the barrier-round flag, a call and a generation), writes
    // (its clock advances; an unfenced write), and a mixed-kernel lane runs a notify.
    h.read(&Access::of(1, &data, None, &[0, 0], &[1, 4], "load")).expect("read");
    let cell = h.cell_addr(1, &sig, Some(0), &[0, 0], Span::DUMMY, "t").expect("cell");
    let n = Notifier { g: 1, who: "k", group: None, span: Span::DUMMY, op: "notify" };
    let checked = h.check_notify(n).expect("no unfenced write yet");
    h.notify_cell(checked, cell, 1, NotifyOp::AtomicAdd).expect("notify");
    let dbg = |x: &dyn std::fmt::Debug| format!("{x:?}");
    assert_ne!(dbg(&h.ranks[1].released), dbg(&before.released), "released");
    h.write(&Access::of(1, &data, None, &[0, 0], &[1, 4], "store"), &[1.0; 4], false).expect("write");
    assert_eq!(h.note_lane_notify(1, "mix", Span::DUMMY, "k_aiv"), None);
    let held = &h.ranks[1];
    assert_ne!(held.vc, before.vc, "vc");
    assert_ne!(dbg(&held.calls), dbg(&before.calls), "calls");
    assert_ne!(dbg(&held.gens), dbg(&before.gens), "gens");
    assert_ne!(held.notified, before.notified, "notified");
    assert_ne!(held.unfenced, before.unfenced, "unfenced");
    assert_ne!(held.lane_notifies, before.lane_notifies, "lane_notifies");
    assert_ne!(held.warned, before.warned, "warned");
    let held = dbg(held);
    w.join(h);
    assert_eq!(dbg(&w.ranks[1]), held, "rank 1's state, as the handle left it");
    assert_eq!(dbg(&w.ranks[0]), rank0, "rank 0 was not held: unchanged");
    // What the handle tallied came back too.
    assert_eq!((w.notifies_of(1), w.notifies_of(0)), (1, 0));
    assert_eq!(w.tally.warnings.len(), 1, "{:?}", w.tally.warnings);
    // The joined state works on: the rank's fence and lane notes are the handle's.
    assert!(w.first_unfenced(1).is_some());
    assert_eq!(w.note_lane_notify(1, "mix", Span::DUMMY, "k_aic").as_deref(), Some("k_aiv"));
}
