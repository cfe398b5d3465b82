"""What enters an engine, checked: a weight dict against the size's tensors, and token ids.

A family's tensors module says which tensors a size has and their shapes (`weight_shapes(cfg)`);
check_weights compares a weight dict (or a checkpoint's header: names and shapes) with it. A
missing tensor, an extra one or a wrong shape is an InputError naming the family, the size, the
tensor and the fix: an engine never runs on a dict it would have to fill in (a missing bias read
as zero shifts every logit).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from generator.errors import InputError
from generator.models.config import ModelConfig

Weights = dict[str, np.ndarray]
Shapes = Mapping[str, tuple[int, ...]]
LAYER_INDEX = re.compile(r"(?:^|\.)(\d+)\.")  # "h.3." (GPT-2), "model.layers.3." (Llama)


def check_weights(
    weights: Mapping[str, np.ndarray],
    cfg: ModelConfig,
    expected: Shapes,
    *,
    file: str | None = None,
) -> None:
    """Every tensor of `expected` is in weights with its shape, and no other is."""
    check_shapes(
        {name: tuple(np.shape(value)) for name, value in weights.items()}, cfg, expected, file=file
    )


def check_shapes(
    found: Shapes, cfg: ModelConfig, expected: Shapes, *, file: str | None = None
) -> None:
    """The same check on names and shapes alone (a checkpoint's header, before reading it)."""
    size = f"{cfg.family} size {cfg.name!r} ({cfg.label})"
    for name, shape in found.items():
        if name not in expected:
            raise InputError(
                f"unexpected tensor: {size} has no tensor {name!r}",
                file=file,
                entry=name,
                fix=size_hint(found, cfg, expected) or extra_hint(name, cfg, expected),
            )
        want = tuple(expected[name])
        if tuple(shape) != want:
            problem = f"shape {list(shape)}, expected {list(want)} for {size}"
            fix = shape_hint(tuple(shape), want, found, cfg, expected)
            if size_hint(found, cfg, expected) is None:
                problem, fix = expert_count(name, tuple(shape), want, cfg) or (problem, fix)
            raise InputError(problem, file=file, entry=name, fix=fix)
    missing = [name for name in expected if name not in found]
    if missing:
        listed = ", ".join(missing[:5]) + (
            f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        )
        raise InputError(
            f"missing {len(missing)} tensor(s) of {size}: {listed}",
            file=file,
            entry=missing[0],
            fix=size_hint(found, cfg, expected)
            or "write the weights again with every tensor: a missing one is never read as zero",
        )


def size_hint(found: Shapes, cfg: ModelConfig, expected: Shapes) -> str | None:
    """Suggest the size whose layer count and width match the tensors found; None when the
    weights already have cfg's layer count and width (the fault is the tensor, not the size)."""
    layers = {int(m.group(1)) for name in found if (m := LAYER_INDEX.search(name))}
    embedding = next(iter(expected))  # both families list the token embedding first
    width = found[embedding][-1] if found.get(embedding) else None
    if len(layers) == cfg.n_layer and width == cfg.d_model:
        return None
    have = f"the weights have {len(layers)} block(s)" + (f" of width {width}" if width else "")
    want = f"{cfg.name} needs {cfg.n_layer} of width {cfg.d_model}, {biases_of(cfg)}"
    return f"pick the model size that matches the weights ({have}; {want})"


def expert_count(
    name: str, shape: tuple[int, ...], want: tuple[int, ...], cfg: ModelConfig
) -> tuple[str, str] | None:
    """(problem, fix) when `name`, a tensor of an MoE layer holding one slice per expert on its
    first axis (the router's rows, the stacked experts and their biases), holds too few or too
    many of them: which experts of which layer are missing or extra. None otherwise."""
    moe, match = cfg.experts, LAYER_INDEX.search(name)
    if moe is None or match is None or not cfg.moe_layer(layer := int(match.group(1))):
        return None
    if not name.startswith(f"{cfg.names.layer.format(i=layer)}{cfg.names.mlp}."):
        return None  # a layer's attention (gpt-oss's sinks: one per head, not per expert)
    E, n = moe.n_experts, shape[0] if shape else 0
    if len(shape) != len(want) or shape[1:] != want[1:] or want[0] != E or n == E:
        return None
    held = f"{name} holds {n} expert(s) on its first axis, shape {list(shape)}"
    expected = f"expected {list(want)}: {cfg.name} has {E} experts a layer, 0 to {E - 1}"
    if n < E:
        verb = "is" if n == E - 1 else "are"
        return (
            f"{_experts(n, E - 1)} of layer {layer} {verb} missing: {held}, {expected}",
            f"write the weights again with all {E} experts of layer {layer} stacked in {name}"
            f" (a missing expert is never read as zero), or set experts.n_experts = {n} if the"
            " model has that many",
        )
    return (
        f"layer {layer} carries extra {_experts(E, n - 1)}: {held}, {expected}",
        f"keep only the model's {E} experts in {name}, or set experts.n_experts = {n} if the"
        " model has that many",
    )


def _experts(first: int, last: int) -> str:
    """ "expert 7", "experts 6 to 7"."""
    return f"expert {first}" if first == last else f"experts {first} to {last}"


def biases_of(cfg: ModelConfig) -> str:
    """Which projections have biases, in words: "biases on q, k, v only", "no projection biases"."""
    biased = [p for p in ("q", "k", "v", "o", "mlp") if cfg.biased(p)]
    if not biased:
        return "no projection biases"
    if len(biased) == 5:
        return "biases on every projection"
    return f"biases on {', '.join(biased)} only"


def extra_hint(name: str, cfg: ModelConfig, expected: Shapes) -> str:
    """The fix for a tensor cfg does not have, when the weights are cfg's size otherwise."""
    if name.endswith(".bias") and name not in expected:
        return f"remove {name!r}: {cfg.name} has {biases_of(cfg)}"
    return f"remove {name!r} from the weights: {cfg.name} has no use for it"


def shape_hint(
    shape: tuple[int, ...], want: tuple[int, ...], found: Shapes, cfg: ModelConfig, expected: Shapes
) -> str:
    if len(shape) == 2 and shape[::-1] == want:
        return (
            f"the matrix is stored transposed: {cfg.family} keeps it as {list(want)}; transpose it"
        )
    if len(shape) > 2 and shape[:-2] + shape[:-3:-1] == want:  # stacked experts, [in, out] swapped
        return (
            f"its last two axes are swapped: {cfg.family} keeps it as {list(want)} (each expert's"
            " matrix as its checkpoint lays it out); transpose those two axes"
        )
    return size_hint(found, cfg, expected) or (
        f"write it with shape {list(want)}: the weights' layer count and width are {cfg.name}'s, "
        "this tensor's shape is not"
    )


def cast(w: Mapping[str, np.ndarray], dtype: np.dtype | type) -> Weights:
    """The same tensors as `dtype` (no copy when they already are)."""
    return {name: np.asarray(value, dtype=dtype) for name, value in w.items()}


def sub_weights(w: Mapping[str, np.ndarray], prefix: str) -> Weights:
    """The tensors under `prefix` ("h.0.attn."), with the prefix stripped ("c_attn.weight")."""
    return {name[len(prefix) :]: value for name, value in w.items() if name.startswith(prefix)}


def check_token_ids(cfg: ModelConfig, token_ids: np.ndarray) -> None:
    """Token ids must be a 1-D sequence of valid ids, no longer than the context."""
    problem = None
    if token_ids.ndim != 1:
        problem = f"token ids must be one sequence [T], got shape {list(token_ids.shape)}"
    elif not 1 <= token_ids.shape[0] <= cfg.n_ctx:
        problem = f"{token_ids.shape[0]} tokens; {cfg.name} reads 1 to {cfg.n_ctx}"
    elif token_ids.min() < 0 or token_ids.max() >= cfg.vocab_size:
        problem = f"token ids outside [0, {cfg.vocab_size}) for {cfg.name}"
    if problem:
        raise InputError(
            problem,
            entry="token_ids",
            fix=f"pass 1 to {cfg.n_ctx} ids, each in [0, {cfg.vocab_size})",
        )
