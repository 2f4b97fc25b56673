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
import logging
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


class LoopSteps:
    """`async with LoopSteps() as steps:` times each step the running loop runs (each
    callback, each task's step) until the block ends, by asyncio's debug mode;
    `steps.durations` (s) then hold one figure per step.

    What the probe above cannot tell apart from the machine's own waits: how long the
    loop's own work, ours included, ever kept it from its other tasks. A step is preempted
    only as often as the operating system takes the CPU from a few microseconds of work.
    Debug mode also refuses a non-thread-safe `call_soon` from another thread."""

    _LOGGER = "asyncio"

    def __init__(self):
        self.durations = []

    async def __aenter__(self):
        self._loop = asyncio.get_running_loop()
        self._was = (self._loop.get_debug(), self._loop.slow_callback_duration)
        self._loop.set_debug(True)
        self._loop.slow_callback_duration = 0.0
        logger = logging.getLogger(self._LOGGER)
        self._propagate = logger.propagate
        logger.propagate = False
        self._handler = _StepTimes(self.durations)
        logger.addHandler(self._handler)
        return self

    async def __aexit__(self, *exc):
        logger = logging.getLogger(self._LOGGER)
        logger.removeHandler(self._handler)
        logger.propagate = self._propagate
        self._loop.set_debug(self._was[0])
        self._loop.slow_callback_duration = self._was[1]
        return False


class _StepTimes(logging.Handler):
    """Keeps the duration of each "Executing <step> took N seconds" that debug mode logs."""

    def __init__(self, durations):
        super().__init__(logging.WARNING)
        self._durations = durations

    def emit(self, record):
        if record.msg.startswith("Executing") and len(record.args) == 2:
            self._durations.append(float(record.args[1]))
