"""The walkthrough's trained head: the stand-in's induction head on a phrase that repeats (checked
against transformers' GPT2LMHeadModel on the same committed weights), and on a build with GPT-2's
weights a GPT-2 head (here a tiny GPT-2-shaped checkpoint the test writes, as the forward-pass
tests do), traced through the seven steps and written in the toy's JSON shape."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from generator import config
from generator.checkpoints import PINS_FILE
from generator.engine import forward
from generator.forward.analysis import THRESHOLDS, induction_score, induction_targets
from generator.settings import Settings
from generator.walkthrough import trained
from generator.walkthrough.code import engine_excerpt
from generator.walkthrough.data import trained_data
from tests.forward_helpers import TINY_LONG, block_network, pins_toml, write_tiny_checkpoint
from tests.site_helpers import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture
def standin_head(monkeypatch) -> trained.TrainedHead:
    for name in ("ITM_GPT2_WEIGHTS", "ITM_DOWNLOAD_WEIGHTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(ROOT / "no-such-hub"))  # no GPT-2 here: the stand-in
    return trained.compute(Settings.load(ROOT))


def test_the_stand_ins_induction_head_is_traced_and_reads_the_earlier_copy(standin_head) -> None:
    head = standin_head
    assert head.model == "stand-in" and not head.is_gpt2
    assert "".join(head.tokens[1:]).strip() == "The quick brown fox. The quick brown fox"
    # The strongest induction head, and a real one: far above an even spread.
    assert head.induction >= THRESHOLDS["induction"] > head.chance
    pattern = head.trace["weights"][0]  # [T, T]
    assert induction_score(pattern, induction_targets(head.token_ids)) == head.induction
    r = trained.reading(head)
    assert r is not None and r.top == r.target and r.weight > 0.5 > r.even
    assert head.tokens[r.copy] == head.tokens[r.row]  # the earlier copy of the last word
    words = trained.trained_words(head, "F#x")
    assert "That is an induction head" in words["softmax"]
    assert f"{r.weight:.2f}" in words["softmax"] and 'href="F#x"' in words["softmax"]


def test_the_stand_ins_head_is_transformers_head_on_the_same_weights(standin_head, tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from generator.forward.standin import load_standin
    from tests.engine_helpers import hf_config

    standin = load_standin(ROOT)
    folder = tmp_path / "standin"
    folder.mkdir()
    shutil.copyfile(standin.path, folder / "model.safetensors")
    hf_config(standin.cfg).save_pretrained(folder)
    model = transformers.GPT2LMHeadModel.from_pretrained(
        folder, dtype=torch.float64, attn_implementation="eager"
    ).eval()
    with torch.no_grad():
        out = model(torch.as_tensor(standin_head.token_ids)[None], output_attentions=True)
    theirs = out.attentions[standin_head.layer][0, standin_head.head].numpy()
    np.testing.assert_allclose(standin_head.trace["weights"][0], theirs, atol=1e-10)


def test_with_gpt2s_weights_a_gpt2_head_is_traced(tmp_path, monkeypatch) -> None:
    """The pinned files found (a tiny checkpoint pinned as "gpt2"): the head is that model's
    strongest induction head on the phrase (the named GPT-2 heads are past its 2 blocks), its
    arrays are the engine's on the model's own BPE tokens, and the JSON has the toy's shape
    with d_model-wide rows cut to the printed columns."""
    attempts = block_network(monkeypatch)
    TINY = TINY_LONG  # byte-level BPE with 8 merges: the phrase is longer than TINY's context
    monkeypatch.setitem(config.CONFIGS, "tiny", TINY)
    folder = tmp_path / "weights"
    paths = write_tiny_checkpoint(folder, seed=5, cfg=TINY)
    root = tmp_path / "project"
    (root / PINS_FILE).parent.mkdir(parents=True)
    (root / PINS_FILE).write_text(pins_toml(paths), encoding="utf-8")
    monkeypatch.setenv("ITM_GPT2_WEIGHTS", str(folder))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("ITM_CACHE_DIR", str(tmp_path / "cache"))
    head = trained.compute(Settings.load(root))

    assert head.is_gpt2 and head.cfg == TINY and head.model == TINY.label
    from generator.engine import load_safetensors

    ours = forward(load_safetensors(folder / "model.safetensors", TINY), TINY, head.token_ids)
    targets = induction_targets(head.token_ids)
    scores = {
        (layer, h): induction_score(block.attention["weights"][h], targets)
        for layer, block in enumerate(ours.blocks)
        for h in range(TINY.n_head)
    }
    assert (head.layer, head.head) == max(scores, key=lambda k: (scores[k], -k[0], -k[1]))
    np.testing.assert_array_equal(
        head.trace["q"][0], ours.blocks[head.layer].attention["q"][head.head]
    )
    data = trained_data(head, engine_excerpt(ROOT).steps, "wt-x")
    T, shown = len(head.tokens), min(trained.SHOWN, TINY.d_head)
    assert data["config"]["n_head"] == 1 and data["label"] == head.label
    assert np.array(data["trace"]["weights"]).shape == (1, T, T)
    assert np.array(data["trace"]["q"]).shape == (1, T, TINY.d_head)
    assert np.array(data["x"]).shape == (T, shown) and data["full"]["x"] == TINY.d_model
    assert np.array(data["trace"]["projected"]).shape == (T, shown)
    assert len(data["colours"]) == T and data["tokens"][0] == "<|endoftext|>"
    # A random head is no induction head, and the words do not say it is.
    if head.induction < THRESHOLDS["induction"]:
        assert "this one does not" in trained.trained_words(head, "F#x").get("softmax", "")
    assert attempts == []


def test_with_gpt2s_weights_the_head_is_one_the_literature_names(tmp_path, monkeypatch) -> None:
    """A checkpoint with GPT-2 small's 12 heads and enough blocks for the heads Wang et al. name
    (5.5 and 6.9): the walkthrough shows whichever of those two scores higher on the phrase."""
    import dataclasses

    from generator.forward.literature import IOI, KNOWN_HEADS

    block_network(monkeypatch)
    cfg = dataclasses.replace(TINY_LONG, n_layer=7, n_head=12, d_model=24)
    monkeypatch.setitem(config.CONFIGS, "tiny", cfg)
    folder = tmp_path / "weights"
    paths = write_tiny_checkpoint(folder, seed=7, cfg=cfg)
    root = tmp_path / "project"
    (root / PINS_FILE).parent.mkdir(parents=True)
    (root / PINS_FILE).write_text(pins_toml(paths), encoding="utf-8")
    monkeypatch.setenv("ITM_GPT2_WEIGHTS", str(folder))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("ITM_CACHE_DIR", str(tmp_path / "cache"))
    head = trained.compute(Settings.load(root))
    named = {(k.layer, k.head) for k in KNOWN_HEADS if k.kind == "induction"}
    assert (head.layer, head.head) in named and head.named == IOI
    from generator.engine import load_safetensors

    ours = forward(load_safetensors(folder / "model.safetensors", cfg), cfg, head.token_ids)
    targets = induction_targets(head.token_ids)
    best = max(
        named,
        key=lambda k: (
            induction_score(ours.blocks[k[0]].attention["weights"][k[1]], targets),
            -k[0],
        ),
    )
    assert (head.layer, head.head) == best


def test_a_repeated_word_keeps_its_colour() -> None:
    tokens = ("<|endoftext|>", " The", " cat", ".", " The", " cat")
    colours = trained.colours(tokens)
    assert colours[1] == colours[4] and colours[2] == colours[5]
    assert len(set(colours)) == 4 and colours[0] == trained.START_COLOUR
