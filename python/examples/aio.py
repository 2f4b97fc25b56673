"""rtde_rs under asyncio, on the built-in simulator: the Dashboard powers the arm on, one
task moves it while another streams its joints, and a move cut short by a timeout stops
the arm where it is.

    python python/examples/aio.py
"""

import asyncio

import rtde_rs
from rtde_rs import aio

HOME = [0.0, -1.57, 1.57, -1.57, -1.57, 0.0]
TARGET = [0.3, -1.4, 1.4, -1.6, -1.5, 0.2]


async def stream(client, seconds):
    """Every package for `seconds`, in order; returns how many came and the last joints."""
    count, last = 0, None
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    async for package in client:
        count, last = count + 1, package["actual_q"]
        if loop.time() >= end:
            return count, last


async def main():
    with rtde_rs.Sim(dashboard=True, script_ports=True, still=HOME) as sim:
        async with aio.Dashboard(sim.host, sim.dashboard_port) as dashboard:
            await dashboard.power_on()
            await dashboard.wait_for_robot_mode(rtde_rs.RobotMode.IDLE, 30)
            await dashboard.brake_release()
            await dashboard.wait_for_robot_mode(rtde_rs.RobotMode.RUNNING, 30)
            print("robot mode:", (await dashboard.robot_mode()).name)

        fields = ["timestamp", "actual_q"]
        async with aio.Robot(sim.host, port=sim.port, ports=sim.ports) as robot, \
                aio.Client(sim.host, fields, port=sim.port) as client:
            # The move and the stream run side by side on one thread.
            reached, (count, last) = await asyncio.gather(robot.move_j(TARGET), stream(client, 1.0))
            print(f"reached {[round(q, 3) for q in reached['q']]}; {count} packages streamed meanwhile")
            # A move cut short: cancelling the task that awaits it stops the arm.
            try:
                await asyncio.wait_for(robot.move_j(HOME, speed=0.2), timeout=0.5)
            except asyncio.TimeoutError:
                await asyncio.sleep(0.5)
                state = robot.state()
                print(f"the timeout stopped the arm at {[round(q, 3) for q in state['q']]}, "
                      f"moving: {state['program'] == 'moving'}")


if __name__ == "__main__":
    asyncio.run(main())
