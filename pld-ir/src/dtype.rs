//! Element data types.
//!
//! The codes, bit widths and spellings follow the reference type table: the lowercase
//! `display` form appears in diagnostics, the uppercase `dsl_name` in printed programs
//! (`pl.FP32`). Byte width rounds sub-byte types up to one byte.

use std::fmt;

macro_rules! dtypes {
    ($($variant:ident = $code:literal, $bits:literal, $display:literal, $class:ident;)*) => {
        /// An element type.
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        #[allow(missing_docs)]
        pub enum DataType { $($variant),* }

        impl DataType {
            /// Every data type, in code order.
            pub const ALL: &'static [DataType] = &[$(DataType::$variant),*];

            /// The one-byte type code.
            pub fn code(self) -> u8 {
                match self { $(DataType::$variant => $code),* }
            }

            /// Width in bits.
            #[inline]
            pub fn bits(self) -> u32 {
                match self { $(DataType::$variant => $bits),* }
            }

            /// Lowercase name used in diagnostics (`fp32`, `bfloat16`).
            pub fn display_name(self) -> &'static str {
                match self { $(DataType::$variant => $display),* }
            }

            /// The DSL attribute name (`FP32`), printed as `pl.FP32`.
            pub fn dsl_name(self) -> &'static str {
                match self { $(DataType::$variant => stringify!($variant)),* }
            }

            /// The class of the type.
            #[inline]
            pub fn class(self) -> DTypeClass {
                match self { $(DataType::$variant => DTypeClass::$class),* }
            }
        }
    };
}

dtypes! {
    BOOL = 0x00, 1, "bool", Bool;
    INT4 = 0x10, 4, "int4", SignedInt;
    INT8 = 0x11, 8, "int8", SignedInt;
    INT16 = 0x12, 16, "int16", SignedInt;
    INT32 = 0x13, 32, "int32", SignedInt;
    INT64 = 0x14, 64, "int64", SignedInt;
    INDEX = 0x15, 64, "index", SignedInt;
    UINT4 = 0x20, 4, "uint4", UnsignedInt;
    UINT8 = 0x21, 8, "uint8", UnsignedInt;
    UINT16 = 0x22, 16, "uint16", UnsignedInt;
    UINT32 = 0x23, 32, "uint32", UnsignedInt;
    UINT64 = 0x24, 64, "uint64", UnsignedInt;
    FP4 = 0x30, 4, "fp4", Float;
    FP8E4M3FN = 0x31, 8, "fp8e4m3fn", Float;
    FP8E5M2 = 0x32, 8, "fp8e5m2", Float;
    FP16 = 0x33, 16, "fp16", Float;
    FP32 = 0x34, 32, "fp32", Float;
    FP8E8M0 = 0x36, 8, "fp8e8m0", Float;
    BF16 = 0x40, 16, "bfloat16", Float;
    HF4 = 0x41, 4, "hf4", Float;
    HF8 = 0x42, 8, "hf8", Float;
    TASK_ID = 0x50, 64, "task_id", Handle;
}

/// Coarse classification of a [`DataType`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DTypeClass {
    /// `BOOL`.
    Bool,
    /// Signed integers, including `INDEX`.
    SignedInt,
    /// Unsigned integers.
    UnsignedInt,
    /// Floating point of any width.
    Float,
    /// Opaque handles (`TASK_ID`).
    Handle,
}

impl DataType {
    /// Width in bytes, sub-byte types rounded up to one.
    #[inline]
    pub fn bytes(self) -> u64 {
        u64::from(self.bits().div_ceil(8))
    }

    /// Whether this is a signed or unsigned integer (`INDEX` included).
    pub fn is_int(self) -> bool {
        matches!(self.class(), DTypeClass::SignedInt | DTypeClass::UnsignedInt)
    }

    /// Whether this is a floating-point type.
    pub fn is_float(self) -> bool {
        self.class() == DTypeClass::Float
    }

    /// Looks up a DSL name (`FP32`, also the aliases `FLOAT32`, `FLOAT16`, `BFLOAT16`, `INT`).
    pub fn from_dsl_name(name: &str) -> Option<DataType> {
        let alias = match name {
            "FLOAT32" | "float32" => Some(DataType::FP32),
            "FLOAT16" | "float16" | "HALF" => Some(DataType::FP16),
            "BFLOAT16" | "bfloat16" => Some(DataType::BF16),
            _ => None,
        };
        alias.or_else(|| {
            DataType::ALL.iter().copied().find(|d| d.dsl_name() == name || d.display_name() == name)
        })
    }

    /// The NumPy type string (`.npy` descr) of this dtype's elements, if NumPy has the type;
    /// BF16, which NumPy lacks, is its raw 16 bits (`<u2`). Where the values rather than the
    /// bits must cross (host callbacks), the caller picks `<f4` for BF16 itself.
    pub fn numpy_descr(self) -> Option<&'static str> {
        Some(match self {
            DataType::FP32 => "<f4",
            DataType::FP16 => "<f2",
            DataType::BF16 | DataType::UINT16 => "<u2",
            DataType::INT8 => "|i1",
            DataType::INT16 => "<i2",
            DataType::INT32 => "<i4",
            DataType::INT64 | DataType::INDEX => "<i8",
            DataType::UINT8 => "|u1",
            DataType::UINT32 => "<u4",
            DataType::UINT64 => "<u8",
            DataType::BOOL => "|b1",
            _ => return None,
        })
    }

    /// Whether hardware atomic add supports this dtype (TSTORE/TPUT atomic add allow-list).
    pub fn supports_atomic_add(self) -> bool {
        matches!(
            self,
            DataType::FP32
                | DataType::BF16
                | DataType::FP16
                | DataType::INT32
                | DataType::INT16
                | DataType::INT8
        )
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display_name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_names() {
        assert_eq!(DataType::FP32.bytes(), 4);
        assert_eq!(DataType::INT4.bytes(), 1);
        assert_eq!(DataType::BF16.display_name(), "bfloat16");
        assert_eq!(DataType::from_dsl_name("FP16"), Some(DataType::FP16));
        assert_eq!(DataType::from_dsl_name("NOPE"), None);
        assert!(DataType::INDEX.is_int());
        assert_eq!(DataType::FP16.code(), 0x33);
    }
}
