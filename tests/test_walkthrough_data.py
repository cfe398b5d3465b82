"""The walkthrough's JSON (the file the built page fetches) against the engine, recomputed here,
and against transformers' GPT-2 holding the same toy weights."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from urllib.parse import urljoin

import numpy as np
import pytest
from bs4 import BeautifulSoup

from generator.config import TOY, TOY_TOKENS
from generator.engine import STEPS, forward, toy_token_ids, toy_weights
from tests.site_helpers import ROOT

PAGE = "walkthrough/attention/index.html"
SEED = 0  # the seed the page says it uses for toy_weights / toy_token_ids
ENGINE_FILE = ROOT / "generator" / "engine" / "attention.py"


def page_json(site: Path) -> dict:
    """The JSON the page's widget fetches: its data-src, resolved against the page's URL."""
    html = (site / PAGE).read_text(encoding="utf-8")
    root = BeautifulSoup(html, "html.parser").select_one(".itm-wt[data-src]")
    assert root is not None, "the page has no walkthrough widget"
    path = urljoin("/" + PAGE, root["data-src"]).lstrip("/")
    return json.loads((site / path).read_text(encoding="utf-8"))


def as_array(nested) -> np.ndarray:
    """JSON nested lists -> float array; null (JSON has no infinity) is −∞."""

    def walk(value):
        if isinstance(value, list):
            return [walk(v) for v in value]
        return -math.inf if value is None else value

    return np.array(walk(nested), dtype=np.float64)


ROUNDING = 5e-7  # the JSON keeps six decimals


@pytest.fixture(scope="module")
def data(built_site: Path) -> dict:
    return page_json(built_site)


@pytest.fixture(scope="module")
def engine_block():
    ids = toy_token_ids(TOY, SEED)
    return ids, forward(toy_weights(TOY, SEED), TOY, ids)


def test_json_equals_the_engine_trace(data: dict, engine_block) -> None:
    ids, trace = engine_block
    block = trace.blocks[data["block"]]
    assert data["block"] == 0
    assert data["token_ids"] == ids.tolist()
    assert len(data["tokens"]) == TOY_TOKENS == len(set(data["tokens"]))
    assert data["config"] == {
        "n_tokens": TOY_TOKENS,
        "d_model": TOY.d_model,
        "n_head": TOY.n_head,
        "d_head": TOY.d_model // TOY.n_head,
    }
    np.testing.assert_allclose(as_array(data["x"]), block.ln1, atol=ROUNDING, rtol=0)
    assert set(data["trace"]) == set(block.attention)
    for key, ours in block.attention.items():
        shown = as_array(data["trace"][key])
        assert shown.shape == ours.shape, key
        assert np.array_equal(np.isneginf(shown), np.isneginf(ours)), key
        finite = np.isfinite(ours)
        np.testing.assert_allclose(shown[finite], ours[finite], atol=ROUNDING, rtol=0, err_msg=key)
    assert sorted(data["per_head"]) == sorted(k for k, v in block.attention.items() if v.ndim == 3)


def test_json_shows_a_causal_mask_and_softmax_rows_that_sum_to_one(data: dict) -> None:
    masked = as_array(data["trace"]["masked"])  # [h, T, T]
    weights = as_array(data["trace"]["weights"])
    T = masked.shape[-1]
    above = np.triu(np.ones((T, T), dtype=bool), k=1)  # j > i
    assert np.all(np.isneginf(masked[:, above])) and np.all(np.isfinite(masked[:, ~above]))
    assert np.all(weights[:, above] == 0)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=T * ROUNDING)


def test_steps_are_the_engines_and_point_at_its_step_markers(data: dict) -> None:
    """Each step's lines start at its `# step: NAME` marker in the engine's file, read here."""
    lines = ENGINE_FILE.read_text(encoding="utf-8").split("\n")
    markers = {
        m.group(1): number
        for number, line in enumerate(lines, start=1)
        if (m := re.match(r"\s*# step: (\S+)\s*$", line))
    }
    assert [s["key"] for s in data["steps"]] == list(STEPS) == list(markers)
    ends = [first - 1 for first in list(markers.values())[1:]]
    for step, end in zip(data["steps"], [*ends, None], strict=True):
        first, last = step["lines"]
        assert first == markers[step["key"]]
        assert first <= last and (end is None or last <= end)
        assert all(lines[n - 1].strip() for n in (first, last))  # no blank edges
        assert set(step["show"]) <= set(data["trace"])


def test_json_bytes_are_canonical(built_site: Path) -> None:
    """Sorted keys and compact separators: the same trace always gives the same bytes."""
    html = (built_site / PAGE).read_text(encoding="utf-8")
    src = BeautifulSoup(html, "html.parser").select_one(".itm-wt[data-src]")["data-src"]
    raw = (built_site / urljoin("/" + PAGE, src).lstrip("/")).read_bytes()
    canonical = json.dumps(
        json.loads(raw), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )
    assert raw == (canonical + "\n").encode("utf-8")


@pytest.mark.slow
def test_json_equals_transformers_attention_on_the_same_toy_weights(data: dict) -> None:
    """Independent truth: transformers' eager GPT-2 attention, block 0, same weights and ids."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.engine_helpers import hf_model, hf_trace

    ids = np.array(data["token_ids"])
    theirs = hf_trace(hf_model(toy_weights(TOY, SEED), TOY), ids)
    b = data["block"]
    np.testing.assert_allclose(as_array(data["x"]), theirs[f"{b}.ln1"], atol=ROUNDING, rtol=0)
    for key, nested in data["trace"].items():
        shown, expected = as_array(nested), theirs[f"{b}.attention.{key}"]
        assert shown.shape == expected.shape, key
        if key == "masked":  # transformers adds finfo.min where we show −∞
            hidden = np.isneginf(shown)
            assert np.all(expected[hidden] <= np.finfo(expected.dtype).min / 2)
            shown, expected = shown[~hidden], expected[~hidden]
        np.testing.assert_allclose(shown, expected, atol=2 * ROUNDING, rtol=0, err_msg=key)
