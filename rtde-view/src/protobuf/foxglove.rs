//! Foxglove's `FrameTransforms` and `PoseInFrame` as protobuf: the files, packages, message
//! and field names and numbers of Foxglove's published schemas
//! (`foxglove/schemas`, `schemas/proto/foxglove/*.proto`), so Foxglove's 3D panel, Rerun
//! and any reader with Foxglove's generated classes decode them as their own.
//!
//! ```text
//! google.protobuf.Timestamp { int64 seconds = 1; int32 nanos = 2; }
//! foxglove.Vector3          { double x = 1; double y = 2; double z = 3; }
//! foxglove.Quaternion       { double x = 1; double y = 2; double z = 3; double w = 4; }
//! foxglove.Pose             { Vector3 position = 1; Quaternion orientation = 2; }
//! foxglove.FrameTransform   { Timestamp timestamp = 1; string parent_frame_id = 2;
//!                             string child_frame_id = 3; Vector3 translation = 4;
//!                             Quaternion rotation = 5; }
//! foxglove.FrameTransforms  { repeated FrameTransform transforms = 1; }
//! foxglove.PoseInFrame      { Timestamp timestamp = 1; string frame_id = 2; Pose pose = 3; }
//! ```

use super::{
    FieldDef, FileDef, LENGTH, TYPE_DOUBLE, TYPE_INT32, TYPE_INT64, TYPE_STRING, bytes_field,
    descriptor_set, double_field, tag, varint, varint_field, varint_len,
};

/// The schema name of the link frames.
pub(crate) const FRAME_TRANSFORMS: &str = "foxglove.FrameTransforms";
/// The schema name of the TCP pose.
pub(crate) const POSE_IN_FRAME: &str = "foxglove.PoseInFrame";

const TIMESTAMP_FILE: FileDef<'static> = FileDef {
    name: "google/protobuf/timestamp.proto",
    package: "google.protobuf",
    dependencies: &[],
    messages: &[(
        "Timestamp",
        &[
            FieldDef::scalar("seconds", 1, TYPE_INT64),
            FieldDef::scalar("nanos", 2, TYPE_INT32),
        ],
    )],
};

const VECTOR3_FILE: FileDef<'static> = FileDef {
    name: "foxglove/Vector3.proto",
    package: "foxglove",
    dependencies: &[],
    messages: &[(
        "Vector3",
        &[
            FieldDef::scalar("x", 1, TYPE_DOUBLE),
            FieldDef::scalar("y", 2, TYPE_DOUBLE),
            FieldDef::scalar("z", 3, TYPE_DOUBLE),
        ],
    )],
};

const QUATERNION_FILE: FileDef<'static> = FileDef {
    name: "foxglove/Quaternion.proto",
    package: "foxglove",
    dependencies: &[],
    messages: &[(
        "Quaternion",
        &[
            FieldDef::scalar("x", 1, TYPE_DOUBLE),
            FieldDef::scalar("y", 2, TYPE_DOUBLE),
            FieldDef::scalar("z", 3, TYPE_DOUBLE),
            FieldDef::scalar("w", 4, TYPE_DOUBLE),
        ],
    )],
};

const FRAME_TRANSFORM_FILE: FileDef<'static> = FileDef {
    name: "foxglove/FrameTransform.proto",
    package: "foxglove",
    dependencies: &[
        "foxglove/Quaternion.proto",
        "foxglove/Vector3.proto",
        "google/protobuf/timestamp.proto",
    ],
    messages: &[(
        "FrameTransform",
        &[
            FieldDef::message("timestamp", 1, ".google.protobuf.Timestamp"),
            FieldDef::scalar("parent_frame_id", 2, TYPE_STRING),
            FieldDef::scalar("child_frame_id", 3, TYPE_STRING),
            FieldDef::message("translation", 4, ".foxglove.Vector3"),
            FieldDef::message("rotation", 5, ".foxglove.Quaternion"),
        ],
    )],
};

const FRAME_TRANSFORMS_FILE: FileDef<'static> = FileDef {
    name: "foxglove/FrameTransforms.proto",
    package: "foxglove",
    dependencies: &["foxglove/FrameTransform.proto"],
    messages: &[(
        "FrameTransforms",
        &[FieldDef::message("transforms", 1, ".foxglove.FrameTransform").repeated()],
    )],
};

const POSE_FILE: FileDef<'static> = FileDef {
    name: "foxglove/Pose.proto",
    package: "foxglove",
    dependencies: &["foxglove/Quaternion.proto", "foxglove/Vector3.proto"],
    messages: &[(
        "Pose",
        &[
            FieldDef::message("position", 1, ".foxglove.Vector3"),
            FieldDef::message("orientation", 2, ".foxglove.Quaternion"),
        ],
    )],
};

const POSE_IN_FRAME_FILE: FileDef<'static> = FileDef {
    name: "foxglove/PoseInFrame.proto",
    package: "foxglove",
    dependencies: &["foxglove/Pose.proto", "google/protobuf/timestamp.proto"],
    messages: &[(
        "PoseInFrame",
        &[
            FieldDef::message("timestamp", 1, ".google.protobuf.Timestamp"),
            FieldDef::scalar("frame_id", 2, TYPE_STRING),
            FieldDef::message("pose", 3, ".foxglove.Pose"),
        ],
    )],
};

/// The descriptor of `foxglove.FrameTransforms`, with the files it imports.
pub(crate) fn frame_transforms_descriptor() -> Vec<u8> {
    descriptor_set(&[
        TIMESTAMP_FILE,
        VECTOR3_FILE,
        QUATERNION_FILE,
        FRAME_TRANSFORM_FILE,
        FRAME_TRANSFORMS_FILE,
    ])
}

/// The descriptor of `foxglove.PoseInFrame`, with the files it imports.
pub(crate) fn pose_in_frame_descriptor() -> Vec<u8> {
    descriptor_set(&[
        TIMESTAMP_FILE,
        VECTOR3_FILE,
        QUATERNION_FILE,
        POSE_FILE,
        POSE_IN_FRAME_FILE,
    ])
}

/// One transform between two frames, as `foxglove.FrameTransform` carries it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Transform<'a> {
    pub(crate) parent: &'a str,
    pub(crate) child: &'a str,
    pub(crate) translation: [f64; 3],
    /// `x, y, z, w`.
    pub(crate) rotation: [f64; 4],
}

/// The size of a `Vector3` or `Quaternion` of `n` doubles, each field written.
fn doubles_len(n: u64) -> u64 {
    n * 9
}

fn doubles(out: &mut Vec<u8>, number: u64, values: &[f64]) {
    tag(out, number, LENGTH);
    varint(out, doubles_len(values.len() as u64));
    for (field, v) in (1..).zip(values) {
        double_field(out, field, *v);
    }
}

/// A time in nanoseconds as `google.protobuf.Timestamp`'s seconds and nanoseconds.
fn seconds_nanos(ns: u64) -> (u64, u64) {
    (ns / 1_000_000_000, ns % 1_000_000_000)
}

fn timestamp_len(ns: u64) -> u64 {
    let (s, n) = seconds_nanos(ns);
    2 + varint_len(s) + varint_len(n)
}

fn timestamp(out: &mut Vec<u8>, number: u64, ns: u64) {
    let (s, n) = seconds_nanos(ns);
    tag(out, number, LENGTH);
    varint(out, timestamp_len(ns));
    varint_field(out, 1, s);
    varint_field(out, 2, n);
}

/// A length-delimited field's full size: its tag, its length and its body.
fn field_len(number: u64, body: u64) -> u64 {
    varint_len(number << 3) + varint_len(body) + body
}

/// `foxglove.FrameTransforms` of `transforms`, all at host time `ns`, appended to `out`.
pub(crate) fn encode_frame_transforms(transforms: &[Transform<'_>], ns: u64, out: &mut Vec<u8>) {
    for t in transforms {
        let body = field_len(1, timestamp_len(ns))
            + field_len(2, t.parent.len() as u64)
            + field_len(3, t.child.len() as u64)
            + field_len(4, doubles_len(3))
            + field_len(5, doubles_len(4));
        tag(out, 1, LENGTH);
        varint(out, body);
        timestamp(out, 1, ns);
        bytes_field(out, 2, t.parent.as_bytes());
        bytes_field(out, 3, t.child.as_bytes());
        doubles(out, 4, &t.translation);
        doubles(out, 5, &t.rotation);
    }
}

/// `foxglove.PoseInFrame` at host time `ns` in `frame`: a position and an orientation
/// (`x, y, z, w`), appended to `out`.
pub(crate) fn encode_pose_in_frame(
    frame: &str,
    position: [f64; 3],
    orientation: [f64; 4],
    ns: u64,
    out: &mut Vec<u8>,
) {
    timestamp(out, 1, ns);
    bytes_field(out, 2, frame.as_bytes());
    tag(out, 3, LENGTH);
    varint(
        out,
        field_len(1, doubles_len(3)) + field_len(2, doubles_len(4)),
    );
    doubles(out, 1, &position);
    doubles(out, 2, &orientation);
}
