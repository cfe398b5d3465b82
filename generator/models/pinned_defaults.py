"""A size as a transformers config class's defaults (`Defaults`), and what the pinned lines of
that class declare (`defaults_in`), compared value for value (`same_value`)."""

from __future__ import annotations

import ast
import contextlib
import textwrap
from dataclasses import dataclass

Value = int | float | bool | str | None


@dataclass(frozen=True)
class Defaults:
    """One size: the transformers config class whose defaults it is, and those defaults."""

    config_class: str  # "LlamaConfig"
    label: str  # the name a page prints
    fields: dict[str, Value]  # transformers' field name -> default value
    pinned: str  # the id of the pinned excerpt of the class's default lines (sources/lock.toml)


def defaults_in(source: str) -> dict[str, Value]:
    """The defaults a block of class-level lines declares (`name: type = value`), for values
    that are numbers, booleans, strings or None, or products of numbers (`4096 * 32`); in a
    method, `self.name = <such a value>` for a name no class line declares; and in a
    `__post_init__`, the literal dict rope_parameters gets when it is None, flattened to the
    `rope_<key>` fields rows write it as (rope_type, rope_factor, rope_beta_fast, …). Other lines are left out."""
    found: dict[str, Value] = {}
    tree = ast.parse(textwrap.dedent(source))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            if isinstance(target, ast.Name) and node.value is not None:
                try:
                    found[target.id] = _number(node.value)
                except ValueError:
                    continue
    for assign in ast.walk(tree):
        if (  # `self.limit = 7.0` in a method: `limit`, unless a class line declared it
            isinstance(assign, ast.Assign)
            and isinstance(assign.targets[0], ast.Attribute)
            and assign.targets[0].attr not in found
        ):
            with contextlib.suppress(ValueError):
                found[assign.targets[0].attr] = _number(assign.value)
        if (
            isinstance(assign, ast.Assign)
            and isinstance(assign.targets[0], ast.Attribute)
            and assign.targets[0].attr == "rope_parameters"
            and isinstance(assign.value, ast.Dict)
        ):
            for key, value in zip(assign.value.keys, assign.value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    name = key.value if key.value.startswith("rope_") else f"rope_{key.value}"
                    try:
                        found[name] = _number(value)
                    except ValueError:
                        continue
    return found


def _number(node: ast.expr) -> Value:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | bool | str | None):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        left, right = _number(node.left), _number(node.right)
        if isinstance(left, int | float) and isinstance(right, int | float):
            return left * right
    raise ValueError("not a plain number")


def same_value(value: Value, supported: Value) -> bool:
    """The same value of the same type (0 is not False, and nothing but None is None); an int
    and a float of the same value are the same number (`1e-6` and a pinned `1e-06`)."""
    if isinstance(value, bool) or isinstance(supported, bool):
        return type(value) is type(supported) and value == supported
    if isinstance(value, int | float) and isinstance(supported, int | float):
        return value == supported
    return type(value) is type(supported) and value == supported
