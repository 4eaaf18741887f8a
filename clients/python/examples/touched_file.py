"""The sessions whose tool calls named a file, and which tools they used on it."""

import sys

from agtail_client import Client

path = sys.argv[1]
with Client.connect() as agtail:
    touched: dict[str, set[str]] = {}
    for hit in agtail.search(path, kind="tool_use"):  # follows the pages to the end
        session = hit["session"]
        key = f"{session['agent']}:{session['id']}  {session['cwd']}"
        touched.setdefault(key, set()).add(hit["event"]["tool"] or "?")
    for key, tools in touched.items():
        print(key, " ".join(sorted(tools)))
