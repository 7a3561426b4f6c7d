"""Imported by pyframes_main.py: a refused open from a module's function."""


def probe():
    try:
        open("/pyframes/mod")  # MARK: mod
    except OSError:
        pass
