#!/usr/bin/python3
"""layers.py: check that vigil's folders include each other only downwards.

Reads the order of the folders (scripts/layers.txt), scans every
`#include "..."` of vigil's own sources (not tests/, bench/, fuzz/) and
fails, naming file:line, on an include of a higher folder or of a sibling,
on a circle between folders, on a source folder the order does not name,
and on a basename two .c files share (build/ mirrors the tree, but a name
that says what a file does is said once).

usage: scripts/layers.py [--root DIR] [--layers FILE]
"""
import argparse
import os
import re
import sys

# Not part of the binary: they may include anything.
NOT_SOURCES = {"tests", "bench", "fuzz"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


class Order:
    """The layers file: a rank per folder, siblings share one, plus the
    edges allowed besides it ("allow") and those allowed for now
    ("temporary", left out of the circle check)."""

    def __init__(self, path):
        self.rank = {}
        self.allowed = set()
        self.temporary = set()
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                self._line(path, n, line.split("#", 1)[0].split())

    def _line(self, path, n, words):
        if not words:
            return
        if words[0] in ("allow", "temporary"):
            if len(words) != 4 or words[2] != "->":
                sys.exit(f"{path}:{n}: expected '{words[0]} FROM -> TO'")
            edge = (words[1], words[3])
            self.allowed.add(edge)
            if words[0] == "temporary":
                self.temporary.add(edge)
            return
        rank = len(set(self.rank.values()))
        for folder in words:
            if folder in self.rank:
                sys.exit(f"{path}:{n}: {folder} named twice")
            self.rank[folder] = rank

    def why_not(self, src, dst):
        """None when src may include dst, else what is wrong."""
        if src == dst or (src, dst) in self.allowed:
            return None
        if dst not in self.rank:
            return f"{dst} is not a layer"
        if self.rank[dst] < self.rank[src]:
            return None
        return "a sibling" if self.rank[dst] == self.rank[src] else "a higher layer"


def sources(root):
    """(folder, path) of every .c and .h of the binary, relative to root."""
    for top in sorted(os.listdir(root)):
        if top in NOT_SOURCES or top.startswith((".", "build")):
            continue
        if not os.path.isdir(os.path.join(root, top)):
            continue
        for d, subdirs, files in os.walk(os.path.join(root, top)):
            subdirs.sort()
            folder = os.path.relpath(d, root)
            for name in sorted(files):
                if name.endswith((".c", ".h")):
                    yield folder, os.path.join(folder, name)


def includes(root, path):
    """(line number, included folder) of each quoted include; a bare name
    is the including file's own folder."""
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                inc = m.group(1)
                yield n, os.path.dirname(inc) or os.path.dirname(path)


def shortest_path(graph, a, b):
    """The folders from a to b along includes, shortest first; None if none."""
    back, todo = {a: None}, [a]
    for v in todo:
        if v == b:
            path = []
            while v is not None:
                path.append(v)
                v = back[v]
            return path[::-1]
        for w in sorted(graph.get(v, ())):
            if w not in back:
                back[w] = v
                todo.append(w)
    return None


def circles(edges, order):
    """Each circle once, as a list of folders from its first back to it.
    Includes only downwards cannot close one: every circle has an edge to
    a folder of the same rank or higher, so from each such edge the
    shortest way back names the circles."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    seen, found = set(), []
    for a, b in sorted(edges):
        if order.rank.get(b, len(order.rank)) < order.rank.get(a, -1):
            continue
        path = shortest_path(graph, b, a)
        if not path:
            continue
        cycle = [a] + path
        key = frozenset(zip(cycle, cycle[1:]))
        if key not in seen:
            seen.add(key)
            found.append(cycle)
    return found


def check(root, order):
    """The list of problems, each a line to print."""
    problems = []
    edges = {}      # (from, to) -> first file:line, for the circles
    unknown = set()
    basenames = {}
    for folder, path in sources(root):
        if folder not in order.rank:
            unknown.add(folder)
            continue
        if path.endswith(".c"):
            basenames.setdefault(os.path.basename(path), []).append(path)
        for n, dst in includes(root, path):
            if dst == folder:
                continue
            why = order.why_not(folder, dst)
            if why:
                problems.append(f"{path}:{n}: {folder} includes {dst}: {why}")
            if (folder, dst) not in order.temporary:
                edges.setdefault((folder, dst), f"{path}:{n}")
    for folder in sorted(unknown):
        problems.append(f"{folder}: a source folder scripts/layers.txt does not name")
    for cycle in circles(edges, order):
        where = "; ".join(edges[e] for e in zip(cycle, cycle[1:]))
        problems.append(f"circle {' -> '.join(cycle)} ({where})")
    for name, paths in sorted(basenames.items()):
        if len(paths) > 1:
            problems.append(f"basename {name} occurs {len(paths)} times: {' '.join(paths)}")
    return problems


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.dirname(here))
    ap.add_argument("--layers", default=os.path.join(here, "layers.txt"))
    a = ap.parse_args()
    problems = check(a.root, Order(a.layers))
    for p in problems:
        print(p)
    if problems:
        print(f"layers: {len(problems)} problem(s); the order is in {a.layers}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
