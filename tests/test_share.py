"""Sharing a session: `agtail export --format md|html|json` and `agtail handoff`.

The Markdown is parsed with markdown-it-py (CommonMark, as GitHub renders it): our headings
only, fences that hold what they hold, no HTML but our own folds. The HTML is opened in
headless Chromium: it asks for nothing over the network and runs no script of the
transcript's. The brief is deterministic, fits its budget and says what it cut.
"""

from __future__ import annotations

import io
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt

from agtaild.cli import main
from agtaild.config import Config, RootSpec
from agtaild.query.service import Service
from agtaild.share import brief, diffs, markdown
from agtaild.share.export import export
from agtaild.share.gather import open_session
from agtaild.share.redact import Redactor
from tests.index_toy import ToyAdapter, toy_line, toy_registry, write_session  # noqa: F401 (a fixture)

CLAUDE = "tests/corpus/real/claude-2.1.197/projects"
BASIC = "cd61be5e-6fcd-4c16-b5d5-281dd40378d1"
SUBAGENT = "77734736-bfec-415b-bcc2-49975539e98b"
TASKS = "c17426d0-3a0c-46ca-9b8c-d079169cd4a9"
REPO = Path(__file__).resolve().parent.parent

HOSTILE = [
    '<script>window.pwned = 1</script> and <img src=x onerror="window.pwned=2">',
    "a fence inside: ```` ``` ```` and ``` alone\n```\nunclosed fence",
    "</details></summary># not a heading of ours",
    "<style>body{display:none}</style><iframe src='http://example.invalid/'></iframe>",
]


@pytest.fixture
def claude(tmp_path: Path) -> Service:
    svc = Service(
        Config(
            data_dir=str(tmp_path / "data"),
            roots=[RootSpec("claude-code", str(REPO / CLAUDE))],
            archive=False,
        )
    )
    svc.update_index()
    yield svc
    svc.close()


@pytest.fixture
def hostile(tmp_path: Path, toy_registry: ToyAdapter) -> Service:  # noqa: F811 (the fixture)
    lines = [toy_line(t="meta", id="evil", cwd=str(tmp_path))]
    for i, text in enumerate(HOSTILE):
        ts = f"2026-01-01T10:00:0{i}Z"
        lines.append(toy_line(t="msg", role="user" if i % 2 == 0 else "assistant", text=text, ts=ts))
        lines.append(toy_line(t="tool", id=f"c{i}", name="Bash", input={"command": f"echo '{text}'"}, ts=ts))
        lines.append(toy_line(t="result", id=f"c{i}", output=text, ts=ts))
    write_session(tmp_path / "root" / "evil.jsonl", lines)
    svc = Service(
        Config(
            data_dir=str(tmp_path / "data"), roots=[RootSpec("toy", str(tmp_path / "root"))], archive=False
        )
    )
    svc.update_index()
    yield svc
    svc.close()


def render(svc: Service, agent: str, sid: str, fmt: str, **kw: Any) -> str:
    out = io.StringIO()
    export(svc.call, agent, sid, fmt, out, **kw)
    return out.getvalue()


OUR_HTML = {"<details>", "</details>", "<details><summary>", "</summary>"}


def html_tokens(text: str) -> list[str]:
    found: list[str] = []
    for tok in MarkdownIt("commonmark").parse(text):
        if tok.type in ("html_block", "html_inline"):
            found.append(tok.content)
        for child in tok.children or []:
            if child.type == "html_inline":
                found.append(child.content)
    return found


def assert_only_our_html(text: str) -> None:
    for chunk in html_tokens(text):
        cleaned = chunk
        for ours in ("<details><summary>", "</summary>", "</details>", "<details>"):
            cleaned = cleaned.replace(ours, "")
        stripped = "".join(
            line
            for line in cleaned.split("\n")
            if not line.startswith(("Thinking", "Output", "Subagent", "Summary"))
        )
        assert "<" not in stripped, chunk


def test_markdown_of_a_real_session_renders_as_meant(claude: Service) -> None:
    text = render(claude, "claude-code", BASIC, "md")
    tokens = MarkdownIt("commonmark").parse(text)
    headings = [t for t in tokens if t.type == "heading_open"]
    assert headings[0].tag == "h1" and "Create hello.py" in tokens[tokens.index(headings[0]) + 1].content
    fences = [t for t in tokens if t.type == "fence"]
    assert any(t.info == "diff" and '+    return f"Hello, {name}!' in t.content for t in fences)
    assert any(t.info == "sh" and t.content.strip() == "python3 hello.py" for t in fences)
    assert "**Bash** — failed" in text and "Exit code 3" in text
    assert_only_our_html(text)
    assert "| Cost | $0.06 |" in text


def test_the_diff_in_the_markdown_applies(claude: Service, tmp_path: Path) -> None:
    import subprocess

    text = render(claude, "claude-code", BASIC, "md")
    diff = next(
        t.content for t in MarkdownIt("commonmark").parse(text) if t.type == "fence" and t.info == "diff"
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hello.py").write_text(
        'def greet(name):\n    return "Hello, " + name\n\n\nif __name__ == "__main__":\n    print(greet("world"))\n'
    )
    check = subprocess.run(
        ["git", "apply", "--check", "-"], cwd=repo, input=diff, text=True, capture_output=True
    )
    assert check.returncode == 0, check.stderr


def test_subagents_are_inlined_under_their_call(claude: Service) -> None:
    text = render(claude, "claude-code", SUBAGENT, "md")
    call = text.index("**Agent**")
    inlined = text.index("<details><summary>Subagent: Count the lines of hello.py")
    assert call < inlined < text.index("wc -l hello.py") < text.index("The subagent reports")
    flat = render(claude, "claude-code", SUBAGENT, "md", depth=0)
    assert "wc -l hello.py" not in flat and "agtail show claude-code:agent-" in flat


def test_hostile_text_stays_text_in_markdown(hostile: Service) -> None:
    text = render(hostile, "toy", "evil", "md")
    assert_only_our_html(text)
    tokens = MarkdownIt("commonmark").parse(text)
    assert [t.tag for t in tokens if t.type == "heading_open"][:1] == ["h1"]
    assert not any(
        t.type == "heading_open" and "not a heading" in tokens[i + 1].content for i, t in enumerate(tokens)
    )
    # every tool input survives whole inside its fence, however many backticks it holds
    fences = [t.content for t in tokens if t.type == "fence" and t.info == "sh"]
    assert any("```` ``` ````" in f for f in fences)


def test_fences_outgrow_their_content() -> None:
    assert markdown.fence("a ``` b ````` c").startswith("``````\n")
    assert markdown.fence("plain").startswith("```\n")
    assert markdown.safe_prose("x <b>y</b> `<b>` & z") == "x &lt;b&gt;y&lt;/b&gt; `<b>` &amp; z"
    assert markdown.safe_prose("```\n<kept>\n") == "```\n<kept>\n\n```"


def test_hunk_headers_count_their_lines() -> None:
    hunk = {"old_start": 3, "new_start": 3, "lines": [" a", "-b", "+c", "+d", " e"]}
    assert diffs.hunk_header(hunk) == "@@ -3,3 +3,4 @@"
    created = {
        "files": [
            {"path": "/w/n.txt", "op": "create", "hunks": [{"old_start": 1, "new_start": 1, "lines": ["+x"]}]}
        ]
    }
    assert diffs.unified(created, "/w") == "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,1 @@\n+x\n"


def test_json_is_the_api_documents(claude: Service) -> None:
    doc = json.loads(render(claude, "claude-code", BASIC, "json"))
    events = claude.call("events.list", {"agent": "claude-code", "id": BASIC, "limit": 1000})["events"]
    assert doc["session"]["id"] == BASIC and doc["events"] == events


def test_redact_paths_hides_home_and_user(claude: Service) -> None:
    r = Redactor(paths=True, home="/tmp/rt/claude/home", user="claude")
    out = io.StringIO()
    markdown.write(open_session(claude.call, "claude-code", BASIC), out, redact=r)
    text = out.getvalue()
    assert "/tmp/rt/claude/home" not in text and "~/src/demo-app" in text


async def test_html_is_self_contained_and_runs_no_transcript_script(
    hostile: Service, tmp_path: Path, browser: Any
) -> None:
    page = tmp_path / "evil.html"
    page.write_text(render(hostile, "toy", "evil", "html"), encoding="utf-8")
    requests: list[str] = []
    observe = browser._observe

    def watching(method: str, params: dict[str, Any]) -> None:
        if method == "Network.requestWillBeSent":
            requests.append(params["request"]["url"])
        observe(method, params)

    browser._observe = watching
    await browser.send("Network.enable")
    await browser.goto(page.as_uri())
    assert await browser.eval("window.pwned === undefined") is True
    assert (
        await browser.eval("document.querySelectorAll('script, iframe, img, style:not(head style)').length")
        == 0
    )
    assert "window.pwned = 1" in await browser.text()
    assert requests == [page.as_uri()]  # the page itself, nothing else
    # the focused switch hides the tools and keeps prompts and answers
    assert await browser.eval("getComputedStyle(document.querySelector('details.tool')).display") != "none"
    await browser.click("#focus")
    assert await browser.eval("getComputedStyle(document.querySelector('details.tool')).display") == "none"
    assert await browser.eval("getComputedStyle(document.querySelector('.turn')).display") != "none"


def test_the_brief_says_the_task_what_was_done_and_where_it_stopped(claude: Service) -> None:
    shared = open_session(claude.call, "claude-code", BASIC)
    text = brief.build(shared, target="Codex CLI")
    assert text == brief.build(
        open_session(claude.call, "claude-code", BASIC), target="Codex CLI"
    )  # deterministic
    assert text.startswith("# Handoff")
    assert "Create hello.py with a greet() function" in text
    assert "- `hello.py`: written" in text or "- `hello.py`: edited" in text
    assert "`python3 hello.py` → ok" in text and "sys.exit(3)'` → failed" in text
    assert "The agent's last message" in text and "Continue it in Codex CLI" in text
    assert "Cut to fit" not in text


def test_the_brief_keeps_its_budget_and_says_what_it_cut(claude: Service) -> None:
    full = brief.build(open_session(claude.call, "claude-code", BASIC))
    small = brief.build(open_session(claude.call, "claude-code", BASIC), max_tokens=200)
    assert len(small) <= 200 * brief.CHARS_PER_TOKEN < len(full)
    assert "Cut to fit the budget:" in small and "every diff" in small


def test_the_brief_carries_the_todo_list(claude: Service) -> None:
    text = brief.build(open_session(claude.call, "claude-code", TASKS))
    assert "## The todo list (0 open" in text and "- [x] Add tests" in text


def cli(tmp_path: Path, *args: str) -> list[str]:
    return [
        "--no-daemon",
        "--data-dir",
        str(tmp_path / "cli"),
        "--only-roots",
        "--root",
        f"claude-code={REPO / CLAUDE}",
        *args,
    ]


def test_cli_export_writes_a_file_or_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "s.md"
    assert main(cli(tmp_path, "export", "claude-code:cd61be5e", "--format", "md", "--to", str(target))) == 0
    assert target.read_text().startswith("# Create hello.py") and not list(tmp_path.glob("*.agtail-partial"))
    capsys.readouterr()
    assert main(cli(tmp_path, "export", "claude-code:cd61be5e", "--format", "json")) == 0
    assert json.loads(capsys.readouterr().out)["session"]["id"] == BASIC
    assert (
        main(cli(tmp_path, "export", "claude-code:cd61be5e", "claude-code:77734736", "--format", "md")) == 2
    )
    assert (
        main(cli(tmp_path, "export", "claude-code:cd61be5e", "--format", "html", "--to", str(tmp_path))) == 2
    )
    assert main(cli(tmp_path, "export", "claude-code:nosuch", "--format", "md")) == 4
    assert main(cli(tmp_path, "export", "claude-code:cd61be5e")) == 2  # native needs --to DIR


def fake_agent(bin_dir: Path, name: str) -> Path:
    """A stand-in for the target agent's CLI: it records its argv and cwd."""
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    record = bin_dir / f"{name}.json"
    script.write_text(
        f"#!{sys.executable}\nimport json, os, sys\njson.dump({{'argv': sys.argv, 'cwd': os.getcwd()}}, open({str(record)!r}, 'w'))\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return record


def test_handoff_launches_the_target_with_the_brief(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    record = fake_agent(tmp_path / "bin", "codex")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    work = tmp_path / "work"
    work.mkdir()
    # the recorded cwd is gone: a clear error and its own exit code, then --cwd
    assert main(cli(tmp_path, "handoff", "claude-code:cd61be5e", "--to", "codex", "--launch")) == 5
    err = capsys.readouterr().err
    assert "does not exist here" in err and "--cwd DIR" in err and "--print" in err
    assert (
        main(
            cli(
                tmp_path,
                "handoff",
                "claude-code:cd61be5e",
                "--to",
                "codex",
                "--launch",
                "--cwd",
                str(tmp_path / "nowhere"),
            )
        )
        == 5
    )
    assert "is not a directory" in capsys.readouterr().err
    assert not record.exists()
    assert (
        main(
            cli(tmp_path, "handoff", "claude-code:cd61be5e", "--to", "codex", "--launch", "--cwd", str(work))
        )
        == 0
    )
    ran = json.loads(record.read_text())
    assert ran["cwd"] == str(work) and ran["argv"][1].startswith("# Handoff") and len(ran["argv"]) == 2


def test_handoff_refuses_what_it_cannot_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    work = tmp_path / "work"
    work.mkdir()
    assert (
        main(
            cli(tmp_path, "handoff", "claude-code:cd61be5e", "--to", "codex", "--launch", "--cwd", str(work))
        )
        == 4
    )
    assert "'codex' (Codex CLI) is not installed" in capsys.readouterr().err
    assert main(cli(tmp_path, "handoff", "claude-code:cd61be5e", "--to", "nosuch", "--print")) == 2
    assert main(cli(tmp_path, "handoff", "claude-code:cd61be5e", "--launch")) == 2
    assert (
        main(
            cli(tmp_path, "handoff", "claude-code:cd61be5e", "--to", "aider", "--launch", "--cwd", str(work))
        )
        == 3
    )
    capsys.readouterr()
    assert main(cli(tmp_path, "--json", "handoff", "claude-code:cd61be5e", "--to", "gemini")) == 0
    assert json.loads(capsys.readouterr().out)["brief"].startswith("# Handoff")


async def test_the_api_serves_the_export_as_a_download(claude: Service, aiohttp_client: Any) -> None:
    from agtaild.api.app import create_app
    from agtaild.api.security import Security
    from agtaild.query.methods import METHODS

    client = await aiohttp_client(create_app(claude, methods=METHODS, security=Security("t" * 32)))
    auth = {"Authorization": "Bearer " + "t" * 32}
    resp = await client.get(f"/api/v1/sessions/claude-code/{BASIC}/export?format=md", headers=auth)
    assert resp.status == 200 and resp.headers["Content-Type"].startswith("text/markdown")
    assert resp.headers["Content-Disposition"] == f'attachment; filename="claude-code-{BASIC}.md"'
    assert (await resp.text()).startswith("# Create hello.py")
    html_resp = await client.get(
        f"/api/v1/sessions/claude-code/{BASIC}/export?format=html&depth=0", headers=auth
    )
    assert "Content-Security-Policy" in await html_resp.text()
    bad = await client.get(f"/api/v1/sessions/claude-code/{BASIC}/export?format=pdf", headers=auth)
    assert bad.status == 400 and "format" in (await bad.json())["error"]["message"]
    assert (
        await client.get(f"/api/v1/sessions/claude-code/{BASIC}/export?nosuch=1", headers=auth)
    ).status == 400
    assert (await client.get("/api/v1/sessions/claude-code/nosuch/export", headers=auth)).status == 404
    assert (await client.get(f"/api/v1/sessions/claude-code/{BASIC}/export")).status == 401


async def test_the_api_download_streams_what_the_cli_writes(
    claude: Service, aiohttp_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agtaild.api import share as api_share
    from agtaild.api.app import create_app
    from agtaild.api.security import Security
    from agtaild.query.methods import METHODS

    monkeypatch.setattr(api_share, "CHUNK", 2000)  # many chunks even for a small session
    client = await aiohttp_client(create_app(claude, methods=METHODS, security=Security("t" * 32)))
    auth = {"Authorization": "Bearer " + "t" * 32}
    for fmt in ("md", "html", "json"):
        resp = await client.get(
            f"/api/v1/sessions/claude-code/{BASIC}/export?format={fmt}&depth=0", headers=auth
        )
        assert resp.status == 200 and resp.headers.get("Transfer-Encoding") == "chunked"
        assert "Content-Length" not in resp.headers
        chunks = [chunk async for chunk in resp.content.iter_chunked(1 << 20)]
        body = b"".join(chunks).decode("utf-8")
        assert body == render(claude, "claude-code", BASIC, fmt, depth=0) and len(body) > 2000


DOC = REPO / "docs" / "share.md"


def doc_examples(data_dir: Path | None = None) -> dict[str, str]:
    """The examples docs/share.md shows, made from the sample corpus now."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        svc = Service(
            Config(
                data_dir=str(data_dir or Path(tmp) / "data"),
                roots=[RootSpec("claude-code", str(REPO / CLAUDE))],
                archive=False,
            )
        )
        try:
            svc.update_index()
            md = render(svc, "claude-code", BASIC, "md")
            page = render(svc, "claude-code", BASIC, "html")
            edit = page.index('<details class="tool"><summary>Edit')
            doc = render(svc, "claude-code", BASIC, "json")
            first = doc.index('\n{"seq":0,') + 1
            return {
                "md": md[md.index("**Edit**") : md.index("**Bash**", md.index("**Edit**"))].strip(),
                "html": page[edit : page.index("</details>", edit) + len("</details>")],
                "json": '{"session": {"agent":"claude-code","id":"'
                + BASIC
                + '",…}, "secrets_masked": '
                + json.dumps(json.loads(doc)["secrets_masked"])
                + ', "events": [\n'
                + doc[first : doc.index("\n", first)]
                + "\n…",
                "brief": brief.build(
                    open_session(svc.call, "claude-code", TASKS), target="Codex CLI"
                ).strip(),
            }
        finally:
            svc.close()


def _doc_with(text: str, examples: dict[str, str]) -> str:
    for name, body in examples.items():
        start, end = f"<!-- example:{name} -->\n", f"\n<!-- /example:{name} -->"
        i, j = text.index(start) + len(start), text.index(end)
        lang = {"html": "html", "json": "json"}.get(name, "markdown")
        text = text[:i] + f"````{lang}\n" + body + "\n````" + text[j:]
    return text


def test_the_examples_in_docs_share_md_are_what_agtail_writes() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert _doc_with(text, doc_examples()) == text, (
        "docs/share.md is stale: python -m tests.test_share --write"
    )


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    DOC.write_text(_doc_with(DOC.read_text(encoding="utf-8"), doc_examples()), encoding="utf-8")
