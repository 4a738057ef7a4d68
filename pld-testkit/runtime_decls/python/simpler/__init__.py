"""TEST STAND-IN (pld-testkit), not the Simpler runtime."""
