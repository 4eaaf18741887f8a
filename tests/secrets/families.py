"""Fake secrets of every family the issue names, each in the text an agent session would
hold it in (a ``.env`` read by a tool, ``curl -v`` output, a config file, a prompt).

Every secret is generated (random, seeded) in its published format: none is a real key, and
none is written in this file (a prefix and random characters are joined at run time), so no
scanner flags this source. Each generator returns the carrier text and the secrets in it,
with the rule expected to name each.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable

B62 = string.ascii_letters + string.digits
B64 = B62 + "+/"
B64URL = B62 + "-_"
HEX = "0123456789abcdef"
UPPER32 = string.ascii_uppercase + "234567"

Planted = tuple[str, str]  # (expected rule, secret)
Family = Callable[[random.Random], tuple[str, list[Planted]]]


def rand(rng: random.Random, alphabet: str, n: int) -> str:
    """Random characters, with at least one digit and one letter when the alphabet has both."""
    both = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
    while True:
        out = "".join(rng.choice(alphabet) for _ in range(n))
        if n < 8 or not both or (any(c.isdigit() for c in out) and any(c.isalpha() for c in out)):
            return out


def password(rng: random.Random, n: int = 16) -> str:
    return rand(rng, B62 + "!%^*-_", n)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def aws_id(rng: random.Random, prefix: str = "AKIA") -> str:
    return prefix + rand(rng, UPPER32, 16)


def aws_secret(rng: random.Random) -> str:
    return rand(rng, B64, 40)


def pem_body(rng: random.Random, lines: int) -> str:
    return "\n".join(rand(rng, B64, 64) for _ in range(lines)) + "\n" + rand(rng, B64, 20) + "=="


def aws_credentials(rng: random.Random) -> tuple[str, list[Planted]]:
    key_id, secret = aws_id(rng), aws_secret(rng)
    text = f"$ cat ~/.aws/credentials\n[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}\nregion = eu-west-1\n"
    return text, [("aws-access-token", key_id), ("aws-secret-access-key", secret)]


def aws_csv(rng: random.Random) -> tuple[str, list[Planted]]:
    key_id, secret = aws_id(rng), aws_secret(rng)
    text = f"User name,Access key ID,Secret access key\ndeploy-bot,{key_id},{secret}\n"
    return text, [("aws-access-token", key_id), ("aws-access-key-pair", secret)]


def aws_sts(rng: random.Random) -> tuple[str, list[Planted]]:
    key_id, secret = aws_id(rng, "ASIA"), aws_secret(rng)
    session = rand(rng, B64, 300)
    body = {"Credentials": {"AccessKeyId": key_id, "SecretAccessKey": secret, "SessionToken": session, "Expiration": "2026-03-01T12:00:00Z"}}
    text = "$ aws sts get-session-token --duration-seconds 3600\n" + json.dumps(body, indent=4)
    return text, [("aws-access-token", key_id), ("aws-secret-access-key", secret), ("secret-assignment", session)]


def github_tokens(rng: random.Random) -> tuple[str, list[Planted]]:
    pat, oauth, user, server, refresh = (p + rand(rng, B62, 36) for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"))
    fine = "github_pat_" + rand(rng, B62, 22) + "_" + rand(rng, B62, 59)
    text = (
        f"export GITHUB_TOKEN={pat}\n"
        f"$ gh auth token\n{oauth}\n"
        f"git remote set-url origin https://x-access-token:{server}@github.com/acme/billing.git\n"
        f'{{"token": "{user}", "refresh_token": "{refresh}", "expires_in": 28800}}\n'
        f"GH_PAT={fine}\n"
    )
    return text, [
        ("github-pat", pat),
        ("github-oauth", oauth),
        ("github-app-token", server),
        ("github-app-token", user),
        ("github-refresh-token", refresh),
        ("github-fine-grained-pat", fine),
    ]


def gitlab(rng: random.Random) -> tuple[str, list[Planted]]:
    token = "glpat-" + rand(rng, B62 + "_-", 20)
    text = f"git clone https://oauth2:{token}@gitlab.com/acme/infra.git\nCloning into 'infra'...\n"
    return text, [("gitlab-pat", token)]


def slack(rng: random.Random) -> tuple[str, list[Planted]]:
    bot = f"xoxb-{rand(rng, string.digits, 11)}-{rand(rng, string.digits, 12)}-{rand(rng, B62, 24)}"
    user = f"xoxp-{rand(rng, string.digits, 11)}-{rand(rng, string.digits, 11)}-{rand(rng, string.digits, 12)}-{rand(rng, HEX, 32)}"
    hook = f"https://hooks.slack.com/services/T{rand(rng, UPPER32, 8)}/B{rand(rng, UPPER32, 10)}/{rand(rng, B62, 24)}"
    text = f"SLACK_BOT_TOKEN={bot}\nSLACK_USER_TOKEN={user}\ncurl -X POST -d '{{\"text\":\"deploy done\"}}' {hook}\n"
    return text, [("slack-bot-token", bot), ("slack-user-token", user), ("slack-webhook-url", hook)]


def stripe(rng: random.Random) -> tuple[str, list[Planted]]:
    live, restricted, hook = "sk_live_" + rand(rng, B62, 24), "rk_live_" + rand(rng, B62, 24), "whsec_" + rand(rng, B62, 32)
    text = f"STRIPE_SECRET_KEY={live}\nSTRIPE_RESTRICTED_KEY={restricted}\nSTRIPE_WEBHOOK_SECRET={hook}\n"
    return text, [("stripe-access-token", live), ("stripe-access-token", restricted), ("stripe-webhook-secret", hook)]


def openai(rng: random.Random) -> tuple[str, list[Planted]]:
    legacy = "sk-" + rand(rng, B62, 20) + "T3BlbkFJ" + rand(rng, B62, 20)
    project = "sk-proj-" + rand(rng, B64URL, 74) + "T3BlbkFJ" + rand(rng, B64URL, 74)
    service = "sk-svcacct-" + rand(rng, B64URL, 58) + "T3BlbkFJ" + rand(rng, B64URL, 58)
    unmarked = "sk-proj-" + rand(rng, B64URL, 124)
    text = (
        f"OPENAI_API_KEY={project}\n"
        f'curl https://api.openai.com/v1/models -H "Authorization: Bearer {legacy}"\n'
        f"export OPENAI_SERVICE_KEY='{service}'\n"
        f"the key I use is {unmarked} please test it\n"
    )
    return text, [
        ("openai-api-key", project),
        ("openai-api-key", legacy),
        ("openai-api-key", service),
        ("openai-api-key-prefixed", unmarked),
    ]


def anthropic(rng: random.Random) -> tuple[str, list[Planted]]:
    api = "sk-ant-api03-" + rand(rng, B64URL, 93) + "AA"
    admin = "sk-ant-admin01-" + rand(rng, B64URL, 93) + "AA"
    oauth, refresh = "sk-ant-oat01-" + rand(rng, B64URL, 95), "sk-ant-ort01-" + rand(rng, B64URL, 95)
    creds = {"claudeAiOauth": {"accessToken": oauth, "refreshToken": refresh, "expiresAt": 1767225600000}}
    text = f"ANTHROPIC_API_KEY={api}\nANTHROPIC_ADMIN_KEY={admin}\n$ cat ~/.claude/.credentials.json\n{json.dumps(creds)}\n"
    return text, [
        ("anthropic-api-key", api),
        ("anthropic-admin-api-key", admin),
        ("anthropic-key-prefixed", oauth),
        ("anthropic-key-prefixed", refresh),
    ]


def google(rng: random.Random) -> tuple[str, list[Planted]]:
    api = "AIza" + rand(rng, B64URL, 35)
    client = "GOCSPX-" + rand(rng, B64URL, 28)
    access = "ya29." + rand(rng, B64URL, 120)
    text = (
        f"const firebaseConfig = {{ apiKey: \"{api}\", projectId: \"acme-prod\" }};\n"
        f"GOOGLE_CLIENT_SECRET={client}\n"
        f"curl -H 'Authorization: Bearer {access}' https://www.googleapis.com/drive/v3/files\n"
    )
    return text, [("gcp-api-key", api), ("gcp-oauth-client-secret", client), ("gcp-oauth-access-token", access)]


def gcp_service_account(rng: random.Random) -> tuple[str, list[Planted]]:
    key = "-----BEGIN PRIVATE KEY-----\n" + pem_body(rng, 25) + "\n-----END PRIVATE KEY-----\n"
    account = {
        "type": "service_account",
        "project_id": "acme-prod",
        "private_key_id": rand(rng, HEX, 40),
        "private_key": key,
        "client_email": "ci@acme-prod.iam.gserviceaccount.com",
    }
    return "$ cat deploy/sa.json\n" + json.dumps(account, indent=2), [("private-key", key.strip())]


def tokens_of_registries(rng: random.Random) -> tuple[str, list[Planted]]:
    hf = "hf_" + rand(rng, string.ascii_letters, 34)
    npm = "npm_" + rand(rng, string.ascii_lowercase + string.digits, 36)
    pypi = "pypi-AgEIcHlwaS5vcmc" + rand(rng, B64URL, 120)
    legacy = "-".join(rand(rng, HEX, n) for n in (8, 4, 4, 4, 12))
    text = (
        f"huggingface-cli login --token {hf}\n"
        f"$ cat ~/.npmrc\n//registry.npmjs.org/:_authToken={npm}\n//npm.acme.io/:_authToken={legacy}\n"
        f"$ cat ~/.pypirc\n[pypi]\nusername = __token__\npassword = {pypi}\n"
    )
    return text, [
        ("huggingface-access-token", hf),
        ("npm-access-token", npm),
        ("npmrc-auth-token", legacy),
        ("pypi-upload-token", pypi),
    ]


def messaging(rng: random.Random) -> tuple[str, list[Planted]]:
    sendgrid = "SG." + rand(rng, B64URL, 22) + "." + rand(rng, B64URL, 43)
    twilio = "SK" + rand(rng, HEX, 32)
    text = f"SENDGRID_API_KEY={sendgrid}\nTWILIO_API_KEY={twilio}\nTWILIO_ACCOUNT_SID=AC{rand(rng, HEX, 32)}\n"
    return text, [("sendgrid-api-token", sendgrid), ("twilio-api-key", twilio)]


def azure(rng: random.Random) -> tuple[str, list[Planted]]:
    account = rand(rng, B64, 86) + "=="
    bus = rand(rng, B64, 43) + "="
    client = rand(rng, B62, 3) + rand(rng, string.digits, 1) + "Q~" + rand(rng, B62 + "_~.-", 34)
    sig = rand(rng, B64, 43).replace("+", "%2B").replace("/", "%2F") + "%3D"
    text = (
        f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey={account};EndpointSuffix=core.windows.net\n"
        f"SERVICEBUS=Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={bus}\n"
        f"AZURE_CLIENT_SECRET={client}\n"
        f"https://acmeprod.blob.core.windows.net/backups?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-06-01T00:00:00Z&sig={sig}\n"
    )
    return text, [
        ("azure-storage-account-key", account),
        ("azure-shared-access-key", bus),
        ("azure-ad-client-secret", client),
        ("azure-sas-signature", sig),
    ]


def private_keys(rng: random.Random) -> tuple[str, list[Planted]]:
    planted: list[Planted] = []
    parts = []
    for kind in ("RSA PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY"):
        block = f"-----BEGIN {kind}-----\n{pem_body(rng, 12)}\n-----END {kind}-----"
        parts.append(block)
        planted.append(("private-key", block))
    pgp = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + pem_body(rng, 20) + "\n=" + rand(rng, B64, 4) + "\n-----END PGP PRIVATE KEY BLOCK-----"
    parts.append(pgp)
    planted.append(("private-key", pgp))
    cut = "-----BEGIN RSA PRIVATE KEY-----\n" + pem_body(rng, 6)
    parts.append(cut + "\n[output truncated]")
    planted.append(("private-key-unterminated", cut))
    return "$ cat ~/.ssh/id_*\n" + "\n".join(parts) + "\n", planted


def jwt(rng: random.Random) -> tuple[str, list[Planted]]:
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    payload = b64url(json.dumps({"sub": rand(rng, string.digits, 9), "iat": 1767225600, "role": "admin"}).encode())
    token = f"{header}.{payload}.{b64url(rng.randbytes(32))}"
    return f"Set-Cookie: session={token}; Path=/; HttpOnly\n", [("jwt", token)]


def urls(rng: random.Random) -> tuple[str, list[Planted]]:
    pw = [password(rng) for _ in range(6)]
    text = (
        f"DATABASE_URL=postgres://app:{pw[0]}@db.acme.internal:5432/app\n"
        f"MONGO_URI=mongodb+srv://svc:{pw[1]}@cluster0.ab1cd.mongodb.net/prod?retryWrites=true\n"
        f"REDIS_URL=redis://:{pw[2]}@cache.acme.internal:6379/0\n"
        f"mysql -h db mysql://root:{pw[3]}@10.0.0.7:3306/shop\n"
        f"pip install --index-url https://deploy:{pw[4]}@pypi.acme-corp.io/simple/ acme-core\n"
        f"ftp://backup:{pw[5]}@files.acme-corp.io/nightly/\n"
    )
    rules = ["database-url"] * 4 + ["url-password"] * 2
    return text, list(zip(rules, pw, strict=True))


def connection_strings(rng: random.Random) -> tuple[str, list[Planted]]:
    pw = password(rng, 14)
    token = rand(rng, B62, 32)
    text = (
        f'"ConnectionStrings": {{ "Default": "Server=tcp:acme.database.windows.net,1433;Database=app;User ID=svc;Password={pw};Encrypt=true;" }}\n'
        f"GET https://api.acme-corp.io/v2/export?format=csv&access_token={token} HTTP/1.1\n"
    )
    return text, [("connection-string-password", pw), ("url-query-secret", token)]


def headers(rng: random.Random) -> tuple[str, list[Planted]]:
    bearer = rand(rng, B64URL, 40)
    basic = base64.b64encode(f"svc:{password(rng)}".encode()).decode()
    api = rand(rng, B62, 32)
    loose = rand(rng, B64URL, 48)
    text = (
        "$ curl -v https://api.acme-corp.io/v1/me\n"
        f"> GET /v1/me HTTP/1.1\n> Host: api.acme-corp.io\n> Authorization: Bearer {bearer}\n> Accept: */*\n"
        f"curl -H 'Authorization: Basic {basic}' https://ci.acme-corp.io/api/json\n"
        f"http GET https://api.acme-corp.io/items X-API-Key:{api}\n"
        f"the staging API wants Bearer {loose} in every request\n"
    )
    return text, [
        ("authorization-header", bearer),
        ("authorization-header", basic),
        ("api-key-header", api),
        ("bearer-token", loose),
    ]


def assignments(rng: random.Random) -> tuple[str, list[Planted]]:
    django = "django-insecure-" + password(rng, 40)
    db, api, salt, client, pyval = password(rng), rand(rng, B62, 32), rand(rng, B62, 24), rand(rng, B64URL, 40), password(rng, 20)
    text = (
        "$ cat .env\n"
        f"DJANGO_SECRET_KEY={django}\n"
        f"DB_PASSWORD={db}\n"
        f"SECRET_SIGNING_SALT={salt}\n"
        "$ cat config/service.yaml\n"
        f"service:\n  name: billing\n  api_key: {api}\n"
        f'{{"clientId": "billing-web", "clientSecret": "{client}"}}\n'
        f'conn = connect(host="db", user="etl", password="{pyval}")\n'
    )
    return text, [
        ("secret-assignment", django),
        ("secret-assignment", db),
        ("secret-assignment", salt),
        ("secret-assignment", api),
        ("secret-assignment", client),
        ("secret-assignment", pyval),
    ]


FAMILIES: dict[str, Family] = {
    "aws-credentials-file": aws_credentials,
    "aws-credentials-csv": aws_csv,
    "aws-sts-json": aws_sts,
    "github": github_tokens,
    "gitlab": gitlab,
    "slack": slack,
    "stripe": stripe,
    "openai": openai,
    "anthropic": anthropic,
    "google": google,
    "gcp-service-account": gcp_service_account,
    "registries": tokens_of_registries,
    "messaging": messaging,
    "azure": azure,
    "private-keys": private_keys,
    "jwt": jwt,
    "urls": urls,
    "connection-strings": connection_strings,
    "headers": headers,
    "assignments": assignments,
}
