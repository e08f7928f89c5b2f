"""The issue's probe: 14 fake secrets, each in the sentence or command it was found in.

Every value is made up for the tests (no real credential has these shapes' checksums or owners).
`SECRETS` are the values that must never be stored; `PROBE` the texts that carry them.
"""

from __future__ import annotations

GHP = "ghp_Zq7Rk2Lm9Xw4Tn8Pv3Hs6Jd1Fb5Gc0Ya2Eu7"
GITHUB_PAT = "github_pat_11AQZ7RKM0aB3cD4eF5gH6_iJ7kL8mN9oP0qR1sT2uV3wX4yZ5aB6cD7eF8gH9iJ0kL1mN2oP3qR4s"
AWS_KEY_ID = "AKIAQX7ZP3LMN4RT2VWY"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8fake4Kq"
SLACK = "xoxb-918273645012-5647382910123-QwErTyUiOpAsDfGhJkLzXcVb"
OPENAI = "sk-proj-Xy7Qw3Er9Ty2Ui8Op4As1Df6Gh0Jk5Lz"
ANTHROPIC = "sk-ant-api03-Zx9Cv8Bn7Mq6Wd5Ef4Rg3Th2Yj1Uk0Il9Op8As7Df6Gh5Jk4"
URL_TOKEN = "8f3a9c2e7b1d4f6a0e5c9b8d7a6f5e4d3c2b1a09"
PEM_BODY = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0"
MYSQL = "S3cretMysqlPw"
CURL = "CurlPa55word"
DOCKER = "D0ckerHubPass"
PROSE = "hunter2"
KEYED = "k3yNamedV4lue99"

SECRETS = [GHP, GITHUB_PAT, AWS_KEY_ID, AWS_SECRET, SLACK, OPENAI, ANTHROPIC, URL_TOKEN, PEM_BODY, MYSQL, CURL,
           DOCKER, PROSE, KEYED]

PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\nQWxhZGRpbjpvcGVuIHNlc2FtZQ==\n-----END RSA PRIVATE KEY-----"

PROBE: dict[str, str] = {
    "ghp_": f"use this token {GHP} for the API calls",
    "github_pat_": f"the CI reads {GITHUB_PAT}",
    "AKIA + AWS secret": f"aws keys: {AWS_KEY_ID} {AWS_SECRET}",
    "xoxb-": f"post to Slack with {SLACK} please",
    "sk-": f"OpenAI key {OPENAI}",
    "sk-ant-": f"try {ANTHROPIC} for Claude",
    "token@ URL userinfo": f"git clone https://{URL_TOKEN}@github.com/acme/private.git",
    "PEM block": f"deploy key:\n{PEM}\nthanks",
    "mysql -pX": f"mysql -h db.internal -uroot -p{MYSQL} shop < dump.sql",
    "curl -u user:X": f"curl -u admin:{CURL} https://api.example.com/v1/items",
    "docker login -p X": f"docker login -u bob -p {DOCKER} registry.example.com",
    "prose password": f"my password is {PROSE}, log in as bob",
    "key-named": f"export SERVICE_API_TOKEN={KEYED}",
    "URL password": f"psql postgres://app:{KEYED}x@db:5432/shop",
}

WALKTHROUGH_PROMPTS = [
    f"Set up the deploy. My GitHub token is {GHP} and the server's AWS pair is {AWS_KEY_ID} / {AWS_SECRET}.",
    f"The staging db: mysql -uapp -p{MYSQL} staging. And my password is {PROSE} for the admin page.",
    f"Push the image: docker login -u ci -p {DOCKER} ghcr.io then notify {SLACK}.",
]
