"""TEST STAND-IN (pld-testkit), not simpler_setup."""
