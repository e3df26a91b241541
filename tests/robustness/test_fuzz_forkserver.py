"""The fork server of the fuzz campaign (bench/fuzz_forkserver.py): each case alone in a child,
killed at its bound, its peak memory measured, its memory limited, nothing of it left behind."""

from __future__ import annotations

import time

import numpy as np

from bench.fuzz_forkserver import ForkServer


def _run_all(run, cases, workers=2, bounds=(60.0, 60.0), memory_limit=4 * 2 ** 30):
    server = ForkServer(run, workers, bounds, memory_limit)
    todo, done = list(cases), {}
    while todo or server.children:
        while todo and server.free:
            server.start(todo.pop(0))
        for fin in server.wait(timeout=1.0):
            done[fin.case] = fin
    return done


def test_messages_come_back_in_order_and_a_case_past_its_bound_is_killed():
    def run(k):
        yield {"case": k}
        if k == 1:
            time.sleep(600)  # the extra check that never ends: killed at the second bound
        yield {"extra": k}

    done = _run_all(run, [0, 1, 2], bounds=(60.0, 2.0))
    assert done[0].messages == [{"case": 0}, {"extra": 0}] and done[0].killed_after is None
    assert done[1].messages == [{"case": 1}] and done[1].killed_after == 1
    assert done[2].killed_after is None


def test_each_case_has_its_own_peak_memory_and_limit():
    def run(k):
        if k == 0:
            a = np.ones(300 * 2 ** 20 // 8)  # 300 MiB, touched
            yield {"sum": float(a[::4096].sum())}
        elif k == 1:
            np.ones(2 ** 40 // 8)  # 1 TiB: beyond the address-space limit
        else:
            yield {"small": True}

    done = _run_all(run, [0, 1, 2])
    assert done[0].peak_rss > 300 * 2 ** 20
    assert done[2].peak_rss < done[0].peak_rss - 200 * 2 ** 20
    assert "MemoryError" in done[1].messages[0]["harness_error"]


def test_what_a_case_changes_in_memory_does_not_reach_the_next():
    def run(k):
        before = time.sleep.__name__
        time.sleep = lambda seconds: None  # as a fault-injection case patches os.rename
        yield {"before": before}

    done = _run_all(run, [0, 1], workers=1)
    assert [done[k].messages[0]["before"] for k in (0, 1)] == ["sleep", "sleep"]
