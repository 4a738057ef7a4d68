"""TEST STAND-IN (pld-testkit): the pinned two-argument form."""


def make_tensor_arg(worker, tensor):
    if not tensor.flags["C_CONTIGUOUS"]:
        raise ValueError("non-contiguous")
    return ("host", tensor)
