"""The digest of docs/IMAGES.md, recomputed independently of vigil:
python3 tests/image_digest.py ROOTFS prints it."""
import hashlib
import os
import stat
import sys


def digest(root):
    recs = []
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            full = os.path.join(dirpath, name)
            rel = os.fsencode(os.path.relpath(full, root))
            st = os.lstat(full)
            head = b"%04o " % stat.S_IMODE(st.st_mode) + rel + b"\0"
            if stat.S_ISDIR(st.st_mode):
                recs.append((rel, b"d " + head + b"\0"))
            elif stat.S_ISLNK(st.st_mode):
                recs.append((rel, b"l " + head + os.readlink(os.fsencode(full)) + b"\0"))
            else:
                h, size = hashlib.sha256(), 0
                with open(full, "rb") as f:
                    for chunk in iter(lambda: f.read(65536), b""):
                        h.update(chunk)
                        size += len(chunk)
                recs.append((rel, b"f " + head + b"%d %s\0" % (size, h.hexdigest().encode())))
    return hashlib.sha256(b"".join(r for _, r in sorted(recs))).hexdigest()


if __name__ == "__main__":
    print(digest(sys.argv[1]))
