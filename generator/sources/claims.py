"""Claims bound to code: a writer's sentence or paragraph about an excerpt, approved against the
excerpt's text.

A page marks one with a block (generator/sources/pageblocks.py):

    /// claim | gpt2.kv-cache.keys-and-values
        excerpt: gpt2.attn-present
    Each block keeps the keys and values of every earlier position; the queries are not cached.
    ///

and this site's component registry makes one of each `Source(excerpt, claim)`
(generator/models/component.py: registry_claims). The lock's [[claims]] records, for each claim
id, the excerpt it is about and the sha256 of the excerpt's text when `itm claim approve`
approved it. A build checks every claim it meets: when the excerpt's text is no longer the one
approved (after `itm bump`, or a re-pin), or the claim was never approved, the build stops and
names the claim, until it is approved again. The content is published as written; the block's
own lines are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from generator.sources.lockrules import CLAIM_ID
from generator.sources.pageblocks import BlockError, PageBlock, find_blocks

NAME = "claim"  # the block's name: /// claim | ID
OPTIONS = ("excerpt",)

# (entry, problem, fix) -> the exception the caller raises (a PluginError, an InputError)
MakeError = Callable[[str, str, str], Exception]


def claim_problem(
    claim_id: str, excerpt_id: str, excerpts: Mapping[str, Any]
) -> tuple[str, str] | None:
    """(problem, fix) when the claim is not approved against the excerpt's text as pinned now;
    None when it is. `excerpts`: the lock's verified excerpts (their `claims`: the approvals)."""
    excerpt = excerpts.get(excerpt_id)
    if excerpt is None:
        return (
            f"the claim is about excerpt {excerpt_id!r}, which the lock does not pin",
            f"name a pinned excerpt (one of: {', '.join(sorted(excerpts)) or 'none yet'}), or pin"
            f" it with `itm pin {excerpt_id} ...`",
        )
    approve = f"`itm claim approve {claim_id} --excerpt {excerpt_id}`"
    approved = next((c for c in excerpt.claims if c.id == claim_id), None)
    if approved is None:
        elsewhere = next((c for e in excerpts.values() for c in e.claims if c.id == claim_id), None)
        problem = (
            "the claim has never been approved"
            if elsewhere is None
            else f"the claim was approved about {elsewhere.excerpt}, not {excerpt_id}"
        )
        return (
            f"{problem} (it is about {excerpt_id}, {excerpt.label})",
            f"read those lines, check that the claim holds for them, then run {approve}",
        )
    if approved.sha256 != excerpt.sha256:
        return (
            f"the claim was approved against other text of {excerpt_id} (sha256"
            f" {approved.sha256[:12]}…); its text is now {excerpt.label} (sha256"
            f" {excerpt.sha256[:12]}…, after `itm bump` or a re-pin)",
            "read the lines as pinned now and the claim; correct the claim if it no longer"
            f" holds, then run `itm claim approve {claim_id}`",
        )
    return None


def expand_claims(lines: list[str], excerpts: Mapping[str, Any], error: MakeError) -> list[str]:
    """The page's lines with each claim block checked (`claim_problem`) and its own lines (the
    opening line, its options, the closing line) left blank: its content stays as written. An
    unapproved, stale or malformed claim raises what `error` makes of it."""
    out = list(lines)
    try:
        blocks = list(find_blocks(lines, NAME))
    except BlockError as failed:
        raise error(failed.entry, failed.problem, failed.fix) from None
    for block in blocks:
        options = _options(block, lines, error)
        count = block.option_rows(lines)
        if not any(row.strip() for row in block.rows(lines)[count:]):
            raise error(
                block.id,
                "the claim block holds no sentence",
                f"put the claim's sentence or paragraph between `/// {NAME} | {block.id}` (and"
                " its options) and the closing `///`",
            )
        problem = claim_problem(block.id, str(options["excerpt"]), excerpts)
        if problem is not None:
            raise error(block.id, *problem)
        blank = block.quote.rstrip()  # inside its blockquote, an empty line stays in it
        for row in (block.start, *range(block.start + 1, block.start + 1 + count), block.end):
            out[row] = blank
    return out


def _options(block: PageBlock, lines: list[str], error: MakeError) -> dict[str, Any]:
    """The claim block's options: its excerpt, named."""
    if not block.id:
        raise error(
            NAME,
            "the claim block names no claim id",
            f"write `/// {NAME} | ID` with an id of your choosing, e.g. gpt2.attn.heads-joined",
        )
    if not CLAIM_ID.fullmatch(block.id):
        raise error(
            block.id,
            "a claim id is lowercase letters, digits, '.', '_', '-' or '/'",
            f"write `/// {NAME} | ID` with an id like gpt2.attn.heads-joined",
        )
    try:
        options = block.options(lines)
    except BlockError as failed:
        raise error(failed.entry, failed.problem, failed.fix) from None
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown or "excerpt" not in options:
        raise error(
            block.id,
            f"unknown option {unknown[0]!r}" if unknown else "the claim names no excerpt",
            f"write `/// {NAME} | {block.id}`, then `    excerpt: ID` (the excerpt it is about),"
            " then the claim, then `///`",
        )
    return options
