//! pld-runtime-abi (placeholder)
