"""docs/adapters.md, "Adding an agent", followed once: the Example Agent (tests/example_agent/).

The package is laid out as the steps say (``adapter.py`` with the Adapter class, ``__init__``
exposing it, a parser module without the agent's prefix) and registered the way an outside
package is. It must meet what every built-in agent package meets: the layer rules of
tests/test_layers.py (read as if it sat at ``agtaild/adapters/example/``), the registry-wide
checks of tests/test_registry.py, and an index the CLI lists and searches.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import agtaild.adapters as registry
from agtaild.adapters.base import Adapter
from agtaild.cli import main
from tests import test_registry as registry_checks
from tests.example_agent import ExampleAdapter
from tests.test_layers import forbidden

PACKAGE = Path(__file__).resolve().parent / "example_agent"
DOC = Path(__file__).resolve().parent.parent / "docs" / "adapters.md"


@pytest.fixture
def example() -> Iterator[Adapter]:
    adapter = ExampleAdapter()
    registry.register(adapter)
    try:
        yield adapter
    finally:
        registry._extra.remove(adapter)
        registry.all_adapters.cache_clear()


def test_the_doc_describes_the_layout_the_example_follows() -> None:
    section = DOC.read_text(encoding="utf-8").split("## Adding an agent", 1)[1]
    for words in (
        "agtaild/adapters/<agent>/",
        "`adapter.py`",
        "`__init__.py`",
        "BUILTIN",
        "tests/test_layers.py",
        "kit/jsonl.py",
    ):
        assert words in section, words
    # every helper the steps name exists where they say
    for rel in re.findall(r"`(kit/\w+\.py)`", section):
        assert (DOC.parent.parent / "agtaild" / "adapters" / rel).is_file(), rel
    init = ast.parse((PACKAGE / "__init__.py").read_text())
    assert ast.get_docstring(init) and any(
        isinstance(n, ast.ImportFrom) and n.module.endswith(".adapter")
        for n in init.body
        if isinstance(n, ast.ImportFrom)
    )
    assert (PACKAGE / "adapter.py").is_file() and not list(PACKAGE.glob("example_*.py"))


def test_the_example_keeps_the_layer_rules() -> None:
    for path in PACKAGE.glob("*.py"):
        me = "agtaild.adapters.example." + path.stem
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                target = node.module.replace("tests.example_agent", "agtaild.adapters.example")
                if target.startswith("agtaild"):
                    assert forbidden(me, target) is None, (path.name, node.module)


def test_the_example_passes_the_registry_wide_checks(example: Adapter, corpus: Path, tmp_path: Path) -> None:
    assert registry.get_adapter("example") is example
    (tmp_path / "declare").mkdir()
    registry_checks.test_adapter_declares_itself(example, corpus, tmp_path / "declare")
    registry_checks.test_samples_read_cleanly(example, corpus)
    registry_checks.test_garbage_never_escapes_but_as_agtail_error(example, corpus, tmp_path / "garbage")


def test_the_cli_lists_searches_and_shows_the_example(
    example: Adapter,
    corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    base = [
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "data"),
        "--only-roots",
        "--root",
        f"example={corpus / 'example' / 'sessions'}",
    ]
    assert main([*base, "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    (row,) = listed["sessions"]
    assert (row["agent"], row["id"], row["title"]) == ("example", "ex-0001", "Make the greeting configurable")
    assert main([*base, "search", "GREETING", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert hits and hits[0]["session"]["id"] == "ex-0001"
    assert main([*base, "show", "example:ex-0001", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    tools = [e for e in shown["events"] if e["kind"] == "tool_use"]
    assert [t["is_error"] for t in tools] == [False, True]
    assert shown["session"]["usage"]["input_tokens"] == 2700
