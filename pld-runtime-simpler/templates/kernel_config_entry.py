{
    "func_id": ${func_id},
    "name": "${name}",
    "source": str(_ROOT_DIR / "kernels" / "${core_type}" / "${name}.cpp"),
    "core_type": "${core_type}",
    "signature": ${signature},
},
