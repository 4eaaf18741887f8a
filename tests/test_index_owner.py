"""An index belongs to one set of roots (agtaild/index/owner.py): a command run in-process with
other roots than its data dir's owner — a running daemon's — never rewrites that index; it
uses one of its own under the cache dir and says so. The README's sample command, run beside a
daemon, leaves the daemon's sessions as they were, and touches nothing of the user's data dir."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agtaild.config import load_config
from agtaild.index import owner
from tests.daemon_proc import CLAUDE_REAL, CODEX_REAL, CORPUS, DaemonProc, wait_until

REPO = Path(__file__).resolve().parent.parent
GEMINI_REAL = CORPUS / "real" / "gemini-0.61.0"
QWEN_REAL = CORPUS / "real" / "qwen-0.15.10"

#: The README's sample command of 0.2.0: no data dir of its own, so with XDG_DATA_HOME (or
#: AGTAIL_DATA_DIR) exported it ran on the daemon's.
OLD_SAMPLE = (
    "HOME=$(mktemp -d) .venv/bin/agtail --only-roots \\\n"
    "  --root claude-code=tests/corpus/real/claude-2.1.197/projects \\\n"
    "  --root codex=tests/corpus/real/codex-0.171.0/sessions list"
)


def readme_sample() -> str:
    """The README's "try it on the sample corpus" command, as written."""
    text = (REPO / "README.md").read_text()
    after = text.split("Try it on the sample corpus", 1)[1]
    block = re.search(r"```sh\n(.*?)```", after, re.S)
    assert block is not None, "the README has no sample command"
    return block.group(1)


def agtail_shim(tmp: Path) -> Path:
    """`.venv/bin/agtail` of this checkout (whatever venv runs the tests)."""
    shim = tmp / "bin" / "agtail"
    shim.parent.mkdir(parents=True)
    code = "import sys; from agtaild.cli import main; sys.exit(main())"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -c '{code}' \"$@\"\n")
    shim.chmod(0o755)
    return shim


def files_below(path: Path) -> set[str]:
    """The archive's mirrored files (not its store's own bookkeeping, which the daemon keeps)."""
    if not path.exists():
        return set()
    return {str(p.relative_to(path)) for p in path.rglob("*") if not p.relative_to(path).parts[0].startswith(".")}


def sessions_of(daemon: DaemonProc) -> set[tuple[str, str]]:
    with daemon.unix() as client:
        return {(s["agent"], s["id"]) for s in client.sessions()}


@pytest.fixture
def daemon(tmp_path: Path) -> DaemonProc:
    """A daemon on the user's default data dir ($XDG_DATA_HOME/agtail) with four agents' roots."""
    roots = {"claude-code": CLAUDE_REAL, "codex": CODEX_REAL, "gemini": GEMINI_REAL, "qwen": QWEN_REAL}
    d = DaemonProc(tmp_path, roots)
    d.data_dir = tmp_path / "xdg" / "agtail"
    d.start()
    try:
        yield d
    finally:
        d.cleanup()


@pytest.mark.parametrize("sample", ["readme", "readme-0.2.0"])
@pytest.mark.parametrize("exported", ["XDG_DATA_HOME", "AGTAIL_DATA_DIR"])
def test_the_readme_sample_beside_a_daemon_keeps_its_sessions(
    daemon: DaemonProc, tmp_path: Path, sample: str, exported: str
) -> None:
    before = sessions_of(daemon)
    agents = {a for a, _ in before}
    assert {"gemini", "qwen"} <= agents and len(before) > 12
    archive_before = files_below(daemon.data_dir / "archive")
    command = readme_sample() if sample == "readme" else OLD_SAMPLE
    assert ".venv/bin/agtail" in command
    command = command.replace(".venv/bin/agtail", str(agtail_shim(tmp_path)))
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_DATA_HOME", "AGTAIL_DATA_DIR")}
    env[exported] = str(daemon.data_dir if exported == "AGTAIL_DATA_DIR" else daemon.data_dir.parent)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(REPO / "clients" / "python")])
    env.pop("XDG_CACHE_HOME", None)  # the sample's own HOME holds its cache, if any
    env["TMPDIR"] = str(tmp_path)  # its mktemp -d lands here
    done = subprocess.run(["bash", "-c", command], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    listed = [line for line in done.stdout.splitlines() if line.strip()]
    assert any("claude-code" in line for line in listed) and any("codex" in line for line in listed)
    assert not any("gemini" in line or "qwen" in line for line in listed)  # the sample's roots alone
    # The daemon serves what it served, now and after it looked at its files again.
    assert sessions_of(daemon) == before
    with daemon.unix() as client:
        client.call("index.update", {})
    assert sessions_of(daemon) == before
    if sample == "readme-0.2.0":
        assert "using a separate index for them" in done.stderr
    assert files_below(daemon.data_dir / "archive") == archive_before
    assert owner.read_record(daemon.data_dir)["by"] == "agtaild"  # type: ignore[index]


def test_root_commands_beside_a_daemon_never_add_to_its_index(daemon: DaemonProc, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """`--root aider=…` (no --only-roots) used to add sessions to the daemon's index for good."""
    from agtaild.cli import main

    before = sessions_of(daemon)
    aider = CORPUS / "real" / "aider-0.86.2"
    code = main(["--data-dir", str(daemon.data_dir), "--root", f"aider={aider}", "--json", "list", "--limit", "200"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "aider" in {s["agent"] for s in json.loads(out.out)["sessions"]}
    assert "using a separate index for them in" in out.err
    assert sessions_of(daemon) == before
    with daemon.unix() as client:
        client.call("index.update", {})
    assert sessions_of(daemon) == before and not any(a == "aider" for a, _ in sessions_of(daemon))
    # The same command again finds its own index again (and says so again).
    assert main(["--data-dir", str(daemon.data_dir), "--root", f"aider={aider}", "--json", "list"]) == 0
    assert "using a separate index for them in" in capsys.readouterr().err


def test_a_command_without_roots_uses_the_daemons_roots_even_when_it_is_stopped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from agtaild.cli import main

    d = DaemonProc(tmp_path, {"claude-code": CLAUDE_REAL})
    d.start()
    try:
        before = sessions_of(d)
    finally:
        d.cleanup()
    # No daemon now: in-process, with this HOME's defaults (which hold nothing), on its data dir.
    assert main(["--data-dir", str(d.data_dir), "--json", "list", "--limit", "500"]) == 0
    out = capsys.readouterr()
    assert {(s["agent"], s["id"]) for s in json.loads(out.out)["sessions"]} == before
    assert not any(s["archived"] for s in json.loads(out.out)["sessions"])
    assert out.err == ""


def test_the_rules(tmp_path: Path) -> None:
    data = tmp_path / "data"
    given = load_config(data_dir=str(data), root_options=[f"claude-code={CLAUDE_REAL}"], only_roots=True)
    defaults = load_config(data_dir=str(data))
    # An unowned data dir named with --data-dir: the roots given claim it.
    config, note = owner.for_command(given, given_roots=True, explicit_dir=True)
    assert config.data_dir == str(data) and note is None
    assert owner.read_record(data)["roots"] == [["claude-code", str(CLAUDE_REAL)]]  # type: ignore[index]
    # Other roots: an index of their own under the cache dir, the same one each time.
    other = load_config(data_dir=str(data), root_options=[f"codex={CODEX_REAL}"], only_roots=True)
    moved, note = owner.for_command(other, given_roots=True, explicit_dir=True)
    again, _ = owner.for_command(other, given_roots=True, explicit_dir=True)
    assert moved.data_dir == again.data_dir and Path(moved.data_dir).is_relative_to(Path(os.environ["XDG_CACHE_HOME"]))
    assert note and str(moved.data_dir) in note and "belongs to those of an earlier command" in note
    assert {r.path for r in moved.roots if r.kind == "archive"} == {
        str(Path(moved.data_dir) / "archive" / a.agent) for a in moved.roots if a.kind == "archive"
    }
    # No roots given: the data dir's own roots (recorded by a command with --data-dir).
    adopted, note = owner.for_command(defaults, given_roots=False, explicit_dir=True)
    assert note is None and [(r.agent, r.path) for r in adopted.roots if r.kind == "native"] == [
        ("claude-code", str(CLAUDE_REAL))
    ] and adopted.known_cwds is False
    # The default data dir, unowned: roots given never claim it.
    default = load_config(root_options=[f"claude-code={CLAUDE_REAL}"], only_roots=True)
    moved, note = owner.for_command(default, given_roots=True, explicit_dir=False)
    assert moved.data_dir != default.data_dir and note and "default one" in note
    assert owner.read_record(default.data_dir) is None
    # ... while the defaults claim it, and follow the environment when it changes.
    plain = load_config()
    assert owner.for_command(plain, given_roots=False, explicit_dir=False) == (plain, None)
    assert owner.read_record(plain.data_dir)["defaults"] is True  # type: ignore[index]
    moved_env = load_config(env={**os.environ, "CODEX_HOME": str(tmp_path / "codex-home")})
    assert owner.for_command(moved_env, given_roots=False, explicit_dir=False) == (moved_env, None)
    assert [str(tmp_path / "codex-home" / "sessions")] == [
        p for a, p in owner.read_record(plain.data_dir)["roots"] if a == "codex"  # type: ignore[index]
    ]


def test_an_index_of_its_own_reads_the_named_data_dirs_import_store(tmp_path: Path) -> None:
    """The import store belongs to the data dir (sync pulls into it whoever owns the index):
    another set of roots sees its collections, and archives into its own dir only."""
    data = tmp_path / "data"
    (data / "imported" / "laptop" / "claude-code").mkdir(parents=True)
    owner.for_command(load_config(data_dir=str(data), root_options=[f"codex={CODEX_REAL}"], only_roots=True),
                      given_roots=True, explicit_dir=True)
    other = load_config(data_dir=str(data), root_options=[f"claude-code={CLAUDE_REAL}"], only_roots=True)
    moved, note = owner.for_command(other, given_roots=True, explicit_dir=True)
    assert note and moved.data_dir != str(data)
    assert [(r.agent, r.path, r.collection) for r in moved.roots if r.kind == "imported"] == [
        ("claude-code", str(data / "imported" / "laptop" / "claude-code"), "laptop")
    ]
    assert all(Path(r.path).is_relative_to(Path(moved.data_dir)) for r in moved.roots if r.kind == "archive")


def test_a_daemon_takes_its_data_dir_over_and_says_so(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = load_config(data_dir=str(data), root_options=[f"claude-code={CLAUDE_REAL}"], only_roots=True)
    owner.for_command(first, given_roots=True, explicit_dir=True)
    d = DaemonProc(tmp_path, {"codex": CODEX_REAL})
    try:
        d.start()
        line = wait_until(lambda: re.search(r"WARNING agtaild: the index in .* was built from other roots.*", d.log()),
                          20, "the take-over warning")
        assert "those of an earlier command" in line.group()
        assert owner.read_record(data) == {**owner.read_record(data), "by": "agtaild",  # type: ignore[dict-item]
                                           "roots": [["codex", str(CODEX_REAL)]]}
    finally:
        d.cleanup()
