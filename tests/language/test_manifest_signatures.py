"""The ``signature:`` of an event manifest: how HTTP senders sign (SPEC 8.2)."""

from __future__ import annotations

from textwrap import dedent

import pytest

from tarry.errors import LoadError
from tarry.language.manifests import parse_manifests


def _manifest(body: str) -> str:
    return dedent("""
        events:
          forge.push:
            correlate_on: [repo]
        """) + body


def _problems(text: str) -> list[str]:
    with pytest.raises(LoadError) as caught:
        parse_manifests(text, "events.yaml")
    return [str(problem) for problem in caught.value.problems]


def test_a_secret_without_a_signature_is_signed_the_tarry_way() -> None:
    text = _manifest("    secret_env: FORGE_SECRET\n")
    manifest = parse_manifests(text, "events.yaml")["forge.push"]
    assert (manifest.secret_env, manifest.signature) == ("FORGE_SECRET", "tarry")


@pytest.mark.parametrize("scheme", ["tarry", "github", "slack"])
def test_each_scheme_is_accepted(scheme: str) -> None:
    text = _manifest(f"    secret_env: FORGE_SECRET\n    signature: {scheme}\n")
    assert parse_manifests(text, "events.yaml")["forge.push"].signature == scheme


def test_without_a_secret_nothing_is_signed() -> None:
    assert parse_manifests(_manifest(""), "events.yaml")["forge.push"].signature is None


def test_an_unknown_scheme_is_refused_with_a_suggestion() -> None:
    text = _manifest("    secret_env: FORGE_SECRET\n    signature: githbu\n")
    assert _problems(text) == ["events.yaml:6:16: 'signature' must be one of tarry, github, "
                               "slack, got 'githbu' (did you mean 'github'?)"]


def test_a_signature_without_a_secret_is_refused() -> None:
    assert _problems(_manifest("    signature: github\n")) == [
        "events.yaml:5:5: event type 'forge.push': 'signature' needs 'secret_env' (the "
        "environment variable holding the shared secret)"]
