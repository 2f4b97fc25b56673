//! rtde's own small messages as protobuf: the gaps and the modes, with the fields and names
//! of their JSON form in the live view.
//!
//! ```text
//! rtde.Gap   { string kind = 1; uint64 packages = 2; double after = 3; double before = 4; }
//! rtde.Modes { string robot_mode = 1; string safety_mode = 2; }
//! ```

use super::{
    FieldDef, FileDef, TYPE_DOUBLE, TYPE_STRING, TYPE_UINT64, bytes_field, descriptor_set,
    double_field, varint_field,
};

/// The schema name of the gaps.
pub(crate) const GAP: &str = "rtde.Gap";
/// The schema name of the modes.
pub(crate) const MODES: &str = "rtde.Modes";

/// The descriptor of `rtde.Gap`.
pub(crate) fn gap_descriptor() -> Vec<u8> {
    descriptor_set(&[FileDef {
        name: "rtde/gap.proto",
        package: "rtde",
        dependencies: &[],
        messages: &[(
            "Gap",
            &[
                FieldDef::scalar("kind", 1, TYPE_STRING),
                FieldDef::scalar("packages", 2, TYPE_UINT64),
                FieldDef::scalar("after", 3, TYPE_DOUBLE),
                FieldDef::scalar("before", 4, TYPE_DOUBLE),
            ],
        )],
    }])
}

/// The descriptor of `rtde.Modes`.
pub(crate) fn modes_descriptor() -> Vec<u8> {
    descriptor_set(&[FileDef {
        name: "rtde/modes.proto",
        package: "rtde",
        dependencies: &[],
        messages: &[(
            "Modes",
            &[
                FieldDef::scalar("robot_mode", 1, TYPE_STRING),
                FieldDef::scalar("safety_mode", 2, TYPE_STRING),
            ],
        )],
    }])
}

/// `rtde.Gap`, appended to `out`.
pub(crate) fn encode_gap(kind: &str, packages: u64, after: f64, before: f64, out: &mut Vec<u8>) {
    bytes_field(out, 1, kind.as_bytes());
    varint_field(out, 2, packages);
    double_field(out, 3, after);
    double_field(out, 4, before);
}

/// `rtde.Modes` of the modes the recipe has, appended to `out`.
pub(crate) fn encode_modes(robot_mode: Option<&str>, safety_mode: Option<&str>, out: &mut Vec<u8>) {
    for (number, name) in [(1, robot_mode), (2, safety_mode)] {
        if let Some(name) = name {
            bytes_field(out, number, name.as_bytes());
        }
    }
}
