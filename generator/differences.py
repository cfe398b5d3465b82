"""Where openai/gpt-2 and transformers differ, said where it matters and backed by both excerpts.

Each difference names the component pages it belongs on and the two excerpts that show it.
The prose is ours; the code is pinned (sources/lock.toml).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Difference:
    key: str  # anchor on the page: #diff-<key>
    title: str
    text: str  # Markdown, our words; {name} is filled from MEASURED (numbers come from code)
    excerpts: tuple[str, ...]  # excerpt ids, openai/gpt-2 first
    pages: tuple[str, ...]  # component keys whose pages show it

    def markdown(self) -> str:
        """The text with its measured numbers filled in (each measured only when used)."""
        text = self.text
        for name, measure in MEASURED.items():
            if f"{{{name}}}" in text:
                text = text.replace(f"{{{name}}}", measure())
        return text


DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        key="conv1d-layout",
        title="Weights are stored [in, out], not [out, in]",
        text=(
            "OpenAI's `conv1d` multiplies `x` by a weight of shape `[1, nx, nf]`: inputs first, "
            "outputs second. Transformers keeps that layout in its own `Conv1D` module (weight "
            "`[nx, nf]`, so `Conv1D(3 * embed_dim, embed_dim)` stores `[embed_dim, 3 * embed_dim]`). "
            "PyTorch's `nn.Linear` stores the transpose, `[out, in]`. Loading GPT-2 weights into "
            "`nn.Linear` layers (as nanoGPT does) therefore needs a transpose of every projection; "
            "the parameter counts are the same either way."
        ),
        excerpts=("gpt2.conv1d", "hf.attention-projections"),
        pages=("attention", "mlp", "model"),
    ),
    Difference(
        key="gelu-tanh",
        title="GELU is the tanh approximation",
        text=(
            "GPT-2 never computes the exact GELU, x·Φ(x). It uses the tanh approximation "
            "0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). Transformers selects the activation by "
            "name from the config, and GPT-2's config names `gelu_new`, the same tanh formula. "
            "Swapping in PyTorch's exact `gelu` changes the outputs slightly: "
            "{gelu_gap}."
        ),
        excerpts=("gpt2.gelu", "hf.mlp-act"),
        pages=("mlp",),
    ),
    Difference(
        key="mask-constant",
        title="How the causal mask is applied",
        text=(
            "OpenAI's code multiplies the scores by a 0/1 lower-triangular matrix and subtracts "
            "10¹⁰ where it is 0 (`w*b - 1e10*(1-b)`), so masked scores become huge negative "
            "numbers and softmax gives them weight 0 (to float precision). Transformers adds a "
            "prepared mask instead (`attn_weights + attention_mask`); its masking utilities "
            "(outside this excerpt) fill masked cells with the most negative value of the dtype "
            "(`torch.finfo(dtype).min`), and the SDPA backend uses a boolean mask, which behaves "
            "like −∞. The resulting weights agree to float precision."
        ),
        excerpts=("gpt2.attn-mask-weights", "hf.eager-attention-forward"),
        pages=("attention",),
    ),
    Difference(
        key="qkv-split",
        title="The fused Q, K, V projection splits in the same order",
        text=(
            "Both implementations compute queries, keys and values with one matrix of width "
            "3·d and split the result into three equal parts along the feature axis, in the "
            "order Q, K, V. A checkpoint's `c_attn` weight therefore holds W_Q, W_K and W_V side "
            "by side as column blocks, in that order, in both."
        ),
        excerpts=("gpt2.attn-projections", "hf.gpt2-attention-forward"),
        pages=("attention",),
    ),
    Difference(
        key="pre-norm",
        title="LayerNorm comes before each branch (pre-norm)",
        text=(
            "In both, LayerNorm is applied to the input of attention and of the MLP, and the "
            "branch output is added to the *unnormalized* residual stream. The original "
            "Transformer (and many diagrams) put LayerNorm after the addition (post-norm); GPT-2 "
            "does not. Because the stream is never normalized inside the blocks, GPT-2 adds one "
            "more LayerNorm, ln_f, after the last block."
        ),
        excerpts=("gpt2.block", "hf.block-residuals"),
        pages=("block", "ln1"),
    ),
)


def for_page(component: str) -> list[Difference]:
    return [d for d in DIFFERENCES if component in d.pages]


def gelu_gap() -> str:
    """How far GPT-2's tanh GELU is from the exact x·Φ(x), measured on a grid (numbers from code)."""
    import math

    import numpy as np

    from generator.engine.layers import gelu

    x = np.linspace(-6.0, 6.0, 12001)  # step 0.001
    exact = 0.5 * x * (1.0 + np.array([math.erf(v / math.sqrt(2.0)) for v in x]))
    gap = np.abs(gelu(x) - exact)
    worst = int(np.argmax(gap))
    # |gap| is symmetric: both formulas satisfy f(x) − f(−x) = x.
    return (
        f"the largest difference for x in [−6, 6] is {gap[worst]:.1e}, at x = ±{abs(x[worst]):.2f}"
    )


MEASURED = {"gelu_gap": gelu_gap}  # placeholder in a Difference's text -> the code measuring it
