"""Model configurations: the four GPT-2 sizes and the toy of the attention walkthrough.

Every size the site prints (d_head, MLP width, vocabulary, context) is derived here, in one place.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.errors import InputError


@dataclass(frozen=True)
class ModelConfig:
    """Hyperparameters of one GPT-2-shaped model (names follow nanoGPT / OpenAI's hparams)."""

    name: str  # "gpt2": the key in CONFIGS and the name on the Hugging Face hub
    label: str  # "GPT-2 small": the name a page prints
    n_layer: int  # transformer blocks
    n_head: int  # attention heads per block
    d_model: int  # width of the residual stream (n_embd)
    n_ctx: int  # longest context: rows of the position embedding
    vocab_size: int  # rows of the token embedding
    layer_norm_eps: float = 1e-5
    bias: bool = True  # biases on the four projections (c_attn, attn c_proj, c_fc, mlp c_proj)

    def __post_init__(self) -> None:
        for field in ("n_layer", "n_head", "d_model", "n_ctx", "vocab_size"):
            if getattr(self, field) < 1:
                raise ValueError(f"{self.name}: {field} must be at least 1")
        if self.d_model % self.n_head:
            raise ValueError(f"{self.name}: d_model {self.d_model} is not divisible by n_head")

    @property
    def d_head(self) -> int:
        """Width of one attention head: d_model / n_head (64 in every GPT-2 size)."""
        return self.d_model // self.n_head

    @property
    def d_attn(self) -> int:
        """Width of all heads together (Kaplan et al.'s d_attn); equals d_model in GPT-2."""
        return self.n_head * self.d_head

    @property
    def d_mlp(self) -> int:
        """Hidden width of the MLP (Kaplan et al.'s d_ff): 4 × d_model."""
        return 4 * self.d_model


GPT2_VOCAB = 50257  # 50,000 BPE merges + 256 byte tokens + <|endoftext|>
GPT2_CONTEXT = 1024


def _gpt2(name: str, label: str, n_layer: int, n_head: int, d_model: int) -> ModelConfig:
    return ModelConfig(name, label, n_layer, n_head, d_model, GPT2_CONTEXT, GPT2_VOCAB)


TOY = ModelConfig(
    name="toy",
    label="toy",
    n_layer=2,
    n_head=2,
    d_model=8,
    n_ctx=16,
    vocab_size=32,
    bias=False,  # the walkthrough's toy leaves the projection biases out (seed 000)
)
TOY_TOKENS: int = 5  # tokens in the walkthrough's toy sequence

CONFIGS: dict[str, ModelConfig] = {
    "toy": TOY,
    "gpt2": ModelConfig("gpt2", "GPT-2 small", 12, 12, 768, GPT2_CONTEXT, GPT2_VOCAB),
    "gpt2-medium": ModelConfig(
        "gpt2-medium", "GPT-2 medium", 24, 16, 1024, GPT2_CONTEXT, GPT2_VOCAB
    ),
    "gpt2-large": ModelConfig("gpt2-large", "GPT-2 large", 36, 20, 1280, GPT2_CONTEXT, GPT2_VOCAB),
    "gpt2-xl": ModelConfig("gpt2-xl", "GPT-2 XL", 48, 25, 1600, GPT2_CONTEXT, GPT2_VOCAB),
}
SIZES: tuple[str, ...] = ("gpt2", "gpt2-medium", "gpt2-large", "gpt2-xl")


def get_config(name: str) -> ModelConfig:
    """The config called `name`; an InputError listing the valid names otherwise."""
    try:
        return CONFIGS[name]
    except KeyError:
        raise InputError(
            f"unknown model {name!r}",
            entry=name,
            fix=f"use one of: {', '.join(CONFIGS)}",
        ) from None
