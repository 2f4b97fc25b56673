// The arm's link frames checked against the controller's own forward kinematics: the
// `foxglove.FrameTransforms` chained from `base` give the flange's pose, which must be
// the `actual_TCP_pose` the controller sent with the same package (a simulator's tool
// offset is zero, so its TCP is the flange). Written from the message shapes Foxglove
// documents, not from rtde's code.

"use strict";

/** How far, in metres and in rotation-matrix entries, a chained pose may be off. */
const TOLERANCE = 1e-9;

function matrixOfQuaternion({ x, y, z, w }) {
  return [
    [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
    [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
    [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
  ];
}

/** Rodrigues' formula: UR's rotation vector (axis times angle) as a matrix. */
function matrixOfRotationVector([rx, ry, rz]) {
  const angle = Math.hypot(rx, ry, rz);
  if (angle === 0) {
    return [
      [1, 0, 0],
      [0, 1, 0],
      [0, 0, 1],
    ];
  }
  const [x, y, z] = [rx / angle, ry / angle, rz / angle];
  const c = Math.cos(angle);
  const s = Math.sin(angle);
  const t = 1 - c;
  return [
    [t * x * x + c, t * x * y - s * z, t * x * z + s * y],
    [t * x * y + s * z, t * y * y + c, t * y * z - s * x],
    [t * x * z - s * y, t * y * z + s * x, t * z * z + c],
  ];
}

function multiply(a, b) {
  return a.map((row) => [0, 1, 2].map((j) => row[0] * b[0][j] + row[1] * b[1][j] + row[2] * b[2][j]));
}

function apply(m, [x, y, z]) {
  return m.map((row) => row[0] * x + row[1] * y + row[2] * z);
}

function largestDifference(a, b) {
  return Math.max(...a.flat().map((v, i) => Math.abs(v - b.flat()[i])));
}

/**
 * The pose the transforms chain to: `base` first, each frame the child of the one
 * before. Returns the last frame's name, its position and its rotation matrix.
 */
function chain(transforms) {
  let parent = "base";
  let rotation = matrixOfRotationVector([0, 0, 0]);
  let position = [0, 0, 0];
  for (const tf of transforms) {
    if (tf.parent_frame_id !== parent) {
      throw new Error(`frame ${tf.child_frame_id}: parent ${tf.parent_frame_id}, not ${parent}`);
    }
    const { x, y, z } = tf.translation;
    const moved = apply(rotation, [x, y, z]);
    position = position.map((p, i) => p + moved[i]);
    rotation = multiply(rotation, matrixOfQuaternion(tf.rotation));
    parent = tf.child_frame_id;
  }
  return { frame: parent, position, rotation };
}

/**
 * Checks one package's frames against its `actual_TCP_pose` (and its `/tcp_pose`, when
 * given); throws past TOLERANCE. Returns the largest differences seen.
 */
function checkFrames(transforms, actualTcpPose, tcpPose) {
  const flange = chain(transforms);
  if (flange.frame !== "flange" || transforms.length !== 6) {
    throw new Error(`${transforms.length} frames ending at ${flange.frame}, not 6 ending at flange`);
  }
  const position = largestDifference([flange.position], [actualTcpPose.slice(0, 3)]);
  const rotation = largestDifference(flange.rotation, matrixOfRotationVector(actualTcpPose.slice(3)));
  let pose = 0;
  if (tcpPose !== undefined) {
    const { x, y, z } = tcpPose.pose.position;
    if (tcpPose.frame_id !== "base") {
      throw new Error(`/tcp_pose in ${tcpPose.frame_id}, not base`);
    }
    pose = Math.max(
      largestDifference([[x, y, z]], [actualTcpPose.slice(0, 3)]),
      largestDifference(matrixOfQuaternion(tcpPose.pose.orientation), flange.rotation),
    );
  }
  if (position > TOLERANCE || rotation > TOLERANCE || pose > TOLERANCE) {
    throw new Error(
      `the frames chain to ${JSON.stringify(flange)}, the controller says ${JSON.stringify(actualTcpPose)}` +
        ` (off by ${position} m, ${rotation} in rotation, /tcp_pose by ${pose})`,
    );
  }
  return { position, rotation, pose };
}

module.exports = { checkFrames, TOLERANCE };
