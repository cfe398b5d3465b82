"""One forward pass for the page: pick the model (GPT-2 if its pinned weights are here, else the
stand-in), tokenize the prompt, run the numpy engine, and measure what the page shows.

Everything the page prints comes from the ForwardPass this module returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from generator.checkpoint_files import Checkpoint, resolve
from generator.checkpoints import PINS_FILE, checkpoint_pin
from generator.config import CONFIGS, ModelConfig
from generator.engine import Trace, forward, load_safetensors
from generator.engine.layers import cast
from generator.errors import InputError
from generator.forward.ablation import Removal, removals
from generator.forward.analysis import HeadScore, chance_scores, induction_targets, score_heads
from generator.forward.bpe import BPETokenizer
from generator.forward.head_images import LABELLED_MAX
from generator.forward.standin import StandIn
from generator.forward.tokens import WordTokenizer
from generator.settings import Settings

PROMPT_ENV = "ITM_FORWARD_PROMPT"
# A sentence and then its start again: the second copy can be read off the first (induction),
# and the last word's best continuation is the word that followed it the first time.
DEFAULT_PROMPT = (
    "The quick brown fox jumps over the lazy dog near the old river bank. "
    "The quick brown fox jumps over the lazy dog near the old"
)
TOP_K = 10  # next-token predictions shown


@dataclass(frozen=True)
class Gpt2Source:
    """The page shows GPT-2: its pinned files, found and verified."""

    checkpoint: Checkpoint
    kind: ClassVar[str] = "gpt2"
    is_gpt2: ClassVar[bool] = True

    @property
    def where(self) -> str:
        return self.checkpoint.origin


@dataclass(frozen=True)
class StandinSource:
    """The page shows the stand-in the build trained (or found in its cache)."""

    standin: StandIn
    kind: ClassVar[str] = "stand-in"
    is_gpt2: ClassVar[bool] = False

    @property
    def where(self) -> str:
        return str(self.standin.path)


Source = Gpt2Source | StandinSource  # which model the page shows; narrow with isinstance


@dataclass
class ForwardPass:
    source: Source
    cfg: ModelConfig
    prompt: str
    token_ids: np.ndarray  # [T], <|endoftext|> first
    tokens: list[str]  # the text of each token
    trace: Trace
    heads: list[HeadScore]  # every head, layer by layer
    chance: dict[str, float | None]  # each score for evenly spread attention
    residual_norms: np.ndarray  # [n_layer + 1, T]: ‖x‖ entering block 0, then after each block
    top_next: list[tuple[str, float]]  # the last position's most likely next tokens
    predicted: list[str]  # each position's most likely next token
    removals: list[Removal]  # the intact model, then each pointed-out head removed

    def attention(self, layer: int, head: int) -> np.ndarray:
        """The head's attention pattern [T, T] (row: query position, column: key position):
        float64 up to head_images.LABELLED_MAX positions; float32 beyond, once scored (see run)."""
        return self.trace.blocks[layer].attention["weights"][head]

    @property
    def repeated(self) -> set[int]:
        """Positions whose token appeared earlier (the ones the induction score looks at)."""
        return set(induction_targets(self.token_ids))


def choose_source(settings: Settings, *, weights: str | None = None) -> Source:
    """GPT-2 when its pinned files are found and verified, otherwise the committed stand-in.

    `weights` (the --weights flag) wins over the gpt2_weights setting (the pin's variable).
    """
    pin = checkpoint_pin(settings.root / PINS_FILE, "gpt2")
    user_path, origin = (weights, "--weights") if weights else (settings.gpt2_weights, pin.env)
    checkpoint = resolve(
        pin,
        cache_dir=settings.cache_dir,
        hub_cache=settings.hub_cache,
        user_path=user_path,
        origin=origin,
        download=settings.may_download,
    )
    if checkpoint is not None:
        return Gpt2Source(checkpoint)
    from generator.forward.standin import load_standin

    return StandinSource(load_standin(settings.root))


def load_model(
    settings: Settings, *, weights: str | None = None
) -> tuple[Source, ModelConfig, BPETokenizer | WordTokenizer, dict[str, np.ndarray]]:
    """The page's model: its source, config, tokenizer and weights (GPT-2 or the stand-in)."""
    source = choose_source(settings, weights=weights)
    if isinstance(source, Gpt2Source):
        paths = source.checkpoint.paths
        cfg = CONFIGS[source.checkpoint.pin.model]
        tokenizer = BPETokenizer.from_files(paths["vocab.json"], paths["merges.txt"])
        return source, cfg, tokenizer, load_safetensors(source.checkpoint.weights, cfg)
    standin = source.standin
    return source, standin.cfg, standin.tokenizer, standin.weights


def prompt_ids(tokenizer: BPETokenizer | WordTokenizer, prompt: str, cfg: ModelConfig) -> list[int]:
    """<|endoftext|> and the prompt's tokens; an InputError when they exceed the context."""
    ids = [tokenizer.bos_id, *tokenizer.encode(prompt)]
    if len(ids) > cfg.n_ctx:
        raise InputError(
            f"the prompt is {len(ids)} tokens with <|endoftext|>; {cfg.label} takes {cfg.n_ctx}",
            entry=f"the prompt (itm forward --prompt, or {PROMPT_ENV} for the page)",
            fix="shorten the prompt",
        )
    return ids


def run(settings: Settings, *, weights: str | None = None) -> ForwardPass:
    """Choose the model, tokenize the prompt, run the engine, measure heads and predictions.

    Everything is computed in float64, so the page's numbers are the same on every machine. What
    is kept is what the page prints, plus each head's pattern to draw it. For a long prompt
    (over head_images.LABELLED_MAX positions) the patterns are kept in float32 once the scores
    are measured: they are only drawn after that, in 16 colour steps (views) or 8-bit channels
    (thumbnails), far coarser than float32's 7 digits, and at 1,024 tokens GPT-2 small's 144
    patterns take 604 MB instead of 1.2 GB, for the rest of the build.
    """
    prompt = settings.forward_prompt or DEFAULT_PROMPT
    source, cfg, tokenizer, model_weights = load_model(settings, weights=weights)
    ids = prompt_ids(tokenizer, prompt, cfg)
    token_ids = np.array(ids, dtype=np.int64)
    # float64 once, for the run and every removal (forward then casts nothing); GPT-2's float32
    # tensors (498 MB) are let go here rather than held beside their float64 copy.
    model_weights = cast(model_weights, np.float64)
    trace = forward(model_weights, cfg, token_ids, keep="patterns")  # weights and stream

    weights_per_block = [block.attention["weights"] for block in trace.blocks]
    heads = score_heads(weights_per_block, token_ids)
    del weights_per_block
    if len(ids) > LABELLED_MAX:  # before the [T, V] probabilities are made, not after
        for block in trace.blocks:  # from here on drawn, never measured
            block.attention["weights"] = block.attention["weights"].astype(np.float32)
    streams = [trace.blocks[0].resid_in] + [block.resid_out for block in trace.blocks]
    norms = np.stack([np.linalg.norm(x, axis=-1) for x in streams])  # [n_layer + 1, T]
    last = trace.probs[-1]
    order = np.argsort(-last, kind="stable")[:TOP_K]
    return ForwardPass(
        source=source,
        cfg=cfg,
        prompt=prompt,
        token_ids=token_ids,
        tokens=[tokenizer.token_text(i) for i in ids],
        trace=trace,
        heads=heads,
        chance=chance_scores(token_ids),
        residual_norms=norms,
        top_next=[(tokenizer.token_text(int(i)), float(last[i])) for i in order],
        predicted=[tokenizer.token_text(int(i)) for i in trace.probs.argmax(axis=-1)],
        removals=removals(model_weights, cfg, trace, heads, tokenizer.token_text),
    )
