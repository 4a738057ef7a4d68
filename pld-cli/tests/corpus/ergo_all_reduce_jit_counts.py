"""Histogram merge in the @pl.jit form: each rank holds INT32 counts of odd length, the
kernel converts them to FP32 and publishes them, `pld.all_reduce(counts)` sums them across
ranks with the default op and mode, and a second kernel scales the totals to frequencies.

    freq[r] = (sum over ranks k of counts[k]) * SCALE      (for every r)
"""
import numpy as np
import pypto.language as pl
import pypto.language.distributed as pld

NR = pl.dynamic("NR")
BINS = 33
# Tile rows are whole 32-byte units: 40 lanes, of which BINS are valid.
PAD = 40
SCALE = 0.125


@pl.jit.incore
def publish_counts(
    counts: pl.Tensor[[1, BINS], pl.INT32],
    window: pl.Out[pld.DistributedTensor[[1, BINS], pl.FP32]],
):
    c = pl.load(counts, [0, 0], [1, PAD], valid_shape=[1, BINS])
    f = pl.cast(c, pl.FP32)
    window = pl.store(f, [0, 0], window)
    return window


@pl.jit.incore
def to_frequency(
    window: pld.DistributedTensor[[1, BINS], pl.FP32],
    freq: pl.Out[pl.Tensor[[1, BINS], pl.FP32]],
):
    total = pl.load(window, [0, 0], [1, PAD], valid_shape=[1, BINS])
    scaled = pl.muls(total, SCALE)
    freq = pl.store(scaled, [0, 0], freq)
    return freq


@pl.jit
def publish_step(
    counts: pl.Tensor[[1, BINS], pl.INT32],
    window: pl.Out[pld.DistributedTensor[[1, BINS], pl.FP32]],
):
    publish_counts(counts, window)


@pl.jit
def finish_step(
    window: pld.DistributedTensor[[1, BINS], pl.FP32],
    freq: pl.Out[pl.Tensor[[1, BINS], pl.FP32]],
):
    to_frequency(window, freq)


@pl.jit.host
def histogram(
    counts: pl.Tensor[[NR, 1, BINS], pl.INT32],
    freq: pl.Out[pl.Tensor[[NR, 1, BINS], pl.FP32]],
):
    buf = pld.alloc_window_buffer([1, BINS], dtype=pl.FP32)
    window = pld.window(buf, [1, BINS], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        publish_step(counts[r], window, device=r)
    window = pld.all_reduce(window)
    for r in pl.range(pld.world_size()):
        finish_step(window, freq[r], device=r)


def golden(tensors, params):
    total = tensors["counts"].astype(np.float64).sum(axis=0, keepdims=True)
    tensors["freq"][:] = (total * SCALE).astype(np.float32)
