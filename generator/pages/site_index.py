"""Macros of the site-wide pages: the architecture map, notation, the model's numbers, sources."""

from __future__ import annotations

from generator import accounting, blocks
from generator.config import CONFIGS, SIZES, ModelConfig
from generator.pages.blocks import SourcesAccount, SourcesEntry, SourcesRepo
from generator.pages.context import PageContext, size_tabs
from generator.render import code as code_render
from generator.render.code import excerpt_anchor, literal
from generator.render.diagram import architecture_map
from generator.render.numbers import fmt_int


class SiteMacros(PageContext):
    """{{ architecture_map() }}, {{ glossary() }}, {{ sources_index() }}, ...: any page may call them."""

    SITE_MACROS: tuple[str, ...] = (
        "architecture_map",
        "sources_index",
        "glossary",
        "model_numbers",
        "flop_convention",
        "evidence_levels",
    )

    def glossary(self) -> str:
        """The notation table: symbol, meaning, and its value in each GPT-2 size."""
        from generator.glossary import SYMBOLS

        sizes = [CONFIGS[name] for name in SIZES]
        rows = tuple(
            blocks.GlossaryRow(
                anchor=sym.anchor,
                tex=sym.tex,
                meaning=sym.meaning,
                values=tuple(fmt_int(sym.value(cfg)) if sym.value else "—" for cfg in sizes),
            )
            for sym in SYMBOLS.values()
        )
        return self.render_block(blocks.Glossary(sizes=tuple(c.label for c in sizes), rows=rows))

    def model_numbers(self) -> str:
        """The whole model's headline numbers per size, next to Kaplan et al.'s approximations."""

        def render(cfg: ModelConfig) -> str:
            m = accounting.model_summary(cfg)
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

        return size_tabs(render) + f"\n{accounting.KAPLAN_NOTE}\n"

    def sources_index(self) -> str:
        """Every pinned repo and excerpt: revision, license, lines, permalink, evidence, citation.

        How a group of excerpts was confirmed is said once per repository (most share one
        account); each excerpt links to its account, and its text is plain escaped lines."""
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
            told = dict.fromkeys((ex.evidence_level, ex.evidence) for ex in excerpts)
            accounts = {
                (level, text): SourcesAccount(f"ev-{slug}-{n}", level, blocks.Markup(literal(text)))
                for n, (level, text) in enumerate(told, 1)
            }
            entries = tuple(
                sources_entry(
                    ex,
                    accounts[(ex.evidence_level, ex.evidence)],
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

    def evidence_levels(self) -> str:
        from generator.sources import EVIDENCE_LEVELS

        return "\n".join(f"- **{level}**: {text}" for level, text in EVIDENCE_LEVELS.items()) + "\n"

    def architecture_map(self) -> str:
        """The whole-model diagram, every box a link to its component page."""
        n_layer = CONFIGS["gpt2"].n_layer
        diagram = architecture_map(self.link, n_layer=n_layer, uid="map-home")
        return self.render_block(blocks.ArchitectureMap(diagram=diagram, n_layer=n_layer))


def pages_citing() -> dict[str, list[tuple[str, str]]]:
    """excerpt id -> (title, docs page) of every page that quotes it: component pages (code tabs,
    evidence, differences, call site) and feature pages (their CITES), in the nav's order."""
    from generator.components import pages_in_order
    from generator.differences import for_page
    from generator.features import feature_citations

    citing: list[tuple[str, str, list[str]]] = []
    for c in pages_in_order():
        ids = [*c.code, *(s.excerpt for s in c.sources)]
        ids += [i for d in for_page(c.key) for i in d.excerpts]
        if c.call_site:
            ids.append(c.call_site)
        citing.append((c.title, c.page, ids))
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
        id=ex.id,
        anchor=excerpt_anchor(ex.id),
        path=blocks.Markup(literal(ex.path)),
        lines=code_render.span_label(ex),
        permalink=ex.permalink,
        license=blocks.Markup(literal(ex.repo.license)),
        account=account,
        sha256=ex.sha256,
        cited_on=cited_on,
        excerpt=plain_excerpt(ex),
        citation=citation(ex),
    )


def plain_excerpt(ex) -> blocks.PlainExcerpt:
    """An excerpt's lines as plain escaped text with upstream line numbers (Sources page)."""
    runs = tuple(blocks.PlainRun(*run) for run in code_render.plain_runs(ex))
    return blocks.PlainExcerpt(label=f"{ex.path} {code_render.span_label(ex)}", runs=runs)


def citation(ex) -> blocks.Citation:
    """Plain-text and BibTeX citations of one pinned excerpt."""
    lines = code_render.span_label(ex)
    owner, name = ex.repo.name.split("/")
    key = f"{name}-{ex.repo.short[:7]}-{ex.id}".replace(".", "-")
    plain = (
        f"{ex.repo.name}, {ex.path}, {lines}, at commit {ex.repo.commit}. "
        f"{ex.permalink} (excerpt sha256 {ex.sha256[:16]}…)"
    )
    bibtex = "\n".join(
        [
            f"@misc{{{key},",
            f"  author = {{{owner}}},",
            f"  title = {{{{{ex.repo.name}}}: {ex.path}, {lines}}},",
            f"  howpublished = {{\\url{{{ex.permalink}}}}},",
            f"  note = {{Commit {ex.repo.commit}; excerpt sha256 {ex.sha256}}},",
            "}",
        ]
    )
    return blocks.Citation(plain=plain, bibtex=bibtex)
