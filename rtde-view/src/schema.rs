//! The channels' schemas: JSON Schema documents, named as Foxglove's and rtde's types.
//!
//! Foxglove's own types (`foxglove.FrameTransforms`, `foxglove.PoseInFrame`) are
//! recognised by name: the 3D panel draws them whatever the encoding. Their schemas here
//! give the JSON shape Foxglove documents for them.

use rtde_core::fields::Field;

/// The schema name of the recipe's channel.
pub const OUTPUTS: &str = "rtde.Outputs";
/// The schema name of the gap channel.
pub const GAP: &str = "rtde.Gap";
/// The schema name of the link frames.
pub const FRAME_TRANSFORMS: &str = "foxglove.FrameTransforms";
/// The schema name of the TCP pose.
pub const POSE_IN_FRAME: &str = "foxglove.PoseInFrame";
/// The schema name of the modes.
pub const MODES: &str = "rtde.Modes";
/// The schema encoding of every channel.
pub const SCHEMA_ENCODING: &str = "jsonschema";
/// The message encoding of every channel.
pub const MESSAGE_ENCODING: &str = "json";

/// The schema of a recipe's messages: one property per field, by its RTDE name, a number,
/// an integer, a boolean or an array of 3 or 6 of them.
///
/// ```
/// use rtde_core::fields::{Direction, lookup};
///
/// let fields = [lookup(Direction::Output, "timestamp").unwrap(), lookup(Direction::Output, "robot_mode").unwrap()];
/// let schema = rtde_view::schema::outputs(&fields);
/// assert!(schema.contains("\"timestamp\":{\"type\":\"number\"}"));
/// assert!(schema.contains("\"robot_mode\":{\"type\":\"integer\"}"));
/// ```
#[must_use]
pub fn outputs(fields: &[&Field]) -> String {
    let mut s = String::from(
        "{\"title\":\"rtde.Outputs\",\"description\":\"One RTDE output data package: the recipe's fields by name\",\"type\":\"object\",\"properties\":{",
    );
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push('"');
        s.push_str(f.name());
        s.push_str("\":");
        s.push_str(&rtde_json::schema_type(f.wire_type()));
    }
    s.push_str("},\"required\":[");
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push('"');
        s.push_str(f.name());
        s.push('"');
    }
    s.push_str("]}");
    s
}

/// The schema of a gap: packages the controller skipped, or lost while reconnecting.
pub const GAP_SCHEMA: &str = r#"{"title":"rtde.Gap","description":"Packages missing between two consecutive packages of the recording","type":"object","properties":{"kind":{"type":"string","enum":["skipped","reconnection"],"description":"skipped: the controller sent none; reconnection: the link was down"},"packages":{"type":"integer","description":"how many packages are missing, counted from timestamp"},"after":{"type":"number","description":"the controller timestamp of the package before the gap"},"before":{"type":"number","description":"the controller timestamp of the package after the gap"}},"required":["kind","packages","after","before"]}"#;

const TIME: &str = r#"{"type":"object","properties":{"sec":{"type":"integer","minimum":0},"nsec":{"type":"integer","minimum":0,"maximum":999999999}}}"#;
const VECTOR3: &str = r#"{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"}}}"#;
const QUATERNION: &str = r#"{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"},"z":{"type":"number"},"w":{"type":"number"}}}"#;

/// The schema of `foxglove.FrameTransforms`.
#[must_use]
pub fn frame_transforms() -> String {
    format!(
        r#"{{"title":"foxglove.FrameTransforms","type":"object","properties":{{"transforms":{{"type":"array","items":{{"type":"object","properties":{{"timestamp":{TIME},"parent_frame_id":{{"type":"string"}},"child_frame_id":{{"type":"string"}},"translation":{VECTOR3},"rotation":{QUATERNION}}}}}}}}}}}"#
    )
}

/// The schema of `foxglove.PoseInFrame`.
#[must_use]
pub fn pose_in_frame() -> String {
    format!(
        r#"{{"title":"foxglove.PoseInFrame","type":"object","properties":{{"timestamp":{TIME},"frame_id":{{"type":"string"}},"pose":{{"type":"object","properties":{{"position":{VECTOR3},"orientation":{QUATERNION}}}}}}}}}"#
    )
}

/// The schema of the modes: UR's names of the codes (`ROBOT_MODE_RUNNING`).
pub const MODES_SCHEMA: &str = r#"{"title":"rtde.Modes","type":"object","properties":{"robot_mode":{"type":"string"},"safety_mode":{"type":"string"}}}"#;

#[cfg(test)]
mod tests {
    #[test]
    fn the_schemas_are_json() {
        for s in [
            super::frame_transforms(),
            super::pose_in_frame(),
            super::GAP_SCHEMA.to_owned(),
            super::MODES_SCHEMA.to_owned(),
        ] {
            let parsed: Result<serde_json::Value, _> = serde_json::from_str(&s);
            assert!(parsed.is_ok(), "{s}");
        }
    }
}
