//! The four ABI enums (`NotifyOp`, `WaitCmp`, `AtomicType`, `ReduceOp`), their
//! DSL spellings, range-checked conversions from the packed kwarg integer, and the
//! hand-written `const` pins that make changing a discriminant a build error.
//!
//! Every enum is generated from one table (one [`abi_enums!`] invocation, each enum
//! through [`abi_enum!`]) so the four stay uniform. The table is the single source
//! for the Rust enum, its DSL member names, its `valid` description, the by-name
//! lookups ([`ENUM_NAMES`], [`enum_members`]) and the C header; the *pins* at the bottom of
//! this file are written out separately on purpose, so an edit to the table that
//! changes a value, reorders members or appends one without a pin fails to compile.

use alloc::string::{String, ToString};
use core::fmt;
use core::hash::Hash;

/// A packed enum kwarg that is not a value of its enum.
///
/// Raised by [`AbiEnum::from_i64`] and the `TryFrom` impls. The message names the
/// enum, the offending value and every valid `value = member` pair:
///
/// ```
/// use pld_runtime_abi::NotifyOp;
/// let err = NotifyOp::from_i64(7).unwrap_err();
/// assert_eq!(err.to_string(), "NotifyOp value 7 is out of range (valid: 0 = AtomicAdd, 1 = Set)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EnumRangeError {
    /// The enum's name as the DSL spells it (`"NotifyOp"`).
    pub enum_name: &'static str,
    /// The rejected value.
    pub value: i64,
    /// The valid values, as `"0 = AtomicAdd, 1 = Set"`.
    pub valid: &'static str,
}

impl fmt::Display for EnumRangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} value {} is out of range (valid: {})", self.enum_name, self.value, self.valid)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for EnumRangeError {}

/// What every ABI enum offers, so generic code can treat the four alike.
///
/// The inherent methods and constants of each enum have the same names and
/// behaviour; this trait only exists for code that is generic over the enum.
pub trait AbiEnum:
    Copy
    + Eq
    + Ord
    + Hash
    + fmt::Debug
    + TryFrom<i32, Error = EnumRangeError>
    + TryFrom<i64, Error = EnumRangeError>
    + 'static
{
    /// The enum's name as the DSL and the C header spell it (`"NotifyOp"`).
    const ENUM_NAME: &'static str;
    /// Every member, in ascending value order (values are dense from 0).
    const ALL: &'static [Self];
    /// `(DSL member name, value)` for every member, in value order.
    const MEMBERS: &'static [(&'static str, i32)];
    /// The valid values as `"0 = AtomicAdd, 1 = Set"` (used in error messages).
    const VALID: &'static str;

    /// The packed kwarg value.
    fn as_i32(self) -> i32;
    /// The member with value `v`, or an [`EnumRangeError`] naming the valid values.
    fn from_i64(v: i64) -> Result<Self, EnumRangeError>;
    /// The DSL member spelling (`"AtomicAdd"`, `"None_"`).
    fn dsl_name(self) -> &'static str;
    /// The fully qualified DSL spelling (`"pld.NotifyOp.AtomicAdd"`).
    fn dsl_path(self) -> String;
    /// The member the DSL spells `name` (exact match, e.g. `"None_"`, not `"None"`).
    fn from_dsl_name(name: &str) -> Option<Self>;
    /// One-line meaning of the member, from the seed's enum table.
    fn description(self) -> &'static str;
}

/// Generates one ABI enum, its inherent API, `AbiEnum` and `TryFrom` impls from a
/// table of `Variant = value => "DslName", "meaning"` rows.
macro_rules! abi_enum {
    // `valid` string: "0 = A, 1 = B" (first row without a leading separator).
    (@valid $v0:literal = $d0:literal $(, $v:literal = $d:literal)*) => {
        concat!(stringify!($v0), " = ", $d0 $(, ", ", stringify!($v), " = ", $d)*)
    };
    (
        $(#[$meta:meta])*
        $name:ident {
            $( $variant:ident = $value:literal => $dsl:literal, $desc:literal; )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(i32)]
        pub enum $name {
            $( #[doc = $desc] $variant = $value, )+
        }

        impl $name {
            /// The enum's name as the DSL and the C header spell it.
            pub const ENUM_NAME: &'static str = stringify!($name);
            /// Every member, in ascending value order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];
            /// `(DSL member name, value)` for every member, in value order.
            pub const MEMBERS: &'static [(&'static str, i32)] = &[$(($dsl, $value)),+];
            /// The valid values, as used in [`EnumRangeError::valid`].
            pub const VALID: &'static str = abi_enum!(@valid $($value = $dsl),+);

            /// The packed kwarg value.
            pub const fn as_i32(self) -> i32 {
                self as i32
            }

            /// The member with value `v`, or an [`EnumRangeError`] naming the valid values.
            pub const fn from_i64(v: i64) -> Result<Self, EnumRangeError> {
                $( if v == $value { return Ok(Self::$variant); } )+
                Err(EnumRangeError { enum_name: Self::ENUM_NAME, value: v, valid: Self::VALID })
            }

            /// The DSL member spelling.
            pub const fn dsl_name(self) -> &'static str {
                match self { $(Self::$variant => $dsl),+ }
            }

            /// The fully qualified DSL spelling, `pld.<Enum>.<Member>`.
            pub fn dsl_path(self) -> String {
                self.to_string()
            }

            /// The member the DSL spells `name` (exact match).
            pub fn from_dsl_name(name: &str) -> Option<Self> {
                match name { $($dsl => Some(Self::$variant),)+ _ => None }
            }

            /// One-line meaning of the member.
            pub const fn description(self) -> &'static str {
                match self { $(Self::$variant => $desc),+ }
            }
        }

        impl AbiEnum for $name {
            const ENUM_NAME: &'static str = $name::ENUM_NAME;
            const ALL: &'static [Self] = $name::ALL;
            const MEMBERS: &'static [(&'static str, i32)] = $name::MEMBERS;
            const VALID: &'static str = $name::VALID;
            fn as_i32(self) -> i32 { $name::as_i32(self) }
            fn from_i64(v: i64) -> Result<Self, EnumRangeError> { $name::from_i64(v) }
            fn dsl_name(self) -> &'static str { $name::dsl_name(self) }
            fn dsl_path(self) -> String { $name::dsl_path(self) }
            fn from_dsl_name(name: &str) -> Option<Self> { $name::from_dsl_name(name) }
            fn description(self) -> &'static str { $name::description(self) }
        }

        impl TryFrom<i64> for $name {
            type Error = EnumRangeError;
            fn try_from(v: i64) -> Result<Self, EnumRangeError> { Self::from_i64(v) }
        }

        impl TryFrom<i32> for $name {
            type Error = EnumRangeError;
            fn try_from(v: i32) -> Result<Self, EnumRangeError> { Self::from_i64(i64::from(v)) }
        }

        impl From<$name> for i32 {
            fn from(v: $name) -> i32 { v.as_i32() }
        }

        impl fmt::Display for $name {
            /// Writes the DSL path, `pld.<Enum>.<Member>`.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "pld.{}.{}", Self::ENUM_NAME, self.dsl_name())
            }
        }

        // Generated invariant: values are dense from 0 in declaration order, so
        // `ALL[v]` is the member with value `v` and "append-only" means "append".
        const _: () = {
            let mut i = 0;
            while i < $name::ALL.len() {
                assert!(
                    $name::ALL[i] as i32 == i as i32,
                    concat!(stringify!($name), " values must be dense from 0 in declaration order")
                );
                i += 1;
            }
        };
    };
}

/// Generates every ABI enum with [`abi_enum!`] from one table, and the by-name lookups over
/// exactly those enums ([`ENUM_NAMES`], [`enum_members`]).
macro_rules! abi_enums {
    ($( $(#[$meta:meta])* $name:ident { $($rows:tt)+ } )+) => {
        $( abi_enum! { $(#[$meta])* $name { $($rows)+ } } )+

        /// The names of the ABI enums, as the DSL spells them after `pld.`.
        pub const ENUM_NAMES: &[&str] = &[$($name::ENUM_NAME),+];

        /// `(DSL member name, value)` pairs of the enum called `enum_name`, or `None` if
        /// `enum_name` is not one of [`ENUM_NAMES`].
        pub fn enum_members(enum_name: &str) -> Option<&'static [(&'static str, i32)]> {
            match enum_name {
                $( $name::ENUM_NAME => Some($name::MEMBERS), )+
                _ => None,
            }
        }
    };
}

abi_enums! {
    /// `op` kwarg of `pld.system.notify`: how the value lands in the peer's signal slot.
    NotifyOp {
        AtomicAdd = 0 => "AtomicAdd", "atomically add value into the peer's signal slot";
        Set = 1 => "Set", "non-atomic store of value into the peer's signal slot";
    }

    /// `cmp` kwarg of `pld.system.wait` / `pld.system.defer_wait`: the slot predicate.
    WaitCmp {
        Eq = 0 => "Eq", "block until *signal_slot == expected";
        Ge = 1 => "Ge", "wait, or defer task completion, until *signal_slot >= expected";
    }

    /// `atomic` kwarg of `pld.tensor.put`, `pld.tile.put` and both `remote_store`s.
    ///
    /// The DSL spells the first member `None_` because `None` is a Python keyword.
    AtomicType {
        None = 0 => "None_", "plain remote store: overwrite the peer's dst slice";
        Add = 1 => "Add", "atomically add the source data into the peer's dst slice";
    }

    /// `op` kwarg of `pld.tensor.allreduce`, `reduce_scatter` and their builtins.
    ReduceOp {
        Sum = 0 => "Sum", "sum-reduce every participating rank's window slice";
        Max = 1 => "Max", "max-reduce every participating rank's window slice";
        Min = 2 => "Min", "min-reduce every participating rank's window slice";
        Prod = 3 => "Prod", "product-reduce every participating rank's window slice";
    }
}

/// The value of `pld.<enum_name>.<member>`, e.g. `("ReduceOp", "Sum")` → `Some(0)`.
///
/// Both names must match the DSL spelling exactly (`"None_"`, not `"None"`).
///
/// ```
/// use pld_runtime_abi::lookup_enum_member;
/// assert_eq!(lookup_enum_member("ReduceOp", "Prod"), Some(3));
/// assert_eq!(lookup_enum_member("AtomicType", "None_"), Some(0));
/// assert_eq!(lookup_enum_member("AtomicType", "None"), None);
/// ```
pub fn lookup_enum_member(enum_name: &str, member: &str) -> Option<i32> {
    enum_members(enum_name)?.iter().find(|(name, _)| *name == member).map(|&(_, value)| value)
}

// ABI pins. Written by hand, independently of the tables above: these numbers are
// serialised into IR kwargs and cached programs and cast back by codegen, so they
// may never change. Each `pin!` also checks that every member is pinned, so
// appending a member without pinning it fails too.
macro_rules! pin {
    ($name:ident { $($variant:ident = $value:literal),+ $(,)? }) => {
        $(
            const _: () = assert!(
                $name::$variant as i32 == $value,
                concat!(
                    "ABI break: ", stringify!($name), "::", stringify!($variant),
                    " must be ", stringify!($value), " (the ABI enums are append-only)"
                )
            );
        )+
        const _: () = assert!(
            $name::ALL.len() == [$($value),+].len(),
            concat!("every ", stringify!($name), " member must be pinned in enums.rs")
        );
    };
}

pin!(NotifyOp { AtomicAdd = 0, Set = 1 });
pin!(WaitCmp { Eq = 0, Ge = 1 });
pin!(AtomicType { None = 0, Add = 1 });
pin!(ReduceOp { Sum = 0, Max = 1, Min = 2, Prod = 3 });

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::vec::Vec;

    fn round_trips<E: AbiEnum>() {
        for (i, &e) in E::ALL.iter().enumerate() {
            assert_eq!(e.as_i32(), i32::try_from(i).unwrap());
            assert_eq!(E::from_i64(i64::from(e.as_i32())), Ok(e));
            assert_eq!(E::try_from(e.as_i32()), Ok(e));
            assert_eq!(E::from_dsl_name(e.dsl_name()), Some(e));
            assert_eq!(e.dsl_path(), format!("pld.{}.{}", E::ENUM_NAME, e.dsl_name()));
            assert_eq!(E::MEMBERS[i], (e.dsl_name(), e.as_i32()));
            assert_eq!(lookup_enum_member(E::ENUM_NAME, e.dsl_name()), Some(e.as_i32()));
            assert!(!e.description().is_empty());
        }
        let n = i64::try_from(E::ALL.len()).unwrap();
        for bad in [-1, n, n + 1, i64::MAX, i64::MIN] {
            let err = E::from_i64(bad).unwrap_err();
            assert_eq!(err.enum_name, E::ENUM_NAME);
            assert_eq!(err.value, bad);
            assert_eq!(err.valid, E::VALID);
        }
        assert!(E::try_from(i32::MIN).is_err());
        assert!(E::try_from(i64::from(i32::MAX) + 1).is_err());
    }

    #[test]
    fn all_enums_round_trip() {
        round_trips::<NotifyOp>();
        round_trips::<WaitCmp>();
        round_trips::<AtomicType>();
        round_trips::<ReduceOp>();
    }

    #[test]
    fn values_match_the_seed() {
        assert_eq!([NotifyOp::AtomicAdd as i32, NotifyOp::Set as i32], [0, 1]);
        assert_eq!([WaitCmp::Eq as i32, WaitCmp::Ge as i32], [0, 1]);
        assert_eq!([AtomicType::None as i32, AtomicType::Add as i32], [0, 1]);
        assert_eq!(
            [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod].map(|e| e as i32),
            [0, 1, 2, 3]
        );
    }

    fn dsl_names<E: AbiEnum>() -> Vec<&'static str> {
        E::ALL.iter().map(|e| e.dsl_name()).collect()
    }

    #[test]
    fn dsl_spellings() {
        assert_eq!(dsl_names::<NotifyOp>(), ["AtomicAdd", "Set"]);
        assert_eq!(dsl_names::<WaitCmp>(), ["Eq", "Ge"]);
        assert_eq!(dsl_names::<AtomicType>(), ["None_", "Add"]);
        assert_eq!(dsl_names::<ReduceOp>(), ["Sum", "Max", "Min", "Prod"]);
        assert_eq!(NotifyOp::AtomicAdd.dsl_path(), "pld.NotifyOp.AtomicAdd");
        assert_eq!(AtomicType::None.dsl_path(), "pld.AtomicType.None_");
        assert_eq!(ReduceOp::Prod.to_string(), "pld.ReduceOp.Prod");
        assert_eq!(AtomicType::from_dsl_name("None"), None);
        assert_eq!(ReduceOp::from_dsl_name("sum"), None);
    }

    #[test]
    fn range_error_messages() {
        assert_eq!(
            NotifyOp::from_i64(7).unwrap_err().to_string(),
            "NotifyOp value 7 is out of range (valid: 0 = AtomicAdd, 1 = Set)"
        );
        assert_eq!(
            WaitCmp::try_from(-1i32).unwrap_err().to_string(),
            "WaitCmp value -1 is out of range (valid: 0 = Eq, 1 = Ge)"
        );
        assert_eq!(
            AtomicType::try_from(2i64).unwrap_err().to_string(),
            "AtomicType value 2 is out of range (valid: 0 = None_, 1 = Add)"
        );
        assert_eq!(
            ReduceOp::from_i64(99).unwrap_err().to_string(),
            "ReduceOp value 99 is out of range (valid: 0 = Sum, 1 = Max, 2 = Min, 3 = Prod)"
        );
    }

    #[test]
    fn lookup_by_name() {
        assert_eq!(ENUM_NAMES, ["NotifyOp", "WaitCmp", "AtomicType", "ReduceOp"]);
        assert_eq!(lookup_enum_member("ReduceOp", "Sum"), Some(0));
        assert_eq!(lookup_enum_member("NotifyOp", "Set"), Some(1));
        assert_eq!(lookup_enum_member("WaitCmp", "Ge"), Some(1));
        assert_eq!(lookup_enum_member("AtomicType", "None_"), Some(0));
        assert_eq!(lookup_enum_member("AtomicType", "None"), None);
        assert_eq!(lookup_enum_member("ReduceOp", "Avg"), None);
        assert_eq!(lookup_enum_member("MgatherCoalesceMode", "Row"), None);
        assert_eq!(enum_members("WaitCmp"), Some(&[("Eq", 0), ("Ge", 1)][..]));
        assert_eq!(enum_members("pld.WaitCmp"), None);
        for name in ENUM_NAMES {
            assert!(enum_members(name).is_some());
        }
    }

    #[test]
    fn ordering_follows_values() {
        let mut v = [ReduceOp::Prod, ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max];
        v.sort();
        assert_eq!(v, ReduceOp::ALL);
        assert_eq!(i32::from(ReduceOp::Min), 2);
    }
}
