"""How much a value a page's Jinja makes holds, and the refusal of one past the limits: the
measures pages/sandbox.py checks every value with (`held`, `made_length`, `check_size`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, ItemsView, Iterable, KeysView, Mapping, Sized, ValuesView
from typing import Any

from jinja2.sandbox import SecurityError

LONGEST_TEXT = 1 << 20  # characters (or items) a page's own arithmetic may make: 1 MiB
LARGEST_POWER = 4096  # bits of an integer a page may compute
HOLDERS = (list, tuple, set, frozenset, range, KeysView, ValuesView, ItemsView)  # held() opens


def owner_and_name(obj: Any) -> tuple[Any, str]:
    """The object a method is bound to (None for a function) and the method's name."""
    return getattr(obj, "__self__", None), getattr(obj, "__name__", "")


def is_join(obj: Any) -> bool:
    owner, name = owner_and_name(obj)
    return isinstance(owner, str | bytes) and name == "join"


def listed(items: Iterable[Any]) -> list[Any]:
    """`items` as a list, refused past LONGEST_TEXT of them."""
    listed = list(itertools.islice(items, LONGEST_TEXT + 1))
    if len(listed) > LONGEST_TEXT:
        raise SecurityError(f"a page joins more than {LONGEST_TEXT:,} items")
    return listed


def made_length(method: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """How long the text a str or bytes method (or int.to_bytes) will make, from its arguments,
    for the methods an argument sizes (MADE_LENGTHS); 0 for any other call, or when the
    arguments do not fit (the method then refuses them itself)."""
    owner, name = owner_and_name(method)
    if isinstance(owner, int) and name == "to_bytes":
        return _int_or_zero(args[0] if args else kwargs.get("length", 1))
    sizing = MADE_LENGTHS.get(name) if isinstance(owner, str | bytes) else None
    try:
        return sizing(owner, *args, **kwargs) if sizing else 0
    except (TypeError, ValueError):
        return 0


def _padded(text: str | bytes, width: int, *fill: Any) -> int:
    """ljust, rjust, center, zfill."""
    return max(len(text), _int_or_zero(width))


def _tabs_expanded(text: str | bytes, tabsize: int = 8) -> int:
    return len(text) * max(1, _int_or_zero(tabsize))


def _replaced(text: Any, old: Sized, new: Sized, count: int = -1) -> int:
    times = text.count(old) if len(old) else len(text) + 1
    if _int_or_zero(count) >= 0:
        times = min(times, count)
    return len(text) + times * (len(new) - len(old))


def _joined(separator: str | bytes, items: list[Sized]) -> int:
    return sum(map(len, items)) + len(separator) * max(len(items) - 1, 0)


def _translated(text: str | bytes, table: Any, *delete: Any) -> int:
    """str.translate maps each character to a text of any length (a dict or a list)."""
    values = table.values() if isinstance(table, Mapping) else table
    if not isinstance(values, list | tuple | ValuesView):
        return len(text)  # bytes.translate: a byte for a byte
    longest = max((len(v) for v in values if isinstance(v, str | bytes)), default=1)
    return len(text) * max(1, longest)


MADE_LENGTHS: dict[str, Callable[..., int]] = {
    "ljust": _padded,
    "rjust": _padded,
    "center": _padded,
    "zfill": _padded,
    "expandtabs": _tabs_expanded,
    "replace": _replaced,
    "join": _joined,
    "translate": _translated,
}


def _int_or_zero(value: Any) -> int:
    return value if isinstance(value, int) else 0


def held(value: Any, limit: int = LONGEST_TEXT) -> int:
    """How much `value` holds, as its text would: the characters of its texts and integers and
    the items of its lists, tuples, sets and dicts, an item counted wherever it appears (once
    per reference: `[s] * 10**6` holds a million copies of s, as its text or any sum of it
    would). The count stops soon after it passes `limit`: every step adds at least one, so it
    takes at most about `limit` steps however a value repeats itself (no recursion: a list
    nested 100,000 deep is fine)."""
    total, todo = 0, [value]
    while todo and total <= limit:
        item = todo.pop()
        if isinstance(item, str | bytes):
            total += len(item)
        elif isinstance(item, int):
            total += 1 + item.bit_length() * 3 // 10  # about its digits
        elif isinstance(item, dict):
            total += len(item)
            if total <= limit:
                todo += item.keys()
                todo += item.values()
        elif isinstance(item, HOLDERS):
            total += len(item)
            if total <= limit:
                todo += item
        else:
            total += 1
    return total


def bounded(value: Any) -> Any:
    """`value`, after `check_size`: a SecurityError past LONGEST_TEXT or LARGEST_POWER."""
    check_size(value)
    return value


def bits(value: Any) -> int:
    return value.bit_length() if isinstance(value, int) else 0


def check_size(*values: Any) -> None:
    """A SecurityError when the values together hold more than LONGEST_TEXT (see `held`), or an
    integer passes LARGEST_POWER bits."""
    if sum(held(value) for value in values) > LONGEST_TEXT:
        raise SecurityError(
            f"a text or list passes {LONGEST_TEXT:,} characters or items (its copies counted)"
        )
    if any(bits(v) > LARGEST_POWER for v in values):
        raise SecurityError(f"an integer passes {LARGEST_POWER:,} bits")


def bits_of_power(base: Any, exponent: Any) -> int:
    """About how many bits base ** exponent has (0 when it is not a positive integer power)."""
    if not (isinstance(base, int) and isinstance(exponent, int) and exponent > 0):
        return 0
    return max(1, abs(base).bit_length()) * exponent


def length_of_product(left: Any, right: Any) -> int:
    """What a text or list repeated by an integer holds (see `held`; 0 for any other product)."""
    for sized, times in ((left, right), (right, left)):
        if isinstance(sized, str | bytes | list | tuple) and isinstance(times, int):
            return held(sized) * times
    return 0
