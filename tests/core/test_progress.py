"""dpaudit.core.progress: quiet when not a TTY / in --json mode; prints when forced."""

import io

import pytest

from dpaudit.core import progress as pg
from dpaudit.core.progress import Progress, disabled, format_duration, progress_enabled


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class TTY(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv("DPAUDIT_PROGRESS", raising=False)
    old = pg.set_default(None)
    yield
    pg.set_default(old)


def run(stream, clock, total=1000, steps=10, dt=0.3, **kw):
    with Progress(total, stream=stream, clock=clock, **kw) as p:
        for _ in range(steps):
            clock.t += dt
            p.update(total // steps)
    return p


def test_quiet_when_not_a_tty():
    s, c = io.StringIO(), FakeClock()
    p = run(s, c)
    assert s.getvalue() == "" and p.lines_written == 0 and p.done == 1000


def test_prints_on_a_tty_with_rate_and_time_left():
    s, c = TTY(), FakeClock()
    p = run(s, c, delay=0.0, interval=0.5)
    out = s.getvalue()
    assert out.endswith("\n")
    assert "trials/s" in out and "left" in out and "1,000/1,000 trials (100%)" in out
    # throttled: 10 updates 0.3 s apart with a 0.5 s interval draw at most 6 times (+ final)
    assert 2 <= p.lines_written <= 7


def test_forced_on_non_tty_and_message_values():
    s, c = io.StringIO(), FakeClock()
    p = Progress(100, stream=s, clock=c, enabled=True, delay=0.0, interval=0.0)
    c.t = 2.0
    p.update(40)
    msg = p.message()
    assert msg.startswith("audit: 40/100 trials (40%)")
    assert "20 trials/s" in msg and "3.0 s left" in msg
    assert "\r" in s.getvalue()


def test_delay_keeps_short_runs_silent():
    s, c = TTY(), FakeClock()
    run(s, c, dt=0.01, delay=1.0)  # 0.1 s in total
    assert s.getvalue() == ""


@pytest.mark.parametrize("how", ["context", "default", "env"])
def test_json_mode_and_env_silence_a_tty(how, monkeypatch):
    s, c = TTY(), FakeClock()
    if how == "context":
        with disabled():
            run(s, c, delay=0.0)
    elif how == "default":
        pg.set_default(False)
        run(s, c, delay=0.0)
    else:
        monkeypatch.setenv("DPAUDIT_PROGRESS", "0")
        run(s, c, delay=0.0)
    assert s.getvalue() == ""


def test_env_forces_on(monkeypatch):
    monkeypatch.setenv("DPAUDIT_PROGRESS", "1")
    assert progress_enabled(io.StringIO())
    assert not progress_enabled(io.StringIO(), enabled=False)


def test_unknown_total_and_durations():
    s, c = io.StringIO(), FakeClock()
    p = Progress(None, stream=s, clock=c, enabled=True, delay=0, interval=0)
    c.t = 1.0
    p.update(5)
    assert p.message() == "audit: 5 trials  5 trials/s"
    assert format_duration(0.44) == "0.4 s"
    assert format_duration(185) == "3 min 05 s"
    assert format_duration(7260) == "2 h 01 min"
    assert format_duration(float("inf")) == "?"


@pytest.mark.parametrize("kw", [{"total": -1}, {"total": 1, "interval": -1}, {"total": 1, "delay": float("nan")}])
def test_bad_arguments(kw):
    with pytest.raises(ValueError, match=next(iter(kw)) if "total" not in kw or len(kw) == 1 else list(kw)[1]):
        Progress(**kw)


def test_closed_stream_is_tolerated():
    s, c = TTY(), FakeClock()
    p = Progress(10, stream=s, clock=c, delay=0, interval=0)
    s.close()
    c.t = 1
    p.update(1)
    assert not p.enabled
