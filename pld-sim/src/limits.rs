//! Size arithmetic and the memory cap.
//!
//! Guarantees: every element count and byte size the simulator derives from user-controlled
//! values (shapes, bindings, window sizes) is computed with checked arithmetic — an overflow,
//! a negative dimension or a count that would wrap is a fault naming the shape, never a panic,
//! an abort or a silently wrapped size; before any window, host tensor or tile is allocated the
//! bytes it needs are compared with [`SimConfig::max_memory`](crate::SimConfig::max_memory), and
//! a run that would exceed it stops with a [`ReportKind::Memory`] fault stating the bytes needed
//! and the limit. The default limit is half the machine's physical memory (`/proc/meminfo`),
//! or 8 GiB where that cannot be read.

use crate::report::{Fault, ReportKind};
use pld_ir::{DataType, Span};
use std::sync::OnceLock;

/// Most bytes one tile's lanes may take (one `f64` per element): on-chip buffers hold
/// kilobytes, so a bigger tile is a size error of the program, not a reason to allocate.
pub const MAX_TILE_BYTES: u64 = 1 << 30;

/// Fallback limit when the physical memory is unknown.
const FALLBACK: u64 = 8 << 30;

/// Half the physical memory (read once per process).
pub fn default_max_memory() -> u64 {
    static MEM: OnceLock<u64> = OnceLock::new();
    *MEM.get_or_init(|| physical_memory().map_or(FALLBACK, |m| m / 2))
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn physical_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The host-tensor bytes a run holds and its limit.
#[derive(Clone, Copy, Debug)]
pub struct MemUse {
    /// Bytes of host tensors allocated so far.
    pub host: u64,
    /// Bytes of every rank's windows (set when they are mapped).
    pub windows: u64,
    /// The run's limit ([`SimConfig::max_memory`](crate::SimConfig::max_memory)).
    pub cap: u64,
}

impl Default for MemUse {
    fn default() -> MemUse {
        MemUse { host: 0, windows: 0, cap: default_max_memory() }
    }
}

impl MemUse {
    /// The most bytes one tile may take now: what the limit leaves after host tensors and
    /// windows, and never more than [`MAX_TILE_BYTES`].
    pub fn tile_cap(&self) -> u64 {
        self.cap.saturating_sub(self.host.saturating_add(self.windows)).min(MAX_TILE_BYTES)
    }

    /// Reserves `bytes` more of host tensors, or the fault saying they do not fit.
    pub fn reserve(&mut self, bytes: u64, what: &str) -> Result<(), Fault> {
        let total = self.host.saturating_add(bytes);
        check_total(total, self.cap, what)?;
        self.host = total;
        Ok(())
    }
}

/// The element count of `shape`, or why there is none (a negative dim or an overflow).
pub fn numel(shape: &[i64]) -> Result<u64, String> {
    shape.iter().try_fold(1u64, |n, &d| {
        let d = u64::try_from(d).map_err(|_| format!("shape {shape:?} has a negative dimension"))?;
        n.checked_mul(d).ok_or_else(|| format!("the element count of shape {shape:?} overflows 64 bits"))
    })
}

/// The byte size of a `dtype` tensor of `shape`.
pub fn byte_size(dtype: DataType, shape: &[i64]) -> Result<u64, String> {
    numel(shape)?
        .checked_mul(dtype.bytes())
        .ok_or_else(|| format!("the byte size of a {dtype} tensor of shape {shape:?} overflows 64 bits"))
}

/// The lane count of a tile of `shape` (one `f64` lane per element), checked against `cap`
/// bytes: the error is the message of a fault at the op creating the tile.
pub fn tile_lanes(shape: &[usize], cap: u64) -> Result<usize, String> {
    let n = shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .ok_or_else(|| format!("the element count of tile shape {shape:?} overflows"))?;
    let bytes = (n as u64).saturating_mul(std::mem::size_of::<f64>() as u64);
    if bytes > cap {
        return Err(format!(
            "a tile of shape {shape:?} needs {} of simulator memory, more than the limit of {} (--max-memory)",
            human(bytes),
            human(cap)
        ));
    }
    Ok(n)
}

/// A memory-limit fault when `needed` bytes exceed `cap`; `what` says what they are for.
pub fn check_total(needed: u64, cap: u64, what: &str) -> Result<(), Fault> {
    if needed <= cap {
        return Ok(());
    }
    Err(Fault::new(
        ReportKind::Memory,
        Span::DUMMY,
        format!(
            "the run needs {} ({needed} bytes) for {what}, more than the limit of {} ({cap} bytes); \
             raise it with --max-memory",
            human(needed),
            human(cap)
        ),
    ))
}

/// `1.5 GiB`, `12 MiB`, `100 B`.
pub fn human(b: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_checked() {
        assert_eq!(numel(&[2, 3]), Ok(6));
        assert!(numel(&[i64::MAX, 64]).is_err());
        assert!(numel(&[4, -1]).is_err());
        // 2^62 elements of 4 bytes wrap to 0 in 64 bits: an error, not a 0-byte tensor.
        assert!(byte_size(DataType::FP32, &[1 << 31, 1 << 31]).is_err());
        assert!(tile_lanes(&[usize::MAX, 64], u64::MAX).is_err());
        assert!(tile_lanes(&[1 << 20, 1 << 20], 1 << 30).unwrap_err().contains("--max-memory"));
        assert_eq!(tile_lanes(&[16, 16], 1 << 30), Ok(256));
        assert_eq!(human(3 << 30), "3.0 GiB");
    }
}
