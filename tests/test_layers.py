"""The import graph of agtaild: no cycles, and no arrow that crosses a layer the wrong way.

Read from the source with ``ast`` (every import counts: module level, inside functions and
under ``TYPE_CHECKING``), so a lazy import cannot hide a cycle. The layers, lowest first
(docs/architecture.md; each package's docstring states its own rule):

1. the foundation: ``model``, ``errors``, ``fsnames``, ``textsafe``, ``dirs``, ``pricing``, ``words``
2. the adapters (``agtaild.adapters``): nothing above the model
3. the index and the stores (``index``, ``store``, ``sync``); provenance (``provenance``): its
   index-time half (``paths``, ``shell``, ``records``) imports only the foundation, since the
   index imports it; its query-time half reads the index
4. the query layer (``query``), the team database (``pg``)
5. the API (``api``), MCP (``mcp``), sharing (``share``: documents made through the query layer's methods)
6. the daemon (``daemon``) and the CLI (``cli``, with its front door ``entry`` and
   ``statusline_fast``), which nothing imports
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "agtaild"

#: The `agtail` console script's front door: part of the CLI's layer, outside its package so
#: that `agtail statusline` starts without importing the package (agtaild/entry.py).
CLI_FRONT = ("agtaild.entry", "agtaild.statusline_fast")

FOUNDATION = {
    "agtaild.model", "agtaild.errors", "agtaild.fsnames", "agtaild.textsafe", "agtaild.dirs", "agtaild.pricing", "agtaild.words",
}
#: The modules of agtaild.provenance the index writer runs (they see only the foundation).
PROVENANCE_AT_INDEX = {"agtaild.provenance", "agtaild.provenance.paths", "agtaild.provenance.shell", "agtaild.provenance.records"}
#: Agent packages that may import another agent's package: their agent is a fork of that one.
FORKS = {"kilo": {"cline", "opencode"}, "roo_code": {"cline"}, "qwen": {"gemini"}, "openclaw": {"pi"}, "tabnine": {"gemini"}, "trae_cli": {"codex"}, "qoder": {"claude"}, "claude_desktop": {"claude"}}


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def read_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """module → the agtaild modules it imports (the deepest existing module of each name)."""
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    known = set(files)

    def existing(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = defaultdict(set)
    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    parts = parts[: len(parts) - (node.level - 1)]
                    base = ".".join([*parts, base] if base else parts)
                targets = [f"{base}.{a.name}" for a in node.names] or [base]
            for target in targets:
                if not target.startswith("agtaild"):
                    continue
                found = existing(target)
                if found is not None and found != mod:
                    graph[mod].add(found)
        graph.setdefault(mod, set())
    return dict(graph)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def under(mod: str, *packages: str) -> bool:
    return any(mod == p or mod.startswith(p + ".") for p in packages)


def agent_of(mod: str) -> str | None:
    parts = mod.split(".")
    if len(parts) >= 3 and parts[1] == "adapters" and parts[2] not in ("kit", "base"):
        return parts[2]
    return None


def forbidden(importer: str, imported: str) -> str | None:
    """Why the arrow importer → imported breaks a layer rule, or None when it does not."""
    if importer in FOUNDATION and imported not in FOUNDATION:
        return "the foundation imports only the foundation"
    if under(importer, "agtaild.adapters"):
        if not (under(imported, "agtaild.adapters") or imported in FOUNDATION):
            return "adapters import nothing above the model"
        mine, theirs = agent_of(importer), agent_of(imported)
        if theirs is not None and theirs != mine and theirs not in FORKS.get(mine or "", set()):
            return "an agent package imports another only where its agent is a fork of that one"
        if mine is None and theirs is not None and importer != "agtaild.adapters":
            return "adapters.kit and adapters.base know no agent"
    if under(importer, "agtaild.index", "agtaild.store", "agtaild.sync") and under(
        imported, "agtaild.query", "agtaild.pg", "agtaild.mcp", "agtaild.daemon", "agtaild.cli"
    ):
        return "the index and the stores never import the query layer or anything above it"
    if importer in PROVENANCE_AT_INDEX and not (imported in FOUNDATION or imported in PROVENANCE_AT_INDEX):
        return "provenance's index-time modules import only the foundation (the index imports them)"
    if under(importer, "agtaild.index") and under(imported, "agtaild.provenance") and imported not in PROVENANCE_AT_INDEX:
        return "the index imports only provenance's index-time modules"
    if under(importer, "agtaild.provenance") and under(
        imported, "agtaild.query", "agtaild.api", "agtaild.mcp", "agtaild.daemon", "agtaild.cli", "agtaild.pg"
    ):
        return "provenance never imports the query layer or anything above it"
    if under(importer, "agtaild.userstate") and not (under(imported, "agtaild.userstate") or imported in FOUNDATION):
        return "the user's state imports only the foundation"
    if under(importer, "agtaild.index") and under(imported, "agtaild.userstate"):
        return "the index never holds the user's state"
    if under(importer, "agtaild.index", "agtaild.store") and under(imported, "agtaild.api"):
        return "the index never imports the API"
    if under(importer, "agtaild.query") and under(imported, "agtaild.api", "agtaild.mcp", "agtaild.share", "agtaild.daemon", "agtaild.cli"):
        return "the query layer never imports the API, the daemon or the CLI"
    if under(importer, "agtaild.share") and under(imported, "agtaild.index", "agtaild.store", "agtaild.api", "agtaild.daemon", "agtaild.cli"):
        return "sharing calls the query layer's methods; it imports no index, API, daemon or CLI"
    if under(importer, "agtaild.api", "agtaild.mcp", "agtaild.pg") and under(imported, "agtaild.cli", "agtaild.daemon"):
        return "the API never imports the CLI or the daemon"
    if under(imported, "agtaild.cli") and not under(importer, "agtaild.cli", *CLI_FRONT):
        return "nothing imports the CLI"
    if under(imported, *CLI_FRONT) and not under(importer, "agtaild.cli", *CLI_FRONT):
        return "nothing imports the console script's front door"
    if under(imported, "agtaild.daemon") and not under(importer, "agtaild.daemon"):
        return "nothing imports the daemon"
    if under(importer, "agtaild.index", "agtaild.store") and under(imported, "agtaild.semantic"):
        return "the full-text index never waits on search by meaning: it never imports it"
    if under(importer, "agtaild.semantic") and under(
        imported, "agtaild.query", "agtaild.pg", "agtaild.api", "agtaild.mcp", "agtaild.share", "agtaild.daemon", "agtaild.cli"
    ):
        return "search by meaning sits beside the index: it never imports the query layer or above"
    if under(importer, "agtaild.autostart") and not (under(imported, "agtaild.autostart", "agtaild.config") or imported in FOUNDATION):
        return "the service installers import only the foundation"
    return None


GRAPH = read_graph()


def test_the_graph_is_read() -> None:
    # the reader resolves what it must: absolute and relative imports, packages and modules
    assert "agtaild.adapters.base" in GRAPH["agtaild.adapters.claude.adapter"]
    assert "agtaild.query.service" in GRAPH["agtaild.api.app"] or "agtaild.api.context" in GRAPH["agtaild.api.app"]
    assert len(GRAPH) > 200


def test_no_import_cycles() -> None:
    assert cycles(GRAPH) == []


def test_no_arrow_crosses_a_layer_the_wrong_way() -> None:
    wrong = sorted(
        f"{a} → {b}: {why}" for a, targets in GRAPH.items() for b in targets if (why := forbidden(a, b)) is not None
    )
    assert wrong == []


@pytest.mark.parametrize(
    ("importer", "imported"),
    [
        ("agtaild.adapters.codex.parser", "agtaild.index.update"),
        ("agtaild.adapters.codex.parser", "agtaild.adapters.claude.text"),
        ("agtaild.adapters.kit.jsonl", "agtaild.adapters.pi.content"),
        ("agtaild.index.update", "agtaild.api.app"),
        ("agtaild.api.rest", "agtaild.cli.query"),
        ("agtaild.query.service", "agtaild.api.sse"),
        ("agtaild.model", "agtaild.adapters.base"),
        ("agtaild.pg.server", "agtaild.cli.pg"),
        ("agtaild.share.markdown", "agtaild.index.queries"),
        ("agtaild.provenance.records", "agtaild.index.codec"),
        ("agtaild.index.prepare", "agtaild.provenance.history"),
        ("agtaild.provenance.history", "agtaild.query.methods"),
        ("agtaild.index.update", "agtaild.semantic.engine"),
        ("agtaild.semantic.engine", "agtaild.query.service"),
    ],
)
def test_the_rules_catch_wrong_arrows(importer: str, imported: str) -> None:
    assert forbidden(importer, imported) is not None


def test_forks_are_allowed_and_cycles_are_found(tmp_path: Path) -> None:
    assert forbidden("agtaild.adapters.kilo.adapter", "agtaild.adapters.cline.tasks") is None
    pkg = tmp_path / "agtaild"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from agtaild import b\n")
    (pkg / "b.py").write_text("TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from agtaild.a import f\n")
    (pkg / "c.py").write_text("from . import a\n")
    graph = read_graph(pkg)
    assert graph["agtaild.c"] == {"agtaild.a"}
    assert cycles(graph) == [["agtaild.a", "agtaild.b"]]


def test_every_package_states_its_layer_rule() -> None:
    for pkg in ("adapters", "adapters.kit", "api", "autostart", "daemon", "index", "provenance", "query", "semantic", "share", "store.archive", "userstate"):
        doc = ast.get_docstring(ast.parse((PACKAGE / pkg.replace(".", "/") / "__init__.py").read_text())) or ""
        assert "Layer rule" in doc, pkg


if __name__ == "__main__":  # python tests/test_layers.py: print the package-level arrows
    for mod, targets in sorted(GRAPH.items()):
        for target in sorted(targets):
            print(mod, "->", target, file=sys.stdout)
