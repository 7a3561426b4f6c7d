"""scripts/layers.py: vigil's folders include each other only downwards
(scripts/layers.txt), without circles, and no two .c files share a name."""
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SCRIPT = os.path.join(ROOT, "scripts", "layers.py")


def run(*args):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          timeout=60)


def test_vigil_keeps_its_layers():
    r = run()
    assert r.returncode == 0, r.stdout + r.stderr


def tree(tmp_path, files):
    for path, text in files.items():
        p = tmp_path / path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return ["--root", str(tmp_path), "--layers", str(tmp_path / "layers.txt")]


def test_an_include_up_a_sibling_a_circle_and_a_twin_name_fail(tmp_path):
    args = tree(tmp_path, {
        "layers.txt": "low\nmid/a mid/b\nhigh\n",
        "low/x.c": '#include "low/x.h"\n#include "high/h.h"\n',
        "mid/a/y.c": '#include "low/x.h"\n\n#include "mid/b/z.h"\n',
        "high/x.c": '#include "mid/a/y.h"\n',
        "tests/t.c": '#include "high/h.h"\n',
    })
    r = run(*args)
    assert r.returncode == 1
    assert "low/x.c:2: low includes high: a higher layer" in r.stdout
    assert "mid/a/y.c:3: mid/a includes mid/b: a sibling" in r.stdout
    assert "circle low -> high -> mid/a -> low" in r.stdout
    assert "basename x.c occurs 2 times" in r.stdout
    assert "tests" not in r.stdout


def test_allowed_and_temporary_edges_pass(tmp_path):
    args = tree(tmp_path, {
        "layers.txt": "low\nhigh\nallow low -> high\ntemporary high -> low\n",
        "low/x.c": '#include "high/h.h"\n',
        "high/y.c": '#include "low/x.h"\n',
    })
    r = run(*args)
    assert r.returncode == 0, r.stdout + r.stderr
