"""Claims bound to code (issue 34, item 2): a page's `/// claim | ID` block is published as its
content only once the lock approves it against its excerpt's text, and stops the build, naming
the page, the claim and `itm claim approve`, when that text changes; this site's own claims (its
registry's Sources and the key claims of its pages) are approved in its lock the same way."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from bs4 import BeautifulSoup

from generator.cli import main
from generator.errors import InputError
from generator.sources.claims import expand_claims
from generator.sources.lock import load_lock
from tests.pinned_helpers import ToySite, build, make_toy_site
from tests.site_helpers import ROOT, SITE_LOCK
from tests.sources_helpers import PATH, REPO, isolated_env

pytestmark = pytest.mark.usefixtures(isolated_env.__name__)

CLAIM = "toy.widget.renders-helper"
PAGE = f"""\
# Toy

/// claim | {CLAIM}
    excerpt: toy.widget
The widget's renderer adds one to `helper(x)`.

- In a list, too:

    /// claim | toy.helper.doubles
        excerpt: toy.helper
    `helper` doubles its argument.
    ///
///

/// excerpt | toy.widget
///
"""


def approve(site: ToySite, monkeypatch, *args: str) -> None:
    monkeypatch.chdir(site.root)
    assert main(["claim", "approve", *args]) == 0


def test_a_claim_is_published_once_approved_and_stops_the_build_when_its_code_changes(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    site = make_toy_site(tmp_path, page=PAGE)
    first = build(site)
    assert first.returncode != 0 and "Traceback" not in first.stderr, first.stderr
    assert "docs/index.md" in first.stderr and f"'{CLAIM}'" in first.stderr
    assert "never been approved" in first.stderr
    assert f"itm claim approve {CLAIM} --excerpt toy.widget" in first.stderr
    assert not site.site.exists()

    approve(site, monkeypatch, CLAIM, "--excerpt", "toy.widget")
    approve(site, monkeypatch, "toy.helper.doubles", "--excerpt", "toy.helper")
    done = build(site)
    assert done.returncode == 0, done.stderr
    html = (site.site / "index.html").read_text(encoding="utf-8")
    article = BeautifulSoup(html, "html.parser").find(attrs={"role": "main"}) or BeautifulSoup(
        html, "html.parser"
    )
    texts = [p.get_text() for p in article.find_all("p")]
    assert "The widget's renderer adds one to helper(x)." in texts
    assert "helper doubles its argument." in [p.get_text() for p in article.select("li p")]
    assert "/// claim" not in html and "excerpt: toy" not in html

    # the excerpt's text changes (a re-pin here; `itm bump` in tests/test_bump_pages.py)
    monkeypatch.chdir(site.root)
    args = ["--repo", REPO, "--path", PATH, "--lines", "13-25", "--git", str(site.upstream)]
    assert main(["pin", "toy.widget", "--replace", *args]) == 0
    stale = build(site)
    assert stale.returncode != 0 and "Traceback" not in stale.stderr, stale.stderr
    assert (
        f"'{CLAIM}'" in stale.stderr and "approved against other text of toy.widget" in stale.stderr
    )
    assert f"itm claim approve {CLAIM}`" in stale.stderr
    assert (site.site / "index.html").read_text(encoding="utf-8") == html  # the old site stays
    approve(site, monkeypatch, CLAIM)
    again = build(site)
    assert again.returncode == 0, again.stderr
    capsys.readouterr()


@pytest.mark.parametrize(
    ("block", "problem", "fix"),
    [
        ("/// claim | a.b\nText.\n///\n", "names no excerpt", "excerpt: ID"),
        ("/// claim | a.b\n    excerpt: toy.widget\n    note: x\nText.\n///\n", "unknown option",
         "excerpt: ID"),
        ("/// claim | a.b\n    excerpt: toy.gone\nText.\n///\n", "does not pin", "toy.widget"),
        ("/// claim | a.b\n    excerpt: toy.widget\n///\n", "holds no sentence", "between"),
        ("/// claim | a.b\n    excerpt: toy.widget\nText.\n", "never closed", "line of ///"),
        ("/// claim\n    excerpt: toy.widget\nText.\n///\n", "names no claim id", "/// claim | ID"),
        ("/// claim | A B\n    excerpt: toy.widget\nText.\n///\n", "claim id is lowercase", "id"),
        ("/// claim | a.b\n    excerpt: [\nText.\n///\n", "not YAML", "key: value"),
    ],
)  # fmt: skip
def test_a_malformed_claim_block_stops_the_build_naming_it(
    tmp_path: Path, block: str, problem: str, fix: str
) -> None:
    site = make_toy_site(tmp_path, page=f"# Toy\n\n{block}")
    done = build(site)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert "docs/index.md" in done.stderr and problem in done.stderr and fix in done.stderr


def test_claims_in_a_fence_or_a_blockquote() -> None:
    """A claim block shown in a code fence is left as it is; one in a blockquote is read after
    its `>` markers, and its content stays in the quote."""
    excerpt = SimpleNamespace(sha256="a" * 64, label="t.py 1–2", claims=())
    approved = SimpleNamespace(id="q.c", excerpt="t.x", sha256="a" * 64)
    excerpts = {"t.x": SimpleNamespace(**{**vars(excerpt), "claims": (approved,)})}
    lines = ["```", "/// claim | q.c", "```", "> /// claim | q.c", ">     excerpt: t.x",
             "> Quoted.", "> ///"]  # fmt: skip

    def error(entry: str, problem: str, fix: str) -> InputError:
        return InputError(problem, entry=entry, fix=fix)

    assert expand_claims(lines, excerpts, error) == [*lines[:3], ">", ">", "> Quoted.", ">"]


def test_the_sites_key_claims_are_bound_to_the_code_they_describe() -> None:
    """Issue 34's key claims are claims of this site, approved in its lock against the text of
    the excerpt they describe as pinned now: pre-norm blocks, c_proj after the heads are joined,
    sampling rather than argmax, the KV cache holding keys and values, not queries; and every
    Source of every family's registry is a claim approved the same way."""
    from generator.models import FAMILIES

    lock = load_lock(SITE_LOCK)
    approved = {c.id: c for c in lock.claims}
    pins = {p.id: p for p in lock.pins}
    pages = {
        "docs/components/block.md": ("gpt2.block.pre-norm", "gpt2.block", "x = x + a"),
        "docs/components/attention.md": (
            "gpt2.attn.c-proj-after-heads-joined", "gpt2.attn", "a = merge_heads(a)"),
        "docs/generation.md": ("gpt2.sampling.draws-not-argmax", "gpt2.sample-sequence",
                               "tf.multinomial"),
    }  # fmt: skip
    for page, (claim_id, excerpt, _) in pages.items():
        assert f"/// claim | {claim_id}\n    excerpt: {excerpt}\n" in (ROOT / page).read_text()
    generation = (ROOT / "docs/generation.md").read_text()
    cache = "/// claim | gpt2.kv-cache.keys-and-values-not-queries\n    excerpt: gpt2.attn\n"
    assert cache in generation and "The queries are not cached" in generation.split(cache)[1]
    registry = {cid: s.excerpt for family in FAMILIES.values() for cid, s in family.claims.items()}
    assert registry["gpt2.block/gpt2.block"] == "gpt2.block"
    claims = {**registry, "gpt2.kv-cache.keys-and-values-not-queries": "gpt2.attn"}
    claims.update({claim_id: excerpt for claim_id, excerpt, _ in pages.values()})
    for claim_id, excerpt in claims.items():
        assert approved[claim_id].excerpt == excerpt, claim_id
        assert approved[claim_id].sha256 == pins[excerpt].sha256, claim_id


def test_a_registry_claim_whose_code_changed_stops_the_build_naming_it() -> None:
    """A Source of the registry is checked like a page's claim: an approval against other text
    names the claim, the registry's file and `itm claim approve`."""
    from generator.build import check_registry_claims

    lock = load_lock(SITE_LOCK)

    def excerpts(sha: dict[str, str]) -> dict[str, SimpleNamespace]:
        return {
            pin.id: SimpleNamespace(
                sha256=sha.get(pin.id, pin.sha256), label=pin.id, claims=lock.claims_about(pin.id)
            )
            for pin in lock.pins
        }

    check_registry_claims(excerpts({}))  # as approved
    with pytest.raises(InputError) as caught:
        check_registry_claims(excerpts({"gpt2.block": "0" * 64}))
    error = caught.value
    assert error.entry == "gpt2.block/gpt2.block" and error.file.endswith("gpt2/family.toml")
    assert "approved against other text of gpt2.block" in error.problem
    assert "pre-norm" in error.problem and "itm claim approve gpt2.block/gpt2.block" in error.fix


def test_a_page_claim_of_this_site_stops_its_build_when_approved_against_other_text(
    tmp_path: Path,
) -> None:
    """This site's pages are checked as the plugin's are: the block page's pre-norm claim,
    approved against other text of gpt2.block (what a bump leaves), stops the build naming the
    page and the claim, and publishes nothing."""
    from tests.site_helpers import mkdocs_build
    from tests.test_build import project_copy

    project = project_copy(tmp_path)
    lock = project / "sources" / "lock.toml"
    approval = '[[claims]]\nid = "gpt2.block.pre-norm"\nexcerpt = "gpt2.block"\nsha256 = "'
    text = lock.read_text(encoding="utf-8")
    assert approval in text
    lock.write_text(text.replace(approval, approval + "0" * 64 + '"\n#'), encoding="utf-8")
    result = mkdocs_build(tmp_path / "site", config_dir=project)
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    assert "docs/components/block.md" in result.stderr and "'gpt2.block.pre-norm'" in result.stderr
    assert "approved against other text of gpt2.block" in result.stderr
    assert not (tmp_path / "site").exists()
