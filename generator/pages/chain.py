"""What changed after Mistral: the chain on to Mixtral, DeepSeek-V3 and gpt-oss, one change at a
time, each measured on the family that made it against the same spec without it, and the table
of every family side by side.

A step's costs are computed by the one accounting, on the family's own size and on that size
with the change undone (`without`): the experts replaced by one dense MLP as wide as an expert,
the latent cache replaced by every head's keys and values, the sinks removed, every layer made
full. So each row isolates one change, as the GPT-2 → Llama rows do (pages/compare.py).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

from generator import accounting, decode_costs
from generator.models import FAMILIES
from generator.models.config import ModelConfig
from generator.models.papers import Paper
from generator.render.numbers import fmt_int

Costs = Callable[[ModelConfig], list[tuple[str, int, int]]]  # (quantity, before, after)
SIDE_BY_SIDE_CONTEXT = 4096  # the context every family's row is taken at (each reads as many)


@dataclass(frozen=True)
class Step:
    key: str  # its anchor on the page
    title: str
    text: str  # Markdown, in words: the numbers come from the cost table
    family: str  # the family that made it: its sizes' tabs
    before: str  # the column of the way before: "One MLP"
    after: str  # the column of the family's way: "Experts"
    before_code: tuple[str, ...]  # excerpt ids of the way before, one tab each
    after_code: tuple[str, ...]  # excerpt ids of the family's way
    page: str  # the page that explains it
    costs: Costs
    why: str  # plain words: the reason the papers give
    cite: tuple[Paper, ...]


def _experts_costs(cfg: ModelConfig) -> list[tuple[str, int, int]]:
    """Every layer's experts against one dense SwiGLU MLP as wide as an expert."""
    assert cfg.experts is not None
    dense = dataclasses.replace(cfg, experts=None, d_mlp=cfg.experts.d_expert)
    return [
        ("Parameters of the model", accounting.params_total(dense, "model"),
         accounting.params_total(cfg, "model")),
        ("Parameters a token reads", accounting.active_params(dense),
         accounting.active_params(cfg)),
        ("Forward FLOPs per token at T = 4,096", accounting.flops_per_token(dense, "model", 4096),
         accounting.flops_per_token(cfg, "model", 4096)),
    ]  # fmt: skip


def _latent_costs(cfg: ModelConfig) -> list[tuple[str, int, int]]:
    """A latent per position against every head's keys and values, in the cache; and the decoding
    step, which with the latents reads every cached one out again (transformers' code), where a
    cache of keys and values is read as it is."""
    full, latent = decode_costs.full_kv_values_per_token(cfg), decode_costs.kv_values_per_token(cfg)
    T = cfg.n_ctx
    step = decode_costs.decode_flops(cfg, T, cached=True)
    return [
        ("KV cache per token, values", full, latent),
        ("KV cache per token, bytes in bfloat16", 2 * full, 2 * latent),
        (f"FLOPs of the decoding step reading token {fmt_int(T)}, as transformers runs it",
         step - math.prod(decode_costs.latent_readout(cfg, T)), step),
    ]  # fmt: skip


def _sinks_costs(cfg: ModelConfig) -> list[tuple[str, int, int]]:
    without = dataclasses.replace(cfg, attention_sinks=False)
    return [
        ("Parameters of every layer's attention", accounting.params_total(without, "attention"),
         accounting.params_total(cfg, "attention")),
        ("Attention FLOPs per token at T = 4,096",
         accounting.flops_total_per_token(without, "attention", 4096),
         accounting.flops_total_per_token(cfg, "attention", 4096)),
    ]  # fmt: skip


def _alternating_costs(cfg: ModelConfig) -> list[tuple[str, int, int]]:
    full = dataclasses.replace(cfg, layer_types=None, sliding_window=None)
    T = cfg.n_ctx

    def bytes_after(c: ModelConfig) -> int:
        return next(r.value for r in decode_costs.kv_cache_rows(c, T) if r.key == "context.float16")

    return [
        (f"Attention FLOPs per token at T = {fmt_int(T)}",
         accounting.flops_total_per_token(full, "attention", T),
         accounting.flops_total_per_token(cfg, "attention", T)),
        (f"KV cache bytes after {fmt_int(T)} tokens (bfloat16)", bytes_after(full),
         bytes_after(cfg)),
        (f"FLOPs of the decoding step reading token {fmt_int(T)}",
         decode_costs.decode_flops(full, T, cached=True), decode_costs.decode_flops(cfg, T, cached=True)),
    ]  # fmt: skip


def steps() -> tuple[Step, ...]:
    from generator.models.papers import PAPERS

    return (
        Step(
            "experts",
            "One MLP → a mixture of experts (Mixtral)",
            "Mixtral keeps Mistral's layer and puts eight MLPs where it had one; a router picks two "
            "for each token. The model holds eight MLPs' parameters, a token reads two. The "
            "columns below set Mixtral against its own shape with one MLP as wide as an expert.",
            "mixtral",
            "One MLP",
            "Experts",
            ("llama.mlp",),
            ("mixtral.moe-block", "mixtral.router"),
            "mixtral/experts.md",
            _experts_costs,
            why=(
                "Shazeer et al. showed that a router choosing a few of many expert networks per "
                "token lets a model hold far more parameters for the same compute per token; "
                "Mixtral applies it to every layer's MLP and reports matching or beating models "
                "that read several times more parameters per token."
            ),
            cite=(PAPERS["MOE"], PAPERS["MIXTRAL"]),
        ),
        Step(
            "latent",
            "Every head's keys and values → one latent per position (DeepSeek-V3)",
            "DeepSeek-V3's attention reads each head's key and value out of one small latent "
            "vector per position, plus a narrow rotated key shared by every head; its cache holds "
            "those, not every head's keys and values. transformers' code reads every cached "
            "latent out into keys and values again at each decoding step, which the last row "
            "counts; the paper's inference folds that read-out into the query and output "
            "projections instead. Its experts change too (256 small routed ones and one shared, "
            "chosen within the best groups): [their page](deepseek-v3/experts.md) counts them.",
            "deepseek-v3",
            "Every head cached",
            "Latent cached",
            ("llama.attention-init",),
            ("deepseek-v3.attention-init", "deepseek-v3.attention-forward"),
            "deepseek-v3/attention.md",
            _latent_costs,
            why=(
                "DeepSeek-V2 introduced latent attention to shrink the KV cache, the bottleneck of "
                "generating at long contexts, without the quality loss of sharing keys and values "
                "across heads as grouped-query attention does; DeepSeek-V3 keeps it."
            ),
            cite=(PAPERS["DEEPSEEK_V2"], PAPERS["DEEPSEEK_V3"]),
        ),
        Step(
            "sinks",
            "Softmax over the keys → a learned sink beside them (gpt-oss)",
            "Each gpt-oss head learns one more logit that joins every softmax row with no value "
            "behind it: a head can give weight to nothing instead of to tokens.",
            "gpt-oss",
            "No sinks",
            "Sinks",
            ("llama.eager-attention",),
            ("gpt-oss.eager-attention", "gpt-oss.attention-init"),
            "gpt-oss/attention.md",
            _sinks_costs,
            why=(
                "Xiao et al. found that models put much of their attention on the first tokens, "
                "whatever they hold, as a place to put weight that no other token needs, and that "
                "windowed attention fails once those tokens leave the window; gpt-oss's card gives "
                "each head a learned logit in the softmax's denominator, so it can attend to "
                "nothing at all."
            ),
            cite=(PAPERS["SINKS"], PAPERS["GPT_OSS"]),
        ),
        Step(
            "alternating",
            "Every layer full → windowed and full layers alternating (gpt-oss)",
            "gpt-oss's even layers see only a short window of recent positions, its odd layers "
            "every earlier one. Half the layers' attention and cache stop growing with the "
            "context; the other half carry what lies further back.",
            "gpt-oss",
            "All full",
            "Alternating",
            ("mistral.attention-forward",),
            ("gpt-oss.attention-init", "gpt-oss.config-defaults"),
            "gpt-oss/attention.md",
            _alternating_costs,
            why=(
                "The gpt-oss model card describes the alternation as GPT-3's pattern of dense and "
                "locally banded sparse attention: the banded layers shed their long-context cost, "
                "and the dense ones keep what is far away reachable in one step."
            ),
            cite=(PAPERS["GPT_OSS"], PAPERS["GPT_3"]),
        ),
    )


def side_by_side() -> list[tuple[ModelConfig, dict[str, int]]]:
    """Every family's first size, and each later size with a window (Mistral): total and active
    parameters, forward FLOPs per token and the KV cache at SIDE_BY_SIDE_CONTEXT tokens or the
    model's context if shorter (bfloat16), per token and in all."""
    rows = []
    for cfg in side_by_side_models():
        T = min(SIDE_BY_SIDE_CONTEXT, cfg.n_ctx)
        kv = {r.key: r.value for r in decode_costs.kv_cache_rows(cfg, T)}
        rows.append(
            (
                cfg,
                {
                    "context": T,
                    "params": accounting.params_total(cfg, "model"),
                    "active": accounting.active_params(cfg),
                    "flops": accounting.flops_per_token(cfg, "model", T),
                    "kv_token": kv["bytes.float16"],
                    "kv_context": kv["context.float16"],
                },
            )
        )
    return rows


def side_by_side_models() -> list[ModelConfig]:
    """The models one table of every family shows: each family's first size, and its later sizes
    that bring a window (Mistral, of the Llama family)."""
    return [
        cfg
        for family in FAMILIES.values()
        for index, cfg in enumerate(family.sizes.values())
        if index == 0 or cfg.sliding_window
    ]


def step_table(step: Step, cfg: ModelConfig) -> str:
    """| quantity | the way before | the family's way | ratio | as a Markdown table: the ratio
    (×6.45, ÷71.1) says what a step of the chain multiplies, and keeps a phone's column narrow."""
    lines = [
        f"| {cfg.label} | {step.before} | {step.after} | Ratio |",
        "| :-- | --: | --: | --: |",
    ]
    for label, before, after in step.costs(cfg):
        q = f"step.{step.key}"
        lines.append(
            f'| {label} | <span data-q="{q}.before">{fmt_int(before)}</span>'
            f' | <span data-q="{q}.after">{fmt_int(after)}</span>'
            f' | <span data-q="{q}.ratio">{ratio(before, after)}</span> |'
        )
    return "\n".join(lines) + "\n"


def ratio(before: int, after: int) -> str:
    """after / before as "×6.45", or "÷71.1" when it shrinks, three significant digits; "=" when
    equal; the difference ("+2,304") when three digits would round it to 1."""
    if before == after:
        return "="
    factor = f"×{after / before:.3g}" if after > before else f"÷{before / after:.3g}"
    if factor[1:] == "1":
        return f"+{fmt_int(after - before)}" if after > before else f"−{fmt_int(before - after)}"
    return factor
