//! pld-codegen-pto (placeholder)
