"""Module constants: folding, dtype widths, pl.dynamic symbols. Non-DSL code is skipped."""
import argparse

import pypto.language as pl
import pypto.language.distributed as pld

N_RANKS = 2
ROWS = 8
COLS = ROWS * 4
TOTAL = N_RANKS * ROWS * COLS
HALF = TOTAL // 2 - 1
NEG = -3
BYTES = TOTAL * pl.FP32.get_byte()
NR = pl.dynamic("NR")
DT = pl.INT32
SHAPE = [ROWS, COLS]


def helper(x):
    return x * 2


@pl.program
class Constants:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        a: pl.Tensor[[ROWS, COLS], pl.FP32],
        b: pld.DistributedTensor[[NR, 1], DT],
        c: pl.Tensor[SHAPE, pl.FP16],
        s: pl.Scalar[pl.INDEX],
    ):
        x = HALF + s
        y = NEG * x - BYTES
        z = min(x, y) + max(ROWS, s) + pl.min(s, 3) - pl.max(1, s)
        w: pl.Scalar[pl.INT32] = 7
        neg = pl.const(-4, pl.INT32)
        big: pl.Scalar[pl.INT64] = pl.const(5, dtype=pl.INT64)
        return

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self):
        buf = pld.alloc_window_buffer([NR, 1], dtype=DT)
        for r in pl.range(pld.world_size()):
            sig = pld.window(buf, [NR, 1], dtype=DT)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--x")
    print(helper(3))


if __name__ == "__main__":
    main()
