# Pushing a computed value with put is rejected: TPUT moves GM to GM.
# ERROR: pld.tensor.put src must be a GM tensor
# ERROR: pld.tensor.remote_store
import pypto.language as pl
import pypto.language.distributed as pld


@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        dst: pld.DistributedTensor[[16, 64], pl.FP32],
        src: pl.Tensor[[16, 64], pl.FP32],
    ):
        doubled = pl.tensor.muls(src, 2.0)
        pld.tensor.put(dst, 1, doubled, atomic=pld.AtomicType.None_)

# The whole diagnostic, as `cargo xtask bless` records it:
# EXPECTED:
#| 17:32: pld.tensor.put src must be a GM tensor, but got a computed value that lowers to a tile: TPUT transfers between two GM regions, and a UB tile has no GM address
#|   note: use pld.tensor.remote_store(src, target, peer, offsets) to push a computed value straight to a peer (pld.remote_store dispatches to it automatically)
