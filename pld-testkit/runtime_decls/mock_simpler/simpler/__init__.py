"""TEST STAND-IN (pld-testkit), not the Simpler runtime."""
import json
import os


def log(event, **fields):
    path = os.environ.get("MOCK_SIMPLER_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(dict(event=event, **fields)) + "\n")
