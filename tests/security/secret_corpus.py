"""The secret corpus of issue 25: real-looking secrets of every form we redact, each placed in prose,
in `KEY=value`, in JSON, in a command line and in a URL; and near misses that must stay as they are.

Every value is made here, at import, from a seeded generator and by concatenation: no credential
(not even a fake one in a provider's format) is written in this file, so nothing in the repository
looks like a leaked token to a secret scanner. The same seed gives the same corpus on every run.

`SECRETS` holds the secrets; each names the kind its marker must say (`[REDACTED <kind>]`), the
parts that must never survive (the value less a public prefix such as `ghp_`), and its placements.
`NEAR_MISSES` are texts that look a little like secrets (ids, digests, image data, the word token).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid
from dataclasses import dataclass, field

SEED = 25
_rng = random.Random(SEED)

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = UPPER + LOWER + DIGITS


def _pick(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def token(n: int, alphabet: str = ALNUM) -> str:
    """`n` random characters of `alphabet`, with a digit, a capital and a small letter among them
    when the alphabet has them (as every random token of that length has, in practice)."""
    chars = list(_pick(alphabet, n))
    wanted = [a for a in (DIGITS, UPPER, LOWER) if any(c in alphabet for c in a)]
    for i, group in enumerate(wanted):
        chars[(i * 7 + 3) % n] = _rng.choice([c for c in group if c in alphabet])
    return "".join(chars)


def _b64(n_bytes: int) -> str:
    return base64.b64encode(_rng.randbytes(n_bytes)).decode()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


PLACEMENTS = ("prose", "keyvalue", "json", "command", "url")


@dataclass(frozen=True)
class Secret:
    name: str
    kind: str
    value: str
    forms: dict[str, str]
    parts: tuple[str, ...] = field(default=())
    """What must never survive; the value itself when empty."""

    @property
    def secret_parts(self) -> tuple[str, ...]:
        return self.parts or (self.value,)


def _token_forms(label: str, env: str, value: str) -> dict[str, str]:
    """The five placements of a token that no key name announces (the JSON key, the flag and the
    query parameter say nothing): the value's shape alone must give it away."""
    return {
        "prose": f"Here is the {label} for the deploy: {value} (rotate it next week).",
        "keyvalue": f"export {env}={value}",
        "json": json.dumps({"service": "deploy", "value": value, "note": "rotated monthly"}),
        "command": f"deploy-cli push --region eu-west-1 --with {value} --verbose",
        "url": f"https://ci.example.com/run?ref=main&value={value}&retry=2",
    }


def _token(name: str, kind: str, label: str, env: str, prefix: str, tail: str) -> Secret:
    value = prefix + tail
    return Secret(name, kind, value, _token_forms(label, env, value), parts=(tail,))


def _url_secret(name: str, kind: str, url: str, secret: str, env: str) -> Secret:
    """A secret that lives in an address: the address is the URL placement, and it is quoted
    in prose, assigned, put in JSON and passed to a command."""
    return Secret(name, kind, url, {
        "prose": f"The service lives at {url} for now.",
        "keyvalue": f"{env}={url}",
        "json": json.dumps({"endpoint": url, "retries": 3}),
        "command": f"curl -fsS '{url}' -o out.json",
        "url": url,
    }, parts=(secret,))


def _password(name: str, value: str, prose: str, keyvalue: str, payload: object, command: str, url: str) -> Secret:
    return Secret(name, "password", value, {
        "prose": prose, "keyvalue": keyvalue, "json": json.dumps(payload), "command": command, "url": url,
    })


def _pem(kind_word: str, body_bytes: int) -> tuple[str, tuple[str, ...]]:
    body = _b64(body_bytes)
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    block = f"-----BEGIN {kind_word}-----\n" + "\n".join(lines) + f"\n-----END {kind_word}-----"
    return block, tuple(line for line in lines if len(line) >= 16)


def _pem_secret(name: str, kind_word: str, body_bytes: int, env: str) -> Secret:
    block, lines = _pem(kind_word, body_bytes)
    quoted = block.replace("\n", "\\n")
    return Secret(name, "private-key", block, {
        "prose": f"Use this deploy key:\n{block}\nand delete it afterwards.",
        "keyvalue": f'{env}="{quoted}"',
        "json": json.dumps({"name": "deploy", "material": block}),
        "command": f"printf '%s\\n' '{block}' > ~/.ssh/id_deploy && chmod 600 ~/.ssh/id_deploy",
        "url": "https://vault.example.com/v1/put?material=" + quoted,
    }, parts=lines)


def _jwt() -> Secret:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": token(10, DIGITS), "name": "Ada", "iat": 1735689600}).encode())
    signature = _b64url(_rng.randbytes(32))
    value = f"{header}.{payload}.{signature}"
    return Secret("jwt", "jwt", value, {
        "prose": f"The session was signed as {value} yesterday.",
        "keyvalue": f"SESSION_JWT={value}",
        "json": json.dumps({"user": "ada", "value": value}),
        "command": f"curl -H 'X-Session: {value}' https://api.example.com/me",
        "url": f"https://app.example.com/callback?state=ok&value={value}",
    }, parts=(payload, signature))


def _aws() -> tuple[Secret, Secret]:
    key_id = "AK" + "IA" + token(16, UPPER + DIGITS)
    secret = token(40, ALNUM + "/+")
    id_secret = Secret("aws-access-key-id", "aws-access-key-id", key_id, {
        "prose": f"The AWS access key id is {key_id}; the secret is in the vault.",
        "keyvalue": f"AWS_ACCESS_KEY_ID={key_id}",
        "json": json.dumps({"AccessKeyId": key_id, "UserName": "deploy"}),
        "command": f"aws configure set aws_access_key_id {key_id}",
        "url": f"https://s3.example.com/probe?id={key_id}",
    }, parts=(key_id[4:],))
    pair = Secret("aws-secret", "aws-secret", secret, {
        "prose": f"Here is the AWS secret access key: {secret} — rotate it after the demo.",
        "keyvalue": f"AWS_SECRET_ACCESS_KEY={secret}",
        "json": json.dumps({"AccessKey": {"AccessKeyId": key_id, "SecretAccessKey": secret, "Status": "Active"}}),
        "command": f"aws configure set aws_secret_access_key {secret}",
        "url": f"https://backup.example.com/config?aws_secret_access_key={secret}",
    })
    return id_secret, pair


def _azure() -> Secret:
    key = _b64(64)
    conn = f"DefaultEndpointsProtocol=https;AccountName=acmestore;AccountKey={key};EndpointSuffix=core.windows.net"
    return Secret("azure-storage", "azure-storage-key", conn, {
        "prose": f"Our storage connection string is {conn} (prod).",
        "keyvalue": f'AZURE_STORAGE_CONNECTION_STRING="{conn}"',
        "json": json.dumps({"storage": conn}),
        "command": f'az storage blob list --container-name logs --connection-string "{conn}"',
        "url": f"https://config.example.com/apply?AccountKey={key}",
    }, parts=(key.rstrip("="),))


def _query(name: str, param: str, value: str, url_head: str, tail: str = "") -> Secret:
    url = f"{url_head}{param}={value}{tail}"
    return _url_secret(name, "url-credential", url, value, "CALLBACK_URL")


def _corpus() -> list[Secret]:
    aws_id, aws_secret = _aws()
    slack_path = "T" + token(8, UPPER + DIGITS) + "/B" + token(10, UPPER + DIGITS) + "/" + token(24)
    slack_hook = "https://hooks.slack.com/services/" + slack_path
    db_pw, mongo_pw, redis_pw = token(20), token(18), token(24)
    userinfo_token = token(40, "0123456789abcdef")
    sas_sig = _b64(32)
    amz_sig = hashlib.sha256(_rng.randbytes(16)).hexdigest()
    return [
        aws_id,
        aws_secret,
        _token("github-ghp", "github-token", "GitHub token", "GITHUB_TOKEN", "gh" + "p_", token(36)),
        _token("github-gho", "github-token", "GitHub OAuth token", "GH_OAUTH", "gh" + "o_", token(36)),
        _token("github-ghs", "github-token", "GitHub app token", "GH_APP", "gh" + "s_", token(36)),
        _token("github-ghu", "github-token", "GitHub user-to-server token", "GH_USER", "gh" + "u_", token(36)),
        _token("github-pat", "github-token", "fine-grained GitHub token", "GH_PAT", "github" + "_pat_",
               token(22) + "_" + token(59)),
        # cut short (clipped, or pasted in part): 20 characters in all
        _token("github-short", "github-token", "GitHub token", "GH_SHORT", "gh" + "p_", token(16)),
        _token("gitlab", "gitlab-token", "GitLab token", "GITLAB_TOKEN", "gl" + "pat-", token(20)),
        _token("npm", "npm-token", "npm token", "NPM_TOKEN", "np" + "m_", token(36)),
        _token("pypi", "pypi-token", "PyPI upload token", "TWINE_PASSWORD", "py" + "pi-AgEIcHlwaS5vcmc",
               token(80, ALNUM + "-_")),
        _token("slack-bot", "slack-token", "Slack bot token", "SLACK_BOT_TOKEN", "xo" + "xb-",
               token(12, DIGITS) + "-" + token(13, DIGITS) + "-" + token(24)),
        _token("slack-user", "slack-token", "Slack user token", "SLACK_USER_TOKEN", "xo" + "xp-",
               token(12, DIGITS) + "-" + token(12, DIGITS) + "-" + token(13, DIGITS) + "-"
               + token(32, "0123456789abcdef")),
        _url_secret("slack-webhook", "slack-webhook", slack_hook, slack_path, "SLACK_WEBHOOK_URL"),
        _token("stripe-live-long", "stripe-key", "Stripe secret key", "STRIPE_SECRET_KEY", "sk" + "_live_", token(99)),
        _token("stripe-restricted", "stripe-key", "Stripe restricted key", "STRIPE_RK", "rk" + "_live_", token(24)),
        _token("stripe-test", "stripe-key", "Stripe test key", "STRIPE_TEST", "sk" + "_test_", token(34)),
        _token("openai", "openai-key", "OpenAI key", "OPENAI_API_KEY", "s" + "k-", token(48)),
        _token("openai-project", "openai-key", "OpenAI project key", "OPENAI_PROJECT_KEY", "s" + "k-proj-",
               token(74, ALNUM + "-_") + "T3Blbk" + "FJ" + token(74, ALNUM + "-_")),
        _token("anthropic", "anthropic-key", "Anthropic key", "ANTHROPIC_API_KEY", "s" + "k-ant-api03-",
               token(93, ALNUM + "-_") + "AA"),
        _token("google", "google-api-key", "Google API key", "GOOGLE_API_KEY", "AI" + "za", token(35, ALNUM + "-_")),
        _azure(),
        _jwt(),
        _pem_secret("pem-rsa", "RSA PRIVATE KEY", 1190, "TLS_KEY"),
        _pem_secret("openssh", "OPENSSH PRIVATE KEY", 400, "SSH_KEY"),
        _url_secret("postgres-url", "url-password", f"postgres://app_user:{db_pw}@db.internal:5432/shop", db_pw,
                    "DATABASE_URL"),
        _url_secret("mongodb-url", "url-password", f"mongodb+srv://admin:{mongo_pw}@cluster0.ab1cd.mongodb.net/app",
                    mongo_pw, "MONGO_URL"),
        _url_secret("redis-url", "url-password", f"redis://:{redis_pw}@cache.internal:6379/0", redis_pw, "REDIS_URL"),
        _url_secret("url-userinfo-token", "url-token", f"https://{userinfo_token}@github.com/acme/private.git",
                    userinfo_token, "REPO_URL"),
        _query("query-api-key", "api_key", token(32), "https://api.example.com/v2/items?page=2&"),
        _query("query-token", "token", token(40), "https://api.example.com/v2/export?"),
        _query("query-access-token", "access_token", token(64, ALNUM + "-_."), "https://graph.example.com/me?",
               "&fields=id,name"),
        _query("azure-sas-sig", "sig", sas_sig.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D"),
               "https://acmestore.blob.core.windows.net/logs/app.csv?sv=2022-11-02&se=2030-01-01T00%3A00%3A00Z&sp=r&"),
        _query("s3-presigned", "X-Amz-Signature", amz_sig,
               "https://acme-bucket.s3.amazonaws.com/report.pdf?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date="
               "20250101T000000Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&"),
        _password("password-mysql-p", pw := "Hn" + token(10),
                  f"To get in, run mysql -uroot -p{pw} shop on the bastion.", f"MYSQL_PWD={pw}",
                  {"password": pw}, f"mysql -h db.internal -u root -p{pw} shop < dump.sql",
                  f"mysql://root:{pw}@db.internal:3306/shop"),
        _password("password-flag", pw2 := "Qx" + token(11),
                  f"Pass --password {pw2} to the backup tool.", f"DB_PASSWORD={pw2}",
                  {"db": {"user": "app", "password": pw2}}, f"mysqldump --user=app --password={pw2} shop",
                  f"https://db.example.com/login?user=app&password={pw2}"),
        _password("password-is", pw3 := "Vb" + token(9),
                  f"The admin password is {pw3}, change it after the demo.", f"ADMIN_PASS={pw3}",
                  {"admin_password": pw3}, f"echo 'the password is {pw3}' | mail -s creds ops@example.com",
                  f"https://admin:{pw3}@admin.example.com/"),
        _password("password-with", pw4 := "hunter" + token(6, DIGITS) + "pass",
                  f"connect with password {pw4}", f"SMTP_PASSWORD={pw4}", {"smtp": {"password": pw4}},
                  f"sshpass -p {pw4} ssh deploy@bastion.example.com",
                  f"smtp://mailer:{pw4}@smtp.example.com:587"),
        _keyed("keyed-signing-key", "key", token(32), "signing key", "JWT_SIGNING_KEY", "signingKey", "--signing-key",
               "signing_key"),
        _keyed("keyed-verify-token", "token", token(24), "webhook verify token", "WEBHOOK_VERIFY_TOKEN",
               "verifyToken", "--verify-token", "verify_token"),
    ]


def _keyed(name: str, kind: str, value: str, words: str, env: str, json_key: str, flag: str, param: str) -> Secret:
    """A random value whose only clue is the name it is given (no provider format)."""
    return Secret(name, kind, value, {
        "prose": f"The {words} {value} is also in the vault.",
        "keyvalue": f"{env}={value}",
        "json": json.dumps({json_key: value, "algorithm": "HS256"}),
        "command": f"app serve --port 8080 {flag} {value}",
        "url": f"https://app.example.com/verify?user=ada&{param}={value}",
    })


SECRETS: list[Secret] = _corpus()
FORMS: dict[str, str] = {f"{s.name}/{where}": text for s in SECRETS for where, text in s.forms.items()}
"""Every placement of every secret, by `name/placement`."""
KIND_OF_FORM: dict[str, str] = {f"{s.name}/{where}": s.kind for s in SECRETS for where in s.forms}
# Where the text itself names the secret otherwise than its value's shape would: the key rule then
# names it (the value has no shape of its own), and the marker says what the key says.
KIND_OF_FORM.update({
    "aws-access-key-id/url": "aws-access-key-id",
    "password-mysql-p/json": "password", "password-mysql-p/url": "url-password",
    "password-flag/url": "url-credential",
    "password-is/url": "url-password",
    "password-with/url": "url-password",
    "azure-storage/url": "azure-storage-key",
    "keyed-verify-token/url": "url-credential",
})


def every_secret_part() -> list[str]:
    """The strings that may be in no redacted text and no store."""
    return [part for s in SECRETS for part in s.secret_parts]


def _png() -> str:
    """Base64 of an image-like payload: a PNG signature, then random bytes."""
    return base64.b64encode(b"\x89PNG\r\n\x1a\n" + _rng.randbytes(3000)).decode()


def _near_misses() -> list[str]:
    ids = [str(uuid.UUID(int=_rng.getrandbits(128), version=4)) for _ in range(3)]
    shas = [hashlib.sha1(_rng.randbytes(8)).hexdigest() for _ in range(3)]
    digests = [hashlib.sha256(_rng.randbytes(8)).hexdigest() for _ in range(3)]
    png = _png()
    return [
        f"request {ids[0]} failed after 3 retries; trace id {ids[1]}",
        json.dumps({"request_id": ids[2], "status": "ok"}),
        f"https://api.example.com/v2/orders/{ids[0]}?expand=items",
        f"commit {shas[0]}\nAuthor: Ada <ada@example.com>\n\n    Merge {shas[1][:7]} into main",
        f"git checkout {shas[2]} && git log --oneline -3",
        f"https://github.com/acme/app/commit/{shas[0]}",
        f"{digests[0]}  dist/app-1.4.2.tar.gz",
        f"sha256:{digests[1]}",
        json.dumps({"digest": "sha256:" + digests[2], "size": 5120}),
        f"docker pull ghcr.io/acme/app@sha256:{digests[0]}",
        f"data:image/png;base64,{png}",
        f'<img alt="chart" src="data:image/png;base64,{png}">',
        json.dumps({"image/png": png, "text/plain": "<Figure size 640x480 with 1 Axes>"}),
        "The tokenizer splits the text into tokens; each token costs a little. Set max_tokens=512.",
        "Refresh the token before it expires: the token is expired after an hour.",
        "token count: 1234, tokens per second: 45.2, prompt_tokens=880",
        "Pass the token as a header, never in the URL; see docs/auth/token-refresh.md.",
        "src/auth/token_store.py:42: def rotate_token(self) -> None:",
        "GitHub tokens start with ghp_ and Stripe keys with sk_live_; neither is shown here.",
        "the password is never printed; the password field is required",
        # Names about a secret, not holding one (WeeChat's relay protocol documents its handshake so).
        "(handshake) handshake password_hash_algo=plain:sha256:pbkdf2+sha256",
        json.dumps({"password_hash_algo": "pbkdf2+sha512", "password_hash_iterations": "100000", "totp": "on"}),
        "password_min_length = 12\ntoken_expiry: 3600",
        # Manuals describe passwords in sentences that go on past the word after "is" / "to"
        # (WeeChat's relay protocol: its answer was stored as "[REDACTED password] of the following").
        "Format of hashed password is one of the following, where hash is the hashed password",
        "the password to use for the relay; the password to access the server is in sec.conf",
        "Password is either plain text or a hash, the password is any string of 8 characters",
        "the password is case sensitive and the password was evaluated before use",
        "the PIN is 4 digits long and the password is 12 characters at least",
        "Refused file:///etc/passwd: scheme file (only http and https are fetched)",
        "mkdir -p build && docker run -p 8080:80 -u 1000:1000 nginx && ssh -p 2222 git@example.com",
        "version 1.24.3-rc.2+build.20250101, python 3.11.7, numpy 2.1.0",
    ]


NEAR_MISSES: list[str] = _near_misses()
