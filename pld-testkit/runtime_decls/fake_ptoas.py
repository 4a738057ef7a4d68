#!/usr/bin/env python3
"""TEST STAND-IN for ptoas (pld-testkit): `fake_ptoas.py UNIT.pto -o UNIT.cpp FLAGS...`.

Writes one empty function per public `func.func` with ptoas' include lines, `Tensor`
spelling and `extern "C" __global__ AICORE void` heads, and records its flags in a comment.
Fails (exit 1) when the flags are not the reference's for a target.
"""
import re
import sys

TYPES = {"f32": "float", "f16": "half", "bf16": "bfloat16_t", "i8": "int8_t", "i16": "int16_t",
         "i32": "int32_t", "i64": "int64_t", "i1": "bool", "ui8": "uint8_t"}


def ctype(t):
    t = t.strip()
    m = re.fullmatch(r"!pto\.ptr<(\w+)>", t)
    if m:
        return "__gm__ " + TYPES[m.group(1)] + "*"
    if t == "index":
        return "int64_t"
    return TYPES[t]


def main():
    args = sys.argv[1:]
    src, out = args[0], args[args.index("-o") + 1]
    flags = args[args.index("-o") + 2:]
    ok = (flags[0] == "--enable-insert-sync" and flags[1] in ("--pto-level=level3", "--pto-level=level2")
          and flags[2] == "--pto-arch" and flags[3] in ("a3", "a5"))
    if not ok:
        sys.stderr.write("fake ptoas: unexpected flags %r\n" % flags)
        return 1
    text = open(src).read()
    lines = ["#include \"pto/pto-inst.hpp\"", "#include <cstdint>", "using namespace pto;",
             "// fake ptoas %s" % " ".join(flags)]
    for m in re.finditer(r"func\.func @(\w+)\(([^)]*)\) attributes", text):
        name, params = m.group(1), m.group(2)
        decl = []
        for i, p in enumerate(x for x in params.split(",") if x.strip()):
            decl.append("%s v%d" % (ctype(p.split(":", 1)[1]), i))
        lines.append("extern \"C\" __global__ AICORE void %s(%s) {" % (name, ", ".join(decl)))
        lines.append("    static_assert(sizeof(Tensor) == 128, \"the Tensor ABI\");")
        lines.append("}")
    open(out, "w").write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
