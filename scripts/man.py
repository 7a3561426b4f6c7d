#!/usr/bin/env python3
"""man.py: the manual pages, generated from what they describe so that
they cannot drift from it.

  man.py help NAME SECTION SUMMARY < HELP_TEXT    a page from `--help` text
  man.py doc NAME SECTION SUMMARY < MARKDOWN      a page from docs/*.md

Section 1 pages are the subcommands' own --help text (the source of truth
for flags; its "examples:" part becomes EXAMPLES); section 5 and 7 pages are docs/POLICY.md, docs/FORMAT.md and
docs/SECURITY.md converted from the small Markdown subset those use:
headings, paragraphs, bullet lists, fenced code, tables, `code`,
**bold**, *italic* and [links](...).  The page goes to stdout."""
import re
import sys

DATE = "2026"
SOURCE = "vigil"
MANUAL = {"1": "User Commands", "5": "File Formats", "7": "Miscellanea"}


# Where the source's docs/ are, once installed: the pages made of them, or
# the documentation directory for those no page is made of.
DOC_PAGES = {"docs/POLICY.md": "vigil-policy(5)", "docs/FORMAT.md": "vigil-log(5)",
             "docs/SECURITY.md": "vigil-security(7)", "docs/RUN.md": "vigil-running(7)"}


def installed_names(text):
    """A checkout's docs/X.md as the installed page or file it becomes;
    "(docs/X.md in the source)" after a page's name says nothing there."""
    text = re.sub(r" \(docs/[A-Z]+\.md in the source\)", "", text)
    return re.sub(r"docs/[A-Z]+\.md", lambda m: DOC_PAGES.get(
        m.group(0), m.group(0)[len("docs/"):] + " (with vigil's documentation)"), text)


def esc(text):
    """Plain text for roff: backslashes, and a leading . or ' that roff
    would read as a request."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", text)


def inline(text):
    """Markdown inline markup to roff fonts."""
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)
    parts = re.split(r"(`[^`]+`)", text)
    out = []
    for p in parts:
        if p.startswith("`") and p.endswith("`") and len(p) > 1:
            out.append("\\fB" + esc(p[1:-1]) + "\\fR")
            continue
        p = esc(p)
        p = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", p)
        p = re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"\\fI\1\\fR", p)
        out.append(p)
    return "".join(out)


def header(name, section, summary):
    # left-aligned text: long words (paths, flags) cannot be justified
    return [f'.TH {name.upper()} {section} "{DATE}" "{SOURCE}" "{MANUAL[section]}"',
            ".ad l", ".SH NAME", f"{esc(name)} \\- {esc(summary)}"]


def table(rows):
    """A Markdown table as tagged paragraphs: the first cell is the tag,
    the others follow, each named by its column's heading when there are
    several.  (tbl tables with cells that wrap over many lines do not fit
    man's pages: groff warns, and lintian with it.)"""
    cells = [[c.strip() for c in r.strip().strip("|").split("|")] for r in rows]
    cells = [c for c in cells if not all(re.fullmatch(r":?-+:?", x) for x in c)]
    head, body = cells[0], cells[1:]
    out = []
    for row in body:
        out.extend([".TP", inline(row[0]) or "\\&"])
        rest = [(h, x) for h, x in zip(head[1:], row[1:]) if x]
        for k, (h, x) in enumerate(rest):
            if k:
                out.append(".br")
            out.append(inline(x) if len(rest) == 1 else "\\fI%s\\fR: %s" % (esc(h), inline(x)))
    return out


def from_markdown(name, section, summary, text):
    out = header(name, section, summary)
    lines = text.split("\n")
    i, para = 0, []

    def flush():
        if para:
            out.extend([".PP", inline(" ".join(para))])
            para.clear()

    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            flush()
            i += 1
            out.extend([".PP", ".nf", ".RS 2"])
            while i < len(lines) and not lines[i].startswith("```"):
                out.append(esc(lines[i]))
                i += 1
            out.extend([".RE", ".fi"])
        elif line.startswith("# "):
            flush()
            out.extend([".SH DESCRIPTION", inline(line[2:])])
        elif line.startswith("## "):
            flush()
            out.append(".SH " + inline(line[3:]).upper())
        elif line.startswith("### "):
            flush()
            out.append(".SS " + inline(line[4:]))
        elif line.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(lines[i])
                i += 1
            out.extend(table(rows))
            continue
        elif re.match(r"^\s*[*-] ", line):
            flush()
            item = [re.sub(r"^\s*[*-] ", "", line)]
            while i + 1 < len(lines) and lines[i + 1].startswith("  ") and lines[i + 1].strip():
                i += 1
                item.append(lines[i].strip())
            out.extend([".IP \\(bu 2", inline(" ".join(item))])
        elif not line.strip():
            flush()
        else:
            para.append(line.strip())
        i += 1
    flush()
    return out


def from_help(name, section, summary, text):
    out = header(name, section, summary)
    lines = text.rstrip("\n").split("\n")
    # the synopsis: the "usage:" line and the lines that continue it
    n = 1 if lines and lines[0].startswith("usage:") else 0
    while n and n < len(lines) and lines[n].startswith("       ") and lines[n].strip():
        n += 1
    usage, rest = lines[:n], lines[n:]
    # "examples:" (cli/options.h, VG_OPTS_EXAMPLES_HEAD) ends the description:
    # each example is a command line and, indented under it, what it does
    examples = []
    if "examples:" in rest:
        k = rest.index("examples:")
        rest, examples = rest[:k], [x for x in rest[k + 1:] if x.strip()]
    out.append(".SH SYNOPSIS")
    out.extend(".B " + esc(u.replace("usage:", "").strip()) + "\n.br" for u in usage)
    out.extend([".SH DESCRIPTION", ".nf"] + [esc(x) for x in rest] + [".fi"])
    if examples:
        out.append(".SH EXAMPLES")
        for x in examples:
            if x.startswith("      "):
                out.extend([".RS 4", esc(x.strip()), ".RE"])
            else:
                out.extend([".PP", "\\fB" + esc(x.strip()) + "\\fR"])
    out.extend([".SH SEE ALSO", "vigil(1), vigil\\-policy(5), vigil\\-log(5), vigil\\-running(7), "
                "vigil\\-security(7)"])
    return out


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("help", "doc") or sys.argv[3] not in MANUAL:
        sys.exit("usage: man.py help|doc NAME SECTION SUMMARY < TEXT")
    kind, name, section, summary = sys.argv[1:]
    text = installed_names(sys.stdin.read())
    if not text.strip():
        sys.exit(f"man.py: no text for {name}({section})")
    make = from_help if kind == "help" else from_markdown
    sys.stdout.write("\n".join(make(name, section, summary, text)) + "\n")


if __name__ == "__main__":
    main()
