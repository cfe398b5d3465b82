"""Fault injection, bad local input: each case of issue 11's traceback list, and a few more, is
a clear error (exit 2, "error: … fix: …") or a warned recovery, never a traceback."""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
from pathlib import Path

import pytest

from generator.assets import load_asset_pins
from generator.cli import main
from generator.config import CONFIGS
from generator.engine.safetensors_file import load_safetensors
from generator.errors import InputError
from generator.settings import Settings
from generator.store import Store
from tests.site_helpers import ROOT

LOCK = ROOT / "sources" / "lock.toml"


def binary(tmp_path: Path) -> Path:
    path = tmp_path / "binary.bin"
    path.write_bytes(bytes(range(256)) * 4)
    return path


def run_cli(argv: list[str], capsys) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "Traceback" not in err, err
    return err


def not_a_file(tmp_path: Path, kind: str) -> Path:
    """A path that is not a regular text file: opening a FIFO waits for a writer forever,
    /dev/zero never ends, /dev/null is empty."""
    if kind == "fifo":
        os.mkfifo(tmp_path / "fifo")
        return tmp_path / "fifo"
    return {"directory": tmp_path, "zero": Path("/dev/zero"), "null": Path("/dev/null")}.get(
        kind
    ) or binary(tmp_path)


@pytest.mark.parametrize("kind", ["directory", "binary", "fifo", "zero", "null"])
def test_verify_lock_that_is_not_a_lock(tmp_path: Path, capsys, kind: str) -> None:
    err = run_cli(["verify", "--offline", "--lock", str(not_a_file(tmp_path, kind))], capsys)
    said = (
        "not UTF-8 text (byte 0x80 at offset 128)" if kind == "binary" else "cannot read the lock"
    )
    assert said in err and "fix:" in err


def test_a_lock_that_is_not_utf8_is_told_as_every_data_file_tells_it(tmp_path: Path) -> None:
    """It was Python's words ("'utf-8' codec can't decode byte 0xff in position 0: invalid
    start byte"); the other data files say where the first bad byte is."""
    from generator.data_file import read_data
    from generator.sources.lock import load_lock

    path = tmp_path / "lock.toml"
    path.write_bytes(b"\xff" + LOCK.read_bytes())
    with pytest.raises(InputError) as lock_error:
        load_lock(path)
    with pytest.raises(InputError) as data_error:
        read_data(path, dict, fix="-")
    assert lock_error.value.problem == data_error.value.problem
    assert lock_error.value.problem == "not UTF-8 text (byte 0xFF at offset 0)"
    assert lock_error.value.file == str(path)
    assert (
        lock_error.value.fix
        == "save it as UTF-8, or restore it from git (`git checkout -- <lock>`)"
    )


def test_verify_a_lock_with_no_excerpts_is_an_error(tmp_path: Path, capsys) -> None:
    lock = tmp_path / "lock.toml"
    lock.write_text(LOCK.read_text().split("\n[[mirrors]]", 1)[0] + "\n")
    err = run_cli(["verify", "--offline", "--lock", str(lock)], capsys)
    assert "no excerpts" in err and "itm pin" in err


@pytest.mark.parametrize("kind", ["missing", "directory", "binary", "fifo", "zero"])
def test_pin_trusted_file_that_is_not_text(tmp_path: Path, capsys, kind: str) -> None:
    missing = tmp_path / "nope.py"
    target = {"missing": missing} if kind == "missing" else {kind: not_a_file(tmp_path, kind)}
    lock = tmp_path / "lock.toml"
    lock.write_bytes(LOCK.read_bytes())
    argv = ["pin", "x.y", "--repo", "openai/gpt-2", "--path", "src/model.py", "--lines", "1-2"]
    argv += ["--trusted-file", str(target[kind]), "--evidence", "e", "--evidence-level", "upstream"]
    err = run_cli([*argv, "--lock", str(lock), "--dry-run"], capsys)
    assert "--trusted-file" in err and "fix:" in err


def test_an_empty_lock_does_not_offer_an_empty_list(tmp_path: Path) -> None:
    from generator.sources.lock import load_lock

    path = tmp_path / "lock.toml"
    path.write_text("version = 1\n")
    with pytest.raises(InputError) as caught:
        load_lock(path).pin("gpt2.attn")
    assert "use one of: \n" not in str(caught.value) + "\n" and "itm pin" in caught.value.fix


@pytest.mark.parametrize(
    "text",
    [
        "[katex\n",
        'katex = "x"\n',
        '[katex]\nversion="1"\nurl="u"\nsha256="ab"\nlicense="M"\nfiles="x"',
        "",  # no [katex] table at all (was a KeyError traceback in the build)
        "a = " + "[" * 100_000 + "]" * 100_000,  # was a RecursionError traceback in tomllib
        '[katex]\nversion="1"\nurl="u"\nsha256="ab"\nlicense="M"\nfiles=["x"]\nfile="y"',
    ],
)
def test_web_assets_file_errors_are_input_errors(tmp_path: Path, text: str) -> None:
    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / "web-assets.toml").write_text(text)
    with pytest.raises(InputError) as caught:
        load_asset_pins(tmp_path)
    assert caught.value.file == "sources/web-assets.toml" and caught.value.fix


@pytest.mark.parametrize(
    ("table", "entry"),
    [('files = ["x", 3]', "katex.files[1]"), ('sha256 = "AB"', "katex.sha256"), ("x = 1", "katex")],
)
def test_a_web_assets_error_names_the_package_and_its_key(
    tmp_path: Path, table: str, entry: str
) -> None:
    """Typed by msgspec, one table at a time: an error names the package, not "[...]"."""
    good = {"version": '"1"', "url": '"u"', "sha256": '"' + "a" * 64 + '"', "license": '"M"'}
    good["files"] = '["x"]'
    key = table.split(" = ")[0]
    lines = [f"{k} = {v}" for k, v in good.items() if k != key] + [table]
    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / "web-assets.toml").write_text("[katex]\n" + "\n".join(lines))
    with pytest.raises(InputError) as caught:
        load_asset_pins(tmp_path)
    assert caught.value.entry == entry and caught.value.file == "sources/web-assets.toml"


@pytest.mark.parametrize(
    ("extra", "key"), [('katx = "0.16.47"\n', "katx"), ('[mathjax]\nversion = "3"\n', "mathjax")]
)
def test_an_unknown_web_assets_key_is_named_as_no_package(
    tmp_path: Path, extra: str, key: str
) -> None:
    """A misspelt [katex] or a stray key read as a badly written package ("Expected `object`",
    "missing required field `url`"): it is no package the site uses, and the fix names those."""
    (tmp_path / "sources").mkdir()
    shipped = (ROOT / "sources" / "web-assets.toml").read_text("utf-8")
    (tmp_path / "sources" / "web-assets.toml").write_text(extra + shipped, "utf-8")
    with pytest.raises(InputError) as caught:
        load_asset_pins(tmp_path)
    error = caught.value
    assert (error.file, error.entry) == ("sources/web-assets.toml", key)
    assert "not a package the site uses" in error.problem and "katex" in (error.fix or "")


@pytest.mark.parametrize("kind", ["fifo", "endless", "folder", "huge"])
def test_a_web_assets_file_that_is_not_a_file_is_an_input_error(tmp_path: Path, kind) -> None:
    """A FIFO at sources/web-assets.toml hung the build; a symlink to /dev/zero ran out of
    memory (issue 24)."""
    path = tmp_path / "sources" / "web-assets.toml"
    path.parent.mkdir()
    {
        "fifo": lambda: os.mkfifo(path),
        "endless": lambda: path.symlink_to("/dev/zero"),
        "folder": lambda: path.mkdir(),
        "huge": lambda: path.write_bytes(b"#" * (2 << 20)),
    }[kind]()
    with pytest.raises(InputError) as caught:
        load_asset_pins(tmp_path)
    assert caught.value.file == "sources/web-assets.toml"
    assert re.search(r"not a file|larger than|not found|cannot read", caught.value.problem)


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "header is not a JSON object"),
        (b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
    ],
)
def test_a_safetensors_header_of_nested_brackets(tmp_path: Path, header, problem) -> None:
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    with pytest.raises(InputError, match=problem):
        load_safetensors(path, CONFIGS["gpt2"])


@pytest.mark.parametrize("prompt", ["", "   ", "\n\t"])
def test_blank_prompts_are_refused(tmp_path: Path, capsys, prompt: str) -> None:
    if prompt:  # an empty variable means "unset"; a blank one is a mistake
        with pytest.raises(InputError, match="blank"):
            Settings.load(ROOT, env={"ITM_FORWARD_PROMPT": prompt})
    err = run_cli(["forward", "--prompt", prompt, "--root", str(ROOT)], capsys)
    assert "--prompt" in err and "blank" in err


def test_a_prompt_that_is_not_utf8_is_refused_by_name(tmp_path: Path, capsys) -> None:
    """Bytes that are not UTF-8 in the variable or the argument (a Latin-1 terminal) reach Python
    as lone surrogates: the build's memo could not hash them and stopped with a traceback."""
    prompt = os.fsdecode(b"caf\xe9 au lait")
    with pytest.raises(InputError, match="ITM_FORWARD_PROMPT is not UTF-8 text: byte 0xE9") as e:
        Settings.load(ROOT, env={"ITM_FORWARD_PROMPT": prompt})
    assert e.value.entry == "ITM_FORWARD_PROMPT" and "UTF-8" in e.value.fix
    err = run_cli(["forward", "--prompt", prompt, "--root", str(ROOT)], capsys)
    assert "--prompt is not UTF-8 text" in err and "Traceback" not in err


def test_a_cache_dir_that_is_a_file(tmp_path: Path) -> None:
    file = tmp_path / "cache"
    file.write_text("x")
    with pytest.raises(InputError, match="is a file, not a directory"):
        Store(file)
    with pytest.raises(InputError, match="a file stands where a folder of its path should be"):
        Store(file / "cache")


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("a" * 300, "a name in its path is 300 bytes long, over the 255"),
        ("a" * 253, "its name and .key (its key file beside it) are over the 255 bytes"),
        ("/".join(["a" * 200] * 21), "bytes long; the entries below it need under 4,000"),
    ],
    ids=["name", "key-file-name", "path"],
)
def test_a_cache_dir_too_long_for_the_file_system_is_named_with_the_fix(
    tmp_path: Path, name: str, problem: str, capsys, monkeypatch
) -> None:
    """ITM_CACHE_DIR with a name over 255 bytes was an OSError traceback (ENAMETOOLONG) from
    every build and every itm command that opens the cache; one of 253 left the key file beside
    it impossible to make; a path over PATH_MAX failed each entry below it."""
    cache = tmp_path / name
    with pytest.raises(InputError, match=re.escape(problem)) as caught:
        Store(cache)
    assert caught.value.file == str(cache)
    assert caught.value.fix.startswith("set ITM_CACHE_DIR (or cache_dir in mkdocs.yml, or an itm")
    monkeypatch.setenv("ITM_CACHE_DIR", str(cache))
    err = run_cli(["verify", "--offline", "--lock", str(LOCK)], capsys)
    assert problem in err and "fix: set ITM_CACHE_DIR" in err


def test_a_cache_dir_of_the_longest_name_allowed_keeps_its_key(tmp_path: Path, caplog) -> None:
    """251 bytes and .key make a name of 255: the key file's temporary name (the key file's
    name, a random part and .tmp) was longer, so no key was ever made and nothing signed lasted
    past the build."""
    store = Store(tmp_path / ("a" * 251))
    store.put_entry("figure", "ab" * 32, b"<svg/>")
    assert store.key_path.stat().st_size == 32 and not caplog.records
    assert Store(store.root).get_entry("figure", "ab" * 32) == b"<svg/>"


@pytest.mark.parametrize(
    "damage", ["directory", "unreadable", "file-for-folder", "garbage", "fifo"]
)
def test_damaged_cache_entries_are_discarded_and_rebuilt(tmp_path: Path, damage: str, caplog):
    store = Store(tmp_path)
    store.put_entry("figure", "ab" * 32, b"payload")
    path = store.entry_path("figure", "ab" * 32)
    if damage == "directory":
        path.unlink()
        (path / "inner").mkdir(parents=True)
    elif damage == "unreadable":
        path.chmod(0)
        if path.open("rb").readable():  # root reads anything: make it a dangling symlink instead
            path.unlink()
            path.symlink_to(path.parent / "loop")
            (path.parent / "loop").symlink_to(path)
    elif damage == "fifo":  # opening a FIFO for reading waits for a writer: forever
        path.unlink()
        os.mkfifo(path)
    elif damage == "file-for-folder":
        path.unlink()
        path.parent.rmdir()
        path.parent.write_bytes(b"not a folder")
    else:
        path.write_bytes(b"\x00garbage\nmore")
    assert store.get_entry("figure", "ab" * 32) is None
    assert any("discarded" in r.getMessage() for r in caplog.records)
    store.put_entry("figure", "ab" * 32, b"payload")
    assert store.get_entry("figure", "ab" * 32) == b"payload"


def test_a_read_only_cache_warns_and_the_build_goes_on(tmp_path: Path, caplog, monkeypatch):
    import os

    store = Store(tmp_path / "cache")

    def read_only(*args, **kwargs):
        raise PermissionError(13, "Read-only file system")

    monkeypatch.setattr(os, "replace", read_only)
    store.put(b"data")
    store.put_entry("figure", "cd" * 32, b"x")
    assert store.get("0" * 64) is None
    warnings = [
        r.getMessage() for r in caplog.records if "cannot write the cache" in r.getMessage()
    ]
    assert len(warnings) == 1  # said once, not per entry


def test_a_prompt_too_long_names_the_flag_the_user_gave(capsys) -> None:
    err = run_cli(["forward", "--prompt", "the river " * 40, "--root", str(ROOT)], capsys)
    assert "--prompt" in err and "shorten the prompt" in err


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        ("5-2", "reversed"),
        ("0-2", "before line 1"),
        ("10-20,15-30", "overlap"),
        ("a-b", "cannot read"),
    ],
)
def test_pin_lines_are_checked_before_any_file_is_read(
    tmp_path: Path, capsys, lines: str, problem: str
) -> None:
    """A bad --lines is named as such, with a fix, even when the file could not be read at all
    (the missing --trusted-file here would otherwise be the first error)."""
    lock = tmp_path / "lock.toml"
    lock.write_bytes(LOCK.read_bytes())
    argv = ["pin", "x.y", "--repo", "openai/gpt-2", "--path", "src/model.py", "--lines", lines]
    argv += ["--trusted-file", str(tmp_path / "nope.py"), "--evidence", "e"]
    err = run_cli([*argv, "--evidence-level", "upstream", "--lock", str(lock), "--dry-run"], capsys)
    assert problem in err and "--lines" in err and "fix:" in err, err
    assert lock.read_bytes() == LOCK.read_bytes()


@pytest.mark.parametrize(
    ("files", "missing"),
    [
        (["katex.min.js"], "katex.min.css"),
        (["katex.min.css", "fonts/*.woff2"], "katex.min.js"),
        (["katex.min.js", "katex.min.css"], "KaTeX_AMS-Regular"),  # no font of any format
        (["katex.min.js", "katex.min.css", "fonts/KaTeX_Main-*.woff2"], "KaTeX_AMS-Regular"),
    ],
)
def test_a_katex_pin_that_leaves_out_a_file_the_pages_link_is_refused(
    files: list[str], missing: str
) -> None:
    """A web-assets pin listing only some of KaTeX's files built pages linking files the site
    lacked (the stylesheet, or fonts it names)."""
    from dataclasses import replace

    from generator.assets import katex_files

    pin = replace(load_asset_pins(ROOT)["katex"], files=tuple(files))
    with pytest.raises(InputError) as caught:
        katex_files(pin, Settings.load(ROOT).cache_dir, offline=True)
    assert missing in caught.value.problem and caught.value.entry == "katex" and caught.value.fix


def test_the_katex_stylesheet_names_only_files_the_site_serves() -> None:
    import re

    from generator.assets import katex_files

    pin = load_asset_pins(ROOT)["katex"]
    bundle, served = katex_files(pin, Settings.load(ROOT).cache_dir, offline=True)
    assert bundle and "assets/katex/katex.min.js" not in served  # run at build time only
    css = served["assets/katex/katex.min.css"].decode()
    named = set(re.findall(r"url\(([^)]*)\)", css))
    assert named and all(f"assets/katex/{path}" in served for path in named)
    # every font the stylesheet declares keeps a source
    assert css.count("@font-face") == len(named) == len(served) - 1


# -- issue 24: out-of-range epochs, unreadable sites, unbounded reads, read-only writes ----------
@pytest.mark.parametrize(
    "value",
    ["99999999999999999999", "99999999999", "4295030400", "1" * 5000, "²", "١٧٠٠٠٠٠٠٠٠", "1e9"],
)
def test_a_source_date_epoch_out_of_range_is_an_input_error(value: str) -> None:
    """Digits isdigit() accepts but MkDocs does not: 10**20 overflowed time_t, 10**11 and
    2106-02-08 a gzip header's 32 bits (tracebacks inside MkDocs), '²' is a digit int() refuses,
    5,000 digits exceed Python's own int() limit. ASCII digits (as the spec says) from 0 to
    2**32 - 1 are taken."""
    with pytest.raises(InputError) as caught:
        Settings.load(ROOT, env={"SOURCE_DATE_EPOCH": value})
    message = str(caught.value)
    assert "SOURCE_DATE_EPOCH" in message and "4294967295" in message and "fix:" in message
    for ok in ("0", "4294967295", " 1700000000 "):
        Settings.load(ROOT, env={"SOURCE_DATE_EPOCH": ok})


def heads_site(tmp_path: Path, kind: str) -> Path:
    """A site folder whose forward/heads.json is broken in one way."""
    site = tmp_path / "site"
    heads = site / "forward" / "heads.json"
    head = {"layer": 0, "head": 0, "previous_token": 0.5, "induction": None, "first_token": 0.1}
    data = {"source": "gpt2", "model": "GPT-2 small", "heads": [head]}
    if kind == "missing-folder":
        return site
    if kind == "a-file":
        site.write_text("not a site")
        return site
    site.mkdir()
    if kind == "no-forward-page":
        return site
    heads.parent.mkdir()
    writers = {
        "fifo": lambda: os.mkfifo(heads),
        "endless": lambda: heads.symlink_to("/dev/zero"),
        "folder": lambda: heads.mkdir(),
        "huge": lambda: heads.write_bytes(b" " * (17 << 20)),
        "not-utf8": lambda: heads.write_bytes(b'{"source": "gpt2\xff"}'),
        "not-json": lambda: heads.write_text("{"),
        "too-deep": lambda: heads.write_text("[" * 100_000 + "]" * 100_000),
        "a-list": lambda: heads.write_text("[]"),
        "no-source": lambda: heads.write_text(json.dumps({**data, "source": None})),
        "heads-not-a-list": lambda: heads.write_text(json.dumps({**data, "heads": 5})),
        "head-not-an-object": lambda: heads.write_text(json.dumps({**data, "heads": [1]})),
        "layer-a-string": lambda: heads.write_text(
            json.dumps({**data, "heads": [{**head, "layer": "5"}]})
        ),
        "layer-a-bool": lambda: heads.write_text(
            json.dumps({**data, "heads": [{**head, "layer": True}]})
        ),
        "score-missing": lambda: heads.write_text(
            json.dumps({**data, "heads": [{k: v for k, v in head.items() if k != "first_token"}]})
        ),
        "score-nan": lambda: heads.write_text(
            json.dumps({**data, "heads": [{**head, "previous_token": float("nan")}]})
        ),
    }
    writers[kind]()
    return site


CHECK_HEADS_FAULTS = [
    "missing-folder", "a-file", "no-forward-page", "fifo", "endless", "folder", "huge", "not-utf8",
    "not-json", "too-deep", "a-list", "no-source", "heads-not-a-list", "head-not-an-object",
    "layer-a-string", "layer-a-bool", "score-missing", "score-nan",
]  # fmt: skip


@pytest.mark.parametrize("kind", CHECK_HEADS_FAULTS)
def test_check_heads_on_a_missing_or_malformed_site(tmp_path: Path, capsys, kind: str) -> None:
    """Each was a traceback (exit 1, as 'the heads disagree' is), a hang (FIFO) or a MemoryError
    (/dev/zero). Now exit 2 with the file, the entry and the fix."""
    site = heads_site(tmp_path, kind)
    err = run_cli(["check-heads", str(site)], capsys)
    assert str(site) in err and "fix:" in err


def test_check_heads_exit_codes_are_documented(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["check-heads", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "0 the site shows GPT-2's heads and they agree" in text and "2 the site's" in text
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "exits 1 unless" in readme and "2 when the site's `forward/heads.json`" in readme


def standin_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    shutil.copytree(ROOT / "sources", root / "sources")
    return root


@pytest.mark.parametrize("kind", ["folder", "fifo", "endless", "larger", "missing"])
def test_the_stand_in_is_read_only_as_a_file_of_its_pinned_size(tmp_path: Path, kind) -> None:
    """A folder at the stand-in's path was an IsADirectoryError traceback; a symlink to /dev/zero
    grew a build to 21 GB, a FIFO blocked it forever. The pin records the size: nothing longer,
    and nothing but a regular file, is read."""
    from generator.forward.standin import load_standin

    root = standin_root(tmp_path)
    path = root / "sources" / "standin.safetensors"
    size = path.stat().st_size
    path.unlink()
    {
        "folder": lambda: path.mkdir(),
        "fifo": lambda: os.mkfifo(path),
        "endless": lambda: path.symlink_to("/dev/zero"),
        "larger": lambda: path.write_bytes(b"\0" * (size + 1)),
        "missing": lambda: None,
    }[kind]()
    with pytest.raises(InputError) as caught:
        load_standin(root)
    message = str(caught.value)
    assert str(path) in message and "artifacts.standin" in message and "git checkout" in message


@pytest.mark.parametrize("kind", ["folder", "fifo", "endless", "huge", "not-utf8", "nested"])
def test_the_pins_file_is_read_only_as_a_bounded_file(tmp_path: Path, kind: str) -> None:
    from generator.checkpoints import load_checkpoint_pins
    from generator.forward.artifact import load_pin

    root = standin_root(tmp_path)
    path = root / "sources" / "checkpoints.toml"
    path.unlink()
    {
        "folder": lambda: path.mkdir(),
        "fifo": lambda: os.mkfifo(path),
        "endless": lambda: path.symlink_to("/dev/zero"),
        "huge": lambda: path.write_bytes(b"#" * (2 << 20)),
        "not-utf8": lambda: path.write_bytes(b"# \xff\n"),
        "nested": lambda: path.write_text("a = " + "[" * 100_000 + "]" * 100_000),  # RecursionError
    }[kind]()
    for load in (lambda: load_pin(root, "standin"), lambda: load_checkpoint_pins(path)):
        with pytest.raises(InputError) as caught:
            load()
        assert str(path) in str(caught.value) and "git checkout" in str(caught.value)


@pytest.mark.parametrize(
    "text",
    [
        "",  # an empty pins file: KeyError 'gpt2' from the build's fingerprint
        "version = 1\ncheckpoints = 3\n",
        "[checkpoints]\ngpt2 = 'x'\n",
        "[checkpoints.gpt2]\nrevision = '" + "0" * 40 + "'\nfiles = 3\n",
        "[checkpoints.gpt2]\nrevision = '" + "0" * 40 + "'\n[checkpoints.gpt2.files]\nx = 1\n",
    ],
)
def test_a_pins_file_without_gpt2s_table_is_an_input_error(tmp_path: Path, text: str) -> None:
    """The hostile re-run's empty sources/checkpoints.toml stopped the build with a KeyError
    traceback: every reader takes the pin through one function that names what is missing."""
    from generator.memo import checkpoint_identity

    root = standin_root(tmp_path)
    path = root / "sources" / "checkpoints.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        checkpoint_identity(Settings.load(root))
    assert str(path) in str(caught.value) and "checkpoints" in str(caught.value)


@pytest.mark.parametrize(
    ("edit", "entry"),
    [
        (lambda t: "zzunknown = 1\n" + t, None),
        (lambda t: t.replace("version = 1", 'version = "banana"'), "version"),
        (lambda t: t.replace("revision = ", 'revison = "x"\nrevision = ', 1), "checkpoints.gpt2"),
        (
            lambda t: t.replace("size = 548105171", 'size = 548105171\nsha265 = "x"'),
            "checkpoints.gpt2.files.model.safetensors",
        ),
        (
            lambda t: t.replace("[artifacts.standin]", '[artifacts.standin]\nfiel = "x"'),
            "artifacts.standin",
        ),
    ],
)
def test_a_misspelt_key_in_the_pins_file_is_named(tmp_path: Path, edit, entry) -> None:
    """The reviewer's `revison`, `sha265`, `zzunknown` and `version = "banana"` built with exit
    0, the misspelt key ignored: the pins file's tables are typed (msgspec), unknown keys refused."""
    from generator.checkpoints import load_checkpoint_pins
    from generator.forward.artifact import load_pin

    root = standin_root(tmp_path)
    path = root / "sources" / "checkpoints.toml"
    path.write_text(edit((ROOT / "sources" / "checkpoints.toml").read_text()), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_checkpoint_pins(path)
        load_pin(root, "standin")
    assert caught.value.entry == entry and str(path) == caught.value.file


@pytest.mark.parametrize("text", ["artifacts = 3\n", "[artifacts]\nstandin = 'x'\n"])
def test_a_pins_file_whose_artifacts_are_not_tables_is_an_input_error(
    tmp_path: Path, text: str
) -> None:
    """`artifacts = 3` raised AttributeError from the stand-in's pin: it names the table."""
    from generator.forward.artifact import load_pin

    root = standin_root(tmp_path)
    path = root / "sources" / "checkpoints.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_pin(root, "standin")
    assert str(path) in str(caught.value) and "[artifacts.standin]" in str(caught.value)


@pytest.mark.parametrize("kind", ["fifo", "endless", "folder", "dangling", "huge"])
def test_files_mkdocs_reads_are_checked_first(tmp_path: Path, kind: str) -> None:
    """MkDocs reads each page whole and copies each asset: a FIFO in docs/ hung the build, a
    symlink to /dev/zero filled 27 GB of disk in a minute. The plugin checks each first."""
    from generator.checked_io import check_input

    path = tmp_path / "page.md"
    {
        "fifo": lambda: os.mkfifo(path),
        "endless": lambda: path.symlink_to("/dev/zero"),
        "folder": lambda: path.mkdir(),
        "dangling": lambda: path.symlink_to(tmp_path / "gone"),
        "huge": lambda: path.write_bytes(b"x" * 1001),
    }[kind]()
    with pytest.raises(InputError) as caught:
        check_input(path, max_bytes=1000, fix="make it a file")
    assert str(path) in str(caught.value) and "fix: make it a file" in str(caught.value)


@pytest.mark.parametrize("kind", ["fifo", "endless"])
def test_tokenizer_files_are_bounded_reads(tmp_path: Path, kind: str) -> None:
    from generator.forward.bpe import BPETokenizer

    vocab, merges = tmp_path / "vocab.json", tmp_path / "merges.txt"
    vocab.write_text('{"<|endoftext|>": 0}')
    if kind == "fifo":
        os.mkfifo(merges)
    else:
        merges.symlink_to("/dev/zero")
    with pytest.raises(InputError) as caught:
        BPETokenizer.from_files(vocab, merges)
    assert str(merges) in str(caught.value) and "merges.txt" in caught.value.fix


def test_train_standin_in_a_read_only_checkout_stops_before_training(tmp_path, monkeypatch):
    """`itm train-standin` on a read-only checkout trained for minutes (past 150 s in the hostile
    re-run) before finding it could not write the stand-in."""
    import tempfile

    from generator.forward import standin_training as standin

    def trained(*args, **kwargs):
        raise AssertionError("trained before checking it could write the result")

    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    root = standin_root(tmp_path)
    monkeypatch.setattr(standin, "train", trained)
    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    with pytest.raises(InputError) as caught:
        standin.train_and_pin(root)
    assert str(root / "sources") in str(caught.value) and "Read-only" in str(caught.value)


def test_writing_a_pin_into_a_read_only_checkout_is_an_input_error(tmp_path, monkeypatch) -> None:
    """`itm pin`, `itm bump --write`, `itm verify --raise-evidence` and `itm train-standin` write
    the lock or the pins: on a read-only checkout that was an OSError traceback."""
    from generator.forward.artifact import write_pinned
    from generator.sources.lock import load_lock
    from generator.sources.lockwrite import write_lock

    lock = tmp_path / "lock.toml"
    lock.write_bytes(LOCK.read_bytes())
    root = standin_root(tmp_path)
    pins = (root / "sources" / "checkpoints.toml").read_bytes()

    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(os, "replace", read_only)
    for write, path in [
        (lambda: write_lock(load_lock(lock), lock), lock),
        (lambda: write_pinned(root, "standin", b"new bytes"), root / "sources/standin.safetensors"),
    ]:
        with pytest.raises(InputError) as caught:
            write()
        assert str(path) in str(caught.value) and "Read-only file system" in str(caught.value)
    assert lock.read_bytes() == LOCK.read_bytes()
    assert (root / "sources" / "checkpoints.toml").read_bytes() == pins


def test_a_read_only_cache_is_warned_about_once_per_build(tmp_path, caplog, monkeypatch) -> None:
    """Each module makes its own Store: a read-only checkout's build said 'cannot write the cache'
    five times, and a key that could not be replaced (a read-only folder) was a traceback. Every
    Store of one cache now shares the process's key, so entries still verify across them."""
    (tmp_path / "cache.key").write_bytes(b"short")  # not a key: replaced, if it could be

    def read_only(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(os, "unlink", read_only)
    first, second = Store(tmp_path / "cache"), Store(tmp_path / "cache")
    first.put_entry("figure", "ab" * 32, b"drawn")
    assert second.get_entry("figure", "ab" * 32) == b"drawn"  # signed with the same key
    monkeypatch.setattr(os, "replace", read_only)
    for store in (first, second, Store(tmp_path / "cache")):
        store.put_entry("figure", "cd" * 32, b"x")
    said = [r.getMessage() for r in caplog.records]
    assert sum("cannot write the cache" in m for m in said) == 1, said
    assert sum("cache.key" in m and "cannot" in m for m in said) == 1, said


def test_a_rewritten_output_keeps_its_permissions_and_a_new_one_gets_the_umasks(
    tmp_path: Path,
) -> None:
    """itm pin, bump and train-standin rewrite the lock, the pins and the stand-in in place: a
    temporary file (mode 0600) renamed over a 0644 file made it unreadable to anyone else."""
    from generator.checked_io import write_output

    old = tmp_path / "lock.toml"
    old.write_text("version = 1\n")
    old.chmod(0o644)
    write_output(old, b"version = 1\n# rewritten\n")
    assert old.read_text().endswith("# rewritten\n") and (old.stat().st_mode & 0o777) == 0o644
    umask = os.umask(0o022)
    try:
        write_output(tmp_path / "new.toml", b"version = 1\n")
    finally:
        os.umask(umask)
    assert ((tmp_path / "new.toml").stat().st_mode & 0o777) == 0o644


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("component", ["x"]),
        ("component", {"key": "attention"}),
        ("page_css", 5),
        ("page_css", [5]),
        ("page_css", None),
        ("page_js", "assets/walkthrough.js"),
        ("family", ["llama"]),
        ("toc_depth", "2"),
        ("toc_depth", True),
    ],
)
def test_front_matter_of_the_wrong_kind_names_the_page_and_the_key(key: str, value) -> None:
    """Issue 35: `component: [x]` (an unhashable key), `page_css: 5` or `page_css: [5]` stopped
    the build with a TypeError traceback. Every page the plugin or `itm expand` fills is a
    PageSource first: it names the page, the key, what the value must be and an example."""
    from generator.build import PageSource

    with pytest.raises(InputError) as caught:
        PageSource("llama/walkthrough.md", "# A page\n", {key: value}, lambda path: None)
    error = caught.value
    assert (error.file, error.entry) == ("docs/llama/walkthrough.md", key)
    assert "is not a" in error.problem and error.fix and error.fix.startswith(f"write `{key}: ")


def test_the_front_matter_of_every_page_is_of_the_right_kind() -> None:
    """The site's own pages pass the check (it refuses nothing they write)."""
    from mkdocs.utils.meta import get_data

    from generator.build import PageSource

    pages = sorted((ROOT / "docs").rglob("*.md"))
    for page in pages:
        markdown, meta = get_data(page.read_text(encoding="utf-8"))
        PageSource(str(page.relative_to(ROOT / "docs")), markdown, meta, lambda path: None)
    assert len(pages) > 10


@pytest.mark.parametrize(
    "options",
    [
        {"cache_dir": "cache\0"},
        {"git_dirs": {"openai/gpt-2": "/src/gpt-2\0"}},
        {"git_dirs": {"openai/gpt-2\0": "/src/gpt-2"}},
        {"gpt2_weights": "model\0.safetensors"},
        {"pypi_simple": "https://pypi.org/\0simple"},
        {"custom_dir": "overrides\0"},
    ],
)
def test_an_option_holding_a_nul_byte_is_refused_by_name(tmp_path: Path, options) -> None:
    """Issue 35: mkdocs.yml's "\\0" reaches an option as a NUL byte, and the first file opened
    with it stopped the build with "ValueError: embedded null byte" (the cache, a clone). Every
    option Settings reads is checked, by name, before any is used."""
    (option,) = options
    with pytest.raises(InputError) as caught:
        Settings.load(tmp_path, options, env={})
    assert caught.value.entry == option and "NUL byte" in caught.value.problem
    assert caught.value.fix and option in caught.value.fix
