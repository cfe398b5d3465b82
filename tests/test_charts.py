"""Figures: byte-identical when rendered twice, built from the accounting, and the crossover
where attention's T×T work passes its projections matches the algebra."""

from __future__ import annotations

import logging
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from generator.charts import attention_crossover, figure_files, params_figure, render_all
from generator.config import CONFIGS, SIZES
from generator.drawing import Drawing, DrawingError, Figure
from generator.store import key_of
from tests.site_helpers import ROOT

pytestmark = pytest.mark.slow


def test_rendering_twice_gives_identical_svg() -> None:
    cfg = CONFIGS["gpt2"]
    first, second = params_figure(cfg), params_figure(cfg)
    assert first == second
    assert b"<dc:date>" not in first  # no timestamp in the metadata


@pytest.mark.parametrize("name", SIZES)
def test_crossover_is_where_the_grid_outgrows_the_projections(name: str) -> None:
    # Per token and block: Q, K, V and output projections are 2·d·3d + 2·d·d = 8·d²;
    # scores and weighted sum over T keys are 2·T·d each (all heads), 4·T·d together.
    # 4·T·d > 8·d² first holds at T = 2·d + 1.
    d = CONFIGS[name].d_model
    assert attention_crossover(CONFIGS[name]) == 2 * d + 1


def test_params_figure_states_the_model_total_from_transformers() -> None:
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    with torch.device("meta"):
        model = transformers.GPT2LMHeadModel(transformers.GPT2Config())
    total = sum(p.numel() for p in model.parameters())
    svg = params_figure(CONFIGS["gpt2"]).decode()
    assert f"{total:,} parameters" in svg


def test_cached_figures_equal_fresh_ones_and_a_corrupt_cache_is_rebuilt(tmp_path: Path) -> None:
    fresh = render_all()
    assert figure_files(tmp_path) == fresh  # renders and caches
    entry = next(p for p in (tmp_path / "figure").rglob("*") if p.is_file())
    entry.write_bytes(entry.read_bytes().replace(b"<svg", b"<SVG", 1))
    assert figure_files(tmp_path) == fresh  # the corrupt entry is detected, figures re-rendered
    assert all(re.match(rb"<\?xml", data) for data in fresh.values())


@pytest.mark.parametrize("name", ("gpt2", "gpt2-xl"))
def test_decode_figure_states_the_counted_crossover_and_ratio(name: str) -> None:
    from generator import accounting as acc
    from generator.charts import decode_flops_figure

    cfg = CONFIGS[name]
    svg = decode_flops_figure(cfg)
    assert svg == decode_flops_figure(cfg)
    text = svg.decode()
    # the crossover is checked against FlopCounterMode in test_accounting_generation
    assert f"at t = {acc.cache_crossover(cfg):,}" in text
    ratio = acc.decode_flops(cfg, 1024, cached=False) / acc.decode_flops(cfg, 1024, cached=True)
    assert f"no cache costs {ratio:,.0f}× more" in text


CALLS: list[str] = []


def dummy_figure(name: str) -> bytes:
    """A stand-in drawing for the cache tests (this process, workers=0)."""
    CALLS.append(name)
    return f"<svg>{name}</svg>".encode()


def _draw_two(cache: Path) -> dict[str, bytes]:
    figures = [
        Figure(f"figures/a-{name}.svg", f"{__name__}:dummy_figure", (name,), key_of(name))
        for name in ("small", "xl")
    ]
    return Drawing(figures, cache, workers=0).files()


def test_swapped_figure_entries_are_never_served_for_the_other_path(tmp_path: Path) -> None:
    """Issue 11: swapping two cached figures put GPT-2 XL's figure in the small tab."""
    CALLS.clear()
    first = _draw_two(tmp_path)
    assert _draw_two(tmp_path) == first and CALLS == ["small", "xl"]  # the second from the cache
    small, xl = sorted(p for p in (tmp_path / "figure").rglob("*") if p.is_file())
    a, b = small.read_bytes(), xl.read_bytes()
    small.write_bytes(b)
    xl.write_bytes(a)
    assert _draw_two(tmp_path) == first and len(CALLS) == 4  # both redrawn, each for its path


@pytest.mark.parametrize("garbage", [b"", b"{not json", b"\x00\xff" * 40])
def test_a_garbage_entry_is_discarded_and_redrawn(tmp_path: Path, garbage: bytes, caplog) -> None:
    CALLS.clear()
    first = _draw_two(tmp_path)
    entry = next(p for p in (tmp_path / "figure").rglob("*") if p.is_file())
    entry.write_bytes(garbage)
    assert _draw_two(tmp_path) == first and len(CALLS) == 3
    assert any("discarded" in r.getMessage() for r in caplog.records)
    assert _draw_two(tmp_path) == first and len(CALLS) == 3  # and cached again


def test_figures_drawn_with_keep_false_are_stored_only_when_kept(tmp_path: Path) -> None:
    """A build stores its figures at its end, once it knows its inputs held still meanwhile."""
    CALLS.clear()
    figures = [Figure("figures/a-small.svg", f"{__name__}:dummy_figure", ("small",), key_of(1))]
    drawing = Drawing(figures, tmp_path, workers=0)
    assert drawing.files(keep=False) == {"figures/a-small.svg": b"<svg>small</svg>"}
    assert not (tmp_path / "figure").exists()
    drawing.keep()
    assert Drawing(figures, tmp_path, workers=0).files() == drawing.files()
    assert CALLS == ["small"]


def test_a_worker_that_fails_names_its_figures(tmp_path: Path) -> None:
    broken = Figure("figures/broken.svg", "generator.charts:no_such_drawing", (), "c" * 64)
    drawing = Drawing([broken], tmp_path, workers=1)
    with pytest.raises(DrawingError, match="figures/broken.svg") as caught:
        drawing.files()
    assert "no_such_drawing" in caught.value.problem  # the worker's own error, quoted


def wait_forever(fifo: str) -> bytes:
    """A drawing that says it started (its pid, through a FIFO the test reads) and never ends."""
    with open(fifo, "w") as started:
        started.write(f"{os.getpid()}\n")
    threading.Event().wait()
    return b""


def started_worker(fifo: Path) -> int:
    """The pid a wait_forever drawing wrote: waits for the event, not for a number of seconds."""
    descriptor = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        ready, _, _ = select.select([descriptor], [], [], 300)  # a safety net, never reached
        assert ready, "the worker never started its drawing"
        return int(os.read(descriptor, 64).split()[0])
    finally:
        os.close(descriptor)


def matplotlib_backend() -> bytes:
    """A drawing that imports matplotlib, as every figure does, and says which backend it got."""
    import matplotlib

    return matplotlib.get_backend().lower().encode()


def test_a_worker_draws_whatever_mplbackend_says(tmp_path: Path, monkeypatch) -> None:
    """Issue 35: `MPLBACKEND=nonexistent mkdocs build` failed with the worker's traceback (its
    `import matplotlib` raised). The figures are bytes drawn by Agg whatever the reader's
    environment wants for windows, so a worker always runs with MPLBACKEND=agg."""
    monkeypatch.setenv("MPLBACKEND", "nonexistent")
    figure = Figure("figures/backend.svg", f"{__name__}:matplotlib_backend", (), "4" * 64)
    assert Drawing([figure], tmp_path, workers=1).files() == {"figures/backend.svg": b"agg"}


def test_a_cancelled_drawing_stops_its_workers(tmp_path: Path) -> None:
    fifo = tmp_path / "started"
    os.mkfifo(fifo)
    stuck = Figure("figures/stuck.svg", "tests.test_charts:wait_forever", (str(fifo),), "d" * 64)
    drawing = Drawing([stuck], tmp_path, workers=1)
    worker = started_worker(fifo)
    drawing.cancel()
    (process,) = drawing.processes
    assert process.pid == worker
    assert process.wait(timeout=300) != 0  # killed, not left waiting


def dies_once(marker: str, sig: int) -> bytes:
    """Sends itself `sig` the first time it runs (marker absent), draws the second time."""
    if not os.path.exists(marker):
        Path(marker).touch()
        os.kill(os.getpid(), sig)
        threading.Event().wait()  # stopped (SIGSTOP) until the build ends this worker
    return b"<svg>drawn again</svg>"


def plain_figure(text: str) -> bytes:
    return f"<svg>{text}</svg>".encode()


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGSTOP])
def test_a_killed_or_stopped_worker_has_its_figures_drawn_again(
    tmp_path: Path, sig: int, caplog
) -> None:
    """A drawing worker killed by SIGKILL was a traceback; a stopped one hung the build forever.
    The redraw is said as information: a warning failed every strict build (this site's) that
    had just recovered (issue 24's re-run)."""
    caplog.set_level(logging.INFO)
    first = Figure("figures/a.svg", "tests.test_charts:plain_figure", ("a",), "1" * 64)
    doomed = Figure(
        "figures/b.svg", "tests.test_charts:dies_once", (str(tmp_path / "m"), sig), "2" * 64
    )
    drawing = Drawing([first, doomed], tmp_path / "cache", workers=1)
    assert drawing.files() == {
        "figures/a.svg": b"<svg>a</svg>",
        "figures/b.svg": b"<svg>drawn again</svg>",
    }
    expected = "killed by signal 9" if sig == signal.SIGKILL else "the worker was stopped"
    assert expected in caplog.text and "drawing 1 figure(s) again" in caplog.text
    assert all(record.levelno < logging.WARNING for record in caplog.records)


def never_ends() -> bytes:
    threading.Event().wait()
    return b""


def test_a_worker_that_fails_twice_stops_the_build_naming_its_figures(tmp_path: Path) -> None:
    """stall=1: a drawing that never ends always passes the deadline, however fast the machine."""
    stuck = Figure("figures/stuck.svg", "tests.test_charts:never_ends", (), "3" * 64)
    drawing = Drawing([stuck], tmp_path / "cache", workers=1, stall=1.0)
    with pytest.raises(DrawingError) as caught:
        drawing.files()
    assert "figures/stuck.svg" in caught.value.problem
    assert "sent nothing for 1 s (stuck)" in caught.value.problem
    assert "ITM_DRAW_TIMEOUT" in caught.value.fix
    assert all(process.poll() is not None for process in drawing.processes)


def pid_figure(text: str) -> bytes:
    """A figure that says which process drew it."""
    return f"<svg>{text} {os.getpid()}</svg>".encode()


def test_figures_added_while_a_worker_waits_are_drawn_by_that_worker(
    tmp_path: Path, monkeypatch
) -> None:
    """A build knows its features' figures only once its inputs are loaded: they join the
    charts' worker, whose matplotlib is imported, instead of a fresh process importing it again
    for one figure (about a second of CPU in a cold build)."""
    first = Figure("figures/a.svg", "tests.test_charts:pid_figure", ("a",), "4" * 64)
    later = Figure("figures/b.svg", "tests.test_charts:pid_figure", ("b",), "5" * 64)
    idle = idle_event(monkeypatch)
    drawing = Drawing([first], tmp_path / "cache", workers=1, more=True)
    assert idle.wait(300)  # a safety net: the event comes once `a` is drawn and sent
    drawing.add([later])  # a second line to a running worker
    drawing.close()
    drawn = drawing.files()
    (process,) = drawing.processes
    assert drawn == {
        "figures/a.svg": f"<svg>a {process.pid}</svg>".encode(),
        "figures/b.svg": f"<svg>b {process.pid}</svg>".encode(),
    }
    assert process.returncode == 0  # told there were no more, it ended by itself


def test_a_worker_left_waiting_is_told_there_are_no_more(tmp_path: Path) -> None:
    """more=True and nobody closes: once it has drawn everything and waited `idle` seconds (a
    wait after the drawing, whatever its speed; `stall` stays at its default), the worker is
    told itself and ends (no build waits on an idle worker forever); a figure
    added after that gets a worker of its own."""
    first = Figure("figures/a.svg", "tests.test_charts:pid_figure", ("a",), "6" * 64)
    later = Figure("figures/b.svg", "tests.test_charts:pid_figure", ("b",), "7" * 64)
    drawing = Drawing([first], tmp_path / "cache", workers=1, more=True, idle=0.5)
    ((_, future),) = drawing.pending
    assert future.result().problem is None  # waits for the event, however slow the machine
    (process,) = drawing.processes
    assert process.returncode == 0
    drawing.add([later])
    drawn = drawing.files()
    first_worker, second_worker = drawing.processes
    assert drawn["figures/a.svg"] == f"<svg>a {first_worker.pid}</svg>".encode()
    assert drawn["figures/b.svg"] == f"<svg>b {second_worker.pid}</svg>".encode()


@pytest.mark.parametrize("all_drawn", [True, False])
def test_a_quiet_worker_meets_idle_once_done_and_stall_while_drawing(all_drawn: bool) -> None:
    """A quiet worker that has drawn all it was sent is only waiting: `idle` ends that wait and
    it is not killed. One with figures left is stuck after `stall`, whatever `idle` says. The
    other limit is an hour, so a wait on the wrong one ends at the safety net, not by chance."""
    from generator.drawing import Delivery, _receive

    quiet = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"],  # sends nothing until told
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    idle, stall = (0.0, 3600.0) if all_drawn else (3600.0, 0.0)
    delivery = Delivery()
    returned: list[bool] = []
    receiving = threading.Thread(
        target=lambda: returned.append(
            _receive(quiet, stall, idle, delivery, lambda drawn: (all_drawn, 0.0))
        ),
        daemon=True,
    )
    try:
        receiving.start()
        receiving.join(timeout=300)  # a safety net: it returns after one look (0.25 s)
        assert returned == [not all_drawn], "it waited on the wrong limit"
        if all_drawn:
            assert quiet.poll() is None and delivery.problem is None  # only waiting: left alive
        else:
            assert quiet.wait(timeout=300) < 0 and "stuck" in str(delivery.problem)
    finally:
        quiet.kill()
        quiet.wait()
        receiving.join(timeout=300)


def test_a_figure_added_after_its_waiting_worker_was_killed_gets_a_new_worker(
    tmp_path: Path, monkeypatch
) -> None:
    """The charts' worker, done and waiting for the features' figures, is killed (the OOM
    killer): what add() sends next must not join the dead worker's share, where nothing would
    draw it (files() failed with a KeyError)."""
    all_drawn = idle_event(monkeypatch)
    first = Figure("figures/a.svg", "tests.test_charts:pid_figure", ("a",), "8" * 64)
    later = Figure("figures/b.svg", "tests.test_charts:pid_figure", ("b",), "9" * 64)
    drawing = Drawing([first], tmp_path / "cache", workers=1, more=True)
    assert all_drawn.wait(timeout=300)  # a safety net: the event comes once `a` is in
    (process,) = drawing.processes
    process.kill()
    ((_, future),) = drawing.pending
    assert future.result().problem is None  # it had delivered all it was given
    drawing.add([later])
    drawn = drawing.files()
    assert set(drawn) == {"figures/a.svg", "figures/b.svg"}
    assert len(drawing.processes) == 2


def idle_event(monkeypatch) -> threading.Event:
    """Set once a worker has drawn every figure it was sent (and waits for more)."""
    idle = threading.Event()
    waiting = Drawing._waiting

    def watched(self: Drawing, share, drawn: dict[str, bytes]) -> tuple[bool, float]:
        result = waiting(self, share, drawn)
        if result[0]:
            idle.set()
        return result

    monkeypatch.setattr(Drawing, "_waiting", watched)
    return idle


def test_figures_sent_to_a_worker_that_just_died_are_drawn_again(
    tmp_path: Path, monkeypatch
) -> None:
    """A worker killed just before the build sends it more: the unsent task line stays in its
    stdin's buffer, and closing it raised BrokenPipeError out of files() (a traceback)."""
    from generator import drawing as drawing_module

    idle = idle_event(monkeypatch)
    ended, go_on = threading.Event(), threading.Event()
    receive = drawing_module._receive

    def held(*args) -> bool:  # the worker's thread, held once its worker closed its output
        closed = receive(*args)
        if closed:
            ended.set()
            go_on.wait(300)
        return closed

    monkeypatch.setattr(drawing_module, "_receive", held)
    first = Figure("figures/a.svg", "tests.test_charts:pid_figure", ("a",), "a2" * 32)
    later = Figure("figures/b.svg", "tests.test_charts:pid_figure", ("b",), "b2" * 32)
    drawing = Drawing([first], tmp_path / "cache", workers=1, more=True)
    assert idle.wait(300)
    (dead,) = drawing.processes
    dead.kill()  # the OOM killer
    assert ended.wait(300)
    drawing.add([later])  # written to the dead worker before its thread saw it end
    go_on.set()
    drawn = drawing.files()
    _, again = drawing.processes
    assert drawn == {
        "figures/a.svg": f"<svg>a {dead.pid}</svg>".encode(),
        "figures/b.svg": f"<svg>b {again.pid}</svg>".encode(),
    }


def logged_figure(log: str) -> bytes:
    with open(log, "a") as drawn:
        drawn.write("drawn\n")
    return b"<svg/>"


# The build: a Drawing of 40 quick figures in one worker; it prints the worker's pid the moment
# the worker is started (before that worker has run a line of its own) and then waits to be killed.
KILLED_BUILD = """
import sys, threading
from generator.drawing import Drawing, DrawingError, Figure

start = Drawing._start
def announce(self, errors):
    process = start(self, errors)
    print(process.pid, flush=True)
    return process
Drawing._start = announce
figures = [Figure(f"f{i}.svg", "tests.test_charts:logged_figure", (sys.argv[1],), "e" * 64)
           for i in range(40)]
drawing = Drawing(figures, workers=1)
threading.Event().wait()
"""

# Runs KILLED_BUILD, SIGKILLs it as soon as its worker exists, and, as the orphan's new parent
# (PR_SET_CHILD_SUBREAPER), waits for the worker to end: prints the figures drawn by then.
HARNESS = """
import ctypes, os, signal, subprocess, sys
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
log = sys.argv[2]
open(log, "w").close()
build = subprocess.Popen([sys.executable, "-c", sys.argv[1], log], stdout=subprocess.PIPE)
worker = int(build.stdout.readline())
os.kill(build.pid, signal.SIGKILL)
build.wait()
at_kill = len(open(log).readlines())
try:
    os.waitpid(worker, 0)  # it is ours now; returns when it has ended
except ChildProcessError:
    pass  # already reaped
print(at_kill, len(open(log).readlines()))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER")
def test_a_worker_stops_when_the_build_is_killed(tmp_path: Path) -> None:
    """SIGKILL ends `mkdocs build` at once, however early: the worker must end too, not draw the
    rest of its share as an orphan. It used to read its parent's pid only after its imports, so
    a build killed during them left an orphan that drew every figure (6 failures in 9 runs)."""
    done = subprocess.run(
        [sys.executable, "-c", HARNESS, KILLED_BUILD, str(tmp_path / "drawn.log")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,  # a safety net: the harness waits on the worker's exit, not the clock
    )
    assert done.returncode == 0, done.stderr
    at_kill, at_end = map(int, done.stdout.split())
    assert at_end - at_kill <= 1  # at most the figure it was drawing when the build died


@pytest.mark.parametrize("name", ["flops-context", "decode-flops"])
def test_every_label_is_plain_text_inside_the_figure(name: str) -> None:
    """Axis labels are written out (token counts with separators, FLOPs as powers of ten) as
    text a reader can select, and no text is drawn off the canvas (the context figure's
    crossover note once sat 70,000 px below it, invisible)."""
    import xml.etree.ElementTree as ET

    from generator.charts import figure_path

    cfg = CONFIGS["gpt2"]
    svg = ET.fromstring(render_all()[figure_path(name, cfg)])
    width, height = (float(svg.get(side, "0").removesuffix("pt")) for side in ("width", "height"))
    texts = {}
    for text in svg.iter("{http://www.w3.org/2000/svg}text"):
        x, y = float(text.get("x", "0")), float(text.get("y", "0"))
        texts["".join(text.itertext()).strip()] = (x, y)
        assert 0 <= x <= width and 0 <= y <= height, ("".join(text.itertext()), x, y)
    assert "1,024" in texts and "10⁶" in texts, sorted(texts)
    assert not any("$" in t or "mathdefault" in t for t in texts)


def test_figures_drawn_in_worker_processes_are_the_same_bytes() -> None:
    """A build draws its figures in `python -m generator.drawing` workers while it fills pages;
    what they draw must equal what this process draws."""
    assert render_all(workers=3) == render_all(workers=0)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", ["params", "flops-context", "decode-flops"])
def test_nothing_is_drawn_past_the_canvas(name: str, size: str, monkeypatch) -> None:
    """Every drawn artist (titles and labels measured as matplotlib lays them out) fits the
    figure: the parameter chart's title, centred over axes pushed right by their labels, once ran
    ~0.4 in past the right edge and was cut off."""
    from generator import charts

    boxes = []
    draw_svg = charts.svg_bytes

    def measured(fig):
        fig.canvas.draw()
        boxes.append((fig.get_tightbbox(fig.canvas.get_renderer()), *fig.get_size_inches()))
        return draw_svg(fig)

    monkeypatch.setattr(charts, "svg_bytes", measured)
    charts.render_chart(name, size)
    ((box, width, height),) = boxes
    assert box.x0 >= 0 and box.y0 >= 0, box
    assert box.x1 <= width and box.y1 <= height, (box, width, height)


FIGURE_KEYS = """
from generator.charts import chart_figures
from generator.forward.training_figure import training_figure

curve = {"step": [0, 1], "loss": [2.0, 1.0], "induction": [0.1, 0.5], "previous_token": [0.2, 0.6]}
print(*[f.key for f in chart_figures()], training_figure(curve, "t").key)
"""


@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        ("render/numbers.py", 'f"{int(n):,}"', 'f"{int(n):_}"'),  # every label's digits
        ("forward/analysis.py", '"induction": 0.3,', '"induction": 0.35,'),  # a line drawn
    ],
)
def test_a_figure_is_redrawn_when_any_module_its_drawing_reads_changes(
    tmp_path: Path, module: str, old: str, new: str
) -> None:
    """The charts print numbers with render/numbers.py and the training figure draws the
    thresholds of forward/analysis.py: editing either once left every figure cached under its
    old key, so the next build (and the build memo recorded from it) served the old figures."""
    root = tmp_path / "project"
    shutil.copytree(
        ROOT / "generator", root / "generator", ignore=shutil.ignore_patterns("__pycache__")
    )

    def keys() -> list[str]:
        out = subprocess.run(
            [sys.executable, "-c", FIGURE_KEYS],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout.split()

    before = keys()
    path = root / "generator" / module
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    after = keys()
    assert len(after) == len(before) == len(set(before))
    assert not set(before) & set(after)


def test_a_matplotlibrc_on_the_machine_does_not_change_the_figures(
    tmp_path: Path, monkeypatch
) -> None:
    """matplotlib reads a matplotlibrc from MATPLOTLIBRC, MPLCONFIGDIR, ~/.config/matplotlib or
    the working directory (the project root, for the workers): a build on a machine with one
    drew other lines and colours, and any cache or memo then served whichever came first."""
    from generator.charts import chart_figures

    figures = chart_figures()[:3]  # one of each chart
    monkeypatch.delenv("MATPLOTLIBRC", raising=False)
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "plain"))
    plain = Drawing(figures, workers=1).files()
    rc = tmp_path / "matplotlibrc"
    rc.write_text("lines.linewidth: 4\naxes.prop_cycle: cycler('color', ['ff0000'])\n")
    monkeypatch.setenv("MATPLOTLIBRC", str(rc))
    assert Drawing(figures, workers=1).files() == plain


@pytest.mark.parametrize("figure", ["flops-context", "decode-flops"])
@pytest.mark.parametrize("layout", ["wide", "narrow"])
def test_no_crossover_line_runs_through_a_word(figure: str, layout: str) -> None:
    """A chart's dashed crossover line stops short of every text it would cross (it ran through
    the "beyond n_ctx" note)."""
    from matplotlib.text import Text

    from generator.charts import DRAW, NARROW, WIDE

    fig = DRAW[figure](CONFIGS["gpt2"], NARROW if layout == "narrow" else WIDE)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (ax,) = fig.axes
    crossing = [line for line in ax.get_lines() if line.get_color() == "#c62828"]
    assert len(crossing) == 1
    line = crossing[0].get_window_extent(renderer)
    words = [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert len(words) > 10
    hit = [t.get_text() for t in words if t.get_window_extent(renderer).overlaps(line)]
    assert hit == [], hit
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_narrow_charts_keep_their_words_at_nine_points_or_more_on_a_phone() -> None:
    """Each chart has a narrow twin for phones: drawn at most as wide as a phone shows it, with
    no text under 9 pt (the wide chart shrunk to 375 px set its smallest words at about 5 px)."""
    from generator.charts import FIGURES, NARROW, render_chart

    for name in FIGURES:
        svg = render_chart(name, "gpt2", True).decode()
        width_pt = float(re.search(r'<svg[^>]*width="([\d.]+)pt"', svg)[1])
        assert width_pt <= NARROW.width * 72 + 1
        # SVG user units are points here: a phone shows the 4.2-inch chart at about 1.1 px each.
        sizes = [float(size) for size in re.findall(r"font-size: ([\d.]+)px", svg)]
        assert sizes and min(sizes) >= 9, (name, sorted(set(sizes)))
