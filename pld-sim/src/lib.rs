//! pld-sim (placeholder)
