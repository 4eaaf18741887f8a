"""clients/shell/README.md runs as written: every ```sh block, in order, in one bash, against a
live agtaild (socket and TCP + token), each printing what the ``<!-- expect: REGEX -->`` line
after it says. And every REST route of the OpenAPI document has an example there."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon_proc import DaemonProc, copy_claude, copy_codex

REPO = Path(__file__).resolve().parent.parent
README = REPO / "clients" / "shell" / "README.md"
BLOCK = re.compile(r"```sh\n(.*?)```\n<!-- expect: (.*?) -->", re.S)

#: Routes shown in words only (writing them is what `agtail sync push` is for).
NOT_RUN = {
    "/api/v1/import/{collection}/file",
    "/api/v1/import/{collection}/manifest",
    "/api/v1/import/{collection}/state-pack",
    "/api/v1/export/state-pack",
}

pytestmark = pytest.mark.skipif(
    shutil.which("curl") is None or shutil.which("jq") is None or shutil.which("bash") is None,
    reason="curl, jq and bash are needed (.ci/run installs curl and jq with apt)",
)


def blocks() -> list[tuple[str, str]]:
    text = README.read_text()
    found = BLOCK.findall(text)
    assert len(found) == text.count("```sh"), "every ```sh block is followed by its <!-- expect: … --> line"
    return found


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProc]:
    base = tmp_path_factory.mktemp("client-shell")
    d = DaemonProc(base, {"claude-code": copy_claude(base / "claude"), "codex": copy_codex(base / "codex")})
    try:
        yield d.start()
    finally:
        d.cleanup()


def test_every_example_runs_and_prints_what_it_says(daemon: DaemonProc, tmp_path: Path) -> None:
    examples = blocks()
    script = "".join(f"echo '@@start {i}@@'\n{code}\necho \"@@end {i} $?@@\"\n" for i, (code, _) in enumerate(examples))
    (tmp_path / "examples.sh").write_text(script)
    env = {k: v for k, v in os.environ.items() if k not in ("AGTAIL_DATA_DIR", "XDG_DATA_HOME")}
    env.update(HOME=str(daemon.base / "home"), AGTAIL_DATA_DIR=str(daemon.data_dir))
    proc = subprocess.run(["bash", str(tmp_path / "examples.sh")], capture_output=True, text=True, env=env,
                          timeout=180, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    for i, (code, expect) in enumerate(examples):
        m = re.search(rf"@@start {i}@@\n(.*?)@@end {i} (\d+)@@", proc.stdout, re.S)
        assert m, f"block {i} did not finish:\n{code}\nstderr: {proc.stderr[-2000:]}"
        out, status = m.group(1), int(m.group(2))
        assert status == 0, f"block {i} exited {status}:\n{code}\nprinted: {out}\nstderr: {proc.stderr[-2000:]}"
        assert re.search(expect, out, re.M), f"block {i} printed {out!r}, expected /{expect}/:\n{code}"


def test_every_rest_route_has_an_example() -> None:
    text = README.read_text()
    code = "\n".join(c for c, _ in blocks())
    paths = json.loads((REPO / "docs" / "openapi.json").read_text())["paths"]
    for path in paths:
        if path in NOT_RUN:
            assert path in text, f"{path} is not even mentioned"
            continue
        # /sessions/{agent}/{id}/events is shown as /sessions/claude-code/$ID/events, etc.
        pattern = re.escape(path.removeprefix("/api/v1")).replace(r"\{agent\}", r"[\w$-]+").replace(r"\{id\}", r"[\w${}:0-8-]+")
        pattern = pattern.replace(r"\{collection\}", r"[\w$-]+")
        if path == "/":
            pattern = r'\$URL/"'
        assert re.search(pattern, code), f"no example runs {path}"
    assert "--unix-socket" in code and "Authorization: Bearer $TOKEN" in code
