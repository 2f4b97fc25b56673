"""A probe of an asyncio event loop's stalls, shared by the tests and python/bench.

A ticker thread wakes every `period` seconds and hands the probe task a future's result
through `loop.call_soon_threadsafe`, as rtde_rs.aio hands over a package. The time from
the hand-off to the task running again is how long the loop kept ready work waiting: a
blocking call in the loop, a long callback, the GIL held elsewhere.

The operating system's scheduler adds its own waits on a busy machine (measured on the
2-CPU test machine with other builds running: up to 27 ms between a timer's due time and a
loop that ran nothing else). The loop thread's time in the run queue during each hand-off
(`/proc/thread-self/schedstat`, its second field) is subtracted, so that a stall is one the
program caused; `raw` keeps the figures without the subtraction. A probe of wake-ups from a
timer (`asyncio.sleep`) instead would also count epoll's millisecond rounding of a timeout
recomputed after each other wake-up: up to 1 ms with a package every 2 ms, on an idle loop.
"""

import asyncio
import threading
import time

SCHEDSTAT = "/proc/thread-self/schedstat"


def _queued_s(path):
    """A thread's total time waiting in the run queue, in seconds (0 where the kernel does
    not say)."""
    try:
        with open(path) as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


class LoopLag:
    """`async with LoopLag() as lag:` probes the running loop until the block ends;
    `lag.stalls` (s, scheduler waits subtracted) and `lag.raw` (s) then hold one figure
    per hand-off."""

    def __init__(self, period=0.001):
        self.period = period
        self.stalls = []
        self.raw = []
        self._stop = threading.Event()

    async def __aenter__(self):
        loop = asyncio.get_running_loop()
        # The loop thread's own schedstat, read from the ticker thread.
        self._loop_stat = f"/proc/self/task/{threading.get_native_id()}/schedstat"
        self._ready = asyncio.Queue()
        self._ticker = threading.Thread(target=self._tick, args=(loop,), name="loop-lag-ticker")
        self._ticker.start()
        self._task = asyncio.create_task(self._probe())
        return self

    def _tick(self, loop):
        while not self._stop.wait(self.period):
            sent, queued = time.perf_counter(), _queued_s(self._loop_stat)
            try:
                loop.call_soon_threadsafe(self._ready.put_nowait, (sent, queued))
            except RuntimeError:
                return  # the loop closed

    async def _probe(self):
        while True:
            sent, queued = await self._ready.get()
            raw = time.perf_counter() - sent
            self.raw.append(raw)
            self.stalls.append(max(0.0, raw - (_queued_s(SCHEDSTAT) - queued)))

    async def __aexit__(self, *exc):
        self._stop.set()
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        await asyncio.get_running_loop().run_in_executor(None, self._ticker.join)
        return False
