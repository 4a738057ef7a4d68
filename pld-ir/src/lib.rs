//! pld-ir (placeholder)
