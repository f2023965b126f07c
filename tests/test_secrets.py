"""Secrets masked wherever text leaves tarry: the shapes of database passwords, the values of
secret variables, and log records."""

from __future__ import annotations

import logging
import sys

import pytest

from tarry.secrets import (
    RedactingFilter,
    Redactor,
    database_password,
    environment_tokens,
    redact_database_url,
    secret_values,
)


@pytest.mark.parametrize(("text", "shown"), [
    ("postgresql://ada:s3cret@db.example:5432/tarry", "postgresql://ada:***@db.example:5432/tarry"),
    ("postgresql://ada:p%40ss@db/tarry?sslmode=require",
     "postgresql://ada:***@db/tarry?sslmode=require"),
    ("postgresql://ada@db/tarry?sslmode=require&password=s3cret&pool_size=2",
     "postgresql://ada@db/tarry?sslmode=require&password=***&pool_size=2"),
    ("host=db user=ada password=s3cret dbname=tarry",
     "host=db user=ada password=*** dbname=tarry"),
    ("host=db password = 's3 cr\\'et' dbname=tarry", "host=db password = *** dbname=tarry"),
    ("error: cannot reach postgres://ada:s3cret@db/tarry (timeout)",
     "error: cannot reach postgres://ada:***@db/tarry (timeout)"),
    ("postgresql://ada@db/tarry", "postgresql://ada@db/tarry"),
    ("sqlite:////srv/tarry.db", "sqlite:////srv/tarry.db"),
], ids=["userinfo", "escaped userinfo", "query parameter", "conninfo", "quoted conninfo",
        "inside a message", "no password", "sqlite"])
def test_a_database_password_is_masked_in_any_text(text: str, shown: str) -> None:
    assert redact_database_url(text) == shown


@pytest.mark.parametrize(("url", "password"), [
    ("postgresql://ada:p%40ss@db/tarry", "p@ss"),
    ("postgresql://ada@db/tarry?password=s3cret", "s3cret"),
    ("host=db password='s3 cr\\'et'", "s3 cr'et"),
    ("host=db password=s3cret dbname=tarry", "s3cret"),
    ("postgresql://ada@db/tarry", None),
])
def test_the_password_of_a_database_url(url: str, password: str | None) -> None:
    assert database_password(url) == password


def test_the_secret_values_of_a_deployment() -> None:
    environ = {"TARRY_API_TOKEN": "tok-single", "TARRY_API_TOKENS": "ops=tok-ops,bot=tok-bot",
               "SLACK_SIGNING_SECRET": "slack-signing", "UNRELATED": "plain"}
    assert secret_values(database="postgresql://ada:db-pass@db/tarry",
                         tokens=environment_tokens(environ), environ=environ,
                         secret_envs=["SLACK_SIGNING_SECRET", "NOT_SET"]) == (
        "tok-single", "tok-ops", "tok-bot", "db-pass", "slack-signing")


def test_a_redactor_masks_each_secret_value_and_database_passwords() -> None:
    redact = Redactor(("tok-single", "tok-single-and-more", "abc"))
    assert redact("sent tok-single-and-more and tok-single to postgresql://a:b1@h/d; abc") == (
        "sent *** and *** to postgresql://a:***@h/d; abc")  # 'abc' is too short to search


def test_a_redactor_from_the_environment_knows_the_tokens_and_the_database_password() -> None:
    redact = Redactor.from_environment({
        "TARRY_API_TOKEN": "tok-single", "TARRY_API_TOKENS": "ops=tok-ops",
        "TARRY_DATABASE": "host=db password=db-pass"})
    assert redact("tok-single tok-ops db-pass") == "*** *** ***"


def test_log_records_pass_through_the_filter_with_their_secrets_masked() -> None:
    record = logging.LogRecord("tarry", logging.ERROR, __file__, 1, "call with %s failed",
                               ("tok-single",), None)
    try:
        raise RuntimeError("token tok-single refused")
    except RuntimeError:
        record.exc_info = sys.exc_info()
    assert RedactingFilter(Redactor(("tok-single",))).filter(record)
    assert record.getMessage() == "call with *** failed"
    assert record.exc_text is not None
    assert "RuntimeError: token *** refused" in record.exc_text
    assert "tok-single" not in logging.Formatter().format(record)
