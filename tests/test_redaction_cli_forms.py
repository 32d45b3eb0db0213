"""``echo_core.redaction`` on secrets given on a command line, which a tester found stored
in clear by capture, ingest, the hook recorder and the loom: ``--password=...``,
``--api-key ...``, ``--token ...``, mysql's glued ``-p...``, ``sshpass -p ...``,
``curl -u user:...``, an ``X-Api-Key:`` header, an ``Authorization:`` header without a
known scheme; and the look-alikes that must survive (a port after ``-p``,
``--token-file``, ``--password-stdin``, ``$VAR`` and ``<key>`` placeholders, metavars in
help text, prose). The hook recorder's copy of the rules gives the same text on each."""

from __future__ import annotations

import pytest

from echo_core.redaction import redact
from plugins.habitat import hook_record_redact

KEY = "abcdef1234567890XYZ"
PW = "Hunter2Secret99"

#: (text, what redaction makes of it, the rules that fired)
FORMS: list[tuple[str, str, tuple[str, ...]]] = [
    (f"deploy --password={PW}", "deploy --password=[REDACTED:option-secret]",
     ("option-secret",)),
    (f"deploy --password {PW} --env prod",
     "deploy --password [REDACTED:option-secret] --env prod", ("option-secret",)),
    (f"mysql -u root -p{PW} shop", "mysql -u root -p[REDACTED:mysql-password] shop",
     ("mysql-password",)),
    (f"tool --api-key={KEY}", "tool --api-key=[REDACTED:option-secret]", ("option-secret",)),
    (f"tool --api-key {KEY}", "tool --api-key [REDACTED:option-secret]", ("option-secret",)),
    (f"gh api --token {KEY} /user", "gh api --token [REDACTED:option-secret] /user",
     ("option-secret",)),
    ("vault write --secret 'S3cret!' x", "vault write --secret '[REDACTED:option-secret]' x",
     ("option-secret",)),
    (f"az login --client-secret {KEY}", "az login --client-secret [REDACTED:option-secret]",
     ("option-secret",)),
    (f"X-Api-Key: {KEY}", "X-Api-Key: [REDACTED:api-key-header]", ("api-key-header",)),
    (f'curl -H "X-Api-Key: {KEY}" https://api.example.com',
     'curl -H "X-Api-Key: [REDACTED:api-key-header]" https://api.example.com',
     ("api-key-header",)),
    (f"curl -H 'Authorization: Bearer {KEY}' https://x",
     "curl -H 'Authorization: Bearer [REDACTED:authorization]' https://x",
     ("authorization",)),
    ("curl -u admin:S3cretPassw0rd https://api.example.com",
     "curl -u admin:[REDACTED:curl-user-password] https://api.example.com",
     ("curl-user-password",)),
    ("curl --user admin:pw https://x", "curl --user admin:[REDACTED:curl-user-password] https://x",
     ("curl-user-password",)),
    ("sshpass -p 'S3cret!' ssh host", "sshpass -p '[REDACTED:sshpass-password]' ssh host",
     ("sshpass-password",)),
    # more of the same shapes
    ('mysqldump -uroot -p"Hunter2 Secret" db', 'mysqldump -uroot -p"[REDACTED:mysql-password]" db',
     ("mysql-password",)),
    ("docker exec db mysql -uroot -proot", "docker exec db mysql -uroot -p[REDACTED:mysql-password]",
     ("mysql-password",)),
    ("/usr/bin/mariadb -h db -P 3306 -pS3cret", "/usr/bin/mariadb -h db -P 3306 -p[REDACTED:mysql-password]",
     ("mysql-password",)),
    ("curl -sS \\\n  -u admin:S3cretPassw0rd \\\n  https://x",
     "curl -sS \\\n  -u admin:[REDACTED:curl-user-password] \\\n  https://x", ("curl-user-password",)),
    ('curl "https://x/?a=1&b=2" -u admin:S3cret', 'curl "https://x/?a=1&b=2" -u admin:[REDACTED:curl-user-password]',
     ("curl-user-password",)),
    ("sshpass -v -pS3cret ssh host", "sshpass -v -p[REDACTED:sshpass-password] ssh host",
     ("sshpass-password",)),
    ("terraform apply --db-password=S3cret99", "terraform apply --db-password=[REDACTED:option-secret]",
     ("option-secret",)),
    ("terraform apply --db_password=hunter", "terraform apply --db_password=[REDACTED:option-secret]",
     ("option-secret",)),
    (f"app -token={KEY}", "app -token=[REDACTED:option-secret]", ("option-secret",)),
    ('app --password "correct horse battery staple"', 'app --password "[REDACTED:option-secret]"',
     ("option-secret",)),
    ("kubeadm join 10.0.0.1:6443 --token abcdef.0123456789abcdef",
     "kubeadm join 10.0.0.1:6443 --token [REDACTED:option-secret]", ("option-secret",)),
    (f'headers = {{"X-Api-Key": "{KEY}"}}', 'headers = {"X-Api-Key": "[REDACTED:api-key-header]"}',
     ("api-key-header",)),
    ("Ocp-Apim-Subscription-Key: 0123456789abcdef0123456789abcdef",
     "Ocp-Apim-Subscription-Key: [REDACTED:api-key-header]", ("api-key-header",)),
    (f"api-key: {KEY}", "api-key: [REDACTED:api-key-header]", ("api-key-header",)),
    (f"Authorization: ApiKey {KEY}", "Authorization: ApiKey [REDACTED:authorization]",
     ("authorization",)),
    (f"Authorization: {KEY}", "Authorization: [REDACTED:authorization]", ("authorization",)),
    ("x --token ghp_" + "1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
     "x --token [REDACTED:github-token]", ("github-token",)),
]

LOOKALIKES: list[str] = [
    "docker login --password-stdin < pw.txt",
    "gh auth login --with-token < token.txt",
    "app --token-file ~/.config/token",
    "app --token-file=/run/secrets/token",
    "ssh -p 2222 host",
    "docker run -p 8080:80 nginx",
    "jupyter notebook -p 8888",
    "mkdir -p /tmp/a/b && cp -pr src dst",
    "git add -p",
    "mysql -P 3306 -h db",
    "mysql -u root -p shop",
    "mysql -u root -p$MYSQL_PWD shop",
    'mysql -u root -p"$MYSQL_PWD" shop',
    "mysql.server start",
    "sshpass -f ~/.pw ssh -p 2222 host",
    "sshpass -e ssh host",
    'sshpass -p "$SSHPASS" ssh host',
    "deploy --api-key $API_KEY",
    "deploy --api-key ${API_KEY}",
    "deploy --api-key <key>",
    "deploy --api-key=<key>",
    "deploy --api-key=API_KEY",
    "deploy --token TOKEN",
    "deploy --password PASSWORD",
    "deploy --password --user admin",
    "deploy --token=$(cat ~/.token)",
    'deploy --password "$DB_PASSWORD"',
    "deploy --token ${{ secrets.TOKEN }}",
    "curl -u admin: https://x",
    "curl -u admin https://x",
    'curl -u "$USER:$PASS" https://x',
    "docker run -u app:app image",
    "docker run --user 1000:1000 image",
    "curl https://x && docker run -u app:app img",
    "use --token to pass it",
    "pass --api-key and --secret when prompted",
    "the --password flag is required",
    "psql --no-password mydb2",
    "ansible-playbook --ask-become-pass site.yml",
    "  --token string   API token (default none)",
    "-p, --password=PASSWORD",
    "--max-tokens 1000 --max-token 4096 --token-limit 50",
    "--secret-name my-secret",
    "docker buildx build --secret id=npmrc,src=$HOME/.npmrc .",
    "gcloud secrets create my-secret --data-file=-",
    "pip install --user requests",
    "X-Idempotency-Key: 123e4567-e89b-12d3-a456-426614174000",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    "X-Api-Key: $API_KEY",
    '"x-api-key": "${API_KEY}"',
    "X-Api-Key: YOUR_API_KEY",
    "X-Api-Key: your-key-here",
    "name: X-API-Key",
    "Authorization: required",
    "Authorization: Bearer $TOKEN",
    "sort -u file | uniq",
]


@pytest.mark.parametrize(("text", "expected", "found"), FORMS)
def test_a_command_line_secret_becomes_its_marker(text: str, expected: str,
                                                  found: tuple[str, ...]) -> None:
    result = redact(text)
    assert result.text == expected
    assert result.found == found
    assert redact(result.text).text == result.text  # idempotent


@pytest.mark.parametrize("text", LOOKALIKES)
def test_a_command_line_look_alike_survives_byte_for_byte(text: str) -> None:
    result = redact(text)
    assert result.text == text and result.found == ()


@pytest.mark.parametrize("text", [t for t, _, _ in FORMS] + LOOKALIKES)
def test_the_recorders_rules_give_the_cores_text(text: str) -> None:
    assert hook_record_redact.redact_text(text) == redact(text).text


def test_secrets_and_look_alikes_on_one_text() -> None:
    text = "\n".join(line for pair in zip(LOOKALIKES, (t for t, _, _ in FORMS), strict=False)
                     for line in pair)
    result = redact(text)
    for _, expected, _ in FORMS[:len(LOOKALIKES)]:
        assert expected in result.text
    for look in LOOKALIKES[:len(FORMS)]:
        assert look in result.text
    assert hook_record_redact.redact_text(text) == result.text
