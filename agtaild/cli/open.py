"""`agtail open`: log the browser into the running daemon's web viewer.

The daemon mints a one-time login code (POST /api/v1/login-link, over the unix socket: no
token needed); the link sets the viewer's HttpOnly cookie and is useless afterwards, so it is
safe to print. The token itself never appears on a command line or in browser history.
"""

from __future__ import annotations

import argparse
from typing import Any

from agtaild.errors import AgtailError


def register(subparsers: Any, common: argparse.ArgumentParser) -> None:
    p = subparsers.add_parser(
        "open",
        parents=[common],
        help="open the web viewer of the running agtaild (a one-time login link)",
        description="Open the running agtaild's web viewer, logged in through a one-time link.",
    )
    p.add_argument("--print", dest="print_only", action="store_true", help="print the link instead of opening a browser")
    p.set_defaults(func=run)


def run(ctx: Any) -> int:
    from agtail_client import ApiError, Client

    client = Client.discover(ctx.resolved_data_dir)
    if client is None:
        raise AgtailError("agtaild is not running for this data dir: start it (`agtaild`, or `systemctl --user start agtaild`)")
    try:
        url = client.login_url()
    except ApiError as err:
        raise AgtailError(err.message) from None
    finally:
        client.close()
    if ctx.json:
        ctx.out_json({"url": url, "expires_in": 600})
    else:
        print(url)
    if not ctx.args.print_only and not ctx.json:
        import webbrowser

        if not webbrowser.open(url):
            ctx.err("agtail: no browser found; open the link above (it works once, for 10 minutes)")
    return 0
