"""TEST STAND-IN (pld-testkit): the names kernel_config.py imports, not the runtime."""
import enum


class ArgDirection(enum.IntEnum):
    SCALAR = 0
    IN = 1
    OUT = 2
    INOUT = 3
