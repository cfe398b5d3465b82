"""Mixture-of-experts layers in numpy: the router that picks each token's experts, the experts'
weighted sum, and the whole MoE MLP of Mixtral, DeepSeek-V3 and gpt-oss.

Each function names the transformers (5.24) code it stands for. Shapes in comments: T tokens,
d = d_model, E routed experts, k experts per token (top-k), I an expert's intermediate width,
G groups of experts (DeepSeek), S the shared experts' width.

Which experts a router keeps among equal scores: generator/models/topk.py.
"""

from __future__ import annotations

import numpy as np

from generator.errors import InputError
from generator.models.ops import softmax
from generator.models.topk import topk

ROUTERS = ("softmax-topk", "topk-softmax", "sigmoid-grouped")
# How the experts' two matrices are stored: nn.Linear's [out, in] with gate rows then up rows
# (Mixtral, DeepSeek), or transposed [in, out] with gate and up columns alternating (gpt-oss).
LAYOUTS = ("concatenated", "interleaved-transposed")
ACTIVATIONS = ("silu", "clamped")


# -- routers ---------------------------------------------------------------------------------------
def route(
    logits: np.ndarray,
    *,
    top_k: int,
    kind: str,
    norm_topk_prob: bool = True,
    n_group: int = 1,
    topk_group: int = 1,
    correction_bias: np.ndarray | None = None,
    scaling: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Each token's experts and their weights from the router's logits [T, E]: ([T, k] int64,
    [T, k]), computed in the logits' dtype, in decreasing order of the score that chose them.

    kind "softmax-topk" (MixtralTopKRouter; Qwen2MoeTopKRouter with norm_topk_prob): softmax over
    all E, the k most probable, divided by their sum if norm_topk_prob.
    kind "topk-softmax" (GptOssTopKRouter; its router's bias is in the logits): the k largest
    logits, softmax over those k.
    kind "sigmoid-grouped" (DeepseekV3TopkRouter): sigmoid scores; + correction_bias for the
    choice only; the E experts in n_group groups, a group scored by the sum of its two best, the
    topk_group best groups kept and the k best of their experts chosen; weights the chosen
    experts' unbiased scores, divided by their sum + 1e-20 if norm_topk_prob.
    Every kind's weights are then multiplied by `scaling` (DeepSeek's routed_scaling_factor).
    """
    n_experts = logits.shape[-1]
    check_routing(n_experts, top_k, kind, n_group, topk_group)
    if kind == "softmax-topk":
        probs = softmax(logits)  # [T, E]
        chosen = topk(probs, top_k)  # [T, k]
        weights = np.take_along_axis(probs, chosen, axis=-1)  # [T, k]
        if norm_topk_prob:
            weights /= weights.sum(axis=-1, keepdims=True)
    elif kind == "topk-softmax":
        chosen = topk(logits, top_k)  # [T, k]
        weights = softmax(np.take_along_axis(logits, chosen, axis=-1))  # [T, k]
    else:
        scores = _sigmoid(logits)  # [T, E]
        choice = scores if correction_bias is None else scores + correction_bias  # [T, E]
        kept = _kept_groups(choice, n_group, topk_group)  # [T, E] booleans
        chosen = topk(np.where(kept, choice, -np.inf), top_k)  # [T, k]
        weights = np.take_along_axis(scores, chosen, axis=-1)  # [T, k]
        if norm_topk_prob:
            weights /= weights.sum(axis=-1, keepdims=True) + 1e-20
    if scaling != 1.0:
        weights *= scaling
    return chosen, weights


def _kept_groups(choice: np.ndarray, n_group: int, topk_group: int) -> np.ndarray:
    """[T, E] booleans: is the expert in one of its token's topk_group best groups?

    A group's score is the sum of its two best (DeepseekV3TopkRouter's topk(2)[0].sum: two
    numbers add alike in either order, so only which two matters).
    """
    t, n_experts = choice.shape
    per_group = n_experts // n_group
    grouped = choice.reshape(t, n_group, per_group)  # [T, G, E/G]
    best_two = np.partition(grouped, per_group - 2, axis=-1)[..., per_group - 2 :]  # [T, G, 2]
    group_scores = best_two[..., 0] + best_two[..., 1]  # [T, G]
    kept = np.zeros((t, n_group), dtype=bool)  # [T, G]
    np.put_along_axis(kept, topk(group_scores, topk_group), True, axis=-1)
    return np.repeat(kept, per_group, axis=-1)  # [T, E]


def check_routing(n_experts: int, top_k: int, kind: str, n_group: int, topk_group: int) -> None:
    """Refuse a routing torch would refuse or that cannot be meant, naming the setting."""
    problem = fix = entry = None
    if kind not in ROUTERS:
        entry, problem, fix = "kind", f"unknown router {kind!r}", f"use one of {ROUTERS}"
    elif not 1 <= top_k <= n_experts:
        entry, problem = "top_k", f"top_k {top_k} of {n_experts} experts"
        fix = f"choose between 1 and {n_experts} experts per token"
    elif kind == "sigmoid-grouped" and (
        n_group < 1 or n_experts % n_group or n_experts < 2 * n_group
    ):
        entry, problem = "n_group", f"{n_experts} experts cannot form {n_group} groups of 2 or more"
        fix = "n_group must divide the expert count, each group holding at least 2 (its top-2 sum)"
    elif kind == "sigmoid-grouped" and not 1 <= topk_group <= n_group:
        entry, problem = "topk_group", f"topk_group {topk_group} of {n_group} groups"
        fix = f"keep between 1 and {n_group} groups"
    if problem:
        raise InputError(f"MoE routing: {problem}", entry=entry, fix=fix)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + e^−x), torch.sigmoid."""
    with np.errstate(over="ignore"):  # e^−x overflows to inf for x < −709: 1 / inf is 0, right
        y: np.ndarray = 1.0 / (1.0 + np.exp(-x))
        return y


# -- experts ---------------------------------------------------------------------------------------
def experts_forward(
    x: np.ndarray,
    indices: np.ndarray,
    weights: np.ndarray,
    gate_up: np.ndarray,
    down: np.ndarray,
    *,
    layout: str,
    act: str = "silu",
    gate_up_bias: np.ndarray | None = None,
    down_bias: np.ndarray | None = None,
    swiglu_alpha: float = 1.702,
    swiglu_limit: float = 7.0,
) -> np.ndarray:
    """Σ over each token's k experts of weight · expert(x) [T, d] (MixtralExperts.forward,
    DeepseekV3Experts.forward, GptOssExperts.forward).

    x [T, d]; indices, weights [T, k]. layout "concatenated": gate_up [E, 2I, d] (gate rows, then
    up rows), down [E, d, I]; "interleaved-transposed": gate_up [E, d, 2I] (gate and up columns
    alternating), down [E, I, d]. act "silu": silu(gate) · up; "clamped": gpt-oss's
    gate · sigmoid(α · gate) · (up + 1) with gate ≤ limit and −limit ≤ up ≤ limit.

    Each expert gathers its tokens once and runs one product per matrix on them; experts are added
    in ascending order, as transformers' index_add_ loop adds them. The weight multiplies the
    expert's output (after its down bias), as there.
    """
    if layout not in LAYOUTS or act not in ACTIVATIONS:
        raise InputError(
            f"MoE experts: layout {layout!r}, activation {act!r}",
            entry="layout" if layout not in LAYOUTS else "act",
            fix=f"use a layout of {LAYOUTS} and an activation of {ACTIVATIONS}",
        )
    n_tokens, k = indices.shape
    n_experts = gate_up.shape[0]
    if indices.size and not 0 <= indices.min() <= indices.max() < n_experts:
        raise InputError(
            f"MoE experts: an expert index outside 0..{n_experts - 1}",
            entry="indices",
            fix="route with the same expert count as the experts' tensors",
        )
    if layout == "concatenated":  # nn.Linear's [out, in]: the products want views as [in, out]
        gate_up, down = gate_up.transpose(0, 2, 1), down.transpose(0, 2, 1)  # [E, d, 2I], [E, I, d]
    flat = indices.reshape(-1)  # [T·k]: token t's j-th choice at t·k + j
    by_expert = np.argsort(flat, kind="stable")  # [T·k]: slots grouped by expert, tokens ascending
    tokens_of = by_expert // k  # [T·k]
    weight_of = weights.reshape(-1)[by_expert]  # [T·k]
    ends = np.cumsum(np.bincount(flat, minlength=n_experts))  # [E]
    out = np.zeros((n_tokens, x.shape[-1]), dtype=np.result_type(x, gate_up, down, weights))
    for expert in np.flatnonzero(np.diff(ends, prepend=0)):  # the experts some token chose
        slots = slice(ends[expert - 1] if expert else 0, ends[expert])
        tokens = tokens_of[slots]  # [n]
        h = x[tokens] @ gate_up[expert]  # [n, d] @ [d, 2I] -> [n, 2I]; then gated [n, I]
        if gate_up_bias is not None:
            h += gate_up_bias[expert]
        gated = _silu_gate(h) if act == "silu" else _clamped_gate(h, swiglu_alpha, swiglu_limit)
        y = gated @ down[expert]  # [n, I] @ [I, d] -> [n, d]
        if down_bias is not None:
            y += down_bias[expert]
        y *= weight_of[slots, None]
        out[tokens] += y  # a token meets an expert once: no index repeats
    return out


def _silu_gate(h: np.ndarray) -> np.ndarray:
    """silu(gate) · up of h [n, 2I] = [gate | up] (MixtralExperts: act_fn(gate) * up) [n, I]."""
    half = h.shape[-1] // 2
    return _swiglu(h[:, :half], h[:, half:])


def _swiglu(gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    """silu(gate) · up [n, I] in one new array; silu as x / (1 + e^−x), torch's."""
    out: np.ndarray = np.negative(gate)  # [n, I]
    with np.errstate(over="ignore"):  # e^−x overflows to inf for x < −709: x / inf is −0, right
        np.exp(out, out=out)
    out += 1.0
    np.divide(gate, out, out=out)
    out *= up
    return out


def _clamped_gate(h: np.ndarray, alpha: float, limit: float) -> np.ndarray:
    """GptOssExperts._apply_gate of h [n, 2I], gate and up interleaved: (up + 1) · glu [n, I]."""
    gate = np.minimum(h[:, ::2], limit)  # [n, I]: gate.clamp(max=limit)
    up: np.ndarray = np.clip(h[:, 1::2], -limit, limit)  # [n, I]
    glu = gate * _sigmoid(gate * alpha)  # [n, I]
    up += 1.0
    up *= glu
    return up
