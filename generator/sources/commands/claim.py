"""`itm claim approve`: record that each claim holds for its excerpt's text as pinned now."""

from __future__ import annotations

import argparse
from pathlib import Path

from generator.errors import InputError
from generator.sources.commands.context import lock_of, site_of
from generator.sources.lockrules import CLAIM_ID
from generator.sources.lockschema import Claim
from generator.sources.lockwrite import write_lock
from generator.sources.ranges import format_ranges


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    claim = subparsers.add_parser(
        "claim", help="approve claims (a page's `/// claim | ID`, a registry Source) about excerpts"
    )
    actions = claim.add_subparsers(dest="action", required=True)
    approve = actions.add_parser(
        "approve",
        help="record that each claim holds for its excerpt's text as pinned now (its sha256)",
    )
    approve.add_argument("ids", nargs="+", metavar="ID", help="claim ids")
    approve.add_argument(
        "--excerpt", help="the excerpt the claims are about (needed for a claim new to the lock)"
    )
    approve.add_argument(
        "--lock", type=Path, default=None, help="the lock file (default: the site's, as for pin)"
    )
    approve.set_defaults(func=run_claim_approve)


def run_claim_approve(args: argparse.Namespace) -> int:
    """Approve each claim against its excerpt's text as pinned now: [[claims]] records the
    excerpt's sha256, and builds stop naming the claim once that text changes."""
    site = site_of(args)
    lock = lock_of(site)
    for claim_id in args.ids:
        if not CLAIM_ID.fullmatch(claim_id):
            raise InputError(
                "a claim id is lowercase letters, digits, '.', '_', '-' or '/'",
                file=lock.display,
                entry=claim_id,
                fix="use the id after the bar of the page's `/// claim | ID` block",
            )
        known = next((c for c in lock.claims if c.id == claim_id), None)
        excerpt_id = args.excerpt or (known.excerpt if known else None)
        if excerpt_id is None:
            raise InputError(
                "the lock has no claim with this id yet",
                file=lock.display,
                entry=claim_id,
                fix=f"name the excerpt it is about: `itm claim approve {claim_id} --excerpt ID`",
            )
        pin = lock.pin(excerpt_id)
        lock = lock.with_claim(Claim(id=claim_id, excerpt=excerpt_id, sha256=pin.sha256))
        before = f" (approved before against {known.sha256[:12]}…)" if known else ""
        print(
            f"approved {claim_id}: about {excerpt_id}, {pin.path}"
            f" {format_ranges(pin.ranges) or pin.symbol} (sha256 {pin.sha256[:12]}…){before}"
        )
    write_lock(lock)
    print(f"wrote {lock.display}")
    return 0
