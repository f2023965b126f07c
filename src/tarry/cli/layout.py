"""How the help of ``tarry`` is laid out: metavars without Python types, whole sentences.

Typer's own layout shows each argument's Python type (``FLOW <str>``, ``PATH <list[Path]>``),
braces around required arguments in the usage line, and cuts each command's summary in the
command list with "...". These classes lay the help out as a command-line user expects.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperArgument, TyperCommand, TyperGroup

__all__ = ["PlainCommand", "PlainGroup"]


_WHOLE_SENTENCE = 1000
"""A short-help length no first sentence reaches, so the command list never ends in "..."."""


def _argument_name(argument: TyperArgument) -> str:
    """``FLOW``, ``PATH...``: an argument's metavar, and whether it repeats."""
    return argument.display_name_raw + ("" if argument.nargs == 1 else "...")


def _argument_usage(argument: TyperArgument) -> str:
    """``FLOW``, ``[PATH...]``: an argument in the usage line, in brackets when optional."""
    return _argument_name(argument) if argument.required else f"[{_argument_name(argument)}]"


class PlainCommand(TyperCommand):
    """A command whose help names its arguments by their metavars, without Python types."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """``[OPTIONS] FLOW`` rather than ``[OPTIONS] {FLOW}``."""
        return [self.options_metavar or "", *(
            _argument_usage(param) for param in self.get_params(ctx)
            if isinstance(param, TyperArgument))]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        """The arguments (metavar and help), then the options."""
        arguments = [(_argument_name(param), param.help or "")
                     for param in self.get_params(ctx) if isinstance(param, TyperArgument)]
        if arguments:
            with formatter.section("Arguments"):
                formatter.write_dl(arguments)
        options = [record for param in self.get_params(ctx)
                   if not isinstance(param, TyperArgument)
                   and (record := param.get_help_record(ctx)) is not None]
        if options:
            with formatter.section("Options"):
                formatter.write_dl(options)


class PlainGroup(TyperGroup):
    """A group that lists each command with the whole first sentence of its help."""

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """One row per command: its name and the first sentence of its help, never cut."""
        rows = [(name, command.get_short_help_str(limit=_WHOLE_SENTENCE))
                for name in self.list_commands(ctx)
                if (command := self.get_command(ctx, name)) is not None and not command.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
