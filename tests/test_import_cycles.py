"""No import circle between the project's files: every import counted (at any depth, lazy and
TYPE_CHECKING ones too), as a reader following imports sees them. A circle means two files that
cannot be read, changed or tested one without the other; import-linter's contracts keep the packages
apart, this keeps the files so."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the product's packages, and the training package, which lives in packaging/ (imported as `training`)
PACKAGES = {"app": ROOT, "ui": ROOT, "storage": ROOT, "models": ROOT, "training": ROOT / "packaging"}


def _modules() -> dict[str, Path]:
    found = {}
    for package, parent in PACKAGES.items():
        for path in (parent / package).rglob("*.py"):
            if "migrations" not in path.parts:
                found[".".join(path.relative_to(parent).with_suffix("").parts).removesuffix(".__init__")] = path
    return found


def _imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Each module's imports of the others; a package's __init__ imported by its own modules is not one."""

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    edges: dict[str, set[str]] = {module: set() for module in modules}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                names = [f"{base}.{alias.name}" for alias in node.names] + [base]
            else:
                continue
            for name in names:
                target = resolve(name)
                if (
                    target
                    and target != module
                    and not (modules[target].name == "__init__.py" and module.startswith(target + "."))
                ):
                    edges[module].add(target)
    return edges


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of two or more modules (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_the_circle_finder_finds_a_circle_and_only_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(edges) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_file_imports_itself_back_through_others() -> None:
    modules = _modules()
    assert len(modules) > 100  # the whole tree was read
    found = circles(_imports(modules))
    assert not found, "import circles: " + "; ".join(" ↔ ".join(group) for group in found)


def test_the_product_never_imports_the_training_package() -> None:
    """training reads labelled data and needs torch or onnx: nothing Assay runs imports it (the import
    contract in pyproject.toml says the same; this also reads lazy imports)."""
    edges = _imports(_modules())
    product = [m for m in edges if not m.startswith("training")]
    assert len(product) > 100 and len(edges) - len(product) >= 8  # both were read
    assert not [m for m in product if any(t.startswith("training") for t in edges[m])]
    assert any(t.startswith("models") for m in edges if m.startswith("training") for t in edges[m])
