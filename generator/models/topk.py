"""torch.topk on CPU in numpy, ties included: the k largest of a row, as the routers of
generator/models/experts.py pick their experts.

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
