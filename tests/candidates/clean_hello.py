"""clean_hello.py: a clean Python candidate, as a model writes one when
asked for "count the words of a text": it imports a few standard modules,
computes, writes its answer into its working directory, reads it back and
prints it.  Nothing it does is worth a reviewer's look: its intent summary
must be empty (tests/test_summary_noise.py)."""
import collections
import json
import os
import tempfile

TEXT = "the quick brown fox jumps over the lazy dog the end"

counts = collections.Counter(TEXT.split())
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as tmp:
    json.dump(counts, tmp)          # scratch in the sandbox's own /tmp
with open(tmp.name) as f:
    loaded = json.load(f)
os.unlink(tmp.name)
with open("words.json", "w") as f:
    json.dump(loaded, f)
print(sorted(loaded.items(), key=lambda kv: (-kv[1], kv[0]))[:3])
