"""Macros of the site-wide pages: the architecture map, notation, the model's numbers, sources."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from generator import accounting, blocks, scaling
from generator.config import ModelConfig
from generator.errors import InputError
from generator.models import get_family
from generator.pages.blocks import (
    ChangeWhy,
    GlossaryTerms,
    SourcesAccount,
    SourcesEntry,
    SourcesRepo,
)
from generator.pages.context import PageContext, family_sizes, size_tabs
from generator.render import code as code_render
from generator.render.cite import citation
from generator.render.code import excerpt_anchor, literal
from generator.render.diagram import architecture_map
from generator.render.numbers import fmt_int, row_label

if TYPE_CHECKING:
    from generator.models.llama.changes import Change
    from generator.pages.chain import Step


class SiteMacros(PageContext):
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
            kv = {r.key: r.value for r in accounting.kv_cache_rows(cfg)}
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
                            accounting.full_kv_values_per_token(cfg),
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

    def what_changed(self) -> str:
        """Each difference between GPT-2 and the Llama family: what it is, why the field made it
        (with the papers), its cost at each Llama size against a GPT-2 of the same shape, and the
        pinned code of both sides."""
        from generator.pages.compare import CHANGES, cost_table

        return "\n".join(
            self._change_section(
                change,
                size_tabs(functools.partial(cost_table, change), "llama", change.only_with),
                (("gpt2", (change.gpt2,)), ("llama", change.llama)),
                ("llama", change.page),
            )
            for change in CHANGES
        )

    def change_chain(self) -> str:
        """What changed after Mistral, one step per family that made it (generator/pages/chain.py):
        the same sections as what_changed(), each measured against the family's own size without
        the change."""
        from generator.pages.chain import step_table, steps

        return "\n".join(
            self._change_section(
                step,
                size_tabs(functools.partial(step_table, step), step.family),
                (("before", step.before_code), ("after", step.after_code)),
                (step.family, step.page),
            )
            for step in steps()
        )

    def _change_section(
        self,
        change: Change | Step,
        costs: str,
        sides: tuple[tuple[str, tuple[str, ...]], ...],
        page: tuple[str, str],
    ) -> str:
        """One change: its heading, words, why, cost tabs, and the code of both sides."""
        key, why = change.key, ChangeWhy(why=change.why, cite=change.cite)
        code = [
            code_render.code_tabs(
                [self._excerpt(excerpt) for excerpt in excerpts],
                prefix=f"change-{key}-{side}",
                sources=self.url_for("sources.md"),
                render=self.render_block,
            )
            for side, excerpts in sides
        ]
        more = f"[{self.by_key_in(*page)}]({self._doc(page[1])})"
        return (
            f"## {change.title} {{ #{key} }}\n\n{change.text} More on {more}.\n\n"
            f'{self.render_block(why)}\n\n<div class="itm-costs" markdown>\n\n{costs}\n\n</div>\n'
            f'<div class="grid" markdown>\n\n<div markdown>\n\n{code[0]}\n\n</div>\n\n'
            f"<div markdown>\n\n{code[1]}\n\n</div>\n\n</div>\n"
        )

    def families_side_by_side(self) -> str:
        """Every family's first size in one table: total and active parameters, forward FLOPs per
        token and the KV cache (bfloat16) at one stated context."""
        from generator.pages.chain import side_by_side

        rows = side_by_side()
        lines = [
            "| Model | Parameters | Active per token | Forward FLOPs per token | KV cache per token"
            " (bytes) | KV cache, whole context (bytes) |",
            "| :-- | --: | --: | --: | --: | --: |",
        ]
        for cfg, v in rows:
            cells = " | ".join(
                f'<span data-q="side.{key}.{cfg.name}">{fmt_int(v[key])}</span>'
                for key in ("params", "active", "flops", "kv_token", "kv_context")
            )
            lines.append(f"| {cfg.label} | {cells} |")
        at = ", ".join(f"{cfg.label} at T = {fmt_int(v['context'])}" for cfg, v in rows)
        note = (
            f"\n\nFLOPs and the whole-context cache are each taken at a context of its own: {at}."
        )
        windowed = [cfg.label for cfg, _ in rows if cfg.sliding_window]
        if windowed:
            note += (
                " The cache per token is what a token adds while every window still fills; past"
                " its window a windowed layer's cache stops growing, so the whole-context column"
                f" holds less than T times it for {' and '.join(windowed)}."
            )
        return "\n".join(lines) + note + "\n"

    def by_key_in(self, family: str, page: str) -> str:
        """The title of `family`'s component whose page is `page`."""
        from generator.models import get_family

        return next(c.title for c in get_family(family).registry if c.page == page)

    def sources_index(self) -> str:
        """Every pinned repo and excerpt: revision, license, lines, permalink, evidence, citation.

        How a group of excerpts was checked is said once per repository and level, in plain
        words; each excerpt links to it, and its text is plain escaped lines."""
        by_repo: dict[str, list] = {}
        for excerpt in sorted(
            self.site.excerpts.values(), key=lambda e: (e.repo.name, e.first_line, e.id)
        ):
            by_repo.setdefault(excerpt.repo.name, []).append(excerpt)
        used = pages_citing()
        repos = []
        for repo_name, excerpts in by_repo.items():
            repo = excerpts[0].repo
            slug = "".join(ch if ch.isalnum() else "-" for ch in repo_name)
            # each way of checking said once, in the words of the excerpts' own entries
            told = dict.fromkeys(code_render.evidence_words(ex) for ex in excerpts)
            accounts = {
                words: SourcesAccount(f"ev-{slug}-{n}", *words) for n, words in enumerate(told, 1)
            }
            entries = tuple(
                sources_entry(
                    ex,
                    accounts[code_render.evidence_words(ex)],
                    cited_on=tuple((title, self._doc(page)) for title, page in used.get(ex.id, [])),
                )
                for ex in excerpts
            )
            block = SourcesRepo(
                name=repo_name,
                url=repo.url,
                short=repo.short,
                commit=repo.commit,
                license=blocks.Markup(literal(repo.license)),
                accounts=tuple(accounts.values()),
                entries=entries,
            )
            repos.append(self.render_block(block))
        return "\n".join(repos)

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

    def evidence_levels(self) -> str:
        """The ways an excerpt's text can have been checked, strongest first, in plain words."""
        from generator.sources import EVIDENCE_LEVELS

        words = [code_render.EVIDENCE_WORDS[level] for level in EVIDENCE_LEVELS]
        return "\n".join(f"- **{name}**: {text}" for name, text in words) + "\n"

    def architecture_map(self) -> str:
        """The whole-model diagram of the page's family, every box a link to its page."""
        n_layer = family_sizes(self.family.name)[0].n_layer
        uid = "map-home" if self.family.name == "gpt2" else f"map-{self.family.name}"
        diagram = architecture_map(self.link, n_layer=n_layer, uid=uid, family=self.family.name)
        caption = self.family.map.figure.format(n_layer=n_layer)
        block = blocks.ArchitectureMap(diagram=diagram, caption=caption)
        return self.render_block(block)


def pages_citing() -> dict[str, list[tuple[str, str]]]:
    """excerpt id -> (title, docs page) of every page that quotes it: component pages (code tabs,
    evidence, differences, call site) and feature pages (their CITES), in the nav's order."""
    from generator.differences import for_page
    from generator.features import feature_citations
    from generator.models import FAMILIES
    from generator.models.component import pages_in_order

    citing: list[tuple[str, str, list[str]]] = []
    for family in FAMILIES.values():
        for c in pages_in_order(family.registry):
            ids = [*c.code, *(s.excerpt for s in c.sources)]
            if family.name == "gpt2":  # where openai/gpt-2 and transformers differ
                ids += [i for d in for_page(c.key) for i in d.excerpts]
            if c.call_site:
                ids.append(c.call_site)
            citing.append((c.title, c.page, ids))
    from generator.pages.chain import steps
    from generator.pages.compare import CHANGES

    compared = [excerpt for change in CHANGES for excerpt in (change.gpt2, *change.llama)]
    compared += [excerpt for step in steps() for excerpt in (*step.before_code, *step.after_code)]
    citing.append(("What changed since GPT-2", "what-changed.md", compared))
    citing += [(title, page, list(ids)) for page, title, ids in feature_citations()]
    used: dict[str, list[tuple[str, str]]] = {}
    for title, page, ids in citing:
        for excerpt_id in dict.fromkeys(ids):
            used.setdefault(excerpt_id, []).append((title, page))
    return used


def sources_entry(
    ex, account: SourcesAccount, *, cited_on: tuple[tuple[str, str], ...]
) -> SourcesEntry:
    """An excerpt's entry on the Sources page; `cited_on` (title, link) of the pages quoting it."""
    return SourcesEntry(
        label=blocks.Markup(literal(ex.label)),
        anchor=excerpt_anchor(ex.id),
        path=blocks.Markup(literal(ex.path)),
        lines=code_render.span_label(ex),
        permalink=ex.link,
        license=blocks.Markup(literal(ex.repo.license)),
        account=account,
        sha256=ex.sha256,
        swhid=blocks.Markup(literal(ex.swhid)) if ex.swhid else None,
        cited_on=cited_on,
        excerpt=plain_excerpt(ex),
        citation=citation(ex),
    )


def plain_excerpt(ex) -> blocks.PlainExcerpt:
    """An excerpt's lines as plain escaped text with upstream line numbers (Sources page)."""
    runs = tuple(blocks.PlainRun(*run) for run in code_render.plain_runs(ex))
    return blocks.PlainExcerpt(label=f"{ex.path} {code_render.span_label(ex)}", runs=runs)
