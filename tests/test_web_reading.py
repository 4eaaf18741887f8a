"""The viewer's reading features in headless Chromium, on a real agtaild over real Claude Code
files: the branch switch at a rewind, search hits on an inactive branch, compaction dividers."""

from __future__ import annotations

import asyncio
import json
import urllib.request
import uuid as uuidlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench import make_huge_claude as make_huge
from tests.claude_rewind import last_uuid, prompt, rewound_session, write_lines
from tests.conftest import CORPUS
from tests.test_web_daemon import Daemon, login, unexpected
from tests.web_cdp import Browser, chromium_available

pytestmark = pytest.mark.skipif(
    not chromium_available(), reason="needs headless Chromium at /usr/bin/chromium (apt-get install chromium)"
)

#: Samples with an edit tool, one per agent (the Claude one is the daemon's own copy).
AGENT_ROOTS = {
    "codex": "codex/claude-code-log/sessions",
    "gemini": "gemini/synthetic-agtail/.gemini/tmp",
    "opencode": "opencode/synthetic-agtail-json/.local/share/opencode/storage",
    "pi": "pi/pi-mono/.pi/agent/sessions",
}
REWOUND = str(uuidlib.UUID(int=0xB1A2C3D4_0000_4000_8000_00000000BEEF))
VISIBLE_TEXT = "document.getElementById('view-session').innerText"


@pytest.fixture(scope="module")
def reading_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, dict[str, str]]]:
    d = Daemon(tmp_path_factory.mktemp("web-reading"))
    for agent, rel in AGENT_ROOTS.items():
        d.extra_args += ["--root", f"{agent}={CORPUS / rel}"]
    try:
        d.start()
        ids = rewound_session(d.root / "-tmp-rewind" / f"{REWOUND}.jsonl")
        make_huge.main([str(d.root), "--mb", "5"])  # ≈ 3,400 events: more than the viewer's window
        d.wait_indexed({REWOUND, make_huge.SESSION_ID})
        yield d, ids
    finally:
        d.stop()


async def test_branch_switch_shows_the_other_continuation(
    reading_daemon: tuple[Daemon, dict[str, str]], browser: Browser, shots: Path
) -> None:
    daemon, _ids = reading_daemon
    await login(browser, daemon, f"#/session/claude-code/{REWOUND}")
    await browser.wait_for("!!document.querySelector('.branch-switch')", what="the branch switch")
    switch = "document.querySelector('.branch-switch .branch-label').textContent"
    assert await browser.eval(switch) == "branch 2 of 2"
    text = await browser.eval(VISIBLE_TEXT)
    assert "Ajouté farewell() en français" in text and "first try" not in text
    # The trunk before the fork is shown whatever the branch.
    assert "Create hello.py with a greet() function" in text

    await browser.click(".branch-switch .branch-prev")
    assert await browser.eval(switch) == "branch 1 of 2 · not the current branch"
    text = await browser.eval(VISIBLE_TEXT)
    assert "Added farewell() to hello.py (first try)" in text and "en français" not in text
    assert "Create hello.py with a greet() function" in text
    await browser.eval("document.querySelector('.branch-switch').scrollIntoView({block: 'center'})")
    await browser.screenshot(shots / "branch-switch.png", full_page=False)

    await browser.click(".branch-switch .branch-next")
    assert await browser.eval(switch) == "branch 2 of 2"
    assert "en français" in await browser.eval(VISIBLE_TEXT)
    assert unexpected(browser.errors) == []


async def test_a_hit_on_an_inactive_branch_says_so_and_opens_that_branch(
    reading_daemon: tuple[Daemon, dict[str, str]], browser: Browser
) -> None:
    daemon, _ids = reading_daemon
    await login(browser, daemon, "#/search?q=" + "first%20try")
    await browser.wait_for("document.querySelectorAll('#view-search .hit').length > 0", what="search hits")
    tags = await browser.eval(
        "[...document.querySelectorAll('#view-search .hit .branch-tag')].map((t) => t.textContent)"
    )
    assert tags == ["inactive branch"]
    href = await browser.eval("document.querySelector('#view-search .hit').getAttribute('href')")
    await browser.eval(f"location.hash = {json.dumps(href)}")
    seq = href.rsplit("=", 1)[1]
    await browser.wait_for(f"document.querySelector('.ev.target')?.id === 'ev-{seq}'", what="the hit's event")
    assert not await browser.eval(f"document.getElementById('ev-{seq}').hidden")
    label = await browser.eval("document.querySelector('.branch-switch .branch-label').textContent")
    assert label.startswith("branch 1 of 2")
    assert last_uuid()[:8] in await browser.eval("document.querySelector('.branch-switch').dataset.fork")
    assert unexpected(browser.errors) == []


async def _open_diff(browser: Browser, daemon: Daemon, agent: str, sid: str) -> dict[str, Any]:
    await browser.eval(f"location.hash = {json.dumps(f'#/session/{agent}/{sid}')}")
    await browser.wait_for(
        "document.querySelectorAll('.transcript .diff-fold').length > 0", what=f"a {agent} diff"
    )
    return dict(
        await browser.eval(
            """(() => { const f = document.querySelector('.transcript .diff-fold');
              const rows = (sel) => [...f.querySelectorAll(sel)].map((r) => [...r.children].map((c) => c.textContent));
              return { open: f.open, file: f.querySelector('.diff-file').textContent,
                       del: rows('.dl.del'), add: rows('.dl.add'), ctx: rows('.dl.ctx'),
                       delColour: getComputedStyle(f.querySelector('.dl.del, .dl.add')).backgroundColor }; })()"""
        )
    )


async def test_edits_render_as_diffs_for_every_agent(
    reading_daemon: tuple[Daemon, dict[str, str]], browser: Browser, shots: Path
) -> None:
    daemon, _ids = reading_daemon
    sessions = {(s["agent"], s["id"]) for s in daemon.get("/api/v1/sessions?limit=200")["sessions"]}
    await login(browser, daemon)

    claude = await _open_diff(browser, daemon, "claude-code", "cd61be5e")
    assert claude["open"] and claude["file"].endswith("demo-app/hello.py")
    assert claude["del"] == [["2", "", '-    return "Hello, " + name']]
    assert claude["add"][0][:2] == ["", "2"] and claude["add"][0][2].startswith(
        '+    return f"Hello, {name}!'
    )
    assert ["1", "1", " def greet(name):"] in claude["ctx"]
    assert claude["delColour"] != "rgba(0, 0, 0, 0)"
    await browser.eval("document.querySelector('.transcript .diff-fold').scrollIntoView({block: 'center'})")
    await browser.screenshot(shots / "diff.png", full_page=False)
    # Collapsible: the summary folds it.
    await browser.click(".transcript .diff-fold > summary")
    assert not await browser.eval("document.querySelector('.transcript .diff-fold').open")

    opencode = next(sid for agent, sid in sessions if agent == "opencode")
    oc = await _open_diff(browser, daemon, "opencode", opencode)
    assert oc["del"] == [["42", "", "-Durations are printed in milliseconds."]]
    assert oc["add"] == [["", "42", "+Durations are printed in seconds with one decimal, e.g. `1.5s`."]]

    codex = await _open_diff(browser, daemon, "codex", "11111111-1111-4111-8111-111111111111")
    assert codex["file"] == "gamma.txt (new file)" and codex["add"] == [["", "1", "+synthetic"]]

    pi = await _open_diff(browser, daemon, "pi", "d703a1a9-1b7b-4fb1-b512-c9738b1fe617")
    assert pi["file"] == "packages/coding-agent/src/tui/user-message-selector.ts" and pi["del"] and pi["add"]

    gemini_ids = [sid for agent, sid in sessions if agent == "gemini"]
    found = None
    for sid in gemini_ids:
        await browser.eval(f"location.hash = {json.dumps(f'#/session/gemini/{sid}')}")
        await browser.wait_for(
            "document.querySelectorAll('.transcript .ev').length > 0", what="a gemini session"
        )
        if await browser.eval("document.querySelectorAll('.transcript .diff-fold').length > 0"):
            found = await _open_diff(browser, daemon, "gemini", sid)
            break
    assert found is not None and found["file"] == "/home/dev/src/agtail-demo/src/duration.ts"
    assert found["del"] == [["5", "", "-  return m[2] === 'm' ? n * 60 : m[2] === 's' ? n : n / 1000;"]]
    assert found["add"] == [["", "5", "+  return m[2] === 'm' ? n * 60_000 : m[2] === 's' ? n * 1000 : n;"]]
    assert unexpected(browser.errors) == []


def _rpc(daemon: Daemon, method: str, params: dict[str, Any]) -> Any:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    req = urllib.request.Request(f"{daemon.url}/rpc", data=body, method="POST",
                                 headers={"Authorization": f"Bearer {daemon.token}", "Content-Type": "application/json"})  # fmt: skip
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())["result"]


async def test_projects_view(
    reading_daemon: tuple[Daemon, dict[str, str]], browser: Browser, shots: Path
) -> None:
    daemon, _ids = reading_daemon
    doc = daemon.get("/api/v1/projects")
    rpc = _rpc(daemon, "projects.list", {})
    assert [p["root"] for p in rpc["projects"]] == [p["root"] for p in doc["projects"]]
    assert {p["root"] for p in doc["projects"]} >= {
        "/tmp/rt/claude/home/src/demo-app",
        "/home/dev/src/agtail-demo",
    }
    await login(browser, daemon, "#/projects")
    await browser.wait_for(
        f"document.querySelectorAll('#view-projects .project-row').length === {len(doc['projects'])}",
        what="projects",
    )
    shown = await browser.eval(
        "[...document.querySelectorAll('#view-projects .project-row')].map((r) => r.dataset.root)"
    )
    assert shown == [p["root"] for p in doc["projects"]]
    demo = next(p for p in doc["projects"] if p["root"] == "/home/dev/src/agtail-demo")
    assert set(demo["agents"]) >= {"gemini", "opencode"}
    row = "[...document.querySelectorAll('#view-projects .project-row')].find((r) => r.dataset.root === '/home/dev/src/agtail-demo')"
    assert await browser.eval(f"{row}.querySelectorAll('.badge.agent').length") == len(demo["agents"])
    await browser.eval(f"{row}.querySelector('.project-name').click()")
    await browser.wait_for(
        f"{row}.nextElementSibling.querySelectorAll('.srow').length === {demo['sessions']}",
        what="the project's sessions",
    )
    await browser.screenshot(shots / "projects.png", full_page=False)
    assert unexpected(browser.errors) == []


async def test_stats_heat_map_tools_and_stacked_days(
    reading_daemon: tuple[Daemon, dict[str, str]], browser: Browser, shots: Path
) -> None:
    daemon, _ids = reading_daemon
    hours = daemon.get("/api/v1/stats?by=hour")
    tools = daemon.get("/api/v1/stats?by=tool")
    await login(browser, daemon, "#/stats?days=all")
    await browser.wait_for("document.querySelectorAll('.heat .hc').length === 168", what="the heat map")
    busy = await browser.eval(
        "Object.fromEntries([...document.querySelectorAll('.heat .hc:not(.none)')].map((c) => [c.dataset.day + ' ' + c.dataset.hour, Number(c.dataset.events)]))"
    )
    assert busy == {f"{r['weekday']} {r['hour']}": r["events"] for r in hours["rows"] if r["events"]}
    names = await browser.eval(
        "[...document.querySelectorAll('.stats.tools tbody td.key')].map((t) => t.textContent)"
    )
    assert names == [r["key"] for r in tools["rows"]][:60]
    # The per-day chart is stacked by model (the default), with a legend; by agent on request.
    assert await browser.eval("document.querySelectorAll('.chart .seg').length") > 0
    legend = await browser.eval("[...document.querySelectorAll('.legend .lg')].map((l) => l.textContent)")
    assert "claude-opus-4-8" in legend
    await browser.eval("document.querySelector('.heat-box').scrollIntoView({block: 'center'})")
    await browser.screenshot(shots / "stats-hour.png", full_page=False)
    await browser.eval("location.hash = '#/stats?days=all&stack=agent'")
    await browser.wait_for(
        "[...document.querySelectorAll('.legend .lg')].map((l) => l.textContent).includes('claude-code')",
        what="by agent",
    )
    assert unexpected(browser.errors) == []


async def test_a_long_session_opens_as_a_window_around_the_hit(
    reading_daemon: tuple[Daemon, dict[str, str]], browser: Browser
) -> None:
    daemon, _ids = reading_daemon
    sid = make_huge.SESSION_ID
    last = daemon.get(f"/api/v1/sessions/claude-code/{sid}/events?before_seq=1000000&limit=1")["events"][0][
        "seq"
    ]
    assert last > 3000
    target = 3000
    await login(browser, daemon, f"#/session/claude-code/{sid}?at={target}")
    await browser.wait_for(f"document.querySelector('.ev.target')?.id === 'ev-{target}'", what="the hit")
    seqs = "[...document.querySelectorAll('.transcript .ev')].map((n) => Number(n.dataset.seq))"
    shown = await browser.eval(seqs)
    # Not read from the start: a window of pages around the hit, in order.
    assert min(shown) > 2000 and target in shown and shown == sorted(shown)
    assert len(shown) <= 1500
    assert await browser.eval(
        f"(() => {{ const r = document.getElementById('ev-{target}').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }})()"
    )
    # Scrolling up loads earlier pages above, without moving what the reader looks at.
    first = min(shown)
    await browser.eval("window.scrollTo(0, 0)")
    await browser.wait_for(f"Math.min(...{seqs}) < {first}", what="earlier events")
    now = await browser.eval(seqs)
    assert now == sorted(now) and len(set(now)) == len(now)
    # Scrolling down again and again: pages load at the end, the far ones are dropped.
    for _ in range(20):
        await browser.eval("window.scrollTo(0, document.documentElement.scrollHeight)")
        await asyncio.sleep(0.3)
        if await browser.eval(f"{seqs}.includes({last})"):
            break
    end = await browser.eval(seqs)
    assert last in end and len(end) <= 1500 + 250 and end == sorted(end)
    assert await browser.eval("!!document.querySelector('#view-session .load-earlier')")
    assert unexpected(browser.errors) == []


async def test_a_compaction_is_a_divider_with_its_summary_folded(
    reading_daemon: tuple[Daemon, dict[str, str]], browser: Browser
) -> None:
    """The long session repeats the spotter sample, whose event 1143 is a compact boundary and
    1144 the summary Claude Code wrote."""
    daemon, _ids = reading_daemon
    sid = make_huge.SESSION_ID
    await login(browser, daemon, f"#/session/claude-code/{sid}?at=1143")
    await browser.wait_for("document.querySelector('.ev.target')?.id === 'ev-1143'", what="the boundary")
    divider = await browser.eval("document.querySelector('#ev-1143 .compact-divider')?.textContent")
    assert divider == "Context compacted · manual · 142k tokens before"
    summary = await browser.eval(
        "(() => { const d = document.querySelector('#ev-1144 details.compact-summary');"
        " return d && [d.querySelector('.fold-title').textContent, d.querySelector('.fold-hint').textContent, d.open]; })()"
    )
    assert summary[0] == "Compaction summary" and summary[1].startswith("This session is being continued")
    assert summary[2] is False  # folded
    assert unexpected(browser.errors) == []


async def test_zz_a_rewind_while_the_session_is_open_re_marks_the_page(
    reading_daemon: tuple[Daemon, dict[str, str]], browser: Browser
) -> None:
    """Runs last (it changes the rewound session): continuing the old branch moves the active
    branch back; the open page follows without a reload."""
    daemon, ids = reading_daemon
    await login(browser, daemon, f"#/session/claude-code/{REWOUND}")
    switch = "document.querySelector('.branch-switch .branch-label')?.textContent"
    await browser.wait_for(f"{switch} === 'branch 2 of 2'", what="the switch")
    await browser.wait_for("!document.querySelector('.live-badge').hidden", what="following live")
    write_lines(
        daemon.root / "-tmp-rewind" / f"{REWOUND}.jsonl",
        [prompt("Keep the English farewell after all", ids["a2"])],
        append=True,
    )
    await browser.wait_for(f"{switch} === 'branch 1 of 2'", timeout=30, what="the switch after the append")
    text = await browser.eval(VISIBLE_TEXT)
    assert "first try" in text and "Keep the English farewell after all" in text and "en français" not in text
    assert unexpected(browser.errors) == []
