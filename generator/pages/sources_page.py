"""Macros of the Sources page: every pinned excerpt by repository, with its evidence, the pages
that quote it and its citation; and the evidence levels in plain words."""

from __future__ import annotations

from generator import blocks
from generator.pages.blocks import SourcesAccount, SourcesEntry, SourcesRepo
from generator.pages.context import PageContext
from generator.render import code as code_render
from generator.render.cite import citation
from generator.render.code import excerpt_anchor, literal


class SourcesMacros(PageContext):
    """{{ sources_index() }}, {{ evidence_levels() }}."""

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

    def evidence_levels(self) -> str:
        """The ways an excerpt's text can have been checked, strongest first, in plain words."""
        from generator.sources.lockschema import EVIDENCE_LEVELS

        words = [code_render.EVIDENCE_WORDS[level] for level in EVIDENCE_LEVELS]
        return "\n".join(f"- **{name}**: {text}" for name, text in words) + "\n"


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
