"""Drives a Dashboard server with ur_rtde's DashboardClient (SDU Robotics), a client nobody
here wrote.

Usage: python ur_rtde_dashboard.py HOST   (ur_rtde's DashboardClient uses port 29999)

Prints one record per line for tests/interop_ur_rtde.rs to check:
    <step> <what ur_rtde returned>
Exits non-zero on any failure (ur_rtde raises on a refused load, play or stop).
"""

import sys

import dashboard_client


def main():
    host = sys.argv[1]
    d = dashboard_client.DashboardClient(host)
    d.connect()
    print("connected", d.isConnected())
    d.powerOn()
    print("power_on", d.robotmode())
    d.brakeRelease()
    print("brake_release", d.robotmode())
    d.loadURP("/programs/interop.urp")
    print("loaded", d.getLoadedProgram())
    d.play()
    print("play", d.programState())
    print("running", d.running())
    print("robot_mode", d.robotmode())
    print("safety_status", d.safetystatus())
    d.stop()
    print("stop", d.programState())
    d.disconnect()


if __name__ == "__main__":
    main()
