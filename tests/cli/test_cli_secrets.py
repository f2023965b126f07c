"""No database password and no API token in what the command line prints: errors, and
``tarry doctor``'s findings."""

from __future__ import annotations

import pytest

from .conftest import Project


@pytest.mark.parametrize(("database", "shown"), [
    ("host=db user=ada password=s3cret-pw", '"host=db user=ada password=***"'),
    ("mysql://ada:s3cret-pw@db/tarry", '"mysql://ada:***@db/tarry"'),
])
def test_a_refused_database_setting_is_printed_without_its_password(
        project: Project, monkeypatch: pytest.MonkeyPatch, database: str, shown: str) -> None:
    monkeypatch.setenv("TARRY_DATABASE", database)
    result = project.tarry("runs")
    assert result.exit_code == 1
    assert result.stderr == ("error: TARRY_DATABASE: expected a sqlite:///path or "
                             f"postgresql:// URL, got {shown}\n")


def test_an_unreachable_store_is_reported_without_its_password(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TARRY_DATABASE", "postgresql://ada@127.0.0.1:1/tarry?password=s3cret-pw"
                                         "&connect_timeout=1&pool_timeout=2")
    for result in (project.tarry("runs"), project.tarry("doctor")):
        assert result.exit_code == 1
        assert "s3cret-pw" not in result.stdout + result.stderr


def test_doctor_masks_the_password_of_a_refused_database_setting(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TARRY_DATABASE", "host=db password=s3cret-pw")
    result = project.tarry("doctor")
    assert result.exit_code == 1
    assert result.stdout == ('error: TARRY_DATABASE: expected a sqlite:///path or postgresql:// '
                             'URL, got "host=db password=***"\n')
