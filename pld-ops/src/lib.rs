//! pld-ops (placeholder)
