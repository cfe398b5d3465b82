"""The MkDocs plugin: found through its entry point, typed options, and settings with overrides."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest

from generator.errors import InputError
from generator.settings import Settings
from tests.site_helpers import ROOT


def load_config(tmp_path: Path, plugin_block: str):
    from mkdocs.config import load_config as mkdocs_load

    config = tmp_path / "mkdocs.yml"
    config.write_text(
        f"site_name: t\ndocs_dir: {ROOT / 'docs'}\nplugins:\n  - search\n{plugin_block}"
    )
    return mkdocs_load(str(config))


def test_the_plugin_is_registered_and_enabled_in_mkdocs_yml() -> None:
    from mkdocs.config import load_config as mkdocs_load

    from generator.plugin import ItmPlugin

    # its name says what it is; `itm`, its old name, still loads it
    for name in ("inside-the-model", "itm"):
        (point,) = [p for p in entry_points(group="mkdocs.plugins") if p.name == name]
        assert point.load() is ItmPlugin
    config = mkdocs_load(str(ROOT / "mkdocs.yml"))
    assert list(config.plugins) == ["material/search", "inside-the-model"]  # search stays
    assert isinstance(config.plugins["inside-the-model"], ItmPlugin)
    assert "hooks" not in (ROOT / "mkdocs.yml").read_text()


def test_options_are_typed(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from mkdocs.exceptions import Abort, ConfigurationError

    config = load_config(tmp_path, "  - itm:\n      offline: true\n      cache_dir: c\n")
    assert config.plugins["itm"].config.offline is True
    with pytest.raises((Abort, ConfigurationError)):
        load_config(tmp_path, "  - itm:\n      offline: perhaps\n")
    load_config(tmp_path, "  - itm:\n      no_such_option: 1\n")  # strict: true makes it fatal
    assert "Plugin 'itm' option 'no_such_option': Unrecognised" in caplog.text


def test_environment_overrides_options(tmp_path: Path) -> None:
    options = {"cache_dir": "from-yml", "offline": False, "forward_prompt": "yml prompt"}
    plain = Settings.load(tmp_path, options, env={})
    assert plain.cache_dir == tmp_path.resolve() / "from-yml"  # relative to the project
    assert (plain.offline, plain.forward_prompt) == (False, "yml prompt")
    env = {"ITM_CACHE_DIR": str(tmp_path / "env"), "ITM_OFFLINE": "1", "ITM_FORWARD_PROMPT": "p"}
    over = Settings.load(tmp_path, options, env=env)
    assert over.cache_dir == tmp_path / "env"
    assert (over.offline, over.forward_prompt) == (True, "p")


@pytest.mark.parametrize(
    ("value", "offline"),
    [("no", False), ("off", False), ("0", False), ("", False), ("yes", True), ("TRUE", True)],
)
def test_one_meaning_for_yes_and_no(tmp_path: Path, value: str, offline: bool) -> None:
    """ITM_OFFLINE=no used to mean offline to the site and online to the checkpoint lookup."""
    settings = Settings.load(tmp_path, {"offline": True}, env={"ITM_OFFLINE": value})
    assert settings.offline is offline
    download = Settings.load(tmp_path, env={"ITM_DOWNLOAD_WEIGHTS": value})
    assert download.download_weights is offline


def test_a_value_that_is_neither_yes_nor_no_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        Settings.load(tmp_path, env={"ITM_OFFLINE": "maybe"})
    assert "ITM_OFFLINE" in str(caught.value) and "fix:" in str(caught.value)


@pytest.mark.parametrize(
    ("variable", "value"),
    [("SOURCE_DATE_EPOCH", "abc"), ("SOURCE_DATE_EPOCH", "-5"), ("ITM_GIT_DIRS", "~/src/gpt-2")],
)
def test_a_malformed_time_or_clone_list_is_an_input_error(
    tmp_path: Path, variable: str, value: str
) -> None:
    """SOURCE_DATE_EPOCH=abc was a traceback inside MkDocs; an ITM_GIT_DIRS item without
    "owner/name=" was silently ignored (the build then ran without the clone asked for)."""
    with pytest.raises(InputError) as caught:
        Settings.load(tmp_path, env={variable: value})
    assert variable in str(caught.value) and "fix:" in str(caught.value)
    ok = {"SOURCE_DATE_EPOCH": "1700000000", "ITM_GIT_DIRS": "openai/gpt-2=/x:"}[variable]
    Settings.load(tmp_path, env={variable: ok})


def test_only_settings_reads_the_environment() -> None:
    """Every ITM_* setting goes through generator/settings.py; the plugin only sets the epoch."""
    import ast

    readers = []
    for path in sorted((ROOT / "generator").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
            if name in ("environ", "getenv", "environb"):
                readers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    allowed = {"generator/settings.py", "generator/plugin.py"}
    assert [r for r in readers if r.split(":")[0] not in allowed] == []
    plugin = (ROOT / "generator" / "plugin.py").read_text(encoding="utf-8")
    assert plugin.count("os.environ") == 1 and 'os.environ.setdefault("SOURCE_DATE_EPOCH"' in plugin


KEEP_OR_RELOAD = """
import sys
from pathlib import Path

from generator import plugin

root = Path(sys.argv[1])
plugin._fresh_generator(root)
import generator.forward

first = sys.modules["generator.forward"]
assert Path(first.__file__).is_relative_to(root), first.__file__  # the project's own copy
first._RUNS["settings"] = "a forward pass of the last build"
plugin._fresh_generator(root)  # a rebuild, nothing changed: the same modules, results forgotten
assert sys.modules["generator.forward"] is first and first._RUNS == {}, first._RUNS

edited = root / "generator" / "models" / "gpt2" / "family.toml"
edited.write_text(edited.read_text() + "# edited\\n")
plugin._fresh_generator(root)  # the code changed: every generator module is imported afresh
assert "generator.forward" not in sys.modules
import generator.forward

assert sys.modules["generator.forward"] is not first
print("ok")
"""


def test_serve_reimports_the_generator_only_when_its_code_changed(tmp_path: Path) -> None:
    """A `mkdocs serve` rebuild keeps the generator's modules while their files are unchanged
    (re-importing them was most of a rebuild's cost) and forgets what they remembered of the
    last build (generator.reset); an edited file gets every module imported afresh."""
    import shutil
    import subprocess
    import sys

    shutil.copytree(
        ROOT / "generator", tmp_path / "generator", ignore=shutil.ignore_patterns("__pycache__")
    )
    result = subprocess.run(
        [sys.executable, "-c", KEEP_OR_RELOAD, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


@pytest.mark.parametrize("variable", ["ITM_DOWNLOAD_DEADLINE", "ITM_DRAW_TIMEOUT"])
def test_time_limits_are_seconds_from_the_option_or_the_variable(
    tmp_path: Path, variable: str
) -> None:
    option = {"ITM_DOWNLOAD_DEADLINE": "download_deadline", "ITM_DRAW_TIMEOUT": "draw_timeout"}
    name = option[variable]
    assert getattr(Settings.load(tmp_path, {name: 30}, env={}), name) == 30.0
    settings = Settings.load(tmp_path, {name: 30}, env={variable: "7.5"})
    assert getattr(settings, name) == 7.5
    if name == "download_deadline":  # every download of the build gets it
        from generator.sources.lock import load_lock
        from generator.sources.resolve import Resolver

        lock = load_lock(ROOT / "sources" / "lock.toml")
        assert Resolver.for_settings(lock, settings).http.settings.deadline == 7.5
    for bad in ("soon", "0", "-3", "nan", "inf", "1e9"):
        with pytest.raises(InputError) as caught:
            Settings.load(tmp_path, env={variable: bad})
        assert variable in str(caught.value) and "fix:" in str(caught.value)


@pytest.mark.parametrize("value", [5, [5], "assets/site.css", {"a": 1}])
def test_page_assets_that_are_not_a_list_of_paths_are_refused_by_name(value: object) -> None:
    """`page_css: 5` and `page_css: [5]` were TypeError tracebacks (issue 35); a bare path
    linked each of its letters."""
    from types import SimpleNamespace

    from mkdocs.exceptions import PluginError

    from generator.plugin import _page_assets

    page = SimpleNamespace(meta={"page_css": value}, file=SimpleNamespace(src_uri="x.md"))
    with pytest.raises(PluginError, match=r"docs/x.md: front matter page_css must be a list"):
        _page_assets(page, "page_css")  # type: ignore[arg-type]
    page.meta = {"page_css": ["assets/a.css"]}
    assert _page_assets(page, "page_css") == ["assets/a.css"]  # type: ignore[arg-type]
    assert _page_assets(page, "page_js") == []  # type: ignore[arg-type]


@pytest.mark.parametrize("key", ["component", "family"])
@pytest.mark.parametrize("value", [["x"], 5, {"a": [["lol"] * 10] * 10}])
def test_a_component_or_family_that_is_not_a_name_is_refused_by_name(key: str, value) -> None:
    """`component: [x]` was an unhashable TypeError traceback (issue 35), and a YAML alias
    bomb there was printed whole in the error: the error names the type, not the value."""
    from generator.pages import PageContext

    with pytest.raises(InputError, match=rf"docs/x.md, entry '{key}': front matter {key} must"):
        PageContext(None, src_path="x.md", meta={key: value}, url_for=lambda _: None)  # type: ignore[arg-type]


def test_a_page_showing_an_excerpt_block_as_text_stops_the_build(tmp_path: Path) -> None:
    """This site quotes code with {{ code() }}; a `/// excerpt | ID` written in one of its pages
    (the pinned-excerpts syntax, which this plugin does not read) was published as text."""
    from types import SimpleNamespace

    from mkdocs.exceptions import PluginError

    plugin = load_config(tmp_path, "  - inside-the-model\n").plugins["inside-the-model"]
    page = SimpleNamespace(file=SimpleNamespace(src_uri="notes.md"), meta={}, toc=None)
    html = "<blockquote>\n<p>/// excerpt | gpt2.attn\n///</p>\n</blockquote>"
    with pytest.raises(PluginError) as raised:
        plugin.on_page_content(html, page=page, config=None, files=None)
    message = str(raised.value)
    assert "docs/notes.md, entry 'gpt2.attn'" in message and "raw text" in message
    assert "fix: quote code with {{ code(...) }}" in message


def test_a_link_outside_the_site_names_the_page_the_path_and_the_fix() -> None:
    """The forward-pass page's missing file was a KeyError traceback; every page's macros now
    share one error (PageContext.required_url)."""
    from generator.pages import PageContext

    page = PageContext(None, src_path="x.md", meta={}, url_for=lambda _: None)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=r"docs/x.md, entry 'a.svg': links to a.svg, .*\s+fix: f"):
        page.required_url("a.svg", fix="f")
