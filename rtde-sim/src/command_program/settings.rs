//! The modes and the configuration the program's commands set, which it reports and the
//! simulated arm, meeting nothing, does not feel.

/// The force mode the program was given, as `force_mode` takes it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForceMode {
    /// The task frame.
    pub frame: [f64; 6],
    /// The compliant axes (1) and the others (0).
    pub selection: [i32; 6],
    /// The wrench to apply on compliant axes.
    pub wrench: [f64; 6],
    /// The force mode type: 1, 2 or 3.
    pub kind: i32,
    /// Speed limits on compliant axes, deviation limits on the others.
    pub limits: [f64; 6],
}

/// What `set_payload`, `force_mode` and `teach_mode` set.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Settings {
    /// Mass (kg) and centre of gravity (m).
    pub(super) payload: (f64, [f64; 3]),
    pub(super) force: Option<ForceMode>,
    pub(super) teach: bool,
}
