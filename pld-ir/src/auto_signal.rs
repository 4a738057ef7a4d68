//! Private signals as registry data: which host collectives may omit their signal window,
//! and what shape the compiler allocates for one that does.
//!
//! An op submits a [`PrivateSignalReg`] with [`register_private_signal!`](crate::register_private_signal);
//! `SynthesizeAllReduceSignals` asks [`private_signal`] for the op of every host call whose
//! optional `signal` parameter was omitted and allocates an INT32 window of the returned
//! shape (or reports the returned message at the call). Guarantees: one rule per op
//! (a second registration is reported by the registry's self-check through
//! [`duplicate_private_signals`]); the rule only reads the call.

use crate::expr::Call;

/// One dimension of a private signal window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SignalDim {
    /// The host's rank count (`pld.system.world_size()`).
    WorldSize,
    /// A constant.
    Int(i64),
}

/// The private signal's shape for `call`, or the reason the call needs an explicit signal.
pub type PrivateSignalFn = fn(&Call) -> Result<Vec<SignalDim>, String>;

/// A private-signal rule for one op.
#[derive(Debug)]
pub struct PrivateSignalReg {
    /// The op whose omitted signal this rule synthesizes.
    pub op: &'static str,
    /// The shape rule.
    pub shape: PrivateSignalFn,
}

inventory::collect!(PrivateSignalReg);

/// Registers the private-signal rule `$shape` ([`PrivateSignalFn`]) for the op named `$op`.
#[macro_export]
macro_rules! register_private_signal {
    ($op:expr, $shape:path) => {
        $crate::inventory::submit! {
            $crate::auto_signal::PrivateSignalReg { op: $op, shape: $shape }
        }
    };
}

/// The private-signal rule of `op`, if it has one.
pub fn private_signal(op: &str) -> Option<PrivateSignalFn> {
    inventory::iter::<PrivateSignalReg>.into_iter().find(|r| r.op == op).map(|r| r.shape)
}

/// Ops with more than one private-signal rule (empty in a well-formed build).
pub fn duplicate_private_signals() -> Vec<&'static str> {
    let mut seen: Vec<&'static str> = Vec::new();
    let mut dups = Vec::new();
    for r in inventory::iter::<PrivateSignalReg> {
        if seen.contains(&r.op) {
            dups.push(r.op);
        } else {
            seen.push(r.op);
        }
    }
    dups
}
