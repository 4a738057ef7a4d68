//! Host tensors: the dtype, shape and bytes a run takes as input and gives back as output.
//!
//! Guarantees: a tensor's bytes are its elements in row-major order, little-endian, each
//! encoded as its dtype by [`crate::elem`] (the `from_*` constructors round each value to the
//! dtype there).

use pld_ir::DataType;
use std::collections::HashMap;

/// A host tensor: dtype, shape and little-endian bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTensor {
    /// Element type.
    pub dtype: DataType,
    /// Shape.
    pub shape: Vec<usize>,
    /// `shape.product() * dtype.bytes()` bytes.
    pub data: Vec<u8>,
}

impl HostTensor {
    /// A tensor from `f64` values, rounded to `dtype`.
    pub fn from_f64(dtype: DataType, shape: Vec<usize>, vals: &[f64]) -> HostTensor {
        let mut data = vec![0u8; vals.len() * dtype.bytes() as usize];
        crate::elem::encode_all(dtype, vals, &mut data);
        HostTensor { dtype, shape, data }
    }

    /// An FP32 tensor.
    pub fn from_f32(shape: Vec<usize>, vals: &[f32]) -> HostTensor {
        let v: Vec<f64> = vals.iter().map(|&x| f64::from(x)).collect();
        HostTensor::from_f64(DataType::FP32, shape, &v)
    }

    /// An INT32 tensor.
    pub fn from_i32(shape: Vec<usize>, vals: &[i32]) -> HostTensor {
        let v: Vec<f64> = vals.iter().map(|&x| f64::from(x)).collect();
        HostTensor::from_f64(DataType::INT32, shape, &v)
    }

    /// A zero tensor.
    pub fn zeros(dtype: DataType, shape: Vec<usize>) -> HostTensor {
        let n: usize = shape.iter().product();
        HostTensor { dtype, shape, data: vec![0; n * dtype.bytes() as usize] }
    }

    /// Number of elements.
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// The elements as `f64`.
    pub fn to_f64(&self) -> Vec<f64> {
        let eb = self.dtype.bytes() as usize;
        if !crate::elem::supported(self.dtype) || eb == 0 {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(self.data.len() / eb);
        crate::elem::decode_all(self.dtype, &self.data, &mut out);
        out
    }

    /// The elements as `f32`.
    pub fn to_f32(&self) -> Vec<f32> {
        self.to_f64().into_iter().map(|x| x as f32).collect()
    }
}

/// Named host inputs.
pub type Inputs = HashMap<String, HostTensor>;
