"""No drift, ever silent (issue 34, item 1): a page's `lines:` stays on the same code through `itm
bump`, which carries it to the new numbers or marks it stale (the build then refuses it, naming
the page, the excerpt and the fix); `bump` prints a unified diff of every excerpt whose text
changed and takes such a change only when told to (--accept ID, --accept-changes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from generator.cli import main
from generator.sources.lock import load_lock
from generator.sources.selections import Move, carried, line_map
from tests.pinned_helpers import ToySite, build
from tests.sources_helpers import (
    PATH,
    REPO,
    excerpt_table,
    git,
    isolated_env,
    lines_text,
    make_upstream,
    repo_table,
    write,
)

pytestmark = pytest.mark.usefixtures(isolated_env.__name__)

# A function pinned by its symbol at lines 7-12, as in the issue.
V1 = '''\
"""A module."""

import math

SCALE = 2

def f(x):
    a = x + 1
    b = a * 2
    c = b - 3
    d = c / 4
    return d
'''
ABOVE = "import os\nimport sys\n"  # two lines added above the function upstream
MOVED = V1.replace("import math\n", "import math\n" + ABOVE)
CHANGED = MOVED.replace("d = c / 4", "d = c / 5")
PAGE = """\
# Toy

The last three lines of f divide by four and return the result:

/// excerpt | toy.f
    lines: 10-12
///
"""


def toy_site(tmp_path: Path, *, page: str = PAGE, extra: str = "") -> ToySite:
    upstream = tmp_path / "upstream"
    commit = make_upstream(upstream, {PATH: V1})
    root = tmp_path / "project"
    write(root / "docs" / "index.md", page)
    lock = repo_table(commit) + excerpt_table("toy.f", V1, symbol="f", lines=[[7, 12]]) + extra
    write(root / "excerpts.lock.toml", lock)
    write(
        root / "mkdocs.yml",
        "site_name: Toy\ntheme: mkdocs\nstrict: true\nplugins:\n  - pinned-excerpts:\n"
        f"      git_dirs:\n        {REPO}: {upstream}\n",
    )
    return ToySite(root, upstream, commit, git(upstream, "rev-parse", f"{commit}:{PATH}"))


def shown(site: ToySite) -> list[tuple[int, str]]:
    """(line number, code) of every line the page's card shows."""
    html = BeautifulSoup((site.site / "index.html").read_text(encoding="utf-8"), "html.parser")
    found = []
    for block in html.select("div.pinned-excerpt div.highlight"):
        numbers = [int(n) for n in block.select_one(".linenos").get_text().split()]
        code = block.select_one("td.code code").get_text().split("\n")
        found += list(zip(numbers, code, strict=False))
    return found


def bump(site: ToySite, commit: str, monkeypatch, *flags: str) -> int:
    monkeypatch.chdir(site.root)
    return main(["bump", REPO, commit, "--git", str(site.upstream), "--offline", *flags])


def test_the_issues_scenario_quotes_the_same_code_after_a_bump(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """A symbol pinned at 7-12, a page quoting lines 10-12, two lines added above upstream,
    `itm bump --write`, a strict build: the card shows the same three lines, now 12-14 (before,
    it showed 10-12 of the moved function: other code under the same prose)."""
    site = toy_site(tmp_path)
    first = build(site)
    assert first.returncode == 0, first.stderr
    before = shown(site)
    assert [code.strip() for _, code in before] == ["c = b - 3", "d = c / 4", "return d"]

    new = make_upstream(site.upstream, {PATH: MOVED})
    assert bump(site, new, monkeypatch, "--write") == 0
    out = capsys.readouterr().out
    assert "moved      toy.f" in out and "toy.py 7–12 -> 9–14 (same text)" in out
    assert "page       docs/index.md: toy.f lines 10-12 -> 12-14" in out
    assert "    lines: 12-14\n" in site.page.read_text(encoding="utf-8")
    assert load_lock(site.lock).pin("toy.f").ranges == ((9, 14),)

    after = build(site)
    assert after.returncode == 0, after.stderr
    assert [code for _, code in shown(site)] == [code for _, code in before]
    assert [n for n, _ in shown(site)] == [12, 13, 14]


def test_a_changed_text_is_shown_as_a_diff_and_taken_only_when_accepted(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """`bump` prints a unified diff of the excerpt whose text changed, exits non-zero naming it
    and writes nothing until --accept ID; a selected line that changed is then marked stale in
    the page, and the strict build stops naming the page, the excerpt and the fix."""
    site = toy_site(tmp_path)
    page, lock = site.page.read_text(), site.lock.read_text()
    new = make_upstream(site.upstream, {PATH: CHANGED})
    assert bump(site, new, monkeypatch, "--write") == 1
    out = capsys.readouterr().out
    assert "changed    toy.f" in out
    assert "--- toy.f at " in out and "+++ toy.f at " in out
    assert "-    d = c / 4\n" in out and "+    d = c / 5\n" in out
    assert "1 excerpt(s) changed text: toy.f" in out and "--accept ID" in out
    assert "not written" in out
    assert (site.page.read_text(), site.lock.read_text()) == (page, lock)
    assert bump(site, new, monkeypatch, "--accept", "toy.g") == 2  # a typo is not an acceptance
    assert "--accept toy.g" in capsys.readouterr().err

    assert bump(site, new, monkeypatch, "--write", "--accept", "toy.f") == 0
    out = capsys.readouterr().out
    assert "toy.f lines 10-12 changed: marked stale" in out
    written = site.page.read_text()
    assert "    lines: 10-12\n    stale: " in written
    assert load_lock(site.lock).pin("toy.f").sha256 != load_lock_sha(lock)
    refused = build(site)
    assert refused.returncode != 0 and "Traceback" not in refused.stderr, refused.stderr
    assert "docs/index.md" in refused.stderr and "'toy.f'" in refused.stderr
    assert (
        "left its lines stale" in refused.stderr and "delete the `stale:` option" in refused.stderr
    )

    site.page.write_text(PAGE.replace("10-12", "13-14"))  # chosen again: the last two lines
    done = build(site)
    assert done.returncode == 0, done.stderr
    assert [code.strip() for _, code in shown(site)] == ["d = c / 5", "return d"]


def test_a_changed_text_whose_old_text_cannot_be_read_is_not_taken(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """No diff can be shown and no page's lines carried without the old text: the bump names
    the excerpt and writes nothing, accepted or not."""
    site = toy_site(tmp_path)
    lock, page = site.lock.read_text(), site.page.read_text()
    other = tmp_path / "new-only"  # a clone holding the new commit, not the pinned one
    new = make_upstream(other, {PATH: CHANGED})
    monkeypatch.chdir(site.root)
    args = ["bump", REPO, new, "--git", str(other), "--offline", "--write", "--accept-changes"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "cannot be read to show the change" in out and "need a hand re-pin" in out
    assert (site.lock.read_text(), site.page.read_text()) == (lock, page)


def load_lock_sha(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("sha256 = ")).split('"')[1]


def test_a_claim_about_an_excerpt_a_bump_changes_stops_the_build_until_approved_again(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    claim = "toy.f.divides-by-four"
    approval = f'\n[[claims]]\nid = "{claim}"\nexcerpt = "toy.f"\nsha256 = "{{}}"\n'
    sha = load_lock_sha(excerpt_table("toy.f", V1, lines=[[7, 12]]))
    page = f"# Toy\n\n/// claim | {claim}\n    excerpt: toy.f\nf divides by four.\n///\n"
    site = toy_site(tmp_path, page=page, extra=approval.format(sha))
    assert build(site).returncode == 0
    new = make_upstream(site.upstream, {PATH: CHANGED})
    assert bump(site, new, monkeypatch, "--write", "--accept-changes") == 0
    out = capsys.readouterr().out
    assert f"claim      {claim}" in out and f"itm claim approve {claim}" in out
    refused = build(site)
    assert refused.returncode != 0 and f"'{claim}'" in refused.stderr, refused.stderr
    assert "approved against other text of toy.f" in refused.stderr
    monkeypatch.chdir(site.root)
    assert main(["claim", "approve", claim]) == 0
    assert build(site).returncode == 0


def test_outside_a_site_a_bump_that_moves_lines_needs_the_pages(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """A lock of no site: which pages select lines of it is not known, so a bump that moves
    them writes nothing until --pages names them."""
    site = toy_site(tmp_path)
    lock = tmp_path / "elsewhere" / "excerpts.lock.toml"
    write(lock, site.lock.read_text())
    new = make_upstream(site.upstream, {PATH: MOVED})
    args = ["bump", REPO, new, "--git", str(site.upstream), "--lock", str(lock), "--write"]
    monkeypatch.chdir(tmp_path)
    assert main(args) == 1
    assert "pages not checked: toy.f" in capsys.readouterr().out
    assert load_lock(lock).repos[REPO].commit == site.commit
    assert main([*args, "--pages", str(site.root / "docs")]) == 0
    assert "lines: 12-14" in site.page.read_text()
    assert load_lock(lock).repos[REPO].commit == new


def test_pages_named_with_pages_are_carried_besides_the_sites_own(
    tmp_path: Path, monkeypatch
) -> None:
    """`--pages DIR` in a site replaced its docs_dir: DIR's pages were carried, the site's kept
    `lines: 10-12`, and the next strict build showed other lines of the moved function."""
    site = toy_site(tmp_path)
    more = write(tmp_path / "more" / "notes.md", PAGE)
    new = make_upstream(site.upstream, {PATH: MOVED})
    assert bump(site, new, monkeypatch, "--write", "--pages", str(more.parent)) == 0
    assert "    lines: 12-14\n" in site.page.read_text(encoding="utf-8")
    assert "    lines: 12-14\n" in more.read_text(encoding="utf-8")


def test_every_page_mkdocs_builds_is_carried(tmp_path: Path, monkeypatch) -> None:
    """A page named notes.markdown (MkDocs builds .markdown, .mdown, .mkdn and .mkd pages too)
    kept `lines: 10-12` after a bump: only *.md were carried."""
    site = toy_site(tmp_path)
    other = write(site.root / "docs" / "notes.markdown", PAGE)
    new = make_upstream(site.upstream, {PATH: MOVED})
    assert bump(site, new, monkeypatch, "--write") == 0
    assert "    lines: 12-14\n" in other.read_text(encoding="utf-8")


BODY = V1.split("\n")[6:12]  # lines 7-12: def f, a, b, c, d, return


@pytest.mark.parametrize(
    ("body", "selected", "expected"),
    [
        (BODY, ((10, 12),), ((12, 14),)),  # moved as a whole, two lines lower
        (BODY, ((8, 8), (10, 12)), ((10, 10), (12, 14))),
        ([*BODY[:3], *BODY[4:]], ((8, 9), (11, 12)), ((10, 13),)),  # line 10 went: one run
        ([*BODY[:3], "    z = 0", *BODY[3:]], ((9, 11),), None),  # a line added inside
        ([*BODY[:5], "    return -d"], ((12, 12),), None),  # the line changed
        ([*BODY[:5], "    return -d"], ((8, 11),), ((10, 13),)),  # the others did not
    ],
)
def test_lines_follow_their_text(body: list[str], selected, expected) -> None:
    """Selected lines map to the numbers the same text has in the new pin (two lines lower
    here), as one unbroken run each, or not at all."""
    new_text = "".join(line + "\n" for line in body)
    new_range = ((9, 8 + len(body)),)
    move = Move(((7, 12),), lines_text(V1, (7, 12)), new_range, new_text)
    assert carried(selected, line_map(move)) == expected


def test_a_page_that_is_not_utf8_is_named_with_its_first_bad_byte(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    """A page in Latin-1 was refused in Python's words ("cannot read the page: 'utf-8' codec
    can't decode byte 0xe9 in position 5…"); it now says what every other reader says, and
    the bump writes nothing."""
    site = toy_site(tmp_path)
    (site.root / "docs" / "notes.md").write_bytes("# Caf\xe9\n".encode("latin-1"))
    lock_before = site.lock.read_bytes()
    new = make_upstream(site.upstream, {PATH: MOVED})
    assert bump(site, new, monkeypatch, "--write") != 0
    err = capsys.readouterr().err
    assert "docs/notes.md: not UTF-8 text (byte 0xE9 at offset 5)" in err
    assert "codec" not in err and "Traceback" not in err
    assert site.lock.read_bytes() == lock_before
