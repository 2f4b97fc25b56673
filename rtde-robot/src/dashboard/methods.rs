//! The typed commands, listed once: each driver expands this list into its methods.

/// Calls `$driver!` with every typed command: its doc, method name, arguments, the
/// [`Command`](super::Command) it sends and how its [`Reply`](super::Reply) becomes the
/// method's result.
macro_rules! typed_commands {
    ($driver:ident) => {
        $driver! {
            /// `load <program>`: loads a program file (`Loading program: …`).
            fn load(program: &str) -> () = Command::Load(program.into()), Reply::Done(_) => ();
            /// `play`: starts the loaded program.
            fn play() -> () = Command::Play, Reply::Done(_) => ();
            /// `stop`: stops the program.
            fn stop() -> () = Command::Stop, Reply::Done(_) => ();
            /// `pause`: pauses the program.
            fn pause() -> () = Command::Pause, Reply::Done(_) => ();
            /// `shutdown`: shuts the controller down.
            fn shutdown() -> () = Command::Shutdown, Reply::Done(_) => ();
            /// `running`: whether a program runs.
            fn running() -> bool = Command::Running, Reply::Bool(b) => b;
            /// `robotmode`: the robot's mode.
            fn robot_mode() -> RobotMode = Command::RobotMode, Reply::RobotMode(m) => m;
            /// `get loaded program`: the loaded program's path, if any.
            fn loaded_program() -> Option<String> = Command::GetLoadedProgram, Reply::LoadedProgram(p) => p;
            /// `popup <text>`: shows a popup on the pendant.
            fn popup(text: &str) -> () = Command::Popup(text.into()), Reply::Done(_) => ();
            /// `close popup`.
            fn close_popup() -> () = Command::ClosePopup, Reply::Done(_) => ();
            /// `addToLog <text>`: adds a line to the controller's log.
            fn add_to_log(text: &str) -> () = Command::AddToLog(text.into()), Reply::Done(_) => ();
            /// `isProgramSaved`: whether the loaded program is saved.
            fn is_program_saved() -> bool = Command::IsProgramSaved, Reply::Bool(b) => b;
            /// `programState`: the program's state and name.
            fn program_state() -> ProgramState = Command::ProgramState, Reply::ProgramState(s) => s;
            /// `PolyscopeVersion`: the controller's software version.
            fn polyscope_version() -> ControllerVersion = Command::PolyscopeVersion, Reply::Version(v) => v;
            /// `version` (e-Series): the controller's software version.
            fn software_version() -> ControllerVersion = Command::Version, Reply::Version(v) => v;
            /// `setUserRole <role>` (CB3).
            fn set_user_role(role: UserRole) -> () = Command::SetUserRole(role), Reply::Done(_) => ();
            /// `getUserRole` (CB3).
            fn user_role() -> UserRole = Command::GetUserRole, Reply::UserRole(r) => r;
            /// `set operational mode <mode>` (e-Series).
            fn set_operational_mode(mode: OperationalMode) -> () = Command::SetOperationalMode(mode), Reply::Done(_) => ();
            /// `get operational mode` (e-Series 5.6): `None` when none is set.
            fn operational_mode() -> Option<OperationalMode> = Command::GetOperationalMode, Reply::OperationalMode(m) => m;
            /// `clear operational mode` (e-Series).
            fn clear_operational_mode() -> () = Command::ClearOperationalMode, Reply::Done(_) => ();
            /// `power on`: the arm ends in idle, brakes engaged.
            fn power_on() -> () = Command::PowerOn, Reply::Done(_) => ();
            /// `power off`.
            fn power_off() -> () = Command::PowerOff, Reply::Done(_) => ();
            /// `brake release`: the arm ends in running.
            fn brake_release() -> () = Command::BrakeRelease, Reply::Done(_) => ();
            /// `safetymode` (superseded by `safetystatus`).
            fn safety_mode() -> SafetyMode = Command::SafetyMode, Reply::SafetyMode(m) => m;
            /// `safetystatus`.
            fn safety_status() -> SafetyStatus = Command::SafetyStatus, Reply::SafetyStatus(s) => s;
            /// `unlock protective stop`: refused until 5 s after the stop.
            fn unlock_protective_stop() -> () = Command::UnlockProtectiveStop, Reply::Done(_) => ();
            /// `close safety popup`.
            fn close_safety_popup() -> () = Command::CloseSafetyPopup, Reply::Done(_) => ();
            /// `load installation <file>`.
            fn load_installation(file: &str) -> () = Command::LoadInstallation(file.into()), Reply::Done(_) => ();
            /// `restart safety`: after a fault or violation; the arm ends powered off.
            fn restart_safety() -> () = Command::RestartSafety, Reply::Done(_) => ();
            /// `is in remote control` (e-Series 5.6).
            fn is_in_remote_control() -> bool = Command::IsInRemoteControl, Reply::Bool(b) => b;
            /// `get serial number`.
            fn serial_number() -> String = Command::GetSerialNumber, Reply::Text(t) => t;
            /// `get robot model` (`UR5`, `UR10`…).
            fn robot_model() -> String = Command::GetRobotModel, Reply::Text(t) => t;
            /// `generate flight report <type>`: the controller's answer (the report's id).
            fn generate_flight_report(kind: &str) -> String = Command::GenerateFlightReport(kind.into()), Reply::Text(t) => t;
            /// `generate support file <directory>`: the controller's answer (the file's name).
            fn generate_support_file(directory: &str) -> String = Command::GenerateSupportFile(directory.into()), Reply::Text(t) => t;
            /// `saveLog`.
            fn save_log() -> () = Command::SaveLog, Reply::Done(_) => ();
        }
    };
}

pub(crate) use typed_commands;
