"""The "What changed since GPT-2" page: each difference between the families with its cost,
computed by both families' accounting, and the pinned code of each side.

A change's cost is measured at each Llama size against its GPT-2-shaped twin: a GPT-2 of the
same width, depth, heads, context and vocabulary (LayerNorm, learned positions, multi-head
attention, a GELU MLP 4 × d_model wide, tied unembedding), without biases but where the biases
themselves are the change. So each row isolates one change.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from generator import accounting, decode_costs
from generator.models.config import ModelConfig
from generator.models.llama.changes import CHANGES, Change
from generator.render.numbers import fmt_int

Quantity = tuple[str, Callable[[ModelConfig], int]]  # label, its value for a config


def unwindowed(cfg: ModelConfig) -> ModelConfig:
    """cfg with every layer seeing every earlier position: the window's cost isolated."""
    return dataclasses.replace(cfg, sliding_window=None, layer_types=None)


def gpt2_twin(cfg: ModelConfig, *, bias: bool = False) -> ModelConfig:
    """A GPT-2 of cfg's width, depth, heads, context and vocabulary."""
    return ModelConfig(
        name=f"{cfg.name}-as-gpt2",
        label=f"GPT-2 shaped like {cfg.label}",
        n_layer=cfg.n_layer,
        n_head=cfg.n_head,
        d_model=cfg.d_model,
        n_ctx=cfg.n_ctx,
        vocab_size=cfg.vocab_size,
        bias=bias,
    )


def _params(*components: str) -> Callable[[ModelConfig], int]:
    return lambda cfg: sum(
        accounting.params_total(cfg, c) for c in components if c in _components(cfg)
    )


def _flops(component: str) -> Callable[[ModelConfig], int]:
    return lambda cfg: accounting.flops_total_per_token(cfg, component)


def _kv_bytes(cfg: ModelConfig) -> int:
    return next(r.value for r in decode_costs.kv_cache_rows(cfg) if r.key == "bytes.float16")


def _kv_context_bytes(cfg: ModelConfig) -> int:
    return next(r.value for r in decode_costs.kv_cache_rows(cfg) if r.key == "context.float16")


def _decode_flops(cfg: ModelConfig) -> int:
    return decode_costs.decode_flops(cfg, cfg.n_ctx, cached=True)


def _components(cfg: ModelConfig) -> tuple[str, ...]:
    from generator.models import get_family

    return get_family(cfg.family).components


# change key -> the quantities it moves (whole model: every instance counted)
COSTS: dict[str, tuple[Quantity, ...]] = {
    "norm": (("Parameters of every norm", _params("ln1", "ln2", "lnf")),),
    "positions": (("Parameters of a position table of {n_ctx} rows", _params("wpe", "rope")),),
    "attention": (
        ("Attention parameters", _params("attention")),
        ("Attention FLOPs per token at T = {n_ctx}", _flops("attention")),
        ("KV cache bytes per token (float16)", _kv_bytes),
    ),
    "mlp": (
        ("MLP parameters", _params("mlp")),
        ("MLP FLOPs per token", _flops("mlp")),
    ),
    "unembedding": (("Unembedding parameters", _params("unembed")),),
    "window": (
        ("Attention FLOPs per token at T = {n_ctx}", _flops("attention")),
        ("KV cache bytes after {n_ctx} tokens (float16)", _kv_context_bytes),
        ("FLOPs of the decoding step reading token {n_ctx}", _decode_flops),
    ),
}


def cost_rows(change: Change, cfg: ModelConfig) -> list[tuple[str, int, int]]:
    """(quantity, GPT-2's way, Llama's way) at the Llama size `cfg`. The window is a change of
    its own: every other change is measured without it, the window against cfg without it."""
    twin = gpt2_twin(cfg)
    if change.key == "biases":  # the twin with and without its biases: the whole model
        with_bias = accounting.params_total(gpt2_twin(cfg, bias=True), "model")
        without = accounting.params_total(twin, "model")
        return [("Parameters of the biases", with_bias - without, 0)]
    context = fmt_int(cfg.n_ctx)  # a label names the context its count is taken at
    before, after = (unwindowed(cfg), cfg) if change.key == "window" else (twin, unwindowed(cfg))
    return [
        (label.format(n_ctx=context), value(before), value(after))
        for label, value in COSTS[change.key]
    ]


def cost_table(change: Change, cfg: ModelConfig) -> str:
    """| quantity | GPT-2's way | Llama's way | change | as a Markdown table."""
    lines = [
        f"| {cfg.label} | GPT-2's way | {cfg.label.split()[0]}'s way | Change |",
        "| :-- | --: | --: | --: |",
    ]
    for label, before, after in cost_rows(change, cfg):
        delta = after - before
        sign = "+" if delta > 0 else ("−" if delta < 0 else "")
        q = f"change.{change.key}"
        lines.append(
            f'| {label} | <span data-q="{q}.gpt2">{fmt_int(before)}</span>'
            f' | <span data-q="{q}.llama">{fmt_int(after)}</span>'
            f' | <span data-q="{q}.delta">{sign}{fmt_int(abs(delta))}</span> |'
        )
    return "\n".join(lines) + "\n"


__all__ = ["CHANGES", "cost_rows", "cost_table", "gpt2_twin"]
