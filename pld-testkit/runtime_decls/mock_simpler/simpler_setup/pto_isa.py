"""TEST STAND-IN (pld-testkit)."""


def ensure_pto_isa_root(commit=None, clone_protocol=None):
    return "/nonexistent/pto-isa"
