"""Outside adapters from the ``agtail.adapters`` entry-point group, found without importing
importlib.metadata on every start-up (agtaild.adapters._plugins_may_exist reads the
``entry_points.txt`` files itself and hands over to importlib.metadata when one names the
group)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import agtaild.adapters as registry


@pytest.fixture
def fresh_registry() -> Iterator[None]:
    registry.all_adapters.cache_clear()
    yield
    registry.all_adapters.cache_clear()


def _distribution(site: Path, name: str, entry_points: str) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))


def test_a_plugin_on_the_path_is_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_registry: None
) -> None:
    site = tmp_path / "site"
    (site / "agtail_fake_plugin.py").parent.mkdir(parents=True)
    (site / "agtail_fake_plugin.py").write_text(
        textwrap.dedent(
            """
            from agtaild.adapters.kit.jsonl import JsonlAdapter

            class FakeAdapter(JsonlAdapter):
                id = "fake-plugin-agent"
                name = "Fake"
            """
        )
    )
    _distribution(site, "agtail_fake_plugin", "[agtail.adapters]\nfake = agtail_fake_plugin:FakeAdapter\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.delitem(sys.modules, "agtail_fake_plugin", raising=False)
    assert registry._plugins_may_exist()
    assert registry.get_adapter("fake-plugin-agent").name == "Fake"
    assert "claude-code" in {a.id for a in registry.all_adapters()}  # the built-ins are still there


def test_other_entry_points_do_not_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    _distribution(site, "some_tool", "[console_scripts]\nsome-tool = some_tool:main\n")
    (site / "old.egg-info").parent.mkdir(parents=True, exist_ok=True)
    (site / "old.egg-info").write_text("Name: old\n")  # an egg-info that is a file, not a folder
    monkeypatch.setattr(sys, "path", [str(site), str(tmp_path / "missing")])
    assert not registry._plugins_may_exist()


def test_a_zip_on_the_path_is_left_to_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip archive
    monkeypatch.setattr(sys, "path", [str(archive)])
    assert registry._plugins_may_exist()


def test_finding_the_adapters_does_not_import_importlib_metadata() -> None:
    """The start-up cost this check exists for: no plugin installed, no importlib.metadata."""
    code = (
        "import sys\n"
        "from agtaild.adapters import all_adapters, _plugins_may_exist\n"
        "assert not _plugins_may_exist()\n"
        "all_adapters()\n"
        "print('importlib.metadata' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_eggs_are_looked_into_or_left_to_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    info = site / "old_plugin-1.0-py3.11.egg" / "EGG-INFO"
    info.mkdir(parents=True)
    (info / "entry_points.txt").write_text("[agtail.adapters]\nold = old_plugin:OldAdapter\n")
    monkeypatch.setattr(sys, "path", [str(site)])
    assert registry._plugins_may_exist()  # an egg folder beside the others
    monkeypatch.setattr(sys, "path", [str(site / "old_plugin-1.0-py3.11.egg")])
    assert registry._plugins_may_exist()  # the egg folder itself on the path
    (info / "entry_points.txt").write_text("[console_scripts]\nold = old_plugin:main\n")
    assert not registry._plugins_may_exist()
    zipped = tmp_path / "zipped"
    zipped.mkdir()
    (zipped / "packed-1.0.egg").write_bytes(b"PK\x05\x06" + b"\0" * 18)
    monkeypatch.setattr(sys, "path", [str(zipped)])
    assert registry._plugins_may_exist()  # a zipped egg: importlib.metadata reads it
