"""``[limits.pools]`` is read strictly: names and sizes checked, ``TARRY_POOLS`` wins."""

from __future__ import annotations

from pathlib import Path

import pytest

from tarry.config import load_settings
from tarry.errors import ConfigError


def _load(root: Path, text: str, **env: str) -> dict[str, int]:
    (root / "tarry.toml").write_text(text, encoding="utf-8")
    return dict(load_settings(root, env).limits.pools)


def test_pools_come_from_their_table_and_the_variable_wins(tmp_path: Path) -> None:
    text = "[limits.pools]\nvendor-api = 4\ndb = 2\n"
    assert _load(tmp_path, text) == {"vendor-api": 4, "db": 2}
    assert _load(tmp_path, text, TARRY_POOLS="vendor-api=8, mail=1") == {"vendor-api": 8,
                                                                         "mail": 1}
    assert _load(tmp_path, "") == {}


@pytest.mark.parametrize(("text", "env", "message"), [
    ("[limits.pools]\nvendor-api = 0\n", {},
     "[limits.pools] vendor-api: expected a positive integer, got 0 (an integer)"),
    ("[limits.pools]\nvendor-api = 2.5\n", {},
     "[limits.pools] vendor-api: expected a positive integer, got 2.5 (a float)"),
    ('[limits.pools]\n"Vendor API" = 2\n', {},
     '[limits.pools]: pool name "Vendor API" must match [a-z0-9][a-z0-9_.-]*'),
    ("[limits]\npools = 3\n", {},
     "[limits.pools]: expected a table of pool name = number of slots, got 3 (an integer)"),
    ("[limits.pool]\nx = 1\n", {}, "[limits] unknown key 'pool' (did you mean 'pools'?)"),
    ("", {"TARRY_POOLS": "vendor-api"},
     'TARRY_POOLS: expected name=slots, got "vendor-api"'),
    ("", {"TARRY_POOLS": "vendor-api=-1"},
     'TARRY_POOLS vendor-api: expected a positive integer, got "-1"'),
])
def test_a_bad_pool_is_refused_with_where_and_what(tmp_path: Path, text: str,
                                                   env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, text, **env)
    assert str(caught.value).removeprefix(f"{tmp_path / 'tarry.toml'}: ") == message
