//! The controller's ports: where each of its interfaces listens.

/// The Dashboard server's port.
pub const DASHBOARD_PORT: u16 = 29999;

/// How far above each script port its read-only copy is (30001 → 30011).
pub const READ_ONLY_OFFSET: u16 = 10;

/// The controller's script ports. Each takes URScript; they differ in what they send
/// back: the primary interface (30001) sends robot state about every 100 ms and every
/// robot message (version, runtime exceptions, safety mode changes), the secondary
/// (30002) the version message and robot state only, the real-time interface (30003) its
/// real-time package every control cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScriptPort {
    /// 30001.
    Primary,
    /// 30002: the usual port for programs.
    Secondary,
    /// 30003.
    RealTime,
}

impl ScriptPort {
    /// Every script port.
    pub const ALL: [ScriptPort; 3] = [
        ScriptPort::Primary,
        ScriptPort::Secondary,
        ScriptPort::RealTime,
    ];

    /// The port's number on a controller.
    #[must_use]
    pub const fn default_port(self) -> u16 {
        match self {
            ScriptPort::Primary => 30001,
            ScriptPort::Secondary => 30002,
            ScriptPort::RealTime => 30003,
        }
    }

    /// Whether the port sends robot messages beyond the version message (runtime
    /// exceptions, safety mode changes, key messages): the primary interface only.
    #[must_use]
    pub const fn sends_messages(self) -> bool {
        matches!(self, ScriptPort::Primary)
    }

    /// Whether the port starts with the version message: the primary and the secondary
    /// interface.
    #[must_use]
    pub const fn sends_version(self) -> bool {
        matches!(self, ScriptPort::Primary | ScriptPort::Secondary)
    }

    /// The number of the port's read-only copy on a controller: 30011, 30012, 30013. It
    /// sends what the port sends and takes no programs.
    #[must_use]
    pub const fn read_only_port(self) -> u16 {
        self.default_port() + READ_ONLY_OFFSET
    }

    /// The read-only copy's name for messages.
    #[must_use]
    pub const fn read_only_name(self) -> &'static str {
        match self {
            ScriptPort::Primary => "primary interface, read-only (30011)",
            ScriptPort::Secondary => "secondary interface, read-only (30012)",
            ScriptPort::RealTime => "real-time interface, read-only (30013)",
        }
    }

    /// The port's name for messages.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            ScriptPort::Primary => "primary interface (30001)",
            ScriptPort::Secondary => "secondary interface (30002)",
            ScriptPort::RealTime => "real-time interface (30003)",
        }
    }
}

/// The ports a rtde-robot's `ScriptSender` uses; a controller's by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ports {
    /// The Dashboard server (29999).
    pub dashboard: u16,
    /// The primary interface (30001), read for the program's messages.
    pub primary: u16,
    /// The secondary interface (30002).
    pub secondary: u16,
    /// The real-time interface (30003).
    pub realtime: u16,
    /// RTDE (30004), read for the runtime state.
    pub rtde: u16,
}

impl Default for Ports {
    fn default() -> Self {
        Ports {
            dashboard: DASHBOARD_PORT,
            primary: ScriptPort::Primary.default_port(),
            secondary: ScriptPort::Secondary.default_port(),
            realtime: ScriptPort::RealTime.default_port(),
            rtde: rtde_core::RTDE_PORT,
        }
    }
}

impl Ports {
    /// The number of `port` among these.
    ///
    /// ```
    /// use rtde_robot_proto::ports::{Ports, ScriptPort};
    ///
    /// let ports = Ports { secondary: 40002, ..Ports::default() };
    /// assert_eq!(ports.script(ScriptPort::Secondary), 40002);
    /// assert_eq!(ports.script(ScriptPort::Primary), 30001);
    /// ```
    #[must_use]
    pub fn script(&self, port: ScriptPort) -> u16 {
        match port {
            ScriptPort::Primary => self.primary,
            ScriptPort::Secondary => self.secondary,
            ScriptPort::RealTime => self.realtime,
        }
    }

    /// These ports with `port` at `number`: a robot given as `HOST:PORT` for its script port.
    ///
    /// ```
    /// use rtde_robot_proto::ports::{Ports, ScriptPort};
    ///
    /// let ports = Ports::default().with_script(ScriptPort::RealTime, 40003);
    /// assert_eq!(ports.script(ScriptPort::RealTime), 40003);
    /// assert_eq!(ports.dashboard, 29999);
    /// ```
    #[must_use]
    pub fn with_script(mut self, port: ScriptPort, number: u16) -> Self {
        *match port {
            ScriptPort::Primary => &mut self.primary,
            ScriptPort::Secondary => &mut self.secondary,
            ScriptPort::RealTime => &mut self.realtime,
        } = number;
        self
    }
}
