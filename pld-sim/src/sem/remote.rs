//! Tile-remote family: `pld.tile.remote_load` (TLOAD from a peer view) and
//! `pld.tile.remote_store` / `pld.tensor.remote_store` (TSTORE to a peer view, optionally
//! atomic add).
//!
//! Guarantees: the peer region is addressed through the CommContext exactly like hardware
//! (local view + peer delta) and bounds-checked against the named buffer; remote_load reads the
//! valid region only and zero-fills the rest of the tile; remote_store writes the tile's valid
//! region onto the inner two dims of the target at `offsets` (leading dims of size 1).

use super::core::{tile_from, tile_region, valid_bytes};
use super::{Flow, OpCx};
use crate::register_semantics;
use crate::report::Fault;
use crate::value::{Tile, Val};
use std::sync::Arc;

fn remote_load(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let t = cx.tensor(args, 0)?.clone();
    let peer = cx.int(args, 1)?;
    let offs = cx.ints(args, 2)?;
    let shape = cx.ints(args, 3)?;
    let valid = if args.len() > 4 { cx.ints(args, 4)? } else { shape.clone() };
    let valid: Vec<i64> = valid.iter().map(|&v| v.max(0)).collect();
    super::core::check_valid(cx, &shape, &valid)?;
    // FP16 ragged tails may read physically up to the next 32-byte boundary: the bytes past
    // the logical extent are not part of the result, so only the logical part is read.
    let mut read = valid.clone();
    if cx.attr_int("allow_physical_tail_padding").unwrap_or(0) == 1 {
        if let (Some(l), Some(&ext), Some(&o)) = (read.last_mut(), t.shape.last(), offs.last()) {
            let avail = (ext - o).max(0);
            if *l > avail {
                let over = (*l - avail) * t.dtype.bytes() as i64;
                if over >= 32 {
                    return Err(Fault::new(
                        crate::report::ReportKind::OutOfBounds,
                        cx.span,
                        format!("pld.tile.remote_load on rank {}: tail padding reads {over} bytes past the tensor end (at most 31 allowed)", cx.rank),
                    ));
                }
                *l = avail;
            }
        }
    }
    let mut bytes = Vec::new();
    cx.world.read_bytes_into(&cx.access(&t, Some(peer), &offs, &read, "pld.tile.remote_load"), &mut bytes)?;
    let eb = Tile::lane_bytes(t.dtype);
    let bytes = if read == valid { bytes } else { pad_rows(&bytes, &read, &valid, eb) };
    let to_us = |v: &[i64]| v.iter().map(|&x| x.max(0) as usize).collect::<Vec<usize>>();
    let tile = tile_from(t.dtype, to_us(&shape), to_us(&valid), bytes);
    Ok(Flow::Val(Val::Tile(Arc::new(tile))))
}

/// Re-lays the raw lanes (`eb` bytes each) of a `have` region into a `want` region (same
/// rows, wider), zero-filled.
fn pad_rows(bytes: &[u8], have: &[i64], want: &[i64], eb: usize) -> Vec<u8> {
    let hc = have.last().copied().unwrap_or(1).max(0) as usize;
    let wc = want.last().copied().unwrap_or(1).max(0) as usize;
    let rows = (bytes.len() / eb)
        .checked_div(hc)
        .unwrap_or_else(|| want[..want.len().saturating_sub(1)].iter().product::<i64>() as usize);
    let mut out = vec![0; rows * wc * eb];
    let n = hc.min(wc) * eb;
    for r in 0..rows {
        out[r * wc * eb..r * wc * eb + n].copy_from_slice(&bytes[r * hc * eb..r * hc * eb + n]);
    }
    out
}

fn store_tile(cx: &mut OpCx<'_>, tile: &Tile, args: &[Val], op: &str) -> Result<Flow, Fault> {
    let target = cx.tensor(args, 1)?.clone();
    let peer = cx.int(args, 2)?;
    let offs = cx.ints(args, 3)?;
    let atomic = cx.attr_int("atomic").unwrap_or(0) == 1;
    let region = tile_region(tile, target.shape.len());
    let bytes = valid_bytes(tile);
    cx.world.write_bytes(&cx.access(&target, Some(peer), &offs, &region, op), &bytes, tile.dtype, atomic)?;
    Ok(Flow::Val(Val::Unit))
}

fn tile_remote_store(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let tile = cx.tile(args, 0)?.clone();
    store_tile(cx, &tile, args, "pld.tile.remote_store")
}

fn tensor_remote_store(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    let tile = match args.first() {
        Some(Val::Tile(t)) => (**t).clone(),
        Some(Val::Tensor(t)) => {
            let t = t.clone();
            let zeros = vec![0i64; t.shape.len()];
            let mut lanes = Vec::new();
            let a = cx.access(&t, None, &zeros, &t.shape, "pld.tensor.remote_store");
            cx.world.read_bytes_into(&a, &mut lanes)?;
            let (r, c) = match t.shape.split_last() {
                Some((c, lead)) => (lead.iter().product::<i64>() as usize, *c as usize),
                None => (1, 1),
            };
            tile_from(t.dtype, vec![r, c], vec![r, c], lanes)
        }
        _ => return Err(cx.err("argument 0 must be a tensor or a tile")),
    };
    store_tile(cx, &tile, args, "pld.tensor.remote_store")
}

register_semantics!("pld.tile.remote_load", remote_load);
register_semantics!("pld.tile.remote_store", tile_remote_store);
register_semantics!("pld.tensor.remote_store", tensor_remote_store);
