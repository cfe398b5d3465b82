"""The build's settings, read once: plugin options from mkdocs.yml, then environment overrides.

This is the only module that reads the environment. `Settings.load(root, options)` is called by
the MkDocs plugins (options = their `plugins: - inside-the-model:` or `- pinned-excerpts:` block)
and by `itm` commands (the options of the site they run in, or none);
everything below receives the resulting frozen object instead of looking at os.environ.

Every setting, its option name and its variable are listed in SETTINGS (and in README.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.errors import InputError

DEFAULT_PYPI_SIMPLE = "https://pypi.org/simple"
DEFAULT_GITHUB_RAW = "https://raw.githubusercontent.com"
DEFAULT_SWH_API = "https://archive.softwareheritage.org/api/1"
TRUE = ("1", "true", "yes", "on")
FALSE = ("", "0", "false", "no", "off")
MAX_EPOCH = 2**32 - 1  # a gzip header's mtime is 32 bits

# option in mkdocs.yml -> environment variable that overrides it
SETTINGS: dict[str, str] = {
    "cache_dir": "ITM_CACHE_DIR",
    "offline": "ITM_OFFLINE",
    "git_dirs": "ITM_GIT_DIRS",
    "pypi_simple": "ITM_PYPI_SIMPLE",
    "github_raw": "ITM_GITHUB_RAW",
    "swh_api": "ITM_SWH_API",
    "gpt2_weights": "ITM_GPT2_WEIGHTS",
    "download_weights": "ITM_DOWNLOAD_WEIGHTS",
    "forward_prompt": "ITM_FORWARD_PROMPT",
    "download_deadline": "ITM_DOWNLOAD_DEADLINE",
    "draw_timeout": "ITM_DRAW_TIMEOUT",
}
TRACEBACK = "ITM_TRACEBACK"  # not an option: a developer's switch (tracebacks_wanted)
DOWNLOAD_DEADLINE = 60.0  # seconds for one download, all its attempts (the largest is ~10 MB)
DRAW_TIMEOUT = 60.0  # seconds a drawing worker may go without sending a figure
LONGEST_WAIT = 86400.0  # a day: a longer "deadline" is a typo


@dataclass(frozen=True)
class Settings:
    root: Path  # the project folder (where mkdocs.yml, docs/ and sources/ are)
    cache_dir: Path  # fetched sources, assets, figures
    offline: bool = False  # never touch the network
    git_dirs: Mapping[str, Path] = field(default_factory=dict)  # "owner/name" -> local clone
    pypi_simple: str = DEFAULT_PYPI_SIMPLE  # PyPI's simple index (a mirror in tests)
    github_raw: str = DEFAULT_GITHUB_RAW  # raw file host for pinned GitHub files
    swh_api: str = DEFAULT_SWH_API  # Software Heritage's API (`itm verify --online` asks it)
    gpt2_weights: str | None = None  # GPT-2's model.safetensors, or a folder with it
    download_weights: bool = False  # may fetch the pinned GPT-2 revision from the hub
    forward_prompt: str | None = None  # the forward-pass page's prompt (None: the page's own)
    hub_cache: Path = Path.home() / ".cache" / "huggingface" / "hub"  # Hugging Face cache
    custom_dir: Path | None = None  # the theme's custom_dir: its itm/ overrides block templates
    download_deadline: float = DOWNLOAD_DEADLINE  # one download, start to end, retries included
    draw_timeout: float = DRAW_TIMEOUT  # a drawing worker silent this long is stopped

    @property
    def inputs(self) -> tuple[Path, ...]:
        """What a build reads beside mkdocs.yml and docs_dir: the pins (sources/), the
        generator's code and the cache. A site or an expanded tree written there would lose it."""
        return (self.root / "sources", self.root / "generator", self.cache_dir)

    @property
    def may_download(self) -> bool:
        """Asked to download the pinned GPT-2 files, and not offline."""
        return self.download_weights and not self.offline

    @classmethod
    def load(
        cls,
        root: Path,
        options: Mapping[str, Any] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> Settings:
        """Settings from plugin `options` (may be empty), each overridden by its variable."""
        env = os.environ if env is None else env
        root = Path(root).resolve()
        known = {*SETTINGS, "custom_dir"}  # custom_dir: from the theme, not the environment
        values: dict[str, Any] = {
            k: v for k, v in (options or {}).items() if k in known and v is not None
        }
        for option, value in values.items():
            without_nul(value, option)
        for option, variable in SETTINGS.items():
            if env.get(variable):
                values[option] = env[variable]
            elif variable in env and option in ("offline", "download_weights"):
                values[option] = ""  # set but empty: explicitly off
        cache_dir = Path(values.get("cache_dir") or ".cache").expanduser()
        epoch = env.get("SOURCE_DATE_EPOCH")
        if epoch is not None:
            source_date_epoch(epoch)
        prompt = values.get("forward_prompt")
        if prompt is not None and not str(prompt).strip():
            raise InputError(
                f"the forward-pass prompt {prompt!r} is blank",
                entry=SETTINGS["forward_prompt"],
                fix=f"give {SETTINGS['forward_prompt']} some words, or unset it for the page's own"
                " prompt",
            )
        if prompt is not None:
            not_utf8(str(prompt), SETTINGS["forward_prompt"])
        return cls(
            root=root,
            cache_dir=cache_dir if cache_dir.is_absolute() else root / cache_dir,
            offline=flag(values.get("offline", False), SETTINGS["offline"]),
            git_dirs=git_dirs(values.get("git_dirs") or {}),
            pypi_simple=str(values.get("pypi_simple") or DEFAULT_PYPI_SIMPLE).rstrip("/"),
            github_raw=str(values.get("github_raw") or DEFAULT_GITHUB_RAW).rstrip("/"),
            swh_api=str(values.get("swh_api") or DEFAULT_SWH_API).rstrip("/"),
            gpt2_weights=str(values["gpt2_weights"]) if values.get("gpt2_weights") else None,
            download_weights=flag(
                values.get("download_weights", False), SETTINGS["download_weights"]
            ),
            forward_prompt=values.get("forward_prompt") or None,
            hub_cache=hub_cache_dir(env),
            custom_dir=Path(values["custom_dir"]) if values.get("custom_dir") else None,
            download_deadline=seconds(
                values.get("download_deadline", DOWNLOAD_DEADLINE), SETTINGS["download_deadline"]
            ),
            draw_timeout=seconds(
                values.get("draw_timeout", DRAW_TIMEOUT), SETTINGS["draw_timeout"]
            ),
        )


def tracebacks_wanted(env: Mapping[str, str] | None = None) -> bool:
    """ITM_TRACEBACK=1: an unexpected exception (a bug) shows its Python traceback instead of the
    one line asking for a report (generator.last_resort). For developers; any other value is no."""
    env = os.environ if env is None else env
    return env.get(TRACEBACK, "").strip().lower() in TRUE


def enter_worker_environment() -> None:
    """Set a drawing worker's environment (in the worker): matplotlib's backend, Agg. Every
    figure is drawn to bytes (charts.pyplot selects Agg itself), so MPLBACKEND can only break a
    worker: `MPLBACKEND=nonexistent` made its `import matplotlib` raise, and the build quoted
    the worker's traceback."""
    os.environ["MPLBACKEND"] = "agg"


def without_nul(value: object, option: str) -> None:
    """An InputError when an option's text, or any text inside it (a git_dirs table), holds a NUL
    byte: no path or address can, and opening one stopped the build with a ValueError
    ("embedded null byte"). Environment variables cannot hold one; mkdocs.yml's "\\0" can."""
    texts = [*value.keys(), *value.values()] if isinstance(value, Mapping) else [value]
    for text in texts:
        if isinstance(text, str) and "\0" in text:
            raise InputError(
                f"the {option} option {text!r} holds a NUL byte (character {text.index(chr(0))})",
                entry=option,
                fix=f"write the {option} option without it (in mkdocs.yml, a \\0 inside double"
                " quotes is one)",
            )


def source_date_epoch(value: str) -> int:
    """SOURCE_DATE_EPOCH as seconds since 1970, or an InputError naming it: ASCII digits (as the
    reproducible-builds spec says; isdigit() also passes "²", which int() refuses) for a time
    from 1970 to 2106, the last second a gzip header holds (MkDocs stamps sitemap.xml.gz with
    it, and its own date parsing ends in year 9999 or at the platform's time_t)."""
    text = value.strip()
    digits = text.isascii() and text.isdigit()
    if digits and len(text) <= len(str(MAX_EPOCH)) and int(text) <= MAX_EPOCH:
        return int(text)
    what = "is out of range" if digits else "is not a time"
    raise InputError(  # MkDocs itself would stop with a traceback on it
        f"SOURCE_DATE_EPOCH={value!r} {what}",
        entry="SOURCE_DATE_EPOCH",
        fix=f"set it to whole seconds since 1970, at most {MAX_EPOCH} (2106-02-07), e.g. `git log"
        " -1 --format=%ct`; or unset it for the commit time of HEAD",
    )


def not_utf8(text: str, entry: str) -> None:
    """An InputError when `text` holds bytes that are not UTF-8: Python reads such bytes in an
    environment variable or an argument as lone surrogates (U+DC80-U+DCFF), which nothing can
    encode, tokenize or hash."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        code = ord(text[error.start])
        what = f"byte 0x{code - 0xDC00:02X}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        raise InputError(
            f"{entry} is not UTF-8 text: {what} at character {error.start}",
            entry=entry,
            fix="write the prompt in UTF-8 (a terminal set to a UTF-8 locale, or iconv -t UTF-8)",
        ) from None


def flag(value: object, variable: str) -> bool:
    """A yes/no setting: True/False, or "1/true/yes/on" and "0/false/no/off/''" (any case)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in TRUE:
        return True
    if text in FALSE:
        return False
    raise InputError(
        f"{variable}={value!r} is neither yes nor no",
        entry=variable,
        fix=f"set {variable} to one of {', '.join(TRUE)} or {', '.join(f for f in FALSE if f)}",
    )


def seconds(value: object, variable: str) -> float:
    """A time limit in seconds: a number above 0 and at most a day."""
    try:
        number = float(str(value).strip()) if not isinstance(value, int | float) else float(value)
    except ValueError:
        number = float("nan")
    if not 0 < number <= LONGEST_WAIT:  # also refuses nan and inf
        raise InputError(
            f"{variable}={value!r} is not a number of seconds",
            entry=variable,
            fix=f"set {variable} to seconds above 0 and at most {LONGEST_WAIT:g}, e.g. 120",
        )
    return number


def git_dirs(value: str | Mapping[str, str]) -> dict[str, Path]:
    """Local clones: {"owner/name": path}, or "owner/name=path" items joined by os.pathsep."""
    if isinstance(value, Mapping):
        for repo, path in value.items():
            if not isinstance(path, str):  # git_dirs: {o/r: 5} in mkdocs.yml; a bug report before
                raise InputError(
                    f"git_dirs names {path!r} as the clone of {repo!r}, not a folder's path",
                    entry="git_dirs",
                    fix="write each clone as owner/name: path, e.g. openai/gpt-2: ~/src/gpt-2",
                )
        return {str(repo): Path(path).expanduser() for repo, path in value.items()}
    found: dict[str, Path] = {}
    for item in str(value).split(os.pathsep):
        if not item.strip():
            continue
        name, sep, path = item.partition("=")
        if not (sep and name.strip() and path.strip()):
            raise InputError(
                f"ITM_GIT_DIRS item {item!r} names no repository and folder",
                entry="ITM_GIT_DIRS",
                fix="write owner/name=path items joined by ':', e.g. openai/gpt-2=~/src/gpt-2",
            )
        found[name.strip()] = Path(path.strip()).expanduser()
    return found


def hub_cache_dir(env: Mapping[str, str]) -> Path:
    """Where huggingface_hub keeps its snapshots (its own variables, in its order)."""
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"]).expanduser()
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]).expanduser() / "hub"
    xdg = Path(env["XDG_CACHE_HOME"]).expanduser() if env.get("XDG_CACHE_HOME") else None
    return (xdg or Path.home() / ".cache") / "huggingface" / "hub"
