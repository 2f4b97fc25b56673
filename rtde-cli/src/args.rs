//! Values the command line takes: durations, robot addresses, replay speeds.

use std::time::Duration;

use rtde_core::RTDE_PORT;

/// Parses `10s`, `1.5s`, `500ms`, `2m`, `1h` or a bare number of seconds.
pub(crate) fn duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let seconds_per = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(format!("`{text}` is no duration: use 10s, 500ms, 2m or 1h")),
    };
    let x: f64 = number
        .parse()
        .map_err(|_| format!("`{text}` is no duration: use 10s, 500ms, 2m or 1h"))?;
    Duration::try_from_secs_f64(x * seconds_per)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("`{text}` is no positive duration"))
}

/// A robot's address: `HOST`, `HOST:PORT`, `[IPv6]:PORT` or a bare IPv6 address; the port
/// is 30004 unless given.
pub(crate) fn robot(text: &str) -> Result<(String, u16), String> {
    robot_on(text, RTDE_PORT)
}

/// [`robot`] with another default port (the Dashboard server's 29999, say).
pub(crate) fn robot_on(text: &str, default_port: u16) -> Result<(String, u16), String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("the robot's address is empty".into());
    }
    if let Some(rest) = text.strip_prefix('[') {
        let Some((host, after)) = rest.split_once(']') else {
            return Err(format!(
                "`{text}`: an IPv6 address in brackets needs its `]`"
            ));
        };
        let port = match after.strip_prefix(':') {
            Some(p) => port(p, text)?,
            None if after.is_empty() => default_port,
            None => return Err(format!("`{text}`: expected `[ADDRESS]:PORT`")),
        };
        return Ok((host.to_owned(), port));
    }
    match text.rsplit_once(':') {
        // More than one colon and no brackets: a bare IPv6 address.
        Some((host, _)) if host.contains(':') => Ok((text.to_owned(), default_port)),
        Some((host, p)) => Ok((host.to_owned(), port(p, text)?)),
        None => Ok((text.to_owned(), default_port)),
    }
}

fn port(p: &str, whole: &str) -> Result<u16, String> {
    p.parse()
        .map_err(|_| format!("`{whole}`: `{p}` is no port number"))
}

/// How fast to replay: a factor of real time, or as fast as the client reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Speed {
    /// This many times real time.
    Factor(f64),
    /// As fast as the client reads.
    Max,
}

/// Parses `1`, `0.5`, `10`, `2x` or `max`.
pub(crate) fn speed(text: &str) -> Result<Speed, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("max") {
        return Ok(Speed::Max);
    }
    let x: f64 = t
        .strip_suffix(['x', 'X'])
        .unwrap_or(t)
        .parse()
        .map_err(|_| {
            format!("`{text}` is no speed: use a factor such as 0.5, 1 or 10, or `max`")
        })?;
    if !(1e-3..=1e3).contains(&x) {
        return Err(format!(
            "speed {x} is outside 0.001 to 1000; use `max` for as fast as the client reads"
        ));
    }
    Ok(Speed::Factor(x))
}

/// An arm model by name (`Arm::ALL`: ur5e, ur10, ur20, ...), any case.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(duration("3"), Ok(Duration::from_secs(3)));
        assert!(duration("0s").is_err());
        assert!(duration("s").is_err());
        assert!(duration("10 parsecs").is_err());
        assert!(duration("-1s").is_err());
    }

    #[test]
    fn robot_addresses() {
        let ok = |s: &str| robot(s).unwrap();
        assert_eq!(ok("192.168.1.10"), ("192.168.1.10".into(), 30004));
        assert_eq!(ok("ur5e.local:30005"), ("ur5e.local".into(), 30005));
        assert_eq!(ok("[::1]:4000"), ("::1".into(), 4000));
        assert_eq!(ok("[::1]"), ("::1".into(), 30004));
        assert_eq!(ok("fe80::1"), ("fe80::1".into(), 30004));
        assert!(robot("host:port").is_err());
        assert!(robot("[::1").is_err());
        assert!(robot("").is_err());
        assert_eq!(
            robot_on("10.0.0.2", 29999).unwrap(),
            ("10.0.0.2".into(), 29999)
        );
    }

    #[test]
    fn speeds() {
        assert_eq!(speed("1"), Ok(Speed::Factor(1.0)));
        assert_eq!(speed("2x"), Ok(Speed::Factor(2.0)));
        assert_eq!(speed("MAX"), Ok(Speed::Max));
        assert!(speed("0").is_err());
        assert!(speed("fast").is_err());
    }
}
