with (_domain_provider or orch.allocate_domain)(
    name=${name},
    workers=${workers},
    window_size=${window_size},
    buffers=[
        ${buffers}
    ],
) as __${domain}:
