"""A session as one self-contained HTML file: no network, no script, readable on a phone.

Everything is inline (the style sheet; no font, image or script is fetched), and the page's
Content-Security-Policy (``default-src 'none'``) forbids any request and any script, so nothing a
transcript holds can run or call out even if it slipped past the escaping (every text goes
through :func:`html.escape`). Tool blocks, diffs and thinking are ``<details>``; the "focused"
switch (prompts and final answers only) is a checkbox and CSS. Printing opens every block.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any, TextIO

from agtaild.share import diffs
from agtaild.share.gather import SharedSession
from agtaild.share.parts import as_text, cut_block, header_facts, plural
from agtaild.share.redact import Redactor

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"

STYLE = """
:root { color-scheme: light dark; --fg: #1f2328; --bg: #fff; --dim: #656d76; --line: #d0d7de;
  --user: #ddf4ff; --add: #dafbe1; --del: #ffebe9; --code: #f6f8fa; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --dim: #8d96a0;
  --line: #30363d; --user: #0c2d6b; --add: #033a16; --del: #67060c; --code: #161b22; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 60rem; padding: 1rem; font: 15px/1.5 system-ui, sans-serif;
  color: var(--fg); background: var(--bg); overflow-wrap: anywhere; }
h1 { font-size: 1.4rem; margin: .2rem 0 .8rem; }
table.facts { border-collapse: collapse; font-size: .9rem; margin-bottom: 1rem; }
table.facts td { border-top: 1px solid var(--line); padding: .2rem .6rem .2rem 0; vertical-align: top; }
table.facts td:first-child { color: var(--dim); white-space: nowrap; }
.turn { margin: .8rem 0; }
.who { font-size: .8rem; color: var(--dim); }
.user .body { background: var(--user); border-radius: .4rem; padding: .4rem .7rem; }
.body { white-space: pre-wrap; }
pre { background: var(--code); border: 1px solid var(--line); border-radius: .3rem; padding: .5rem;
  overflow-x: auto; white-space: pre-wrap; font: 13px/1.4 ui-monospace, monospace; margin: .3rem 0; }
details { border-left: 3px solid var(--line); padding-left: .6rem; margin: .4rem 0; }
summary { cursor: pointer; color: var(--dim); }
.failed > summary { color: #cf222e; }
.add { background: var(--add); display: block; } .del { background: var(--del); display: block; }
.divider { text-align: center; color: var(--dim); border-top: 1px dashed var(--line); margin: 1rem 0; }
.inactive { opacity: .6; }
.note { color: var(--dim); font-size: .85rem; }
label.focus { position: sticky; top: 0; display: inline-block; background: var(--bg); padding: .2rem 0; }
#focus:checked ~ main .tool, #focus:checked ~ main .thinking, #focus:checked ~ main .divider { display: none; }
@media print { label.focus, #focus { display: none; } details > * { display: block; } }
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def write(shared: SharedSession, out: TextIO, *, redact: Redactor, depth: int = 1) -> None:
    s = shared.session
    r = redact.text
    title = r(s.get("title") or s.get("first_prompt") or s["id"]).split("\n", 1)[0]
    out.write(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>\n"
        '<input type="checkbox" id="focus"> <label class="focus" for="focus">focused: prompts and answers only</label>\n'
        "<main>\n"
    )
    _session(shared, out, redact=redact, depth=depth, top=True)
    out.write('</main>\n<p class="note">Exported by agtail.</p>\n</body></html>\n')


def _session(shared: SharedSession, out: TextIO, *, redact: Redactor, depth: int, top: bool) -> None:
    s = shared.session
    r = redact.text
    title = r(s.get("title") or s.get("first_prompt") or s["id"]).split("\n", 1)[0]
    out.write(f"<h1>{_e(title)}</h1>\n" if top else f"<h2>{_e(title)}</h2>\n")
    out.write('<table class="facts">')
    for name, value in header_facts(s):
        out.write(f"<tr><td>{_e(name)}</td><td>{_e(r(value))}</td></tr>")
    out.write("</table>\n")
    if top and not redact.secrets_masked:
        out.write(
            '<p class="note">Secrets are <b>not</b> masked in this document (the scanner is not installed).</p>\n'
        )
    _events(shared, shared.events(), out, redact=redact, depth=depth)


def _events(
    shared: SharedSession, events: Iterable[dict[str, Any]], out: TextIO, *, redact: Redactor, depth: int
) -> None:
    r = redact.text
    for ev in events:
        kind, role = ev.get("kind"), ev.get("role")
        extra = ev.get("extra") or {}
        cls = " inactive" if extra.get("branch") == "inactive" else ""
        when = _e(ev.get("ts") or "")
        if kind == "text" and ev.get("text"):
            who = "user" if role == "user" else "assistant"
            out.write(f"<div class=\"turn {who}{cls}\"><div class=\"who\">{who} {when}</div>"
                      f"<div class=\"body\">{_e(r(ev['text']))}</div></div>\n")  # fmt: skip
        elif kind == "thinking" and ev.get("text"):
            out.write(
                f'<details class="thinking{cls}"><summary>thinking</summary><pre>{_e(r(ev["text"]))}</pre></details>\n'
            )
        elif kind == "tool_use":
            _tool(shared, ev, out, redact=redact, depth=depth, cls=cls)
        elif kind == "tool_result":
            text, more = cut_block(r(as_text(ev.get("result"))))
            out.write(
                f'<details class="tool{cls}"><summary>result</summary><pre>{_e(text)}</pre>{_more(more)}</details>\n'
            )
        elif kind == "summary" or (kind == "system" and ev.get("subtype") == "compact_boundary"):
            if "compact" in str(ev.get("subtype") or "") or kind == "system":
                out.write(f'<div class="divider">the conversation was compacted here {when}</div>\n')
            if kind == "summary" and ev.get("text"):
                out.write(
                    f'<details class="tool"><summary>summary</summary><pre>{_e(r(ev["text"]))}</pre></details>\n'
                )
        elif kind == "system" and ev.get("is_error") and ev.get("text"):
            out.write(
                f'<div class="turn"><div class="who">error {when}</div><div class="body">{_e(r(ev["text"]))}</div></div>\n'
            )


def _more(n: int) -> str:
    return f'<div class="note">… {plural(n, "more line")}</div>' if n else ""


def _tool(
    shared: SharedSession, ev: dict[str, Any], out: TextIO, *, redact: Redactor, depth: int, cls: str
) -> None:
    r = redact.text
    failed = " failed" if ev.get("is_error") else ""
    tool = _e(r(str(ev.get("tool") or "tool")))
    edit = (ev.get("extra") or {}).get("edit")
    diff = diffs.unified(edit, shared.session.get("cwd")) if edit else ""
    inp = ev.get("input")
    command = inp.get("command") if isinstance(inp, dict) and isinstance(inp.get("command"), str) else None
    label = _e(r(command.split("\n", 1)[0][:120])) if command else ""
    out.write(
        f'<details class="tool{failed}{cls}"><summary>{tool}{" — failed" if failed else ""} {label}</summary>'
    )
    if diff:
        out.write("<pre>")
        for line in r(diff).rstrip("\n").split("\n"):
            kind = (
                "add"
                if line.startswith("+") and not line.startswith("+++")
                else "del"
                if line.startswith("-") and not line.startswith("---")
                else ""
            )
            out.write(f'<span class="{kind}">{_e(line)}</span>\n' if kind else f"{_e(line)}\n")
        out.write("</pre>")
    elif inp not in (None, "", {}):
        text, more = cut_block(r(command if command is not None else as_text(inp)))
        out.write(f"<pre>{_e(text)}</pre>{_more(more)}")
    if ev.get("result") not in (None, "") and not diff:
        text, more = cut_block(r(as_text(ev.get("result"))))
        out.write(f"<pre>{_e(text)}</pre>{_more(more)}")
    out.write("</details>\n")
    child = shared.children.get(ev.get("tool_use_id") or "") if ev.get("tool_use_id") else None
    if child is not None:
        title = _e(r(child.get("title") or child["id"]).split("\n", 1)[0])
        if depth > 0:
            out.write(f'<details class="tool"><summary>subagent: {title}</summary>\n')
            _session(shared.child(child), out, redact=redact, depth=depth - 1, top=False)
            out.write("</details>\n")
        else:
            out.write(
                f'<div class="note">subagent: {title} (agtail show {_e(child["agent"])}:{_e(child["id"])})</div>\n'
            )
