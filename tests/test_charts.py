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
from concurrent.futures import wait
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
    from generator import decode_costs
    from generator.charts import decode_flops_figure

    cfg = CONFIGS[name]
    svg = decode_flops_figure(cfg)
    assert svg == decode_flops_figure(cfg)
    text = svg.decode()
    # the crossover is checked against FlopCounterMode in test_accounting_generation
    assert f"at t = {decode_costs.cache_crossover(cfg):,}" in text
    ratio = decode_costs.decode_flops(cfg, 1024, cached=False) / decode_costs.decode_flops(
        cfg, 1024, cached=True
    )
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


def announced(fifo: str) -> bytes:
    """A quick drawing that says it ran (its pid, through a FIFO the test reads)."""
    with open(fifo, "w") as drawn:
        drawn.write(f"{os.getpid()}\n")
    return b"<svg/>"


# A build waiting for its figures: one stuck, one drawn by the other worker (which now waits).
INTERRUPTED_BUILD = """
import sys
from generator.drawing import Drawing, Figure

stuck = Figure("figures/a.svg", "tests.test_charts:wait_forever", (sys.argv[1],), "a3" * 32)
quick = Figure("figures/b.svg", "tests.test_charts:announced", (sys.argv[2],), "b3" * 32)
drawing = Drawing([stuck, quick], workers=2)
try:
    drawing.files()
except KeyboardInterrupt:
    print(*[process.exitcode for process in drawing.processes])
    sys.exit(130)
"""


def test_ctrl_c_stops_the_build_and_every_worker_quietly(tmp_path: Path) -> None:
    """Ctrl-C reaches every process of the terminal's group: the build kills its workers, the
    stuck one too, before it exits, and nothing but the build speaks."""
    fifos = [tmp_path / "stuck", tmp_path / "quick"]
    for fifo in fifos:
        os.mkfifo(fifo)
    build = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED_BUILD, *map(str, fifos)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # a process group of its own, as a terminal's job
    )
    try:
        for fifo in fifos:
            started_worker(fifo)  # both workers started: one is stuck, the other waits
        os.killpg(build.pid, signal.SIGINT)
        out, err = build.communicate(timeout=300)  # a safety net: it exits at once
    finally:
        if build.poll() is None:
            build.kill()
    assert build.returncode == 130, err
    assert err == "", err  # not even "Process SpawnProcess-1:", the start of a traceback
    codes = out.split()
    assert len(codes) == 2 and "None" not in codes and "0" not in codes  # both killed


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/PID/status")
def test_a_worker_leaves_ctrl_c_to_the_build(tmp_path: Path, capfd) -> None:
    """A worker waiting for figures died of Ctrl-C with KeyboardInterrupt's traceback (and one
    drawing raised it back into the build): the build decides, and stops its workers itself."""
    first = Figure("figures/a.svg", "tests.test_charts:pid_figure", ("a",), "a4" * 32)
    later = Figure("figures/b.svg", "tests.test_charts:pid_figure", ("b",), "b4" * 32)
    drawing = Drawing([first], tmp_path / "cache", workers=1)
    delivered(drawing)
    (worker,) = drawing.processes
    ignored = re.search(
        r"^SigIgn:\s*([0-9a-f]+)$", Path(f"/proc/{worker.pid}/status").read_text(), re.M
    )
    assert ignored and int(ignored[1], 16) & 1 << (signal.SIGINT - 1)  # as the kernel sees it
    os.kill(worker.pid, signal.SIGINT)  # what Ctrl-C sends every process of the terminal's group
    drawing.add([later])
    assert drawing.files() == {
        "figures/a.svg": f"<svg>a {worker.pid}</svg>".encode(),
        "figures/b.svg": f"<svg>b {worker.pid}</svg>".encode(),
    }
    assert capfd.readouterr().err == ""


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
    drawing.cancel()  # returns once its workers have ended
    (process,) = drawing.processes
    assert process.pid == worker
    assert process.exitcode not in (None, 0)  # killed, not left waiting


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
    assert all(process.exitcode is not None for process in drawing.processes)


def pid_figure(text: str) -> bytes:
    """A figure that says which process drew it."""
    return f"<svg>{text} {os.getpid()}</svg>".encode()


def delivered(drawing: Drawing) -> None:
    """Wait until the workers have delivered (or failed) every figure handed to them."""
    futures = [future for _, future in drawing.pending.values()]
    assert not wait(futures, timeout=300).not_done  # a safety net: the event comes first


def test_figures_added_while_a_worker_waits_are_drawn_by_that_worker(tmp_path: Path) -> None:
    """A build knows its features' figures only once its inputs are loaded: they join the
    charts' worker, whose matplotlib is imported, instead of a fresh process importing it again
    for one figure (about a second of CPU in a cold build)."""
    first = Figure("figures/a.svg", "tests.test_charts:pid_figure", ("a",), "4" * 64)
    later = Figure("figures/b.svg", "tests.test_charts:pid_figure", ("b",), "5" * 64)
    drawing = Drawing([first], tmp_path / "cache", workers=1)
    delivered(drawing)
    drawing.add([later])
    drawn = drawing.files()
    (process,) = drawing.processes
    assert drawn == {
        "figures/a.svg": f"<svg>a {process.pid}</svg>".encode(),
        "figures/b.svg": f"<svg>b {process.pid}</svg>".encode(),
    }
    assert process.exitcode is not None  # every figure came: it was ended


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/PID/stat")
def test_a_worker_stopped_after_drawing_everything_does_not_hold_the_build(
    tmp_path: Path,
) -> None:
    """A worker stopped (SIGSTOP) once it had drawn every figure would never read that there are
    no more: told so and waited for, it held the build at its end forever."""
    figure = Figure("figures/a.svg", "tests.test_charts:pid_figure", ("a",), "c4" * 32)
    drawing = Drawing([figure], tmp_path / "cache", workers=1)
    delivered(drawing)
    (worker,) = drawing.processes
    os.kill(worker.pid, signal.SIGSTOP)
    finished = threading.Thread(target=drawing.files, daemon=True)
    finished.start()
    finished.join(timeout=300)  # a safety net: files() returns at once
    assert not finished.is_alive(), "files() waited for the stopped worker"
    assert worker.exitcode == -signal.SIGKILL


# A build that starts drawing and returns without waiting for the figures or cancelling them.
UNFINISHED = """
from generator.drawing import Drawing, Figure
figure = Figure("figures/a.svg", "tests.test_charts:pid_figure", ("a",), "6" * 64)
drawing = Drawing([figure], workers=1)
print(*[process.pid for process in drawing.processes], flush=True)
"""


def test_a_process_that_never_asks_for_its_figures_still_ends_with_its_workers() -> None:
    """Nothing waits on a worker left with nothing to draw: a process that neither asked for its
    figures nor cancelled them ends, and its workers with it (they used to wait for more figures
    until told, or their idle deadline)."""
    done = subprocess.run(
        [sys.executable, "-c", UNFINISHED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,  # a safety net: the process ends on its own
    )
    assert done.returncode == 0, done.stderr
    (worker,) = map(int, done.stdout.split())
    assert not Path(f"/proc/{worker}").exists()  # ended and reaped, not left an orphan


def test_a_figure_added_after_its_waiting_worker_was_killed_gets_a_new_worker(
    tmp_path: Path,
) -> None:
    """The charts' worker, done and waiting for the features' figures, is killed (the OOM
    killer): what add() hands over next is drawn by a new worker (the pool it joined is broken,
    whether or not it has noticed yet)."""
    first = Figure("figures/a.svg", "tests.test_charts:pid_figure", ("a",), "8" * 64)
    later = Figure("figures/b.svg", "tests.test_charts:pid_figure", ("b",), "9" * 64)
    drawing = Drawing([first], tmp_path / "cache", workers=1)
    delivered(drawing)
    (process,) = drawing.processes
    process.kill()
    drawing.add([later])
    drawn = drawing.files()
    assert set(drawn) == {"figures/a.svg", "figures/b.svg"}
    assert len(drawing.processes) == 2


def test_figures_handed_to_a_pool_that_broke_are_drawn_again(tmp_path: Path) -> None:
    """A worker died (its pool broken, BrokenProcessPool from then on): a figure added after is
    refused by that pool, and drawn again with the figure that was being drawn."""
    first = Figure("figures/a.svg", "tests.test_charts:pid_figure", ("a",), "a2" * 32)
    doomed = Figure(
        "figures/b.svg",
        "tests.test_charts:dies_once",
        (str(tmp_path / "m"), signal.SIGKILL),
        "b2" * 32,
    )
    later = Figure("figures/c.svg", "tests.test_charts:pid_figure", ("c",), "c2" * 32)
    drawing = Drawing([first, doomed], tmp_path / "cache", workers=1)
    delivered(drawing)  # `b` killed its worker
    drawing.add([later])
    drawn = drawing.files()
    dead, again = drawing.processes
    assert drawn == {
        "figures/a.svg": f"<svg>a {dead.pid}</svg>".encode(),
        "figures/b.svg": b"<svg>drawn again</svg>",
        "figures/c.svg": f"<svg>c {again.pid}</svg>".encode(),
    }


def logged_figure(log: str) -> bytes:
    with open(log, "a") as drawn:
        drawn.write("drawn\n")
    return b"<svg/>"


# The build: a Drawing of quick figures in one worker; it prints the worker's pid the moment the
# worker is started (before it has imported anything), or once it has drawn every figure and
# waits for more, and then waits to be killed.
KILLED_BUILD = """
import sys, threading
from concurrent.futures import wait
from generator.drawing import Drawing, Figure

log, count, when = sys.argv[1:]
figures = [Figure(f"f{i}.svg", "tests.test_charts:logged_figure", (log,), "e" * 64)
           for i in range(int(count))]
drawing = Drawing(figures, workers=1)
if when == "waiting":
    wait([future for _, future in drawing.pending.values()])
(worker,) = drawing.processes
print(worker.pid, flush=True)
threading.Event().wait()
"""

# Runs KILLED_BUILD, SIGKILLs it as soon as it has printed its worker's pid, and, as the
# orphan's new parent (PR_SET_CHILD_SUBREAPER), waits for the worker to end: prints the figures
# drawn by then.
HARNESS = """
import ctypes, os, signal, subprocess, sys
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
build_code, log, *build_args = sys.argv[1:]
open(log, "w").close()
build = subprocess.Popen([sys.executable, "-c", build_code, log, *build_args], stdout=subprocess.PIPE)
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
@pytest.mark.parametrize(("count", "when"), [(40, "started"), (1, "waiting")])
def test_a_worker_stops_when_the_build_is_killed(tmp_path: Path, count: int, when: str) -> None:
    """SIGKILL ends `mkdocs build` at once, however early: the worker must end too, not draw the
    rest of its share as an orphan (a build killed during a worker's imports once left one that
    drew every figure), nor wait for more figures forever (a pool's worker holds both ends of
    its task queue: no end-of-file tells it the build is gone)."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            HARNESS,
            KILLED_BUILD,
            str(tmp_path / "drawn.log"),
            str(count),
            when,
        ],
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
    """A build draws its figures in worker processes while it fills pages; what they draw must
    equal what this process draws."""
    assert render_all(workers=3) == render_all(workers=0)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("name", ["params", "flops-context", "decode-flops"])
def test_nothing_is_drawn_past_the_canvas(name: str, size: str, monkeypatch) -> None:
    """Every drawn artist (titles and labels measured as matplotlib lays them out) fits the
    figure: the parameter chart's title, centred over axes pushed right by their labels, once ran
    ~0.4 in past the right edge and was cut off."""
    from generator import chart_style, charts

    boxes = []
    draw_svg = chart_style.svg_bytes

    def measured(fig):
        fig.canvas.draw()
        boxes.append((fig.get_tightbbox(fig.canvas.get_renderer()), *fig.get_size_inches()))
        return draw_svg(fig)

    monkeypatch.setattr(chart_style, "svg_bytes", measured)
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

    from generator.chart_style import NARROW, WIDE
    from generator.charts import DRAW

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
    from generator.chart_style import NARROW
    from generator.charts import FIGURES, render_chart

    for name in FIGURES:
        svg = render_chart(name, "gpt2", True).decode()
        width_pt = float(re.search(r'<svg[^>]*width="([\d.]+)pt"', svg)[1])
        assert width_pt <= NARROW.width * 72 + 1
        # SVG user units are points here: a phone shows the 4.2-inch chart at about 1.1 px each.
        sizes = [float(size) for size in re.findall(r"font-size: ([\d.]+)px", svg)]
        assert sizes and min(sizes) >= 9, (name, sorted(set(sizes)))
