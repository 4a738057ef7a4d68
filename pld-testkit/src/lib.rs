//! pld-testkit (placeholder)
