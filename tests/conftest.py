"""Test isolation: no test reads or writes the real agent directories of this machine.

Every test runs with a temporary HOME and XDG dirs, and without the env vars that move agent
data, so an adapter's default roots point into the temporary HOME.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
#: Sample agent files in native layouts, vendored from the steering repo (tests/corpus/PROVENANCE.md).
CORPUS = REPO / "tests" / "corpus"

_AGENT_ENV = (
    "CLAUDE_CONFIG_DIR",
    "AGTAIL_CLAUDE_PLUGINS_DIR",
    "CODEX_HOME",
    "GEMINI_CLI_HOME",
    "OPENCODE_DATA_DIR",
    "PI_CODING_AGENT_DIR",
    "PI_CONFIG_DIR", "OMP_PROFILE", "PI_PROFILE", "GROK_HOME", "KIRO_HOME",
    # adapters-c
    "COPILOT_HOME", "KIMI_SHARE_DIR", "KIMI_CODE_HOME", "VSCODE_PORTABLE",
    # adapters-b: Cline, Kilo, Roo, OpenHands, Zed, Vibe
    "CLINE_DIR", "CLINE_DATA_DIR", "CLINE_SESSION_DATA_DIR", "KILO_DB",
    "OPENHANDS_CONVERSATIONS_DIR", "OPENHANDS_PERSISTENCE_DIR", "VIBE_HOME", "ZED_STATELESS",
    # adapters-a
    "QWEN_HOME", "QWEN_RUNTIME_DIR", "CONTINUE_GLOBAL_DIR", "AIDER_CHAT_HISTORY_FILE", "AGTAIL_AIDER_ROOTS",
    "CRUSH_GLOBAL_DATA", "GOOSE_PATH_ROOT",
    # issue 29
    "OPENCLAW_STATE_DIR", "OPENCLAW_HOME", "OPENCLAW_PROFILE", "GPTME_LOGS_HOME", "HERMES_HOME",
    "CODEBUDDY_CONFIG_DIR",
    "CODEBUFF_DATA_DIR",
    "JUNIE_HOME",
    "FORGE_CONFIG", "PLANDEX_BASE_DIR",
    "SNOWFLAKE_HOME", "DEEPSEEK_HOME",
    "IFLOW_HOME",
    "QODER_CONFIG_DIR", "QODER_CLI_HOME", "QODER_CONFIG_DIR_NAME", "QODER_EXPOSE_TOKEN_USAGE", "APPDATA",
    "AGTAIL_DATA_DIR",
    "AGTAIL_RUNTIME_DIR",
    "XDG_RUNTIME_DIR",
    "NOTIFY_SOCKET",
)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    for name in _AGENT_ENV:
        monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"the sample corpus is missing at {CORPUS}")
    return CORPUS


@pytest.fixture
async def browser() -> AsyncIterator[Any]:
    """Headless Chromium driven over the DevTools protocol (tests/web_cdp.py)."""
    from tests.web_cdp import Browser

    b = Browser()
    try:
        await b.start()
        yield b
    finally:
        await b.close()


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where browser tests put screenshots (AGTAIL_WEB_SHOTS keeps them)."""
    target = Path(os.environ.get("AGTAIL_WEB_SHOTS") or tmp_path / "shots")
    target.mkdir(parents=True, exist_ok=True)
    return target
