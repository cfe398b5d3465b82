"""`itm verify`, `itm pin` and `itm bump` work on any site's lock: `--lock PATH`, else the lock
named by the mkdocs.yml of the folder they run in (or the nearest above), with that site's
plugin options as their settings. Nothing depends on where the package is installed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator.cli import main
from generator.sources.lock import load_lock
from tests.pinned_helpers import make_toy_site
from tests.sources_helpers import PATH, REPO, TOY_V1, isolated_env

pytestmark = pytest.mark.usefixtures(isolated_env.__name__)


def test_verify_finds_the_lock_through_the_sites_mkdocs_yml(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    site = make_toy_site(tmp_path)
    monkeypatch.chdir(site.root / "docs")  # a folder below the site's
    assert main(["verify", "--offline"]) == 0
    out = capsys.readouterr().out
    # the plugin's own options reach the command: its git_dirs gave the clone
    assert "2 of 2 excerpts verified against excerpts.lock.toml" in out
    assert f"from git:{site.upstream}" in out


def test_the_plugins_lock_option_is_followed(tmp_path: Path, monkeypatch, capsys) -> None:
    site = make_toy_site(tmp_path, plugin="      lock: pins/my.lock.toml\n")
    (site.root / "pins").mkdir()
    shutil.move(site.lock, site.root / "pins" / "my.lock.toml")
    monkeypatch.chdir(site.root)
    assert main(["verify", "--offline"]) == 0
    assert "verified against pins/my.lock.toml" in capsys.readouterr().out


def test_pin_writes_into_the_sites_lock(tmp_path: Path, monkeypatch, capsys) -> None:
    site = make_toy_site(tmp_path)
    monkeypatch.chdir(site.root)
    assert main(["pin", "toy.tail", "--repo", REPO, "--path", PATH, "--symbol", "tail"]) == 0
    assert load_lock(site.lock).pin("toy.tail").ranges == ((36, 37),)
    bump = ["bump", REPO, site.commit]  # the same commit: everything unchanged, nothing written
    assert main(bump) == 0
    assert "unchanged  toy.tail" in capsys.readouterr().out


def test_the_gpt2_sites_own_plugin_names_its_lock(tmp_path: Path, monkeypatch, capsys) -> None:
    from generator.sources.locate import find_lock

    root = tmp_path / "site"
    (root / "docs").mkdir(parents=True)
    (root / "mkdocs.yml").write_text(
        "site_name: x\nplugins:\n  - inside-the-model:\n      offline: true\n"
    )
    found = find_lock(None, root)
    assert found.path == root.resolve() / "sources" / "lock.toml"
    assert found.root == root.resolve() and found.options["offline"] is True
    (root / "mkdocs.yml").write_text("site_name: x\nplugins:\n  - itm\n")  # the old name
    assert find_lock(None, root).path == root.resolve() / "sources" / "lock.toml"


def test_an_explicit_lock_wins(tmp_path: Path, monkeypatch, capsys) -> None:
    site = make_toy_site(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no mkdocs.yml here or above
    args = ["verify", "--offline", "--git", f"{REPO}={site.upstream}", "--lock", str(site.lock)]
    assert main(args) == 0
    assert "2 of 2 excerpts verified" in capsys.readouterr().out


@pytest.mark.parametrize("given", ["/dev/zero", "folder"])
def test_a_lock_outside_any_site_is_named_whole(tmp_path: Path, monkeypatch, capsys, given) -> None:
    """A --lock that is no regular file is refused naming the path as given (it said "zero")."""
    lock = Path(given) if given.startswith("/") else tmp_path / "locks" / "site.toml"
    if given == "folder":
        lock.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert main(["verify", "--offline", "--lock", str(lock)]) == 2
    err = capsys.readouterr().err
    shown = str(lock) if given.startswith("/") else "locks/site.toml"
    assert err.startswith(f"error: {shown}: cannot read the lock"), err


def test_a_lock_in_a_folder_that_does_not_exist_is_refused(tmp_path: Path, monkeypatch, capsys):
    """`itm pin --lock sorces/lock.toml` (a typo) made the folder and a new lock there, exit 0."""
    site = make_toy_site(tmp_path)
    monkeypatch.chdir(tmp_path)
    typo = Path("sorces") / "lock.toml"
    pin = ["pin", "toy.tail", "--repo", REPO, "--path", PATH, "--symbol", "tail", "--lock"]
    args = [*pin, str(typo), "--git", f"{REPO}={site.upstream}", "--offline"]
    assert main([*args, "--commit", site.commit, "--license", "MIT"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: sorces/lock.toml") and "no folder sorces" in err, err
    assert "fix:" in err and "Traceback" not in err
    assert not (tmp_path / "sorces").exists()


def test_a_pin_made_from_a_clone_verifies_offline_without_it(tmp_path: Path, monkeypatch, capsys):
    """`itm pin --git` read and checked the lines, but kept them nowhere: `itm verify --offline`
    right after it, without the clone, failed (and its fix first said to reach PyPI, for a file
    with no [[mirrors]])."""
    site = make_toy_site(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # no mkdocs.yml here or above: the site's git_dirs do not apply
    pin = ["pin", "toy.tail", "--repo", REPO, "--path", PATH, "--symbol", "tail"]
    clone = ["--git", f"{REPO}={site.upstream}", "--offline", "--lock", "lock.toml"]
    assert main([*pin, *clone, "--commit", site.commit, "--license", "MIT"]) == 0
    capsys.readouterr()
    assert main(["verify", "--offline", "--lock", "lock.toml"]) == 0
    out = capsys.readouterr().out
    assert "1 of 1 excerpts verified" in out and "from cache" in out, out


def test_an_unresolved_pin_offline_is_told_the_fix_that_applies(tmp_path, monkeypatch, capsys):
    site = make_toy_site(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    pin = ["pin", "toy.tail", "--repo", REPO, "--path", PATH, "--symbol", "tail", "--lock"]
    args = [*pin, "lock.toml", "--git", f"{REPO}={site.upstream}", "--offline", "--cache-dir"]
    assert (
        main([*args, str(tmp_path / "pin-cache"), "--commit", site.commit, "--license", "MIT"]) == 0
    )
    capsys.readouterr()
    assert main(["verify", "--offline", "--lock", "lock.toml"]) == 1  # another, empty cache
    out = capsys.readouterr().out
    assert f"fix: pass --git {REPO}=DIR with a clone that has the commit" in out, out
    assert "PyPI" not in out.split("fix:")[1]  # the toy file has no [[mirrors]]


def test_a_trusted_file_never_upstream_is_not_cached_as_verified(tmp_path, monkeypatch, capsys):
    """`pin --trusted-file` for a file the lock has no [[files]] ids for: nothing checked its
    text against upstream, so it must not land in the cache, which `itm verify` reads first (it
    said "ok ... from cache" for lines that differ from the clone's)."""
    site = make_toy_site(tmp_path)
    monkeypatch.chdir(tmp_path)
    vouched = tmp_path / "vouched.py"
    vouched.write_text(TOY_V1.replace("return x * SCALE", "return x + SCALE"), encoding="utf-8")
    pin = ["pin", "toy.helper", "--repo", REPO, "--path", PATH, "--lines", "9-10"]
    pin += ["--trusted-file", str(vouched), "--evidence", "mine", "--evidence-level", "upstream"]
    new = ["--lock", "lock.toml", "--commit", site.commit, "--license", "MIT"]
    assert main([*pin, *new]) == 0
    capsys.readouterr()
    clone = ["--git", f"{REPO}={site.upstream}", "--offline", "--lock", "lock.toml"]
    assert main(["verify", *clone]) == 1
    out = capsys.readouterr().out
    assert "hash mismatch" in out and "from cache" not in out, out


@pytest.mark.parametrize("case", ["no site", "no lock plugin", "broken mkdocs.yml"])
def test_no_lock_to_be_found_is_a_clear_error(tmp_path: Path, monkeypatch, capsys, case) -> None:
    folder = tmp_path / "here"
    (folder / "docs").mkdir(parents=True)
    if case == "no lock plugin":
        (folder / "mkdocs.yml").write_text("site_name: x\nplugins:\n  - search\n")
    elif case == "broken mkdocs.yml":
        (folder / "mkdocs.yml").write_text("site_name: x\nplugins: [[[\n")
    monkeypatch.chdir(folder)
    assert main(["verify", "--offline"]) == 2
    err = capsys.readouterr().err
    assert "fix:" in err and "--lock PATH" in err and "Traceback" not in err


def test_the_first_pin_creates_the_sites_lock(tmp_path: Path, monkeypatch) -> None:
    site = make_toy_site(tmp_path)
    site.lock.unlink()
    monkeypatch.chdir(site.root)
    pin = ["pin", "toy.tail", "--repo", REPO, "--path", PATH, "--symbol", "tail"]
    assert main([*pin, "--commit", site.commit, "--license", "MIT"]) == 0
    lock = load_lock(site.lock)
    assert [p.id for p in lock.pins] == ["toy.tail"]
    assert lock.file_id(REPO, PATH).sha1_git == site.blob


def test_the_lock_is_found_when_the_sites_theme_is_not_installed(tmp_path, monkeypatch, capsys):
    """`itm verify` loaded the whole site with MkDocs, which refused a theme this install lacks
    ("Unrecognised theme name: 'material'"): a light install, or a Zensical site (whose theme is
    Zensical's own), could not verify its lock."""
    site = make_toy_site(tmp_path)
    config = site.root / "mkdocs.yml"
    config.write_text(
        config.read_text().replace("theme: mkdocs", "theme:\n  name: not-installed-here")
    )
    monkeypatch.chdir(site.root)
    assert main(["verify", "--offline"]) == 0
    assert "2 of 2 excerpts verified against excerpts.lock.toml" in capsys.readouterr().out


def test_the_markdown_extensions_lock_is_found(tmp_path, monkeypatch, capsys) -> None:
    """A site that lists only the Markdown extension (the route Zensical follows) names its lock
    there, with the same options as the plugin."""
    site = make_toy_site(tmp_path)
    (site.root / "pins").mkdir()
    shutil.move(site.lock, site.root / "pins" / "my.lock.toml")
    (site.root / "mkdocs.yml").write_text(
        "site_name: Toy\nmarkdown_extensions:\n  - pinned_excerpts:\n"
        f"      lock: pins/my.lock.toml\n      git_dirs:\n        {REPO}: {site.upstream}\n"
    )
    monkeypatch.chdir(site.root)
    assert main(["verify", "--offline"]) == 0
    out = capsys.readouterr().out
    assert "verified against pins/my.lock.toml" in out and f"from git:{site.upstream}" in out


def test_a_plugin_and_an_extension_naming_two_locks_are_refused(tmp_path, monkeypatch, capsys):
    site = make_toy_site(tmp_path)
    config = site.root / "mkdocs.yml"
    config.write_text(
        config.read_text() + "markdown_extensions:\n  - pinned_excerpts:\n      lock: other.toml\n"
    )
    monkeypatch.chdir(site.root)
    assert main(["verify", "--offline"]) == 2
    err = capsys.readouterr().err
    assert "name different locks (excerpts.lock.toml, other.toml)" in err, err
    assert "fix: give both the same `lock`" in err


def test_a_bad_plugin_option_is_named(tmp_path, monkeypatch, capsys) -> None:
    site = make_toy_site(tmp_path, plugin="      offline: sometimes\n")
    monkeypatch.chdir(site.root)
    assert main(["verify"]) == 2
    err = capsys.readouterr().err
    assert "mkdocs.yml, entry 'plugins': option 'offline'" in err and "fix:" in err, err


def test_a_plugin_that_is_not_installed_is_named(tmp_path, monkeypatch, capsys) -> None:
    """The options are checked by the class each plugin registers with MkDocs (its entry point),
    not by importing the plugins: where none is registered, the command says which is missing."""
    import mkdocs.plugins

    site = make_toy_site(tmp_path)
    monkeypatch.chdir(site.root)
    monkeypatch.setattr(mkdocs.plugins, "get_plugins", dict)  # no entry point installed
    assert main(["verify", "--offline"]) == 2
    err = capsys.readouterr().err
    assert "mkdocs.yml" in err and "the plugin 'pinned-excerpts', which is not installed" in err
    assert "fix: install inside-the-model" in err, err
