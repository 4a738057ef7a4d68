//! Golden reference implementations of every collective and point-to-point pattern of the
//! end-to-end scenarios, in plain Rust over per-rank `Vec<f64>` buffers.
//!
//! Guarantees: each function is the mathematical definition (no protocol, no chunking);
//! reductions combine ranks in rank order 0..P−1 and round every partial result to the data
//! type, which is the order the simulator's builtins use, so FP16 results can be compared
//! tightly. Inputs follow tests_e2e.md: `ramp(r, n)[i] = 100·r + i`,
//! `fp16ramp(r, n)[i] = 1 + 0.125·r + 0.0625·(i mod 5)`.

use pld_ir::DataType;
use pld_runtime_abi::ReduceOp;
use pld_sim::elem;

/// `ramp(r, n)[i] = 100·r + i`.
pub fn ramp(r: usize, n: usize) -> Vec<f64> {
    (0..n).map(|i| (100 * r + i) as f64).collect()
}

/// `fp16ramp(r, n)[i] = 1 + 0.125·r + 0.0625·(i mod 5)`.
pub fn fp16ramp(r: usize, n: usize) -> Vec<f64> {
    (0..n).map(|i| 1.0 + 0.125 * r as f64 + 0.0625 * (i % 5) as f64).collect()
}

/// Rounds every element to `dt`.
pub fn round(dt: DataType, v: &[f64]) -> Vec<f64> {
    v.iter().map(|&x| elem::round(dt, x)).collect()
}

/// Elementwise reduction over ranks (rank order), rounded to `dt` after every step.
pub fn reduce(inputs: &[Vec<f64>], op: ReduceOp, dt: DataType) -> Vec<f64> {
    let mut acc = round(dt, &inputs[0]);
    for x in &inputs[1..] {
        for (a, b) in acc.iter_mut().zip(x) {
            *a = elem::round(dt, elem::reduce(op, *a, elem::round(dt, *b)));
        }
    }
    acc
}

/// Allreduce: every rank gets the reduction.
pub fn allreduce(inputs: &[Vec<f64>], op: ReduceOp, dt: DataType) -> Vec<Vec<f64>> {
    let r = reduce(inputs, op, dt);
    vec![r; inputs.len()]
}

/// Reduce-scatter: rank `r` gets chunk `r` (of `inputs[k].len() / P` elements) of the reduction.
pub fn reduce_scatter(inputs: &[Vec<f64>], op: ReduceOp, dt: DataType) -> Vec<Vec<f64>> {
    let p = inputs.len();
    let full = reduce(inputs, op, dt);
    let n = full.len() / p;
    (0..p).map(|r| full[r * n..(r + 1) * n].to_vec()).collect()
}

/// Allgather: every rank gets the concatenation of all ranks' inputs.
pub fn allgather(inputs: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let cat: Vec<f64> = inputs.concat();
    vec![cat; inputs.len()]
}

/// Broadcast: every rank gets `inputs[root]`.
pub fn broadcast(inputs: &[Vec<f64>], root: usize) -> Vec<Vec<f64>> {
    vec![inputs[root].clone(); inputs.len()]
}

/// All-to-all: `inputs[r]` is `P` rows of `size`; rank `r` row `s` of the result is row `r`
/// of rank `s`'s input.
pub fn all_to_all(inputs: &[Vec<f64>], size: usize) -> Vec<Vec<f64>> {
    let p = inputs.len();
    (0..p).map(|r| (0..p).flat_map(|s| inputs[s][r * size..(r + 1) * size].to_vec()).collect()).collect()
}

/// All-to-all-v: rank `s` sends `clamp(counts[s][d], 0, max_recv)` rows of its block `d`
/// (rows `d·max_recv ..`) to rank `d`, landing at rows `s·max_recv ..`. Returns per rank the
/// received counts and the `[P·max_recv, size]` buffer with unwritten rows as `None`.
pub fn all_to_all_v(
    inputs: &[Vec<f64>],
    counts: &[Vec<i64>],
    max_recv: usize,
    size: usize,
) -> Vec<(Vec<i64>, Vec<Option<f64>>)> {
    let p = inputs.len();
    (0..p)
        .map(|r| {
            let mut recv = vec![0i64; p];
            let mut buf = vec![None; p * max_recv * size];
            for s in 0..p {
                let c = counts[s][r].clamp(0, max_recv as i64) as usize;
                recv[s] = c as i64;
                for k in 0..c {
                    for j in 0..size {
                        buf[(s * max_recv + k) * size + j] = Some(inputs[s][(r * max_recv + k) * size + j]);
                    }
                }
            }
            (recv, buf)
        })
        .collect()
}

/// Push ring (put / remote_store to `(r+1) mod P`): rank `r` ends with rank `r−1`'s data.
pub fn ring_push(inputs: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let p = inputs.len();
    (0..p).map(|r| inputs[(r + p - 1) % p].clone()).collect()
}

/// Pull ring (get from `(r+1) mod P`): rank `r` ends with rank `r+1`'s data.
pub fn ring_pull(inputs: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let p = inputs.len();
    (0..p).map(|r| inputs[(r + 1) % p].clone()).collect()
}

/// Atomic-add reduce to a root: the root's accumulator is the sum of every input (plus `init`).
pub fn reduce_to_root(inputs: &[Vec<f64>], init: &[f64], dt: DataType) -> Vec<f64> {
    let mut acc = init.to_vec();
    for x in inputs {
        for (a, b) in acc.iter_mut().zip(x) {
            *a = elem::round(dt, *a + *b);
        }
    }
    acc
}

/// Bytes a ring allreduce reads from peers per rank: `2(P−1)` segments of the balanced split,
/// in the lowering's order — reduce-scatter step `s` reads left's segment `r − s − 2`,
/// allgather step `s` its segment `r − s − 1`.
pub fn ring_allreduce_bytes(size: usize, p: usize, elem_bytes: usize, rank: usize) -> usize {
    if p == 1 {
        return 0;
    }
    let b: Vec<usize> = (0..=p).map(|i| i * size / p).collect();
    let seg = |i: isize| {
        let i = i.rem_euclid(p as isize) as usize;
        b[i + 1] - b[i]
    };
    let r = rank as isize;
    let rs: usize = (0..p as isize - 1).map(|s| seg(r - s - 2)).sum();
    let ag: usize = (0..p as isize - 1).map(|s| seg(r - s - 1)).sum();
    (rs + ag) * elem_bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references() {
        let inp = vec![ramp(0, 4), ramp(1, 4)];
        assert_eq!(reduce(&inp, ReduceOp::Sum, DataType::FP32), vec![100.0, 102.0, 104.0, 106.0]);
        assert_eq!(reduce(&inp, ReduceOp::Max, DataType::FP32), ramp(1, 4));
        assert_eq!(
            reduce_scatter(&inp, ReduceOp::Sum, DataType::FP32),
            vec![vec![100.0, 102.0], vec![104.0, 106.0]]
        );
        let a2a = all_to_all(&[vec![0.0, 1.0], vec![10.0, 11.0]], 1);
        assert_eq!(a2a, vec![vec![0.0, 10.0], vec![1.0, 11.0]]);
        assert_eq!(ring_push(&[vec![1.0], vec![2.0], vec![3.0]]), vec![vec![3.0], vec![1.0], vec![2.0]]);
        assert_eq!(ring_pull(&[vec![1.0], vec![2.0], vec![3.0]]), vec![vec![2.0], vec![3.0], vec![1.0]]);
        let v = all_to_all_v(&[vec![1.0, 2.0], vec![3.0, 4.0]], &[vec![-3, 5], vec![1, 0]], 1, 1);
        assert_eq!(v[0].0, vec![0, 1]);
        assert_eq!(v[0].1, vec![None, Some(3.0)]);
        assert_eq!(v[1].0, vec![1, 0]);
        assert_eq!(ring_allreduce_bytes(256, 4, 4, 0), 2 * 3 * 64 * 4);
    }
}
