//! Host tensors whose bytes are produced on demand: a distributed run's process holds only the
//! parts of its host tensors that it touches (docs/DECISIONS.md D-mpi-7).
//!
//! Guarantees: a [`HostBuf`] reads and writes exactly like the byte vector it derefs to, once
//! [`HostBuf::ready`] has been called for the range: every byte of a lazy buffer equals its
//! source's byte at the same offset the first time any access reaches its chunk, and a chunk
//! is filled at most once (later writes are never overwritten by the source). A buffer
//! without a source is a plain zero-initialised vector (untouched pages of a large one are
//! not resident: it is allocated zeroed).

use pld_ir::DataType;
use std::fmt;
use std::sync::Arc;

/// Bytes of one lazily filled chunk.
pub const CHUNK: usize = 1 << 16;

/// Where a lazy host tensor's bytes come from.
pub trait HostSource: Send + Sync + fmt::Debug {
    /// Writes the tensor's bytes `[offset, offset + out.len())` into `out`.
    fn fill(&self, offset: usize, out: &mut [u8]);
}

/// An input given as a source instead of bytes ([`crate::SimConfig::lazy_inputs`]).
#[derive(Clone, Debug)]
pub struct LazyInput {
    /// Element type.
    pub dtype: DataType,
    /// Shape.
    pub shape: Vec<usize>,
    /// Its bytes.
    pub source: Arc<dyn HostSource>,
}

impl LazyInput {
    /// Every byte, filled now.
    pub fn materialize(&self) -> crate::host::HostTensor {
        let n: usize = self.shape.iter().product::<usize>() * self.dtype.bytes() as usize;
        let mut data = vec![0u8; n];
        for (k, c) in data.chunks_mut(CHUNK).enumerate() {
            self.source.fill(k * CHUNK, c);
        }
        crate::host::HostTensor { dtype: self.dtype, shape: self.shape.clone(), data }
    }
}

/// The chunks of a lazy buffer not filled yet.
struct Pending {
    source: Arc<dyn HostSource>,
    filled: Vec<bool>,
    left: usize,
}

/// One host buffer's bytes, and (for a lazy one) which chunks its source has filled.
#[derive(Default)]
pub struct HostBuf {
    bytes: Vec<u8>,
    pending: Option<Pending>,
}

impl HostBuf {
    /// A buffer holding `bytes`.
    pub fn new(bytes: Vec<u8>) -> HostBuf {
        HostBuf { bytes, pending: None }
    }

    /// A buffer of `len` bytes filled from `source` chunk by chunk as accesses reach them.
    pub fn lazy(len: usize, source: Arc<dyn HostSource>) -> HostBuf {
        let chunks = len.div_ceil(CHUNK);
        HostBuf {
            bytes: vec![0u8; len],
            pending: Some(Pending { source, filled: vec![false; chunks], left: chunks }),
        }
    }

    /// Fills the chunks of `[lo, hi)` (clamped to the buffer) the source has not filled.
    pub fn ready(&mut self, lo: usize, hi: usize) {
        let Some(p) = &mut self.pending else { return };
        let hi = hi.min(self.bytes.len());
        if lo >= hi {
            return;
        }
        for k in lo / CHUNK..hi.div_ceil(CHUNK) {
            if !std::mem::replace(&mut p.filled[k], true) {
                let end = ((k + 1) * CHUNK).min(self.bytes.len());
                p.source.fill(k * CHUNK, &mut self.bytes[k * CHUNK..end]);
                p.left -= 1;
            }
        }
        if p.left == 0 {
            self.pending = None;
        }
    }

    /// Every byte filled.
    pub fn ready_all(&mut self) {
        self.ready(0, self.bytes.len());
    }

    /// The bytes, every one filled.
    pub fn into_bytes(mut self) -> Vec<u8> {
        self.ready_all();
        self.bytes
    }

    /// The bytes as they are: chunks the source never filled hold zeros.
    pub fn into_unfilled(self) -> Vec<u8> {
        self.bytes
    }
}

impl std::ops::Deref for HostBuf {
    type Target = Vec<u8>;
    fn deref(&self) -> &Vec<u8> {
        &self.bytes
    }
}

impl std::ops::DerefMut for HostBuf {
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }
}

/// The seeded values `pld run` gives an input that is not given (`--seed`): element `k` of a
/// tensor is the `k + 1`-th draw of a SplitMix64 generator whose state was `state` before
/// the tensor — floats multiples of 1/8 in `[-8, 8)` (exact in FP16 too), integers `0..=9` —
/// so any element can be made without the ones before it.
#[derive(Clone, Copy, Debug)]
pub struct Seeded {
    /// Element type.
    pub dtype: DataType,
    /// The generator's state before the tensor's first element.
    pub state: u64,
}

impl Seeded {
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

    /// The generator's state after the tensor's `n` elements (the next tensor's `state`).
    pub fn after(&self, n: usize) -> u64 {
        self.state.wrapping_add(Self::GAMMA.wrapping_mul(n as u64))
    }

    /// Element `k`.
    pub fn value(&self, k: usize) -> f64 {
        let mut z = self.after(k + 1);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        if self.dtype.is_float() {
            (z % 128) as f64 / 8.0 - 8.0
        } else {
            (z % 10) as f64
        }
    }
}

impl HostSource for Seeded {
    fn fill(&self, offset: usize, out: &mut [u8]) {
        // As `HostTensor::from_f64` encodes the whole tensor's values.
        let eb = (self.dtype.bytes() as usize).max(1);
        let first = offset / eb;
        let vals: Vec<f64> = (first..first + out.len() / eb).map(|k| self.value(k)).collect();
        crate::elem::encode_all(self.dtype, &vals, out);
    }
}

/// Zeros.
#[derive(Clone, Copy, Debug)]
pub struct Zeros;

impl HostSource for Zeros {
    fn fill(&self, _offset: usize, out: &mut [u8]) {
        out.fill(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Byte `i` is `i % 251`; counts the bytes it produced.
    #[derive(Debug, Default)]
    struct Counting(AtomicUsize);

    impl HostSource for Counting {
        fn fill(&self, offset: usize, out: &mut [u8]) {
            self.0.fetch_add(out.len(), Ordering::Relaxed);
            for (i, b) in out.iter_mut().enumerate() {
                *b = ((offset + i) % 251) as u8;
            }
        }
    }

    #[test]
    fn a_lazy_buffer_fills_only_the_chunks_touched_and_never_over_a_write() {
        let src = Arc::new(Counting::default());
        let len = 3 * CHUNK + 10;
        let mut b = HostBuf::lazy(len, src.clone());
        b.ready(CHUNK + 5, CHUNK + 9);
        assert_eq!(src.0.load(Ordering::Relaxed), CHUNK);
        assert_eq!(b[CHUNK + 7], ((CHUNK + 7) % 251) as u8);
        assert_eq!(b[0], 0, "an untouched chunk stays unfilled");
        b[CHUNK + 7] = 200;
        b.ready(CHUNK, 2 * CHUNK + 1);
        assert_eq!(b[CHUNK + 7], 200, "a filled chunk is not filled again");
        assert_eq!(src.0.load(Ordering::Relaxed), 2 * CHUNK);
        let all = b.into_bytes();
        assert_eq!(src.0.load(Ordering::Relaxed), len);
        assert_eq!(all[3 * CHUNK + 9], ((3 * CHUNK + 9) % 251) as u8);
        assert_eq!(all[CHUNK + 7], 200);
    }

    #[test]
    fn seeded_elements_are_the_generators_draws_in_order() {
        // The sequential SplitMix64 this replaces: one draw per element, state carried over.
        let mut state = 42u64;
        let mut draw = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let s = Seeded { dtype: DataType::FP32, state: 42 };
        let want: Vec<f64> = (0..5).map(|_| (draw() % 128) as f64 / 8.0 - 8.0).collect();
        assert_eq!((0..5).map(|k| s.value(k)).collect::<Vec<_>>(), want);
        let next = Seeded { dtype: DataType::INT32, state: s.after(5) };
        assert_eq!(next.value(0), (draw() % 10) as f64);
        // Bytes filled from the middle equal the whole tensor's.
        let whole = LazyInput { dtype: DataType::FP32, shape: vec![3 * CHUNK / 4], source: Arc::new(s) }
            .materialize();
        let mut part = vec![0u8; 8];
        s.fill(CHUNK + 4, &mut part);
        assert_eq!(&whole.data[CHUNK + 4..CHUNK + 12], &part[..]);
    }
}
