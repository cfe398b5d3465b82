"""A family's sizes written as transformers' config defaults, turned into specs and checked
against the pinned lines of the config classes that declare them.

A family keeps a `Table`: rows of `Defaults` (a config class's default values under transformers'
own field names) and the constants of the family (the norm, the MLP, the router, the checkpoint's
names: what no config field says). `Table.sizes()` turns each row into a ModelConfig; the build
calls `Table.check_pinned()` with the verified text of the pinned excerpts, and every field of a
row must equal the value the pinned lines declare, or, for a field they do not declare, the one
value the family models without it (`when_undeclared`); a field neither covers is refused, so no
value of a table reaches a page unchecked.
"""

from __future__ import annotations

import ast
import contextlib
import re
import textwrap
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from math import isfinite
from typing import Any

from generator.errors import InputError
from generator.models.config import Experts, Latent, ModelConfig, Yarn

Value = int | float | bool | str | None


@dataclass(frozen=True)
class Defaults:
    """One size: the transformers config class whose defaults it is, and those defaults."""

    config_class: str  # "LlamaConfig"
    label: str  # the name a page prints
    fields: dict[str, Value]  # transformers' field name -> default value
    pinned: str  # the id of the pinned excerpt of the class's default lines (sources/lock.toml)


# ModelConfig's field -> the transformers field a row writes it under
TRANSFORMERS_NAMES = {
    "n_layer": "num_hidden_layers",
    "n_kv_head": "num_key_value_heads",
    "n_head": "num_attention_heads",
    "d_model": "hidden_size",
    "d_mlp": "intermediate_size",
    "n_ctx": "max_position_embeddings",
    "norm_eps": "rms_norm_eps",
    "head_dim": "head_dim",
    # Experts' and Latent's fields, which ModelConfig names as experts.<field>, latent.<field>
    "top_k": "num_experts_per_tok",
    "n_shared": "n_shared_experts",
    "first_dense": "first_k_dense_replace",
    "routed_scaling": "routed_scaling_factor",
    "kv_rank": "kv_lora_rank",
    "q_rank": "q_lora_rank",
    "nope_dim": "qk_nope_head_dim",
    "rope_dim": "qk_rope_head_dim",
    "v_dim": "v_head_dim",
    "n_group": "n_group",
    "topk_group": "topk_group",
    "norm_topk_prob": "norm_topk_prob",
}


def in_transformers_names(text: str, fields: Collection[str] = ()) -> str:
    """text with ModelConfig's field names (and experts./latent. parts) replaced by the ones a
    row with these `fields` uses (its expert count and width have two names in transformers)."""
    names = {
        **TRANSFORMERS_NAMES,
        "n_experts": "num_local_experts" if "num_local_experts" in fields else "n_routed_experts",
        "d_expert": "moe_intermediate_size"
        if "moe_intermediate_size" in fields
        else "intermediate_size",
    }
    pattern = r"\b(?:(?:experts|latent)\.)?(" + "|".join(names) + r")\b"
    return re.sub(pattern, lambda m: names[m.group(1)], text)


@dataclass(frozen=True)
class Table:
    """A family's sizes as transformers config rows, and what the family fixes besides."""

    family: str  # the sizes' `family`
    file: str  # where the rows are written, as errors name it
    rows: dict[str, Defaults]  # size name -> its defaults
    constants: dict[str, Any]  # ModelConfig fields no config field sets (norm, mlp, names, …)
    when_undeclared: dict[str, Value] = field(default_factory=dict)
    theta_pin: str | None = None  # the excerpt of `default_theta` when a class takes it from
    # its rotary mixin (rope_parameters = None)
    # a row's layer types from its fields, where the class computes them (gpt-oss alternates)
    layer_types: Callable[[int], tuple[str, ...]] | None = None
    router: str | None = None  # how its experts are chosen (Experts.router), if it has experts
    # a row field another pinned excerpt declares, under its own name there: field -> (excerpt
    # id, name), e.g. gpt-oss's swiglu_limit, hard-coded as `self.limit = 7.0` in its experts
    elsewhere: dict[str, tuple[str, str]] = field(default_factory=dict)
    # code a pinned excerpt must hold verbatim, for what the family computes from a rule rather
    # than a value (gpt-oss's alternating layer_types): what -> (excerpt id, the code)
    rules: dict[str, tuple[str, str]] = field(default_factory=dict)

    def sizes(self) -> dict[str, ModelConfig]:
        return {name: self.spec(name, row) for name, row in self.rows.items()}

    def spec(self, name: str, row: Defaults) -> ModelConfig:
        """The ModelConfig of a row (a transformers config's fields)."""
        reader = _Reader(name, row, self.file)
        try:
            return ModelConfig(
                name=name,
                label=row.label,
                family=self.family,
                **{**reader.fields(self.layer_types, self.router), **self.constants},
            )
        except InputError as error:  # ModelConfig's own check, told in this file's field names
            fields = row.fields
            raise InputError(
                in_transformers_names(error.problem, fields),
                file=self.file,
                entry=in_transformers_names(error.entry or name, fields),
                fix=in_transformers_names(error.fix or "", fields),
            ) from None

    def check_pinned(self, texts: Mapping[str, str], *, file: str) -> None:
        """Each row against the pinned lines of its class (excerpt id -> verified text)."""
        needed = [
            *((self.theta_pin,) if self.theta_pin else ()),
            *self.pins(),
            *(pin for pin, _ in self.elsewhere.values()),
            *(pin for pin, _ in self.rules.values()),
        ]
        for pin in needed:
            if pin not in texts:
                raise InputError(
                    f"the {self.family} family's sizes are read from pinned lines, and {pin!r} is"
                    " not pinned",
                    file=file,
                    entry=pin,
                    fix=f"restore the {pin!r} excerpt in the lock",
                )
        theta = defaults_in(texts[self.theta_pin]).get("default_theta") if self.theta_pin else None
        for name, row in self.rows.items():
            pinned = defaults_in(texts[row.pinned])
            if pinned.get("rope_parameters", 0) is None and "default_theta" not in pinned:
                pinned["rope_theta"] = theta  # no rope_parameters: the mixin's default_theta
            elif "default_theta" in pinned:
                pinned["rope_theta"] = pinned["default_theta"]
            for key, (pin, there) in self.elsewhere.items():
                declared = defaults_in(texts[pin])
                if there in declared:
                    pinned[key] = declared[there]
            for key, value in row.fields.items():
                self._check_field(name, row, key, value, pinned, file)
        for what, (pin, code) in self.rules.items():
            if code not in texts[pin]:
                raise InputError(
                    f"the {self.family} family computes {what} as {code!r}, and the pinned lines of"
                    f" {pin} no longer hold that code",
                    file=file,
                    entry=pin,
                    fix=f"make {self.file}'s rule for {what} agree with the pinned lines",
                )

    def pins(self) -> list[str]:
        return list(dict.fromkeys(row.pinned for row in self.rows.values()))

    def _check_field(
        self, name: str, row: Defaults, key: str, value: Value, pinned: dict[str, Value], file: str
    ) -> None:
        if key in pinned:
            if not _same(pinned[key], value):
                raise InputError(
                    f"size {name!r}: {row.config_class}'s pinned lines give {key} ="
                    f" {pinned[key]!r}, the family's table says {value!r}",
                    file=file,
                    entry=f"{name}.{key}",
                    fix=f"make {self.file} agree with the pinned lines (or re-pin {row.pinned} if"
                    " upstream changed)",
                )
        elif key not in self.when_undeclared:
            raise InputError(
                f"size {name!r}: the pinned lines of {row.config_class} ({row.pinned}) declare no"
                f" {key}, so nothing checks the table's {value!r}",
                file=file,
                entry=f"{name}.{key}",
                fix=f"pin the lines of {row.config_class} that declare {key}"
                + (" (and rope_parameters = None)" if key == "rope_theta" else ""),
            )
        elif not _same(value, supported := self.when_undeclared[key]):
            raise InputError(
                f"size {name!r}: {row.config_class} declares no {key} in its pinned lines"
                f" ({row.pinned}), and without one the family models {key} = {supported!r} only,"
                f" not {value!r}",
                file=self.file,
                entry=f"{name}.{key}",
                fix=f"set {key} to {supported!r} in the row, or pin the lines of"
                f" {row.config_class} that declare it if upstream added it",
            )


class _Reader:
    """A row's fields read as the spec's, each checked for its kind, naming the row's field."""

    def __init__(self, name: str, row: Defaults, file: str) -> None:
        self.name, self.row, self.file = name, row, file

    def refuse(self, key: str, what: str, fix: str) -> InputError:
        return InputError(
            f"size {self.name!r}: {key} {what}", file=self.file, entry=f"{self.name}.{key}", fix=fix
        )

    def number(self, key: str, kind: type[int] | type[float]) -> int | float:
        value = self.row.fields[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not isfinite(value):
            raise self.refuse(
                key, f"is {value!r}, not a number", "write the number transformers sets"
            )
        if kind is int and value != int(value):  # 32.9 heads were read as 32
            raise self.refuse(key, f"is {value!r}, not a whole number", "write a whole number")
        return kind(value)

    def whole(self, key: str) -> int:
        return int(self.number(key, int))

    def flag(self, key: str) -> bool:
        value = self.row.fields[key]
        if not isinstance(value, bool):  # bool() made True of inf, "no" or [0]
            raise self.refuse(key, f"is {value!r}, not True or False", "write True or False")
        return value

    def optional(self, key: str, read: Callable[[str], Any]) -> Any:
        return None if self.row.fields.get(key) is None else read(key)

    def fields(
        self, layer_types: Callable[[int], tuple[str, ...]] | None, router: str | None
    ) -> dict[str, Any]:
        f = self.row.fields
        heads = (
            "num_attention_heads" if f.get("num_key_value_heads") is None else "num_key_value_heads"
        )
        found: dict[str, Any] = dict(
            n_layer=self.whole("num_hidden_layers"),
            n_head=self.whole("num_attention_heads"),
            n_kv_head=self.whole(heads),
            d_model=self.whole("hidden_size"),
            d_mlp=self.whole("intermediate_size"),
            n_ctx=self.whole("max_position_embeddings"),
            vocab_size=self.whole("vocab_size"),
            norm_eps=self.number("rms_norm_eps", float),
            rope_theta=self.number("rope_theta", float),
            sliding_window=self.optional("sliding_window", self.whole),
            tied_embeddings=self.flag("tie_word_embeddings"),
        )
        if f.get("head_dim") is not None:
            found["head_dim"] = self.whole("head_dim")
        found |= self._biases()
        if layer_types is not None:
            found["layer_types"] = layer_types(found["n_layer"])
        if f.get("rope_type") == "yarn":
            found["rope_scaling"] = self._yarn()
        if "kv_lora_rank" in f:
            found["latent"] = Latent(
                kv_rank=self.whole("kv_lora_rank"),
                q_rank=self.optional("q_lora_rank", self.whole),
                nope_dim=self.whole("qk_nope_head_dim"),
                rope_dim=self.whole("qk_rope_head_dim"),
                v_dim=self.whole("v_head_dim"),
            )
            found["rope_interleave"] = self.flag("rope_interleave")
        if "num_experts_per_tok" in f:
            assert router is not None, "a family with experts names its router"
            found["experts"] = self._experts(router)
        for key in ("swiglu_alpha", "swiglu_limit"):
            if key in f:
                found[key] = self.number(key, float)
        return found

    def _yarn(self) -> Yarn:
        """A row's rope_type "yarn" parameters (rope_factor, rope_beta_fast, …)."""
        f = self.row.fields

        def real(key: str, default: float | None) -> float | None:
            return default if f.get(key) is None else self.number(key, float)

        return Yarn(
            factor=self.number("rope_factor", float),
            original_max_position_embeddings=self.whole("rope_original_max_position_embeddings"),
            beta_fast=real("rope_beta_fast", 32.0) or 32.0,
            beta_slow=real("rope_beta_slow", 1.0) or 1.0,
            truncate=self.flag("rope_truncate") if "rope_truncate" in f else True,
            mscale=real("rope_mscale", None),
            mscale_all_dim=real("rope_mscale_all_dim", None),
        )

    def _biases(self) -> dict[str, Any]:
        f = self.row.fields
        if "mlp_bias" not in f:  # one attention_bias, the experts' biases with it (gpt-oss)
            return {"bias": self.flag("attention_bias")}
        if self.flag("attention_bias") != self.flag("mlp_bias"):
            raise self.refuse(
                "attention_bias",
                f"is {f['attention_bias']!r} and mlp_bias {f['mlp_bias']!r}: biases on attention "
                "only or on the MLP only are not modelled",
                "give attention_bias and mlp_bias the same value",
            )
        return {"bias": self.flag("attention_bias")}

    def _experts(self, router: str) -> Experts:
        f = self.row.fields
        count = "num_local_experts" if "num_local_experts" in f else "n_routed_experts"
        width = "moe_intermediate_size" if "moe_intermediate_size" in f else "intermediate_size"
        return Experts(
            n_experts=self.whole(count),
            top_k=self.whole("num_experts_per_tok"),
            d_expert=self.whole(width),
            router=router,  # type: ignore[arg-type]
            n_shared=self.whole("n_shared_experts") if "n_shared_experts" in f else 0,
            first_dense=self.whole("first_k_dense_replace") if "first_k_dense_replace" in f else 0,
            n_group=self.whole("n_group") if "n_group" in f else 1,
            topk_group=self.whole("topk_group") if "topk_group" in f else 1,
            norm_topk_prob=self.flag("norm_topk_prob") if "norm_topk_prob" in f else True,
            routed_scaling=self.number("routed_scaling_factor", float)
            if "routed_scaling_factor" in f
            else 1.0,
            router_bias=router == "topk-softmax",
        )


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


def _same(value: Value, supported: Value) -> bool:
    """The same value of the same type (0 is not False, and nothing but None is None); an int
    and a float of the same value are the same number (`1e-6` and a pinned `1e-06`)."""
    if isinstance(value, bool) or isinstance(supported, bool):
        return type(value) is type(supported) and value == supported
    if isinstance(value, int | float) and isinstance(supported, int | float):
        return value == supported
    return type(value) is type(supported) and value == supported
