"""report.py: tables as aligned text (the terminal) and as Markdown
(bench/README.md, results/summary.md), from the same rows."""


def fmt(v, spec="%.1f", none="-"):
    return none if v is None else spec % v


class Table:
    def __init__(self, title, header, note=None):
        self.title = title
        self.header = header
        self.rows = []
        self.note = note

    def add(self, *cells):
        self.rows.append([str(c) for c in cells])

    def text(self):
        widths = [max(len(r[i]) for r in [self.header] + self.rows)
                  for i in range(len(self.header))]

        def line(r):
            # First column left-aligned (labels), numbers right-aligned.
            return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(r, widths))).rstrip()
        out = ["== " + self.title, line(self.header)]
        out += [line(r) for r in self.rows]
        if self.note:
            out.append("   " + self.note)
        return "\n".join(out)

    def markdown(self):
        out = ["#### " + self.title, "",
               "| " + " | ".join(self.header) + " |",
               "|" + "|".join(["---"] + ["---:"] * (len(self.header) - 1)) + "|"]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in self.rows]
        if self.note:
            out += ["", self.note]
        return "\n".join(out) + "\n"
