"""The Generation page: its toy grids are the full forward pass's keys and values, cached rows
never change between steps, the model's choices carry the probabilities a full recompute gives,
and every number on the page is the accounting's, per size tab."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import numpy as np
import pytest
from bs4 import BeautifulSoup

from generator import blocks, decode_costs, scaling
from generator.config import CONFIGS, SIZES
from generator.engine import forward
from generator.engine.layers import softmax
from generator.engine.sampling import Chosen, process
from generator.generation import data, feature
from generator.generation.feature import SAMPLE_CODE, SAMPLE_LINKS
from generator.render.code import fence_id
from generator.settings import Settings
from generator.sources.excerpt import omission_marker
from generator.sources.lock import load_lock
from generator.sources.resolve import resolve_all
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


def test_hostile_token_texts_reach_the_tables_as_text_and_a_site_can_override_a_grid(
    monkeypatch, tmp_path: Path
):
    """Token texts are the tokenizer's, not ours: the templates escape them (and the "<0.1%" of
    a near-zero probability), so the blocks show them exactly and add no tag; a template in the
    site's custom_dir/itm replaces the generator's, inside the blocks that nest it too."""
    evil = ["<|endoftext|>", '<script>alert("x")</script>', " a&b", "</code><i>'"]
    probs = np.array([0.0, 0.9996, 0.0003, 0.0001])
    run = data.Continuation(
        cfg=CONFIGS["gpt2"],
        is_gpt2=True,
        prompt=evil[:3],
        chosen=[Chosen(position=3, token=3, prob=0.0001, candidates=[(1, 0.9996), (3, 0.0001)])],
        texts=dict(enumerate(evil)),
        unsure=2,
        top_p=(0.9, 1, 1),
        filters=[("top-k <2>", probs)],
    )
    monkeypatch.setattr(data, "continuation", lambda settings: run)
    for block in (feature.filters_block(None), feature.continuation_block(None)):
        soup = BeautifulSoup(blocks.render(block), "html.parser")
        assert not soup.select("script, i"), block.template
        shown = {code.get_text() for code in soup.select("code")}
        assert feature.show(evil[3]) in shown, block.template
        assert "<0.1%" in soup.get_text() and ">99.9%" in soup.get_text()
    filters = BeautifulSoup(blocks.render(feature.filters_block(None)), "html.parser")
    assert [th.get_text() for th in filters.select("thead th")] == ["token", "top-k <2>"]
    assert feature.show("".join(evil[1:3])) in {c.get_text() for c in filters.select("code")}

    (tmp_path / "itm").mkdir()
    (tmp_path / "itm" / "generation_kv_grid.html").write_text(
        "<table class=mine>{{ name }}</table>"
    )
    toy = blocks.render(feature.toy_block(), tmp_path)
    assert toy.count("<table class=mine>K</table><table class=mine>V</table>") == len(
        data.TOY_CHUNKS
    )
    assert toy.count('class="itm-wt-grid itm-gen-row"') == len(data.TOY_CHUNKS)  # not overridden


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
    assert values == [decode_costs.kv_values_per_token(CONFIGS[n]) for n in SIZES]
    commit = load_lock(ROOT / "sources/lock.toml").repos["openai/gpt-2"].commit
    links = {a["href"] for a in soup.select('a[href*="src/sample.py"]')}
    assert all(f"/blob/{commit}/src/sample.py#L" in href for href in links)
    anchors = {href.rsplit("#", 1)[1] for href in links}
    # the quoted excerpts' permalinks, and the lines no PyPI copy carries unchanged
    assert anchors == {"L5-L22", "L44-L95"} | {
        f"L{a}" if a == b else f"L{a}-L{b}" for _, a, b in SAMPLE_LINKS
    }
    assert_sample_py_quoted(soup)
    model = BeautifulSoup(
        (built_site / "components/model/index.html").read_text(encoding="utf-8"), "html.parser"
    )
    totals = [int(s.get_text().replace(",", "")) for s in model.select('[data-q="train.total"]')]
    assert totals == [scaling.train_flops_per_token(CONFIGS[n]) for n in SIZES]
    for kind in ("generation", "training"):
        assert (built_site / f"tables/{kind}-gpt2-xl.tex").is_file()


def assert_sample_py_quoted(soup: BeautifulSoup) -> None:
    """The sample.py excerpts stand on the page run by run, numbered at their upstream lines,
    with the omission marker between runs."""
    excerpts = resolve_all(
        load_lock(ROOT / "sources/lock.toml"), cache_dir=ROOT / ".cache", offline=True
    )
    for excerpt_id in SAMPLE_CODE:
        excerpt = excerpts[excerpt_id]
        for first, text in excerpt.blocks:
            block = soup.select_one(f"div.highlight#{fence_id('gen-sample', excerpt_id, first)}")
            assert block is not None, (excerpt_id, first)
            code = block.select_one("td.code").get_text().rstrip("\n").split("\n")
            assert code == text.rstrip("\n").split("\n"), (excerpt_id, first)
            numbers = [int(n.get_text()) for n in block.select("td.linenos span.normal")]
            assert numbers == list(range(first, first + len(code)))
    markers = [p.get_text() for p in soup.select("p.itm-omitted")]
    assert omission_marker((66, 66)) in markers


def clone_sample_py() -> list[str]:
    """src/sample.py at the pinned commit from the clone in ITM_GIT_DIRS (skip without one)."""
    clone = Settings.load(ROOT).git_dirs.get("openai/gpt-2")
    if clone is None:
        pytest.skip("no clone of openai/gpt-2 in ITM_GIT_DIRS")
    commit = load_lock(ROOT / "sources/lock.toml").repos["openai/gpt-2"].commit
    shown = subprocess.run(
        ["git", "-C", str(clone), "show", f"{commit}:src/sample.py"],
        capture_output=True,
        check=True,
    ).stdout
    # the file's hash at the commit (UPSTREAM.md): 95 lines
    digest = hashlib.sha256(shown).hexdigest()
    assert digest == "7a726916bdc416b296665b52ea7b87581152e16794c8eaff90bf4f89b1235771"
    return shown.decode().split("\n")


def test_sample_py_excerpts_are_the_lines_at_the_pinned_commit():
    """Checked only where a clone of openai/gpt-2 is configured (ITM_GIT_DIRS): the quoted
    excerpts equal the file's lines at the commit, and the linked lines are the definitions and
    the lines no PyPI copy carries unchanged."""
    lines = clone_sample_py()
    lock = load_lock(ROOT / "sources/lock.toml")
    for excerpt_id in SAMPLE_CODE:
        pin = lock.pin(excerpt_id)
        assert pin.path == "src/sample.py"
        text = "".join(line + "\n" for a, b in pin.ranges for line in lines[a - 1 : b])
        assert hashlib.sha256(text.encode()).hexdigest() == pin.sha256, excerpt_id
    assert lock.pin("gpt2.top-k-logits").ranges == ((5, 22),)
    assert lines[4].startswith("def top_k_logits(")
    (before, after) = lock.pin("gpt2.sample-sequence").ranges
    assert lines[before[0] - 2].startswith("def sample_sequence(") and after[1] == len(lines) - 1
    assert "past=past" in lines[50] and "past=past" in lines[62]  # step and body: model with past
    assert "tf.concat([past, next_outputs['presents']], axis=-2)" in lines[68]
    (top_p, signature, top_p_call) = SAMPLE_LINKS
    assert lines[top_p[1] - 1].startswith("def top_p_logits(") and not lines[top_p[2]].strip()
    assert lines[signature[1] - 1].startswith("def sample_sequence(")
    assert "top_p_logits(" in lines[top_p_call[1] - 1]


def test_toy_blocks_and_heads_are_numbered_from_zero_as_on_the_walkthrough(built_site: Path):
    """The walkthrough and the forward pass call the toy's first head "head 0": so does this page."""
    soup = BeautifulSoup((built_site / PAGE).read_text(encoding="utf-8"), "html.parser")
    captions = [c.get_text() for c in soup.select(".itm-gen-step caption")]
    assert captions and all(f"block {BLOCK}, head 0 ·" in c for c in captions if "·" in c)
    assert all("head 0:" in c for c in captions if "query" in c)
    walkthrough = BeautifulSoup(
        (built_site / "walkthrough/attention/index.html").read_text(encoding="utf-8"), "html.parser"
    )
    assert f"block {BLOCK} · head 0" in walkthrough.select_one(".itm-wt-sub").get_text()
    assert "head 1" not in soup.select_one("article").get_text()
