"""Print a session's new events as they are written: AGENT:ID, or the latest session."""

import sys

from agtail_client import Client

with Client.connect() as agtail:
    if len(sys.argv) > 1:
        agent, _, session_id = sys.argv[1].partition(":")
    else:
        latest = next(agtail.sessions(limit=1))
        agent, session_id = latest["agent"], latest["id"]
    print(f"following {agent}:{session_id}", flush=True)
    for event in agtail.follow(agent, session_id, reconnect=True):  # resumes after a restart
        print(event["seq"], event["kind"], (event["text"] or "")[:120], flush=True)
