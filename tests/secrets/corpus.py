#!/usr/bin/env python3
"""The secrets test corpus: planted fake secrets and look-alikes, inside transcript records.

    python -m tests.secrets.corpus OUT [--seed 1]      # writes OUT/planted.jsonl, OUT/lookalikes.jsonl

Deterministic for a seed. Nothing here is committed as data: the tests and the benchmark
build it in memory (fake but format-valid secrets in a repository trip secret scanners).

* Planted, hand-written (tests/secrets/families.py): every family the issue names, in the
  text a session would hold it in, in turn in each carrier a transcript has — a prompt, a
  tool's output (plain and as a Read tool numbers its lines), a Bash call's input, a Codex
  call's JSON-encoded arguments and output (where ``\\"`` escaping hides keys).
* Planted, from the rules (tests/secrets/regex_sample.py): one sample of every enabled rule.
* Look-alikes, which must not be found: UUIDs, git SHAs, base64 images and blobs, lock-file
  and download hashes, digests, cache keys, public keys and certificates, documented example
  keys (AKIAIOSFODNN7EXAMPLE & co.: public, so neither found nor masked), placeholders and
  code that reads a secret from somewhere else.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.secrets import regex_sample
from tests.secrets.families import B62, B64, FAMILIES, HEX, rand

_SENTENCE = (
    "the build fails on the parser when the fixture path has spaces so I refactored the adapter "
    "and added a migration let me check the logs again then run the tests with the new config"
)
WORDS = tuple(_SENTENCE.split())


@dataclass(frozen=True)
class Planted:
    family: str
    rule: str  # the rule expected to name it
    secret: str
    record: int


@dataclass
class Corpus:
    records: list[dict[str, Any]] = field(default_factory=list)
    planted: list[Planted] = field(default_factory=list)
    lookalike_records: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (kind, record)


def _prose(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _id(rng: random.Random, prefix: str) -> str:
    return prefix + rand(rng, B62, 24)


def prompt(rng: random.Random, text: str) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": f"{_prose(rng, 8)}:\n{text}\n{_prose(rng, 6)}"}}


def tool_output(rng: random.Random, text: str) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": _id(rng, "toolu_"), "content": text, "is_error": False}
    return {"type": "user", "message": {"role": "user", "content": [block]}, "toolUseResult": {"stdout": text}}


def read_output(rng: random.Random, text: str) -> dict[str, Any]:
    numbered = "\n".join(f"{n:>6}→{line}" for n, line in enumerate(text.splitlines(), 1))
    return tool_output(rng, numbered)


def bash_call(rng: random.Random, text: str) -> dict[str, Any]:
    use = {"type": "tool_use", "id": _id(rng, "toolu_"), "name": "Bash", "input": {"command": text, "description": _prose(rng, 4)}}
    return {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": _prose(rng, 10)}, use]}}


def codex_call(rng: random.Random, text: str) -> dict[str, Any]:
    arguments = json.dumps({"command": ["bash", "-lc", text], "workdir": "/home/dev/src/app"})
    payload = {"type": "function_call", "name": "shell", "arguments": arguments, "call_id": _id(rng, "call_")}
    return {"timestamp": "2026-02-01T10:00:00.000Z", "type": "response_item", "payload": payload}


def codex_output(rng: random.Random, text: str) -> dict[str, Any]:
    output = json.dumps({"output": text, "metadata": {"exit_code": 0, "duration_seconds": 0.4}})
    payload = {"type": "function_call_output", "call_id": _id(rng, "call_"), "output": output}
    return {"timestamp": "2026-02-01T10:00:01.000Z", "type": "response_item", "payload": payload}


CARRIERS: tuple[Callable[[random.Random, str], dict[str, Any]], ...] = (
    prompt,
    tool_output,
    read_output,
    bash_call,
    codex_call,
    codex_output,
)


def _escaped(text: str) -> str:
    """How ``text`` reads inside a JSON string."""
    return json.dumps(text)[1:-1]


def _lookalikes(rng: random.Random) -> list[tuple[str, str]]:
    uuid = lambda: "-".join((rand(rng, HEX, 8), rand(rng, HEX, 4), "4" + rand(rng, HEX, 3), "a" + rand(rng, HEX, 3), rand(rng, HEX, 12)))  # noqa: E731
    sha = lambda: rand(rng, HEX, 40)  # noqa: E731
    sha256 = lambda: rand(rng, HEX, 64)  # noqa: E731
    png = "iVBORw0KGgoAAAANSUhEUgAA" + base64.b64encode(rng.randbytes(3000)).decode()
    blob = base64.b64encode(rng.randbytes(15000)).decode()
    integrity = "sha512-" + base64.b64encode(rng.randbytes(64)).decode()
    body = "\n".join(rand(rng, B64, 64) for _ in range(8))
    return [
        ("uuids", f"session {uuid()} resumed\nrequestId: {uuid()}\n{json.dumps({'sessionId': uuid(), 'uuid': uuid(), 'parentUuid': uuid()})}"),
        ("git-shas", "$ git log --format='%H %s' -3\n" + "\n".join(f"{sha()} {' '.join(rng.choices(WORDS, k=5))}" for _ in range(3)) + f"\ncommit {sha()}\nMerge: {sha()[:7]} {sha()[:7]}"),
        ("git-sha-json", json.dumps({"git": {"commit_hash": sha(), "branch": "main"}, "head": sha()})),
        ("base64-image", json.dumps({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": png}})),
        ("data-url", f'<img src="data:image/png;base64,{png[:2000]}">'),
        ("base64-blob", f"$ base64 release.tar.gz\n{blob}"),
        ("package-lock", json.dumps({"node_modules/left-pad": {"version": "1.3.0", "resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz", "integrity": integrity}}, indent=2)),
        ("yarn-lock", f'left-pad@^1.3.0:\n  version "1.3.0"\n  resolved "https://registry.yarnpkg.com/left-pad/-/left-pad-1.3.0.tgz#{sha()}"\n  integrity {integrity}'),
        ("poetry-lock", f'[[package]]\nname = "requests"\nversion = "2.32.3"\nfiles = [\n    {{file = "requests-2.32.3-py3-none-any.whl", hash = "sha256:{sha256()}"}},\n]'),
        ("cargo-lock", f'[[package]]\nname = "serde"\nversion = "1.0.210"\nsource = "registry+https://github.com/rust-lang/crates.io-index"\nchecksum = "{sha256()}"'),
        ("go-sum", f"golang.org/x/net v0.30.0 h1:{base64.b64encode(rng.randbytes(32)).decode()}\ngolang.org/x/net v0.30.0/go.mod h1:{base64.b64encode(rng.randbytes(32)).decode()}"),
        ("pip-hashes", f"requests==2.32.3 --hash=sha256:{sha256()} --hash=sha256:{sha256()}"),
        ("digests", f"$ docker images --digests\nacme/api  latest  sha256:{sha256()}\n$ sha256sum dist.tar.gz\n{sha256()}  dist.tar.gz\n$ md5sum a.bin\n{rand(rng, HEX, 32)}  a.bin"),
        ("cache-keys", f"Cache restored from key: setup-uv-1-x86_64-unknown-linux-gnu-0.7.13-{sha256()}\ncache key: node-modules-{sha256()}\nKey:pip-{sha256()}"),
        ("etag", f'HTTP/1.1 200 OK\nETag: "{rand(rng, HEX, 32)}"\nx-request-id: {uuid()}\nx-amz-cf-id: {rand(rng, B62, 56)}=='),
        ("public-key", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rand(rng, B62, 43)} dev@laptop\n-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----"),
        ("certificate", f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----"),
        ("codex-encrypted", json.dumps({"type": "reasoning", "encrypted_content": "gAAAAAB" + base64.urlsafe_b64encode(rng.randbytes(400)).decode()})),
        ("claude-signature", json.dumps({"type": "thinking", "thinking": "let me check", "signature": base64.b64encode(rng.randbytes(300)).decode()})),
        ("token-counts", json.dumps({"usage": {"input_tokens": 4512, "cache_read_input_tokens": 30215, "output_tokens": 388}, "max_tokens": 8192, "token_count": "1234"})),
        ("docs-aws", "[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
        ("docs-jwt", "Authorization: Bearer eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"),
        ("docs-stripe", 'stripe.api_key = "sk_test_4eC39HqLyjWDarjtT1zdp7dc"'),
        ("docs-azurite", "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"),
        ("placeholders", "password=example\napi_key=xxx\ntoken: <your-key>\nAPI_KEY=${API_KEY}\nexport OPENAI_API_KEY=$OPENAI_API_KEY\npassword: '********'\nAuthorization: Bearer YOUR_TOKEN_HERE\nexport GITHUB_TOKEN=ghp_" + "x" * 36 + "\nSECRET_KEY={{ secret_key }}\nclient_secret: ${{ secrets.CLIENT_SECRET }}"),
        ("placeholder-urls", "postgres://user:password@localhost:5432/db\npostgres://postgres:postgres@localhost:5432/postgres\nhttps://user:pass@example.com/path\nmysql://root:${MYSQL_ROOT_PASSWORD}@db/app\nredis://:changeme@localhost:6379\nurl = f\"postgresql://{user}:{password}@{host}/{name}\"\nhttps://admin:s3cretPass9@api.example.com/v1"),
        ("code-references", 'api_key = os.environ["OPENAI_API_KEY"]\nclient = OpenAI(api_key=os.getenv("OPENAI_API_KEY"))\npassword = getpass.getpass()\ntoken = request.headers.get("Authorization")\nsecret = secrets.token_hex(32)\nconst apiKey = process.env.API_KEY;\npassword: str = Field(..., min_length=8)\nself.token = token\nAUTH_TOKEN_HEADER = "X-Auth-Token"\naccess_key = settings.AWS_ACCESS_KEY_ID'),
        ("names-not-secrets", "password_hash: $2b$12$" + rand(rng, B62, 53) + "\ntoken_type: bearer\nsecret_name: billing-db-creds\npassword_file: /run/secrets/db_password\ncredentials: ~/.aws/credentials\nkey: value\nprimary_key: user_id\ntokenizer: bert-base-uncased\napi_version: 2024-10-21"),
    ]


def build(seed: int = 1, *, ruleset: Any = None) -> Corpus:
    """The corpus for ``seed``; ``ruleset`` (agtaild.secrets.load_rules()) adds one sample of
    every enabled rule to the planted secrets."""
    rng = random.Random(seed)
    corpus = Corpus()
    carriers = iter(CARRIERS * 1000)
    for round_ in range(3):
        for family, make in FAMILIES.items():
            text, secrets = make(rng)
            carrier = next(carriers)
            corpus.records.append(carrier(rng, text))
            for rule, secret in secrets:
                # The service account's key sits JSON-encoded in its text (\n for line breaks).
                shown = _escaped(secret) if family == "gcp-service-account" else secret
                corpus.planted.append(Planted(f"{family}#{round_}", rule, shown, len(corpus.records) - 1))
    if ruleset is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # Python's parser on RE2's nested classes
            for rule in ruleset.rules:
                if not rule.enabled:
                    continue
                made = regex_sample.sample(rule, ruleset.allowlists, rng)
                if made is None:
                    raise ValueError(f"no sample could be generated for rule {rule.id}")
                keyword = "" if not rule.keywords or any(k.decode() in made.match.lower() for k in rule.keywords) else f"# {rule.keywords[0].decode()}\n"
                corpus.records.append(next(carriers)(rng, f"{keyword}{_prose(rng, 5)}\n{made.match}\n{_prose(rng, 5)}"))
                corpus.planted.append(Planted(f"rule:{rule.id}", rule.id, made.secret, len(corpus.records) - 1))
    for kind, text in _lookalikes(rng):
        for carrier in CARRIERS:
            corpus.lookalike_records.append((kind, carrier(rng, text)))
    return corpus


def write(out: Path, corpus: Corpus) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "planted.jsonl").open("w", encoding="utf-8") as f:
        for record in corpus.records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
    with (out / "lookalikes.jsonl").open("w", encoding="utf-8") as f:
        for kind, record in corpus.lookalike_records:
            f.write(json.dumps({"kind": kind, "record": record}, ensure_ascii=False) + "\n")
    with (out / "planted-index.json").open("w", encoding="utf-8") as f:
        json.dump([p.__dict__ | {"secret": None} for p in corpus.planted], f, indent=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from agtaild.secrets import load_rules

    corpus = build(args.seed, ruleset=load_rules())
    write(args.out, corpus)
    print(json.dumps({"records": len(corpus.records), "planted": len(corpus.planted), "lookalikes": len(corpus.lookalike_records)}))


if __name__ == "__main__":
    main()
