"""One config class for every decoder the site takes apart: the spec the shared decoder, the
accounting and the registry read.

A size is a `ModelConfig`: the family's name, the widths and counts, and the choices that tell
the families apart, as data: the norm (kind, ε; every family here is pre-norm), positions (a
learned table, or RoPE with θ, its pairing and any scaling), attention (query and key/value heads
and their width, or latent attention with its ranks; biases per projection; a window per layer;
sinks), the MLP (GELU, SwiGLU or clamped SwiGLU, or experts: count, top-k, shared experts, dense
first layers, the router and its normalisation) and a tied unembedding. Every other width is
derived here, so pages and engines never recompute one. Shared code branches on these fields,
never on a family's name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from generator.errors import InputError
from generator.models.names import GPT2_NAMES, TensorNames

Norm = Literal["layernorm", "rmsnorm"]
Mlp = Literal["gelu", "swiglu", "swiglu-clamped"]
Positions = Literal["learned", "rope"]
LayerType = Literal["full", "sliding"]
Router = Literal["softmax-topk", "topk-softmax", "sigmoid-grouped"]

NORMS: tuple[Norm, ...] = ("layernorm", "rmsnorm")
MLPS: tuple[Mlp, ...] = ("gelu", "swiglu", "swiglu-clamped")
POSITIONS: tuple[Positions, ...] = ("learned", "rope")
LAYER_TYPES: tuple[LayerType, ...] = ("full", "sliding")
ROUTERS: tuple[Router, ...] = ("softmax-topk", "topk-softmax", "sigmoid-grouped")
PROJECTIONS = ("q", "k", "v", "o")  # an attention's projections, as `biased` names them


@dataclass(frozen=True)
class Yarn:
    """YaRN's scaling of RoPE's frequencies: a config's rope_parameters with rope_type "yarn",
    under transformers' names (generator/models/rope.py computes with them)."""

    factor: float  # how many times the trained context the wavelengths stretch to
    original_max_position_embeddings: int  # the trained context
    beta_fast: float = 32.0
    beta_slow: float = 1.0
    truncate: bool = True  # gpt-oss: False
    mscale: float | None = None  # DeepSeek: 1.0
    mscale_all_dim: float | None = None  # DeepSeek: 1.0
    attention_factor: float | None = None


@dataclass(frozen=True)
class Latent:
    """Multi-head latent attention (DeepSeek-V2/V3): keys and values come from one compressed
    vector per position, queries optionally from another; only part of a head is rotated."""

    kv_rank: int  # kv_lora_rank: width of the cached latent c_kv
    q_rank: int | None  # q_lora_rank: queries' latent width (None: a plain q projection)
    nope_dim: int  # qk_nope_head_dim: the part of a query/key head that is not rotated
    rope_dim: int  # qk_rope_head_dim: the rotated part (its key is shared by every head)
    v_dim: int  # v_head_dim: a value head's width

    @property
    def qk_dim(self) -> int:
        """A query or key head's width: its unrotated and rotated parts."""
        return self.nope_dim + self.rope_dim


@dataclass(frozen=True)
class Experts:
    """A mixture of experts in place of the MLP: a router picks top_k of n_experts per token."""

    n_experts: int  # routed experts per layer (num_local_experts, n_routed_experts)
    top_k: int  # experts each token runs (num_experts_per_tok)
    d_expert: int  # an expert's hidden width (moe_intermediate_size; Mixtral: intermediate_size)
    router: Router  # how scores become the chosen experts' weights
    n_shared: int = 0  # experts every token runs, as one MLP n_shared · d_expert wide
    first_dense: int = 0  # the first layers keep a dense MLP d_mlp wide (first_k_dense_replace)
    n_group: int = 1  # sigmoid-grouped: experts split into groups …
    topk_group: int = 1  # … of which the best topk_group are searched
    norm_topk_prob: bool = True  # the chosen weights renormalised to sum to 1
    routed_scaling: float = 1.0  # the chosen weights then multiplied by this
    router_bias: bool = False  # the router's linear has a bias (gpt-oss)


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
    head_dim: int = None  # type: ignore[assignment]  # a head's width; None: d_model / n_head
    qkv_bias: bool | None = None  # biases on q, k and v only; None: as `bias` (Qwen2: True)
    layer_types: tuple[LayerType, ...] | None = None  # per layer; None: all "sliding" when there
    # is a sliding_window, else all "full" (gpt-oss alternates)
    attention_sinks: bool = False  # a learned logit per head joins each softmax row (gpt-oss)
    rope_scaling: Yarn | None = None
    rope_interleave: bool = False  # RoPE pairs dimensions (2i, 2i + 1), not (i, i + d/2)
    latent: Latent | None = None  # latent attention in place of q/k/v projections
    experts: Experts | None = None  # a mixture of experts in place of the MLP
    swiglu_alpha: float = 1.702  # "swiglu-clamped": gate · sigmoid(alpha · gate) · (up + 1) …
    swiglu_limit: float = 7.0  # … with gate ≤ limit and |up| ≤ limit (gpt-oss)
    names: TensorNames = GPT2_NAMES  # where its checkpoint keeps each tensor (names.py)

    def __post_init__(self) -> None:
        if self.n_kv_head is None or isinstance(self.n_kv_head, Derived):
            object.__setattr__(self, "n_kv_head", Derived(self.n_head))
        if self.d_mlp is None or isinstance(self.d_mlp, Derived):
            object.__setattr__(self, "d_mlp", Derived(4 * self.d_model))
        if self.head_dim is None or isinstance(self.head_dim, Derived):
            heads = self.n_head if _whole(self.n_head) and self.n_head > 0 else 1
            object.__setattr__(self, "head_dim", Derived(_floor_div(self.d_model, heads)))
        self._check()

    def _check(self) -> None:
        """Refuse a size whose fields cannot describe a model, naming the field and the fix."""
        for field in ("n_layer", "n_head", "n_kv_head", "d_model", "d_mlp", "n_ctx", "vocab_size"):
            value = getattr(self, field)
            if not _whole(value) or value < 1:
                self._refuse(field, f"{field} is {value!r}", f"set {field} to a whole number >= 1")
        if isinstance(self.head_dim, Derived) and self.d_model % self.n_head:
            self._refuse(
                "n_head",
                f"n_head {self.n_head} does not divide d_model {self.d_model}",
                f"choose n_head among the divisors of {self.d_model}, or a d_model that "
                f"{self.n_head} divides (a head is d_model / n_head wide)",
            )
        if not _whole(self.head_dim) or self.head_dim < 1:
            self._refuse("head_dim", f"head_dim is {self.head_dim!r}", "use a whole number >= 1")
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
        rotated = self.latent.rope_dim if self.latent else self.d_head
        if self.positions == "rope" and rotated % 2:
            field = "latent.rope_dim" if self.latent else "n_head"
            self._refuse(
                field,
                f"RoPE rotates pairs of dimensions, but a head's rotated part is {rotated} wide"
                " (odd)",
                "choose n_head so that d_model / n_head is even"
                if field == "n_head"
                else "use an even rope_dim",
            )
        if self.positions == "rope" and not _positive(self.rope_theta):
            self._refuse("rope_theta", f"rope_theta is {self.rope_theta!r}", "use a base > 0")
        if not _positive(self.norm_eps):
            self._refuse("norm_eps", f"norm_eps is {self.norm_eps!r}", "use an ε > 0, e.g. 1e-5")
        window = self.sliding_window
        if window is not None and (not _whole(window) or window < 1):
            self._refuse(
                "sliding_window",
                f"sliding_window is {window!r}",
                "use None (every earlier position) or a number of positions >= 1",
            )
        self._check_layer_types()
        self._check_rope_scaling()
        self._check_latent()
        self._check_experts()
        if self.mlp == "swiglu-clamped" and not (
            _positive(self.swiglu_alpha) and _positive(self.swiglu_limit)
        ):
            self._refuse("swiglu_limit", "swiglu_alpha and swiglu_limit must be > 0", "use > 0")

    def _check_layer_types(self) -> None:
        types = self.layer_types
        if types is None:
            return
        if not isinstance(types, tuple) or len(types) != self.n_layer:
            count = len(types) if isinstance(types, tuple | list) else types
            self._refuse(
                "layer_types",
                f"layer_types lists {count} layers, the model has n_layer = {self.n_layer}",
                f"give one type per layer ({', '.join(LAYER_TYPES)}), {self.n_layer} in all",
            )
        unknown = [kind for kind in types if kind not in LAYER_TYPES]
        if unknown:
            self._refuse(
                "layer_types", f"layer type {unknown[0]!r}", f"use {' or '.join(LAYER_TYPES)}"
            )
        if "sliding" in types and self.sliding_window is None:
            self._refuse(
                "layer_types",
                "layer_types has sliding layers but sliding_window is None",
                "set sliding_window, or make every layer full",
            )

    def _check_rope_scaling(self) -> None:
        yarn = self.rope_scaling
        if yarn is None:
            return
        if self.positions != "rope":
            self._refuse("rope_scaling", "rope_scaling without RoPE", "remove rope_scaling")
        if not _positive(yarn.factor) or not _whole(yarn.original_max_position_embeddings):
            self._refuse(
                "rope_scaling",
                f"YaRN factor {yarn.factor!r}, original context"
                f" {yarn.original_max_position_embeddings!r}",
                "use a factor > 0 and a whole original context >= 1",
            )

    def _check_latent(self) -> None:
        latent = self.latent
        if latent is None:
            return
        for name in ("kv_rank", "nope_dim", "rope_dim", "v_dim"):
            value = getattr(latent, name)
            if not _whole(value) or value < 1:
                self._refuse(
                    f"latent.{name}",
                    f"latent attention's {name} is {value!r}",
                    f"set {name} to a whole number >= 1 (a rank of 0 leaves nothing to attend with)",
                )
        if latent.q_rank is not None and (not _whole(latent.q_rank) or latent.q_rank < 1):
            self._refuse(
                "latent.q_rank",
                f"latent attention's q_rank is {latent.q_rank!r}",
                "use None (a plain query projection) or a whole number >= 1",
            )
        if self.n_kv_head != self.n_head:
            self._refuse(
                "n_kv_head",
                "latent attention expands keys and values for every head",
                "leave n_kv_head equal to n_head",
            )

    def _check_experts(self) -> None:
        moe = self.experts
        if moe is None:
            return
        for name in ("n_experts", "top_k", "d_expert", "n_group", "topk_group"):
            value = getattr(moe, name)
            if not _whole(value) or value < 1:
                self._refuse(
                    f"experts.{name}", f"experts.{name} is {value!r}", "use a whole number >= 1"
                )
        for name in ("n_shared", "first_dense"):
            value = getattr(moe, name)
            if not _whole(value) or value < 0:
                self._refuse(
                    f"experts.{name}", f"experts.{name} is {value!r}", "use a whole number >= 0"
                )
        if moe.router not in ROUTERS:
            self._refuse(
                "experts.router", f"router {moe.router!r}", f"use one of: {', '.join(ROUTERS)}"
            )
        if moe.n_experts % moe.n_group or moe.topk_group > moe.n_group:
            self._refuse(
                "experts.n_group",
                f"{moe.n_experts} experts in {moe.n_group} groups, {moe.topk_group} searched",
                "choose n_group dividing n_experts, and topk_group <= n_group",
            )
        searched = moe.n_experts // moe.n_group * moe.topk_group
        if moe.top_k > searched:
            self._refuse(
                "experts.top_k",
                f"top_k {moe.top_k} is more than the {searched} experts a token may choose from"
                + (f" ({moe.topk_group} of {moe.n_group} groups)" if moe.n_group > 1 else ""),
                f"choose top_k <= {searched}",
            )
        if moe.first_dense > self.n_layer:
            self._refuse(
                "experts.first_dense",
                f"first_dense {moe.first_dense} is more than n_layer {self.n_layer}",
                f"choose first_dense <= {self.n_layer}",
            )
        if not _positive(moe.routed_scaling):
            self._refuse("experts.routed_scaling", "routed_scaling must be > 0", "use > 0")

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
        """Width of one attention head: head_dim, d_model / n_head unless given (64 in every
        GPT-2 size; gpt-oss's 64 with d_model 2,880)."""
        return self.head_dim

    @property
    def d_attn(self) -> int:
        """Width of all query heads together (Kaplan et al.'s d_attn); d_model in GPT-2."""
        return self.n_head * self.d_head

    @property
    def d_kv(self) -> int:
        """Width of all key (or value) heads together: n_kv_head × d_head."""
        return self.n_kv_head * self.d_head

    @property
    def n_rep(self) -> int:
        """Query heads per key/value head (repeat_kv's n_rep): 1 is multi-head attention."""
        return self.n_head // self.n_kv_head

    def biased(self, projection: str) -> bool:
        """Whether projection "q", "k", "v", "o" or "mlp" has a bias."""
        if projection in ("q", "k", "v") and self.qkv_bias is not None:
            return self.qkv_bias
        return self.bias

    def layer_type(self, layer: int) -> LayerType:
        """ "sliding" or "full": whether layer `layer` sees a window or every earlier position."""
        if self.layer_types is not None:
            return self.layer_types[layer]
        return "full" if self.sliding_window is None else "sliding"

    def window(self, layer: int) -> int | None:
        """The positions a query of layer `layer` sees, itself included (None: all before it)."""
        return self.sliding_window if self.layer_type(layer) == "sliding" else None

    @property
    def windows(self) -> tuple[int | None, ...]:
        """window(i) of every layer."""
        return tuple(self.window(i) for i in range(self.n_layer))

    def moe_layer(self, layer: int) -> bool:
        """Whether layer `layer` has experts in place of a dense MLP."""
        return self.experts is not None and layer >= self.experts.first_dense


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive(value: object) -> bool:
    """A finite number > 0 (not a bool, not NaN, not infinity)."""
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < float("inf")
    )


def _floor_div(a: object, b: int) -> int:
    return a // b if _whole(a) else 0  # type: ignore[operator]
