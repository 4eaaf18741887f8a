"""Tokens and cost per day, every agent together (default: the last 30 days)."""

import sys

from agtail_client import Client

since = sys.argv[1] if len(sys.argv) > 1 else "30d"
with Client.connect() as agtail:  # the daemon of $AGTAIL_DATA_DIR, else the default data dir
    report = agtail.stats(by="day", since=since)
    for row in report["rows"]:
        cost = "unknown" if row["cost_usd"] is None else f"${row['cost_usd']:.2f}"
        print(f"{row['key']}  {row['total_tokens']:>12} tokens  {cost}")
    print(f"total       {report['totals']['total_tokens']:>12} tokens")
