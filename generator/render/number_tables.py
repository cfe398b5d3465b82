"""The tables of `itm numbers`, in plain text and in LaTeX: the command prints them, and the
generation page ships its cache and training tables as .tex files.

Each table is data first (caption, header, rows of text, numbers and accounting rows), read from
generator/accounting.py, then rendered: the numbers are computed there and formatted here.
"""

from __future__ import annotations

import textwrap

from generator import accounting as acc
from generator import decode_costs, scaling
from generator.accounting import Row
from generator.config import ModelConfig
from generator.models import get_family
from generator.render.numbers import fmt_int, row_label, row_tex, row_text, tex_int

Cell = str | int | Row  # text, a number, or a formula (printed as its calculation)
Table = tuple[str, list[str], list[list[Cell]]]  # (caption, header, rows)


def tables_text(cfg: ModelConfig, n_ctx: int, component: str | None, fmt: str) -> str:
    """Everything `itm numbers` prints, as one string."""
    if component:
        tables = details(cfg, component, n_ctx)
    else:
        shown = [
            c
            for c in get_family(cfg.family).components
            if acc.param_rows(cfg, c) or acc.flop_rows(cfg, c, n_ctx)
        ]
        tables = [overview(cfg, n_ctx)] + [t for c in shown for t in details(cfg, c, n_ctx)]
        tables.append(summary(cfg, n_ctx))
        tables += [generation(cfg, n_ctx), training(cfg, n_ctx)]
    render = render_tex if fmt == "tex" else render_text
    comment = "% " if fmt == "tex" else ""
    parts = [comment + describe(cfg, n_ctx)]
    parts += [render(table) for table in tables]
    wrap = textwrap.TextWrapper(100, comment, comment, break_on_hyphens=False)
    parts.append(wrap.fill(acc.FLOP_CONVENTION))
    if not component:
        parts += [wrap.fill(decode_costs.DECODE_NOTE), wrap.fill(scaling.TRAIN_NOTE)]
    return "\n\n".join(parts)


def describe(cfg: ModelConfig, n_ctx: int) -> str:
    heads = f"{cfg.n_head} heads" + (
        f" ({cfg.n_kv_head} key/value heads)" if cfg.n_kv_head != cfg.n_head else ""
    )
    return (
        f"{cfg.label} ({cfg.name}): {cfg.n_layer} blocks, {heads}, "
        f"d_model {fmt_int(cfg.d_model)}, {head_widths(cfg)}, {mlp_widths(cfg)}, "
        f"vocab {fmt_int(cfg.vocab_size)}, context {fmt_int(cfg.n_ctx)}; "
        f"FLOPs at T = {fmt_int(n_ctx)}"
    )


def head_widths(cfg: ModelConfig) -> str:
    """A head's width: d_head, or latent attention's query/key and value widths (no head of
    DeepSeek-V3 is d_model / n_head wide)."""
    lat = cfg.latent
    if lat is None:
        return f"d_head {cfg.d_head}"
    return (
        f"qk_head_dim {lat.qk_dim} (nope {lat.nope_dim} + rope {lat.rope_dim}), "
        f"v_head_dim {lat.v_dim}, latent rank {fmt_int(lat.kv_rank)}"
    )


def mlp_widths(cfg: ModelConfig) -> str:
    """The MLP's width, and with experts their count, top-k, width, and the dense layers'."""
    moe = cfg.experts
    if moe is None:
        return f"d_mlp {fmt_int(cfg.d_mlp)}"
    shared = f" + {moe.n_shared} shared" if moe.n_shared else ""
    experts = f"{moe.n_experts} experts{shared} (top {moe.top_k}), d_expert {fmt_int(moe.d_expert)}"
    if moe.first_dense:
        experts += f", d_mlp {fmt_int(cfg.d_mlp)} in the first {moe.first_dense} layers"
    return experts


def overview(cfg: ModelConfig, n_ctx: int) -> Table:
    """One line per component: parameters and FLOPs per instance, instances, totals."""
    header = [
        "Component",
        "Key",
        "Params / instance",
        "Instances",
        "Params total",
        "FLOPs / token / instance",
        "FLOPs / token total",
    ]
    rows: list[list[Cell]] = []
    for c in get_family(cfg.family).components:
        for kind, layers in acc.layer_kinds(cfg, c, n_ctx):
            params = acc.params_per_instance(cfg, c, layer=layers[0])
            flops = acc.flops_per_token(cfg, c, n_ctx, layers[0])
            count = acc.instances(cfg, c) if not kind else len(layers)
            label = labels(cfg)[c] + (f", layers with {kind}" if kind else "")
            rows.append([label, c, params, count, params * count, flops, flops * count])
    tied = "lm_head tied to wte" if cfg.tied_embeddings else "untied lm_head"
    return (f"{cfg.label}: components ({tied})", header, rows)


def labels(cfg: ModelConfig) -> dict[str, str]:
    """Each component's title in cfg's family; the norm before attention, whose page also
    covers the other norms (and is titled by all of them), is named alone: its row counts one
    norm per layer, not all three."""
    registry = get_family(cfg.family).registry
    shared = [c for c in registry if c.key == "ln1" and sum(o.page == c.page for o in registry) > 1]
    found = {c.key: c.title for c in registry}
    for c in shared:
        found[c.key] = f"{c.title.split(' (')[0]} before attention ({c.name})"
    return found


def details(cfg: ModelConfig, component: str, n_ctx: int) -> list[Table]:
    """One component's rows: one table, or one per kind of layer where its instances differ
    (gpt-oss's sliding-window and full attention; DeepSeek-V3's dense and expert layers)."""
    kinds = acc.layer_kinds(cfg, component, n_ctx)
    return [detail(cfg, component, n_ctx, kind, layers) for kind, layers in kinds]


def detail(
    cfg: ModelConfig, component: str, n_ctx: int, kind: str = "", layers: tuple[int, ...] = (0,)
) -> Table:
    """The rows behind one instance's numbers (in layers[0], standing for `layers` when `kind`
    says what sets them apart): parameters, then FLOPs per token."""
    layer = layers[0] if kind else None
    rows: list[list[Cell]] = []
    for row in acc.param_rows(cfg, component, layer=layer):
        rows.append(["parameters", row_label(row), row, row.value])
    params = acc.params_per_instance(cfg, component, layer=layer)
    rows.append(["parameters", "Per-instance total", "", params])
    for row in acc.flop_rows(cfg, component, n_ctx, layer):
        rows.append(["FLOPs / token", row_label(row), row, row.value])
    total = acc.flops_per_token(cfg, component, n_ctx, layer)
    rows.append(["FLOPs / token", "Per-instance total", "", total])
    title = f"{labels(cfg)[component]} [{component}]"
    caption = f"{title}, {acc.instances(cfg, component)} instance(s)"
    if kind:
        caption = f"{title}, layers with {kind}: {len(layers)} instance(s) ({layer_list(layers)})"
    return (caption, ["Kind", "Row", "Calculation", "Value"], rows)


def layer_list(layers: tuple[int, ...]) -> str:
    """ "layers 0, 2, 4, …, 34" or "layers 3 to 60": which layers a table stands for."""
    if layers == tuple(range(layers[0], layers[-1] + 1)) and len(layers) > 2:
        return f"layers {layers[0]} to {layers[-1]}"
    shown = ", ".join(map(str, layers[:3])) + (f", …, {layers[-1]}" if len(layers) > 4 else "")
    if len(layers) == 4:
        shown += f", {layers[-1]}"
    return f"layer {shown}" if len(layers) == 1 else f"layers {shown}"


SUMMARY_LABELS = {
    "params_tied": "Parameters (lm_head tied to wte, as GPT-2)",
    "params_untied": "Parameters (untied lm_head)",
    "embedding_params": "Embedding parameters (wte + wpe)",
    "non_embedding_params": "Non-embedding parameters (exact)",
    "kaplan_n": "Kaplan N = 12 · n_layer · d_model²",
    "kaplan_c_forward": "Kaplan C_forward = 2N + 2 · n_layer · n_ctx · d_attn",
    "flops_per_token": "Forward FLOPs / token (exact, matmuls)",
    "flops_minus_kaplan": "Exact − Kaplan = 2 · n_layer · n_ctx · d_attn + 2 · d_model · n_vocab",
    "flops_per_sequence": "Forward FLOPs / sequence of T tokens",
}

# Kaplan et al.'s N and C_forward describe GPT-2's shape; other families get the exact terms.
FAMILY_SUMMARY_LABELS = {
    "params": "Parameters (as the model is built)",
    "embedding_params": "Embedding parameters",
    "non_embedding_params": "Non-embedding parameters: the layers and the final norm (exact)",
    "block_weights": "Block weights N (the layers' matrices)",
    "flops_per_token": "Forward FLOPs / token (exact, matmuls) = 2N + grid + unembedding",
    "flops_per_sequence": "Forward FLOPs / sequence of T tokens",
}

EXPERT_SUMMARY_LABELS = {  # with experts, a token reads fewer parameters than the model holds
    "params": "Parameters (as the model is built)",
    "active_params": "Active parameters per token (the experts it runs)",
    "embedding_params": "Embedding parameters",
    "block_weights": "Block weights N (the layers' matrices, every expert)",
    "active_block_weights": "Block weights a token runs, N_active",
    "flops_per_token": "Forward FLOPs / token (exact, matmuls) = 2N_active + grid + unembedding",
    "flops_per_sequence": "Forward FLOPs / sequence of T tokens",
}


def summary(cfg: ModelConfig, n_ctx: int) -> Table:
    s = scaling.model_summary(cfg, n_ctx)
    chosen = SUMMARY_LABELS if scaling.kaplan_shape(cfg) else FAMILY_SUMMARY_LABELS
    if cfg.experts is not None:
        chosen = EXPERT_SUMMARY_LABELS
    rows: list[list[Cell]] = [[label, s[key]] for key, label in chosen.items()]
    return (f"{cfg.label}: summary at T = {fmt_int(n_ctx)}", ["Quantity", "Value"], rows)


def generation(cfg: ModelConfig, n_ctx: int) -> Table:
    """The KV cache's size, and the step that reads token number T with and without it."""
    rows: list[list[Cell]] = [
        ["KV cache", row_label(r), r, r.value] for r in decode_costs.kv_cache_rows(cfg, n_ctx)
    ]
    for cached, kind in ((True, "with cache"), (False, "recompute")):
        for r in decode_costs.decode_flop_rows(cfg, n_ctx, cached=cached):
            rows.append([f"FLOPs, {kind}", row_label(r), r, r.value])
        total = decode_costs.decode_flops(cfg, n_ctx, cached=cached)
        rows.append([f"FLOPs, {kind}", "Step total", "", total])
    crossover = decode_costs.cache_crossover(cfg) or "never: the windows cap the keys read"
    first_t = "First t where reading the cache costs more than the rest"
    outweigh = "Full-context sequences whose caches outweigh the weights"
    rows.append(["crossover", first_t, "", crossover])
    rows.append(["crossover", outweigh, "", decode_costs.cache_outweighs_weights(cfg)])
    caption = f"{cfg.label}: generation, the step that reads token number t = {fmt_int(n_ctx)}"
    return (caption, ["Kind", "Row", "Calculation", "Value"], rows)


def training(cfg: ModelConfig, n_ctx: int) -> Table:
    """A training step's FLOPs per token next to 6N, and Adam's memory per parameter."""
    rows: list[list[Cell]] = [
        ["FLOPs / token", row_label(r), r, r.value] for r in scaling.train_flop_rows(cfg, n_ctx)
    ]
    total = scaling.train_flops_per_token(cfg, n_ctx)
    rows.append(["FLOPs / token", "Training step total", "", total])
    kaplan = scaling.kaplan_shape(cfg)
    six_n = scaling.six_n(cfg) if kaplan else 6 * scaling.block_weights(cfg, active=True)
    rows.append(["FLOPs / token", "Kaplan's 6N" if kaplan else "6N", "", six_n])
    rows.append(["FLOPs / token", "Exact − 6N", "", total - six_n])
    memory = scaling.train_memory_rows(cfg)
    rows += [["bytes", row_label(r), r, r.value] for r in memory]
    rows.append(["bytes", "Weights, gradients and Adam state", "", sum(r.value for r in memory)])
    caption = f"{cfg.label}: a training step at T = {fmt_int(n_ctx)} (float32, Adam)"
    return (caption, ["Kind", "Row", "Calculation", "Value"], rows)


def render_text(table: Table) -> str:
    caption, header, rows = table

    def text(cell: Cell) -> str:
        if isinstance(cell, Row):
            return row_text(cell)
        return fmt_int(cell) if isinstance(cell, int) else cell

    cells = [header] + [[text(cell) for cell in row] for row in rows]
    numeric = [all(isinstance(row[i], int) for row in rows) for i in range(len(header))]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = [caption, "-" * len(caption)]
    for n, row in enumerate(cells):
        padded = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(row, widths, numeric, strict=True)
        ]
        lines.append("  ".join(padded).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


TEX_TEXT = (
    ("\\", "\\textbackslash{}"),
    ("_", "\\_"),
    ("&", "\\&"),
    ("%", "\\%"),
    ("#", "\\#"),
    ("x · wteᵀ", "$x\\,W_{te}^\\top$"),
    ("QKᵀ", "$QK^\\top$"),
    ("A·V", "$AV$"),
    ("γ", "$\\gamma$"),
    ("β", "$\\beta$"),
    ("²", "$^2$"),
    ("·", "$\\cdot$"),
    ("−", "$-$"),
)


def tex_text(value: str) -> str:
    """Plain label text made safe for LaTeX (specials escaped, Greek and symbols in math)."""
    for plain, tex in TEX_TEXT:
        value = value.replace(plain, tex)
    return value


def render_tex(table: Table) -> str:
    caption, header, rows = table

    def tex(cell: Cell) -> str:
        if isinstance(cell, Row):
            return f"${row_tex(cell)}$"
        return f"${tex_int(cell)}$" if isinstance(cell, int) else tex_text(cell)

    numeric = [all(isinstance(row[i], int) for row in rows) for i in range(len(header))]
    spec = "".join("r" if num else "l" for num in numeric)
    lines = [f"% {caption}", f"\\begin{{tabular}}{{{spec}}}", "\\hline"]
    lines.append(" & ".join(tex_text(h) for h in header) + r" \\")
    lines.append("\\hline")
    lines += [" & ".join(tex(cell) for cell in row) + r" \\" for row in rows]
    lines += ["\\hline", "\\end{tabular}"]
    return "\n".join(lines)
