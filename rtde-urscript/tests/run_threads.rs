//! Thread scheduling as the manual's "Thread scheduling" describes it: each tick, each
//! runnable thread runs until it yields (`sync()`, `sleep`, a blocking built-in, `join`)
//! or uses up its slice; critical sections run alone; a runaway program is stopped.

mod support;

use rtde_urscript::run::{Limits, State};
use support::{E_SERIES, Robot, failure, machine_at, run_on};

/// Runs a script for `ticks` ticks; the robot.
fn ticks(script: &str, ticks: u64) -> (Robot, State) {
    let mut robot = Robot::default();
    let mut machine = machine_at(script, E_SERIES);
    let state = run_on(&mut robot, &mut machine, ticks);
    (robot, state)
}

#[test]
fn two_threads_alternate_at_sync_once_per_tick() {
    let (robot, _) = ticks(
        "thread worker():\n  while True:\n    textmsg(\"w\")\n    sync()\n  end\nend\n\
         run worker()\nwhile True:\n  textmsg(\"m\")\n  sync()\nend\n",
        3,
    );
    assert_eq!(robot.log, ["m", "w", "m", "w", "m", "w"]);
    let mains: Vec<u64> = robot.calls.iter().step_by(2).map(|c| c.0).collect();
    assert_eq!(mains, [1, 2, 3], "one round per tick");
}

#[test]
fn sleep_of_10_ms_takes_5_ticks_at_2_ms() {
    let (robot, _) = ticks(
        "textmsg(\"a\")\nsleep(0.01)\ntextmsg(\"b\")\nsleep(0.002)\ntextmsg(\"c\")\n",
        20,
    );
    let at: Vec<u64> = robot.calls.iter().map(|c| c.0).collect();
    assert_eq!(at, [1, 6, 7]);
}

#[test]
fn a_blocking_move_holds_its_thread_until_the_host_says_it_is_done() {
    let mut robot = Robot {
        move_ticks: 4,
        ..Robot::default()
    };
    let mut machine = machine_at("movej([0, 0, 0, 0, 0, 0])\ntextmsg(\"after\")\n", E_SERIES);
    assert_eq!(run_on(&mut robot, &mut machine, 20), State::Ended);
    assert_eq!(robot.ticks_of("movej"), [1]);
    assert_eq!(robot.ticks_of("textmsg"), [5], "the move took ticks 2 to 5");
}

#[test]
fn other_threads_run_while_one_is_blocked_in_a_move() {
    let mut robot = Robot {
        move_ticks: 3,
        ..Robot::default()
    };
    let mut machine = machine_at(
        "thread mover():\n  movej([0, 0, 0, 0, 0, 0])\nend\nt = run mover()\n\
         i = 0\nwhile i < 3:\n  textmsg(i)\n  i = i + 1\n  sync()\nend\n",
        E_SERIES,
    );
    run_on(&mut robot, &mut machine, 10);
    assert_eq!(robot.ticks_of("textmsg"), [1, 2, 3]);
    assert_eq!(robot.ticks_of("movej"), [1]);
}

#[test]
fn join_waits_for_the_thread_to_end() {
    let (robot, state) = ticks(
        "thread t():\n  sleep(0.006)\n  textmsg(\"t done\")\nend\nh = run t()\njoin h\ntextmsg(\"joined\")\n",
        20,
    );
    assert_eq!(state, State::Ended);
    assert_eq!(robot.log, ["t done", "joined"]);
    // The program comes before the thread in each tick's order, so it sees the end on
    // the tick after the thread's last.
    assert_eq!(robot.ticks_of("textmsg"), [4, 5]);
}

#[test]
fn kill_stops_a_thread_and_cancels_its_move() {
    let mut robot = Robot {
        move_ticks: 100,
        ..Robot::default()
    };
    let mut machine = machine_at(
        "thread mover():\n  movej([0, 0, 0, 0, 0, 0])\n  textmsg(\"never\")\nend\n\
         h = run mover()\nsleep(0.01)\nkill h\ntextmsg(\"killed\")\nsleep(0.01)\n",
        E_SERIES,
    );
    assert_eq!(run_on(&mut robot, &mut machine, 50), State::Ended);
    assert_eq!(robot.log, ["killed"]);
    assert_eq!(robot.cancelled, [1], "the move's ticket");
}

#[test]
fn killed_and_ended_threads_leave_the_count() {
    let mut robot = Robot::default();
    let mut machine = machine_at(
        "thread spin():\n  while True:\n    sync()\n  end\nend\nh = run spin()\nsync()\nkill h\nsync()\n",
        E_SERIES,
    );
    machine.tick(&mut robot);
    assert_eq!(machine.threads(), 2);
    machine.tick(&mut robot);
    assert_eq!(machine.threads(), 1);
}

#[test]
fn a_critical_section_runs_without_other_threads_in_between() {
    let (robot, _) = ticks(
        "thread other():\n  while True:\n    textmsg(\"o\")\n    sync()\n  end\nend\nrun other()\n\
         sync()\nenter_critical\ntextmsg(\"c1\")\nsync()\ntextmsg(\"c2\")\nexit_critical\nsync()\ntextmsg(\"end\")\nsync()\n",
        5,
    );
    // Tick 1: main starts `other`, which logs; tick 2: main enters the section and
    // yields inside it, so `other` does not run; tick 3: main leaves it, `other` runs.
    assert_eq!(robot.log, ["o", "c1", "c2", "o", "end", "o"]);
}

#[test]
fn a_loop_that_never_yields_is_stopped_with_the_runtime_error() {
    let (line, column, message) = failure("x = 0\nwhile True:\n  x = x + 1\nend\n");
    assert!(
        (2..=3).contains(&line),
        "stopped inside the loop, not at {line}:{column}"
    );
    assert_eq!(
        message,
        "Runtime too much behind: `<program>` ran 250 ticks without sync(), sleep or a motion"
    );
}

#[test]
fn a_long_computation_spreads_over_ticks_within_the_limit() {
    let mut robot = Robot::default();
    let mut machine = machine_at(
        "i = 0\nwhile i < 30000:\n  i = i + 1\nend\ntextmsg(i)\n",
        E_SERIES,
    )
    .with_limits(Limits {
        ops_per_tick: 10_000,
        ..Limits::default()
    });
    assert_eq!(run_on(&mut robot, &mut machine, 100), State::Ended);
    assert_eq!(robot.log, ["30000"]);
    assert!(
        robot.ticks_of("textmsg")[0] > 10,
        "it took {:?} ticks",
        robot.ticks_of("textmsg")
    );
}

#[test]
fn the_main_program_ending_ends_its_threads() {
    let mut robot = Robot {
        move_ticks: 100,
        ..Robot::default()
    };
    let mut machine = machine_at(
        "thread mover():\n  movej([0, 0, 0, 0, 0, 0])\nend\nrun mover()\nsync()\n",
        E_SERIES,
    );
    assert_eq!(run_on(&mut robot, &mut machine, 10), State::Ended);
    assert_eq!(machine.threads(), 0);
    assert_eq!(robot.cancelled, [1]);
}

#[test]
fn threads_take_arguments_and_see_globals() {
    let (robot, _) = ticks(
        "total = 0\nthread add(n):\n  total = total + n\nend\na = run add(2)\nb = run add(40)\njoin a\njoin b\ntextmsg(total)\n",
        10,
    );
    assert_eq!(robot.log, ["42"]);
}

#[test]
fn too_many_threads_is_a_runtime_error() {
    let (_, _, message) = failure(
        "thread idle():\n  while True:\n    sync()\n  end\nend\nwhile True:\n  run idle()\nend\n",
    );
    assert_eq!(message, "more than 64 threads at once");
}
