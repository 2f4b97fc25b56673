//! Faults written as text, for the command lines of `rtde-sim` and `rtde sim --fault`: one
//! grammar, parsed here once, so a client in any language can be tested against every
//! fault.
//!
//! ```text
//! skip-every=N                    leave out every Nth output package
//! skip-ticks=T[,T…]               no output package for these control-loop ticks
//! delay-replies=DURATION          every reply to a control request comes DURATION late
//! slow-boot=WINDOW,DURATION       for WINDOW after start, replies come DURATION late
//! slow-close=DURATION             a client's close goes unnoticed (inputs held) for DURATION
//! text=TRIGGER,LEVEL,MESSAGE      a text message just before the package TRIGGER names
//! close-mid-frame=TRIGGER         half the package, then the connection closes
//! malformed=TRIGGER,KIND          the package sent broken
//! data-before-start-reply         the first output package before the START reply
//! data-before-pause-reply         one more output package between PAUSE and its reply
//! build=N                         build number N in the version reply (5.21.0.N)
//! dashboard-delay=DURATION        every Dashboard reply comes DURATION late
//! dashboard-refuse=COMMAND        the Dashboard answers COMMAND with `Failed to execute`
//! runtime-exception=LINE[,COLUMN] a program sent to a script port fails there
//! compile-error=LINE[,COLUMN]     a program sent to a script port does not compile there
//! protective-stop-after=DURATION  a protective stop DURATION after a program starts
//!
//! TRIGGER   reply:TYPE (the reply to the first request of TYPE: START, PAUSE,
//!           SETUP_OUTPUTS, SETUP_INPUTS, GET_URCONTROL_VERSION, REQUEST_PROTOCOL_VERSION)
//!           or data:N (the Nth output package, from 0)
//! LEVEL     exception, error, warning or info
//! KIND      size-too-small, size-too-large, unknown-type, wrong-recipe-id, bytes:HEX
//! DURATION  a number with ms or s: 250ms, 2s
//! ```
//!
//! ```
//! use std::time::Duration;
//! use rtde_sim::{Fault, Trigger};
//!
//! let fault: Fault = "slow-boot=2s,300ms".parse().unwrap();
//! assert_eq!(fault, Fault::SlowBoot { window: Duration::from_secs(2), delay: Duration::from_millis(300) });
//! let fault: Fault = "close-mid-frame=data:10".parse().unwrap();
//! assert_eq!(fault, Fault::CloseMidFrame(Trigger::DataPackage(10)));
//! assert!("skip-every=x".parse::<Fault>().is_err());
//! ```

use std::str::FromStr;
use std::time::Duration;

use rtde_core::protocol::{MessageLevel, package_type};

use crate::fault::{Fault, Malformation, Trigger};

/// The source of the text messages a `text=` fault sends.
const TEXT_SOURCE: &str = "Controller";

impl FromStr for Fault {
    type Err = String;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let (name, arg) = match spec.split_once('=') {
            Some((name, arg)) => (name, Some(arg)),
            None => (spec, None),
        };
        let needs = |what: &str| {
            arg.ok_or_else(|| format!("fault `{name}` needs a value: `{name}={what}`"))
        };
        let fault = match name {
            "skip-every" => Fault::SkipEvery(number(needs("N")?)?),
            "skip-ticks" => Fault::SkipTicks(
                needs("T[,T…]")?
                    .split(',')
                    .map(number)
                    .collect::<Result<_, _>>()?,
            ),
            "delay-replies" => Fault::DelayReplies(duration(needs("DURATION")?)?),
            "slow-close" => Fault::SlowClose(duration(needs("DURATION")?)?),
            "slow-boot" => {
                let (window, delay) = pair(needs("WINDOW,DURATION")?, "WINDOW,DURATION")?;
                Fault::SlowBoot {
                    window: duration(window)?,
                    delay: duration(delay)?,
                }
            }
            "text" => {
                let mut parts = needs("TRIGGER,LEVEL,MESSAGE")?.splitn(3, ',');
                let (Some(at), Some(level), Some(message)) =
                    (parts.next(), parts.next(), parts.next())
                else {
                    return Err("fault `text` needs `text=TRIGGER,LEVEL,MESSAGE`".into());
                };
                Fault::TextMessage {
                    at: trigger(at)?,
                    level: message_level(level)?,
                    message: message.to_owned(),
                    source: TEXT_SOURCE.to_owned(),
                }
            }
            "close-mid-frame" => Fault::CloseMidFrame(trigger(needs("TRIGGER")?)?),
            "malformed" => {
                let (at, kind) = pair(needs("TRIGGER,KIND")?, "TRIGGER,KIND")?;
                Fault::Malformed {
                    at: trigger(at)?,
                    kind: malformation(kind)?,
                }
            }
            "data-before-start-reply" => Fault::DataBeforeStartReply,
            "data-before-pause-reply" => Fault::DataBeforePauseReply,
            "build" => Fault::BuildNumber(number(needs("N")?)?),
            "dashboard-delay" => Fault::DashboardDelay(duration(needs("DURATION")?)?),
            "dashboard-refuse" => Fault::DashboardRefuse(needs("COMMAND")?.trim().to_owned()),
            "runtime-exception" | "compile-error" => {
                let arg = needs("LINE[,COLUMN]")?;
                let (line, column) = arg.split_once(',').unwrap_or((arg, "1"));
                let (line, column) = (number(line)?, number(column)?);
                if name == "compile-error" {
                    Fault::CompileError { line, column }
                } else {
                    Fault::RuntimeException { line, column }
                }
            }
            "protective-stop-after" => Fault::ProtectiveStopAfter(duration(needs("DURATION")?)?),
            "protective-stop" => Fault::ProtectiveStopMidMove(duration(needs("DURATION")?)?),
            "runtime-stop" => Fault::RuntimeStopMidMove(duration(needs("DURATION")?)?),
            other => {
                return Err(format!(
                    "unknown fault `{other}`: use skip-every, skip-ticks, delay-replies, \
                     slow-boot, slow-close, text, close-mid-frame, malformed, data-before-start-reply, \
                     data-before-pause-reply, build, dashboard-delay, dashboard-refuse, \
                     runtime-exception, compile-error, protective-stop-after, protective-stop \
                     or runtime-stop"
                ));
            }
        };
        match (arg, takes_no_value(&fault)) {
            (Some(_), true) => Err(format!("fault `{name}` takes no value")),
            _ => Ok(fault),
        }
    }
}

fn takes_no_value(fault: &Fault) -> bool {
    matches!(
        fault,
        Fault::DataBeforeStartReply | Fault::DataBeforePauseReply
    )
}

fn pair<'a>(arg: &'a str, shape: &str) -> Result<(&'a str, &'a str), String> {
    arg.split_once(',')
        .ok_or_else(|| format!("`{arg}` is not `{shape}`"))
}

fn number<T: FromStr>(text: &str) -> Result<T, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number in range"))
}

fn duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (digits, scale) = if let Some(ms) = text.strip_suffix("ms") {
        (ms, 1)
    } else if let Some(s) = text.strip_suffix('s') {
        (s, 1000)
    } else {
        return Err(format!("`{text}` is no duration: write 250ms or 2s"));
    };
    let n: u64 = number(digits)?;
    Ok(Duration::from_millis(n.saturating_mul(scale)))
}

fn trigger(text: &str) -> Result<Trigger, String> {
    let text = text.trim();
    if let Some(n) = text.strip_prefix("data:") {
        return Ok(Trigger::DataPackage(number(n)?));
    }
    let Some(name) = text.strip_prefix("reply:") else {
        return Err(format!(
            "`{text}` is no trigger: write reply:START (a package type) or data:N"
        ));
    };
    package_type::ALL
        .into_iter()
        .find(|&kind| package_type::name(kind).eq_ignore_ascii_case(name))
        .map(Trigger::Reply)
        .ok_or_else(|| format!("`{name}` is no RTDE package type"))
}

fn message_level(text: &str) -> Result<MessageLevel, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "exception" => Ok(MessageLevel::Exception),
        "error" => Ok(MessageLevel::Error),
        "warning" => Ok(MessageLevel::Warning),
        "info" => Ok(MessageLevel::Info),
        other => Err(format!(
            "`{other}` is no message level: use exception, error, warning or info"
        )),
    }
}

fn malformation(text: &str) -> Result<Malformation, String> {
    let text = text.trim();
    if let Some(hex) = text.strip_prefix("bytes:") {
        if hex.len() % 2 != 0 {
            return Err(format!("`{hex}` is not whole bytes of hex"));
        }
        return (0..hex.len())
            .step_by(2)
            .map(|i| {
                hex.get(i..i + 2)
                    .and_then(|b| u8::from_str_radix(b, 16).ok())
                    .ok_or_else(|| format!("`{hex}` is not hex"))
            })
            .collect::<Result<Vec<u8>, String>>()
            .map(Malformation::Bytes);
    }
    match text {
        "size-too-small" => Ok(Malformation::SizeTooSmall),
        "size-too-large" => Ok(Malformation::SizeTooLarge),
        "unknown-type" => Ok(Malformation::UnknownPackageType),
        "wrong-recipe-id" => Ok(Malformation::WrongRecipeId),
        other => Err(format!(
            "`{other}` is no malformation: use size-too-small, size-too-large, unknown-type, \
             wrong-recipe-id or bytes:HEX"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fault_has_a_spelling() {
        let cases: Vec<(&str, Fault)> = vec![
            ("skip-every=10", Fault::SkipEvery(10)),
            ("skip-ticks=4,8", Fault::SkipTicks(vec![4, 8])),
            (
                "delay-replies=5ms",
                Fault::DelayReplies(Duration::from_millis(5)),
            ),
            (
                "slow-close=50ms",
                Fault::SlowClose(Duration::from_millis(50)),
            ),
            (
                "slow-boot=3s,200ms",
                Fault::SlowBoot {
                    window: Duration::from_secs(3),
                    delay: Duration::from_millis(200),
                },
            ),
            (
                "text=reply:GET_URCONTROL_VERSION,warning,Safety, not confirmed",
                Fault::TextMessage {
                    at: Trigger::Reply(package_type::GET_URCONTROL_VERSION),
                    level: MessageLevel::Warning,
                    message: "Safety, not confirmed".into(),
                    source: TEXT_SOURCE.into(),
                },
            ),
            (
                "close-mid-frame=reply:start",
                Fault::CloseMidFrame(Trigger::Reply(package_type::START)),
            ),
            (
                "malformed=data:3,bytes:dead",
                Fault::Malformed {
                    at: Trigger::DataPackage(3),
                    kind: Malformation::Bytes(vec![0xde, 0xad]),
                },
            ),
            (
                "malformed=data:1,wrong-recipe-id",
                Fault::Malformed {
                    at: Trigger::DataPackage(1),
                    kind: Malformation::WrongRecipeId,
                },
            ),
            ("data-before-start-reply", Fault::DataBeforeStartReply),
            ("data-before-pause-reply", Fault::DataBeforePauseReply),
            ("build=108318", Fault::BuildNumber(108_318)),
            (
                "dashboard-delay=2s",
                Fault::DashboardDelay(Duration::from_secs(2)),
            ),
            (
                "dashboard-refuse=brake release",
                Fault::DashboardRefuse("brake release".into()),
            ),
            (
                "runtime-exception=12",
                Fault::RuntimeException {
                    line: 12,
                    column: 1,
                },
            ),
            (
                "compile-error=3,9",
                Fault::CompileError { line: 3, column: 9 },
            ),
            (
                "protective-stop-after=1500ms",
                Fault::ProtectiveStopAfter(Duration::from_millis(1500)),
            ),
            (
                "protective-stop=300ms",
                Fault::ProtectiveStopMidMove(Duration::from_millis(300)),
            ),
            (
                "runtime-stop=1s",
                Fault::RuntimeStopMidMove(Duration::from_secs(1)),
            ),
        ];
        for (spec, fault) in cases {
            assert_eq!(spec.parse::<Fault>(), Ok(fault), "{spec}");
        }
    }

    #[test]
    fn mistakes_are_explained() {
        for (spec, says) in [
            ("nope", "unknown fault `nope`"),
            ("skip-every", "needs a value"),
            ("data-before-start-reply=1", "takes no value"),
            ("delay-replies=5", "no duration"),
            ("close-mid-frame=reply:NOPE", "no RTDE package type"),
            ("malformed=data:1,bytes:abc", "whole bytes"),
            ("text=data:1,loud,hi", "no message level"),
            ("build=-1", "whole number"),
            ("runtime-exception=x", "whole number"),
            ("dashboard-refuse", "needs a value"),
        ] {
            let err = spec.parse::<Fault>().unwrap_err();
            assert!(err.contains(says), "{spec}: {err}");
        }
    }
}
