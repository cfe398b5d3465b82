"""A warm build replays what an earlier build of the same inputs made (generator/memo.py): the
same bytes without importing numpy, and any changed input (code, templates, overrides, pins,
settings, GPT-2's files appearing) makes the build compute afresh rather than serve stale pages."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator import config, memo
from generator.checkpoints import PINS_FILE
from generator.digests import code_fingerprint
from generator.errors import InputError
from generator.memo import BuildMemo, FilledPage, MadeFiles
from generator.settings import Settings
from generator.store import HEADER, Store, sha256_hex
from tests.forward_helpers import TINY, hub_snapshot, pin_for, pins_toml, write_tiny_checkpoint
from tests.site_helpers import ROOT, build_env, mkdocs_build, tree_digest


def fingerprint(settings: Settings) -> str:
    """The fingerprint a new build takes: the code's digest, kept for one build, taken afresh
    (generator.reset() clears it before every build)."""
    code_fingerprint.cache_clear()
    return memo.fingerprint(settings)


def inputs_copy(tmp_path: Path, monkeypatch) -> Path:
    """The folders the fingerprint reads (generator/, sources/), in a scratch project whose
    generator package is the one the fingerprint reads (as if the build ran that copy)."""
    from generator import digests

    root = tmp_path / "project"
    for name in ("generator", "sources"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(digests, "PACKAGE", root / "generator")
    return root


def settings_for(root: Path, hub: Path, **options: object) -> Settings:
    return Settings.load(root, options, env={"HF_HUB_CACHE": str(hub)})


def test_the_fingerprint_changes_with_every_input_and_only_with_them(
    tmp_path: Path, monkeypatch
) -> None:
    root, hub = inputs_copy(tmp_path, monkeypatch), tmp_path / "hub"
    settings = settings_for(root, hub)
    first = fingerprint(settings)
    assert fingerprint(settings) == first

    (root / "generator" / "__pycache__").mkdir()  # Python's own byproducts are not inputs
    (root / "generator" / "__pycache__" / "memo.cpython-311.pyc").write_bytes(b"compiled")
    assert fingerprint(settings) == first

    def changes_it(path: Path, text: str) -> bool:
        before = path.read_bytes() if path.exists() else None
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        changed = fingerprint(settings) != first
        path.unlink() if before is None else path.write_bytes(before)
        assert fingerprint(settings) == first  # and back again
        return changed

    template = root / "generator" / "templates" / "callsite.html"
    assert changes_it(template, template.read_text() + "<!-- edited -->")
    code = root / "generator" / "models" / "gpt2" / "family.toml"  # data the pages are made of
    assert changes_it(code, code.read_text().replace("Transforms each", "Transforms every"))
    lock = root / "sources" / "lock.toml"
    assert changes_it(lock, lock.read_text() + "\n# a comment\n")
    assert changes_it(root / "generator" / "new_module.py", "X = 1\n")

    overrides = settings_for(root, hub, custom_dir="overrides")  # a site's block overrides
    with_custom_dir = fingerprint(overrides)
    (root / "overrides" / "itm").mkdir(parents=True)
    (root / "overrides" / "itm" / "callsite.html").write_text("<p>mine</p>")
    assert fingerprint(overrides) != with_custom_dir

    lock = root / "generator" / ".#components.py"  # Emacs, while a buffer has unsaved edits
    lock.symlink_to("someone@host.1234:1700000000")  # dangling: once a FileNotFoundError
    os.mkfifo(root / "sources" / "a-fifo")  # would block a plain read forever
    assert fingerprint(settings) == first
    lock.unlink()
    (root / "sources" / "a-fifo").unlink()

    elsewhere = tmp_path / "shared-theme"  # a custom_dir outside the project (../theme)
    (elsewhere / "itm").mkdir(parents=True)
    (elsewhere / "itm" / "callsite.html").write_text("<p>shared</p>")
    shared = settings_for(root, hub, custom_dir=str(elsewhere))
    with_shared = fingerprint(shared)  # once a ValueError: not under the project root
    (elsewhere / "itm" / "callsite.html").write_text("<p>shared, edited</p>")
    assert fingerprint(shared) != with_shared

    for option, value in (("forward_prompt", "other words"), ("offline", True)):
        assert fingerprint(settings_for(root, hub, **{option: value})) != first, option


def test_gpt2_files_appearing_in_the_hub_cache_change_the_fingerprint(
    tmp_path: Path, monkeypatch
) -> None:
    """No setting changes when GPT-2's files land in the Hugging Face cache, yet the forward-pass
    page then shows GPT-2: the fingerprint asks the same resolver the page does."""
    monkeypatch.setitem(config.CONFIGS, "tiny", TINY)
    root, hub = inputs_copy(tmp_path, monkeypatch), tmp_path / "hub"
    paths = write_tiny_checkpoint(tmp_path / "weights", seed=5)
    (root / PINS_FILE).write_text(pins_toml(paths), encoding="utf-8")
    settings = settings_for(root, hub)
    without = fingerprint(settings)

    snapshot = hub_snapshot(hub, pin_for(paths))
    snapshot.mkdir(parents=True)
    for name, path in paths.items():
        shutil.copy(path, snapshot / name)
    with_files = fingerprint(settings)
    assert with_files != without

    weights = snapshot / "model.safetensors"  # same size, other bytes: refused, as by the build
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    with pytest.raises(InputError, match="does not match the pinned sha256"):
        fingerprint(settings)


def forge(store: Store, kind: str, key: str, payload: bytes) -> None:
    """Rewrite an entry with `payload` and a header that matches it, signed with no key."""
    path = store.entry_path(kind, key)
    fields = json.loads(path.read_bytes().split(b"\n", 1)[0].removeprefix(HEADER))
    fields.update(size=len(payload), sha256=sha256_hex(payload), mac="0" * 64)
    path.write_bytes(HEADER + json.dumps(fields, sort_keys=True).encode() + b"\n" + payload)


def test_a_forged_memo_is_never_replayed(tmp_path: Path, caplog) -> None:
    """The memo is derived output, signed like figures: a page or file planted with a header
    that matches its bytes, but not signed with the cache's key, is discarded."""
    store = Store(tmp_path / "cache")
    memo = BuildMemo(store, "f" * 64)
    memo.record_files(MadeFiles(files={"a.txt": b"honest", "b.svg": b"<svg/>"}, katex_js=b"k"))
    key = memo.page_key("index.md", "{{ architecture_map() }}", {"title": "x"}, "links")
    memo.record_page(key, FilledPage("honest page", "what it shows"))
    assert memo.files() == MadeFiles({"a.txt": b"honest", "b.svg": b"<svg/>"}, b"k")
    assert memo.page(key) == FilledPage("honest page", "what it shows")

    planted = b"<script>alert(1)</script>"
    forge(store, "memo_page", key, json.dumps({"markdown": planted.decode()}).encode())
    forge(store, "memo_files", memo._files_key(), b'{"files": [["a.txt", 25]], "katex_js": 0}\n')
    assert memo.page(key) is None and memo.files() is None
    assert "not signed" in caplog.text


def test_files_and_pages_unchanged_across_fingerprints_are_stored_once_and_rehashed(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path / "cache")
    made = MadeFiles(files={"a.svg": b"<svg>a</svg>", "b.json": b"{}"}, katex_js=b"katex")
    for fingerprint_ in ("1" * 64, "2" * 64):  # e.g. a comment edited in generator/
        BuildMemo(store, fingerprint_).record_files(made)
    blobs = sorted(p for p in (tmp_path / "cache" / "sha256").rglob("*") if p.is_file())
    assert len(blobs) == 3
    assert BuildMemo(store, "2" * 64).files() == made

    page = FilledPage("# A page\n" + "filled " * 1000, None)
    for fingerprint_ in ("1" * 64, "2" * 64):
        memo = BuildMemo(store, fingerprint_)
        memo.record_page(memo.page_key("a.md", "# A page", {}, "links"), page)
    blobs = sorted(p for p in (tmp_path / "cache" / "sha256").rglob("*") if p.is_file())
    assert len(blobs) == 4  # the page's Markdown once, for both fingerprints
    assert memo.page(memo.page_key("a.md", "# A page", {}, "links")) == page

    damaged = store.path_for(sha256_hex(b"<svg>a</svg>"))
    damaged.write_bytes(b"<svg>b</svg>")  # same size, other bytes
    assert BuildMemo(store, "2" * 64).files() is None  # never served: the build makes them anew
    BuildMemo(store, "2" * 64).record_files(made)
    assert BuildMemo(store, "2" * 64).files() == made


def test_a_page_key_covers_what_the_page_reads() -> None:
    memo = BuildMemo(Store(Path("/nonexistent")), "a" * 64)
    base = ("index.md", "text", {"title": "t"}, "links")
    keys = {
        memo.page_key(*base),
        memo.page_key("other.md", *base[1:]),
        memo.page_key(base[0], "other text", *base[2:]),
        memo.page_key(*base[:2], {"title": "u"}, base[3]),
        memo.page_key(*base[:3], "other links"),
        BuildMemo(Store(Path("/nonexistent")), "b" * 64).page_key(*base),
    }
    assert len(keys) == 6


def test_front_matter_of_any_yaml_type_keys_a_page() -> None:
    """YAML front matter may have keys that are not strings (`2024: year`) and dates: the key
    once sorted the keys as JSON does, and the build stopped with a TypeError traceback."""
    import datetime

    memo = BuildMemo(Store(Path("/nonexistent")), "a" * 64)
    metas = [
        {"title": "t", 2024: "year"},
        {"title": "t", "2024": "year"},
        {"title": "t", "date": datetime.date(2024, 1, 1)},
        {"title": "t", "date": "2024-01-01"},
        {"title": "t", True: [1, {None: 2.5}]},
    ]
    keys = [memo.page_key("index.md", "text", meta, "links") for meta in metas]
    assert len(set(keys)) == len(metas)
    assert keys == [memo.page_key("index.md", "text", dict(meta), "links") for meta in metas]


def alias_bomb(levels: int = 9) -> str:
    """YAML keys lol1..lol9, the last holding 10**levels copies of "lol" once its aliases expand
    (a few hundred bytes)."""
    lines = ["lol1: &lol1 [" + ", ".join(["lol"] * 10) + "]"]
    for level in range(2, levels + 1):
        lines.append(f"lol{level}: &lol{level} [" + ", ".join([f"*lol{level - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


# Reads a page as MkDocs does and keys it, in a process capped at 1 GB of address space.
KEY_A_PAGE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from pathlib import Path
from mkdocs.utils.meta import get_data
from generator.memo import BuildMemo
from generator.store import Store

markdown, meta = get_data(sys.stdin.read())
print(len(meta), BuildMemo(Store(Path("/nonexistent")), "a" * 64).page_key("b.md", markdown, meta, "l"))
"""


def test_a_yaml_alias_bomb_in_front_matter_is_keyed_without_expanding_it() -> None:
    """Issue 35: nine levels of ten aliases (a few hundred bytes; MkDocs reads them at once, the
    values shared) ran out of memory after 222 s: the page's key expanded every alias. Now each
    value is read once."""
    done = subprocess.run(
        [sys.executable, "-c", KEY_A_PAGE],
        input=f"---\n{alias_bomb()}---\n\n# Bomb\n",
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("9 ")  # the nine keys were read, and the page keyed


def test_equal_front_matter_gives_one_key_however_it_shares_values() -> None:
    from generator.memo import front_matter_digest

    shared = ["x" * 3]
    assert front_matter_digest({"a": [shared, shared], "b": 1}) == front_matter_digest(
        {"b": 1, "a": [["x" * 3], ["xx" + "x"]]}
    )
    itself: list[object] = [1]
    itself.append(itself)  # YAML's `&a [1, *a]`
    assert front_matter_digest({"a": itself}) != front_matter_digest({"a": [1, [1]]})
    assert front_matter_digest({"s": {"a", "b"}}) == front_matter_digest({"s": {"b", "a"}})
    deep: object = 1
    for _ in range(990):  # as deep as YAML nests (its own loader stops near 1,000)
        deep = [deep]
    assert front_matter_digest({"a": deep}) != front_matter_digest({"a": [deep]})


@pytest.mark.slow
def test_a_warm_build_replays_the_same_bytes_without_numpy_and_recomputes_after_any_change(
    copy_builds, tmp_path: Path
) -> None:
    """A copy of the project built twice (conftest's copy_builds): the second build, with numpy,
    matplotlib and the engine's other needs unimportable, gives the same bytes. Then change one
    input at a time (a generator file, a site's block override, a setting) in that copy, whose
    memo holds every page: each change reaches the page. The copy is restored afterwards (the
    pruning test builds it too)."""
    assert tree_digest(copy_builds.cold) == tree_digest(copy_builds.warm)
    project = copy_builds.project
    registry = project / "generator" / "models" / "gpt2" / "family.toml"
    override = project / "overrides" / "itm" / "callsite.html"
    registry_text = registry.read_text()
    assert not override.exists()

    def build(site: str, **env: str) -> None:
        built = mkdocs_build(
            tmp_path / site, config_dir=project, ITM_CACHE_DIR=str(copy_builds.cache), **env
        )
        assert built.returncode == 0, built.stderr

    def page(site: Path, path: str) -> str:
        return (site / path / "index.html").read_text(encoding="utf-8")

    try:
        registry.write_text(registry_text.replace("Transforms each", "Transforms every"))
        assert "Transforms each token" in page(copy_builds.warm, "components/mlp")
        build("code")
        assert "Transforms every token" in page(tmp_path / "code", "components/mlp")

        override.parent.mkdir(parents=True, exist_ok=True)
        override.write_text(
            (ROOT / "generator" / "templates" / "callsite.html").read_text()
            + "memo-override-marker"
        )
        build("override")
        assert "memo-override-marker" in page(tmp_path / "override", "components/attention")

        prompt = "The child reads a book near the stone bridge. The child reads a book near the"
        build("prompt", ITM_FORWARD_PROMPT=prompt)
        assert f"<q>{prompt}</q>" in page(tmp_path / "prompt", "forward-pass")
        assert f"<q>{prompt}</q>" not in page(tmp_path / "override", "forward-pass")
    finally:
        registry.write_text(registry_text)
        override.unlink(missing_ok=True)


# `mkdocs build` during which an input changes back: once on_config has taken the fingerprint,
# the file named by argv[1] gets the bytes of argv[2] (an editor's undo, a `git checkout`).
UNDONE_MID_BUILD = """
import sys
from pathlib import Path

from mkdocs.__main__ import cli
from mkdocs.commands import build

edited, original = Path(sys.argv.pop(1)), Path(sys.argv.pop(1)).read_bytes()
get_files = build.get_files


def undo_then_get_files(*args, **kwargs):
    edited.write_bytes(original)
    return get_files(*args, **kwargs)


build.get_files = undo_then_get_files
cli.main(args=sys.argv[1:], prog_name="mkdocs")
"""


@pytest.mark.slow
def test_a_build_whose_inputs_change_while_it_runs_memoizes_nothing(tmp_path: Path) -> None:
    """A template edited, built, and undone while that build ran: the build read the undone
    template after taking the fingerprint of the edited one. It recorded its pages under that
    fingerprint, so redoing the edit later replayed pages without it. (No build of the unedited
    copy comes first: its memo, under another fingerprint, plays no part.)"""
    from tests.test_build import project_copy

    project = project_copy(tmp_path)
    template = project / "generator" / "templates" / "callsite.html"
    original = tmp_path / "callsite.orig"
    shutil.copy(template, original)

    edited = original.read_text() + "memo-race-marker\n"
    template.write_text(edited)
    undone = subprocess.run(
        [sys.executable, "-c", UNDONE_MID_BUILD, str(template), str(original), "build"]
        + ["--site-dir", str(tmp_path / "undone")],
        cwd=project,
        env=build_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert undone.returncode == 0, undone.stderr
    assert template.read_bytes() == original.read_bytes()
    assert "inputs changed during the build" in undone.stderr

    template.write_text(edited)  # the edit again: its pages, not the undone build's
    again = mkdocs_build(tmp_path / "again", config_dir=project)
    assert again.returncode == 0, again.stderr
    page = tmp_path / "again" / "components" / "attention" / "index.html"
    assert "memo-race-marker" in page.read_text(encoding="utf-8")


def test_a_file_too_large_to_fingerprint_is_named_not_read_whole(
    tmp_path: Path, monkeypatch
) -> None:
    """The fingerprint reads every file under sources/ whole: a multi-GB file there was read
    into memory before anything checked it."""
    from generator import digests, memo
    from generator.errors import InputError
    from generator.settings import Settings

    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / "huge.bin").write_bytes(bytes(2 << 20))
    monkeypatch.setattr(digests, "LARGEST_INPUT", 1 << 20)  # above every file of the generator
    with pytest.raises(InputError) as caught:
        memo.fingerprint(Settings.load(tmp_path, env={}))
    assert caught.value.file.endswith("huge.bin") and "larger than" in caught.value.problem
