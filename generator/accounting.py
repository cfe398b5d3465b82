"""Exact parameter and FLOP accounting per component, as rows (label, formula, value).

Pages, LaTeX tables and the `itm numbers` CLI all print these rows, so a number on the site is
always the value of a formula shown next to it. Nothing here imports torch or numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.components import COMPONENTS as REGISTRY
from generator.config import ModelConfig
from generator.errors import InputError
from generator.render.numbers import fmt_int, tex_int

FLOP_CONVENTION: str = (
    "FLOPs are counted for the forward pass, per token, for a sequence of n_ctx tokens. "
    "One multiply-add counts as 2 FLOPs, so [m×k]·[k×n] costs 2·m·k·n. "
    "Only matrix multiplications are counted: the four projections of each block, the attention "
    "scores QKᵀ and the weighted sum A·V, and the unembedding. Scores and weighted sum are "
    "counted over the full T×T grid, masked cells included (no causal saving), which is what "
    "torch.utils.flop_counter.FlopCounterMode reports. Embedding lookups, bias additions, "
    "residual additions, LayerNorm, GELU and softmax are elementwise and are not counted."
)

KAPLAN_NOTE: str = (
    "Kaplan et al. (2020), Table 1: N ≈ 2·d_model·n_layer·(2·d_attn + d_ff) = 12·n_layer·d_model² "
    "(weights of the block matrices only: no biases, LayerNorms or embeddings) and "
    "C_forward ≈ 2N + 2·n_layer·n_ctx·d_attn. Our exact count relates to it exactly: "
    "ours = C_forward + 2·n_layer·n_ctx·d_attn + 2·d_model·n_vocab. The first extra term is "
    "because we count both QKᵀ and A·V over the full T×T grid, where Kaplan's attention term is "
    "half that; the second is the unembedding (Kaplan's de-embed row, left out of C_forward). "
    "Kaplan's N differs from the exact non-embedding count by the biases and LayerNorm "
    "parameters (13·n_layer·d_model + 2·d_model with biases), at most 1.25/d_model of N: "
    "0.14% for GPT-2 small, 0.07% for GPT-2 XL."
)

# The one component registry is generator.components; the accounting keys on its keys.
COMPONENTS: tuple[str, ...] = tuple(c.key for c in REGISTRY)
LABELS: dict[str, str] = {c.key: c.title for c in REGISTRY}

PER_BLOCK = ("ln1", "attention", "ln2", "mlp", "block")
ATTENTION_GRID = ("scores", "weighted_sum")  # the attention rows that grow with T (T×T matmuls)


@dataclass(frozen=True)
class Row:
    """One line of a table: a label and a sum of products whose value is the row's number.

    `key` is stable (code finds rows by it; GPT-2's module names where there is one), `label`
    is for readers and may be reworded freely.
    """

    key: str  # "c_attn"; in a block's rows prefixed by the module: "attn.c_attn"
    label: str  # "Fused Q, K, V projection"
    terms: tuple[tuple[int, ...], ...]  # ((768, 2304), (2304,)) means 768 × 2,304 + 2,304

    @property
    def value(self) -> int:
        return sum(math.prod(term) for term in self.terms)

    def text(self) -> str:
        """Plain text: "768 × 2,304 + 2,304"."""
        return " + ".join(" × ".join(fmt_int(f) for f in term) for term in self.terms) or "0"

    def tex(self) -> str:
        """LaTeX (math mode): "768 \\times 2{,}304 + 2{,}304"."""
        return " + ".join(" \\times ".join(tex_int(f) for f in term) for term in self.terms) or "0"


def _check(component: str) -> None:
    if component not in COMPONENTS:
        raise InputError(
            f"unknown component {component!r}",
            entry=component,
            fix=f"use one of: {', '.join(COMPONENTS)}",
        )


def _context(cfg: ModelConfig, n_ctx: int | None) -> int:
    n_ctx = cfg.n_ctx if n_ctx is None else n_ctx
    if not 1 <= n_ctx <= cfg.n_ctx:
        raise InputError(
            f"context length {n_ctx} is outside 1..{cfg.n_ctx} for {cfg.name}",
            entry=str(n_ctx),
            fix=f"pass a context between 1 and {cfg.n_ctx} (the rows of its position embedding)",
        )
    return n_ctx


def _with_bias(cfg: ModelConfig, matrix: tuple[int, int]) -> tuple[tuple[int, ...], ...]:
    """A projection's parameters: in × out, plus out when the model has biases."""
    return (matrix, (matrix[1],)) if cfg.bias else (matrix,)


def _prefixed(prefix: str, rows: list[Row], *, label: bool = True) -> list[Row]:
    """rows with `prefix.` on their keys (and `prefix ` on their labels, when `label`)."""
    return [
        Row(
            f"{prefix}.{row.key}",
            f"{prefix} {row.label[0].lower()}{row.label[1:]}" if label else row.label,
            row.terms,
        )
        for row in rows
    ]


# --- parameters -------------------------------------------------------------------------------


def param_rows(cfg: ModelConfig, component: str, *, tied: bool = True) -> list[Row]:
    """The learned tensors of one instance of `component`, one row each.

    tied: the unembedding reuses wte (GPT-2) and adds no parameters; untied adds lm_head [d, V].
    """
    _check(component)
    d, V = cfg.d_model, cfg.vocab_size
    if component == "wte":
        return [Row("wte", "Token embedding table wte", ((V, d),))]
    if component == "wpe":
        return [Row("wpe", "Position embedding table wpe", ((cfg.n_ctx, d),))]
    if component == "embed":
        return []  # wte[ids] + wpe[:T] has no parameters of its own
    if component in ("ln1", "ln2", "lnf"):
        return [Row("g", "Gain γ", ((d,),)), Row("b", "Shift β", ((d,),))]
    if component == "attention":
        return [
            Row("c_attn", "Fused Q, K, V projection", _with_bias(cfg, (d, 3 * d))),
            Row("c_proj", "Attention output projection", _with_bias(cfg, (d, d))),
        ]
    if component == "mlp":
        return [
            Row("c_fc", "MLP expansion c_fc", _with_bias(cfg, (d, cfg.d_mlp))),
            Row("c_proj", "MLP projection c_proj", _with_bias(cfg, (cfg.d_mlp, d))),
        ]
    if component == "block":
        return (
            _prefixed("ln_1", param_rows(cfg, "ln1"))
            + _prefixed("attn", param_rows(cfg, "attention"), label=False)
            + _prefixed("ln_2", param_rows(cfg, "ln2"))
            + _prefixed("mlp", param_rows(cfg, "mlp"), label=False)
        )
    if component == "unembed":
        return [] if tied else [Row("lm_head", "Unembedding lm_head (untied)", ((d, V),))]
    # model
    rows = param_rows(cfg, "wte") + param_rows(cfg, "wpe")
    blocks = params_per_instance(cfg, "block")
    rows.append(Row("h", "Transformer blocks", ((blocks, cfg.n_layer),)))
    rows.append(Row("ln_f", "Final LayerNorm ln_f", ((d,), (d,))))
    return rows + param_rows(cfg, "unembed", tied=tied)


def params_per_instance(cfg: ModelConfig, component: str, *, tied: bool = True) -> int:
    return sum(row.value for row in param_rows(cfg, component, tied=tied))


def instances(cfg: ModelConfig, component: str) -> int:
    """How many copies the model has: n_layer for the parts of a block, 1 otherwise."""
    _check(component)
    return cfg.n_layer if component in PER_BLOCK else 1


def params_total(cfg: ModelConfig, component: str, *, tied: bool = True) -> int:
    return params_per_instance(cfg, component, tied=tied) * instances(cfg, component)


# --- FLOPs ------------------------------------------------------------------------------------


def flop_rows(cfg: ModelConfig, component: str, n_ctx: int | None = None) -> list[Row]:
    """Forward FLOPs per token of one instance of `component` (matmuls only, FLOP_CONVENTION).

    n_ctx is the sequence length T (default: the model's context); only attention depends on it.
    """
    _check(component)
    T = _context(cfg, n_ctx)
    d, h, dh, V = cfg.d_model, cfg.n_head, cfg.d_head, cfg.vocab_size
    if component in ("wte", "wpe", "embed", "ln1", "ln2", "lnf"):
        return []  # lookups and elementwise work only
    if component == "attention":
        return [
            Row("c_attn", "Fused Q, K, V projection", ((2, d, 3 * d),)),
            Row("scores", "Scores QKᵀ, all heads", ((2, h, T, dh),)),
            Row("weighted_sum", "Weighted sum A·V, all heads", ((2, h, T, dh),)),
            Row("c_proj", "Attention output projection", ((2, d, d),)),
        ]
    if component == "mlp":
        return [
            Row("c_fc", "MLP expansion c_fc", ((2, d, cfg.d_mlp),)),
            Row("c_proj", "MLP projection c_proj", ((2, cfg.d_mlp, d),)),
        ]
    if component == "block":
        attn, mlp = flop_rows(cfg, "attention", T), flop_rows(cfg, "mlp", T)
        return _prefixed("attn", attn, label=False) + _prefixed("mlp", mlp, label=False)
    if component == "unembed":
        return [Row("logits", "Logits x · wteᵀ", ((2, d, V),))]
    # model
    return [
        Row("h", "Transformer blocks", ((flops_per_token(cfg, "block", T), cfg.n_layer),)),
        Row("logits", "Unembedding", ((2, d, V),)),
    ]


def flops_per_token(cfg: ModelConfig, component: str, n_ctx: int | None = None) -> int:
    """Forward FLOPs per token of one instance (× instances() for the whole model's share)."""
    return sum(row.value for row in flop_rows(cfg, component, n_ctx))


def flops_total_per_token(cfg: ModelConfig, component: str, n_ctx: int | None = None) -> int:
    return flops_per_token(cfg, component, n_ctx) * instances(cfg, component)


# --- summary ----------------------------------------------------------------------------------


def kaplan_n(cfg: ModelConfig) -> int:
    """Kaplan et al. (2020) Table 1: N ≈ 2·d_model·n_layer·(2·d_attn + d_ff)."""
    return 2 * cfg.d_model * cfg.n_layer * (2 * cfg.d_attn + cfg.d_mlp)


def kaplan_c_forward(cfg: ModelConfig, n_ctx: int | None = None) -> int:
    """Kaplan et al. (2020) Table 1: C_forward ≈ 2N + 2·n_layer·n_ctx·d_attn, per token."""
    T = _context(cfg, n_ctx)
    return 2 * kaplan_n(cfg) + 2 * cfg.n_layer * T * cfg.d_attn


def model_summary(cfg: ModelConfig, n_ctx: int | None = None) -> dict:
    """The headline numbers of one model at context n_ctx (default: its full context)."""
    T = _context(cfg, n_ctx)
    tied = params_total(cfg, "model")
    embedding = params_total(cfg, "wte") + params_total(cfg, "wpe")
    flops = flops_per_token(cfg, "model", T)
    kaplan_c = kaplan_c_forward(cfg, T)
    return {
        "name": cfg.name,
        "label": cfg.label,
        "n_ctx": T,
        "params_tied": tied,
        "params_untied": params_total(cfg, "model", tied=False),
        "embedding_params": embedding,  # wte + wpe
        "non_embedding_params": tied - embedding,  # exact: blocks and ln_f, biases included
        "kaplan_n": kaplan_n(cfg),
        "kaplan_c_forward": kaplan_c,
        "flops_per_token": flops,  # exact, FLOP_CONVENTION
        "flops_minus_kaplan": flops - kaplan_c,  # = 2·n_layer·n_ctx·d_attn + 2·d_model·n_vocab
        "flops_per_sequence": flops * T,
    }


# --- generation: the KV cache -----------------------------------------------------------------

KV_DTYPES: dict[str, int] = {"float32": 4, "float16": 2}  # bytes per cached value

DECODE_NOTE: str = (
    "Generating with a cache, the step that reads token number t (the cache holds the t − 1 "
    "before it) projects that one token and compares its query with t keys: its FLOPs are the "
    "forward FLOPs per token at T = t. Without a cache the whole prefix of t tokens is run again "
    "(every block over t positions, each at T = t), and only the last position's logits are "
    "needed. Same convention as above: matmuls only, full grids."
)


def kv_cache_rows(cfg: ModelConfig, n_ctx: int | None = None) -> list[Row]:
    """What the KV cache holds: per token (values, then bytes), then for n_ctx tokens.

    Each block keeps one key and one value vector of d_model per position (all heads side by
    side), so a token costs 2 · n_layer · d_model values. The rows are separate quantities, not
    parts of a sum.
    """
    T = _context(cfg, n_ctx)
    per_token = (2, cfg.n_layer, cfg.d_model)
    rows = [Row("values", "Values per token: a key and a value per block", (per_token,))]
    rows += [
        Row(f"bytes.{dtype}", f"Bytes per token in {dtype}", ((*per_token, size),))
        for dtype, size in KV_DTYPES.items()
    ]
    rows.append(Row("context.values", f"Values for {fmt_int(T)} tokens", ((*per_token, T),)))
    rows += [
        Row(
            f"context.{dtype}",
            f"Bytes for {fmt_int(T)} tokens in {dtype}",
            ((*per_token, T, size),),
        )
        for dtype, size in KV_DTYPES.items()
    ]
    return rows


def kv_values_per_token(cfg: ModelConfig) -> int:
    """2 · n_layer · d_model: one key and one value of width d_model per block."""
    return next(r.value for r in kv_cache_rows(cfg) if r.key == "values")


def decode_flop_rows(cfg: ModelConfig, t: int, *, cached: bool) -> list[Row]:
    """FLOPs of the decoding step that reads token number t (DECODE_NOTE), with or without cache."""
    t = _context(cfg, t)
    block = flops_per_token(cfg, "block", t)
    logits = Row("lm_head", "Logits of the last position only", ((2, cfg.d_model, cfg.vocab_size),))
    if cached:
        return [
            Row("h", "Blocks: one new position against t keys", ((block, cfg.n_layer),)),
            logits,
        ]
    return [Row("h", "Blocks: all t positions again", ((block, cfg.n_layer, t),)), logits]


def decode_flops(cfg: ModelConfig, t: int, *, cached: bool) -> int:
    return sum(row.value for row in decode_flop_rows(cfg, t, cached=cached))


def cache_crossover(cfg: ModelConfig) -> int:
    """The first t at which reading the cache (scores and weighted sum against t keys, all blocks)
    costs more FLOPs than everything else the step does (projections, MLP, logits).

    The cached step costs a + b·t; this is the smallest t with b·t > a, which may lie past n_ctx.
    """
    per_position = cache_crossover_slope(cfg)  # b
    fixed = decode_flops(cfg, 1, cached=True) - per_position  # a
    return fixed // per_position + 1


def cache_crossover_slope(cfg: ModelConfig) -> int:
    """FLOPs each cached position adds to a decoding step: scores and weighted sum, all blocks."""
    grid = sum(r.value for r in flop_rows(cfg, "attention", 1) if r.key in ATTENTION_GRID)
    return grid * cfg.n_layer  # the grid rows are linear in t


def cache_outweighs_weights(cfg: ModelConfig, dtype: str = "float32") -> int:
    """How many full-context sequences' caches outweigh the weights (same dtype): the smallest
    batch whose KV caches at n_ctx hold more values than the model has parameters."""
    per_sequence = kv_values_per_token(cfg) * cfg.n_ctx
    return params_total(cfg, "model") // per_sequence + 1


# --- training ---------------------------------------------------------------------------------

TRAIN_NOTE: str = (
    "A training step runs the forward pass and then the backward pass. Backward costs two "
    "matmuls for each forward one: the gradient with respect to the input and the gradient with "
    "respect to the weight (or, for QKᵀ and A·V, with respect to both operands). So a training "
    "token costs exactly three times its forward FLOPs under the convention above. Kaplan et "
    "al.'s rule of thumb is 6N per token, with N the non-embedding weights; it leaves out the "
    "attention grid and the unembedding."
)
ADAM_BYTES: int = 4  # float32 weights, gradients and both Adam moments


def train_flop_rows(cfg: ModelConfig, n_ctx: int | None = None) -> list[Row]:
    """FLOPs per token of one training step at context T: forward, then backward (2 × forward)."""
    forward = flops_per_token(cfg, "model", _context(cfg, n_ctx))
    return [
        Row("forward", "Forward pass", ((forward,),)),
        Row("backward", "Backward pass: gradients of inputs and of weights", ((2, forward),)),
    ]


def train_flops_per_token(cfg: ModelConfig, n_ctx: int | None = None) -> int:
    return sum(row.value for row in train_flop_rows(cfg, n_ctx))


def six_n(cfg: ModelConfig) -> int:
    """Kaplan et al.'s training FLOPs per token, 6N (N: non-embedding block weights)."""
    return 6 * kaplan_n(cfg)


def train_memory_rows(cfg: ModelConfig) -> list[Row]:
    """Bytes a float32 Adam training step keeps per parameter: weights, gradients, two moments.

    Activations come on top and depend on batch and context; they are not counted here.
    """
    n = params_total(cfg, "model")  # tied: wte is one tensor, with one gradient and one state
    return [
        Row("weights", "Weights (float32)", ((n, ADAM_BYTES),)),
        Row("gradients", "Gradients (float32)", ((n, ADAM_BYTES),)),
        Row("adam.m", "Adam first moment m", ((n, ADAM_BYTES),)),
        Row("adam.v", "Adam second moment v", ((n, ADAM_BYTES),)),
    ]
