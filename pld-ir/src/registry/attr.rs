//! Attribute declarations of an op: keyword attributes, their value types and defaults, and
//! the ABI enums an integer attribute may carry.

use crate::expr::Attr;
use pld_runtime_abi::{AtomicType, NotifyOp, ReduceOp, WaitCmp};

/// The ABI enums an integer attribute may carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AbiEnumKind {
    /// `pld.NotifyOp`.
    NotifyOp,
    /// `pld.WaitCmp`.
    WaitCmp,
    /// `pld.AtomicType`.
    AtomicType,
    /// `pld.ReduceOp`.
    ReduceOp,
}

impl AbiEnumKind {
    /// Every ABI enum.
    pub const ALL: &'static [AbiEnumKind] =
        &[AbiEnumKind::NotifyOp, AbiEnumKind::WaitCmp, AbiEnumKind::AtomicType, AbiEnumKind::ReduceOp];

    /// The enum's DSL name (`NotifyOp`).
    pub fn name(self) -> &'static str {
        match self {
            AbiEnumKind::NotifyOp => NotifyOp::ENUM_NAME,
            AbiEnumKind::WaitCmp => WaitCmp::ENUM_NAME,
            AbiEnumKind::AtomicType => AtomicType::ENUM_NAME,
            AbiEnumKind::ReduceOp => ReduceOp::ENUM_NAME,
        }
    }

    /// `(member, value)` pairs in value order.
    pub fn members(self) -> &'static [(&'static str, i32)] {
        match self {
            AbiEnumKind::NotifyOp => NotifyOp::MEMBERS,
            AbiEnumKind::WaitCmp => WaitCmp::MEMBERS,
            AbiEnumKind::AtomicType => AtomicType::MEMBERS,
            AbiEnumKind::ReduceOp => ReduceOp::MEMBERS,
        }
    }

    /// The enum named `name`.
    pub fn from_name(name: &str) -> Option<AbiEnumKind> {
        AbiEnumKind::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// The DSL member spelling of `value`, if valid.
    pub fn member_name(self, value: i64) -> Option<&'static str> {
        self.members().iter().find(|(_, v)| i64::from(*v) == value).map(|(n, _)| *n)
    }

    /// The value of member `member`.
    pub fn value_of(self, member: &str) -> Option<i64> {
        self.members().iter().find(|(n, _)| *n == member).map(|(_, v)| i64::from(*v))
    }

    /// `NotifyOp.AtomicAdd or NotifyOp.Set`: the valid members, for diagnostics.
    pub fn describe_members(self) -> String {
        let names: Vec<String> =
            self.members().iter().map(|(n, _)| format!("{}.{}", self.name(), n)).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => names.join(""),
        }
    }
}

/// The value type of a keyword attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttrType {
    /// Integer.
    Int,
    /// Boolean (integers 0/1 are accepted).
    Bool,
    /// String.
    Str,
    /// Data type.
    DType,
    /// Integer payload of an ABI enum, range-checked.
    Enum(AbiEnumKind),
    /// List of integers.
    Ints,
}

impl AttrType {
    /// An integer value of this type as the DSL spells it: an ABI enum's member name
    /// (`AtomicAdd`), else the number.
    pub fn spell_int(self, v: i64) -> String {
        match self {
            AttrType::Enum(kind) => kind.member_name(v).map_or_else(|| v.to_string(), str::to_owned),
            _ => v.to_string(),
        }
    }

    /// Name for diagnostics.
    pub fn name(self) -> &'static str {
        match self {
            AttrType::Int => "int",
            AttrType::Bool => "bool",
            AttrType::Str => "str",
            AttrType::DType => "DataType",
            AttrType::Enum(k) => k.name(),
            AttrType::Ints => "list[int]",
        }
    }
}

/// A constant default of an attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttrDefault {
    /// Integer default.
    Int(i64),
    /// Boolean default.
    Bool(bool),
    /// String default.
    Str(&'static str),
}

impl AttrDefault {
    /// Integer value (booleans as 0/1).
    pub fn as_int(self) -> Option<i64> {
        match self {
            AttrDefault::Int(v) => Some(v),
            AttrDefault::Bool(b) => Some(i64::from(b)),
            AttrDefault::Str(_) => None,
        }
    }
    /// As an [`Attr`] value.
    pub fn to_attr(self) -> Attr {
        match self {
            AttrDefault::Int(v) => Attr::Int(v),
            AttrDefault::Bool(b) => Attr::Bool(b),
            AttrDefault::Str(s) => Attr::Str(s.to_string()),
        }
    }
}

/// One keyword-only attribute of an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AttrDef {
    /// Keyword name.
    pub name: &'static str,
    /// Value type.
    pub ty: AttrType,
    /// Default when omitted; `None` with `required` false means "absent is meaningful".
    pub default: Option<AttrDefault>,
    /// Whether omitting it is an error (`missing kwarg '<k>' on <op>`).
    pub required: bool,
    /// A string attribute that, when omitted, the frontend fills with the name the call's
    /// result is assigned to (`buf = pld.alloc_window_buffer(…)` names the buffer `buf`); a
    /// call that is not the right-hand side of a simple assignment is the frontend's error.
    pub from_assignment: bool,
}

impl AttrDef {
    /// A required attribute.
    pub const fn required(name: &'static str, ty: AttrType) -> AttrDef {
        AttrDef { name, ty, default: None, required: true, from_assignment: false }
    }
    /// An attribute with a default.
    pub const fn with_default(name: &'static str, ty: AttrType, default: AttrDefault) -> AttrDef {
        AttrDef { name, ty, default: Some(default), required: false, from_assignment: false }
    }
    /// An optional attribute without a default.
    pub const fn optional(name: &'static str, ty: AttrType) -> AttrDef {
        AttrDef { name, ty, default: None, required: false, from_assignment: false }
    }
    /// A required string attribute the frontend fills from the assignment the call is the
    /// right-hand side of, unless given ([`AttrDef::from_assignment`]).
    pub const fn assigned_name(name: &'static str) -> AttrDef {
        AttrDef { name, ty: AttrType::Str, default: None, required: true, from_assignment: true }
    }
}
