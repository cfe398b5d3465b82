"""Per-head scores measured on the attention weights of one forward pass.

For a head's attention pattern A [T, T] (row i: how query position i spreads its attention over
key positions j <= i) and the prompt's token ids:
- previous-token score: mean over i >= 1 of A[i, i-1];
- first-token score: mean over i >= 1 of A[i, 0] (position 0 sees only itself, so it is left out);
- induction score: over every position i whose token occurred earlier at some j < i - 1, the
  attention from i to the tokens that followed those earlier occurrences, sum over j of A[i, j+1],
  averaged over such positions. A head that does "A B ... A -> look at B" scores near 1.
Each score has a chance level: the same average for a head that spreads its attention evenly.
A head is pointed out as a kind when its score reaches that kind's threshold below.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KINDS = ("previous-token", "induction", "first-token")
THRESHOLDS = {"previous-token": 0.4, "induction": 0.3, "first-token": 0.6}
SHORT = {"previous-token": "P", "induction": "I", "first-token": "F"}


class HeadNames:
    """A head's names, from its `layer` (0-based block index, as in transformers' h.{layer})
    and `head` (0-based within the block)."""

    layer: int
    head: int

    @property
    def label(self) -> str:
        """The usual "layer.head" name, e.g. "5.1"."""
        return f"{self.layer}.{self.head}"

    @property
    def anchor(self) -> str:
        """The id of this head's cell on the forward-pass page, e.g. "head-5-1"."""
        return head_anchor(self.layer, self.head)


@dataclass(frozen=True)
class HeadScore(HeadNames):
    layer: int
    head: int
    previous_token: float
    induction: float | None  # None when the prompt repeats no token
    first_token: float

    def score(self, kind: str) -> float | None:
        return {
            "previous-token": self.previous_token,
            "induction": self.induction,
            "first-token": self.first_token,
        }[kind]

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds whose threshold this head's scores reach, in KINDS order."""
        found = []
        for kind in KINDS:
            value = self.score(kind)
            if value is not None and value >= THRESHOLDS[kind]:
                found.append(kind)
        return tuple(found)


def head_anchor(layer: int, head: int) -> str:
    return f"head-{layer}-{head}"


def induction_targets(token_ids: np.ndarray) -> dict[int, list[int]]:
    """{i: [j+1 for each earlier j < i-1 with token j == token i]} for every repeated position."""
    targets: dict[int, list[int]] = {}
    seen: dict[int, list[int]] = {}
    for i, token in enumerate(int(t) for t in token_ids):
        earlier = [j + 1 for j in seen.get(token, []) if j + 1 < i]
        if earlier:
            targets[i] = earlier
        seen.setdefault(token, []).append(i)
    return targets


def previous_token_score(pattern: np.ndarray) -> float:
    """Mean attention from each position to the one before it. pattern: [T, T]."""
    T = pattern.shape[0]
    return float(np.mean(pattern[np.arange(1, T), np.arange(T - 1)])) if T > 1 else 0.0


def first_token_score(pattern: np.ndarray) -> float:
    """Mean attention from positions 1.. to position 0. pattern: [T, T]."""
    return float(np.mean(pattern[1:, 0])) if pattern.shape[0] > 1 else 0.0


def induction_score(pattern: np.ndarray, targets: dict[int, list[int]]) -> float | None:
    """Mean over repeated positions i of the attention on the tokens after i's earlier copies."""
    if not targets:
        return None
    return float(np.mean([pattern[i, js].sum() for i, js in targets.items()]))


def score_heads(weights: list[np.ndarray], token_ids: np.ndarray) -> list[HeadScore]:
    """Scores of every head; weights[layer] is that block's attention [n_head, T, T]."""
    targets = induction_targets(token_ids)
    scores = []
    for layer, block in enumerate(weights):
        for head, pattern in enumerate(block):
            scores.append(
                HeadScore(
                    layer=layer,
                    head=head,
                    previous_token=previous_token_score(pattern),
                    induction=induction_score(pattern, targets),
                    first_token=first_token_score(pattern),
                )
            )
    return scores


def chance_scores(token_ids: np.ndarray) -> dict[str, float | None]:
    """Each score for a head that attends evenly to every visible position."""
    T = len(token_ids)
    uniform = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]  # row i: 1/(i+1) each
    return {
        "previous-token": previous_token_score(uniform),
        "induction": induction_score(uniform, induction_targets(token_ids)),
        "first-token": first_token_score(uniform),
    }


def strongest(scores: list[HeadScore], kind: str, n: int = 3) -> list[HeadScore]:
    """The n heads with the highest score of `kind` (ties by position), strongest first."""
    ranked = [s for s in scores if s.score(kind) is not None]
    ranked.sort(key=lambda s: (-(s.score(kind) or 0.0), s.layer, s.head))  # None filtered out
    return ranked[:n]
