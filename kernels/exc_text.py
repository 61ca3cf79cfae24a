"""One line naming an exception, for the tuners' records of rejected candidates.

`str(exc).splitlines()[0]` raised IndexError for an exception with no message (a bare
`AssertionError()` from an `assert`, `RuntimeError()`), so one such candidate ended a whole tune
pass instead of being rejected.
"""

from __future__ import annotations


def first_line(exc: BaseException, limit: int = 200) -> str:
    """`TypeName: first line of the message` (at most `limit` characters of it), or the type
    name alone when the message is empty."""
    lines = str(exc).strip().splitlines()
    name = type(exc).__name__
    return f"{name}: {lines[0][:limit]}" if lines else name
