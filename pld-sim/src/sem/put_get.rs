//! Put/get family: `pld.tensor.put` / `pld.tensor.get` (TPUT/TGET with chunk attributes) and
//! the internal `pld.tile.put` / `pld.tile.get` (explicit staging tiles, optional ping/pong).
//!
//! Guarantees: the transfer extent comes from the source (full slice) or the `shape` region;
//! it is moved as the pto-isa chunk sequence — a single shot when it fits the staging tile,
//! otherwise outer dims in row-major order, then row chunks of `tr`, then column chunks of
//! `tc` (ragged tails allowed) — each chunk a load into the stage and a store, as separate
//! micro instructions so other ranks can interleave between chunks. Atomic put accumulates on
//! the destination. Ping/pong changes no bytes (sources and destinations never overlap except
//! for self-put, which the race checker sees).

use super::{Flow, OpCx};
use crate::micro::Micro;
use crate::register_semantics;
use crate::report::Fault;
use crate::value::{TRef, Val};

/// The micro program of one TPUT (`put = true`) or TGET.
#[allow(clippy::too_many_arguments)]
pub fn transfer(
    dst: &TRef,
    dst_offs: &[i64],
    src: &TRef,
    src_offs: &[i64],
    shape: &[i64],
    peer: i64,
    stage: (i64, i64),
    put: bool,
    atomic: bool,
    op: &'static str,
) -> Vec<Micro> {
    let n = shape.len();
    if shape.iter().any(|&d| d <= 0) {
        return Vec::new();
    }
    let (d3, d4) = match n {
        0 => (1, 1),
        1 => (1, shape[0]),
        _ => (shape[n - 2], shape[n - 1]),
    };
    let lead_n = n.saturating_sub(2);
    let rows_total: i64 = shape[..n.saturating_sub(1)].iter().product();
    let (tr, tc) = (if stage.0 <= 0 { rows_total } else { stage.0 }, if stage.1 <= 0 { d4 } else { stage.1 });
    let mut prog = Vec::new();
    let mut chunk = |offs_lead: &[i64], r0: i64, rows: i64, c0: i64, cols: i64, full: Option<&[i64]>| {
        let (mut so, mut dof) = (src_offs.to_vec(), dst_offs.to_vec());
        let region: Vec<i64> = match full {
            Some(s) => s.to_vec(),
            None => {
                let mut reg = vec![1i64; lead_n];
                let mut idx = offs_lead.to_vec();
                if n >= 2 {
                    reg.push(rows);
                    idx.push(r0);
                }
                reg.push(cols);
                idx.push(c0);
                for (d, i) in idx.iter().enumerate() {
                    if let Some(x) = so.get_mut(d) {
                        *x += i;
                    }
                    if let Some(x) = dof.get_mut(d) {
                        *x += i;
                    }
                }
                reg
            }
        };
        let (src_peer, dst_peer) = if put { (None, Some(peer)) } else { (Some(peer), None) };
        prog.push(Micro::Load {
            at: Default::default(),
            reg: 0,
            src: src.clone(),
            peer: src_peer,
            offs: so,
            shape: region.clone(),
            op,
        });
        prog.push(Micro::Store {
            at: Default::default(),
            reg: 0,
            dst: dst.clone(),
            peer: dst_peer,
            offs: dof,
            shape: region,
            atomic,
            op,
        });
    };
    if rows_total <= tr && d4 <= tc {
        chunk(&[], 0, 0, 0, 0, Some(shape));
        return prog;
    }
    let outer: i64 = shape[..lead_n].iter().product();
    let mut idx = vec![0i64; lead_n];
    for _ in 0..outer {
        let mut r0 = 0;
        while r0 < d3 {
            let rows = tr.min(d3 - r0);
            let mut c0 = 0;
            while c0 < d4 {
                let cols = tc.min(d4 - c0);
                chunk(&idx, r0, rows, c0, cols, None);
                c0 += tc;
            }
            r0 += tr;
        }
        for d in (0..lead_n).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    prog
}

struct Parsed {
    dst: TRef,
    peer: i64,
    src: TRef,
    dst_offs: Vec<i64>,
    src_offs: Vec<i64>,
    shape: Vec<i64>,
}

fn parse(cx: &OpCx<'_>, args: &[Val], region_at: Option<usize>) -> Result<Parsed, Fault> {
    let dst = cx.tensor(args, 0)?.clone();
    let peer = cx.int(args, 1)?;
    let src = cx.tensor(args, 2)?.clone();
    let (dst_offs, src_offs, shape) = match region_at {
        Some(i) => (cx.ints(args, i)?, cx.ints(args, i + 1)?, cx.ints(args, i + 2)?),
        None => {
            if dst.shape != src.shape {
                return Err(cx.err(format!(
                    "full-slice transfer of src {:?} into dst {:?}: shapes must be equal",
                    src.shape, dst.shape
                )));
            }
            (vec![0; dst.shape.len()], vec![0; src.shape.len()], src.shape.to_vec())
        }
    };
    Ok(Parsed { dst, peer, src, dst_offs, src_offs, shape })
}

fn tensor_xfer(cx: &mut OpCx<'_>, args: &[Val], put: bool) -> Result<Flow, Fault> {
    let p = parse(cx, args, (args.len() >= 6).then_some(3))?;
    let stage = (cx.attr_int("chunk_rows").unwrap_or(0), cx.attr_int("chunk_cols").unwrap_or(0));
    let atomic = put && cx.attr_int("atomic").unwrap_or(0) == 1;
    let op = if put { "pld.tensor.put" } else { "pld.tensor.get" };
    let prog = transfer(&p.dst, &p.dst_offs, &p.src, &p.src_offs, &p.shape, p.peer, stage, put, atomic, op);
    Ok(Flow::Micro(prog, Val::Unit))
}

fn tile_xfer(cx: &mut OpCx<'_>, args: &[Val], put: bool) -> Result<Flow, Fault> {
    // (dst, peer, src, stage[, stage2][, dst_offsets, src_offsets, shape])
    let region_at = match args.len() {
        4 | 5 => None,
        7 => Some(4),
        8 => Some(5),
        n => return Err(cx.err(format!("expects 4, 5, 7 or 8 arguments, got {n}"))),
    };
    let p = parse(cx, args, region_at)?;
    let stage = cx.tile(args, 3)?;
    // The stage's valid region is the chunk (its physical row may be padded to 32 bytes).
    let (sr, sc) = crate::value::Tile::rows_cols(&stage.valid);
    if args.len() == 5 || args.len() == 8 {
        let s2 = cx.tile(args, 4)?;
        if s2.shape != stage.shape {
            return Err(cx.err("ping/pong staging tiles must have identical shape"));
        }
    }
    let atomic = put && cx.attr_int("atomic").unwrap_or(0) == 1;
    let op = if put { "pld.tile.put" } else { "pld.tile.get" };
    let prog = transfer(
        &p.dst,
        &p.dst_offs,
        &p.src,
        &p.src_offs,
        &p.shape,
        p.peer,
        (sr as i64, sc as i64),
        put,
        atomic,
        op,
    );
    Ok(Flow::Micro(prog, Val::Unit))
}

fn tensor_put(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    tensor_xfer(cx, args, true)
}
fn tensor_get(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    tensor_xfer(cx, args, false)
}
fn tile_put(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    tile_xfer(cx, args, true)
}
fn tile_get(cx: &mut OpCx<'_>, args: &[Val]) -> Result<Flow, Fault> {
    tile_xfer(cx, args, false)
}

register_semantics!("pld.tensor.put", tensor_put);
register_semantics!("pld.tensor.get", tensor_get);
register_semantics!("pld.tile.put", tile_put);
register_semantics!("pld.tile.get", tile_get);
