"""The model families, registered: each is one folder of generator/models/ and one line below.

    config.py      ModelConfig: the spec every family's sizes are written in
    names.py       TensorNames: where a checkpoint keeps each tensor
    tensors.py     every tensor of a size, from its spec and names
    counts.py      the parameter rows of any spec (flop_counts.py: its FLOP rows;
                   layer_kinds.py: which layers are alike)
    decoder.py     the one numpy forward pass (decode.py: cached decoding, a step at a time)
    weights.py     random weights of any size
    family.py      Family: a family's sizes, words, registry and map, made from its folder
    family_file.py the schema of a folder's family.toml, read and checked
    sizes_file.py  the schema of a folder's sizes.toml (transformers config defaults), read
    ops.py         the numpy ops the decoder is built from (norms, activations, RoPE, attention)
    checkpoint.py  a weight dict checked against a size's tensors; token ids checked
    cache.py       the KV cache layout
    <family>/      family.toml (words, map, components), sizes.py (and sizes.toml, its rows
                   of config defaults); names.py where its tensor names are not GPT-2's

Importing this package imports no numpy (generator.config imports it on every build).
"""

from __future__ import annotations

from pathlib import Path

from generator.errors import InputError
from generator.models.config import ModelConfig
from generator.models.family import Family

# the family folders, each after any it borrows components from
FOLDERS = ("gpt2", "llama", "mixtral", "gpt_oss", "deepseek_v3")


def _families() -> dict[str, Family]:
    families: dict[str, Family] = {}
    for folder in FOLDERS:
        family = Family.from_folder(Path(__file__).parent / folder, families)
        families[family.name] = family
    return families


FAMILIES: dict[str, Family] = _families()


def get_family(name: str) -> Family:
    """The family called `name`; an InputError listing the families otherwise."""
    if name not in FAMILIES:
        raise InputError(
            f"unknown model family {name!r}", entry=name, fix=f"use one of: {', '.join(FAMILIES)}"
        )
    return FAMILIES[name]


def get_size(name: str) -> ModelConfig:
    """The size called `name` in any family; an InputError listing every size otherwise."""
    for family in FAMILIES.values():
        if name in family.sizes:
            return family.sizes[name]
    every = [size for family in FAMILIES.values() for size in family.sizes]
    raise InputError(
        f"unknown model size {name!r}", entry=name, fix=f"use one of: {', '.join(every)}"
    )
