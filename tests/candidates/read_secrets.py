"""read_secrets.py: try to read the file named by $SECRET_PATH, and
~/.ssh/id_rsa, then print the whole environment as NAME=VALUE lines."""
import os

for path in [os.environ.get("SECRET_PATH", ""), os.path.expanduser("~/.ssh/id_rsa")]:
    try:
        with open(path) as f:
            print("read", path, "ok", f.read().strip())
    except OSError as e:
        print("read", path, "failed", e.errno)
for name, value in sorted(os.environ.items()):
    print("env %s=%s" % (name, value))
