"""The stand-in: a small model of GPT-2's architecture that the build shows when GPT-2's weights
are absent, so the forward-pass page shows learned heads rather than random ones. Its task and its
training are `standin_training.py`'s.

Its result depends on the CPU's kernels, so it is made once by `itm train-standin` and committed:
sources/standin.safetensors, float32 weights under transformers' GPT-2 names in Conv1D's [in, out]
layout (the numpy engine and transformers' GPT2LMHeadModel run them as they run GPT-2) with the
training record (settings, vocabulary, loss and probe curve) in its metadata, pinned by sha256 in
sources/checkpoints.toml. A build only reads and verifies that file: it never trains and never
imports torch.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from generator.checkpoints import PINS_FILE
from generator.config import ModelConfig
from generator.engine.layers import Weights
from generator.engine.safetensors_file import parse_safetensors, safetensors_bytes
from generator.errors import InputError
from generator.forward.artifact import read_pinned
from generator.forward.tokens import ENDOFTEXT, WordTokenizer

# Token 0 starts every sequence. The words cover the default prompt and plenty more; the model
# never learns what a word means, only where the same word appeared before.
WORDS: tuple[str, ...] = (
    ENDOFTEXT,
    ".", ",", "The", "the", "a", "and", "of", "to", "in", "on", "at", "near", "over", "under",
    "quick", "brown", "fox", "jumps", "lazy", "dog", "old", "river", "bank", "cat", "sat",
    "mat", "bird", "sings", "song", "tree", "green", "red", "blue", "house", "door", "opens",
    "slowly", "little", "big", "boat", "sails", "sea", "sun", "rises", "moon", "night", "day",
    "rain", "falls", "on", "hill", "road", "long", "walks", "home", "man", "woman", "child",
    "reads", "book", "writes", "letter", "train", "stops", "town", "bridge", "stone",
)  # fmt: skip


@dataclass(frozen=True)
class Training:
    """Everything that decides the stand-in's weights (the artifact records it; a build refuses a
    file trained with other settings)."""

    seed: int = 0
    steps: int = 1400  # the induction head forms around step 1,000-1,250 (seeds 0-2)
    batch: int = 32  # sequences per step
    seq_len: int = 32  # tokens per sequence, <|endoftext|> included; also the context length
    n_layer: int = 2
    n_head: int = 1  # one head per block: see standin_training.py
    d_model: int = 64
    lr: float = 3e-3
    weight_decay: float = 0.01
    init_std: float = 0.125  # ≈ 1/√d_model
    period_min: int = 4  # length of the repeating phrase
    period_max: int = 12
    threads: int = 2  # a fixed thread count keeps the floating-point order fixed
    probe_every: int = 50  # steps between measurements of the heads on fixed probe sequences


TRAINING = Training()
ARTIFACT = "standin"  # its [artifacts.standin] pin in sources/checkpoints.toml


def vocabulary() -> tuple[str, ...]:
    """WORDS without duplicates, in order (a word listed twice is one token)."""
    return tuple(dict.fromkeys(WORDS))


def standin_config(training: Training = TRAINING) -> ModelConfig:
    return ModelConfig(
        name="stand-in",
        label="stand-in",
        n_layer=training.n_layer,
        n_head=training.n_head,
        d_model=training.d_model,
        n_ctx=training.seq_len,
        vocab_size=len(vocabulary()),
    )


@dataclass
class StandIn:
    """A trained stand-in: its config, weights (engine names), tokenizer and training record."""

    cfg: ModelConfig
    weights: Weights
    tokenizer: WordTokenizer
    training: Training
    record: dict  # steps, curve, final_loss, training, words, torch: from the run that made it
    path: Path  # the committed file
    sha256: str  # its bytes' hash, as pinned


# -- the committed artifact -------------------------------------------------------------------------
def load_standin(root: Path, training: Training = TRAINING) -> StandIn:
    """The committed stand-in, verified against its pin; no torch.

    The file must have been trained with these settings and this vocabulary: when the code's
    settings change, the error says to retrain rather than showing stale weights.
    """
    data, pin = read_pinned(root, ARTIFACT)
    cfg = standin_config(training)
    where = str(root / pin.file)
    weights, metadata = parse_safetensors(data, cfg, where)
    record = json.loads(metadata.get("record", "{}"))
    expected = {"training": asdict(training), "words": list(vocabulary())}
    for field, value in expected.items():
        if record.get(field) != value:
            raise InputError(
                f"the file was trained with other {field} than generator/forward/standin.py sets",
                file=where,
                entry=field,
                fix=f"run `{pin.made_by}` to retrain it (about a minute), then commit the file "
                f"and {PINS_FILE}",
            )
    tokenizer = WordTokenizer(vocabulary())
    return StandIn(cfg, weights, tokenizer, training, record, root / pin.file, pin.sha256)


def artifact_bytes(weights: Weights, record: dict) -> bytes:
    """The stand-in as safetensors: float32 tensors by name, the record as JSON in the metadata.
    The same weights and record give the same bytes."""
    arrays = {name: np.asarray(value, dtype=np.float32) for name, value in weights.items()}
    return safetensors_bytes(arrays, {"record": json.dumps(record, sort_keys=True)})
