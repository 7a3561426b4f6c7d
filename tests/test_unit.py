"""Run every C unit test binary (tests/unit/test_*.c, built by `make unit`)."""
import glob
import os
import subprocess

import pytest

UNIT_DIR = os.environ.get("UNIT_DIR", os.path.join(os.path.dirname(__file__), "..", "build", "tests"))
BINARIES = sorted(glob.glob(os.path.join(UNIT_DIR, "test_*")))


@pytest.mark.parametrize("binary", BINARIES, ids=[os.path.basename(b) for b in BINARIES])
def test_unit(binary):
    r = subprocess.run([binary], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
