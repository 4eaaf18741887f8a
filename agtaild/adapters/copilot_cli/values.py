"""Values inside Copilot CLI events: token counts, shutdown totals, tool outcomes.

Kept apart from the parser (:mod:`agtaild.adapters.copilot_cli.events`) so each module stays small.
"""

from __future__ import annotations

from typing import Any

import msgspec

from agtaild.model import Usage


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def copilot_usage(raw: Any) -> Usage | None:
    """Copilot's token counts → the Anthropic convention (input without cache reads/writes)."""
    if not isinstance(raw, dict):
        return None
    cache_read = _int(raw.get("cacheReadTokens"))
    cache_write = _int(raw.get("cacheWriteTokens"))
    usage = Usage(
        input_tokens=max(_int(raw.get("inputTokens")) - cache_read - cache_write, 0),
        output_tokens=_int(raw.get("outputTokens")),
        cache_read_tokens=cache_read,
        cache_write_tokens=cache_write,
        reasoning_tokens=_int(raw.get("reasoningTokens")),
    ).fix_total()
    return None if usage.is_zero() else usage


def shutdown_metrics(data: dict[str, Any]) -> dict[str, tuple[int, Usage]]:
    """model → (request count, usage) of a ``session.shutdown``'s ``modelMetrics``; the usage
    sits in ``usage`` (1.0.x) or flat beside ``requests`` (older builds)."""
    metrics = data.get("modelMetrics")
    out: dict[str, tuple[int, Usage]] = {}
    for model, entry in metrics.items() if isinstance(metrics, dict) else ():
        if not isinstance(model, str) or not isinstance(entry, dict):
            continue
        usage = copilot_usage(entry.get("usage") if isinstance(entry.get("usage"), dict) else entry)
        requests = entry.get("requests")
        count = _int(requests.get("count")) if isinstance(requests, dict) else _int(requests)
        if usage is not None:
            out[model] = (count, usage)
    details = data.get("tokenDetails")
    if not out and isinstance(details, dict):
        # 1.0.7x: session totals by kind, without a per-model split.
        def tokens(name: str) -> int:
            entry = details.get(name)
            return _int(entry.get("tokenCount")) if isinstance(entry, dict) else 0

        usage = copilot_usage(
            {
                "inputTokens": tokens("input"),
                "outputTokens": tokens("output"),
                "cacheReadTokens": tokens("cache_read"),
                "cacheWriteTokens": tokens("cache_write"),
            }
        )
        model = _str(data.get("currentModel")) or "unknown"
        entry = metrics.get(model) if isinstance(metrics, dict) else None
        requests = entry.get("requests") if isinstance(entry, dict) else None
        if usage is not None:
            out[model] = (_int(requests), usage)
    return out


def payload(data: dict[str, Any], drop: tuple[str, ...] = ()) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in drop}


def arguments(value: Any) -> Any:
    """Tool arguments are an object, or a JSON string in some builds."""
    if isinstance(value, str):
        try:
            return msgspec.json.decode(value)
        except msgspec.DecodeError:
            return value
    return value


def tool_outcome(d: dict[str, Any]) -> tuple[Any, bool, dict[str, Any]]:
    """(result text, is_error, extra) of a ``tool.execution_complete``. A shell command that
    exited non-zero is reported with ``success: true``: the exit code decides then."""
    extra: dict[str, Any] = {}
    result: Any = None
    raw = d.get("result")
    if isinstance(raw, dict):
        result = raw.get("content")
        if raw.get("detailedContent") not in (None, "", result):
            extra["detailed"] = raw["detailedContent"]
    elif raw is not None:
        result = raw
    error = d.get("error")
    if isinstance(error, dict):
        result = result if result is not None else error.get("message")
        extra["error"] = error
    elif isinstance(error, str):
        result = result if result is not None else error
    shell = d.get("shellExecution")
    code = shell.get("exitCode") if isinstance(shell, dict) else None
    if isinstance(code, int) and not isinstance(code, bool):
        extra["exit_code"] = code
    is_error = d.get("success") is False or (isinstance(code, int) and code != 0)
    for k in ("fileEdits", "toolTelemetry"):
        if d.get(k):
            extra[k] = d[k]
    return result, is_error, extra


def title_of(prompt: str | None) -> str | None:
    if not prompt:
        return None
    for line in prompt.splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= 200 else line[:199] + "…"
    return None
