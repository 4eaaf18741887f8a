"""schemathesis against a real agtaild, driven by the served OpenAPI document: generated valid
and invalid requests must never get a 5xx, and every answer must match the document (status,
content type, body schema). Bounded so CI stays fast; the seed is fixed so a failure repeats."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.daemon_proc import DaemonProc, copy_claude, copy_codex

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

pytestmark = pytest.mark.slow

MAX_EXAMPLES = 150
#: Never-ending SSE streams cannot be fuzzed request by request (tests/test_sse.py and
#: tests/test_live_api.py cover them).
STREAMS = ["followSession", "changes", "streamLiveUsage"]
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProc]:
    base = tmp_path_factory.mktemp("fuzz")
    d = DaemonProc(base, {"claude-code": copy_claude(base / "claude"), "codex": copy_codex(base / "codex")})
    try:
        d.start()
        yield d
    finally:
        d.cleanup()


def _schema(daemon: DaemonProc) -> Any:
    auth = {"Authorization": f"Bearer {daemon.token}"}
    schema = schemathesis.openapi.from_url(f"{daemon.url}/api/v1/openapi.json", headers=auth)
    return schema.exclude(operation_id=STREAMS), auth


@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_no_5xx_and_no_schema_violations(daemon: DaemonProc, mode: str) -> None:
    schema, auth = _schema(daemon)
    schema = schema.exclude(tag="sync")  # see test_sync_endpoints_never_5xx
    strategy = schema.as_strategy(generation_mode=schemathesis.GenerationMode(mode), headers=auth)

    @seed(7717)
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def run(case: Any) -> None:
        response = case.call(base_url=daemon.url, headers=auth, allow_redirects=False, timeout=30)
        case.validate_response(response, checks=CHECKS, headers=auth)

    run()


def test_sync_endpoints_never_5xx(daemon: DaemonProc) -> None:
    """The sync engineer's endpoints document only their 200s, so only the 5xx rule applies."""
    schema, auth = _schema(daemon)
    strategy = schema.include(tag="sync").as_strategy(headers=auth)

    @seed(7717)
    @settings(max_examples=MAX_EXAMPLES // 2, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(case=strategy)
    def run(case: Any) -> None:
        response = case.call(base_url=daemon.url, headers=auth, allow_redirects=False, timeout=30)
        case.validate_response(response, checks=[not_a_server_error], headers=auth)

    run()
