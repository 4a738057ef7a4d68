"""TEST STAND-IN (pld-testkit)."""


def extract_text_section(binary):
    return binary
