"""Macros of the site-wide pages: the architecture map, notation, the model's numbers (with the
Sources page's from sources_page.py and the "What changed" page's from changes_page.py)."""

from __future__ import annotations

from generator import accounting, blocks, decode_costs, scaling
from generator.config import ModelConfig
from generator.errors import InputError
from generator.models import get_family
from generator.pages.blocks import GlossaryTerms
from generator.pages.changes_page import ChangeMacros
from generator.pages.context import family_sizes, size_tabs
from generator.pages.sources_page import SourcesMacros
from generator.render.diagram import architecture_map
from generator.render.numbers import fmt_int, row_label


class SiteMacros(SourcesMacros, ChangeMacros):
    """{{ architecture_map() }}, {{ glossary() }}, {{ sources_index() }}, ...: any page may call them."""

    SITE_MACROS: tuple[str, ...] = (
        "architecture_map",
        "sources_index",
        "glossary",
        "model_numbers",
        "flop_convention",
        "evidence_levels",
        "family_numbers",
        "what_changed",
        "change_chain",
        "families_side_by_side",
        "flop_relations",
        "glossary_terms",
    )

    def glossary(self, table: str = "gpt2") -> str:
        """A notation table (glossary.NOTATION): symbol, meaning, and its value in each size of
        its families."""
        from generator.glossary import NOTATION, symbol_value

        if table not in NOTATION:
            raise InputError(
                f"unknown notation table {table!r}",
                entry=table,
                fix=f"use one of: {', '.join(NOTATION)}",
            )
        families, symbols = NOTATION[table]
        sizes = [cfg for family in families for cfg in family_sizes(family)]
        rows = tuple(
            blocks.GlossaryRow(
                anchor=sym.anchor,
                tex=sym.tex,
                meaning=sym.meaning,
                values=tuple(symbol_value(sym, cfg) for cfg in sizes),
            )
            for sym in symbols.values()
        )
        label = "Symbols and their values per size"
        if table != "gpt2":
            names = [get_family(family).label for family in families]
            named = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
            label = f"{named} symbols and their values per size"
        labels = tuple(c.label for c in sizes)
        first = {size.split(" ", 1)[0] for size in labels}
        family = first.pop() if len(first) == 1 and all(" " in size for size in labels) else ""
        shown = blocks.Glossary(sizes=labels, rows=rows, label=label, family=family)
        return self.render_block(shown)

    def glossary_terms(self) -> str:
        """The words of the trade, each under a heading of its own (#term-<anchor>)."""
        from generator.glossary import TERMS

        return self.render_block(GlossaryTerms(terms=TERMS))

    def model_numbers(self) -> str:
        """The whole model's headline numbers per size, next to Kaplan et al.'s approximations."""

        def render(cfg: ModelConfig) -> str:
            m = scaling.model_summary(cfg)
            rows = [
                (
                    "Parameters (GPT-2 ties wte and the unembedding)",
                    m["params_tied"],
                    "params.model",
                ),
                ("Parameters if the unembedding were untied", m["params_untied"], "params.untied"),
                ("Embedding parameters (wte + wpe)", m["embedding_params"], "params.embedding"),
                (
                    "Non-embedding parameters, exact",
                    m["non_embedding_params"],
                    "params.non_embedding",
                ),
                (
                    "Kaplan et al.'s N = 12·L·d² (block weights only)",
                    m["kaplan_n"],
                    "params.kaplan_n",
                ),
                (
                    f"Forward FLOPs per token at T = {fmt_int(cfg.n_ctx)}, exact",
                    m["flops_per_token"],
                    "flops.model",
                ),
                (
                    "Kaplan et al.'s C_forward ≈ 2N + 2·L·n_ctx·d",
                    m["kaplan_c_forward"],
                    "flops.kaplan",
                ),
            ]
            lines = ["| Quantity | Value |", "| :-- | --: |"]
            lines += [
                f'| {label} | <span data-q="{q}">{fmt_int(v)}</span> |' for label, v, q in rows
            ]
            return "\n".join(lines) + "\n"

        return size_tabs(render) + f"\n{scaling.KAPLAN_NOTE}\n"

    def family_numbers(self) -> str:
        """A family's headline numbers per size: its parameters by part, its FLOPs per token split
        into the shared convention's three terms, and its KV cache per token."""

        def render(cfg: ModelConfig) -> str:
            m = scaling.model_summary(cfg)
            grid = scaling.attention_grid_flops(cfg)
            kv = {r.key: r.value for r in decode_costs.kv_cache_rows(cfg)}
            tied = "tied to the token embedding" if cfg.tied_embeddings else "untied"
            experts = cfg.experts is not None  # what a token reads is then less than the model
            over = "the keys each query sees" if cfg.sliding_window else "the T × T grid"
            rows = [
                (f"Parameters (the unembedding {tied})", m["params"], "params.model"),
                *(
                    [
                        (
                            "Active parameters per token (the experts it runs)",
                            m["active_params"],
                            "params.active",
                        ),
                        (
                            "… without the token embedding (a token reads one row of it)",
                            m["active_params"] - accounting.params_total(cfg, "wte"),
                            "params.active_no_embedding",
                        ),
                    ]
                    if experts
                    else []
                ),  # fmt: skip
                ("Token embedding", accounting.params_total(cfg, "wte"), "params.wte"),
                ("Unembedding", accounting.params_total(cfg, "unembed"), "params.unembed"),
                ("All layers", accounting.params_total(cfg, "block"), "params.blocks"),
                ("Block weights N (matrices only)", m["block_weights"], "params.block_weights"),
                *(
                    [
                        (
                            "… of them on a token's path, N_active",
                            m["active_block_weights"],
                            "params.active_block_weights",
                        )
                    ]
                    if experts
                    else []
                ),  # fmt: skip
                (
                    f"Forward FLOPs per token at T = {fmt_int(cfg.n_ctx)}, exact"
                    + (", the active path" if experts else ""),
                    m["flops_per_token"],
                    "flops.model",
                ),
                (
                    "… of which 2N_active (projections, router, the experts run)"
                    if experts
                    else "… of which 2N (projections and MLP)",
                    2 * m["active_block_weights"],
                    "flops.2n",
                ),
                (f"… of which QKᵀ and A·V over {over}", grid, "flops.grid"),
                (
                    "… of which the unembedding",
                    accounting.flops_per_token(cfg, "unembed"),
                    "flops.unembed",
                ),
                ("KV cache per token, values", kv["values"], "kv.values"),
                ("KV cache per token, bytes in float16", kv["bytes.float16"], "kv.bytes"),
                *(
                    [
                        (
                            "… every head's keys and values, were they cached, values",
                            decode_costs.full_kv_values_per_token(cfg),
                            "kv.full_values",
                        )
                    ]
                    if cfg.latent is not None
                    else []
                ),  # fmt: skip
            ]
            lines = ["| Quantity | Value |", "| :-- | --: |"]
            lines += [
                f'| {label} | <span data-q="{q}">{fmt_int(v)}</span> |' for label, v, q in rows
            ]
            return "\n".join(lines) + "\n"

        return self.size_tabs(render)

    def flop_convention(self) -> str:
        return accounting.FLOP_CONVENTION

    def flop_relations(self) -> str:
        """The convention's terms and the counts they are confused with, for the first size of
        each family and Mistral: one column a model."""
        from generator.models import FAMILIES

        models = [family_sizes(name)[0] for name in FAMILIES]
        models += [cfg for cfg in family_sizes("llama")[1:] if cfg.sliding_window]
        table = [scaling.flop_relations(cfg) for cfg in models]
        lines = ["| Quantity | " + " | ".join(cfg.label for cfg in models) + " |"]
        lines.append("| :-- |" + " --: |" * len(models))
        # a row's words from a model with a window, when one has (they say what every column counts)
        labels = next(
            (rows for cfg, rows in zip(models, table, strict=True) if cfg.sliding_window), table[0]
        )
        for index, row in enumerate(labels):
            label = row_label(row, T="the context")
            cells = " | ".join(
                f'<span data-q="relation.{row.key}.{cfg.name}">{fmt_int(rows[index].value)}</span>'
                for cfg, rows in zip(models, table, strict=True)
            )
            lines.append(f"| {label} | {cells} |")
        contexts = ", ".join(f"{cfg.label} at T = {fmt_int(cfg.n_ctx)}" for cfg in models)
        return "\n".join(lines) + f"\n\nEach at its own context: {contexts}.\n"

    def architecture_map(self) -> str:
        """The whole-model diagram of the page's family, every box a link to its page."""
        n_layer = family_sizes(self.family.name)[0].n_layer
        uid = "map-home" if self.family.name == "gpt2" else f"map-{self.family.name}"
        diagram = architecture_map(self.link, n_layer=n_layer, uid=uid, family=self.family.name)
        caption = self.family.map.figure.format(n_layer=n_layer)
        block = blocks.ArchitectureMap(diagram=diagram, caption=caption)
        return self.render_block(block)
