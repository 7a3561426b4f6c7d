"""Shared fixtures (where the vigil binary is, a helper to run it) and the
suite's two tiers.

Tiers (issue 22):
  make test   every test not marked soak: unit tests and the end-to-end
              mechanism tests, two pytest-xdist workers (tests/run.sh -n 2).
              Nothing in it may depend on how fast the machine is or how
              busy: it must pass on a loaded 2-core machine, in parallel
              with itself.
  make soak   only the tests marked @pytest.mark.soak, one at a time (they
              want the CPUs to themselves): the long race loops (long
              enough for a race to be lost), assertions about throughput or
              timing, and the long whole-system runs that test no
              mechanism of their own (installing, the Debian package,
              Slurm).
A soak test is deselected unless `-m` chooses otherwise, or it is named on
the command line by its node id (FILE::TEST).

Engines.  The rule: a test runs under both engines (notify and ptrace)
where the engine is what is tested, that is where calls are delivered to
vigil and decided one by one: the attack, race and carry tests, the
isolation and audit tests, the engine tests.  A module says so with
`pytestmark = pytest.mark.engines` (each of its tests is run once per
engine, under a parameter [notify] / [ptrace] that every `vigil run` of
a helpers.Caller passes as --engine), or a test names `engine` as a parameter of its own
when it passes --engine itself.  Everything else (the CLI, the log reader,
the viewer, check, learn, batch, policy parsing, the result record, exit
codes, limits) runs once, under vigil's default engine: the engine does not
change what is tested there.  VIGIL_ENGINE=notify|ptrace runs every test
that does not choose its engine itself under that engine, once.

Image root.  VIGIL_TEST_IMAGE=1 runs every `vigil run` a helpers.Caller
starts with --image (tests/image_tree.py's test root, imported once per
caller): `make test-image` runs the layer-1 and layer-2 attack tests so,
as root and nobody, under both engines where they run both.  A test whose
premise an image does not have is skipped there alone (helpers.on_image),
a known hole of vigil's on an image is a strict xfail there
(helpers.fails_on_image); neither touches what it checks on the host."""
import os
import subprocess

import pytest

import helpers

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
VIGIL = os.environ.get("VIGIL", os.path.join(ROOT, "vigil"))
ENGINES = ["notify", "ptrace"]
# A race loop in make test: long enough to run the attack many times, too
# short to say that it ran often (a loaded machine makes fewer tries).
QUICK_RACE_SECONDS = 1


def pytest_configure(config):
    config.addinivalue_line("markers", "soak: a long race loop, a timing or throughput "
                            "assertion, or a long whole-system run: make soak only")
    config.addinivalue_line("markers", "engines: run each test of the module under both "
                            "engines (the rule: this file's docstring)")


def pytest_generate_tests(metafunc):
    # only tests that run vigil as a Caller (the *caller fixtures) get it
    runs = any(f.endswith("caller") for f in metafunc.fixturenames)
    if (runs and metafunc.definition.get_closest_marker("engines") and not helpers.ENGINE and
            "engine" not in metafunc.fixturenames):
        metafunc.parametrize("run_engine", ENGINES, indirect=True)


@pytest.fixture(autouse=True)
def run_engine(request, monkeypatch):
    """The engine a test of an `engines` module runs under (None: vigil's
    default, or VIGIL_ENGINE): every Caller.run of the test passes it."""
    engine = getattr(request, "param", None)
    if engine:
        monkeypatch.setattr(helpers, "TEST_ENGINE_OPTS", ["--engine", engine])
    return engine


class Race:
    """How long a race loop runs, and what says it raced: quick (make
    test) runs for QUICK_RACE_SECONDS and asks only that the attack was
    tried and never won; soak runs the test's own length and asks too that
    it was tried often and met both sides of the race."""

    def __init__(self, soak):
        self.soak = soak

    def seconds(self, long):
        return str(long if self.soak else QUICK_RACE_SECONDS)

    def often(self, tries, least):
        """tries (an int) is enough: at least `least` under soak, one in make test."""
        return int(tries) >= (least if self.soak else 1)

    def met(self, n):
        """One side of the race was met n times: some under soak (in make
        test the loop may be too short to meet both)."""
        return int(n) > 0 or not self.soak


@pytest.fixture(params=["quick", pytest.param("soak", marks=pytest.mark.soak)])
def race(request):
    """A race loop: run once quick in make test and once long in make soak."""
    return Race(request.param == "soak")


def pytest_collection_modifyitems(config, items):
    if helpers.ENGINE:  # one engine chosen: tests naming another are not run
        keep = [it for it in items if getattr(it, "callspec", None) is None or
                it.callspec.params.get("engine", helpers.ENGINE) == helpers.ENGINE]
        if len(keep) != len(items):
            config.hook.pytest_deselected(items=[it for it in items if it not in keep])
            items[:] = keep
    if config.option.markexpr:
        return  # -m chose
    named = {a.split("::")[0] for a in config.args if "::" in a}
    keep, drop = [], []
    for it in items:
        explicit = it.nodeid.split("::")[0] in named
        (drop if it.get_closest_marker("soak") and not explicit else keep).append(it)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture
def vigil():
    """Run vigil with the given arguments; returns CompletedProcess (text)."""
    def run(*args, timeout=120, **kw):
        kw.setdefault("capture_output", True)
        kw.setdefault("text", True)
        return subprocess.run([VIGIL, *args], timeout=timeout, **kw)
    return run
