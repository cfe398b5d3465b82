"""The Llama family's sizes: Llama 2 7B and Mistral 7B v0.1, as transformers' config defaults.

`LlamaConfig()` describes Llama 2 7B and `MistralConfig()` Mistral 7B v0.1. DEFAULTS keeps each
class's default values under transformers' own field names, one small table, so a later step can
read the same numbers from the pinned configuration files and compare; `from_transformers` turns
a row into a ModelConfig. rope_theta is not a line of either config class: both take
RotaryEmbeddingConfigMixin.default_theta (modeling_rope_utils.py) when rope_parameters is None.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from math import isfinite

from generator.errors import InputError
from generator.models.config import ModelConfig
from generator.models.llama.names import NAMES

Value = int | float | bool | None


@dataclass(frozen=True)
class Defaults:
    """One size: the transformers config class whose defaults it is, and those defaults."""

    config_class: str  # "LlamaConfig"
    label: str  # the name a page prints
    fields: dict[str, Value]  # transformers' field name -> default value
    pinned: str  # the id of the pinned excerpt of the class's default lines (sources/lock.toml)


DEFAULTS: dict[str, Defaults] = {
    "llama-2-7b": Defaults(
        "LlamaConfig",
        "Llama 2 7B",
        pinned="llama.config-defaults",
        fields={
            "vocab_size": 32000,
            "hidden_size": 4096,
            "intermediate_size": 11008,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": None,  # None: num_attention_heads (multi-head attention)
            "max_position_embeddings": 2048,
            "rms_norm_eps": 1e-6,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "attention_bias": False,
            "mlp_bias": False,
            "sliding_window": None,  # LlamaConfig has none: every earlier position
        },
    ),
    "mistral-7b-v0.1": Defaults(
        "MistralConfig",
        "Mistral 7B v0.1",
        pinned="mistral.config-defaults",
        fields={
            "vocab_size": 32000,
            "hidden_size": 4096,
            "intermediate_size": 14336,
            "num_hidden_layers": 32,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "max_position_embeddings": 4096 * 32,
            "rms_norm_eps": 1e-6,
            "rope_theta": 10000.0,
            "tie_word_embeddings": False,
            "attention_bias": False,  # MistralConfig has no such field: its projections have none
            "mlp_bias": False,
            "sliding_window": 4096,
        },
    ),
}


SIZES_FILE = "generator/models/llama/sizes.py"  # where DEFAULTS is written, as errors name it


def from_transformers(name: str, defaults: Defaults) -> ModelConfig:
    """The ModelConfig of a row of DEFAULTS (a transformers config's fields)."""
    f = defaults.fields

    def refuse(key: str, what: str, fix: str) -> InputError:
        return InputError(
            f"size {name!r}: {key} {what}", file=SIZES_FILE, entry=f"{name}.{key}", fix=fix
        )

    def number(key: str, kind: type[int] | type[float]) -> int | float:
        value = f[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not isfinite(value):
            raise refuse(key, f"is {value!r}, not a number", "write the number transformers sets")
        if kind is int and value != int(value):  # 32.9 heads were read as 32
            raise refuse(key, f"is {value!r}, not a whole number", "write a whole number")
        return kind(value)

    def whole(key: str) -> int:
        return int(number(key, int))

    def flag(key: str) -> bool:
        value = f[key]
        if not isinstance(value, bool):  # bool() made True of inf, "no" or [0]
            raise refuse(key, f"is {value!r}, not True or False", "write True or False")
        return value

    if flag("attention_bias") != flag("mlp_bias"):
        raise refuse(
            "attention_bias",
            f"is {f['attention_bias']!r} and mlp_bias {f['mlp_bias']!r}: biases on attention "
            "only or on the MLP only are not modelled",
            "give attention_bias and mlp_bias the same value",
        )
    fields = dict(
        n_layer=whole("num_hidden_layers"),
        n_head=whole("num_attention_heads"),
        n_kv_head=whole(
            "num_attention_heads" if f["num_key_value_heads"] is None else "num_key_value_heads"
        ),
        d_model=whole("hidden_size"),
        d_mlp=whole("intermediate_size"),
        n_ctx=whole("max_position_embeddings"),
        vocab_size=whole("vocab_size"),
        norm_eps=number("rms_norm_eps", float),
        rope_theta=number("rope_theta", float),
        sliding_window=None if f["sliding_window"] is None else whole("sliding_window"),
    )
    try:
        return ModelConfig(
            name=name,
            label=defaults.label,
            family="llama",
            norm="rmsnorm",
            mlp="swiglu",
            positions="rope",
            bias=flag("attention_bias"),
            tied_embeddings=flag("tie_word_embeddings"),
            names=NAMES,
            **fields,  # type: ignore[arg-type]
        )
    except InputError as error:  # ModelConfig's own check, told in this file's field names
        raise InputError(
            in_transformers_names(error.problem),
            file=SIZES_FILE,
            entry=in_transformers_names(error.entry or name),
            fix=in_transformers_names(error.fix or ""),
        ) from None


# ModelConfig's field -> the transformers field DEFAULTS writes it under
TRANSFORMERS_NAMES = {
    "n_layer": "num_hidden_layers",
    "n_kv_head": "num_key_value_heads",
    "n_head": "num_attention_heads",
    "d_model": "hidden_size",
    "d_mlp": "intermediate_size",
    "n_ctx": "max_position_embeddings",
    "norm_eps": "rms_norm_eps",
}


def in_transformers_names(text: str) -> str:
    """text with ModelConfig's field names replaced by the ones DEFAULTS uses."""
    pattern = r"\b(" + "|".join(TRANSFORMERS_NAMES) + r")\b"
    return re.sub(pattern, lambda m: TRANSFORMERS_NAMES[m.group(1)], text)


SIZES: dict[str, ModelConfig] = {
    name: from_transformers(name, row) for name, row in DEFAULTS.items()
}


THETA_PIN = "hf.rope-default-theta"  # `default_theta = 10_000.0`: both classes' rope_theta


def defaults_in(source: str) -> dict[str, Value]:
    """The defaults a block of class-level lines declares (`name: type = value`), for values
    that are numbers, booleans or None, or products of numbers (`4096 * 32`); other lines (a
    `field(...)`, a type only) are left out."""
    import textwrap

    found: dict[str, Value] = {}
    for node in ast.parse(textwrap.dedent(source)).body:
        if isinstance(node, ast.AnnAssign | ast.Assign):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            if isinstance(target, ast.Name) and node.value is not None:
                try:
                    found[target.id] = _number(node.value)
                except ValueError:
                    continue
    return found


def _number(node: ast.expr) -> Value:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | bool | None):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        left, right = _number(node.left), _number(node.right)
        if isinstance(left, int | float) and isinstance(right, int | float):
            return left * right
    raise ValueError("not a plain number")


# A field the pinned lines of a config class do not declare has the one value the family models
# when the class lacks it: MistralConfig declares no attention_bias or mlp_bias (its projections
# have no bias), LlamaConfig no sliding_window (every earlier position is seen). Any other value
# would reach a page with nothing to check it against.
WHEN_UNDECLARED: dict[str, Value] = {
    "attention_bias": False,
    "mlp_bias": False,
    "sliding_window": None,
}


def check_pinned(texts: Mapping[str, str], *, file: str) -> None:
    """Each size's defaults against the pinned lines of transformers (excerpt id -> text): every
    field of a row must have the value the lines declare for it, or, for a field they do not
    declare, the value WHEN_UNDECLARED gives; a field neither covers is refused, so no value of
    the table reaches a page unchecked (the sizes are read from pinned code, not typed in)."""
    for needed in (THETA_PIN, *(row.pinned for row in DEFAULTS.values())):
        if needed not in texts:
            raise InputError(
                f"the Llama family's sizes are read from pinned lines, and {needed!r} is not pinned",
                file=file,
                entry=needed,
                fix=f"restore the {needed!r} excerpt in the lock",
            )
    theta = defaults_in(texts[THETA_PIN]).get("default_theta")
    for name, row in DEFAULTS.items():
        pinned = defaults_in(texts[row.pinned])
        if "rope_parameters" in pinned and pinned["rope_parameters"] is None:
            pinned["rope_theta"] = theta  # no rope_parameters: the class takes default_theta
        for field, value in row.fields.items():
            if field in pinned:
                if pinned[field] != value:
                    raise InputError(
                        f"size {name!r}: {row.config_class}'s pinned lines give {field} ="
                        f" {pinned[field]!r}, the family's table says {value!r}",
                        file=file,
                        entry=f"{name}.{field}",
                        fix=f"make {SIZES_FILE} agree with the pinned lines (or re-pin"
                        f" {row.pinned} if upstream changed)",
                    )
            elif field not in WHEN_UNDECLARED:
                raise InputError(
                    f"size {name!r}: the pinned lines of {row.config_class} ({row.pinned}) declare"
                    f" no {field}, so nothing checks the table's {value!r}",
                    file=file,
                    entry=f"{name}.{field}",
                    fix=f"pin the lines of {row.config_class} that declare {field}"
                    + (" (and rope_parameters = None)" if field == "rope_theta" else ""),
                )
            elif not _same(value, supported := WHEN_UNDECLARED[field]):
                raise InputError(
                    f"size {name!r}: {row.config_class} declares no {field} in its pinned lines"
                    f" ({row.pinned}), and without one the family models {field} ="
                    f" {supported!r} only, not {value!r}",
                    file=SIZES_FILE,
                    entry=f"{name}.{field}",
                    fix=f"set {field} to {supported!r} in the row, or pin the lines of"
                    f" {row.config_class} that declare it if upstream added it",
                )


def _same(value: Value, supported: Value) -> bool:
    """The same value of the same type (0 is not False, and nothing but None is None)."""
    return type(value) is type(supported) and value == supported
