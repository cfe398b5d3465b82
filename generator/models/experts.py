"""Mixture-of-experts layers in numpy: the router that picks each token's experts, the experts'
weighted sum, and the whole MoE MLP of Mixtral, DeepSeek-V3 and gpt-oss.

Each function names the transformers (5.24) code it stands for. Shapes in comments: T tokens,
d = d_model, E routed experts, k experts per token (top-k), I an expert's intermediate width,
G groups of experts (DeepSeek), S the shared experts' width.

Ties. torch.topk on CPU keeps the k largest of (value, index) pairs compared by value alone (NaN
counts as the largest), with libstdc++'s std::nth_element when k·64 > n and std::partial_sort
otherwise (aten/src/ATen/native/TopKImpl.h). Which of equal values it keeps follows those
algorithms' moves, not the lowest index: of 8 equal logits, top-2 keeps experts 6 and 5, top-1
expert 6. `topk` keeps the same set: when a row's k-th and (k+1)-th largest differ (or k = n) the
set is unique and numpy's sort finds it; a row where they tie (or holding NaN) runs
`torch_topk_order`, a port of those two algorithms, which returns torch.topk(sorted=False)'s
indices in its order (tests/test_models_experts.py checks it on rows of many ties, n up to 700;
it would catch a torch that keeps equal values otherwise, e.g. a hand-written k-heap).
Only the set changes an output: every caller reads the chosen values by index, and the experts'
sum runs in ascending expert order whatever order the indices come in. `topk` returns them
largest first, torch.topk(sorted=True)'s order, so Mixtral's and gpt-oss's sums over the k
weights add the same numbers in the same order. DeepSeek's router asks for sorted=False: its
normalising sum adds the same k numbers in another order, which can move its last bit.

Equal values stay equal through softmax and sigmoid, so ties built from equal logits (a zero
router row, equal biases) are seen alike here and in torch. Logits a rounding apart are not: a
near-tie that numpy's and torch's float arithmetic round differently can pick different experts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from generator.errors import InputError
from generator.models.ops import softmax

ROUTERS = ("softmax-topk", "topk-softmax", "sigmoid-grouped")
# How the experts' two matrices are stored: nn.Linear's [out, in] with gate rows then up rows
# (Mixtral, DeepSeek), or transposed [in, out] with gate and up columns alternating (gpt-oss).
LAYOUTS = ("concatenated", "interleaved-transposed")
ACTIVATIONS = ("silu", "clamped")


# -- torch.topk on CPU, ties included ------------------------------------------------------------
Pair = tuple[float, int]  # (value, index), as torch's topk queues them


def _before(a: Pair, b: Pair) -> bool:
    """torch's comparator for largest=True: NaN before numbers, then the larger value first."""
    return (math.isnan(a[0]) and not math.isnan(b[0])) or a[0] > b[0]


def _sift_up(q: list[Pair], first: int, hole: int, top: int, value: Pair) -> None:
    parent = (hole - 1) // 2  # libstdc++ std::__push_heap
    while hole > top and _before(q[first + parent], value):
        q[first + hole] = q[first + parent]
        hole, parent = parent, (parent - 1) // 2
    q[first + hole] = value


def _adjust_heap(q: list[Pair], first: int, hole: int, n: int, value: Pair) -> None:
    top, child = hole, hole  # libstdc++ std::__adjust_heap: down to a leaf, then up again
    while child < (n - 1) // 2:
        child = 2 * (child + 1)
        if _before(q[first + child], q[first + child - 1]):
            child -= 1
        q[first + hole] = q[first + child]
        hole = child
    if n % 2 == 0 and child == (n - 2) // 2:
        child = 2 * (child + 1)
        q[first + hole] = q[first + child - 1]
        hole = child - 1
    _sift_up(q, first, hole, top, value)


def _pop_heap(q: list[Pair], first: int, last: int, result: int) -> None:
    value, q[result] = q[result], q[first]  # std::__pop_heap
    _adjust_heap(q, first, 0, last - first, value)


def _heap_select(q: list[Pair], first: int, middle: int, last: int) -> None:
    """std::__heap_select: q[first:middle] becomes a heap of the middle − first first-ordered."""
    n = middle - first
    for parent in range((n - 2) // 2, -1, -1) if n >= 2 else ():  # std::__make_heap
        _adjust_heap(q, first, parent, n, q[first + parent])
    for i in range(middle, last):
        if _before(q[i], q[first]):
            _pop_heap(q, first, middle, i)


def _partial_sort(q: list[Pair], k: int) -> None:
    """std::partial_sort(q, q + k, q + n): the first k in order."""
    _heap_select(q, 0, k, len(q))
    for last in range(k - 1, 0, -1):  # std::__sort_heap
        _pop_heap(q, 0, last, last)


def _partition_pivot(q: list[Pair], first: int, last: int) -> int:
    """std::__unguarded_partition_pivot: median of three moved to first, then Hoare's partition."""
    a, b, c = first + 1, first + (last - first) // 2, last - 1
    if _before(q[a], q[b]):
        median = b if _before(q[b], q[c]) else c if _before(q[a], q[c]) else a
    else:
        median = a if _before(q[a], q[c]) else c if _before(q[b], q[c]) else b
    q[first], q[median] = q[median], q[first]
    lo, hi = first + 1, last
    while True:
        while _before(q[lo], q[first]):
            lo += 1
        hi -= 1
        while _before(q[first], q[hi]):
            hi -= 1
        if lo >= hi:
            return lo
        q[lo], q[hi] = q[hi], q[lo]
        lo += 1


def _insertion_sort(q: list[Pair], first: int, last: int) -> None:
    for i in range(first + 1, last):  # std::__insertion_sort
        value = q[i]
        if _before(value, q[first]):
            q[first + 1 : i + 1] = q[first:i]
            q[first] = value
            continue
        j = i  # std::__unguarded_linear_insert
        while _before(value, q[j - 1]):
            q[j] = q[j - 1]
            j -= 1
        q[j] = value


def _nth_element(q: list[Pair], nth: int) -> None:
    """std::nth_element(q, q + nth, q + n) (std::__introselect)."""
    first, last = 0, len(q)
    depth = 2 * (last.bit_length() - 1)  # 2·floor(log2 n)
    while last - first > 3:
        if depth == 0:
            _heap_select(q, first, nth + 1, last)
            q[first], q[nth] = q[nth], q[first]
            return
        depth -= 1
        cut = _partition_pivot(q, first, last)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(q, first, last)


def torch_topk_order(row: Sequence[float], k: int) -> list[int]:
    """torch.topk(row, k, sorted=False).indices on CPU, in its order (TopKImpl.h's topk_impl_loop).

    A port of the libstdc++ algorithms torch runs, for the rows where ties decide: Python-speed.
    """
    queue = [(float(value), index) for index, value in enumerate(row)]
    if k * 64 <= len(queue):
        _partial_sort(queue, k)
    else:
        _nth_element(queue, k - 1)
    return [index for _, index in queue[:k]]


def topk(values: np.ndarray, k: int) -> np.ndarray:
    """[T, n] -> [T, k] int64: each row's k largest, largest first; the set torch.topk keeps on
    CPU, ties and NaN included (module docstring)."""
    n = values.shape[-1]
    order = np.argsort(values, axis=-1, kind="stable")[:, ::-1]  # [T, n] largest (NaN) first
    chosen = np.ascontiguousarray(order[:, :k])  # [T, k]
    if k == n:
        return chosen
    edge = np.take_along_axis(values, order[:, k - 1 : k + 1], axis=-1)  # [T, 2]: k-th, (k+1)-th
    undecided = (edge[:, 0] == edge[:, 1]) | np.isnan(edge[:, 0])  # [T]
    for t in np.flatnonzero(undecided):
        kept = torch_topk_order(values[t].tolist(), k)
        chosen[t] = sorted(kept, key=lambda j: (not math.isnan(values[t, j]), -values[t, j]))
    return chosen


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
