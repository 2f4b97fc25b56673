//! `rtde plot`: a recorded CSV becomes a non-empty PNG and SVG; bad input is one line.

mod common;

use common::{files, run_in, scratch};
use rtde_sim::{Fault, Sim};

/// Records 500 packages of the simulator, with a gap, to `run.csv` in a new directory.
fn recorded(name: &str) -> std::path::PathBuf {
    let sim = Sim::builder()
        .unpaced()
        .fault(Fault::SkipTicks(vec![800, 804, 808]))
        .start()
        .unwrap();
    let dir = scratch(name);
    run_in(
        &dir,
        &[
            "record",
            "--robot",
            &sim.addr().to_string(),
            "--fields",
            "actual_q,actual_TCP_pose,robot_mode",
            "--samples",
            "500",
            "-o",
            "run.csv",
        ],
    )
    .ok();
    dir
}

#[test]
fn plots_png_and_svg() {
    let dir = recorded("plot");
    let stderr = run_in(&dir, &["plot", "run.csv", "--fields", "actual_q"])
        .ok()
        .to_owned();
    assert!(
        stderr.contains("plotted actual_q of `run.csv` to `run.png`"),
        "{stderr}"
    );
    let png = std::fs::read(dir.join("run.png")).unwrap();
    assert!(png.len() > 10_000, "{} bytes", png.len());
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

    run_in(
        &dir,
        &[
            "plot",
            "run.csv",
            "-f",
            "actual_q,actual_TCP_pose",
            "-o",
            "run.svg",
            "--size",
            "800x600",
        ],
    )
    .ok();
    let svg = std::fs::read_to_string(dir.join("run.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..100]);
    assert!(svg.contains(r#"width="800" height="600""#));
    for text in [
        "actual_q — Actual joint positions",
        "wrist 3",
        "rz",
        "1 gap (shaded)",
    ] {
        assert!(svg.contains(text), "no {text:?} in the SVG");
    }

    // Every field, by default.
    let stderr = run_in(&dir, &["plot", "run.csv", "-o", "all.png"])
        .ok()
        .to_owned();
    assert!(
        stderr.contains("plotted actual_q, actual_TCP_pose, robot_mode of `run.csv`"),
        "{stderr}"
    );
    assert_eq!(files(&dir), ["all.png", "run.csv", "run.png", "run.svg"]);
}

#[test]
fn bad_plots_are_one_line() {
    let dir = recorded("plot-errors");
    let run = run_in(&dir, &["plot", "run.csv", "--fields", "actual_qd"]);
    assert_eq!(
        run.one_line_error(),
        "error: `actual_qd` is not in `run.csv`, which has actual_q, actual_TCP_pose, robot_mode"
    );
    let run = run_in(&dir, &["plot", "run.csv", "-o", "run.jpg"]);
    assert_eq!(
        run.one_line_error(),
        "error: `run.jpg`: the picture's name must end in .png or .svg"
    );
    std::fs::write(dir.join("bad.csv"), "timestamp,x\n0.0,1\n0.1,oops\n").unwrap();
    let run = run_in(&dir, &["plot", "bad.csv"]);
    assert_eq!(
        run.one_line_error(),
        "error: `bad.csv`: line 3: `oops` in column `x` is not a number"
    );
    let run = run_in(&dir, &["plot", "run.csv", "-o", "missing/run.png"]);
    assert!(
        run.one_line_error()
            .starts_with("error: cannot create `missing/run.png.partial`"),
        "{}",
        run.stderr
    );
    assert_eq!(files(&dir), ["bad.csv", "run.csv"]);
}

#[test]
fn values_too_large_for_an_axis_are_plotted_without_hanging() {
    // Axes whose span (hi - lo) is no finite number: plotters never finished laying out
    // their ticks.
    let dir = scratch("plot-extremes");
    std::fs::write(dir.join("huge.csv"), "timestamp,x\n0,1e308\n1,-1e308\n").unwrap();
    std::fs::write(dir.join("inf.csv"), "timestamp,x\n0,1\ninf,2\n2,3\n").unwrap();
    for csv in ["huge.csv", "inf.csv"] {
        let stderr = run_in(&dir, &["plot", csv]).ok().to_owned();
        assert!(stderr.contains("plotted x of"), "{stderr}");
    }
}
