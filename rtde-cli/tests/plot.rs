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

/// A text of an SVG: where it starts, its font size, and what it says.
#[derive(Debug)]
struct SvgText {
    x: f64,
    y: f64,
    anchor: String,
    size: f64,
    text: String,
}

/// The value of attribute `name` in the tag `tag`.
fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[start..].split('"').next()
}

/// Every `<text>` of an SVG that plotters wrote.
fn texts(svg: &str) -> Vec<SvgText> {
    svg.split("<text")
        .skip(1)
        .map(|t| {
            let (tag, rest) = t.split_once('>').unwrap();
            let number = |name| attribute(tag, name).unwrap().parse::<f64>().unwrap();
            SvgText {
                x: number("x"),
                y: number("y"),
                // SVG's default: a text starts at x.
                anchor: attribute(tag, "text-anchor").unwrap_or("start").to_owned(),
                size: number("font-size"),
                text: rest.split("</text>").next().unwrap().trim().to_owned(),
            }
        })
        .collect()
}

/// The points of every data line of an SVG (its polylines two pixels wide), in drawing
/// order.
fn data_lines(svg: &str) -> Vec<Vec<(f64, f64)>> {
    svg.split("<polyline")
        .skip(1)
        .filter(|t| attribute(t, "stroke-width") == Some("2"))
        .map(|t| {
            attribute(t, "points")
                .unwrap()
                .split_whitespace()
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

/// A CSV as a controller could send it: a TCP pose whose rotation turns through π about
/// (1, 1, 0)/√2 (reported with |r| <= π, so rx and ry flip from about +2.2 to -2.2), the
/// robot powering on, and the digital inputs.
fn turning(name: &str) -> std::path::PathBuf {
    use std::f64::consts::{PI, TAU};
    use std::fmt::Write;
    let dir = scratch(name);
    let mut csv = String::from(
        "timestamp,actual_TCP_pose_0,actual_TCP_pose_1,actual_TCP_pose_2,actual_TCP_pose_3,\
         actual_TCP_pose_4,actual_TCP_pose_5,robot_mode,actual_digital_input_bits\n",
    );
    for i in 0..200u32 {
        let angle = 2.6 + 0.006 * f64::from(i);
        let reported = (angle + PI).rem_euclid(TAU) - PI;
        let r = reported / 2f64.sqrt();
        let mode = match i {
            0..50 => 3,
            50..120 => 5,
            _ => 7,
        };
        let t = 0.008 * f64::from(i);
        writeln!(csv, "{t},0.1,0.2,0.3,{r},{r},0,{mode},{}", i % 4).unwrap();
    }
    std::fs::write(dir.join("turn.csv"), csv).unwrap();
    dir
}

#[test]
fn legends_show_whole_labels() {
    let dir = turning("plot-legend");
    let label = "actual_digital_input_bits";
    // Wide enough for the label on one line: it ends inside the picture. DejaVu Sans's
    // lowercase letters and `_` average under 0.55 em (this label: 12.1 em, 25 characters).
    run_in(&dir, &["plot", "turn.csv", "-o", "wide.svg"]).ok();
    let svg = std::fs::read_to_string(dir.join("wide.svg")).unwrap();
    let legend: Vec<SvgText> = texts(&svg)
        .into_iter()
        .filter(|t| t.anchor == "start")
        .collect();
    let text = legend.iter().find(|t| t.text == label).unwrap();
    let end = text.x + 0.55 * text.size * label.len() as f64;
    assert!(end <= 1200.0, "{label} ends at {end}: {text:?}");

    // Too narrow for it: wrapped, every piece inside the picture, nothing lost.
    run_in(
        &dir,
        &[
            "plot",
            "turn.csv",
            "-f",
            label,
            "-o",
            "narrow.svg",
            "--size",
            "400x300",
        ],
    )
    .ok();
    let svg = std::fs::read_to_string(dir.join("narrow.svg")).unwrap();
    let legend: Vec<SvgText> = texts(&svg)
        .into_iter()
        .filter(|t| t.anchor == "start")
        .collect();
    assert!(legend.len() > 1, "{legend:?}");
    assert_eq!(
        legend.iter().map(|t| t.text.as_str()).collect::<String>(),
        label
    );
    for t in &legend {
        let end = t.x + 0.55 * t.size * t.text.len() as f64;
        assert!(end <= 400.0, "{t:?} ends at {end}");
    }
}

#[test]
fn codes_are_drawn_as_named_steps() {
    let dir = turning("plot-codes");
    run_in(
        &dir,
        &["plot", "turn.csv", "-f", "robot_mode", "-o", "mode.svg"],
    )
    .ok();
    let svg = std::fs::read_to_string(dir.join("mode.svg")).unwrap();
    // The y axis is named by the codes, right-aligned against it, and has no numbers.
    let axis: Vec<SvgText> = texts(&svg)
        .into_iter()
        .filter(|t| t.anchor == "end")
        .collect();
    let names: Vec<&str> = axis.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(
        names,
        [
            "ROBOT_MODE_POWER_OFF",
            "ROBOT_MODE_IDLE",
            "ROBOT_MODE_RUNNING"
        ]
    );
    // Steps: each part of the line is level or upright, at three levels, one per name,
    // each level beside its name.
    let lines = data_lines(&svg);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let line = &lines[0];
    assert!(
        line.windows(2)
            .all(|w| w[0].0 == w[1].0 || w[0].1 == w[1].1),
        "not steps: {line:?}"
    );
    let mut levels: Vec<f64> = line.iter().map(|p| p.1).collect();
    levels.dedup();
    assert_eq!(levels.len(), 3, "{levels:?}");
    for (level, name) in levels.iter().zip(&axis) {
        // A text's y is its top; its middle is within a line of the level.
        assert!(
            (name.y + name.size / 2.0 - level).abs() < name.size,
            "{name:?} {level}"
        );
    }
}

#[test]
fn rotation_vectors_are_unwrapped_across_a_sign_flip() {
    let dir = turning("plot-unwrap");
    run_in(
        &dir,
        &[
            "plot",
            "turn.csv",
            "-f",
            "actual_TCP_pose",
            "-o",
            "pose.svg",
            "--size",
            "1200x800",
        ],
    )
    .ok();
    let svg = std::fs::read_to_string(dir.join("pose.svg")).unwrap();
    assert!(
        texts(&svg)
            .iter()
            .any(|t| t.text.starts_with("actual_TCP_pose rx, ry, rz (unwrapped")),
        "the plot does not say the rotation was unwrapped"
    );
    // x, y, z, then rx, ry, rz: rx and ry rise through the flip without a jump.
    let lines = data_lines(&svg);
    assert_eq!(lines.len(), 6, "{lines:?}");
    for line in &lines[3..5] {
        let jump = line
            .windows(2)
            .map(|w| (w[1].1 - w[0].1).abs())
            .fold(0.0, f64::max);
        assert!(jump < 10.0, "a jump of {jump} px");
        let (first, last) = (line[0].1, line[line.len() - 1].1);
        assert!(first - last > 50.0, "does not rise: {first} to {last}");
    }
}

#[test]
fn plots_an_mcap_recording_and_a_raw_capture_and_names_what_it_reads() {
    let sim = Sim::builder().unpaced().start().unwrap();
    let dir = scratch("plot-mcap");
    let addr = sim.addr().to_string();
    let fields = "actual_q,actual_TCP_pose";
    let args = [
        "record",
        "--robot",
        &addr,
        "--fields",
        fields,
        "--samples",
        "200",
    ];
    run_in(
        &dir,
        &[&args[..], &["-o", "run.mcap", "--raw", "run.rtde"]].concat(),
    )
    .ok();
    let stderr = run_in(
        &dir,
        &[
            "plot",
            "run.mcap",
            "-f",
            "actual_q,/tcp_pose.pose.position.z",
            "-o",
            "run.svg",
        ],
    )
    .ok()
    .to_owned();
    assert!(
        stderr.contains("plotted actual_q, /tcp_pose.pose.position.z of `run.mcap`"),
        "{stderr}"
    );
    let svg = std::fs::read_to_string(dir.join("run.svg")).unwrap();
    assert!(svg.contains("actual_q — Actual joint positions"));
    let stderr = run_in(&dir, &["plot", "run.rtde", "-f", "actual_TCP_pose"])
        .ok()
        .to_owned();
    assert!(
        stderr.contains("plotted actual_TCP_pose of `run.rtde`"),
        "{stderr}"
    );

    std::fs::write(dir.join("run.txt"), "timestamp\n0\n").unwrap();
    let run = run_in(&dir, &["plot", "run.txt"]);
    assert_eq!(
        run.one_line_error(),
        "error: `run.txt`: rtde plot cannot read a .txt file; it reads a CSV from `rtde record` \
         (.csv), an MCAP recording (.mcap) or a raw capture (.rtde)"
    );
}
