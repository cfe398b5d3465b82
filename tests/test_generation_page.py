"""The Generation page: its toy grids are the full forward pass's keys and values, cached rows
never change between steps, the model's choices carry the probabilities a full recompute gives,
and every number on the page is the accounting's, per size tab."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bs4 import BeautifulSoup

from generator import accounting as acc
from generator.config import CONFIGS, SIZES
from generator.engine import forward
from generator.engine.layers import softmax
from generator.engine.sampling import process
from generator.generation import data
from generator.settings import Settings
from generator.sources import load_lock
from generator.walkthrough.grids import fmt_value
from generator.walkthrough.toy import BLOCK, toy_attention
from tests.site_helpers import ROOT

PAGE = "generation/index.html"


def test_toy_cache_rows_are_the_full_pass_keys_and_values():
    full = toy_attention()  # the walkthrough's full forward pass over all five tokens
    steps = data.toy_steps()
    assert [s.new for s in steps] == [(0, 1, 2), (3,), (4,)]
    for step in steps:
        ns = len(step.cached) + len(step.new)
        np.testing.assert_allclose(step.k, full.trace["k"][:, :ns], atol=1e-12)
        np.testing.assert_allclose(step.v, full.trace["v"][:, :ns], atol=1e-12)
        last = step.new[-1]
        np.testing.assert_allclose(step.weights[:, -1], full.trace["weights"][:, last, : last + 1])
        np.testing.assert_allclose(step.scores[:, -1], full.trace["scaled"][:, last, : last + 1])
    assert full.block == BLOCK


def test_each_choice_has_the_probability_of_a_full_recompute():
    from generator.forward.pipeline import DEFAULT_PROMPT, load_model, prompt_ids

    settings = Settings.load(ROOT)
    c = data.continuation(settings)
    _, cfg, tokenizer, weights = load_model(settings)
    ids = prompt_ids(tokenizer, settings.forward_prompt or DEFAULT_PROMPT, cfg)
    assert len(c.chosen) >= 1
    for ch in c.chosen:
        assert ch.position == len(ids)
        logits = forward(weights, cfg, np.array(ids)).logits[-1]  # no cache: the whole prefix
        probs = softmax(process(logits, data.SAMPLING))
        assert ch.prob == pytest.approx(float(probs[ch.token]), abs=1e-9)
        assert ch.prob > 0
        ids.append(ch.token)


@pytest.mark.slow
def test_page_shows_the_grids_and_the_accounting(built_site: Path):
    soup = BeautifulSoup((built_site / PAGE).read_text(encoding="utf-8"), "html.parser")
    steps = soup.select(".itm-gen-step")
    assert len(steps) == len(data.TOY_CHUNKS)
    for n, (section, step) in enumerate(zip(steps, data.toy_steps(), strict=True)):
        k_rows = section.select('table[data-matrix="K"] tbody tr')
        states = [row["data-state"] for row in k_rows]
        assert states == ["new" if i in step.new else "cached" for i in range(len(k_rows))]
        shown = [[td.get_text() for td in row.select("td")] for row in k_rows]
        assert shown == [[fmt_value(float(v)) for v in row] for row in step.k[0]]
        if n:  # cached rows print exactly what the previous step printed
            before = steps[n - 1].select('table[data-matrix="K"] tbody tr')
            for i in step.cached:
                assert k_rows[i].select("td") == before[i].select("td")
    values = [int(s.get_text().replace(",", "")) for s in soup.select('[data-q="kv.values"]')]
    assert values == [acc.kv_values_per_token(CONFIGS[n]) for n in SIZES]
    links = [a["href"] for a in soup.select('a[href*="src/sample.py"]')]
    commit = load_lock(ROOT / "sources/lock.toml").repos["openai/gpt-2"].commit
    assert len(links) == 3 and all(f"/blob/{commit}/src/sample.py#L" in href for href in links)
    model = BeautifulSoup(
        (built_site / "components/model/index.html").read_text(encoding="utf-8"), "html.parser"
    )
    totals = [int(s.get_text().replace(",", "")) for s in model.select('[data-q="train.total"]')]
    assert totals == [acc.train_flops_per_token(CONFIGS[n]) for n in SIZES]
    for kind in ("generation", "training"):
        assert (built_site / f"tables/{kind}-gpt2-xl.tex").is_file()


def test_sample_py_links_point_at_the_definitions():
    """Checked only where a clone of openai/gpt-2 is configured (ITM_GIT_DIRS): no registry
    carries src/sample.py, which is why the page links to these lines instead of quoting them."""
    import hashlib
    import subprocess

    from generator.generation.feature import SAMPLE_PY

    clone = Settings.load(ROOT).git_dirs.get("openai/gpt-2")
    if clone is None:
        pytest.skip("no clone of openai/gpt-2 in ITM_GIT_DIRS")
    commit = load_lock(ROOT / "sources/lock.toml").repos["openai/gpt-2"].commit
    shown = subprocess.run(
        ["git", "-C", str(clone), "show", f"{commit}:src/sample.py"],
        capture_output=True,
        check=True,
    ).stdout
    lines = shown.decode().split("\n")
    for name, first, last in SAMPLE_PY:
        assert lines[first - 1].startswith(f"def {name}("), name
        after = lines[last:]  # the definition ends at `last`: then blank lines or the file's end
        assert all(not line.strip() for line in after[:2]), name
    # the file's hash at the commit, as recorded when the links were made
    digest = hashlib.sha256(shown).hexdigest()
    assert digest == "7a726916bdc416b296665b52ea7b87581152e16794c8eaff90bf4f89b1235771"
