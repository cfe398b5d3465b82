"""Page blocks: data rendered by autoescaped templates, which a site's custom_dir can override."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import blocks
from generator.errors import InputError
from generator.render.diagram import architecture_map
from tests.site_helpers import ROOT


def small_map() -> blocks.Block:
    return architecture_map(lambda key: f"/{key}/", current="mlp", n_layer=12, uid="t")


def callsite(code: str = "x = f(x)") -> blocks.CallSite:
    return blocks.CallSite(
        learned=True, code=code, permalink="https://e/x#L1", filename="m.py", line=1
    )


def test_text_is_escaped_and_generated_markup_is_not() -> None:
    html = blocks.render(callsite("if a < b and c > 'd': <script>"))
    assert "&lt;script&gt;" in html and "<script>" not in html
    caption = "12 pre-norm blocks <& more>"
    arch = blocks.render(blocks.ArchitectureMap(diagram=small_map(), caption=caption))
    assert (
        "<svg" in arch
        and 'href="/mlp/"' in arch
        and "12 pre-norm blocks &lt;&amp; more&gt;" in arch
    )


def test_a_custom_dir_template_overrides_the_generators_own(tmp_path: Path) -> None:
    (tmp_path / "itm").mkdir()
    (tmp_path / "itm" / "callsite.html").write_text("<p class=mine>{{ code }}</p>\n")
    assert blocks.render(callsite("a & b"), tmp_path) == "<p class=mine>a &amp; b</p>\n"
    assert "itm-callsite" in blocks.render(callsite())  # without the override: the default


def test_a_nested_block_is_rendered_by_its_own_overridable_template(tmp_path: Path) -> None:
    (tmp_path / "itm").mkdir()
    (tmp_path / "itm" / "callsite.html").write_text("<p class=mine>{{ line }}</p>\n")
    header = blocks.ComponentHeader(
        kicker="k",
        title="T",
        callsite=callsite(),
        role="r",
        formula=blocks.Markup("H' = H"),  # TeX for arithmatex: not HTML-escaped
        shapes=blocks.Markup("- in"),
        diagram=small_map(),
    )
    html = blocks.render(header, tmp_path)
    assert "<p class=mine>1</p>" in html and "H' = H" in html


@pytest.mark.parametrize(
    ("template", "said"),
    [
        (b"<p>\n{% if code %}\n{{ code }\n", ("line 3: unexpected '}'", "its variables: learned")),
        (b"<p>{{ code }}</p>\n{{ coed }}\n", ("line 2: UndefinedError: 'coed' is undefined",)),
        (b"<p>{{ code }}</p>\n\n\xe9t\xe9\n", ("line 3: not UTF-8 text (byte 0xE9)", "as UTF-8")),
    ],
)
def test_a_broken_override_names_its_file_line_and_fix(tmp_path: Path, template, said) -> None:
    """Issue 35: a site's template with a syntax error, an undefined variable or bytes that are
    not UTF-8 stopped the build with a traceback. The override here is a block inside another
    (the header's call site): the error names the inner template's own file."""
    (tmp_path / "itm").mkdir()
    (tmp_path / "itm" / "callsite.html").write_bytes(template)
    header = blocks.ComponentHeader(
        kicker="k",
        title="T",
        callsite=callsite(),
        role="r",
        formula=blocks.Markup(""),
        shapes=blocks.Markup(""),
        diagram=small_map(),
    )
    with pytest.raises(InputError) as caught:
        blocks.render(header, tmp_path)
    error = caught.value
    assert error.file == str(tmp_path / "itm" / "callsite.html"), error.render()
    assert all(part in error.render() for part in said), error.render()
    assert error.fix and "delete it to use the generator's own" in error.fix


def test_a_broken_template_of_the_generator_says_restore_it(tmp_path: Path, monkeypatch) -> None:
    """The generator's own template (no override): the fix is git, not the site."""
    (tmp_path / "callsite.html").write_text("{{ nope }}\n")
    monkeypatch.setattr(blocks, "TEMPLATES", tmp_path)
    blocks.environment.cache_clear()
    try:
        with pytest.raises(InputError) as caught:
            blocks.render(callsite())
    finally:
        blocks.environment.cache_clear()
    assert caught.value.file == str(tmp_path / "callsite.html")
    assert "line 1: UndefinedError" in caught.value.problem and "git" in (caught.value.fix or "")


def test_the_site_uses_material_custom_dir_for_overrides() -> None:
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)
    assert (ROOT / config["theme"]["custom_dir"] / "main.html").exists()


def every_block_class() -> set[type[blocks.Block]]:
    """Every Block subclass in the generator (each module imported, subclasses of subclasses)."""
    import importlib
    import pkgutil

    import generator

    for module in pkgutil.walk_packages(generator.__path__, "generator."):
        importlib.import_module(module.name)
    found: set[type[blocks.Block]] = set()
    todo = [blocks.Block]
    while todo:
        for cls in todo.pop().__subclasses__():
            found.add(cls)
            todo.append(cls)
    return found


def test_every_block_names_a_template_and_every_template_is_a_block_or_imported_by_one() -> None:
    """No block points at a missing template and no template is dead markup: a file is either
    some block's template or a macro file another template imports (admonition.html ...)."""
    import re

    files = {p.name: p.read_text(encoding="utf-8") for p in blocks.TEMPLATES.iterdir()}
    used = {cls.template for cls in every_block_class()}
    assert used <= set(files), used - set(files)
    imported = {
        name
        for text in files.values()
        for name in re.findall(r'{%-?\s*(?:from|import|include)\s+"([^"]+)"', text)
    }
    assert set(files) - used - imported == set()
    assert all(text.startswith("{#") for text in files.values()), "each says what it renders"


def test_compiled_templates_are_reused_from_the_store_only_when_its_key_signed_them(
    tmp_path: Path, monkeypatch
) -> None:
    """A warm build loads compiled templates instead of compiling them; loading bytecode runs
    it, so an entry someone else wrote (a forged header, a cache copied from elsewhere) is
    discarded and the template compiled afresh from its source."""
    import io
    import json
    import marshal
    import pickle

    import jinja2

    from generator.store import HEADER, sha256_hex

    cache = tmp_path / "cache"
    compiled: list[str] = []
    real_compile = jinja2.Environment.compile

    def counting_compile(self, source, name=None, filename=None, raw=False, defer_init=False):
        compiled.append(name)
        return real_compile(self, source, name, filename, raw, defer_init)

    monkeypatch.setattr(jinja2.Environment, "compile", counting_compile)
    honest = blocks.render(callsite(), cache_dir=cache)
    assert compiled == ["callsite.html"]
    entries = sorted((cache / "jinja").rglob("*"))
    entry = next(p for p in entries if p.is_file())

    blocks.environment.cache_clear()  # a new build: a fresh environment, the same store
    compiled.clear()
    assert blocks.render(callsite(), cache_dir=cache) == honest
    assert compiled == []  # loaded, not compiled

    # Jinja's own prefix (magic, source checksum) before planted code, and a header that matches
    # the bytes: only the missing signature tells it apart (unsigned, render would exit).
    head, payload = entry.read_bytes().split(b"\n", 1)
    stream = io.BytesIO(payload)
    stream.read(len(jinja2.bccache.bc_magic))
    pickle.load(stream)  # the checksum
    code = compile("raise SystemExit('planted')", "callsite.html", "exec")
    planted = payload[: stream.tell()] + marshal.dumps(code)
    fields = json.loads(head.removeprefix(HEADER))
    fields.update(size=len(planted), sha256=sha256_hex(planted))
    entry.write_bytes(HEADER + json.dumps(fields, sort_keys=True).encode() + b"\n" + planted)
    blocks.environment.cache_clear()
    compiled.clear()
    assert blocks.render(callsite(), cache_dir=cache) == honest
    assert compiled == ["callsite.html"]
    blocks.environment.cache_clear()


def test_every_evidence_level_has_words_for_readers() -> None:
    """Pages say how an excerpt was checked in plain words, one account per level of the lock."""
    from generator.render.code import EVIDENCE_WORDS
    from generator.sources.lockschema import EVIDENCE_LEVELS

    assert set(EVIDENCE_WORDS) == set(EVIDENCE_LEVELS)


def test_an_excerpt_checked_in_registry_copies_says_which_releases_and_no_more() -> None:
    """A "mirror-window" card names its own lock entry's releases (carried_by), its exceptions
    and the copies builds read, and says the file at the commit was not read; without carried_by
    it names only the copies. It never speaks of every release around the commit."""
    from types import SimpleNamespace

    from generator.render.code import evidence_card, evidence_words
    from generator.sources.lockschema import CarriedBy, Repo

    repo = Repo("o/r", "https://github.com/o/r", "ab" * 20, "MIT")

    def excerpt(carried: CarriedBy | None, copies: tuple[str, ...]) -> SimpleNamespace:
        return SimpleNamespace(
            id="x.y", repo=repo, path="m.py", ranges=((3, 4),), blocks=((3, "a\nb\n"),),
            permalink="https://github.com/o/r/blob/x/m.py#L3-L4", label="m.py 3–4",
            link="https://github.com/o/r/blob/x/m.py#L3-L4",
            evidence_level="mirror-window", carried_by=carried, copies=copies,
        )  # fmt: skip

    windows = CarriedBy("pkg", (("1.0", "1.4"), ("2.0", "2.1")), ("1.2",))
    name, words = evidence_words(excerpt(windows, ("pkg==1.4",)))
    assert name == "checked indirectly"
    assert words == (
        "Every pkg release on PyPI from 1.0 to 1.4 and from 2.0 to 2.1,"
        " except 1.2, has these lines byte for byte at the same line numbers; builds check them"
        f" in release 1.4. The file at the pinned commit {repo.short} was not read."
    )
    one = evidence_words(excerpt(CarriedBy("pkg", (("1.4", "1.4"),)), ("pkg==1.4",)))[1]
    assert one.startswith("Release 1.4 of pkg on PyPI has these lines")
    bare = evidence_words(excerpt(None, ("pkg==1.4", "other==2")))[1]
    assert bare.startswith("The published copies pkg 1.4 and other 2 have these lines byte")
    status = evidence_card(excerpt(windows, ("pkg==1.4",)), "A claim.").status
    assert "its lines are these" not in status and "compare its lines with these" in status
