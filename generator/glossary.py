"""Notation used on every page: each symbol, what it means, and its value per size; and the
words of the trade (TERMS), each defined once, which pages link at their first use. The words are
data (glossary.toml beside this file); the values are computed here, by anchor (VALUES)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import msgspec

from generator.data_file import read_data
from generator.errors import InputError

if TYPE_CHECKING:  # the values need the models; the terms every page links do not
    from generator.models.config import Experts, Latent, ModelConfig

GLOSSARY_FILE = Path(__file__).with_name("glossary.toml")
FIX = "write it as GlossaryFile in generator/glossary.py says, or restore it from git"
Value = Callable[["ModelConfig"], int | float | str | None]


class Symbol(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    anchor: str  # #sym-<anchor> on the glossary page
    tex: str
    meaning: str


class Notation(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One table of the Notation page: {{ glossary(name) }} shows these families' sizes."""

    families: tuple[str, ...]
    symbols: tuple[Symbol, ...]


class Term(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A word of the trade, defined once on the Notation page (#term-<anchor>); the first time a
    page's prose uses it, it links there (render/page_html.link_terms)."""

    anchor: str
    name: str  # the heading: "GQA: grouped-query attention"
    pattern: (
        str  # a regex for its uses in prose, case-sensitive: r"\bGQA\b|grouped-query attention"
    )
    meaning: str  # plain words


class Notations(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    gpt2: Notation
    llama: Notation
    frontier: Notation  # Mixtral's, gpt-oss's and DeepSeek-V3's


class GlossaryFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    notation: Notations
    terms: tuple[Term, ...]


def _shape(*dims: int) -> str:
    """A tensor's shape as the glossary shows it: "[8 × 4,096]"."""
    return "[" + " × ".join(f"{n:,}" for n in dims) + "]"


def _moe(
    value: Callable[[Experts, ModelConfig], int | float | str | None], router: str | None = None
) -> Value:
    """A symbol's value from a size's experts (with that router, when given); None without."""

    def read(cfg: ModelConfig) -> int | float | str | None:
        moe = cfg.experts
        if moe is None or (router is not None and moe.router != router):
            return None
        return value(moe, cfg)

    return read


def _kaplan_n(cfg: ModelConfig) -> int:
    from generator.accounting import kaplan_n  # here: a warm build links terms without models

    return kaplan_n(cfg)


def _latent(value: Callable[[Latent, ModelConfig], int | str]) -> Value:
    """A symbol's value from a size's latent attention; None without."""
    return lambda cfg: value(cfg.latent, cfg) if cfg.latent is not None else None


# A symbol's value in a size, by anchor: a count, a factor or a shape ("[8 × 4,096]"); a symbol
# without one (or whose function gives None) depends on the input, or the size has no such part.
VALUES: dict[str, Value] = {
    "d": lambda c: c.d_model,
    "h": lambda c: c.n_head,
    "d_head": lambda c: c.d_head,
    "d_ff": lambda c: c.d_mlp,
    "L": lambda c: c.n_layer,
    "V": lambda c: c.vocab_size,
    "n_ctx": lambda c: c.n_ctx,
    "N": _kaplan_n,
    "llama-d": lambda c: c.d_model,
    "llama-h": lambda c: c.n_head,
    "h_kv": lambda c: c.n_kv_head,
    "llama-d_head": lambda c: c.d_head,
    "llama-d_ff": lambda c: c.d_mlp,
    "llama-L": lambda c: c.n_layer,
    "llama-V": lambda c: c.vocab_size,
    "llama-n_ctx": lambda c: c.n_ctx,
    "rope-base": lambda c: round(c.rope_theta),
    "W": lambda c: c.sliding_window or 0,
    "E": _moe(lambda moe, c: moe.n_experts),
    "K": _moe(lambda moe, c: f"{moe.top_k} of {moe.n_experts}"),
    "p": _moe(lambda moe, c: _shape(moe.n_experts), "softmax-topk"),
    "W_gate": _moe(lambda moe, c: _shape(moe.n_experts, c.d_model), "softmax-topk"),
    "r": _moe(lambda moe, c: _shape(moe.n_experts), "topk-softmax"),
    "W_r": _moe(
        lambda moe, c: f"{_shape(moe.n_experts, c.d_model)}, {_shape(moe.n_experts)}",
        "topk-softmax",
    ),
    "w_e": _moe(lambda moe, c: _shape(c.d_model), "sigmoid-grouped"),
    "gamma": _moe(lambda moe, c: moe.routed_scaling, "sigmoid-grouped"),
    "FFN_e": _moe(lambda moe, c: moe.d_expert),
    "FFN_shared": _moe(lambda moe, c: moe.n_shared * moe.d_expert),  # 0: none (a dash)
    "alpha": lambda c: c.swiglu_alpha if c.mlp == "swiglu-clamped" else None,
    "s_h": lambda c: c.n_head if c.attention_sinks else None,
    "w": lambda c: c.sliding_window if c.layer_types is not None else None,
    "c_t": _latent(lambda lat, c: lat.kv_rank),
    "W_DKV": _latent(lambda lat, c: _shape(lat.kv_rank, c.d_model)),
    "W_KR": _latent(lambda lat, c: _shape(lat.rope_dim, c.d_model)),
    "W_UKV": _latent(lambda lat, c: _shape(lat.nope_dim + lat.v_dim, lat.kv_rank)),
    "d_nope": _latent(lambda lat, c: lat.nope_dim),
    "d_rope": _latent(lambda lat, c: lat.rope_dim),
}


def read_glossary(path: Path = GLOSSARY_FILE) -> GlossaryFile:
    """glossary.toml, each anchor once, and a symbol for each of VALUES (an InputError
    otherwise: a value nothing shows, or two rows one link cannot tell apart)."""
    data = read_data(path, GlossaryFile, fix=FIX)
    seen: set[str] = set()
    for name, table in msgspec.structs.asdict(data.notation).items():
        for index, symbol in enumerate(table.symbols):
            if symbol.anchor in seen:
                _refuse(path, f"notation.{name}.symbols[{index}].anchor", "repeats an anchor")
            seen.add(symbol.anchor)
    if missing := sorted(VALUES.keys() - seen):
        _refuse(path, "notation", f"has no symbol for {', '.join(missing)} (VALUES computes it)")
    return data


def _refuse(path: Path, entry: str, problem: str) -> NoReturn:
    raise InputError(problem, file=str(path), entry=entry, fix=FIX)


GLOSSARY = read_glossary()
# The Notation page's tables: {{ glossary(name) }} shows these families' sizes and symbols.
NOTATION: dict[str, tuple[tuple[str, ...], dict[str, Symbol]]] = {
    name: (table.families, {symbol.anchor: symbol for symbol in table.symbols})
    for name, table in msgspec.structs.asdict(GLOSSARY.notation).items()
}
SYMBOLS = NOTATION["gpt2"][1]
LLAMA_SYMBOLS = NOTATION["llama"][1]
FRONTIER_SYMBOLS = NOTATION["frontier"][1]
TERMS = GLOSSARY.terms


def symbol_value(symbol: Symbol, cfg: ModelConfig) -> str:
    """A symbol's value in a size, as the table shows it: "4,096", "2.5", a shape, or "—"."""
    value = VALUES[symbol.anchor](cfg) if symbol.anchor in VALUES else None
    if not value:
        return "—"
    if isinstance(value, float):
        return f"{value:g}"
    return f"{value:,}" if isinstance(value, int) else value
