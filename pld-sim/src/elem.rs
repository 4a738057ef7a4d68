//! Element encoding: converts between the bytes of a tensor/window and `f64` lanes.
//!
//! Guarantees: every supported dtype (FP32, FP16, BF16 via `half`, INT8/16/32/64, UINT8/16/32,
//! BOOL, INDEX) round-trips exactly through `f64`; storing rounds to the destination type
//! (floats round-to-nearest, integers truncate toward zero and wrap in two's complement), so
//! atomic adds and reductions round per element to the destination type as runtime.md §10.6
//! prescribes. Unsupported dtypes are reported as `None`, never a panic.

use pld_ir::DataType;
use pld_runtime_abi::ReduceOp;

/// Whether the simulator can hold elements of `dt`.
pub fn supported(dt: DataType) -> bool {
    matches!(
        dt,
        DataType::FP32
            | DataType::FP16
            | DataType::BF16
            | DataType::INT8
            | DataType::INT16
            | DataType::INT32
            | DataType::INT64
            | DataType::INDEX
            | DataType::UINT8
            | DataType::UINT16
            | DataType::UINT32
            | DataType::BOOL
    )
}

/// Decodes one element from `b` (which holds at least `dt.bytes()` bytes).
pub fn decode(dt: DataType, b: &[u8]) -> f64 {
    match dt {
        DataType::FP32 => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        DataType::FP16 => half::f16::from_le_bytes([b[0], b[1]]).to_f64(),
        DataType::BF16 => half::bf16::from_le_bytes([b[0], b[1]]).to_f64(),
        DataType::INT8 => f64::from(b[0] as i8),
        DataType::UINT8 | DataType::BOOL => f64::from(b[0]),
        DataType::INT16 => f64::from(i16::from_le_bytes([b[0], b[1]])),
        DataType::UINT16 => f64::from(u16::from_le_bytes([b[0], b[1]])),
        DataType::INT32 => f64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        DataType::UINT32 => f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        _ => i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f64,
    }
}

fn to_int(v: f64) -> i64 {
    if v.is_nan() {
        0
    } else {
        v.trunc() as i64
    }
}

/// Encodes `v` as `dt` into `b`, rounding to the type.
pub fn encode(dt: DataType, v: f64, b: &mut [u8]) {
    match dt {
        DataType::FP32 => b[..4].copy_from_slice(&(v as f32).to_le_bytes()),
        DataType::FP16 => b[..2].copy_from_slice(&half::f16::from_f64(v).to_le_bytes()),
        DataType::BF16 => b[..2].copy_from_slice(&half::bf16::from_f64(v).to_le_bytes()),
        DataType::INT8 | DataType::UINT8 => b[0] = to_int(v) as u8,
        DataType::BOOL => b[0] = u8::from(v != 0.0),
        DataType::INT16 | DataType::UINT16 => b[..2].copy_from_slice(&(to_int(v) as u16).to_le_bytes()),
        DataType::INT32 | DataType::UINT32 => b[..4].copy_from_slice(&(to_int(v) as u32).to_le_bytes()),
        _ => b[..8].copy_from_slice(&to_int(v).to_le_bytes()),
    }
}

/// `v` rounded to what `dt` can hold (the value a store then a load would give).
pub fn round(dt: DataType, v: f64) -> f64 {
    let mut b = [0u8; 8];
    encode(dt, v, &mut b);
    decode(dt, &b)
}

/// Combines two lanes with a reduce op (no rounding).
pub fn reduce(op: ReduceOp, a: f64, b: f64) -> f64 {
    match op {
        ReduceOp::Sum => a + b,
        ReduceOp::Max => {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.max(b)
            }
        }
        ReduceOp::Min => {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.min(b)
            }
        }
        ReduceOp::Prod => a * b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rounding() {
        for dt in [DataType::FP32, DataType::FP16, DataType::BF16, DataType::INT8, DataType::INT32] {
            assert_eq!(round(dt, 3.0), 3.0, "{dt}");
        }
        assert_eq!(round(DataType::FP16, 1.0 + 1.0 / 4096.0), 1.0);
        assert_eq!(round(DataType::INT8, 130.0), -126.0);
        assert_eq!(round(DataType::INT32, -2.7), -2.0);
        let mut b = [0xFFu8; 4];
        assert!(decode(DataType::FP32, &b).is_nan());
        encode(DataType::INT32, -4.0, &mut b);
        assert_eq!(i32::from_le_bytes(b), -4);
    }

    #[test]
    fn reduce_ops() {
        assert_eq!(reduce(ReduceOp::Sum, 1.0, 2.0), 3.0);
        assert_eq!(reduce(ReduceOp::Max, 1.0, 2.0), 2.0);
        assert_eq!(reduce(ReduceOp::Min, 1.0, 2.0), 1.0);
        assert_eq!(reduce(ReduceOp::Prod, 3.0, 2.0), 6.0);
        assert!(reduce(ReduceOp::Max, f64::NAN, 2.0).is_nan());
    }
}
