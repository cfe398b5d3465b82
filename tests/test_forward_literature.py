"""The post-build check against published findings about GPT-2 small's heads, on made-up scores
for 12 x 12 heads (GPT-2's own run in CI, where the weights are downloaded)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from generator.cli import main
from generator.forward.analysis import HeadScore
from generator.forward.literature import KNOWN_HEADS, compare, problems, verdict


def heads(**overrides: dict[str, float]) -> list[HeadScore]:
    """144 heads with low random scores; the known heads high unless overridden ("5.5": {...})."""
    rng = np.random.default_rng(0)
    scores = {
        (layer, head): {
            "previous_token": float(rng.uniform(0, 0.2)),
            "induction": float(rng.uniform(0, 0.1)),
            "first_token": float(rng.uniform(0, 0.5)),
        }
        for layer in range(12)
        for head in range(12)
    }
    for known in KNOWN_HEADS:
        scores[(known.layer, known.head)][known.kind.replace("-", "_")] = 0.9
    for label, values in overrides.items():
        layer, head = map(int, label.split("."))
        scores[(layer, head)].update(values)
    return [HeadScore(layer, head, **s) for (layer, head), s in scores.items()]


def test_heads_as_published_raise_no_problem():
    assert problems(heads()) == []
    assert all(c.classified and c.rank in (1, 2) for c in compare(heads()))


def test_a_named_head_outside_the_top_ten_is_reported_and_the_page_says_so():
    weak = heads(**{"5.5": {"induction": 0.05}})
    found = problems(weak)
    assert len(found) == 1 and "induction head 5.5" in found[0]
    five_five = next(c for c in compare(weak) if c.known.label == "5.5")
    assert "does not mark it" in verdict(five_five) and "0.05" in verdict(five_five)


def test_an_induction_head_in_block_0_is_reported():
    found = problems(heads(**{"0.3": {"induction": 0.8}}))
    assert any("block-0" in p and "0.3" in p for p in found)


def write_site(tmp_path: Path, source: str, hs: list[HeadScore]) -> Path:
    data = {
        "source": source,
        "model": "GPT-2 small" if source == "gpt2" else "stand-in",
        "heads": [
            {
                "layer": h.layer,
                "head": h.head,
                "previous_token": h.previous_token,
                "induction": h.induction,
                "first_token": h.first_token,
            }
            for h in hs
        ],
    }
    (tmp_path / "forward").mkdir(parents=True)
    (tmp_path / "forward" / "heads.json").write_text(json.dumps(data))
    return tmp_path


def test_check_heads_command(tmp_path: Path, capsys):
    assert main(["check-heads", str(write_site(tmp_path / "a", "gpt2", heads()))]) == 0
    weak = heads(**{"4.11": {"previous_token": 0.0}})
    assert main(["check-heads", str(write_site(tmp_path / "b", "gpt2", weak))]) == 1
    assert "DISAGREES: previous-token head 4.11" in capsys.readouterr().out
    assert main(["check-heads", str(write_site(tmp_path / "c", "stand-in", heads()))]) == 1
