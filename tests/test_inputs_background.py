"""inputs.in_background: work started on a thread now, its result (or its error) handed over when
asked for, in the caller's thread."""

from __future__ import annotations

import threading

import pytest

from generator.errors import InputError
from generator.inputs import in_background


def test_the_result_is_handed_over_and_the_work_ran_on_another_thread() -> None:
    started = threading.Event()
    ran_on: list[str] = []

    def work() -> int:
        ran_on.append(threading.current_thread().name)
        started.set()
        return 42

    result = in_background(work)
    assert started.wait(timeout=60)  # it started without being asked for
    assert result() == 42
    assert ran_on == ["inputs"]


def test_its_error_is_raised_where_the_result_is_asked_for() -> None:
    error = InputError("bad pin", file="sources/web-assets.toml", entry="katex", fix="fix it")

    def work() -> None:
        raise error

    result = in_background(work)
    with pytest.raises(InputError) as caught:
        result()
    assert caught.value is error  # the same error, not a traceback of the thread
