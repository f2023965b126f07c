"""A retention period, as ``[retention]``, its variables and ``tarry purge --older-than`` read
it: any value is a period of at least a day or a ConfigError naming where it came from."""

from __future__ import annotations

from datetime import timedelta

from fuzz_support import fuzz, outcome
from hypothesis import example, given
from hypothesis import strategies as st

from tarry.config import RETENTION_FLOOR, retention_duration
from tarry.errors import ConfigError

PERIODS = st.one_of(
    st.text(max_size=40),
    st.from_regex(r"\A-?[0-9]{0,30}(ms|s|m|h|d|w|mo|y)?([0-9]{1,5}[smhdw])?\Z"),
    st.from_regex(r"\AP(T?[0-9]{1,20}[DHMSW]){0,3}\Z"),
    st.integers(), st.floats(), st.booleans(), st.none(), st.lists(st.text(max_size=3)),
)


@fuzz(300)
@given(value=PERIODS)
@example(value="1d")
@example(value="23h59m59s999ms")
@example(value="9" * 400 + "d")
@example(value="P1D")
def test_any_period_is_at_least_a_day_or_a_config_error(value: object) -> None:
    read = outcome(lambda: retention_duration(value, "TARRY_RETENTION_RUNS"))
    if isinstance(read, Exception):
        assert isinstance(read, ConfigError), repr(read)
        assert str(read).startswith("TARRY_RETENTION_RUNS: ")
    else:
        assert isinstance(read, timedelta)
        assert read >= RETENTION_FLOOR
