"""Removing a head: the engine's silenced head equals transformers' GPT-2 with that head's output
zeroed by a hook (a different mechanism: the weights stay whole), and the page's "remove a head"
table holds transformers' numbers for the stand-in."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bs4 import BeautifulSoup

from generator.engine import forward, random_weights
from generator.forward.ablation import repeat_positions, without_head
from generator.forward.standin import load_standin
from tests.forward_helpers import TINY
from tests.site_helpers import ROOT

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
from tests.engine_helpers import hf_model  # noqa: E402  (needs torch and transformers)


def hf_logits(weights, cfg, ids, silenced: tuple[int, int] | None = None) -> np.ndarray:
    """transformers' logits [T, V] in float64; `silenced` (layer, head): a pre-hook on that
    block's attention output projection zeroes the head's slice of its input."""
    model = hf_model({k: v.astype(np.float64) for k, v in weights.items()}, cfg)
    handle = None
    if silenced is not None:
        layer, head = silenced
        d_head = cfg.d_model // cfg.n_head

        def zero_head(module, args):
            merged = args[0].clone()  # [B, T, d_model]: the heads side by side
            merged[..., head * d_head : (head + 1) * d_head] = 0
            return (merged,)

        handle = model.transformer.h[layer].attn.c_proj.register_forward_pre_hook(zero_head)
    try:
        with torch.no_grad():
            return model(torch.as_tensor(ids)[None], use_cache=False).logits[0].numpy()
    finally:
        if handle is not None:
            handle.remove()


def test_repeat_positions_follow_the_definition():
    # A B C A B D A: position 3 (A, then B) repeats positions 0-1; 4 (B, then D) does not;
    # the last position has no next token.
    assert repeat_positions(np.array([1, 2, 3, 1, 2, 4, 1])) == [3]
    assert repeat_positions(np.array([5, 6, 5, 6, 5, 6])) == [2, 3, 4]
    assert repeat_positions(np.array([7])) == []


@pytest.mark.parametrize("layer, head", [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_silenced_head_equals_transformers_with_a_hook(layer, head):
    weights = random_weights(TINY, seed=11)
    ids = np.random.default_rng(3).integers(0, TINY.vocab_size, size=20)
    ours = forward(without_head(weights, TINY, layer, head), TINY, ids).logits
    theirs = hf_logits(weights, TINY, ids, silenced=(layer, head))
    np.testing.assert_allclose(ours, theirs, atol=1e-10)
    intact = forward(weights, TINY, ids).logits
    assert np.abs(ours - intact).max() > 1e-3  # the head mattered: the check can fail
    assert weights[f"h.{layer}.attn.c_proj.weight"].any()  # the original is untouched


def _percent(text: str) -> float:
    return float(text.strip().rstrip("%")) / 100


@pytest.mark.slow
def test_page_table_holds_transformers_numbers(built_site: Path):
    soup = BeautifulSoup(
        (built_site / "forward-pass" / "index.html").read_text(encoding="utf-8"), "html.parser"
    )
    standin = load_standin(ROOT)
    cfg, words = standin.cfg, standin.tokenizer.words
    tokens = [li.select_one(".itm-token__text").get_text() for li in soup.select(".itm-token")]
    ids = np.array([words.index(t.replace("␣", " ").strip()) for t in tokens])
    positions = repeat_positions(ids)
    rows = soup.select("table.itm-removal tbody tr")
    assert rows and rows[0]["data-head"] == "none" and len(rows) > 1
    prob_of_repeat = {}
    for row in rows:
        label = row["data-head"]
        silenced = None if label == "none" else tuple(int(x) for x in label.split("."))
        logits = hf_logits(standin.weights, cfg, ids, silenced)
        probs = np.exp(logits - logits.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        actual = ids[[i + 1 for i in positions]]
        expected = probs[positions, actual].mean()
        cells = [td.get_text() for td in row.select("td")]
        assert _percent(cells[2]) == pytest.approx(expected, abs=0.0006), label
        hits = int((probs[positions].argmax(-1) == actual).sum())
        assert cells[3] == f"{hits} of {len(positions)}", label
        top = int(probs[-1].argmax())
        assert cells[4].startswith(standin.tokenizer.token_text(top).replace(" ", "␣")), label
        prob_of_repeat[label] = expected
    # The stand-in's copying rests on its pointed-out heads: each removal costs most of it.
    intact = prob_of_repeat.pop("none")
    assert intact > 0.5
    assert all(p < intact / 2 for p in prob_of_repeat.values()), prob_of_repeat
