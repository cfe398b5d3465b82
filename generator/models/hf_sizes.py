"""A family's sizes written as transformers' config defaults, turned into specs and checked
against the pinned lines of the config classes that declare them.

A family keeps a `Table`: rows of `Defaults` (a config class's default values under transformers'
own field names) and the constants of the family (the norm, the MLP, the router, the checkpoint's
names: what no config field says). `Table.sizes()` turns each row into a ModelConfig; the build
calls `Table.check_pinned()` with the verified text of the pinned excerpts, and every field of a
row must equal the value the pinned lines declare, or, for a field they do not declare, the one
value the family models without it (`when_undeclared`); a field neither covers is refused, so no
value of a table reaches a page unchecked. The rows are written in the family's sizes.toml
(sizes_file.py); a row is read by hf_reader.py; what the pinned lines declare, by
pinned_defaults.py.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from generator.errors import InputError
from generator.models.config import ModelConfig
from generator.models.hf_reader import RowReader
from generator.models.pinned_defaults import Defaults, Value, defaults_in, same_value

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


# every field some family's row writes: the fields the site reads from a transformers config
ROW_FIELDS: set[str] = set()


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

    def __post_init__(self) -> None:
        for row in self.rows.values():
            ROW_FIELDS.update(row.fields)

    def sizes(self) -> dict[str, ModelConfig]:
        return {name: self.spec(name, row) for name, row in self.rows.items()}

    def spec(self, name: str, row: Defaults) -> ModelConfig:
        """The ModelConfig of a row (a transformers config's fields)."""
        reader = RowReader(name, row, self.file)
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
            for key in sorted((ROW_FIELDS & pinned.keys()) - row.fields.keys()):
                raise InputError(  # a field left out is read as None (no window, no GQA)
                    f"size {name!r}: {row.config_class}'s pinned lines give {key} ="
                    f" {pinned[key]!r}, which the row leaves out",
                    file=self.file,
                    entry=f"{name}.{key}",
                    fix=f"write {key} in the row as the pinned lines give it (in unset if None)",
                )
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
            if not same_value(pinned[key], value):
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
        elif not same_value(value, supported := self.when_undeclared[key]):
            raise InputError(
                f"size {name!r}: {row.config_class} declares no {key} in its pinned lines"
                f" ({row.pinned}), and without one the family models {key} = {supported!r} only,"
                f" not {value!r}",
                file=self.file,
                entry=f"{name}.{key}",
                fix=f"set {key} to {supported!r} in the row, or pin the lines of"
                f" {row.config_class} that declare it if upstream added it",
            )
