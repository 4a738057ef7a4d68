//! Signal-matrix layouts of the collectives: the shape of the INT32 signal window
//! each schedule needs and which cell a given (rank, round, block) uses.
//!
//! Every `pld.tensor.*` collective synchronises through a self-clearing credit
//! barrier over int32 cells of a signal window (seed, "Barrier-signal protocol").
//! The schedules differ only in how the cells are laid out:
//!
//! | layout | shape | cell |
//! |---|---|---|
//! | mesh | `[NR, 1]` | src rank `s` → row `s`, col 0 |
//! | ring | `[2(NR-1), NR]` | (round row, rank) → `row * NR + rank` |
//! | host ring | `[2(NR-1)+1, NR]` | as ring, plus one return-barrier row |
//! | multi-core | `[NR, stride]` | (rank, block) → `rank * stride + block` |
//!
//! A rank waits on cells of its *own* window and notifies cells of a *peer's*
//! window. In the peer-major layouts (mesh, multi-core), block `b` of rank `me`
//! waits on `peer * stride + b` for every peer and notifies peer `p` at
//! `me * stride + b`, so every (peer, block) pair owns an independent counter.
//!
//! All cell functions validate their inputs and return [`SignalLayoutError`]
//! rather than panicking, because the ranks and blocks come from user programs.

use core::fmt;

use crate::comm_context::COMM_MAX_RANK_NUM;

/// Bytes per signal cell (cells are INT32).
pub const SIGNAL_CELL_BYTES: u64 = 4;

/// The signal-matrix layout of one collective call.
///
/// Build it with [`SignalLayout::mesh`] and friends (validated), or construct a
/// variant directly and let every cell function validate it on use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignalLayout {
    /// Mesh allreduce / barrier: `[NR, 1]`, one cell per source rank.
    Mesh {
        /// Ranks in the domain.
        nranks: u32,
    },
    /// InCore ring allreduce: `[2*(NR-1), NR]`, one row per ring round.
    Ring {
        /// Ranks in the domain.
        nranks: u32,
    },
    /// Host ring allreduce builtin: `[2*(NR-1)+1, NR]`, the ring rows plus one
    /// row for the return barrier.
    HostRing {
        /// Ranks in the domain.
        nranks: u32,
    },
    /// Host multi-core mesh allreduce (`core_num > 1`): `[NR, stride]`,
    /// peer-major, one lane per block, `stride >= core_num`.
    MultiCore {
        /// Ranks in the domain.
        nranks: u32,
        /// Cells per rank row (lanes); blocks at or beyond it own no lane.
        stride: u32,
    },
}

/// An invalid layout, or a rank / row / block outside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SignalLayoutError {
    /// `nranks` is outside `1..=64`.
    RankCountOutOfRange {
        /// The rejected rank count.
        nranks: u32,
    },
    /// A multi-core layout with `stride == 0`.
    ZeroStride,
    /// A rank index at or beyond `nranks`.
    RankOutOfRange {
        /// The rejected rank.
        rank: u32,
        /// Ranks in the layout.
        nranks: u32,
    },
    /// A row index at or beyond the number of rows.
    RowOutOfRange {
        /// The rejected row.
        row: u64,
        /// Rows in the layout.
        rows: u64,
    },
    /// A block (lane) index at or beyond the stride.
    BlockOutOfRange {
        /// The rejected block.
        block: u32,
        /// Lanes per rank row.
        stride: u32,
    },
    /// A cell function asked of a layout that does not have that addressing.
    WrongLayout {
        /// What was asked (`"ring_cell"`).
        function: &'static str,
        /// The layout it was asked of (`"mesh"`).
        layout: &'static str,
    },
}

impl fmt::Display for SignalLayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::RankCountOutOfRange { nranks } => {
                write!(f, "signal rank count {nranks} is out of range (valid: 1..={COMM_MAX_RANK_NUM})")
            }
            Self::ZeroStride => f.write_str("multi-core signal stride must be at least 1"),
            Self::RankOutOfRange { rank, nranks } => {
                write!(f, "rank {rank} is out of range for a signal of {nranks} ranks")
            }
            Self::RowOutOfRange { row, rows } => {
                write!(f, "signal row {row} is out of range for a signal of {rows} rows")
            }
            Self::BlockOutOfRange { block, stride } => {
                write!(f, "block {block} has no lane in a signal of stride {stride}")
            }
            Self::WrongLayout { function, layout } => {
                write!(f, "{function} does not apply to a {layout} signal")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for SignalLayoutError {}

impl SignalLayout {
    /// A validated mesh layout.
    pub fn mesh(nranks: u32) -> Result<Self, SignalLayoutError> {
        Self::Mesh { nranks }.validated()
    }

    /// A validated ring layout.
    pub fn ring(nranks: u32) -> Result<Self, SignalLayoutError> {
        Self::Ring { nranks }.validated()
    }

    /// A validated host-ring layout.
    pub fn host_ring(nranks: u32) -> Result<Self, SignalLayoutError> {
        Self::HostRing { nranks }.validated()
    }

    /// A validated multi-core layout.
    pub fn multi_core(nranks: u32, stride: u32) -> Result<Self, SignalLayoutError> {
        Self::MultiCore { nranks, stride }.validated()
    }

    fn validated(self) -> Result<Self, SignalLayoutError> {
        self.validate().map(|()| self)
    }

    /// Checks `1 <= nranks <= 64` and, for multi-core, `stride >= 1`.
    pub fn validate(&self) -> Result<(), SignalLayoutError> {
        let nranks = self.nranks();
        if nranks == 0 || nranks as usize > COMM_MAX_RANK_NUM {
            return Err(SignalLayoutError::RankCountOutOfRange { nranks });
        }
        if let Self::MultiCore { stride: 0, .. } = self {
            return Err(SignalLayoutError::ZeroStride);
        }
        Ok(())
    }

    /// Ranks in the domain.
    pub fn nranks(&self) -> u32 {
        match *self {
            Self::Mesh { nranks }
            | Self::Ring { nranks }
            | Self::HostRing { nranks }
            | Self::MultiCore { nranks, .. } => nranks,
        }
    }

    /// The layout's name in messages (`"mesh"`, `"ring"`, `"host ring"`, `"multi-core"`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Mesh { .. } => "mesh",
            Self::Ring { .. } => "ring",
            Self::HostRing { .. } => "host ring",
            Self::MultiCore { .. } => "multi-core",
        }
    }

    /// `[rows, cols]` of the signal matrix: mesh `[NR, 1]`, ring `[2(NR-1), NR]`,
    /// host ring `[2(NR-1)+1, NR]`, multi-core `[NR, stride]`.
    ///
    /// Exact for valid layouts; never panics on invalid ones.
    pub fn shape(&self) -> [u64; 2] {
        let nr = u64::from(self.nranks());
        let ring_rows = 2 * nr.saturating_sub(1);
        match *self {
            Self::Mesh { .. } => [nr, 1],
            Self::Ring { .. } => [ring_rows, nr],
            Self::HostRing { .. } => [ring_rows + 1, nr],
            Self::MultiCore { stride, .. } => [nr, u64::from(stride)],
        }
    }

    /// Number of cells, `rows * cols` (saturating for invalid layouts).
    pub fn cells(&self) -> u64 {
        let [rows, cols] = self.shape();
        rows.saturating_mul(cols)
    }

    /// Size of the signal window in bytes, `cells * 4` (saturating for invalid layouts).
    pub fn byte_size(&self) -> u64 {
        self.cells().saturating_mul(SIGNAL_CELL_BYTES)
    }

    /// Row-major index of cell `[row, col]`, bounds-checked against [`shape`](Self::shape).
    pub fn cell(&self, row: u64, col: u64) -> Result<u64, SignalLayoutError> {
        self.validate()?;
        let [rows, cols] = self.shape();
        if row >= rows {
            return Err(SignalLayoutError::RowOutOfRange { row, rows });
        }
        if col >= cols {
            // Columns are ranks (ring) or lanes (mesh, multi-core).
            return Err(match *self {
                Self::Ring { nranks } | Self::HostRing { nranks } => {
                    SignalLayoutError::RankOutOfRange { rank: u32::try_from(col).unwrap_or(u32::MAX), nranks }
                }
                _ => SignalLayoutError::BlockOutOfRange {
                    block: u32::try_from(col).unwrap_or(u32::MAX),
                    stride: u32::try_from(cols).unwrap_or(u32::MAX),
                },
            });
        }
        Ok(row * cols + col)
    }

    fn check_rank(&self, rank: u32) -> Result<(), SignalLayoutError> {
        let nranks = self.nranks();
        if rank >= nranks {
            return Err(SignalLayoutError::RankOutOfRange { rank, nranks });
        }
        Ok(())
    }

    /// Cell of lane `block` in row `rank` of a peer-major layout (mesh: stride 1).
    fn lane_cell(&self, function: &'static str, rank: u32, block: u32) -> Result<u64, SignalLayoutError> {
        self.validate()?;
        match *self {
            Self::Mesh { .. } | Self::MultiCore { .. } => {
                self.check_rank(rank)?;
                self.cell(u64::from(rank), u64::from(block))
            }
            Self::Ring { .. } | Self::HostRing { .. } => {
                Err(SignalLayoutError::WrongLayout { function, layout: self.name() })
            }
        }
    }

    /// Mesh: the cell that source rank `src` credits, `[src, 0]` (= `src`).
    pub fn mesh_cell(&self, src: u32) -> Result<u64, SignalLayoutError> {
        match self {
            Self::Mesh { .. } => self.lane_cell("mesh_cell", src, 0),
            _ => Err(SignalLayoutError::WrongLayout { function: "mesh_cell", layout: self.name() }),
        }
    }

    /// Mesh / multi-core: the cell of *my own* window that block `block` waits on
    /// for `peer`'s credit, `peer * stride + block`.
    pub fn wait_cell(&self, peer: u32, block: u32) -> Result<u64, SignalLayoutError> {
        self.lane_cell("wait_cell", peer, block)
    }

    /// Mesh / multi-core: the cell of *a peer's* window that block `block` of rank
    /// `my_rank` notifies, `my_rank * stride + block`.
    pub fn notify_cell(&self, my_rank: u32, block: u32) -> Result<u64, SignalLayoutError> {
        self.lane_cell("notify_cell", my_rank, block)
    }

    /// Ring / host ring: the cell of round row `row` for `rank`, `row * NR + rank`.
    pub fn ring_cell(&self, row: u64, rank: u32) -> Result<u64, SignalLayoutError> {
        self.validate()?;
        match self {
            Self::Ring { .. } | Self::HostRing { .. } => {
                self.check_rank(rank)?;
                self.cell(row, u64::from(rank))
            }
            _ => Err(SignalLayoutError::WrongLayout { function: "ring_cell", layout: self.name() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;

    use SignalLayoutError as E;

    #[test]
    fn shapes_follow_the_seed() {
        assert_eq!(SignalLayout::mesh(4).unwrap().shape(), [4, 1]);
        assert_eq!(SignalLayout::ring(4).unwrap().shape(), [6, 4]);
        assert_eq!(SignalLayout::host_ring(4).unwrap().shape(), [7, 4]);
        assert_eq!(SignalLayout::multi_core(4, 3).unwrap().shape(), [4, 3]);
        assert_eq!(SignalLayout::ring(1).unwrap().shape(), [0, 1]);
        assert_eq!(SignalLayout::host_ring(1).unwrap().shape(), [1, 1]);
        assert_eq!(SignalLayout::ring(64).unwrap().shape(), [126, 64]);
        assert_eq!(SignalLayout::ring(8).unwrap().cells(), 14 * 8);
        assert_eq!(SignalLayout::host_ring(8).unwrap().cells(), 15 * 8);
        // The synthesized host allreduce signal is ws * core_num * 4 bytes.
        assert_eq!(SignalLayout::multi_core(8, 4).unwrap().byte_size(), 8 * 4 * 4);
        assert_eq!(SignalLayout::mesh(2).unwrap().byte_size(), 8);
    }

    #[test]
    fn constructors_validate() {
        assert_eq!(SignalLayout::mesh(0), Err(E::RankCountOutOfRange { nranks: 0 }));
        assert_eq!(SignalLayout::ring(65), Err(E::RankCountOutOfRange { nranks: 65 }));
        assert_eq!(SignalLayout::host_ring(u32::MAX), Err(E::RankCountOutOfRange { nranks: u32::MAX }));
        assert_eq!(SignalLayout::multi_core(4, 0), Err(E::ZeroStride));
        assert_eq!(SignalLayout::multi_core(0, 0), Err(E::RankCountOutOfRange { nranks: 0 }));
        assert!(SignalLayout::mesh(1).is_ok());
        assert!(SignalLayout::multi_core(64, u32::MAX).is_ok());
    }

    #[test]
    fn invalid_layouts_never_panic() {
        let bad = [
            SignalLayout::Mesh { nranks: 0 },
            SignalLayout::Ring { nranks: 0 },
            SignalLayout::HostRing { nranks: 0 },
            SignalLayout::MultiCore { nranks: 3, stride: 0 },
            SignalLayout::Ring { nranks: u32::MAX },
        ];
        for layout in bad {
            let _ = layout.shape();
            let _ = layout.cells();
            let _ = layout.byte_size();
            assert!(layout.validate().is_err());
            assert!(layout.cell(0, 0).is_err());
            assert!(layout.mesh_cell(0).is_err());
            assert!(layout.wait_cell(0, 0).is_err());
            assert!(layout.notify_cell(0, 0).is_err());
            assert!(layout.ring_cell(0, 0).is_err());
        }
        assert_eq!(SignalLayout::Ring { nranks: 0 }.shape(), [0, 0]);
    }

    #[test]
    fn mesh_cells() {
        let mesh = SignalLayout::mesh(4).unwrap();
        let cells: Vec<u64> = (0..4).map(|s| mesh.mesh_cell(s).unwrap()).collect();
        assert_eq!(cells, [0, 1, 2, 3]);
        assert_eq!(mesh.wait_cell(3, 0), Ok(3));
        assert_eq!(mesh.notify_cell(2, 0), Ok(2));
        assert_eq!(mesh.mesh_cell(4), Err(E::RankOutOfRange { rank: 4, nranks: 4 }));
        assert_eq!(mesh.wait_cell(0, 1), Err(E::BlockOutOfRange { block: 1, stride: 1 }));
        assert_eq!(mesh.ring_cell(0, 0), Err(E::WrongLayout { function: "ring_cell", layout: "mesh" }));
    }

    #[test]
    fn ring_cells() {
        let ring = SignalLayout::ring(4).unwrap();
        assert_eq!(ring.ring_cell(0, 0), Ok(0));
        assert_eq!(ring.ring_cell(0, 3), Ok(3));
        assert_eq!(ring.ring_cell(2, 1), Ok(9));
        assert_eq!(ring.ring_cell(5, 3), Ok(23));
        assert_eq!(ring.ring_cell(6, 0), Err(E::RowOutOfRange { row: 6, rows: 6 }));
        assert_eq!(ring.ring_cell(0, 4), Err(E::RankOutOfRange { rank: 4, nranks: 4 }));
        let host = SignalLayout::host_ring(4).unwrap();
        assert_eq!(host.ring_cell(6, 3), Ok(27), "the return-barrier row exists");
        assert_eq!(host.ring_cell(7, 0), Err(E::RowOutOfRange { row: 7, rows: 7 }));
        assert_eq!(host.wait_cell(0, 0), Err(E::WrongLayout { function: "wait_cell", layout: "host ring" }));
        assert_eq!(ring.mesh_cell(0), Err(E::WrongLayout { function: "mesh_cell", layout: "ring" }));
        assert_eq!(SignalLayout::ring(1).unwrap().ring_cell(0, 0), Err(E::RowOutOfRange { row: 0, rows: 0 }));
    }

    #[test]
    fn multi_core_lanes_are_independent() {
        let (nranks, stride) = (4u32, 3u32);
        let sig = SignalLayout::multi_core(nranks, stride).unwrap();
        assert_eq!(sig.wait_cell(2, 1), Ok(2 * 3 + 1));
        assert_eq!(sig.notify_cell(1, 2), Ok(3 + 2));
        // Rank `me` block `b` notifies peer p at notify_cell(me, b); p's block b
        // waits on wait_cell(me, b) in its own window: the same index.
        for me in 0..nranks {
            for b in 0..stride {
                assert_eq!(sig.notify_cell(me, b), sig.wait_cell(me, b));
            }
        }
        // Every (rank, block) pair owns a distinct cell and together they tile the matrix.
        let mut all: Vec<u64> = (0..nranks)
            .flat_map(|r| (0..stride).map(move |b| (r, b)))
            .map(|(r, b)| sig.wait_cell(r, b).unwrap())
            .collect();
        all.sort_unstable();
        assert_eq!(all, (0..sig.cells()).collect::<Vec<_>>());
        assert_eq!(sig.wait_cell(0, 3), Err(E::BlockOutOfRange { block: 3, stride: 3 }));
        assert_eq!(sig.notify_cell(4, 0), Err(E::RankOutOfRange { rank: 4, nranks: 4 }));
        assert_eq!(sig.mesh_cell(0), Err(E::WrongLayout { function: "mesh_cell", layout: "multi-core" }));
    }

    #[test]
    fn generic_cells_are_row_major() {
        let sig = SignalLayout::host_ring(3).unwrap();
        assert_eq!(sig.shape(), [5, 3]);
        assert_eq!(sig.cell(4, 2), Ok(14));
        assert_eq!(sig.cell(0, 3), Err(E::RankOutOfRange { rank: 3, nranks: 3 }));
        let mc = SignalLayout::multi_core(2, 5).unwrap();
        assert_eq!(mc.cell(1, 4), Ok(9));
        assert_eq!(mc.cell(1, 5), Err(E::BlockOutOfRange { block: 5, stride: 5 }));
        assert_eq!(mc.cell(u64::MAX, 0), Err(E::RowOutOfRange { row: u64::MAX, rows: 2 }));
    }

    #[test]
    fn error_messages() {
        assert_eq!(
            E::RankCountOutOfRange { nranks: 0 }.to_string(),
            "signal rank count 0 is out of range (valid: 1..=64)"
        );
        assert_eq!(E::ZeroStride.to_string(), "multi-core signal stride must be at least 1");
        assert_eq!(
            E::BlockOutOfRange { block: 4, stride: 4 }.to_string(),
            "block 4 has no lane in a signal of stride 4"
        );
        assert_eq!(
            E::WrongLayout { function: "ring_cell", layout: "mesh" }.to_string(),
            "ring_cell does not apply to a mesh signal"
        );
    }
}
