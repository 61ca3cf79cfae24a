"""Argument parsing shared by the CLI's commands: argparse with `key=value` arguments beside
--flags, -h/--help on every command, and bad input as one ValueError line (exit status 2).

    parser = Parser("gaps", "own kernels vs the fastest vendor row per point")
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_key("worst", 15, "points listed per GPU", type=int)
    ns = parser.parse_args(args)        # `worst=5` and `--worst 5` both work

A command that also takes Hydra overrides (run, main, ceilings) calls `add_overrides()`: then a
`key=value` whose key is not one of the parser's own is passed through as an override
(ns.overrides), and `set_help_tail` adds help computed from them (the composed config).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NoReturn


class HelpShown(Exception):
    """-h/--help printed the command's help; the command ends with status 0."""


class BadInput(Exception):
    """Bad input found by a command: one line `<key>: <what>; allowed: <values>` (status 2)."""


class BadValue(argparse.ArgumentTypeError):
    """Raised by a key's type function with the whole line (`<key>: <what>; allowed: ...`),
    which the parser passes on as it is (argparse would write `invalid <type> value`)."""


def show_value(value: Any) -> str:
    """A default as it would be typed on the command line (YAML spelling: null, true, [a,b])."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list | tuple):
        return "[" + ",".join(show_value(v) for v in value) + "]"
    return str(value)


def true_or_false(key: str) -> Callable[[str], bool]:
    """The type function of a boolean key: `true` or `false`, anything else one BadValue line."""

    def parse(text: str) -> bool:
        if text.lower() not in ("true", "false"):
            raise BadValue(f"{key}: '{text}'; allowed: true, false")
        return text.lower() == "true"

    return parse


def key_lines(rows: Iterable[tuple[str, Any, str]], indent: int = 2, width: int = 30) -> str:
    """`key=default  help` lines, aligned as argparse aligns its options."""
    out = []
    for key, default, text in rows:
        left = " " * indent + f"{key}={show_value(default)}"
        if not text:
            out.append(left)
        elif len(left) + 2 <= width:
            out.append(f"{left:<{width}}{text}")
        else:
            out += [left, " " * width + text]
    return "\n".join(out)


def _is_path(arg: str) -> bool:
    try:
        return Path(arg).exists()
    except OSError:  # a name too long for the filesystem is no path
        return False


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Shows key arguments as `key=default` (options keep argparse's own form)."""

    def __init__(self, prog: str):
        super().__init__(prog, max_help_position=30, width=100)

    def _format_action_invocation(self, action: argparse.Action) -> str:
        if getattr(action, "is_key", False):
            return f"{action.dest}={show_value(action.default)}"
        return super()._format_action_invocation(action)


class Parser(argparse.ArgumentParser):
    """argparse for `harness <command>`: one-line ValueErrors instead of usage-and-exit 2, and
    -h/--help that raises HelpShown (the CLI exits 0) after printing."""

    def __init__(self, command: str, description: str, epilog: str | None = None):
        super().__init__(
            prog=f"harness {command}",
            description=description,
            epilog=epilog,
            formatter_class=_Formatter,
            exit_on_error=False,
        )
        self.command = command
        self._keys: dict[str, argparse.Action] = {}
        self._key_group: argparse._ArgumentGroup | None = None
        self._overrides: list[str] | None = None  # a list once add_overrides is called
        self._help_tail: Callable[[list[str]], str] | None = None

    def add_key(
        self, key: str, default: Any, help: str, type: Callable[[str], Any] = str
    ) -> argparse.Action:
        """A `key=value` argument (`--key value` also works); its help shows the default."""
        if self._key_group is None:
            self._key_group = self.add_argument_group("keys (key=value; shown with the default)")
        action = self._key_group.add_argument(
            f"--{key.replace('_', '-')}", dest=key, default=default, type=type, help=help
        )
        # A mark the help formatter reads; argparse.Action declares no such attribute.
        action.is_key = True  # type: ignore[attr-defined]
        action.metavar = key.upper()
        self._keys[key] = action
        return action

    def add_overrides(self, help: str) -> None:
        """Pass every other `key=value` through, in order, as Hydra overrides (ns.overrides)."""
        self._overrides = []
        self.add_argument("overrides", nargs="*", metavar="key=value", help=help)

    def set_help_tail(self, tail: Callable[[list[str]], str]) -> None:
        """Text appended to the help, computed from the overrides given beside -h only when
        help is asked for (so `harness run sweep=x -h` shows the values a run of x uses)."""
        self._help_tail = tail

    def format_usage(self) -> str:
        return self._keyed(super().format_usage())

    def format_help(self) -> str:
        text = self._keyed(super().format_help())
        tail = self._help_tail(self._overrides or []) if self._help_tail else ""
        return text + (f"\n{tail}\n" if tail else "")

    def usage_line(self) -> str:
        return " ".join(self.format_usage().split()).removeprefix("usage: ")

    def _keyed(self, text: str) -> str:
        """Usage shows `[key=KEY]` where argparse would write `[--key KEY]`."""
        for key, action in self._keys.items():
            text = text.replace(
                f"{action.option_strings[0]} {action.metavar}", f"{key}={key.upper()}"
            )
        return text

    def error(self, message: str) -> NoReturn:
        raise ValueError(f"{self.command}: {message}; allowed: {self.usage_line()}")

    def exit(self, status: int = 0, message: str | None = None):
        if status == 0:  # argparse's help action: help is printed
            raise HelpShown
        self.error((message or f"exit status {status}").strip())

    # [override]: argparse's parse_args is overloaded on `namespace`; this one returns a Namespace.
    def parse_args(self, args=None, namespace=None) -> argparse.Namespace:  # type: ignore[override]
        try:  # intermixed: overrides and positionals may sit either side of --flags
            return super().parse_intermixed_args(self._as_options(list(args or [])), namespace)
        except argparse.ArgumentError as e:  # exit_on_error=False raises these for bad values
            if isinstance(e.__context__, BadValue):
                raise ValueError(str(e.__context__)) from None
            key = next(
                (k for k, a in self._keys.items() if e.argument_name in a.option_strings), None
            )
            if key is None:
                self.error(str(e))
            kind = getattr(self._keys[key].type, "__name__", "value")
            raise ValueError(f"{key}: {e.message}; allowed: {key}=<{kind}>") from None

    def _keys_only(self) -> bool:
        """Whether every argument is a key or an option (no positionals, no overrides)."""
        return self._overrides is None and not any(not a.option_strings for a in self._actions)

    def _as_options(self, args: list[str]) -> list[str]:
        """Rewrite the parser's own `key=value` tokens as `--key value`; an unknown key is an
        error unless the command takes overrides (then it is one). An existing path with '='
        in its name stays a path. A command of keys alone names the whole unknown argument."""
        out = []
        for a in args:
            key, eq, value = a.partition("=")
            if not eq or a.startswith("-") or _is_path(a):
                out.append(a)
            elif key in self._keys:
                out += [self._keys[key].option_strings[0], value]
            elif self._overrides is not None:
                self._overrides.append(a)
                out.append(a)
            else:
                allowed = ", ".join(f"{k}=" for k in self._keys) or self.usage_line()
                what = f"argument '{a}'" if self._keys_only() else f"key '{key}'"
                raise ValueError(f"{self.command}: unknown {what}; allowed: {allowed}")
        return out
