//! Typed structured control flow: `scf.for`, `scf.if` and `scf.while` with their regions.
//!
//! Guarantees: a region holds its lines as data (nested, not bracketed by text lines); a
//! construct's scalar results are named once (`%r`, or `%r:N` with uses `%r#j`).

use super::inst::Line;
use crate::mlir::MTy;

/// The results of a structured op: their SSA base name and types (`None` for none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Results {
    /// The SSA base name.
    pub name: String,
    /// One type per result.
    pub types: Vec<MTy>,
}

/// `[<results> = ]scf.for <iv> = <lb> to <ub> step <step>[ iter_args(..) -> (..)] { body }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScfFor {
    /// The loop's scalar results (one per iter_arg).
    pub results: Option<Results>,
    /// The induction variable.
    pub iv: String,
    /// Lower bound, upper bound and step (`index`).
    pub bounds: [String; 3],
    /// `(region argument, initial value)` per iter_arg.
    pub iter_args: Vec<(String, String)>,
    /// The body.
    pub body: Vec<Line>,
}

/// `[<results> = ]scf.if <cond>[ -> (..)] { then }[ else { else }]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScfIf {
    /// The scalar results.
    pub results: Option<Results>,
    /// The `i1` condition.
    pub cond: String,
    /// The then region.
    pub then_body: Vec<Line>,
    /// The else region, when printed.
    pub else_body: Option<Vec<Line>>,
}

/// `[<results> = ]scf.while (<inits>) : (..) -> (..) { before } do { ^bb0(..): after }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScfWhile {
    /// The scalar results.
    pub results: Option<Results>,
    /// `(before-region argument, initial value)` per carried scalar.
    pub inits: Vec<(String, String)>,
    /// The carried scalars' types.
    pub types: Vec<MTy>,
    /// The condition region (ends with `scf.condition`).
    pub before: Vec<Line>,
    /// The body region's arguments.
    pub after_args: Vec<(String, MTy)>,
    /// The body region.
    pub after: Vec<Line>,
}
