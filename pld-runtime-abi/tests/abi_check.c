/* abi_check.c: an independent C check of include/pld_runtime_abi.h.
 *
 * Every number below is written out by hand from the seed and the runtime spec,
 * not generated, so a wrong generator or a wrong Rust constant is caught here.
 * `cargo xtask ci` compiles it with `gcc -std=c11 -Wall -Wextra -Werror -pedantic`.
 */
#include "pld_runtime_abi.h"

#include <stddef.h>
#include <stdint.h>

/* ABI enums: the kwarg payloads (seed, "ABI enums"). */
_Static_assert(PLD_NOTIFY_OP_ATOMIC_ADD == 0, "NotifyOp.AtomicAdd");
_Static_assert(PLD_NOTIFY_OP_SET == 1, "NotifyOp.Set");
_Static_assert(PLD_NOTIFY_OP_COUNT == 2, "NotifyOp member count");
_Static_assert(PLD_WAIT_CMP_EQ == 0, "WaitCmp.Eq");
_Static_assert(PLD_WAIT_CMP_GE == 1, "WaitCmp.Ge");
_Static_assert(PLD_WAIT_CMP_COUNT == 2, "WaitCmp member count");
_Static_assert(PLD_ATOMIC_TYPE_NONE == 0, "AtomicType.None_");
_Static_assert(PLD_ATOMIC_TYPE_ADD == 1, "AtomicType.Add");
_Static_assert(PLD_ATOMIC_TYPE_COUNT == 2, "AtomicType member count");
_Static_assert(PLD_REDUCE_OP_SUM == 0, "ReduceOp.Sum");
_Static_assert(PLD_REDUCE_OP_MAX == 1, "ReduceOp.Max");
_Static_assert(PLD_REDUCE_OP_MIN == 2, "ReduceOp.Min");
_Static_assert(PLD_REDUCE_OP_PROD == 3, "ReduceOp.Prod");
_Static_assert(PLD_REDUCE_OP_COUNT == 4, "ReduceOp member count");

/* The typedef names exist and hold their members. */
static const NotifyOp notify_op = PLD_NOTIFY_OP_SET;
static const WaitCmp wait_cmp = PLD_WAIT_CMP_GE;
static const AtomicType atomic_type = PLD_ATOMIC_TYPE_ADD;
static const ReduceOp reduce_op = PLD_REDUCE_OP_PROD;

/* CommContext (runtime spec 2.2, codegen spec 3.1). */
_Static_assert(COMM_MAX_RANK_NUM == 64, "COMM_MAX_RANK_NUM");
_Static_assert(sizeof(CommContext) == 1056, "CommContext size");
_Static_assert(_Alignof(CommContext) == 8, "CommContext alignment");
_Static_assert(offsetof(CommContext, workSpace) == 0, "workSpace");
_Static_assert(offsetof(CommContext, workSpaceSize) == 8, "workSpaceSize");
_Static_assert(offsetof(CommContext, rankId) == 16, "rankId");
_Static_assert(offsetof(CommContext, rankNum) == 20, "rankNum");
_Static_assert(offsetof(CommContext, winSize) == 24, "winSize");
_Static_assert(offsetof(CommContext, windowsIn) == 32, "windowsIn");
_Static_assert(offsetof(CommContext, windowsOut) == 544, "windowsOut");
_Static_assert(sizeof(((CommContext *)0)->rankId) == 4, "rankId is 32-bit");
_Static_assert(sizeof(((CommContext *)0)->rankNum) == 4, "rankNum is 32-bit");
_Static_assert(sizeof(((CommContext *)0)->windowsIn) == 64 * 8, "windowsIn is u64[64]");
_Static_assert(sizeof(((CommContext *)0)->windowsOut) == 64 * 8, "windowsOut is u64[64]");
/* Codegen reads the struct as int64 slots: slot 2 = rankId | rankNum << 32, slot 4 + r = windowsIn[r]. */
_Static_assert(offsetof(CommContext, rankId) / 8 == 2, "rank pair slot");
_Static_assert(offsetof(CommContext, windowsIn) / 8 == 4, "windowsIn slot base");

int main(void) {
    CommContext ctx = {0};
    ctx.rankId = 1;
    ctx.rankNum = 2;
    ctx.windowsIn[1] = 4096;
    return (int)(ctx.windowsIn[ctx.rankId] - 4096) + (notify_op - 1) + (wait_cmp - 1) +
           (atomic_type - 1) + (reduce_op - 3);
}
