"""Before the first window: will Qt's platform plugin load? If not, say which packages to install.

Qt aborts (exit 134) with "Could not load the Qt platform plugin "xcb" … even though it was found"
when a system library its xcb or wayland plugin links is missing; this module finds those libraries
first (ldd on the plugin, as the dynamic loader will see them) and names the Debian/Ubuntu packages.

Standard library only, and PySide6 imported inside functions: `make system-deps` runs this file with
the system's python3 (`python3 ui/platform_check.py --apt-packages`) before the virtualenv exists.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

# Every system library Qt's platform plugins link (read with ldd from PySide6 6.12's plugins and the
# Qt libraries they load), and the Debian/Ubuntu package that ships it.
OFFSCREEN = {
    "libEGL.so.1": "libegl1",
    "libGL.so.1": "libgl1",
    "libxkbcommon.so.0": "libxkbcommon0",
    "libfontconfig.so.1": "libfontconfig1",
    "libdbus-1.so.3": "libdbus-1-3",
}
XCB = {
    "libX11.so.6": "libx11-6",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb.so.1": "libxcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-glx.so.0": "libxcb-glx0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-render.so.0": "libxcb-render0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-util.so.1": "libxcb-util1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
}
WAYLAND = {
    "libwayland-client.so.0": "libwayland-client0",
    "libwayland-cursor.so.0": "libwayland-cursor0",
    "libwayland-egl.so.1": "libwayland-egl1",
}
# What WeasyPrint (the PDF report) loads at run time: Pango, its FreeType backend, HarfBuzz's subsetter.
REPORT = {
    "libpango-1.0.so.0": "libpango-1.0-0",
    "libpangoft2-1.0.so.0": "libpangoft2-1.0-0",
    "libharfbuzz-subset.so.0": "libharfbuzz-subset0",
}
PACKAGES = OFFSCREEN | XCB | WAYLAND | REPORT
PLUGINS = {"xcb": "libqxcb.so", "wayland": "libqwayland.so", "wayland-egl": "libqwayland.so"}
# What the Xvfb test of `make test` drives the window with, and poppler's pdfsig that checks the
# signed report: program -> package.
TEST_TOOLS = {"Xvfb": "xvfb", "xdotool": "xdotool", "xwd": "x11-apps", "pdfsig": "poppler-utils"}


def platforms(environ: Mapping[str, str]) -> list[str]:
    """The platform plugins Qt will try, in order, as QGuiApplication chooses them on Linux."""
    chosen = environ.get("QT_QPA_PLATFORM", "")
    if chosen:
        return [name.split(":")[0].strip() for name in chosen.split(";") if name.strip()]
    if environ.get("XDG_SESSION_TYPE") == "wayland" or (environ.get("WAYLAND_DISPLAY") and not environ.get("DISPLAY")):
        return ["wayland", "xcb"]
    return ["xcb"]


def plugin_path(platform: str) -> Path | None:
    from PySide6.QtCore import QLibraryInfo

    plugins = Path(QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath))
    path = plugins / "platforms" / PLUGINS[platform]
    return path if path.is_file() else None


def unresolved(library: Path) -> list[str]:
    """The libraries `library` needs that the dynamic loader cannot find (everything it pulls in)."""
    try:
        out = subprocess.run(["ldd", str(library)], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []  # no ldd (not glibc): let Qt try
    missing = [line.split("=>")[0].strip() for line in out.splitlines() if "not found" in line]
    return list(dict.fromkeys(missing))


def packages_for(sonames: list[str]) -> tuple[list[str], list[str]]:
    """(Debian packages that provide the known libraries, the libraries with no package known)."""
    known = [PACKAGES[s] for s in sonames if s in PACKAGES]
    return list(dict.fromkeys(known)), [s for s in sonames if s not in PACKAGES]


def message(platform: str, sonames: list[str]) -> str:
    packages, unknown = packages_for(sonames)
    lines = [
        f"Assay cannot open its window: Qt's {platform!r} platform needs system libraries that are "
        f"not installed ({', '.join(sonames)}).",
    ]
    if packages:
        lines.append(f"On Debian or Ubuntu:  sudo apt-get install {' '.join(packages)}")
    if unknown:
        lines.append(f"Install the packages that provide: {', '.join(unknown)}")
    lines.append("(`make install` in the source folder installs them too.)")
    return "\n".join(lines)


def check() -> str | None:
    """None when Qt can load a platform plugin; otherwise the sentences that say what to install.

    When the preferred platform cannot load but a later one can (a Wayland session with XWayland),
    QT_QPA_PLATFORM is set to the one that works and the missing packages are named on stderr."""
    if not sys.platform.startswith("linux"):
        return None  # the macOS and Windows wheels carry everything their platform plugin needs
    problems: list[str] = []
    for platform in platforms(os.environ):
        if platform not in PLUGINS:
            return None  # offscreen, minimal, vnc, eglfs…: nothing to check here
        if platform == "xcb" and not os.environ.get("DISPLAY"):
            problems.append("Assay cannot open its window: no X display (DISPLAY is not set); start it on a desktop.")
            continue
        plugin = plugin_path(platform)
        missing = unresolved(plugin) if plugin else []
        if not missing:
            if problems:
                os.environ["QT_QPA_PLATFORM"] = platform
                print(problems[0], file=sys.stderr)
            return None
        problems.append(message(platform, missing))
    return "\n\n".join(problems)


def apt_packages(for_tests: bool = False) -> list[str]:
    """The packages of PACKAGES (and of the test tools) this machine lacks, by the loader's cache,
    plus, once PySide6 is installed, those that ldd finds missing for the xcb and wayland plugins."""
    try:
        ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"  # /sbin is not on every user's PATH
        cache = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        cache = ""
    known = {line.split()[0] for line in cache.splitlines()[1:] if line.strip()}
    wanted = [package for soname, package in PACKAGES.items() if soname not in known]
    try:
        for platform in ("xcb", "wayland"):
            plugin = plugin_path(platform)
            if plugin is not None:
                known, unknown = packages_for(unresolved(plugin))
                wanted += known
                if unknown:
                    print(f"no package known for {', '.join(unknown)} (needed by {plugin.name})", file=sys.stderr)
    except ImportError:
        pass  # the system python3, before the virtualenv exists
    if for_tests:
        wanted += [package for program, package in TEST_TOOLS.items() if shutil.which(program) is None]
    return list(dict.fromkeys(wanted))


if __name__ == "__main__":
    if sys.argv[1:2] != ["--apt-packages"]:
        sys.exit("usage: platform_check.py --apt-packages [--tests]")
    print(" ".join(apt_packages(for_tests="--tests" in sys.argv)))
