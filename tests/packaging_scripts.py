"""The scripts of packaging/ as modules, for the tests that call their functions (`packaging` is another
package's name, so they cannot be imported by it)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

PACKAGING = Path(__file__).resolve().parent.parent / "packaging"


def packaging_script(name: str) -> ModuleType:
    """packaging/<name>.py, loaded as the module <name>."""
    spec = importlib.util.spec_from_file_location(name, PACKAGING / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
