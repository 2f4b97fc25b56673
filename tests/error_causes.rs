//! Each cause is said once: every error of the rtde crates that has a cause returns it
//! from `source()` and leaves it out of its own message, so [`Report`] (what the `rtde`
//! command and the Python exceptions print) says it exactly once, and `{err}` says only
//! what failed.

use std::error::Error as StdError;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

use rtde_core::Report;

/// A cause whose words appear nowhere else.
const CAUSE: &str = "the cable was cut by a forklift";

fn cause() -> io::Error {
    io::Error::other(CAUSE)
}

fn addr() -> SocketAddr {
    "127.0.0.1:29999".parse().expect("an address")
}

/// Every error type of the workspace that carries a cause, one of each variant that does.
fn errors_with_a_cause() -> Vec<(&'static str, Box<dyn StdError>)> {
    use rtde_robot::dashboard::DashboardError;
    use rtde_robot::primary::PrimaryError;
    use rtde_robot::script::ScriptError;
    vec![
        (
            "rtde_core::Error::Resolve",
            Box::new(rtde_core::Error::Resolve { source: cause() }),
        ),
        (
            "rtde_core::Error::Connect",
            Box::new(rtde_core::Error::Connect {
                addr: "127.0.0.1:30004".into(),
                source: cause(),
            }),
        ),
        (
            "rtde_core::Error::Io",
            Box::new(rtde_core::Error::Io {
                source: cause(),
                mid_frame: true,
            }),
        ),
        (
            "DashboardError::Connect",
            Box::new(DashboardError::Connect {
                addr: "127.0.0.1:29999".into(),
                source: cause(),
            }),
        ),
        ("DashboardError::Io", Box::new(DashboardError::Io(cause()))),
        (
            "PrimaryError::Connect",
            Box::new(PrimaryError::Connect {
                addr: "127.0.0.1:30001".into(),
                source: cause(),
            }),
        ),
        (
            "PrimaryError::Io",
            Box::new(PrimaryError::Io {
                addr: addr(),
                source: cause(),
            }),
        ),
        (
            "ScriptError::Dashboard",
            Box::new(ScriptError::Dashboard(DashboardError::Io(cause()))),
        ),
        (
            "ScriptError::Connect",
            Box::new(ScriptError::Connect {
                port: "script port",
                addr: addr(),
                source: cause(),
            }),
        ),
        ("ScriptError::Io", Box::new(ScriptError::Io(cause()))),
        (
            "ScriptError::Rtde",
            Box::new(ScriptError::Rtde(rtde_core::Error::Io {
                source: cause(),
                mid_frame: false,
            })),
        ),
        (
            "MotionError::Script",
            Box::new(rtde_robot::motion::MotionError::Script(ScriptError::Io(
                cause(),
            ))),
        ),
        (
            "CsvError::Create",
            Box::new(rtde_record::csv::CsvError::Create {
                path: PathBuf::from("run.csv"),
                source: cause(),
            }),
        ),
        (
            "CsvError::Write",
            Box::new(rtde_record::csv::CsvError::Write {
                path: PathBuf::from("run.csv"),
                rows: 7,
                source: cause(),
            }),
        ),
        (
            "CsvError::Stream",
            Box::new(rtde_record::csv::CsvError::Stream {
                path: PathBuf::from("run.csv"),
                rows: 7,
                source: rtde_core::Error::Io {
                    source: cause(),
                    mid_frame: false,
                },
            }),
        ),
        (
            "rtde_sim::Error::Bind",
            Box::new(rtde_sim::Error::Bind {
                addr: addr(),
                source: cause(),
            }),
        ),
        (
            "rtde_sim::Error::Spawn",
            Box::new(rtde_sim::Error::Spawn(cause())),
        ),
        (
            "rtde_view::Error::Setup",
            Box::new(rtde_view::Error::Setup(rtde_core::Error::Io {
                source: cause(),
                mid_frame: false,
            })),
        ),
        (
            "rtde_view::Error::Bind",
            Box::new(rtde_view::Error::Bind {
                addr: addr(),
                source: cause(),
            }),
        ),
        (
            "rtde_view::Error::Stream",
            Box::new(rtde_view::Error::Stream {
                packages: 7,
                source: rtde_core::Error::Io {
                    source: cause(),
                    mid_frame: false,
                },
            }),
        ),
        (
            "rtde_bridge::Error::Start",
            Box::new(rtde_bridge::Error::Start(cause())),
        ),
        (
            "SubscriberError::Start",
            Box::new(rtde_bridge::SubscriberError::Start(cause())),
        ),
    ]
}

#[test]
fn each_cause_is_said_once() {
    let mut wrong = Vec::new();
    for (name, err) in errors_with_a_cause() {
        let report = Report(&*err).to_string();
        let times = report.matches(CAUSE).count();
        if times != 1 {
            wrong.push(format!(
                "{name}: the report says the cause {times} times: {report}"
            ));
        }
        match err.source() {
            None => wrong.push(format!("{name}: `source()` does not return the cause")),
            // The report leaves out a cause the message already ends with (for errors from
            // outside these crates), so the message itself is checked too.
            Some(cause) if err.to_string().contains(&cause.to_string()) => {
                wrong.push(format!("{name}: its message says its cause: {err}"));
            }
            Some(_) => {}
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_message_alone_says_what_failed_and_the_report_adds_why() {
    let err = rtde_core::Error::Connect {
        addr: "127.0.0.1:30004".into(),
        source: cause(),
    };
    let message = err.to_string();
    assert!(
        message.starts_with("could not connect to 127.0.0.1:30004"),
        "{message}"
    );
    assert!(!message.contains(CAUSE), "{message}");
    assert_eq!(Report(&err).to_string(), format!("{message}: {CAUSE}"));
}
