"""The stand-in's task and its training in torch (`itm train-standin`; standin.py reads the result).

The task makes two kinds of attention worth learning. Each training sequence is <|endoftext|>,
a few filler words, then a phrase of 4-12 words that repeats until the sequence ends:
- repeats: from the second copy of the phrase on, every next word can be read off the copy
  before it. That is an induction head's job: "A B … A → B". The phrase length varies, so no
  fixed position offset finds the earlier copy; only its content does.
- rules: in the filler and the first copy, a fixed quarter of the words decide the word two
  places after them (a fixed random mapping), which pays a head for looking at the previous word.
The loss counts only the words this structure decides (the others are random).

One head per block, on purpose. With two or four heads per block the same training reaches a
low loss through shifted copies (heads that look 2-4 words back, and a copy head that lands 2-4
words after the match instead of on the word right after it); with one head per block the
textbook circuit is the only route: block 0's head looks at the previous word, block 1's head
finds where the current word occurred before and reads the word that followed it.

Training runs in torch (imported only by `train`), seeded and deterministic on one machine for
a fixed thread count, in about a minute on two cores.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

from generator.checkpoints import PINS_FILE
from generator.config import ModelConfig
from generator.engine.layers import Weights
from generator.engine.weights import weight_shapes
from generator.errors import InputError
from generator.forward.analysis import induction_score, induction_targets, previous_token_score
from generator.forward.artifact import load_pin, write_pinned
from generator.forward.standin import (
    ARTIFACT,
    TRAINING,
    StandIn,
    Training,
    artifact_bytes,
    load_standin,
    standin_config,
    vocabulary,
)


# -- data --------------------------------------------------------------------------------------------
def skip_mapping(vocab_size: int, seed: int) -> np.ndarray:
    """mapping[w]: the word that two places after w must be, or -1 when w sets no rule.

    A fixed random quarter of the words (never <|endoftext|>) set a rule, each to a random word.
    """
    rng = np.random.default_rng([seed, 7])
    mapping = np.full(vocab_size, -1)
    words = rng.permutation(np.arange(1, vocab_size))[: (vocab_size - 1) // 4]
    mapping[words] = rng.integers(1, vocab_size, size=len(words))
    return mapping


def synthetic_batch(
    rng: np.random.Generator, training: Training, vocab_size: int, mapping: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(ids [B, T], decided [B, T]): decided[b, t] is True when token t follows from the context."""
    B, T = training.batch, training.seq_len
    ids = np.zeros((B, T), dtype=np.int64)  # position 0 stays <|endoftext|>
    decided = np.zeros((B, T), dtype=bool)
    for b in range(B):
        period = int(rng.integers(training.period_min, training.period_max + 1))
        start = 1 + int(rng.integers(0, T - 2 * period))  # the phrase's first word; filler before
        repeat = start + period  # the first word of the second copy
        ids[b, 1:repeat] = rng.permutation(np.arange(1, vocab_size))[: repeat - 1]
        for t in range(2, repeat):  # a rule word decides the word two places after it
            if mapping[ids[b, t - 2]] >= 0:
                ids[b, t] = mapping[ids[b, t - 2]]
                decided[b, t] = True
        for t in range(repeat, T):  # the phrase again, and again, to the end
            ids[b, t] = ids[b, t - period]
        decided[b, repeat + 1 :] = True  # after the copy's first word, the rest is known
    return ids, decided


def probe_sequences(training: Training, vocab_size: int, n: int = 16) -> np.ndarray:
    """Fixed sequences [n, T] the heads are measured on during training: <|endoftext|>, distinct
    random words, and a span of 5-8 of them copied later (not the training layout)."""
    rng = np.random.default_rng([training.seed, 3])
    T = training.seq_len
    out = np.zeros((n, T), dtype=np.int64)
    for row in out:
        row[1:] = rng.permutation(np.arange(1, vocab_size))[: T - 1]
        span = int(rng.integers(5, 9))
        first = int(rng.integers(1, T - 2 * span + 1))
        second = int(rng.integers(first + span, T - span + 1))
        row[second : second + span] = row[first : first + span]
    return out


def probe_scores(patterns: list[np.ndarray], ids: np.ndarray) -> dict[str, float]:
    """The best head's mean previous-token and induction scores over the probe sequences;
    patterns[layer]: [n, n_head, T, T]."""
    best = {"previous_token": 0.0, "induction": 0.0}
    for block in patterns:
        for head in range(block.shape[1]):
            prev = np.mean([previous_token_score(block[b, head]) for b in range(len(ids))])
            ind = np.mean(
                [
                    induction_score(block[b, head], induction_targets(ids[b]))
                    for b in range(len(ids))
                ]
            )
            best["previous_token"] = max(best["previous_token"], float(prev))
            best["induction"] = max(best["induction"], float(ind))
    return best


def train_and_pin(root: Path, training: Training = TRAINING, *, log=None) -> StandIn:
    """Train the stand-in (torch), write the artifact and rewrite its pin: `itm train-standin`.
    Both files' folders are checked first: training takes minutes on two cores."""
    from generator.checked_io import check_writable

    for folder in {(root / PINS_FILE).parent, (root / load_pin(root, ARTIFACT).file).parent}:
        check_writable(
            folder, fix="run it in a writable checkout (a read-only one cannot take a new stand-in)"
        )
    weights, record = train(training, log=log)
    write_pinned(root, ARTIFACT, artifact_bytes(weights, record))
    return load_standin(root, training)


# -- training (torch) ----------------------------------------------------------------------------------
def initial_weights(cfg: ModelConfig, training: Training) -> Weights:
    """GPT-2's initialisation scheme at this width: N(0, σ²) matrices and embeddings, output
    projections scaled by 1/√(2·n_layer), zero biases, LayerNorm gain 1 and shift 0."""
    rng = np.random.default_rng([training.seed, 1])
    weights: Weights = {}
    for name, shape in weight_shapes(cfg).items():
        if ".ln_" in name or name.startswith("ln_f"):
            value = np.ones(shape) if name.endswith(".weight") else np.zeros(shape)
        elif name.endswith(".bias"):
            value = np.zeros(shape)
        elif name.endswith("c_proj.weight"):
            value = rng.standard_normal(shape) * training.init_std / math.sqrt(2 * cfg.n_layer)
        else:
            value = rng.standard_normal(shape) * training.init_std
        weights[name] = value.astype(np.float32)
    return weights


def torch_forward(p: dict, cfg: ModelConfig, ids, patterns: list | None = None):
    """GPT-2's forward pass in torch over a batch ids [B, T]; p holds tensors by engine name.

    The same steps as generator.engine.model.forward, batched: the engine is the reference.
    patterns, when given, receives each block's attention weights [B, n_head, T, T].
    """
    import torch
    import torch.nn.functional as F

    B, T = ids.shape
    d, h = cfg.d_model, cfg.n_head
    visible = torch.ones(T, T, dtype=torch.bool).tril()
    x = p["wte.weight"][ids] + p["wpe.weight"][:T]  # [B, T, d]
    for i in range(cfg.n_layer):
        w = {name[len(f"h.{i}.") :]: t for name, t in p.items() if name.startswith(f"h.{i}.")}
        a = F.layer_norm(x, (d,), w["ln_1.weight"], w["ln_1.bias"], cfg.layer_norm_eps)
        q, k, v = (a @ w["attn.c_attn.weight"] + w["attn.c_attn.bias"]).split(d, dim=-1)
        q, k, v = (z.view(B, T, h, d // h).transpose(1, 2) for z in (q, k, v))  # [B, h, T, dh]
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // h)  # [B, h, T, T]
        pattern = scores.masked_fill(~visible, float("-inf")).softmax(dim=-1)
        if patterns is not None:
            patterns.append(pattern.detach())
        heads = (pattern @ v).transpose(1, 2).reshape(B, T, d)
        x = x + heads @ w["attn.c_proj.weight"] + w["attn.c_proj.bias"]
        m = F.layer_norm(x, (d,), w["ln_2.weight"], w["ln_2.bias"], cfg.layer_norm_eps)
        hidden = F.gelu(m @ w["mlp.c_fc.weight"] + w["mlp.c_fc.bias"], approximate="tanh")
        x = x + hidden @ w["mlp.c_proj.weight"] + w["mlp.c_proj.bias"]
    x = F.layer_norm(x, (d,), p["ln_f.weight"], p["ln_f.bias"], cfg.layer_norm_eps)
    return x @ p["wte.weight"].T  # [B, T, V], tied unembedding


def train(training: Training = TRAINING, *, log=None) -> tuple[Weights, dict]:
    """Train the stand-in from scratch; returns (weights by engine name, record)."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        raise InputError(
            "training the stand-in needs torch, which a build does not install",
            entry="itm train-standin",
            fix="pip install -e '.[train]' (or make test's environment), then run it again",
        ) from None

    cfg = standin_config(training)
    previous = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled())
    torch.manual_seed(training.seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(training.threads)
    started = time.perf_counter()
    try:
        params = {
            name: torch.tensor(value, requires_grad=True)
            for name, value in initial_weights(cfg, training).items()
        }
        optimizer = torch.optim.AdamW(
            list(params.values()),
            lr=training.lr,
            weight_decay=training.weight_decay,
            betas=(0.9, 0.95),
        )
        rng = np.random.default_rng([training.seed, 2])
        mapping = skip_mapping(cfg.vocab_size, training.seed)
        probe_ids = probe_sequences(training, cfg.vocab_size)
        curve: dict[str, list] = {"step": [], "loss": [], "previous_token": [], "induction": []}

        def probe(done: int) -> None:
            """Measure the heads on the probe sequences after `done` steps."""
            patterns: list = []
            with torch.no_grad():
                torch_forward(params, cfg, torch.from_numpy(probe_ids), patterns)
            scores = probe_scores([t.numpy() for t in patterns], probe_ids)
            curve["step"].append(done)
            for name, value in scores.items():
                curve[name].append(round(value, 4))

        losses = []
        probe(0)
        for step in range(training.steps):
            ids, decided = synthetic_batch(rng, training, cfg.vocab_size, mapping)
            ids_t = torch.from_numpy(ids)
            target = torch.from_numpy(decided[:, 1:])
            logits = torch_forward(params, cfg, ids_t)[:, :-1]  # position t predicts t + 1
            loss = F.cross_entropy(logits[target], ids_t[:, 1:][target])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            done = step + 1
            if done % training.probe_every == 0 or done == training.steps:
                probe(done)
            if log and (step % 250 == 0 or step == training.steps - 1):
                log(f"stand-in: step {step} loss {losses[-1]:.3f}")
        weights = {name: t.detach().numpy().copy() for name, t in params.items()}
    finally:
        torch.set_num_threads(previous[0])
        torch.use_deterministic_algorithms(previous[1])
    tail = losses[-100:]
    # Each probe's loss: the mean training loss over the steps since the previous probe (the
    # first: the loss of the first batch, before any update).
    bounds = [0, *curve["step"][1:]]
    curve["loss"] = [round(losses[0], 4)] + [
        round(float(np.mean(losses[a:b])), 4) for a, b in zip(bounds, bounds[1:], strict=False)
    ]
    record = {
        "steps": training.steps,
        "curve": curve,
        "final_loss": round(float(np.mean(tail)), 4),  # mean of the last 100 steps
        "training": asdict(training),
        "words": list(vocabulary()),
        "torch": torch.__version__,  # results depend on torch's kernels; the file is the truth
    }
    if log:
        log(f"stand-in: trained in {time.perf_counter() - started:.1f} s")
    return weights, record
