"""What published interpretability work reports about GPT-2 small's heads, as data, and how the
page's own scores compare (the page shows the comparison; CI checks the deployed page against it).

Heads are named layer.head, both from 0, as in the papers and on the forward-pass page.

Sources:
- Wang, Variengien, Conmy, Shlegeris & Steinhardt (2022), "Interpretability in the Wild: a
  Circuit for Indirect Object Identification in GPT-2 small", arXiv:2211.00593 (ICLR 2023). Its
  circuit names previous-token heads 2.2 and 4.11 and induction heads 5.5 and 6.9.
- Olsson et al. (2022), "In-context Learning and Induction Heads", Transformer Circuits Thread:
  induction heads work by composing with an earlier previous-token head, so none sits in the
  first block; in small models they form in the middle layers.

The check never tunes the page's thresholds to these heads: when the page's classifier does not
mark a head the literature names, the page says so (literature_rows) and the check reports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.forward.analysis import THRESHOLDS, HeadScore

IOI = "Wang et al. 2022, arXiv:2211.00593"
RANK_WITHIN = 10  # a named head's score must be among the 10 highest of GPT-2 small's 144


@dataclass(frozen=True)
class KnownHead:
    kind: str  # a key of analysis.KINDS
    layer: int
    head: int
    source: str

    @property
    def label(self) -> str:
        return f"{self.layer}.{self.head}"


KNOWN_HEADS: tuple[KnownHead, ...] = (
    KnownHead("previous-token", 2, 2, IOI),
    KnownHead("previous-token", 4, 11, IOI),
    KnownHead("induction", 5, 5, IOI),
    KnownHead("induction", 6, 9, IOI),
)


@dataclass(frozen=True)
class Comparison:
    known: KnownHead
    score: float | None  # the page's score of that kind for that head
    rank: int | None  # 1 = the highest score of that kind among all heads
    classified: bool  # the page's classifier marks the head as that kind

    @property
    def supported(self) -> bool:
        """The page's numbers bear the paper out: among the highest scores of that kind."""
        return self.rank is not None and self.rank <= RANK_WITHIN


def compare(heads: Sequence[HeadScore]) -> list[Comparison]:
    """Each known head against the page's scores on the page's prompt."""
    out = []
    for known in KNOWN_HEADS:
        ranked = sorted(
            (h for h in heads if h.score(known.kind) is not None),
            key=lambda h: -(h.score(known.kind) or 0.0),
        )
        match = [i for i, h in enumerate(ranked) if (h.layer, h.head) == (known.layer, known.head)]
        if not match:
            out.append(Comparison(known, None, None, False))
            continue
        head = ranked[match[0]]
        out.append(
            Comparison(known, head.score(known.kind), match[0] + 1, known.kind in head.kinds)
        )
    return out


def problems(heads: Sequence[HeadScore]) -> list[str]:
    """What disagrees with the literature (empty when all agrees); for the post-build check."""
    found = []
    for c in compare(heads):
        if not c.supported:
            found.append(
                f"{c.known.kind} head {c.known.label} ({c.known.source}) ranks "
                f"{c.rank} of {len(heads)} by {c.known.kind} score ({c.score}); expected within "
                f"the top {RANK_WITHIN}"
            )
    first_block = [h.label for h in heads if h.layer == 0 and "induction" in h.kinds]
    if first_block:
        found.append(
            f"block-0 heads classified as induction heads: {', '.join(first_block)} (Olsson et "
            "al. 2022: an induction head needs an earlier previous-token head)"
        )
    return found


def verdict(c: Comparison) -> str:
    """One sentence for the page."""
    threshold = THRESHOLDS[c.known.kind]
    if c.score is None:
        return "the prompt gives no score of this kind"
    if c.classified:
        return f"the page marks it too (score {c.score:.2f}, rank {c.rank})"
    return (
        f"the page's classifier does not mark it: its score {c.score:.2f} (rank {c.rank}) is "
        f"below the threshold {threshold} on this prompt"
    )
