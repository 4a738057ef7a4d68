//! MLIR / PTO spellings: element types, scalar types, tile buffers, views and enum attributes.
//!
//! Guarantees: every spelling here is one `ptoas` parses (codegen.md §4 and checklist P1, P2,
//! P6); a dtype or memory space with no legal spelling is an `Err` naming it, never a guess.

use crate::pto::PtoType;
use pld_ir::{DataType, MemorySpace};

/// An MLIR scalar type the emitter computes with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MTy {
    /// `i1`.
    I1,
    /// Signless integer of the given width (`i8` … `i64`).
    Int(u32),
    /// `index`.
    Index,
    /// `f16`.
    F16,
    /// `bf16`.
    BF16,
    /// `f32`.
    F32,
}

impl MTy {
    /// The MLIR spelling.
    pub fn name(self) -> String {
        crate::pto::print::scalar_type(self)
    }

    /// Whether this is a float type.
    pub fn is_float(self) -> bool {
        matches!(self, MTy::F16 | MTy::BF16 | MTy::F32)
    }

    /// Integer width (`index` counts as 64).
    pub fn int_width(self) -> Option<u32> {
        match self {
            MTy::I1 => Some(1),
            MTy::Int(w) => Some(w),
            MTy::Index => Some(64),
            _ => None,
        }
    }

    /// Float width.
    pub fn float_width(self) -> Option<u32> {
        match self {
            MTy::F16 | MTy::BF16 => Some(16),
            MTy::F32 => Some(32),
            _ => None,
        }
    }

    /// The scalar type of an IR scalar dtype (unsigned integers are signless `iN`).
    pub fn of_scalar(d: DataType) -> Result<MTy, String> {
        Ok(match d {
            DataType::BOOL => MTy::I1,
            DataType::INT8 | DataType::UINT8 => MTy::Int(8),
            DataType::INT16 | DataType::UINT16 => MTy::Int(16),
            DataType::INT32 | DataType::UINT32 => MTy::Int(32),
            DataType::INT64 | DataType::UINT64 => MTy::Int(64),
            DataType::INDEX => MTy::Index,
            DataType::FP16 => MTy::F16,
            DataType::BF16 => MTy::BF16,
            DataType::FP32 => MTy::F32,
            other => return Err(format!("scalar dtype {other} has no pto scalar type")),
        })
    }
}

/// The element-type spelling of `d` inside `!pto.ptr<>`, views and tile buffers (P1).
pub fn elem(d: DataType) -> Result<&'static str, String> {
    Ok(match d {
        DataType::FP32 => "f32",
        DataType::FP16 => "f16",
        DataType::BF16 => "bf16",
        DataType::INT8 => "i8",
        DataType::INT16 => "i16",
        DataType::INT32 => "i32",
        DataType::INT64 => "i64",
        DataType::UINT8 => "ui8",
        DataType::UINT16 => "ui16",
        DataType::UINT32 => "ui32",
        DataType::UINT64 => "ui64",
        DataType::BOOL => "i1",
        DataType::FP8E4M3FN => "f8E4M3FN",
        DataType::FP8E5M2 => "f8E5M2",
        DataType::FP8E8M0 => "!pto.f8E8M0",
        DataType::HF8 => "!pto.hif8",
        DataType::FP4 => "!pto.f4E2M1x2",
        other => return Err(format!("dtype {other} has no pto element type")),
    })
}

/// `!pto.ptr<elem>`.
pub fn ptr(d: DataType) -> Result<PtoType, String> {
    Ok(PtoType::Ptr(elem(d)?))
}

/// The tile-buffer `loc=` keyword of a memory space (`None` → `vec`); GM is illegal (P2).
pub fn loc(m: Option<MemorySpace>) -> Result<&'static str, String> {
    Ok(match m {
        None | Some(MemorySpace::Vec) => "vec",
        Some(MemorySpace::Mat) => "mat",
        Some(MemorySpace::Left) => "left",
        Some(MemorySpace::Right) => "right",
        Some(MemorySpace::Acc) => "acc",
        Some(MemorySpace::Bias) => "bias",
        Some(MemorySpace::LeftScale | MemorySpace::RightScale) => "scaling",
        Some(other) => {
            return Err(format!("a tile in memory space {} cannot be a pto tile buffer", other.dsl_name()))
        }
    })
}

/// `!pto.tensor_view<?x…x?xelem>`: always fully dynamic (P8: one type per view SSA).
pub fn tensor_view(rank: usize, elem: &'static str) -> PtoType {
    PtoType::TensorView { rank, elem }
}

/// `!pto.partition_tensor_view<16x?xelem>`: a static number per constant size, `?` otherwise.
pub fn partition_view(dims: &[Option<i64>], elem: &'static str) -> PtoType {
    PtoType::PartitionView { dims: dims.to_vec(), elem }
}

/// `#pto<atomic_type …>` for an IR atomic value (0 none, 1 add).
pub fn atomic_attr(v: i64) -> Option<&'static str> {
    match v {
        0 => Some("#pto<atomic_type atomic_none>"),
        1 => Some("#pto<atomic_type atomic_add>"),
        _ => None,
    }
}

/// `#pto<notify_op …>` for an IR NotifyOp value (0 AtomicAdd, 1 Set).
pub fn notify_attr(v: i64) -> Option<&'static str> {
    match v {
        0 => Some("#pto<notify_op atomic_add>"),
        1 => Some("#pto<notify_op set>"),
        _ => None,
    }
}

/// `#pto<wait_cmp …>` for an IR WaitCmp value (0 Eq, 1 Ge): the keyword, never the PTOAS integer.
pub fn wait_attr(v: i64) -> Option<&'static str> {
    match v {
        0 => Some("#pto<wait_cmp eq>"),
        1 => Some("#pto<wait_cmp ge>"),
        _ => None,
    }
}

/// Capacity in bytes of an on-core buffer, used by the per-function bump allocator.
pub fn capacity(loc: &str, target: pld_ir::Target) -> u64 {
    let a5 = target == pld_ir::Target::A5;
    match loc {
        "vec" => {
            if a5 {
                256 * 1024
            } else {
                192 * 1024
            }
        }
        "mat" => 512 * 1024,
        "left" | "right" => 64 * 1024,
        "acc" => {
            if a5 {
                256 * 1024
            } else {
                128 * 1024
            }
        }
        "bias" => 1024,
        _ => 4096,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        assert_eq!(elem(DataType::FP32).unwrap(), "f32");
        assert_eq!(elem(DataType::HF8).unwrap(), "!pto.hif8");
        assert!(elem(DataType::INT4).is_err());
        assert!(loc(Some(MemorySpace::Ddr)).is_err());
        assert_eq!(
            partition_view(&[Some(1), None], "f16").to_string(),
            "!pto.partition_tensor_view<1x?xf16>"
        );
        assert_eq!(tensor_view(2, "i32").to_string(), "!pto.tensor_view<?x?xi32>");
        assert_eq!(wait_attr(1), Some("#pto<wait_cmp ge>"));
        assert_eq!(MTy::of_scalar(DataType::UINT32).unwrap(), MTy::Int(32));
    }
}
