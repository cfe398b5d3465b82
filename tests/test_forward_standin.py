"""The stand-in: a committed artifact verified against its pin and loaded without torch; its
behaviour (an induction head that forms, copying that collapses without either head) checked on
the committed weights and, in a slow test, on weights retrained from scratch; weights that
transformers' GPT-2 runs as the engine does.
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from generator.checkpoints import PINS_FILE
from generator.engine import forward
from generator.errors import InputError
from generator.forward.analysis import score_heads
from generator.forward.artifact import load_pin, write_pinned
from generator.forward.standin import (
    ARTIFACT,
    TRAINING,
    StandIn,
    artifact_bytes,
    load_standin,
    standin_config,
    vocabulary,
)
from generator.forward.standin_training import probe_scores, probe_sequences, train
from generator.forward.tokens import WordTokenizer
from tests.forward_helpers import weights_digest
from tests.site_helpers import ROOT, build_env

SHORT = dataclasses.replace(TRAINING, steps=12, batch=8)  # enough steps to test determinism


@pytest.fixture(scope="module")
def committed() -> StandIn:
    return load_standin(ROOT)


@pytest.fixture(scope="session")
def retrained() -> StandIn:
    """The stand-in trained from scratch here with torch (about a minute), never written."""
    pytest.importorskip("torch")
    weights, record = train(TRAINING)
    cfg = standin_config()
    return StandIn(cfg, weights, WordTokenizer(vocabulary()), TRAINING, record, Path(), "")


@pytest.fixture(
    params=["committed", pytest.param("retrained", marks=[pytest.mark.slow, pytest.mark.retrain])]
)
def standin(request) -> StandIn:
    """Each behaviour test runs on the committed file and, weekly (ITM_RETRAIN=1), on a fresh
    training run: the behaviour, not the bytes, is what must survive a retrain on another
    machine. Every build already refuses a file trained with other settings than the code's."""
    return request.getfixturevalue(request.param)


def project_copy(tmp_path: Path) -> Path:
    """A project root holding just the pins file and the stand-in."""
    (tmp_path / "sources").mkdir()
    pin = load_pin(ROOT, ARTIFACT)
    shutil.copy(ROOT / PINS_FILE, tmp_path / PINS_FILE)
    shutil.copy(ROOT / pin.file, tmp_path / pin.file)
    return tmp_path


# -- the artifact ---------------------------------------------------------------------------------
def test_committed_file_loads_without_importing_torch(committed):
    code = (
        "import sys, pathlib\n"
        "from generator.forward.standin import load_standin\n"
        "from tests.forward_helpers import weights_digest\n"
        f"s = load_standin(pathlib.Path({str(ROOT)!r}))\n"
        "print(weights_digest(s.weights))\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=build_env(), capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == weights_digest(committed.weights)


def test_committed_file_is_the_canonical_encoding_of_its_contents(committed):
    """Writing the loaded weights and record again gives the committed bytes: the writer is
    deterministic and the file holds nothing else."""
    assert artifact_bytes(committed.weights, committed.record) == committed.path.read_bytes()
    assert committed.record["training"] == dataclasses.asdict(TRAINING)


def test_a_changed_byte_is_refused_naming_the_file_and_the_fix(tmp_path):
    root = project_copy(tmp_path)
    path = root / load_pin(root, ARTIFACT).file
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(InputError) as caught:
        load_standin(root)
    message = str(caught.value)
    assert str(path) in message and "does not match the pinned sha256" in message
    assert "itm train-standin" in message and "git checkout" in message


def test_a_missing_file_is_named(tmp_path):
    root = project_copy(tmp_path)
    (root / load_pin(root, ARTIFACT).file).unlink()
    with pytest.raises(InputError, match="standin.safetensors.*: not found"):
        load_standin(root)


def test_a_file_trained_with_other_settings_asks_for_a_retrain():
    with pytest.raises(InputError, match="itm train-standin") as caught:
        load_standin(ROOT, dataclasses.replace(TRAINING, steps=TRAINING.steps + 1))
    assert caught.value.entry == "training"


def test_write_pinned_rewrites_only_the_artifacts_size_and_hash(tmp_path, committed):
    root = project_copy(tmp_path)
    before = (root / PINS_FILE).read_text()
    data = artifact_bytes(committed.weights, {**committed.record, "final_loss": 0.0})
    pin = write_pinned(root, ARTIFACT, data)
    after = (root / PINS_FILE).read_text()
    assert pin.size == len(data) and (root / pin.file).read_bytes() == data
    changed = [
        (a, b) for a, b in zip(before.splitlines(), after.splitlines(), strict=True) if a != b
    ]
    fields = [a.split(" =")[0] for a, _ in changed]
    assert "sha256" in fields and set(fields) <= {"size", "sha256"}, changed
    assert load_standin(root).record["final_loss"] == 0.0


# -- training ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_training_is_deterministic_and_depends_on_the_seed():
    pytest.importorskip("torch")
    first, _ = train(SHORT)
    second, _ = train(SHORT)
    assert weights_digest(first) == weights_digest(second)
    other, _ = train(dataclasses.replace(SHORT, seed=1))
    assert weights_digest(other) != weights_digest(first)


# -- behaviour ---------------------------------------------------------------------------------------
def repeated_sequences(n: int, length: int, vocab: int, seed: int) -> list[tuple[np.ndarray, int]]:
    """Fresh test data: <|endoftext|>, random words, then a span of them again. Returns each
    sequence with the start of its second copy."""
    rng = np.random.default_rng([seed, 99])
    out = []
    for _ in range(n):
        span = int(rng.integers(5, 9))
        ids = np.concatenate([[0], rng.permutation(np.arange(1, vocab))[: length - 1]])
        first = int(rng.integers(1, length - 2 * span))
        second = int(rng.integers(first + span, length - span + 1))
        ids[second : second + span] = ids[first : first + span]
        out.append((ids, (first, second, span)))
    return out


def test_a_head_does_induction_far_above_chance(standin):
    """Measured here from the engine's attention, not with the page's scoring code: attention
    from each token of the second copy to the token after its first occurrence."""
    cfg = standin.cfg
    per_head = np.zeros((cfg.n_layer, cfg.n_head))
    chance = []
    data = repeated_sequences(20, cfg.n_ctx, cfg.vocab_size, seed=3)
    for ids, (first, second, span) in data:
        trace = forward(standin.weights, cfg, ids)
        for k in range(span - 1):  # query: k-th token of the copy; key: token after its original
            query, key = second + k, first + k + 1
            chance.append(1 / (query + 1))
            for layer, block in enumerate(trace.blocks):
                per_head[layer] += block.attention["weights"][:, query, key]
    per_head /= len(chance)
    best = per_head.max()
    assert best > 0.4, per_head
    assert best > 8 * np.mean(chance), (best, np.mean(chance))


def copy_accuracy(weights, cfg) -> float:
    """How often, inside a repeated phrase of random words, the top prediction is the word that
    followed the current one last time (chance: 1 in 66)."""
    hits, total = 0, 0
    for ids, (first, second, span) in repeated_sequences(20, cfg.n_ctx, cfg.vocab_size, seed=5):
        logits = forward(weights, cfg, ids).logits  # [T, V]
        for k in range(span - 1):  # position second + k predicts the copy of first + k + 1
            hits += int(logits[second + k].argmax() == ids[first + k + 1])
            total += 1
    return hits / total


def test_the_model_reads_the_second_copy_off_the_first(standin):
    """Behaviour, not just attention: the model predicts the rest of a repeat."""
    assert copy_accuracy(standin.weights, standin.cfg) > 0.8


@pytest.mark.parametrize("layer", range(TRAINING.n_layer))
def test_copying_needs_the_heads_of_both_blocks(standin, layer):
    """The circuit, by ablation: without block 0's attention (the previous-token head) or block 1's
    (the induction head) the copying collapses, so neither head does it alone."""
    ablated = dict(standin.weights)
    name = f"h.{layer}.attn.c_proj.weight"  # the attention output: zero means the head says nothing
    ablated[name] = np.zeros_like(ablated[name])
    assert copy_accuracy(ablated, standin.cfg) < 0.2


def test_a_head_looks_at_the_previous_token(standin):
    """Attention from each position to the one before it, averaged over fresh sequences: the
    page's threshold (0.4) and far above a head that spreads its attention evenly."""
    cfg = standin.cfg
    per_head = np.zeros((cfg.n_layer, cfg.n_head))
    data = repeated_sequences(20, cfg.n_ctx, cfg.vocab_size, seed=4)
    for ids, _ in data:
        trace = forward(standin.weights, cfg, ids)
        T = len(ids)
        for layer, block in enumerate(trace.blocks):
            per_head[layer] += block.attention["weights"][
                :, np.arange(1, T), np.arange(T - 1)
            ].mean(-1)
    per_head /= len(data)
    chance = np.mean(1 / np.arange(2, cfg.n_ctx + 1))  # position i spreads over i + 1 tokens
    assert per_head.max() > 0.4, per_head
    assert per_head.max() > 3 * chance, (per_head.max(), chance)


def test_page_scores_agree_with_a_direct_measurement(standin):
    cfg = standin.cfg
    ids, (first, second, span) = repeated_sequences(1, cfg.n_ctx, cfg.vocab_size, seed=5)[0]
    trace = forward(standin.weights, cfg, ids)
    scores = score_heads([b.attention["weights"] for b in trace.blocks], ids)
    for s in scores:
        pattern = trace.blocks[s.layer].attention["weights"][s.head]
        direct = np.mean([pattern[second + k, first + k + 1] for k in range(span)])
        # Distinct random words: the copy is the only repetition, so the two measures agree.
        assert s.induction == pytest.approx(direct, abs=1e-12)
        assert s.first_token == pytest.approx(pattern[1:, 0].mean(), abs=1e-12)


@pytest.mark.slow
def test_weights_run_in_transformers_gpt2_as_in_the_engine(standin):
    """Exported under transformers' names and Conv1D layout: GPT2LMHeadModel, float64."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.engine_helpers import hf_model

    cfg = standin.cfg
    assert cfg == standin_config()
    ids = repeated_sequences(1, cfg.n_ctx, cfg.vocab_size, seed=6)[0][0]
    weights64 = {k: v.astype(np.float64) for k, v in standin.weights.items()}
    model = hf_model(weights64, cfg)
    with torch.no_grad():
        logits = model(torch.as_tensor(ids)[None], use_cache=False).logits[0].numpy()
    np.testing.assert_allclose(forward(standin.weights, cfg, ids).logits, logits, atol=1e-9)


def test_training_curve_ends_where_the_engine_measures_the_final_weights(standin):
    """The record's last probe was measured in torch during training; the numpy engine, run on
    the saved weights and the same probe sequences, finds the same scores."""
    curve = standin.record["curve"]
    assert curve["step"][0] == 0 and curve["step"][-1] == standin.training.steps
    assert len(curve["loss"]) == len(curve["induction"]) == len(curve["step"])
    ids = probe_sequences(standin.training, standin.cfg.vocab_size)
    traces = [forward(standin.weights, standin.cfg, row) for row in ids]
    patterns = [
        np.stack([t.blocks[layer].attention["weights"] for t in traces])
        for layer in range(standin.cfg.n_layer)
    ]  # [n, n_head, T, T] per block
    final = probe_scores(patterns, ids)
    assert final["induction"] == pytest.approx(curve["induction"][-1], abs=2e-4)
    assert final["previous_token"] == pytest.approx(curve["previous_token"][-1], abs=2e-4)
    assert curve["induction"][0] < 0.15 < 0.6 < curve["induction"][-1]  # it was learned
