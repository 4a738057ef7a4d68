//! Tile-address planning: each tile allocation gets a slot whose byte address is assigned by a
//! per-memory stack (a region's tiles are released when it ends); the body carries a marker per
//! slot that is replaced by its `addr = ...` operand when the function is printed.
//!
//! Guarantees: an aliasing allocation shares its target's address; addresses are 32-byte
//! aligned; no address is printed when a memory's high-water mark exceeds its capacity (the
//! verifier reports that, level3-addresses).

#[derive(Clone, Debug)]
pub(super) struct AllocSlot {
    /// Byte address inside its buffer.
    pub(super) addr: u64,
    /// The slot whose buffer this allocation aliases (a new valid region on the same memory).
    pub(super) alias: Option<usize>,
}

/// Brackets an allocation's slot number in the body text until its address is known.
pub(super) const ADDR_MARK: char = '\u{1}';

/// Replaces each marked slot number in `line` by that slot's address operand text.
pub(super) fn substitute_addrs(line: &str, addrs: &[String]) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(p) = rest.find(ADDR_MARK) {
        out.push_str(&rest[..p]);
        let after = &rest[p + ADDR_MARK.len_utf8()..];
        let Some(q) = after.find(ADDR_MARK) else {
            out.push_str(&rest[p..]);
            return out;
        };
        if let Some(a) = after[..q].parse::<usize>().ok().and_then(|i| addrs.get(i)) {
            out.push_str(a);
        }
        rest = &after[q + ADDR_MARK.len_utf8()..];
    }
    out.push_str(rest);
    out
}
