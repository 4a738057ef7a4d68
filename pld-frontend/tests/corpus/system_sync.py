# Signals: notify (both ops, keyword and positional forms), wait, defer_wait, enum members.
import pypto.language as pl
import pypto.language.distributed as pld

N_RANKS = 4


@pl.program
class SystemSync:
    @pl.function(type=pl.FunctionType.InCore)
    def handshake(self, signal: pl.InOut[pld.DistributedTensor[[N_RANKS, 1], pl.INT32]], tag: pl.Scalar[pl.INT32]):
        ctx = pld.get_comm_ctx(signal)
        me = pld.rank(ctx)
        n = pld.nranks(ctx)
        for peer in pl.range(N_RANKS):
            if peer != me:
                pld.system.notify(signal, peer=peer, offsets=[me, 0], value=1, op=pld.NotifyOp.AtomicAdd)
        pld.system.notify(target=signal, peer=(me + 1) % n, offsets=[me, 0], value=tag, op=pld.NotifyOp.Set)
        for src in pl.range(N_RANKS):
            if src != me:
                pld.system.wait(signal, offsets=[src, 0], expected=1, cmp=pld.WaitCmp.Ge)
        pld.system.wait(signal, [me, 0], tag, cmp=pld.WaitCmp.Eq)
        pld.system.defer_wait(signal=signal, offsets=[0, 0], expected=N_RANKS - 1, cmp=pld.WaitCmp.Ge)
