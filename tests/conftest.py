"""Shared fixtures: where the vigil binary is, and a helper to run it."""
import os
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
VIGIL = os.environ.get("VIGIL", os.path.join(ROOT, "vigil"))


@pytest.fixture
def vigil():
    """Run vigil with the given arguments; returns CompletedProcess (text)."""
    def run(*args, timeout=120, **kw):
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        return subprocess.run([VIGIL, *args], timeout=timeout, **kw)
    return run
