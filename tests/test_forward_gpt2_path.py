"""The page's GPT-2 branch, end to end, with a tiny checkpoint standing in for GPT-2's files:
a pins file like the real one (model "tiny"), the files found through ITM_GPT2_WEIGHTS and
verified, BPE tokens from the same files, every head scored and drawn, the source note naming
the pin, and no network. CI never has GPT-2's 548 MB, so this is the path's only exercise."""

from __future__ import annotations

import numpy as np
import pytest

from generator import blocks, config
from generator.checkpoints import PINS_FILE, load_checkpoint_pins
from generator.engine import forward, load_safetensors
from generator.forward import current, feature, head_blocks, render
from generator.forward.pipeline import Gpt2Source
from generator.inputs import BuildInputs
from generator.settings import Settings
from tests.forward_helpers import TINY, block_network, pins_toml, write_tiny_checkpoint

PROMPT = " the cat sat on the mat, the cat sat"


@pytest.fixture
def tiny_root(tmp_path, monkeypatch):
    """(project root whose pins name the tiny files, the files' folder, network attempts)."""
    attempts = block_network(monkeypatch)
    monkeypatch.setitem(config.CONFIGS, "tiny", TINY)
    folder = tmp_path / "weights"
    paths = write_tiny_checkpoint(folder, seed=5)
    root = tmp_path / "project"
    (root / PINS_FILE).parent.mkdir(parents=True)
    (root / PINS_FILE).write_text(pins_toml(paths), encoding="utf-8")
    return root, folder, attempts


def test_with_the_pinned_files_the_page_shows_that_model(tiny_root, tmp_path, monkeypatch):
    root, folder, attempts = tiny_root
    for name, value in {
        "ITM_GPT2_WEIGHTS": str(folder),
        "HF_HUB_CACHE": str(tmp_path / "hub"),
        "ITM_CACHE_DIR": str(tmp_path / "cache"),
        "ITM_FORWARD_PROMPT": PROMPT,
    }.items():
        monkeypatch.setenv(name, value)
    settings = Settings.load(root)  # the variables above, as the plugin reads them
    fp = current(settings)  # what the build's macros and files read

    assert isinstance(fp.source, Gpt2Source) and fp.cfg == TINY
    assert fp.tokens[0] == "<|endoftext|>" and "".join(fp.tokens[1:]) == PROMPT
    ours = forward(load_safetensors(folder / "model.safetensors", TINY), TINY, fp.token_ids)
    np.testing.assert_array_equal(fp.trace.logits, ours.logits)
    assert [(h.layer, h.head) for h in fp.heads] == [
        (layer, head) for layer in range(TINY.n_layer) for head in range(TINY.n_head)
    ]

    pin = load_checkpoint_pins(root / PINS_FILE)["gpt2"]
    note = blocks.render(render.source_note(fp, pin))
    assert 'data-source="gpt2"' in note and "its real heads" in note
    assert pin.revision in note and pin.files["model.safetensors"].sha256 in note
    assert "found at a path given to the build" in note  # where, in a reader's words
    assert "ITM_" not in note
    assert "GPT-2 small's own blocks" in render.description(fp)  # the page's meta description
    # What the home page promises of the forward pass: this model's own heads, all of them.
    promise = blocks.render(render.promise(fp))
    assert promise.startswith(f"all {TINY.n_layer * TINY.n_head} heads of {TINY.label}"), promise
    found = blocks.render(head_blocks.found_block(fp))  # with the heads the papers name, and scores
    assert found.count("<li data-head=") == 4 and "Wang et al. 2022" in found

    gallery = blocks.render(head_blocks.gallery_block(fp, lambda path: path))
    assert gallery.count('class="itm-head"') == TINY.n_layer * TINY.n_head
    files = feature.files(BuildInputs(settings, excerpts={}))
    assert sum(name.endswith(".svg") for name in files) == TINY.n_layer * TINY.n_head
    assert fp.removals[0].layer is None  # the intact model comes first
    # Random tiny weights make no recognisable head, so there is nothing to remove, and the
    # page says so rather than printing an empty table.
    assert not any(h.kinds for h in fp.heads) and len(fp.removals) == 1
    assert "nothing to remove" in blocks.render(render.removal_block(fp))
    assert attempts == []


def test_itm_forward_shows_control_characters_instead_of_sending_them_to_the_terminal(
    tiny_root, tmp_path, monkeypatch, capsys
):
    """A prompt's escape sequence is a token like any other: `itm forward` prints it as ␛, so
    it cannot recolour or rewrite the user's terminal."""
    from generator.cli import main

    root, folder, _ = tiny_root
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("ITM_CACHE_DIR", str(tmp_path / "cache"))
    prompt = " the cat\x1b[31m sat\u202e on the mat"
    assert main(["forward", "--root", str(root), "--weights", str(folder), "--prompt", prompt]) == 0
    out = capsys.readouterr().out
    tokens = next(line for line in out.splitlines() if line.startswith("tokens"))
    assert "\x1b" not in out and "\u202e" not in out  # (the tiny vocabulary splits U+202E
    assert "␛" in tokens  # into bytes, shown as �: a token of its own in GPT-2's)
