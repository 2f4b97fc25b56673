//! Data packages as the messages of each channel: JSON for the live view, protobuf for
//! files.

use rtde_core::Value;
use rtde_core::fields::Field;
use rtde_core::protocol::timing;
use rtde_core::rotation::Quaternion;
use rtde_json::{write_integer, write_number, write_value};
use rtde_kinematics::{Arm, BASE_FRAME, LINK_FRAMES};
use rtde_record::capture::Header;
use rtde_record::host_time::HostTime;

use crate::protobuf::foxglove::{self, Transform};
use crate::protobuf::messages;

/// Where each field of a recipe sits in its packages.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    fields: Vec<(&'static Field, usize)>,
    size: usize,
}

impl Layout {
    pub(crate) fn new(fields: &[&'static Field]) -> Layout {
        let mut at = 0;
        let fields = fields
            .iter()
            .map(|&f| {
                let here = at;
                at += f.wire_type().size();
                (f, here)
            })
            .collect();
        Layout { fields, size: at }
    }

    /// The size of one package's values.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Where the field of this name sits, if the recipe has it.
    pub(crate) fn offset(&self, name: &str) -> Option<usize> {
        self.fields
            .iter()
            .find(|(f, _)| f.name() == name)
            .map(|&(_, at)| at)
    }

    /// The controller's `timestamp` of a package, if the recipe has it.
    pub(crate) fn double_at(payload: &[u8], at: usize) -> Option<f64> {
        Some(f64::from_be_bytes(*payload.get(at..)?.first_chunk::<8>()?))
    }

    fn vector6_at(payload: &[u8], at: usize) -> Option<[f64; 6]> {
        let bytes = payload.get(at..at + 48)?;
        let mut v = [0.0; 6];
        for (x, b) in v.iter_mut().zip(bytes.chunks_exact(8)) {
            *x = f64::from_be_bytes(b.try_into().ok()?);
        }
        Some(v)
    }

    fn int32_at(payload: &[u8], at: usize) -> Option<i32> {
        Some(i32::from_be_bytes(*payload.get(at..)?.first_chunk::<4>()?))
    }

    /// `{"name":value,…}` for a package of the recipe, appended to `out`. The caller has
    /// checked the payload's size.
    pub(crate) fn outputs_json(&self, payload: &[u8], out: &mut String) {
        let mut value = Value::Bool(false);
        out.push('{');
        for (i, &(f, at)) in self.fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push('"');
            out.push_str(f.name());
            out.push_str("\":");
            if value.read_be(f.wire_type(), &payload[at..]) {
                write_value(out, &value);
            } else {
                out.push_str("null");
            }
        }
        out.push('}');
    }
}

/// Places each package in time, and finds the gaps between them: the part of a recording
/// and of the live view that follows the controller's clock.
#[derive(Debug, Clone)]
pub(crate) struct Timeline {
    timestamp_at: Option<usize>,
    loop_rate: f64,
    ticks_per_package: u64,
    mapping: Option<HostTime>,
    last: Option<f64>,
    reconnected: bool,
}

/// A package placed in time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placed {
    /// Host time, ns since the epoch: the message's log time.
    pub(crate) log_time: u64,
    /// Controller time, ns: the message's publish time.
    pub(crate) publish_time: u64,
    /// The controller's `timestamp`, when the recipe has it.
    pub(crate) timestamp: Option<f64>,
    /// The packages missing before this one, if any are (or a reconnection came between).
    pub(crate) gap: Option<Gap>,
}

/// Packages missing between two consecutive packages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gap {
    /// Whether the link was down in between (else the controller skipped them).
    pub(crate) reconnection: bool,
    /// How many are missing.
    pub(crate) packages: u64,
    /// The `timestamp` before the gap.
    pub(crate) after: f64,
    /// The `timestamp` after it.
    pub(crate) before: f64,
}

impl Gap {
    /// `skipped` or `reconnection`.
    fn kind(&self) -> &'static str {
        if self.reconnection {
            "reconnection"
        } else {
            "skipped"
        }
    }

    /// The `rtde.Gap` message as protobuf, appended to `out`.
    pub(crate) fn protobuf(&self, out: &mut Vec<u8>) {
        messages::encode_gap(self.kind(), self.packages, self.after, self.before, out);
    }

    /// The `rtde.Gap` message as JSON.
    pub(crate) fn json(&self, out: &mut String) {
        out.push_str("{\"kind\":\"");
        out.push_str(self.kind());
        out.push_str("\",\"packages\":");
        write_integer(out, self.packages);
        out.push_str(",\"after\":");
        write_number(out, self.after);
        out.push_str(",\"before\":");
        write_number(out, self.before);
        out.push('}');
    }
}

impl Timeline {
    pub(crate) fn new(header: &Header, layout: &Layout) -> Timeline {
        let loop_rate = header
            .controller
            .generation()
            .map_or(500.0, |g| g.max_frequency());
        Timeline {
            timestamp_at: layout.offset("timestamp"),
            loop_rate,
            ticks_per_package: timing::ticks_per_package(loop_rate, header.frequency),
            mapping: None,
            last: None,
            reconnected: false,
        }
    }

    /// The controller's `timestamp` of a package, when the recipe has it and it is a
    /// number.
    pub(crate) fn timestamp(&self, payload: &[u8]) -> Option<f64> {
        self.timestamp_at
            .and_then(|at| Layout::double_at(payload, at))
            .filter(|t| t.is_finite())
    }

    /// The controller time between two packages, in seconds: the loop's period times the
    /// ticks per package.
    #[allow(clippy::cast_precision_loss)] // ticks per package are few
    pub(crate) fn period(&self) -> f64 {
        self.ticks_per_package as f64 / self.loop_rate
    }

    /// Places a package that arrived at host time `arrived_unix_us`: the first of each
    /// connection fixes the robot-to-host mapping, the others follow their `timestamp`.
    pub(crate) fn place(&mut self, payload: &[u8], arrived_unix_us: i64) -> Placed {
        let timestamp = self.timestamp(payload);
        let mapping = *self.mapping.get_or_insert(HostTime {
            t0_unix_us: arrived_unix_us,
            t0_timestamp: timestamp.unwrap_or(0.0),
        });
        let host_us = timestamp
            .and_then(|t| mapping.host_time_us(t))
            .unwrap_or(arrived_unix_us);
        let log_time = nanos(host_us);
        let publish_time = timestamp.map_or(log_time, seconds_to_nanos);
        let gap = match (timestamp, self.last) {
            (Some(now), Some(after)) => {
                let packages =
                    timing::skipped_between(after, now, self.loop_rate, self.ticks_per_package);
                (packages > 0 || self.reconnected).then_some(Gap {
                    reconnection: self.reconnected,
                    packages,
                    after,
                    before: now,
                })
            }
            _ => None,
        };
        if timestamp.is_some() {
            self.last = timestamp;
        }
        self.reconnected = false;
        Placed {
            log_time,
            publish_time,
            timestamp,
            gap,
        }
    }

    /// The link was lost and is back: a new mapping at the next package, and the gap
    /// before it is a reconnection.
    pub(crate) fn reconnected(&mut self) {
        self.reconnected = true;
        self.mapping = None;
    }
}

/// Microseconds since the epoch as MCAP's nanoseconds (0 before the epoch).
fn nanos(us: i64) -> u64 {
    u64::try_from(us).map_or(0, |us| us.saturating_mul(1000))
}

/// Controller seconds as nanoseconds.
fn seconds_to_nanos(t: f64) -> u64 {
    let ns = (t * 1e9).round();
    if (0.0..1.8e19).contains(&ns) {
        // In range (checked).
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let ns = ns as u64;
        ns
    } else {
        0
    }
}

/// Host time in nanoseconds as Foxglove's `{"sec":…,"nsec":…}`.
fn time(out: &mut String, ns: u64) {
    out.push_str("{\"sec\":");
    write_integer(out, ns / 1_000_000_000);
    out.push_str(",\"nsec\":");
    write_integer(out, ns % 1_000_000_000);
    out.push('}');
}

fn xyz(out: &mut String, keys: &[&str], values: &[f64]) {
    out.push('{');
    for (i, (k, v)) in keys.iter().zip(values).enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        out.push_str(k);
        out.push_str("\":");
        write_number(out, *v);
    }
    out.push('}');
}

/// The live view's channels computed from a package: the arm's frames, the TCP pose, the
/// modes. Each is there when the recipe has the fields it needs.
#[derive(Debug, Clone)]
pub(crate) struct Derived {
    arm: Arm,
    actual_q: Option<usize>,
    tcp_pose: Option<usize>,
    robot_mode: Option<usize>,
    safety_mode: Option<usize>,
}

impl Derived {
    pub(crate) fn new(layout: &Layout, arm: Arm) -> Derived {
        Derived {
            arm,
            actual_q: layout.offset("actual_q"),
            tcp_pose: layout.offset("actual_TCP_pose"),
            robot_mode: layout.offset("robot_mode"),
            safety_mode: layout.offset("safety_mode"),
        }
    }

    pub(crate) fn has_frames(&self) -> bool {
        self.actual_q.is_some()
    }

    pub(crate) fn has_pose(&self) -> bool {
        self.tcp_pose.is_some()
    }

    pub(crate) fn has_modes(&self) -> bool {
        self.robot_mode.is_some() || self.safety_mode.is_some()
    }

    /// Each link's frame in its parent's, from `actual_q`: `base` → `shoulder` → … →
    /// `flange`.
    pub(crate) fn transforms(&self, payload: &[u8]) -> Option<[Transform<'static>; 6]> {
        let q = self
            .actual_q
            .and_then(|at| Layout::vector6_at(payload, at))?;
        let frames = self.arm.link_frames(&q);
        Some(std::array::from_fn(|i| Transform {
            parent: if i == 0 {
                BASE_FRAME
            } else {
                LINK_FRAMES[i - 1]
            },
            child: LINK_FRAMES[i],
            translation: frames[i].translation,
            rotation: frames[i].rotation.to_xyzw(),
        }))
    }

    /// The TCP pose in the base frame, from `actual_TCP_pose` (position, rotation vector):
    /// its position and its orientation as a quaternion (`x, y, z, w`).
    pub(crate) fn pose(&self, payload: &[u8]) -> Option<([f64; 3], [f64; 4])> {
        let p = self
            .tcp_pose
            .and_then(|at| Layout::vector6_at(payload, at))?;
        Some((
            [p[0], p[1], p[2]],
            Quaternion::from_rotation_vector([p[3], p[4], p[5]]).to_xyzw(),
        ))
    }

    /// The robot and safety modes by their UR names, each when the recipe has it.
    pub(crate) fn modes(&self, payload: &[u8]) -> Option<[Option<String>; 2]> {
        if !self.has_modes() {
            return None;
        }
        let name = |field: &str, at: Option<usize>| {
            at.and_then(|at| Layout::int32_at(payload, at))
                .map(|code| mode_name(field, code))
        };
        Some([
            name("robot_mode", self.robot_mode),
            name("safety_mode", self.safety_mode),
        ])
    }

    /// `foxglove.FrameTransforms` as JSON.
    pub(crate) fn frames_json(&self, payload: &[u8], ns: u64, out: &mut String) -> bool {
        let Some(transforms) = self.transforms(payload) else {
            return false;
        };
        out.push_str("{\"transforms\":[");
        for (i, t) in transforms.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"timestamp\":");
            time(out, ns);
            out.push_str(",\"parent_frame_id\":\"");
            out.push_str(t.parent);
            out.push_str("\",\"child_frame_id\":\"");
            out.push_str(t.child);
            out.push_str("\",\"translation\":");
            xyz(out, &["x", "y", "z"], &t.translation);
            out.push_str(",\"rotation\":");
            xyz(out, &["x", "y", "z", "w"], &t.rotation);
            out.push('}');
        }
        out.push_str("]}");
        true
    }

    /// `foxglove.PoseInFrame` as JSON.
    pub(crate) fn pose_json(&self, payload: &[u8], ns: u64, out: &mut String) -> bool {
        let Some((position, orientation)) = self.pose(payload) else {
            return false;
        };
        out.push_str("{\"timestamp\":");
        time(out, ns);
        out.push_str(",\"frame_id\":\"");
        out.push_str(BASE_FRAME);
        out.push_str("\",\"pose\":{\"position\":");
        xyz(out, &["x", "y", "z"], &position);
        out.push_str(",\"orientation\":");
        xyz(out, &["x", "y", "z", "w"], &orientation);
        out.push_str("}}");
        true
    }

    /// `rtde.Modes` as JSON.
    pub(crate) fn modes_json(&self, payload: &[u8], out: &mut String) -> bool {
        let Some(modes) = self.modes(payload) else {
            return false;
        };
        out.push('{');
        let mut first = true;
        for (key, name) in ["robot_mode", "safety_mode"].iter().zip(&modes) {
            let Some(name) = name else { continue };
            if !first {
                out.push(',');
            }
            first = false;
            out.push('"');
            out.push_str(key);
            out.push_str("\":\"");
            out.push_str(name);
            out.push('"');
        }
        out.push('}');
        true
    }

    /// `foxglove.FrameTransforms` as protobuf, appended to `out`.
    pub(crate) fn frames_protobuf(&self, payload: &[u8], ns: u64, out: &mut Vec<u8>) -> bool {
        let Some(transforms) = self.transforms(payload) else {
            return false;
        };
        foxglove::encode_frame_transforms(&transforms, ns, out);
        true
    }

    /// `foxglove.PoseInFrame` as protobuf, appended to `out`.
    pub(crate) fn pose_protobuf(&self, payload: &[u8], ns: u64, out: &mut Vec<u8>) -> bool {
        let Some((position, orientation)) = self.pose(payload) else {
            return false;
        };
        foxglove::encode_pose_in_frame(BASE_FRAME, position, orientation, ns, out);
        true
    }

    /// `rtde.Modes` as protobuf, appended to `out`.
    pub(crate) fn modes_protobuf(&self, payload: &[u8], out: &mut Vec<u8>) -> bool {
        let Some([robot, safety]) = self.modes(payload) else {
            return false;
        };
        messages::encode_modes(robot.as_deref(), safety.as_deref(), out);
        true
    }
}

/// A mode code's UR name (`ROBOT_MODE_RUNNING`), or `UNKNOWN(code)`.
pub(crate) fn mode_name(field: &str, code: i32) -> String {
    rtde_core::code_names(field)
        .and_then(|names| names.iter().find(|(c, _)| *c == i64::from(code)))
        .map_or_else(|| format!("UNKNOWN({code})"), |(_, n)| (*n).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_named() {
        assert_eq!(mode_name("robot_mode", 7), "ROBOT_MODE_RUNNING");
        assert_eq!(mode_name("robot_mode", 99), "UNKNOWN(99)");
    }
}
