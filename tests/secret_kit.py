"""The redaction table (SPEC §2.1): secret shapes that must never reach the vault and
look-alikes that must survive untouched. Every value is fake; several are built from
pieces so that no scanner mistakes this file for a leak.

Not a test module; imported by ``test_redaction*.py`` and by the mining and ingest tests
(each runs a few rows through its own path).
"""

from __future__ import annotations

import attrs


@attrs.frozen
class SecretRow:
    """``text`` holds ``secret``; redaction must leave ``[REDACTED:<rule>]`` and keep
    ``kept`` (the name, user or host around it)."""

    rule: str
    text: str
    secret: str
    kept: tuple[str, ...] = ()

    @property
    def marker(self) -> str:
        return f"[REDACTED:{self.rule}]"


def _row(rule: str, template: str, secret: str, *kept: str) -> SecretRow:
    return SecretRow(rule, template.format(s=secret), secret, kept)


_PEM_BODY = ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n"
             "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu\n")

SECRETS: tuple[SecretRow, ...] = (
    _row("openai-key", "export OPENAI_API_KEY={s}",
         "sk-" + "proj-Xy7aB3cD9eF1gH2iJ4kL5mN6oP8qR0sT_uVwXyZ-12ab", "OPENAI_API_KEY"),
    _row("openai-key", "the key is {s} ok", "sk-" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4"),
    _row("anthropic-key", "ANTHROPIC_API_KEY={s}",
         "sk-" + "ant-api03-Zq8xW7vU6tS5rQ4pO3nM2lK1jI0hG9fE8dC7bA6_zyXW-vuTS", "ANTHROPIC_API_KEY"),
    _row("aws-access-key-id", "aws id {s} in us-east-1", "AKIA" + "IOSFODNN7EXAMPLE", "us-east-1"),
    _row("aws-secret-key", "aws_secret_access_key = {s}",
         "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY", "aws_secret_access_key"),
    _row("github-token", "git clone with {s}", "ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R"),
    _row("github-token", "GH={s}", "github_pat_" + "11ABCDEFG0abcdefghijkl_MNOPQRSTUVWXYZ0123456789abcdef"),
    _row("github-token", "server token {s}.", "ghs_" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0PpOoNn"),
    _row("gitlab-token", "CI uses {s}", "glpat-" + "xY3zAbCdEf12GhIjKlMn"),
    _row("slack-token", "bot {s} posts", "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
    _row("slack-webhook", "hook: {s}",
         "https://hooks.slack.com/services/" + "T0ABCDEF1/B0ABCDEF2/aBcDeFgHiJkLmNoPqRsTuVwX"),
    _row("stripe-key", "billing {s}", "sk_" + "live_51HxYzAbCdEfGhIjKlMnOpQr"),
    _row("stripe-key", "restricted {s}", "rk_" + "live_51HxYzAbCdEfGhIjKlMnOpQr"),
    _row("google-api-key", "maps key {s} here", "AIza" + "SyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"),
    _row("huggingface-token", "HF login {s}", "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
    _row("npm-token", "//registry.npmjs.org/:_authToken={s}",
         "npm_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "registry.npmjs.org"),
    _row("sendgrid-key", "mail {s}",
         "SG." + "aBcDeFgHiJkLmNoPqRsTuV.wXyZ0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ012"),
    _row("twilio-key", "twilio {s}", "SK" + "0123456789abcdef0123456789abcdef"),
    _row("jwt", "cookie session={s}",
         "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"),
    _row("authorization", "curl -H 'Authorization: Bearer {s}' https://api.example.com",
         "0a1b2c3d4e5f.ZZtop-9", "Authorization: Bearer", "https://api.example.com"),
    _row("authorization", "Authorization: Basic {s}", "dXNlcjpodW50ZXIy", "Authorization: Basic"),
    _row("bearer-token", "send it as bearer {s} then", "tok3n-v4lue-with-digits-99", "bearer"),
    _row("url-password", "DATABASE_URL=postgres://app:{s}@db.internal:5432/prod",
         "s3cr3t-Pa55", "postgres://app:", "@db.internal:5432/prod"),
    _row("url-password", "mirror https://deploy:{s}@git.example.org/repo.git",
         "hunter2hunter2", "https://deploy:", "@git.example.org"),
    _row("env-secret", "DB_PASSWORD={s}", "correct-horse-battery", "DB_PASSWORD="),
    _row("env-secret", "SESSION_SECRET: {s}", "kj3h4kj5h6", "SESSION_SECRET:"),
    _row("env-secret", '{{"client_secret": "{s}"}}', "abcDEF123ghi", '"client_secret": "'),
    _row("env-secret", "password: {s}", "hunter2", "password:"),
    _row("env-secret", "SIGNING_KEY={s}", "a8f5f167f44f4964e6c998dee827110c", "SIGNING_KEY="),
    _row("option-secret", "deploy --password={s} --env prod", "Hunter2" + "Secret99",
         "deploy --password=", "--env prod"),
    _row("option-secret", "tool --api-key {s}", "abcdef1234" + "567890XYZ", "tool --api-key "),
    _row("api-key-header", 'curl -H "X-Api-Key: {s}" https://api.example.com',
         "abcdef1234" + "567890XYZ", '-H "X-Api-Key: ', "https://api.example.com"),
    _row("curl-user-password", "curl -u admin:{s} https://api.example.com",
         "S3cret" + "Passw0rd", "curl -u admin:", "https://api.example.com"),
    _row("mysql-password", "mysql -u root -p{s} shop", "Hunter2" + "Secret99",
         "mysql -u root -p", " shop"),
    _row("sshpass-password", "sshpass -p '{s}' ssh deploy@host", "S3cret!" + "9",
         "sshpass -p '", "' ssh deploy@host"),
    _row("pem-private-key", "key:\n{s}\nafter",
         "-----BEGIN RSA PRIVATE KEY-----\n" + _PEM_BODY + "-----END RSA PRIVATE KEY-----",
         "key:", "after"),
    _row("pem-private-key", "truncated:\n{s}",
         "-----BEGIN OPENSSH PRIVATE KEY-----\n" + _PEM_BODY, "truncated:"),
)

#: Text that looks like a secret to a careless rule and must come out byte for byte.
LOOKALIKES: tuple[str, ...] = (
    "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
    "short sha 3f78685 and tag v1.2.3",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "md5 d41d8cd98f00b204e9800998ecf8427e",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "base64 of hello world is aGVsbG8gd29ybGQ= in prose",
    "a quick sketch of the skill tree",
    "the task-ant colony and the desk-ant",
    "we use sk-learn (scikit-learn) for the model",
    "sk-this-is-not-a-key-just-a-hyphenated-phrase",
    "PORT=8080",
    "LOG_LEVEL=debug",
    "max_tokens=1000 and TOKEN_LIMIT=4096",
    "SORT_KEY=created_at and PRIMARY_KEY=id",
    "API_KEY=${OPENAI_API_KEY}",
    "PASSWORD=<your password here>",
    "DEBUG=true, WORKERS=4",
    "see https://example.com:8080/path?q=1#frag",
    "ssh git@github.com:owner/repo.git",
    "mailto user@example.com",
    "http://user@host.example.com/ no password",
    "the bearer of bad news",
    "Authorization header missing",
    "token: is required",
    "monkey=banana",
    "AKIA is a prefix, AKIA123 is too short",
    "ghp_short and xoxb-nope",
    "hf_hub_download(repo_id='x')",
    "npm_config_cache=/tmp/npm",
    "eyJ alone is not a token",
    "-----BEGIN PUBLIC KEY----- is public",
    "-----BEGIN CERTIFICATE-----",
    "time 12:34:56 and ratio 3:2",
    "AIzaShort",
    "SG.notakey",
    "password_hash=abc123def456",
    "<privateer> ships and private notes",
    "ssh -p 2222 host and docker run -p 8080:80 nginx",
    "docker login --password-stdin < pw.txt",
    "app --token-file ~/.config/token",
    "deploy --api-key $API_KEY --token <token>",
    "docker run -u app:app image",
    "use --token to pass it",
)
