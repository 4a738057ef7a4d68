//! Element encoding: converts between the bytes of a tensor/window and `f64` lanes.
//!
//! Guarantees: every supported dtype (FP32, FP16, BF16 via `half`, INT8/16/32/64, UINT8/16/32,
//! BOOL, INDEX) round-trips exactly through `f64`; storing rounds to the destination type
//! (floats round-to-nearest, integers truncate toward zero and wrap in two's complement), so
//! atomic adds and reductions round per element to the destination type as runtime.md §10.6
//! prescribes. Unsupported dtypes are reported as `None`, never a panic.
//!
//! The slice forms ([`decode_all`], [`encode_all`], [`round_all`]) dispatch on the dtype once per
//! slice, not per element, and give exactly what the one-element forms give lane by lane.

use pld_ir::DataType;
use pld_runtime_abi::ReduceOp;

/// Every dtype the simulator can hold.
pub const SUPPORTED: [DataType; 12] = [
    DataType::FP32,
    DataType::FP16,
    DataType::BF16,
    DataType::INT8,
    DataType::INT16,
    DataType::INT32,
    DataType::INT64,
    DataType::INDEX,
    DataType::UINT8,
    DataType::UINT16,
    DataType::UINT32,
    DataType::BOOL,
];

/// Whether the simulator can hold elements of `dt`.
pub fn supported(dt: DataType) -> bool {
    SUPPORTED.contains(&dt)
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
    let mut one = [v];
    round_all(dt, &mut one);
    one[0]
}

/// Appends the elements of `bytes` (whole `dt` elements, row-major) to `out` as `f64`, as
/// [`decode`] gives each.
pub fn decode_all(dt: DataType, bytes: &[u8], out: &mut Vec<f64>) {
    fn each<const N: usize>(bytes: &[u8], out: &mut Vec<f64>, f: impl Fn([u8; N]) -> f64) {
        out.extend(bytes.chunks_exact(N).map(|c| f(c.try_into().unwrap_or([0; N]))));
    }
    match dt {
        DataType::FP32 => each(bytes, out, |b| f64::from(f32::from_le_bytes(b))),
        DataType::FP16 => each(bytes, out, |b| half::f16::from_le_bytes(b).to_f64()),
        DataType::BF16 => each(bytes, out, |b| half::bf16::from_le_bytes(b).to_f64()),
        DataType::INT8 => each(bytes, out, |[b]: [u8; 1]| f64::from(b as i8)),
        DataType::UINT8 | DataType::BOOL => each(bytes, out, |[b]: [u8; 1]| f64::from(b)),
        DataType::INT16 => each(bytes, out, |b| f64::from(i16::from_le_bytes(b))),
        DataType::UINT16 => each(bytes, out, |b| f64::from(u16::from_le_bytes(b))),
        DataType::INT32 => each(bytes, out, |b| f64::from(i32::from_le_bytes(b))),
        DataType::UINT32 => each(bytes, out, |b| f64::from(u32::from_le_bytes(b))),
        _ => each(bytes, out, |b| i64::from_le_bytes(b) as f64),
    }
}

/// Encodes `vals` as `dt` elements into `out` (`vals.len() * dt.bytes()` bytes; a shorter `out`
/// takes the elements that fit), rounding as [`encode`] does.
pub fn encode_all(dt: DataType, vals: &[f64], out: &mut [u8]) {
    fn each<const N: usize>(vals: &[f64], out: &mut [u8], f: impl Fn(f64) -> [u8; N]) {
        for (b, &v) in out.chunks_exact_mut(N).zip(vals) {
            b.copy_from_slice(&f(v));
        }
    }
    match dt {
        DataType::FP32 => each(vals, out, |v| (v as f32).to_le_bytes()),
        DataType::FP16 => each(vals, out, |v| half::f16::from_f64(v).to_le_bytes()),
        DataType::BF16 => each(vals, out, |v| half::bf16::from_f64(v).to_le_bytes()),
        DataType::INT8 | DataType::UINT8 => each(vals, out, |v| [to_int(v) as u8]),
        DataType::BOOL => each(vals, out, |v| [u8::from(v != 0.0)]),
        DataType::INT16 | DataType::UINT16 => each(vals, out, |v| (to_int(v) as u16).to_le_bytes()),
        DataType::INT32 | DataType::UINT32 => each(vals, out, |v| (to_int(v) as u32).to_le_bytes()),
        _ => each(vals, out, |v| to_int(v).to_le_bytes()),
    }
}

/// Rounds every lane to what `dt` can hold, as [`round`] does each.
pub fn round_all(dt: DataType, vals: &mut [f64]) {
    fn each(vals: &mut [f64], f: impl Fn(f64) -> f64) {
        vals.iter_mut().for_each(|v| *v = f(*v));
    }
    match dt {
        DataType::FP32 => each(vals, |v| f64::from(v as f32)),
        DataType::FP16 => each(vals, |v| half::f16::from_f64(v).to_f64()),
        DataType::BF16 => each(vals, |v| half::bf16::from_f64(v).to_f64()),
        DataType::INT8 => each(vals, |v| f64::from(to_int(v) as i8)),
        DataType::UINT8 => each(vals, |v| f64::from(to_int(v) as u8)),
        DataType::BOOL => each(vals, |v| if v != 0.0 { 1.0 } else { 0.0 }),
        DataType::INT16 => each(vals, |v| f64::from(to_int(v) as i16)),
        DataType::UINT16 => each(vals, |v| f64::from(to_int(v) as u16)),
        DataType::INT32 => each(vals, |v| f64::from(to_int(v) as i32)),
        DataType::UINT32 => each(vals, |v| f64::from(to_int(v) as u32)),
        _ => each(vals, |v| to_int(v) as f64),
    }
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
pub(crate) mod tests {
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

    /// Values that exercise rounding, wrapping, signs and NaN.
    pub(crate) const TRICKY: [f64; 16] = [
        0.0,
        -0.0,
        1.0 / 3.0,
        -2.7,
        130.0,
        -129.5,
        65504.0,
        70000.0,
        1e-8,
        1e30,
        -1e30,
        4294967297.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0 + 1.0 / 4096.0,
    ];

    pub(crate) fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn slice_forms_agree_with_the_element_forms() {
        for dt in SUPPORTED {
            let eb = dt.bytes() as usize;
            // encode_all = encode lane by lane.
            let mut bytes = vec![0u8; TRICKY.len() * eb];
            encode_all(dt, &TRICKY, &mut bytes);
            for (i, &v) in TRICKY.iter().enumerate() {
                let mut one = [0u8; 8];
                encode(dt, v, &mut one);
                assert_eq!(bytes[i * eb..(i + 1) * eb], one[..eb], "{dt} encode {v}");
            }
            // decode_all = decode lane by lane.
            let mut back = Vec::new();
            decode_all(dt, &bytes, &mut back);
            assert_eq!(back.len(), TRICKY.len(), "{dt}");
            for (i, &got) in back.iter().enumerate() {
                assert!(same(got, decode(dt, &bytes[i * eb..])), "{dt} decode lane {i}");
            }
            // round_all = a store then a load, lane by lane.
            let mut r = TRICKY;
            round_all(dt, &mut r);
            for (i, (&got, &want)) in r.iter().zip(&back).enumerate() {
                assert!(same(got, want), "{dt} round {}: {got} vs {want}", TRICKY[i]);
            }
        }
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
