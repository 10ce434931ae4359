"""A real X server for the tests that drive Assay's window as a user's desktop shows it (Xvfb, Qt's xcb)."""

from __future__ import annotations

import os
import select
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

TOOLS = {"Xvfb": "xvfb", "xdotool": "xdotool", "xwd": "x11-apps"}  # program -> the Debian package with it


@contextmanager
def xvfb(screen: str) -> Iterator[str]:
    """A fresh Xvfb server with one screen (WIDTHxHEIGHTxDEPTH); its display name (":N", a free number
    Xvfb picks itself)."""
    missing = [package for tool, package in TOOLS.items() if shutil.which(tool) is None]
    assert not missing, f"install {' '.join(missing)} (`make test-deps` does)"
    read, write = os.pipe()
    server = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", screen, "-nolisten", "tcp"],
        pass_fds=[write],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    try:
        ready, _, _ = select.select([read], [], [], 30)
        assert ready, "Xvfb did not start within 30 s"
        number = os.read(read, 64).decode().strip()
        assert number.isdigit(), f"Xvfb said {number!r} instead of a display number"
        yield f":{number}"
    finally:
        os.close(read)
        server.terminate()
        server.wait(10)
