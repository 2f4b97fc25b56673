//! One registry entry: an RTDE variable in one direction.

use crate::{ControllerVersion, Direction, Generation, Register, WireType};

/// An RTDE variable as the registry knows it, in one direction.
///
/// ```
/// use rtde_fields::{lookup, Direction, Generation, WireType};
///
/// let f = lookup(Direction::Output, "ft_raw_wrench").unwrap();
/// assert_eq!(f.wire_type(), WireType::Vector6d);
/// assert_eq!(f.since(Generation::Cb3), None); // e-Series and later only
/// assert!(f.is_available_on("5.9".parse().unwrap()));
/// assert!(!f.is_available_on("3.15.8".parse().unwrap()));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    pub(crate) name: &'static str,
    pub(crate) direction: Direction,
    pub(crate) wire_type: WireType,
    pub(crate) since: [Option<ControllerVersion>; 3],
    pub(crate) since_recorded: [bool; 3],
    pub(crate) unit: Option<&'static str>,
    pub(crate) frame: Option<&'static str>,
    pub(crate) unit_source: Option<&'static str>,
    pub(crate) description: &'static str,
    pub(crate) source: &'static str,
    pub(crate) register: Option<Register>,
    pub(crate) index: u16,
}

impl Field {
    /// The canonical, case-sensitive wire name, e.g. `actual_TCP_pose`.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The direction of this entry.
    #[must_use]
    pub const fn direction(&self) -> Direction {
        self.direction
    }

    /// The wire type.
    #[must_use]
    pub const fn wire_type(&self) -> WireType {
        self.wire_type
    }

    /// The first controller version of `generation` that has this field, or `None` where
    /// the field does not exist on that generation.
    ///
    /// For the few fields whose first version no source records (see
    /// [`Field::since_is_recorded`]), this is the generation's first RTDE version
    /// (3.4.0, 5.0.0, 10.7.0): the registry then lets the controller decide rather than
    /// refuse a field that may well exist.
    #[must_use]
    pub const fn since(&self, generation: Generation) -> Option<ControllerVersion> {
        self.since[generation.index()]
    }

    /// Whether [`Field::since`] for `generation` is a recorded version (from the RTDE guide
    /// or a named peer) rather than a stand-in; `true` where the field is absent.
    #[must_use]
    pub const fn since_is_recorded(&self, generation: Generation) -> bool {
        self.since_recorded[generation.index()]
    }

    /// Whether a controller running `version` has this field.
    ///
    /// A version whose major number is no known generation has no fields.
    #[must_use]
    pub fn is_available_on(&self, version: ControllerVersion) -> bool {
        matches!(self.availability_on(version), Availability::Available)
    }

    /// Whether a controller running `version` has this field, and if not, why.
    #[must_use]
    pub fn availability_on(&self, version: ControllerVersion) -> Availability {
        let Some(generation) = version.generation() else {
            return Availability::UnknownGeneration;
        };
        match self.since(generation) {
            Some(min) if version >= min => Availability::Available,
            Some(min) => Availability::Since(min),
            None => Availability::NotOnGeneration(generation),
        }
    }

    /// The unit of the value where Universal Robots documents one (`rad`, `m/s`, `V`, …;
    /// `m, rad` for a pose and `N, Nm` for a wrench: the linear half, then the angular
    /// half), with its source in [`Field::unit_source`].
    #[must_use]
    pub const fn unit(&self) -> Option<&'static str> {
        self.unit
    }

    /// The coordinate frame a pose, speed or wrench is expressed in, where Universal Robots
    /// documents it: `base`, `flange`, or a longer note (`actual_TCP_force`'s axes are the
    /// base's, its reference point the flange or the TCP by generation).
    ///
    /// ```
    /// use rtde_fields::{lookup, Direction};
    ///
    /// let pose = lookup(Direction::Output, "actual_TCP_pose").unwrap();
    /// assert_eq!((pose.unit(), pose.frame()), (Some("m, rad"), Some("base")));
    /// assert_eq!(lookup(Direction::Output, "tcp_offset").unwrap().frame(), Some("flange"));
    /// ```
    #[must_use]
    pub const fn frame(&self) -> Option<&'static str> {
        self.frame
    }

    /// Where [`Field::unit`] and [`Field::frame`] come from (the RTDE guide, the URScript
    /// manual function returning the same quantity, or a named peer); `None` when the
    /// field has neither.
    #[must_use]
    pub const fn unit_source(&self) -> Option<&'static str> {
        self.unit_source
    }

    /// A one-line description.
    #[must_use]
    pub const fn description(&self) -> &'static str {
        self.description
    }

    /// Where the version numbers of this entry come from (the RTDE guide unless it says otherwise).
    #[must_use]
    pub const fn source(&self) -> &'static str {
        self.source
    }

    /// The register this entry is, for the general-purpose register families.
    #[must_use]
    pub const fn register(&self) -> Option<Register> {
        self.register
    }

    /// Whether this is an input register read back as an output
    /// (`input_int_register_24` requested with SETUP_OUTPUTS).
    #[must_use]
    pub const fn is_read_back(&self) -> bool {
        matches!(
            (self.direction, self.register),
            (
                Direction::Output,
                Some(Register {
                    bank: crate::RegisterBank::Input,
                    ..
                })
            )
        )
    }
}

/// Whether a controller version has a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Availability {
    /// The controller has the field.
    Available,
    /// The controller's generation has the field from this version on; the controller is older.
    Since(ControllerVersion),
    /// The field does not exist on this generation at all.
    NotOnGeneration(Generation),
    /// The version's major number is no known generation (3, 5 or 10).
    UnknownGeneration,
}
