"""One config class for every decoder family the site takes apart (GPT-2, Llama, Mistral).

A size is a `ModelConfig`: the family's name, the widths and counts, and the choices that tell
the families apart (the norm, the MLP, how positions enter, biases, a tied unembedding, a sliding
window). Every other width is derived here, so pages and engines never recompute one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from generator.errors import InputError

Norm = Literal["layernorm", "rmsnorm"]
Mlp = Literal["gelu", "swiglu"]
Positions = Literal["learned", "rope"]

NORMS: tuple[Norm, ...] = ("layernorm", "rmsnorm")
MLPS: tuple[Mlp, ...] = ("gelu", "swiglu")
POSITIONS: tuple[Positions, ...] = ("learned", "rope")


class Derived(int):
    """An int the config derived itself rather than was given (see ModelConfig)."""


@dataclass(frozen=True)
class ModelConfig:
    """Hyperparameters of one decoder-only transformer (names follow nanoGPT's).

    The defaults describe GPT-2: LayerNorm, a GELU MLP 4 × d_model wide, learned positions,
    biases on the projections, the unembedding tied to the token embedding.

    n_kv_head and d_mlp left out (None) are derived: n_head (multi-head attention) and
    4 · d_model (GPT-2's MLP). A derived value is a `Derived` int, so dataclasses.replace() derives
    it again from the new fields (a GPT-2 size with other heads keeps n_kv_head = n_head), while a
    value given explicitly is kept.
    """

    name: str  # "gpt2": the size's key and its name on the Hugging Face hub
    label: str  # "GPT-2 small": the name a page prints
    n_layer: int  # transformer blocks
    n_head: int  # query heads per block
    d_model: int  # width of the residual stream (n_embd, hidden_size)
    n_ctx: int  # longest context (GPT-2: rows of the position embedding)
    vocab_size: int  # rows of the token embedding
    norm_eps: float = 1e-5  # ε inside the norm's square root
    bias: bool = True  # biases on the attention and MLP projections
    family: str = "gpt2"  # a key of generator.models.FAMILIES
    n_kv_head: int = None  # type: ignore[assignment]  # key/value heads; None: n_head (MHA)
    d_mlp: int = None  # type: ignore[assignment]  # MLP hidden width; None: 4 · d_model
    norm: Norm = "layernorm"
    mlp: Mlp = "gelu"  # "swiglu": silu(gate) · up, then down
    positions: Positions = "learned"  # "rope": rotary embedding of q and k, no parameters
    rope_theta: float = 10000.0  # RoPE's base wavelength (positions="rope" only)
    sliding_window: int | None = None  # a query sees this many positions, itself included
    tied_embeddings: bool = True  # logits use the token embedding (False: a separate lm_head)

    def __post_init__(self) -> None:
        if self.n_kv_head is None or isinstance(self.n_kv_head, Derived):
            object.__setattr__(self, "n_kv_head", Derived(self.n_head))
        if self.d_mlp is None or isinstance(self.d_mlp, Derived):
            object.__setattr__(self, "d_mlp", Derived(4 * self.d_model))
        self._check()

    def _check(self) -> None:
        """Refuse a size whose fields cannot describe a model, naming the field and the fix."""
        for field in ("n_layer", "n_head", "n_kv_head", "d_model", "d_mlp", "n_ctx", "vocab_size"):
            value = getattr(self, field)
            if not isinstance(value, int) or value < 1:
                self._refuse(field, f"{field} is {value!r}", f"set {field} to a whole number >= 1")
        if self.d_model % self.n_head:
            self._refuse(
                "n_head",
                f"n_head {self.n_head} does not divide d_model {self.d_model}",
                f"choose n_head among the divisors of {self.d_model}, or a d_model that "
                f"{self.n_head} divides (a head is d_model / n_head wide)",
            )
        if self.n_head % self.n_kv_head:
            self._refuse(
                "n_kv_head",
                f"n_kv_head {self.n_kv_head} does not divide n_head {self.n_head}",
                f"choose n_kv_head among the divisors of {self.n_head}: each key/value head "
                "serves the same number of query heads",
            )
        for field, allowed in (("norm", NORMS), ("mlp", MLPS), ("positions", POSITIONS)):
            if getattr(self, field) not in allowed:
                self._refuse(
                    field,
                    f"{field} is {getattr(self, field)!r}",
                    f"use one of: {', '.join(allowed)}",
                )
        if self.positions == "rope" and self.d_head % 2:
            self._refuse(
                "n_head",
                f"RoPE rotates pairs of dimensions, but a head is {self.d_head} wide (odd)",
                "choose n_head so that d_model / n_head is even",
            )
        if self.positions == "rope" and not 0 < self.rope_theta < float("inf"):
            self._refuse("rope_theta", f"rope_theta is {self.rope_theta!r}", "use a base > 0")
        if not 0 < self.norm_eps < float("inf"):
            self._refuse("norm_eps", f"norm_eps is {self.norm_eps!r}", "use an ε > 0, e.g. 1e-5")
        window = self.sliding_window
        if window is not None and (not isinstance(window, int) or window < 1):
            self._refuse(
                "sliding_window",
                f"sliding_window is {window!r}",
                "use None (every earlier position) or a number of positions >= 1",
            )

    def _refuse(self, field: str, problem: str, fix: str) -> None:
        raise InputError(
            f"{self.family} size {self.name!r}: {problem}", entry=f"{self.name}.{field}", fix=fix
        )

    @property
    def layer_norm_eps(self) -> float:
        """GPT-2's name for norm_eps (transformers' layer_norm_epsilon)."""
        return self.norm_eps

    @property
    def d_head(self) -> int:
        """Width of one attention head: d_model / n_head (64 in every GPT-2 size)."""
        return self.d_model // self.n_head

    @property
    def d_attn(self) -> int:
        """Width of all query heads together (Kaplan et al.'s d_attn); equals d_model here."""
        return self.n_head * self.d_head

    @property
    def d_kv(self) -> int:
        """Width of all key (or value) heads together: n_kv_head × d_head."""
        return self.n_kv_head * self.d_head

    @property
    def n_rep(self) -> int:
        """Query heads per key/value head (repeat_kv's n_rep): 1 is multi-head attention."""
        return self.n_head // self.n_kv_head
