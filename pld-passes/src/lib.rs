//! pld-passes (placeholder)
