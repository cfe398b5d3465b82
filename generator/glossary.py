"""Notation used on every page: each symbol, what it means, and its value per GPT-2 size; and
the words of the trade (TERMS), each defined once, which pages link at their first use."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from generator.accounting import kaplan_n
from generator.config import ModelConfig
from generator.models.config import Experts, Latent


@dataclass(frozen=True)
class Symbol:
    anchor: str  # #sym-<anchor> on the glossary page
    tex: str
    meaning: str
    # a count, a factor or a shape ("[8 × 4,096]"); None (or no function): depends on the input,
    # or the size has no such part
    value: Callable[[ModelConfig], int | float | str | None] | None = None


def _by_anchor(*symbols: Symbol) -> dict[str, Symbol]:
    """{anchor: symbol}, in the order given."""
    return {symbol.anchor: symbol for symbol in symbols}


SYMBOLS = _by_anchor(
    Symbol("B", "B", "batch size: how many sequences run side by side"),
    Symbol("T", "T", "sequence length: tokens in the input (at most n_ctx)"),
    Symbol("d", r"d", "width of the residual stream (d_model, n_embd)", lambda c: c.d_model),
    Symbol("h", "h", "attention heads per block (n_head)", lambda c: c.n_head),
    Symbol("d_head", r"d_{\mathrm{head}}", "width of one head: d / h", lambda c: c.d_head),
    Symbol("d_ff", r"d_{\mathrm{ff}}", "hidden width of the MLP: 4·d", lambda c: c.d_mlp),
    Symbol("L", "L", "number of transformer blocks (n_layer)", lambda c: c.n_layer),
    Symbol("V", "V", "vocabulary size: rows of wte (n_vocab)", lambda c: c.vocab_size),
    Symbol("n_ctx", r"n_{\mathrm{ctx}}", "longest context: rows of wpe", lambda c: c.n_ctx),
    Symbol(
        "N",
        "N",
        "non-embedding parameters in Kaplan et al.'s sense: 12·L·d² (block weights only)",
        kaplan_n,
    ),
)

# The Llama family's: the same letters where they mean the same, and what it adds.
LLAMA_SYMBOLS = _by_anchor(
    Symbol("llama-d", "d", "width of the residual stream (hidden_size)", lambda c: c.d_model),
    Symbol("llama-h", "h", "query heads per layer (num_attention_heads)", lambda c: c.n_head),
    Symbol(
        "h_kv",
        r"h_{\mathrm{kv}}",
        "key/value heads per layer (num_key_value_heads); h / h_kv query heads share each",
        lambda c: c.n_kv_head,
    ),
    Symbol("llama-d_head", r"d_{\mathrm{head}}", "width of one head: d / h", lambda c: c.d_head),
    Symbol(
        "llama-d_ff",
        r"d_{\mathrm{ff}}",
        "hidden width of the SwiGLU MLP (intermediate_size), set by the config",
        lambda c: c.d_mlp,
    ),
    Symbol("llama-L", "L", "number of decoder layers (num_hidden_layers)", lambda c: c.n_layer),
    Symbol(
        "llama-V", "V", "vocabulary size: rows of embed_tokens and lm_head", lambda c: c.vocab_size
    ),
    Symbol(
        "llama-n_ctx",
        r"n_{\mathrm{ctx}}",
        "longest context the config allows (max_position_embeddings); no table limits it",
        lambda c: c.n_ctx,
    ),
    Symbol(
        "rope-base",
        "b",
        "RoPE's base (rope_theta): pair i of a head turns θ_i = b^(−2i/d_head) radians per position",
        lambda c: round(c.rope_theta),
    ),
    Symbol(
        "W",
        "W",
        "sliding window: the positions a query sees, itself included (— when it sees all)",
        lambda c: c.sliding_window or 0,
    ),
)


def _shape(*dims: int) -> str:
    """A tensor's shape as the glossary shows it: "[8 × 4,096]"."""
    return "[" + " × ".join(f"{n:,}" for n in dims) + "]"


def _moe(
    value: Callable[[Experts, ModelConfig], int | float | str | None], router: str | None = None
) -> Callable[[ModelConfig], int | float | str | None]:
    """A symbol's value from a size's experts (with that router, when given); None without."""

    def read(cfg: ModelConfig) -> int | float | str | None:
        moe = cfg.experts
        if moe is None or (router is not None and moe.router != router):
            return None
        return value(moe, cfg)

    return read


def _latent(
    value: Callable[[Latent, ModelConfig], int | str],
) -> Callable[[ModelConfig], int | str | None]:
    """A symbol's value from a size's latent attention; None without."""
    return lambda cfg: value(cfg.latent, cfg) if cfg.latent is not None else None


# The frontier families' (Mixtral, gpt-oss, DeepSeek-V3): the letters their formulas add.
FRONTIER_SYMBOLS = _by_anchor(
    Symbol(
        "E",
        "E",
        "the number of routed experts in each MoE layer (num_local_experts)",
        _moe(lambda moe, c: moe.n_experts),
    ),
    Symbol(
        "K",
        r"K,\ \mathcal{K}",
        "the experts a token runs: the k best by the router's scores (num_experts_per_tok of E)",
        _moe(lambda moe, c: f"{moe.top_k} of {moe.n_experts}"),
    ),
    Symbol(
        "p",
        "p",
        "Mixtral's router probabilities: a softmax over every expert's score, one per expert",
        _moe(lambda moe, c: _shape(moe.n_experts), "softmax-topk"),
    ),
    Symbol(
        "W_gate",
        r"W_{\mathrm{gate}}",
        "Mixtral's router matrix (mlp.gate): a score per expert from Z_2",
        _moe(lambda moe, c: _shape(moe.n_experts, c.d_model), "softmax-topk"),
    ),
    Symbol(
        "r",
        "r",
        "gpt-oss's router logits Z_2 W_r^T + b_r, one per expert; only the top k are softmaxed",
        _moe(lambda moe, c: _shape(moe.n_experts), "topk-softmax"),
    ),
    Symbol(
        "W_r",
        r"W_r,\ b_r",
        "gpt-oss's router: its weight matrix and its bias (mlp.router)",
        _moe(
            lambda moe, c: f"{_shape(moe.n_experts, c.d_model)}, {_shape(moe.n_experts)}",
            "topk-softmax",
        ),
    ),
    Symbol(
        "w_e",
        "w_e",
        "DeepSeek-V3's router: expert e's row of mlp.gate, scored by the sigmoid σ(zᵀw_e)",
        _moe(lambda moe, c: _shape(c.d_model), "sigmoid-grouped"),
    ),
    Symbol(
        "gamma",
        r"\gamma",
        "routed_scaling_factor: the chosen experts' normalised weights are multiplied by it",
        _moe(lambda moe, c: moe.routed_scaling, "sigmoid-grouped"),
    ),
    Symbol(
        "FFN_e",
        r"\operatorname{FFN}_e",
        "expert e's MLP (a SwiGLU; gpt-oss's clamped), its hidden width d_expert",
        _moe(lambda moe, c: moe.d_expert),
    ),
    Symbol(
        "FFN_shared",
        r"\operatorname{FFN}_{\mathrm{shared}}",
        "the shared experts every token runs, one MLP n_shared_experts × d_expert wide",
        _moe(lambda moe, c: moe.n_shared * moe.d_expert),  # 0: none (a dash)
    ),
    Symbol(
        "alpha",
        r"\alpha",
        "gpt-oss's clamped SwiGLU: g · σ(α g) · (u + 1), the gate g and up u clamped at the limit",
        lambda c: c.swiglu_alpha if c.mlp == "swiglu-clamped" else None,
    ),
    Symbol(
        "s_h",
        "s_h",
        "gpt-oss's sink of head h: a learned logit joining each row of its softmax, with no value"
        " (one per head)",
        lambda c: c.n_head if c.attention_sinks else None,
    ),
    Symbol(
        "w",
        "w",
        "gpt-oss's window (sliding_window): the positions a sliding layer's query sees, itself"
        " included",
        lambda c: c.sliding_window if c.layer_types is not None else None,
    ),
    Symbol(
        "W_t",
        "W(t)",
        "the keys query t sees: its last w positions in a sliding layer, all before it in a full"
        " one",
    ),
    Symbol(
        "c_t",
        "c_t",
        "DeepSeek-V3's latent of position t: what its cache keeps of keys and values"
        " (kv_lora_rank wide)",
        _latent(lambda lat, c: lat.kv_rank),
    ),
    Symbol(
        "W_DKV",
        r"W_{\mathrm{DKV}}",
        "down-projection of z_t to the latent (kv_a_proj_with_mqa's first kv_lora_rank rows)",
        _latent(lambda lat, c: _shape(lat.kv_rank, c.d_model)),
    ),
    Symbol(
        "W_KR",
        r"W_{\mathrm{KR}}",
        "projection of z_t to the rotated key k^R shared by every head (kv_a_proj_with_mqa's"
        " last qk_rope_head_dim rows)",
        _latent(lambda lat, c: _shape(lat.rope_dim, c.d_model)),
    ),
    Symbol(
        "W_UKV",
        r"W_{\mathrm{UKV},h}",
        "head h's read-out of the latent into its unrotated key and its value (kv_b_proj)",
        _latent(lambda lat, c: _shape(lat.nope_dim + lat.v_dim, lat.kv_rank)),
    ),
    Symbol(
        "d_nope",
        r"d_{\mathrm{nope}}",
        "width of a query or key head's unrotated part q^C, k^C (qk_nope_head_dim)",
        _latent(lambda lat, c: lat.nope_dim),
    ),
    Symbol(
        "d_rope",
        r"d_{\mathrm{rope}}",
        "width of a head's rotated part q^R, k^R (qk_rope_head_dim); a query/key head is"
        " d_nope + d_rope wide",
        _latent(lambda lat, c: lat.rope_dim),
    ),
)


# The Notation page's tables: {{ glossary(name) }} shows these families' sizes and symbols.
NOTATION: dict[str, tuple[tuple[str, ...], dict[str, Symbol]]] = {
    "gpt2": (("gpt2",), SYMBOLS),
    "llama": (("llama",), LLAMA_SYMBOLS),
    "frontier": (("mixtral", "gpt-oss", "deepseek-v3"), FRONTIER_SYMBOLS),
}


def symbol_value(symbol: Symbol, cfg: ModelConfig) -> str:
    """A symbol's value in a size, as the table shows it: "4,096", "2.5", a shape, or "—"."""
    value = symbol.value(cfg) if symbol.value else None
    if not value:
        return "—"
    if isinstance(value, float):
        return f"{value:g}"
    return f"{value:,}" if isinstance(value, int) else value


@dataclass(frozen=True)
class Term:
    """A word of the trade, defined once on the Notation page (#term-<anchor>); the first time a
    page's prose uses it, it links there (render/page_html.link_terms)."""

    anchor: str
    name: str  # the heading: "GQA: grouped-query attention"
    pattern: (
        str  # a regex for its uses in prose, case-sensitive: r"\bGQA\b|grouped-query attention"
    )
    meaning: str  # plain words


TERMS: tuple[Term, ...] = (
    Term(
        "flop",
        "FLOP: floating-point operation",
        r"\b[MGT]?FLOPs?\b",
        "One addition or one multiplication of floating-point numbers: a multiply-add counts as "
        "two. MFLOPs, GFLOPs and TFLOPs are millions, billions and trillions of them. The counts "
        "on this site are of matrix products only (How FLOPs are counted, above).",
    ),
    Term(
        "gemm",
        "GEMM: general matrix multiply",
        r"\bGEMMs?\b",
        "One product of two matrices, [m × k] · [k × n], the operation a linear layer runs as: "
        "2·m·k·n FLOPs. Libraries and GPUs are built to run it fast.",
    ),
    Term(
        "matmul",
        "matmul: matrix multiplication",
        r"\bmatmuls?\b",
        "A matrix product, as code names it (torch.matmul, numpy.matmul, the @ operator). A "
        "GEMM is the same operation under the name linear-algebra libraries give it.",
    ),
    Term(
        "softmax",
        "softmax",
        r"\bsoftmax\b",
        "Exponentiate each entry of a vector and divide by their sum: positive weights that add "
        "up to 1, the largest entry getting the most.",
    ),
    Term(
        "logits",
        "logits",
        r"\blogits?\b",
        "The unnormalised scores the model gives every token of the vocabulary for the next "
        "position; softmax turns them into probabilities.",
    ),
    Term(
        "gelu",
        "GELU: Gaussian error linear unit",
        r"\bGELU\b",
        "GPT-2's MLP activation: x·Φ(x), where Φ is the standard normal distribution's "
        "cumulative probability (GPT-2 computes it with a tanh approximation). Close to ReLU, "
        "but smooth.",
    ),
    Term(
        "silu",
        "SiLU: sigmoid linear unit",
        r"\bSiLU\b",
        "SiLU(x) = x·σ(x), where σ(x) = 1 / (1 + e^−x) is the logistic sigmoid; also called "
        "swish. "
        "SwiGLU gates with it.",
    ),
    Term(
        "swiglu",
        "SwiGLU: SiLU-gated linear unit",
        r"\bSwiGLU\b",
        "The Llama family's MLP: two projections of the input, one passed through SiLU, "
        "multiplied element by element, and a third projection back to the stream's width "
        "(Shazeer 2020).",
    ),
    Term(
        "layernorm",
        "LayerNorm: layer normalisation",
        r"\bLayerNorm\b",
        "Subtract a vector's mean, divide by its standard deviation, then multiply by a learned "
        "gain and add a learned shift: GPT-2's ln_1, ln_2 and ln_f.",
    ),
    Term(
        "rmsnorm",
        "RMSNorm: root-mean-square normalisation",
        r"\bRMSNorm\b",
        "Divide a vector by its root mean square and multiply by a learned gain: no mean taken "
        "away, no shift added (Zhang & Sennrich 2019). The Llama family's norms.",
    ),
    Term(
        "pre-norm",
        "pre-norm",
        r"\bpre-norm\b",
        "A block that normalises what goes into each sublayer (attention, MLP), not what comes "
        "out: the residual stream itself is normalised only once, by the final norm.",
    ),
    Term(
        "residual-stream",
        "residual stream",
        r"\bresidual stream\b",
        "The vector of d numbers per token that runs from the embedding to the final norm: each "
        "sublayer reads a normalised copy of it and adds its output back.",
    ),
    Term(
        "rope",
        "RoPE: rotary position embedding",
        r"\bRoPE\b",
        "Positions given by rotating each query and key, pair of dimensions by pair, by an "
        "angle proportional to the position, in every layer; nothing is learned (Su et al. "
        "2021).",
    ),
    Term(
        "gqa",
        "GQA: grouped-query attention (and MHA, MQA)",
        r"\bGQA\b|\bgrouped-query attention\b",
        "Attention in which groups of query heads share one key and value head: h_kv key/value "
        "heads for h query heads. Multi-head attention (MHA, GPT-2's) is the case h_kv = h, "
        "multi-query attention (MQA) the case h_kv = 1 (Ainslie et al. 2023).",
    ),
    Term(
        "kv-cache",
        "KV cache",
        r"\bKV cache\b",
        "The keys and values of the tokens already read, kept while generating so that each new "
        "token computes only its own and reads theirs.",
    ),
    Term(
        "sliding-window",
        "SWA: sliding-window attention",
        r"\bsliding[ -]window\b|\bSWA\b",
        "Attention in which a query sees only the last W positions, itself included: Mistral's. "
        "The cost of a token and the cache stop growing with the context past W.",
    ),
    Term(
        "moe",
        "MoE: mixture of experts",
        r"\bMoE\b|\bmixture of experts\b",
        "An MLP made of several expert MLPs, of which a small router picks a few for each "
        "token. GPT-2, Llama 2 and Mistral 7B have none: every token goes through the one MLP; "
        "Mixtral, gpt-oss and DeepSeek-V3 have one in their layers.",
    ),
    Term(
        "active-parameters",
        "active parameters",
        r"\bactive parameters\b",
        "The parameters one token's forward pass reads: with a mixture of experts, only the "
        "experts the router picked for it, so fewer than the model holds.",
    ),
    Term(
        "attention-sink",
        "attention sink",
        r"\battention sinks?\b|\bsinks?\b",
        "A learned score that joins a head's softmax as if it were one more key, with no value "
        "behind it: the head can give its weight to nothing instead of to tokens.",
    ),
    Term(
        "mla",
        "MLA: multi-head latent attention",
        r"\bMLA\b|\b(?:multi-head )?latent attention\b",
        "Attention whose keys and values are read out of one small latent vector per position, "
        "so a cache can keep that latent instead of every head's keys and values.",
    ),
    Term(
        "yarn",
        "YaRN",
        r"\bYaRN\b",
        "A way to stretch rotary positions to a longer context than the model was trained at: "
        "the slowest rotations are slowed further, the fastest kept, and the scores rescaled.",
    ),
    Term(
        "induction-head",
        "induction head",
        r"\binduction heads?\b",
        "An attention head that, at a token seen before, looks at the token that followed its "
        "earlier occurrence, so the model can predict it again (Olsson et al. 2022).",
    ),
    Term(
        "bpe",
        "BPE: byte-pair encoding",
        r"\bBPE\b|\bbyte-pair encoding\b",
        "How GPT-2's tokenizer cuts text into tokens: from single bytes, the most frequent "
        "adjacent pairs were merged, again and again, into the vocabulary's entries.",
    ),
    Term(
        "float16",
        "float16",
        r"\bfloat16\b",
        "A floating-point number in 16 bits: 2 bytes. Memory such as the KV cache is counted in "
        "them here.",
    ),
)
