//! Private signals as registry data: which host collectives may omit their signal window,
//! and what shape the compiler allocates for one that does.
//!
//! An op submits a [`PrivateSignalFn`] with [`register_private_signal!`](crate::register_private_signal);
//! `SynthesizeAllReduceSignals` asks [`private_signal`] for the op of every host call whose
//! optional `signal` parameter was omitted and allocates an INT32 window of the returned
//! shape (or reports the returned message at the call). Guarantees: the rules are one table
//! of the registry ([`crate::table::Table`], collected with the op tables): one rule per op —
//! a second registration is a [`RegistryError::Duplicate`](crate::table::RegistryError)
//! naming both sites, and a rule for an op nobody registered is a
//! [`RegistryError::UnknownOp`](crate::table::RegistryError) naming its site, both reported by
//! [`Registry::check`](crate::registry::Registry::check); the rule only reads the call.

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

/// Registers the private-signal rule `$shape` ([`PrivateSignalFn`]) for the op named `$op`.
#[macro_export]
macro_rules! register_private_signal {
    ($op:expr, $shape:path) => {
        $crate::register_entry!(&[$op], $shape as $crate::auto_signal::PrivateSignalFn);
    };
}

/// The private-signal rule of `op`, if it has one (the first registration, when there are two).
pub fn private_signal(op: &str) -> Option<PrivateSignalFn> {
    crate::registry::registry().private_signal(op)
}
