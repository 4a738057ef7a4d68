//! pld-frontend (placeholder)
