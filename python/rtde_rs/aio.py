"""rtde_rs for asyncio: ``Client``, ``Robot`` and ``Dashboard`` whose waits are awaited.

A thin layer over the threaded classes (``rtde_rs.Client``, ``rtde_rs.Robot``,
``rtde_rs.Dashboard``), so that the Rust core does the work once. A call that waits runs
in a thread of its own, with the GIL released inside Rust, and its result is handed to
the event loop with ``loop.call_soon_threadsafe``: no call blocks the event loop.
In-order packages come from one Rust thread per client that never takes the GIL: it keeps
at most 64 ready and wakes the loop through a pipe (a slow consumer leaves the rest in the
Rust queue, where an overflow is counted in ``stats()["overflowed"]``, never lost
silently).

Errors are the threaded API's classes, with the same messages. A task cancelled while it
awaits a move stops the arm (``stop_j`` at ``MOTION_DEFAULTS["interrupt_deceleration"]``),
as Ctrl-C does in the threaded API.

Example::

    import asyncio
    import rtde_rs
    from rtde_rs import aio

    async def main():
        with rtde_rs.Sim(program="command", dashboard=True) as sim:
            async with aio.Client(sim.host, ["timestamp", "actual_q"], port=sim.port) as client:
                async for package in client:
                    print(package["timestamp"], package["actual_q"])
                    break
            async with aio.Dashboard(sim.host, sim.dashboard_port) as dashboard:
                print(await dashboard.robot_mode())
            async with aio.Robot(sim.host, port=sim.port, send_program=False) as robot:
                print(await robot.move_j([0.3, -1.4, 1.4, -1.6, -1.5, 0.2]))

    asyncio.run(main())
"""

import asyncio
import collections
import os
import threading

from . import _rtde_rs
from ._rtde_rs import ConnectionLostError, RtdeTimeoutError

__all__ = ["Client", "Robot", "Dashboard"]

# How long the receive after the pump's end waits for the threaded client to say why.
_SLICE_S = 0.1

# How many packages the pump hands over ahead of the consumer.
_AHEAD = 64


def _call(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` in a thread of its own; its result (or exception) settles the
    returned future on the running loop, through ``call_soon_threadsafe``. A cancelled
    future lets the call finish in its thread; its result is dropped."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()

    def settle(result, error):
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def run():
        try:
            result, error = fn(*args, **kwargs), None
        except Exception as e:  # noqa: BLE001 - handed to the awaiting task as it is
            result, error = None, e
        try:
            loop.call_soon_threadsafe(settle, result, error)
        except RuntimeError:
            pass  # the loop closed: no one awaits the result any more

    # Not a daemon: the interpreter waits for it at exit rather than stopping it inside Rust.
    threading.Thread(target=run, name=f"rtde_rs-aio-{getattr(fn, '__name__', 'call')}").start()
    return future


def _not_open(what):
    """What a method of a class whose connection is not open (yet, or any more) raises."""
    return ConnectionLostError(f"the {what} is not open: use `async with` or `await .open()`")


class _Pump:
    """A client's packages in order, for the loop: a thread in Rust takes them without the
    GIL, at most ``_AHEAD`` ahead of the consumer, and wakes the loop through a pipe (its
    ``fileno``) when some are ready. No Python thread hands packages over, so none holds
    the GIL that the loop's thread waits for."""

    def __init__(self, client, loop):
        self._loop = loop
        self._rust = client._pump(_AHEAD)
        self._fd = self._rust.fileno()
        os.set_blocking(self._fd, False)
        self._ready = collections.deque()
        self._waiter = None
        self.finished = False
        loop.add_reader(self._fd, self._readable)

    def _readable(self):
        try:
            os.read(self._fd, 4096)
        except BlockingIOError:
            pass
        _wake(self._waiter)

    async def next(self):
        """The next package (or the error in its place); None once the pump has ended and
        handed everything over. Cancel-safe: a package stays queued until it is returned."""
        while True:
            if self._ready:
                return self._ready.popleft()
            if self.finished:
                return None
            items, self.finished = self._rust.take()
            if items or self.finished:
                self._ready.extend(items)
                continue
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def stop(self):
        """Stops watching the pipe and stops the thread (it ends within 0.1 s)."""
        if not self._loop.is_closed():
            self._loop.remove_reader(self._fd)
        self._rust.stop()


def _wake(waiter):
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


class _Over:
    """What the three classes share: the threaded object, made in a thread by ``open``
    (or ``async with``) from the same arguments, closed in a thread by ``close``."""

    # The connection's name in the error of a call before `open`.
    _WHAT = ""
    # The threaded method that `close` calls.
    _CLOSE = "close"

    def __init__(self, make, *args, **options):
        self._make = make
        self._args = args
        self._options = options
        self._inner = None

    async def open(self):
        """Connects, in a thread: what the threaded class's constructor does."""
        if self._inner is None:
            self._inner = await _call(self._make, *self._args, **self._options)
        return self

    async def __aenter__(self):
        return await self.open()

    async def __aexit__(self, *exc):
        await self.close()
        return False

    def _threaded(self):
        if self._inner is None:
            raise _not_open(self._WHAT)
        return self._inner

    async def close(self):
        """Closes the connection, in a thread."""
        inner, self._inner = self._inner, None
        if inner is not None:
            await _call(getattr(inner, self._CLOSE))

    @property
    def threaded(self):
        """The threaded object underneath (``rtde_rs.Client``, ``Robot`` or ``Dashboard``)."""
        return self._threaded()

    def __repr__(self):
        return f"<rtde_rs.aio.{type(self).__name__} over {self._inner!r}>"


def _awaited(name, attribute):
    """The threaded method `attribute`, awaited: run in a thread."""

    async def awaited(*args, **kwargs):
        return await _call(attribute, *args, **kwargs)

    awaited.__name__ = name
    awaited.__doc__ = attribute.__doc__
    return awaited


class Client(_Over):
    """``rtde_rs.Client`` for asyncio: the same arguments, connected by ``async with`` (or
    ``await client.open()``).

    - ``async for package in client``, or ``await client.recv(timeout=None)``: every package
      in order, as a dict;
    - ``latest()``, ``getter(name)``, ``stats()``, ``fields``, ...: as in ``rtde_rs.Client``
      (they never wait);
    - ``await client.send(values)`` and the typed setters (``await
      client.set_standard_digital_output(3, True)``): awaited.

    Bulk numpy reads (``read``, ``drain``) are the threaded client's: they would take
    packages from under the pump.
    """

    # The threaded client's methods that wait or touch a socket: awaited here.
    _AWAITED = frozenset(
        {
            "send",
            "set_standard_digital_output",
            "set_configurable_digital_output",
            "set_tool_digital_output",
            "set_analog_output",
            "set_speed_slider",
            "set_int_register",
            "set_double_register",
            "set_bit_register",
        }
    )
    # The threaded client's in-order reads besides `recv`: they would take packages from
    # under the pump.
    _HIDDEN = frozenset({"read", "drain"})

    _WHAT = "client"

    def __init__(self, host, fields, frequency=None, **options):
        super().__init__(_rtde_rs.Client, host, list(fields), frequency, **options)
        self._pump = None

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in Client._HIDDEN:
            raise AttributeError(
                f"rtde_rs.aio.Client has no `{name}`: the pump takes the packages in order "
                f"(use `recv` or `async for`; `client.threaded.{name}` while nothing iterates this client)"
            )
        attribute = getattr(self._threaded(), name)
        if name not in Client._AWAITED:
            return attribute
        return _awaited(name, attribute)

    async def recv(self, timeout=None):
        """The next package in order as a dict, waiting up to ``timeout`` seconds (None:
        until one comes). Raises what ``rtde_rs.Client.recv`` raises (``RtdeTimeoutError``,
        ``StaleError``, ``ConnectionLostError``). Cancel-safe: a cancelled call loses no
        package."""
        client = self._threaded()
        if self._pump is None:
            self._pump = _Pump(client, asyncio.get_running_loop())
        try:
            item = await asyncio.wait_for(self._pump.next(), timeout)
        except asyncio.TimeoutError:
            raise RtdeTimeoutError(f"timed out after {timeout}s waiting for a data package") from None
        if item is None:
            # The pump has ended (the link is gone): the threaded client says why.
            return await _call(client.recv, _SLICE_S)
        if isinstance(item, Exception):
            raise item
        return item

    def __aiter__(self):
        return self

    async def __anext__(self):
        return await self.recv()

    async def close(self):
        """Stops the pump, closes the connection and joins the reader thread (in a thread).
        ``client.threaded`` is the ``rtde_rs.Client`` underneath: for ``read`` and
        ``drain`` when nothing iterates this one."""
        if self._pump is not None:
            self._pump.stop()
        await super().close()


class Robot(_Over):
    """``rtde_rs.Robot`` for asyncio: the same arguments, connected by ``async with``.

    ``await robot.move_j(q)`` (and ``move_l``, ``move_j_path``, ``move_l_path``) returns
    where the arm stopped; a task cancelled while it awaits a move stops the arm
    (``stop_j``) before the cancellation goes on. Every other command that talks to the
    robot (``stop_j``, ``speed_j``, ``servo_j``, ``set_tcp``, ...) is awaited; ``state()``,
    ``forward_kinematics`` and the properties answer at once.
    """

    _MOVES = frozenset({"move_j", "move_l", "move_j_path", "move_l_path"})
    # The threaded robot's methods that answer without a round trip to the robot.
    _AT_ONCE = frozenset({"state", "forward_kinematics", "kinematics", "tcp_offset", "is_open"})

    _WHAT = "robot's connection"

    def __init__(self, host, **options):
        # `open` connects and starts (or attaches to) the command program; `close` leaves
        # it to its watchdog.
        super().__init__(_rtde_rs.Robot, host, **options)

    def __getattr__(self, name):
        if name.startswith("_") or name == "close":
            raise AttributeError(name)
        robot = self._threaded()
        attribute = getattr(robot, name)
        if name in Robot._AT_ONCE or not callable(attribute):
            return attribute
        if name in Robot._MOVES:

            async def move(*args, **kwargs):
                if kwargs.pop("asynchronous", False):
                    raise TypeError("rtde_rs.aio moves take no `asynchronous`: wrap the await in a task")
                return await _move(robot, attribute, args, kwargs)

            move.__name__ = name
            move.__doc__ = attribute.__doc__
            return move
        return _awaited(name, attribute)


async def _move(robot, start, args, kwargs):
    """Starts a move and awaits its end; a cancellation stops the arm first."""
    started = _call(start, *args, asynchronous=True, **kwargs)
    try:
        handle = await asyncio.shield(started)
        return await _call(handle.wait)
    except asyncio.CancelledError:
        await _stop_after(robot, started)
        raise


async def _stop_after(robot, started):
    """After a cancellation: once the move's start is through, stops the arm if it moves.
    Runs to its end even if cancelled again (the stop is in its own thread)."""
    try:
        await asyncio.shield(started)
    except asyncio.CancelledError:
        pass
    except Exception:  # noqa: BLE001 - the move never started: nothing to stop
        return
    deceleration = _rtde_rs.MOTION_DEFAULTS["interrupt_deceleration"]
    stop = _call(robot.stop_j, deceleration)
    try:
        await asyncio.shield(stop)
    except asyncio.CancelledError:
        pass


class Dashboard(_Over):
    """``rtde_rs.Dashboard`` for asyncio: the same arguments, connected by ``async with``.

    Every command is awaited (``await dashboard.power_on()``, ``await
    dashboard.wait_for_robot_mode(RobotMode.IDLE, 30)``, ``await dashboard.execute("play")``)
    and returns or raises what the threaded one does. ``controller_version`` and
    ``is_connected()`` answer at once.
    """

    _AT_ONCE = frozenset({"controller_version", "is_connected"})

    _WHAT = "Dashboard connection"
    # Without `quit`.
    _CLOSE = "disconnect"

    def __init__(self, host, port=29999, **options):
        super().__init__(_rtde_rs.Dashboard, host, port, **options)

    def __getattr__(self, name):
        if name.startswith("_") or name == "close":
            raise AttributeError(name)
        attribute = getattr(self._threaded(), name)
        if name in Dashboard._AT_ONCE or not callable(attribute):
            return attribute
        return _awaited(name, attribute)
