"""log_flood.py N: N allowed opens of a system file, each one a record in
the log (default.policy audits reads): a log that grows without a single
refusal.  Prints "opened N" when done."""
import sys

n = int(sys.argv[1])
for _ in range(n):
    with open("/etc/hostname", "rb") as f:
        f.read()
print("opened", n)
