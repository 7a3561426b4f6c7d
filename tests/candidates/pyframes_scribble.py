"""Candidate for tests/test_pyframes.py: a candidate that corrupts what
vigil reads to find its Python frames, then makes a refused open while
the corruption holds, and repairs it before the interpreter needs it
again.  Offsets are Debian's python3.11 (tests/test_pyframes.py runs it
with /usr/bin/python3): a code object's co_filename, co_qualname,
co_linetable pointers (garbage, unmapped, a bytes object claiming to be
huge), a code object whose type is not code, and a frame whose previous
pointer is itself (a loop)."""
import ctypes
import sys

P = ctypes.sizeof(ctypes.c_void_p)
CO_FILENAME, CO_QUALNAME, CO_LINETABLE = 112, 128, 136   # PyCodeObject, 3.11
OB_TYPE = 8
F_FRAME = 24            # PyFrameObject.f_frame (3.11)
FR_PREVIOUS = 48        # _PyInterpreterFrame.previous (3.11)


def poke(addr, value):
    old = ctypes.c_uint64.from_address(addr).value
    ctypes.c_uint64.from_address(addr).value = value
    return old


def attempt(path):
    try:
        open(path)
    except OSError:
        pass


def with_fields(values, path):
    """Overwrite fields of the running function's code object."""
    code = sys._getframe(1).f_code
    saved = [(off, poke(id(code) + off, v)) for off, v in values]
    attempt(path)
    for off, v in reversed(saved):
        poke(id(code) + off, v)


def garbage():
    with_fields([(CO_FILENAME, 0x4141414141414141), (CO_QUALNAME, 0x10),
                 (CO_LINETABLE, 0x7ffffffff000)], "/pyframes/garbage")


def misaligned():
    with_fields([(CO_FILENAME, id("x") + 3), (CO_QUALNAME, id(1.5))], "/pyframes/misaligned")


HUGE = b"\x80" * 64


def huge_table():
    size = id(HUGE) + 16    # PyVarObject.ob_size
    old = poke(size, 1 << 62)
    with_fields([(CO_LINETABLE, id(HUGE))], "/pyframes/huge")
    poke(size, old)


def not_code():
    with_fields([(OB_TYPE, id(int))], "/pyframes/notcode")


def loop():
    frame = ctypes.c_uint64.from_address(id(sys._getframe()) + F_FRAME).value
    old = poke(frame + FR_PREVIOUS, frame)
    attempt("/pyframes/loop")
    poke(frame + FR_PREVIOUS, old)


def wipe():
    """Every byte of the code object after its header, then restored."""
    code = sys._getframe(1).f_code
    start, n = id(code) + 16, 160
    saved = ctypes.string_at(start, n)
    ctypes.memset(start, 0xff, n)
    attempt("/pyframes/wipe")
    ctypes.memmove(start, saved, n)


def wiped():
    wipe()


for f in (garbage, misaligned, huge_table, not_code, loop, wiped):
    f()
print("scribble done")
