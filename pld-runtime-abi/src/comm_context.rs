//! `CommContext`: the per-rank, per-comm-domain device handle, byte-identical to
//! simpler's `comm_context.h` and pto-isa's `HcclDeviceContext` (1056 bytes).
//!
//! Codegen reads the struct as an array of `i64` slots (`ctx[2]` is
//! `rankId | rankNum << 32`, `ctx[4 + r]` is `windowsIn[r]`) and the simulator
//! writes it into device memory byte by byte, so the offsets below are part of the
//! ABI. They are written out by hand from the spec table and the struct is pinned
//! to them with `const` assertions: moving, resizing or reordering a field fails
//! the build instead of silently shifting every slot.
//!
//! The only remote addressing mode on the hardware is
//! `peer_address = local_address + (windowsIn[peer] - windowsIn[rankId])`;
//! [`CommContext::peer_offset_bytes`], [`CommContext::peer_offset_elems`] and
//! [`CommContext::peer_address`] compute exactly that.

use core::fmt;
use core::mem::{align_of, offset_of, size_of};

/// Maximum ranks in one comm domain (`COMM_MAX_RANK_NUM`, `HCCL_MAX_RANK_NUM`).
pub const COMM_MAX_RANK_NUM: usize = 64;

/// `size_of::<CommContext>()`.
pub const COMM_CONTEXT_SIZE: usize = 1056;
/// `align_of::<CommContext>()` (natural 64-bit alignment).
pub const COMM_CONTEXT_ALIGN: usize = 8;

/// Byte offset of `workSpace` (u64).
pub const OFFSET_WORK_SPACE: usize = 0;
/// Byte offset of `workSpaceSize` (u64).
pub const OFFSET_WORK_SPACE_SIZE: usize = 8;
/// Byte offset of `rankId` (u32).
pub const OFFSET_RANK_ID: usize = 16;
/// Byte offset of `rankNum` (u32); exactly 4 bytes after `rankId`, which codegen
/// relies on when it loads both as one little-endian `i64` slot.
pub const OFFSET_RANK_NUM: usize = 20;
/// Byte offset of `winSize` (u64).
pub const OFFSET_WIN_SIZE: usize = 24;
/// Byte offset of `windowsIn[0]` (u64 × 64).
pub const OFFSET_WINDOWS_IN: usize = 32;
/// Byte offset of `windowsOut[0]` (u64 × 64).
pub const OFFSET_WINDOWS_OUT: usize = 544;

/// `i64` slot (byte offset / 8) holding `rankId` in its low and `rankNum` in its
/// high 32 bits, as codegen's `pto.load_scalar %ctx[2]` reads it.
pub const SLOT_RANK_PAIR: usize = OFFSET_RANK_ID / 8;
/// `i64` slot of `winSize`.
pub const SLOT_WIN_SIZE: usize = OFFSET_WIN_SIZE / 8;
/// `i64` slot of `windowsIn[0]`; `windowsIn[r]` is slot `SLOT_WINDOWS_IN + r`.
pub const SLOT_WINDOWS_IN: usize = OFFSET_WINDOWS_IN / 8;
/// `i64` slot of `windowsOut[0]`.
pub const SLOT_WINDOWS_OUT: usize = OFFSET_WINDOWS_OUT / 8;

/// The per-rank device-side communication context of one comm domain.
///
/// Field names are the snake_case forms of the C names (`rank_id` is `rankId`).
/// Construct it with [`CommContext::new`] (validated, simulator conventions) or
/// decode device bytes with [`CommContext::from_bytes`] (raw, check with
/// [`CommContext::validate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct CommContext {
    /// Transport workspace address (0 on the simulator).
    pub work_space: u64,
    /// Transport workspace size in bytes.
    pub work_space_size: u64,
    /// This rank's dense index inside the domain.
    pub rank_id: u32,
    /// Number of ranks in the domain.
    pub rank_num: u32,
    /// Per-rank window bytes visible to this domain.
    pub win_size: u64,
    /// Base address of rank `i`'s window as mapped in this rank's address space;
    /// 0 for `i >= rank_num`.
    pub windows_in: [u64; COMM_MAX_RANK_NUM],
    /// Second window array; a mirror of `windows_in` on the simulator, never read
    /// by codegen.
    pub windows_out: [u64; COMM_MAX_RANK_NUM],
}

// Layout pins: the hand-written offsets above must be where the compiler put the
// fields, and the struct must be exactly the size and alignment of the C struct.
const _: () = assert!(size_of::<CommContext>() == COMM_CONTEXT_SIZE, "CommContext must be 1056 bytes");
const _: () = assert!(align_of::<CommContext>() == COMM_CONTEXT_ALIGN, "CommContext must be 8-aligned");
const _: () =
    assert!(offset_of!(CommContext, work_space) == OFFSET_WORK_SPACE, "CommContext.work_space moved");
const _: () = assert!(
    offset_of!(CommContext, work_space_size) == OFFSET_WORK_SPACE_SIZE,
    "CommContext.work_space_size moved"
);
const _: () = assert!(offset_of!(CommContext, rank_id) == OFFSET_RANK_ID, "CommContext.rank_id moved");
const _: () = assert!(offset_of!(CommContext, rank_num) == OFFSET_RANK_NUM, "CommContext.rank_num moved");
const _: () = assert!(offset_of!(CommContext, win_size) == OFFSET_WIN_SIZE, "CommContext.win_size moved");
const _: () =
    assert!(offset_of!(CommContext, windows_in) == OFFSET_WINDOWS_IN, "CommContext.windows_in moved");
const _: () =
    assert!(offset_of!(CommContext, windows_out) == OFFSET_WINDOWS_OUT, "CommContext.windows_out moved");
// The offsets themselves must agree with the spec's arithmetic.
const _: () = assert!(OFFSET_RANK_NUM == OFFSET_RANK_ID + 4, "rankNum must follow rankId");
const _: () = assert!(OFFSET_WINDOWS_OUT == OFFSET_WINDOWS_IN + 8 * COMM_MAX_RANK_NUM);
const _: () = assert!(COMM_CONTEXT_SIZE == OFFSET_WINDOWS_OUT + 8 * COMM_MAX_RANK_NUM);
const _: () = assert!(COMM_MAX_RANK_NUM == 64, "COMM_MAX_RANK_NUM is 64 in every runtime");
const _: () =
    assert!(SLOT_RANK_PAIR == 2 && SLOT_WIN_SIZE == 3 && SLOT_WINDOWS_IN == 4 && SLOT_WINDOWS_OUT == 68);

/// Why a [`CommContext`] could not be built or is not valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CommContextError {
    /// `rank_num` is outside `1..=64`.
    RankCountOutOfRange {
        /// The rejected rank count.
        nranks: u64,
    },
    /// `rank_id` is not below `rank_num`.
    RankOutOfRange {
        /// The rejected rank.
        rank: u32,
        /// The domain size.
        nranks: u32,
    },
    /// `windows_in` does not have one entry per rank.
    WindowCountMismatch {
        /// The domain size.
        nranks: u32,
        /// Entries given.
        got: usize,
    },
}

impl fmt::Display for CommContextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::RankCountOutOfRange { nranks } => {
                write!(f, "comm domain rank count {nranks} is out of range (valid: 1..={COMM_MAX_RANK_NUM})")
            }
            Self::RankOutOfRange { rank, nranks } => {
                write!(f, "rank {rank} is out of range for a domain of {nranks} ranks")
            }
            Self::WindowCountMismatch { nranks, got } => {
                write!(f, "a domain of {nranks} ranks needs {nranks} window base addresses, got {got}")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for CommContextError {}

fn check_rank_count(nranks: u64) -> Result<u32, CommContextError> {
    match u32::try_from(nranks) {
        Ok(n) if (1..=COMM_MAX_RANK_NUM as u32).contains(&n) => Ok(n),
        _ => Err(CommContextError::RankCountOutOfRange { nranks }),
    }
}

impl CommContext {
    /// An all-zero context (what a value-initialised C struct holds).
    pub const ZERO: Self = Self {
        work_space: 0,
        work_space_size: 0,
        rank_id: 0,
        rank_num: 0,
        win_size: 0,
        windows_in: [0; COMM_MAX_RANK_NUM],
        windows_out: [0; COMM_MAX_RANK_NUM],
    };

    /// The context of rank `rank` in a domain of `nranks` ranks whose windows start
    /// at `windows_in[i]` (one entry per rank) and are `win_size` bytes each.
    ///
    /// Follows the simulator backend's conventions: no transport workspace,
    /// `windows_out` mirrors `windows_in`, and entries at or beyond `nranks` are 0.
    pub fn new(rank: u32, nranks: u32, win_size: u64, windows_in: &[u64]) -> Result<Self, CommContextError> {
        let nranks = check_rank_count(u64::from(nranks))?;
        if rank >= nranks {
            return Err(CommContextError::RankOutOfRange { rank, nranks });
        }
        if windows_in.len() != nranks as usize {
            return Err(CommContextError::WindowCountMismatch { nranks, got: windows_in.len() });
        }
        let mut ctx = Self { rank_id: rank, rank_num: nranks, win_size, ..Self::ZERO };
        ctx.windows_in[..windows_in.len()].copy_from_slice(windows_in);
        ctx.windows_out = ctx.windows_in;
        Ok(ctx)
    }

    /// Checks `1 <= rank_num <= 64` and `rank_id < rank_num` (for contexts decoded
    /// with [`CommContext::from_bytes`]).
    pub fn validate(&self) -> Result<(), CommContextError> {
        let nranks = check_rank_count(u64::from(self.rank_num))?;
        if self.rank_id >= nranks {
            return Err(CommContextError::RankOutOfRange { rank: self.rank_id, nranks });
        }
        Ok(())
    }

    /// `windows_in[rank]` if `rank` is a member of the domain.
    #[inline]
    fn window_base(&self, rank: u32) -> Option<u64> {
        if rank >= self.rank_num {
            return None;
        }
        self.windows_in.get(usize::try_from(rank).ok()?).copied()
    }

    /// `windowsIn[peer] - windowsIn[rankId]` as the hardware computes it (a wrapping
    /// `i64` subtraction), or `None` if `peer` or `rank_id` is not a member of the
    /// domain (`< rank_num`, `< 64`).
    ///
    /// `peer == rank_id` is legal and gives 0.
    #[inline]
    pub fn peer_offset_bytes(&self, peer: u32) -> Option<i64> {
        let mine = self.window_base(self.rank_id)?;
        let theirs = self.window_base(peer)?;
        Some(theirs.wrapping_sub(mine) as i64)
    }

    /// The peer offset in elements of `elem_bytes` bytes: what codegen adds to a
    /// local element pointer to address the same element in `peer`'s window
    /// (`(windowsIn[peer] - windowsIn[rankId]) / elem_bytes`, signed).
    ///
    /// `None` if [`peer_offset_bytes`](Self::peer_offset_bytes) is `None`, if
    /// `elem_bytes` is 0, or if the byte delta is not a multiple of `elem_bytes`
    /// (the hardware's signed division would silently truncate; window bases are
    /// large aligned allocations, so a remainder means a corrupt context).
    pub fn peer_offset_elems(&self, peer: u32, elem_bytes: u32) -> Option<i64> {
        let delta = self.peer_offset_bytes(peer)?;
        let elem = i64::from(elem_bytes);
        if elem == 0 || delta % elem != 0 {
            return None;
        }
        Some(delta / elem)
    }

    /// The address of `local` (an address inside this rank's window) in `peer`'s
    /// window: `local + windowsIn[peer] - windowsIn[rankId]`, wrapping like the
    /// hardware. Nothing checks that `local` lies inside the window.
    #[inline]
    pub fn peer_address(&self, local: u64, peer: u32) -> Option<u64> {
        Some(local.wrapping_add(self.peer_offset_bytes(peer)? as u64))
    }

    /// The context as the device holds it: 1056 little-endian bytes.
    pub fn to_bytes(&self) -> [u8; COMM_CONTEXT_SIZE] {
        fn put(out: &mut [u8; COMM_CONTEXT_SIZE], at: usize, bytes: &[u8]) {
            out[at..at + bytes.len()].copy_from_slice(bytes);
        }
        let mut out = [0u8; COMM_CONTEXT_SIZE];
        put(&mut out, OFFSET_WORK_SPACE, &self.work_space.to_le_bytes());
        put(&mut out, OFFSET_WORK_SPACE_SIZE, &self.work_space_size.to_le_bytes());
        put(&mut out, OFFSET_RANK_ID, &self.rank_id.to_le_bytes());
        put(&mut out, OFFSET_RANK_NUM, &self.rank_num.to_le_bytes());
        put(&mut out, OFFSET_WIN_SIZE, &self.win_size.to_le_bytes());
        for (i, (win_in, win_out)) in self.windows_in.iter().zip(&self.windows_out).enumerate() {
            put(&mut out, OFFSET_WINDOWS_IN + 8 * i, &win_in.to_le_bytes());
            put(&mut out, OFFSET_WINDOWS_OUT + 8 * i, &win_out.to_le_bytes());
        }
        out
    }

    /// Decodes 1056 little-endian bytes. Raw: no field is checked (see
    /// [`CommContext::validate`]).
    pub fn from_bytes(bytes: &[u8; COMM_CONTEXT_SIZE]) -> Self {
        let u64_at = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&bytes[at..at + 8]);
            u64::from_le_bytes(b)
        };
        let u32_at = |at: usize| {
            let mut b = [0u8; 4];
            b.copy_from_slice(&bytes[at..at + 4]);
            u32::from_le_bytes(b)
        };
        let mut ctx = Self {
            work_space: u64_at(OFFSET_WORK_SPACE),
            work_space_size: u64_at(OFFSET_WORK_SPACE_SIZE),
            rank_id: u32_at(OFFSET_RANK_ID),
            rank_num: u32_at(OFFSET_RANK_NUM),
            win_size: u64_at(OFFSET_WIN_SIZE),
            ..Self::ZERO
        };
        for i in 0..COMM_MAX_RANK_NUM {
            ctx.windows_in[i] = u64_at(OFFSET_WINDOWS_IN + 8 * i);
            ctx.windows_out[i] = u64_at(OFFSET_WINDOWS_OUT + 8 * i);
        }
        ctx
    }
}

impl Default for CommContext {
    fn default() -> Self {
        Self::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec::Vec;

    /// Simulator-style bases: one arena, rank `i`'s window at `base + 4096 + i * win`.
    fn sim_bases(n: u32, win: u64) -> Vec<u64> {
        (0..u64::from(n)).map(|i| 0x7f00_0000_0000 + 4096 + i * win).collect()
    }

    fn slot(bytes: &[u8; COMM_CONTEXT_SIZE], slot: usize) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&bytes[slot * 8..slot * 8 + 8]);
        u64::from_le_bytes(b)
    }

    #[test]
    fn new_follows_sim_conventions() {
        let bases = sim_bases(4, 1 << 20);
        let ctx = CommContext::new(2, 4, 1 << 20, &bases).unwrap();
        assert_eq!((ctx.rank_id, ctx.rank_num, ctx.win_size), (2, 4, 1 << 20));
        assert_eq!((ctx.work_space, ctx.work_space_size), (0, 0));
        assert_eq!(&ctx.windows_in[..4], &bases[..]);
        assert!(ctx.windows_in[4..].iter().all(|&w| w == 0));
        assert_eq!(ctx.windows_out, ctx.windows_in);
        assert_eq!(ctx.validate(), Ok(()));
    }

    #[test]
    fn new_rejects_bad_input() {
        assert_eq!(CommContext::new(0, 0, 64, &[]), Err(CommContextError::RankCountOutOfRange { nranks: 0 }));
        assert_eq!(
            CommContext::new(0, 65, 64, &sim_bases(65, 64)),
            Err(CommContextError::RankCountOutOfRange { nranks: 65 })
        );
        assert_eq!(
            CommContext::new(3, 3, 64, &sim_bases(3, 64)),
            Err(CommContextError::RankOutOfRange { rank: 3, nranks: 3 })
        );
        assert_eq!(
            CommContext::new(0, 3, 64, &sim_bases(2, 64)),
            Err(CommContextError::WindowCountMismatch { nranks: 3, got: 2 })
        );
        assert!(CommContext::new(63, 64, 64, &sim_bases(64, 64)).is_ok());
        assert_eq!(
            CommContext::new(3, 3, 64, &sim_bases(3, 64)).unwrap_err().to_string(),
            "rank 3 is out of range for a domain of 3 ranks"
        );
        assert_eq!(
            CommContextError::RankCountOutOfRange { nranks: 65 }.to_string(),
            "comm domain rank count 65 is out of range (valid: 1..=64)"
        );
    }

    #[test]
    fn validate_decoded_contexts() {
        let mut ctx = CommContext::ZERO;
        assert_eq!(ctx.validate(), Err(CommContextError::RankCountOutOfRange { nranks: 0 }));
        ctx.rank_num = 2;
        ctx.rank_id = 2;
        assert_eq!(ctx.validate(), Err(CommContextError::RankOutOfRange { rank: 2, nranks: 2 }));
        ctx.rank_id = 1;
        assert_eq!(ctx.validate(), Ok(()));
        assert_eq!(CommContext::default(), CommContext::ZERO);
    }

    #[test]
    fn peer_offsets_are_the_hardware_translation() {
        let win = 1 << 16;
        let bases = sim_bases(4, win);
        let ctx = CommContext::new(1, 4, win, &bases).unwrap();
        let win = win as i64;
        assert_eq!(ctx.peer_offset_bytes(1), Some(0));
        assert_eq!(ctx.peer_offset_bytes(3), Some(2 * win));
        assert_eq!(ctx.peer_offset_bytes(0), Some(-win));
        assert_eq!(ctx.peer_offset_elems(3, 4), Some(2 * win / 4));
        assert_eq!(ctx.peer_offset_elems(0, 2), Some(-win / 2));
        assert_eq!(ctx.peer_offset_elems(1, 8), Some(0));
        // peer address = my address + windowsIn[peer] - windowsIn[me]
        let local = bases[1] + 96;
        assert_eq!(ctx.peer_address(local, 3), Some(bases[3] + 96));
        assert_eq!(ctx.peer_address(local, 0), Some(bases[0] + 96));
    }

    #[test]
    fn peer_offsets_reject_what_the_hardware_would_not_check() {
        let ctx = CommContext::new(0, 2, 4096, &[0x1000, 0x2002]).unwrap();
        assert_eq!(ctx.peer_offset_elems(2, 4), None, "peer outside the domain");
        assert_eq!(ctx.peer_offset_elems(u32::MAX, 4), None);
        assert_eq!(ctx.peer_offset_elems(1, 0), None, "zero-sized element");
        assert_eq!(ctx.peer_offset_elems(1, 4), None, "delta 0x1002 is not whole f32s");
        assert_eq!(ctx.peer_offset_elems(1, 2), Some(0x801));
        assert_eq!(ctx.peer_address(0, 2), None);
        let mut corrupt = ctx;
        corrupt.rank_id = 7;
        assert_eq!(corrupt.peer_offset_bytes(0), None, "own rank outside the domain");
    }

    #[test]
    fn peer_offsets_wrap_like_i64_arithmetic() {
        // Windows mapped far apart in the address space still give the signed delta.
        let ctx = CommContext::new(1, 2, 64, &[0x10, u64::MAX - 0xf]).unwrap();
        assert_eq!(ctx.peer_offset_bytes(0), Some(0x20));
        assert_eq!(ctx.peer_address(u64::MAX - 0xf, 0), Some(0x10));
        let back = CommContext::new(0, 2, 64, &[0x10, u64::MAX - 0xf]).unwrap();
        assert_eq!(back.peer_offset_bytes(1), Some(-0x20));
    }

    #[test]
    fn bytes_round_trip_and_sit_at_the_pinned_offsets() {
        let mut ctx = CommContext::new(5, 8, 0x1234, &sim_bases(8, 0x1234)).unwrap();
        ctx.work_space = 0x0102_0304_0506_0708;
        ctx.work_space_size = 99;
        ctx.windows_out[63] = 0xdead_beef;
        let bytes = ctx.to_bytes();
        assert_eq!(CommContext::from_bytes(&bytes), ctx);
        assert_eq!(&bytes[..8], &[8, 7, 6, 5, 4, 3, 2, 1], "little-endian");
        assert_eq!(slot(&bytes, OFFSET_WORK_SPACE_SIZE / 8), 99);
        // Codegen loads slot 2 as one i64: rankId low, rankNum high.
        assert_eq!(slot(&bytes, SLOT_RANK_PAIR), 5 | (8 << 32));
        assert_eq!(slot(&bytes, SLOT_WIN_SIZE), 0x1234);
        for r in 0..COMM_MAX_RANK_NUM {
            assert_eq!(slot(&bytes, SLOT_WINDOWS_IN + r), ctx.windows_in[r]);
            assert_eq!(slot(&bytes, SLOT_WINDOWS_OUT + r), ctx.windows_out[r]);
        }
        assert_eq!(slot(&bytes, 131), 0xdead_beef, "last slot is windowsOut[63]");
    }

    #[test]
    fn from_bytes_is_raw() {
        let mut bytes = [0u8; COMM_CONTEXT_SIZE];
        bytes[OFFSET_RANK_ID..OFFSET_RANK_ID + 4].copy_from_slice(&9u32.to_le_bytes());
        bytes[OFFSET_RANK_NUM..OFFSET_RANK_NUM + 4].copy_from_slice(&200u32.to_le_bytes());
        let ctx = CommContext::from_bytes(&bytes);
        assert_eq!((ctx.rank_id, ctx.rank_num), (9, 200));
        assert!(ctx.validate().is_err());
        assert_eq!(ctx.peer_offset_bytes(100), None, "index beyond windowsIn never panics");
        assert_eq!(ctx.peer_offset_bytes(0), Some(0));
    }
}
