//! The controller's side of one RTDE connection, without its socket: the protocol version,
//! the recipes set up, running or paused, and the packages a controller sends back for each
//! package a client sends.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use rtde_core::Value;
use rtde_core::fields::{Availability, Direction, Field, MAX_NAME_LIST_BYTES, lookup};
use rtde_core::protocol::{
    ClientMessage, ControllerMessage, Frame, HEADER_LEN, MAX_PACKAGE_LEN, MessageLevel,
    ProtocolVersion, TextMessage, package_type,
};

use crate::controller::{Config, Owner, Shared};

/// The source name the simulator puts on its own text messages (protocol v2).
pub(crate) const TEXT_SOURCE: &str = "RTDE";

/// An output recipe set up on a connection.
#[derive(Debug)]
pub(crate) struct OutputRecipe {
    /// The id sent in v2 data packages.
    pub(crate) id: u8,
    pub(crate) fields: Vec<&'static Field>,
    /// One package every `every` control-loop ticks.
    pub(crate) every: u64,
    /// The values of the last package, reused as the buffer for the next.
    pub(crate) values: Vec<Value>,
}

/// An input recipe set up on a connection.
#[derive(Debug)]
struct InputRecipe {
    fields: Vec<&'static Field>,
    payload_len: usize,
}

/// An encoded package to send, and what it answers.
#[derive(Debug)]
pub(crate) struct Outgoing {
    /// The whole package, header included.
    pub(crate) bytes: Vec<u8>,
    /// For a reply, the type of the request it answers.
    pub(crate) reply_to: Option<u8>,
}

/// One RTDE connection's protocol state, without its socket: the protocol version, the
/// recipes and whether it streams. The server's `Connection` drives it.
#[derive(Debug)]
pub(crate) struct RtdeConnection {
    id: u64,
    version: ProtocolVersion,
    output: Option<OutputRecipe>,
    last_output_id: u8,
    inputs: HashMap<u8, InputRecipe>,
    next_input_id: u16,
    running: bool,
    warned_about_input: bool,
}

impl RtdeConnection {
    /// A new connection, speaking protocol v1 until the client negotiates.
    pub(crate) fn new(id: u64) -> Self {
        RtdeConnection {
            id,
            version: ProtocolVersion::V1,
            output: None,
            last_output_id: 0,
            inputs: HashMap::new(),
            next_input_id: 1,
            running: false,
            warned_about_input: false,
        }
    }

    pub(crate) fn version(&self) -> ProtocolVersion {
        self.version
    }

    pub(crate) fn is_running(&self) -> bool {
        self.running
    }

    pub(crate) fn output(&self) -> Option<&OutputRecipe> {
        self.output.as_ref()
    }

    pub(crate) fn output_mut(&mut self) -> Option<&mut OutputRecipe> {
        self.output.as_mut()
    }

    /// Answers one package from the client, appending what to send to `out`.
    pub(crate) fn handle(&mut self, frame: Frame<'_>, shared: &Shared, out: &mut Vec<Outgoing>) {
        let msg = match ClientMessage::decode(frame, self.version) {
            Ok(msg) => msg,
            Err(e) => return self.undecodable(frame.kind, &e.to_string(), out),
        };
        match msg {
            ClientMessage::RequestProtocolVersion { version } => {
                let accepted = match ProtocolVersion::from_number(version) {
                    Some(ProtocolVersion::V2) if shared.config.v1_only => false,
                    Some(v) => {
                        self.version = v;
                        true
                    }
                    None => false,
                };
                self.reply(
                    frame.kind,
                    &ControllerMessage::ProtocolVersionReply { accepted },
                    out,
                );
            }
            ClientMessage::GetUrcontrolVersion => self.reply(
                frame.kind,
                &ControllerMessage::UrcontrolVersion(crate::fault::reported_version(
                    &shared.config.faults,
                    shared.config.version,
                )),
                out,
            ),
            ClientMessage::SetupOutputs { frequency, names } => {
                self.setup_outputs(frequency, names, shared, out);
            }
            ClientMessage::SetupInputs { names } => self.setup_inputs(names, shared, out),
            // The RTDE guide: START "will fail if e.g. an output package has not been
            // configured yet", and a client must subscribe to at least one output
            // (controller 5.22 still insists).
            ClientMessage::Start if self.output.is_none() => {
                self.text(
                    MessageLevel::Error,
                    "START refused: no output recipe is set up; send SETUP_OUTPUTS with at \
                     least one output first",
                    out,
                );
                self.reply(
                    frame.kind,
                    &ControllerMessage::StartReply { accepted: false },
                    out,
                );
            }
            ClientMessage::Start => {
                self.running = true;
                self.reply(
                    frame.kind,
                    &ControllerMessage::StartReply { accepted: true },
                    out,
                );
            }
            ClientMessage::Pause => {
                self.running = false;
                self.reply(
                    frame.kind,
                    &ControllerMessage::PauseReply { accepted: true },
                    out,
                );
            }
            ClientMessage::DataPackage { recipe_id, payload } => {
                self.input_data(recipe_id, payload, shared, out);
            }
            // A client's text goes to the controller's log; the simulator has none.
            ClientMessage::TextMessage(_) => {}
            // `ClientMessage` is non-exhaustive: a package type added to the codec later
            // is not something this controller knows.
            _ => self.text(
                MessageLevel::Warning,
                &format!("ignored {} package", package_type::name(frame.kind)),
                out,
            ),
        }
    }

    /// A package whose payload does not match its type: say so, and refuse what has a reply.
    fn undecodable(&mut self, kind: u8, why: &str, out: &mut Vec<Outgoing>) {
        match kind {
            package_type::DATA_PACKAGE => {
                if !self.warned_about_input {
                    self.warned_about_input = true;
                    self.text(MessageLevel::Error, why, out);
                }
            }
            package_type::TEXT_MESSAGE => {}
            package_type::SETUP_OUTPUTS | package_type::SETUP_INPUTS => {
                self.refuse_setup(kind, why, "", out);
            }
            _ => {
                self.text(MessageLevel::Error, why, out);
                let accepted = false;
                let reply = match kind {
                    package_type::REQUEST_PROTOCOL_VERSION => {
                        ControllerMessage::ProtocolVersionReply { accepted }
                    }
                    package_type::START => ControllerMessage::StartReply { accepted },
                    package_type::PAUSE => ControllerMessage::PauseReply { accepted },
                    // GET_URCONTROL_VERSION has no payload to get wrong.
                    _ => return,
                };
                self.reply(kind, &reply, out);
            }
        }
    }

    fn setup_outputs(
        &mut self,
        frequency: Option<f64>,
        names: &str,
        shared: &Shared,
        out: &mut Vec<Outgoing>,
    ) {
        const KIND: u8 = package_type::SETUP_OUTPUTS;
        let config = &shared.config;
        if self.running {
            return self.refuse_setup(
                KIND,
                "the output recipe cannot change while streaming; send PAUSE first",
                "",
                out,
            );
        }
        let names = match name_list(names) {
            Ok(names) => names,
            Err(why) => return self.refuse_setup(KIND, &why, "", out),
        };
        let every = match output_every(frequency, config) {
            Ok(every) => every,
            Err(why) => return self.refuse_setup(KIND, &why, "", out),
        };
        let (fields, types, problems) = resolve_outputs(&names, config);
        if !problems.is_empty() {
            return self.refuse_setup(KIND, &problems.join("; "), &types, out);
        }
        let payload: usize = fields.iter().map(|f| f.wire_type().size()).sum();
        if HEADER_LEN + 1 + payload > MAX_PACKAGE_LEN {
            let why = format!(
                "a data package of this recipe would take {payload} bytes, more than a package holds"
            );
            return self.refuse_setup(KIND, &why, &types, out);
        }
        self.last_output_id = self.last_output_id.checked_add(1).unwrap_or(1);
        let id = self.last_output_id;
        let values = fields.iter().map(|f| Value::zero(f.wire_type())).collect();
        self.output = Some(OutputRecipe {
            id,
            fields,
            every,
            values,
        });
        let recipe_id = (self.version == ProtocolVersion::V2).then_some(id);
        self.reply(
            KIND,
            &ControllerMessage::SetupOutputsReply {
                recipe_id,
                types: &types,
            },
            out,
        );
    }

    fn setup_inputs(&mut self, names: &str, shared: &Shared, out: &mut Vec<Outgoing>) {
        const KIND: u8 = package_type::SETUP_INPUTS;
        let names = match name_list(names) {
            Ok(names) => names,
            Err(why) => return self.refuse_setup(KIND, &why, "", out),
        };
        let Ok(id) = u8::try_from(self.next_input_id) else {
            return self.refuse_setup(
                KIND,
                "every input recipe id (1 to 255) is taken on this connection",
                "",
                out,
            );
        };
        let mut controller = shared.controller();
        let mut fields = Vec::with_capacity(names.len());
        let mut types = Vec::with_capacity(names.len());
        let mut problems = Vec::new();
        for name in &names {
            match resolve(Direction::Input, name, &shared.config) {
                Ok(f) => match controller.owner(f.name()) {
                    Some(Owner::Client(other)) if other != self.id => {
                        problems.push(format!("`{}` is in use by another RTDE client", f.name()));
                        types.push(IN_USE);
                    }
                    Some(Owner::Fieldbus) => {
                        problems.push(format!(
                            "`{}` is in use by an enabled fieldbus adapter (EtherNet/IP, PROFINET or Modbus)",
                            f.name()
                        ));
                        types.push(IN_USE);
                    }
                    _ => {
                        fields.push(f);
                        types.push(f.wire_type().as_str());
                    }
                },
                Err(why) => {
                    problems.push(why);
                    types.push(NOT_FOUND);
                }
            }
        }
        let types = types.join(",");
        if !problems.is_empty() {
            drop(controller);
            return self.refuse_setup(KIND, &problems.join("; "), &types, out);
        }
        for f in &fields {
            controller.hold(f.name(), self.id);
        }
        drop(controller);
        let payload_len = fields.iter().map(|f| f.wire_type().size()).sum();
        self.inputs.insert(
            id,
            InputRecipe {
                fields,
                payload_len,
            },
        );
        self.next_input_id += 1;
        self.reply(
            KIND,
            &ControllerMessage::SetupInputsReply {
                recipe_id: id,
                types: &types,
            },
            out,
        );
    }

    fn input_data(
        &mut self,
        recipe_id: u8,
        payload: &[u8],
        shared: &Shared,
        out: &mut Vec<Outgoing>,
    ) {
        let problem = match self.inputs.get(&recipe_id) {
            // Applied whether or not synchronisation is started: see the crate
            // documentation ("Inputs") for why.
            None => Some(format!(
                "ignored input data for recipe {recipe_id}, which is not set up on this connection"
            )),
            Some(r) if r.payload_len != payload.len() => Some(format!(
                "ignored input data for recipe {recipe_id}: {} bytes where the recipe takes {}",
                payload.len(),
                r.payload_len
            )),
            Some(r) => {
                let mut values = Vec::with_capacity(r.fields.len());
                let mut offset = 0;
                for f in &r.fields {
                    let t = f.wire_type();
                    let mut v = Value::zero(t);
                    // In bounds: the sizes add up to payload_len, checked above.
                    v.read_be(t, &payload[offset..]);
                    offset += t.size();
                    values.push((f.name(), v));
                }
                shared.controller().io.write(&values);
                shared
                    .counters
                    .input_packages
                    .fetch_add(1, Ordering::Relaxed);
                None
            }
        };
        // Once per connection: a client that gets this wrong does so at every cycle.
        if let Some(why) = problem
            && !self.warned_about_input
        {
            self.warned_about_input = true;
            self.text(MessageLevel::Error, &why, out);
        }
    }

    /// Refuses a setup: a text message saying why, then the reply with recipe id 0
    /// (where the reply has one) and `types` (one entry per name, or empty).
    fn refuse_setup(&mut self, kind: u8, why: &str, types: &str, out: &mut Vec<Outgoing>) {
        let what = if kind == package_type::SETUP_OUTPUTS {
            "output"
        } else {
            "input"
        };
        self.text(
            MessageLevel::Error,
            &format!("{what} setup refused: {why}"),
            out,
        );
        let reply = if kind == package_type::SETUP_OUTPUTS {
            ControllerMessage::SetupOutputsReply {
                recipe_id: (self.version == ProtocolVersion::V2).then_some(0),
                types,
            }
        } else {
            ControllerMessage::SetupInputsReply {
                recipe_id: 0,
                types,
            }
        };
        self.reply(kind, &reply, out);
    }

    fn reply(&self, request: u8, msg: &ControllerMessage<'_>, out: &mut Vec<Outgoing>) {
        if let Some(bytes) = encode(msg, self.version) {
            out.push(Outgoing {
                bytes,
                reply_to: Some(request),
            });
        }
    }

    /// Appends a text message in the connection's current protocol version.
    pub(crate) fn text(&self, level: MessageLevel, message: &str, out: &mut Vec<Outgoing>) {
        if let Some(bytes) = encode_text(level, message, TEXT_SOURCE, self.version) {
            out.push(Outgoing {
                bytes,
                reply_to: None,
            });
        }
    }
}

/// The setup-reply entry for a name the controller does not know.
const NOT_FOUND: &str = "NOT_FOUND";
/// The setup-reply entry for an input another client or a fieldbus holds.
const IN_USE: &str = "IN_USE";

/// Splits a setup's comma-separated names, tolerating one trailing comma.
fn name_list(names: &str) -> Result<Vec<&str>, String> {
    let trimmed = names.strip_suffix(',').unwrap_or(names);
    if trimmed.len() > MAX_NAME_LIST_BYTES {
        return Err(format!(
            "the variable names take {} bytes, more than the {MAX_NAME_LIST_BYTES} a setup may carry",
            trimmed.len()
        ));
    }
    if trimmed.is_empty() {
        return Err("the recipe names no variables".to_owned());
    }
    Ok(trimmed.split(',').collect())
}

/// The control-loop ticks between two output packages at `frequency` (v1: every tick);
/// else why the controller, or its source of data, cannot stream at that rate.
fn output_every(frequency: Option<f64>, config: &Config) -> Result<u64, String> {
    let loop_rate = f64::from(config.loop_rate);
    let every = match frequency {
        None => 1,
        // The RTDE guide's pacing rule, kept in one place for client and simulator.
        Some(f) if f.is_finite() && f > 0.0 && f <= loop_rate => {
            rtde_core::protocol::timing::ticks_per_package(loop_rate, f)
        }
        Some(f) => {
            return Err(format!(
                "output frequency {f} Hz is outside 0 < f <= {loop_rate} Hz, the range of {}",
                config.generation
            ));
        }
    };
    // Kept apart from the decimation above: a source with data at one rate only (a
    // replayed recording) cannot serve a faster one.
    if let Some(max) = config.source.max_frequency() {
        let asked = frequency.unwrap_or(loop_rate);
        if asked > max * (1.0 + 1e-9) {
            return Err(match frequency {
                Some(f) => format!(
                    "output frequency {f} Hz is above the {max} Hz {} has data for",
                    config.source.name()
                ),
                None => format!(
                    "protocol v1 streams at the {loop_rate} Hz control-loop rate, above the \
                     {max} Hz {} has data for; use protocol v2 and ask for at most {max} Hz",
                    config.source.name()
                ),
            });
        }
    }
    Ok(every)
}

/// The output fields `names` name, the setup reply's types (one per name, `NOT_FOUND` for
/// a name refused), and why each refused name is.
fn resolve_outputs(names: &[&str], config: &Config) -> (Vec<&'static Field>, String, Vec<String>) {
    let mut fields = Vec::with_capacity(names.len());
    let mut types = Vec::with_capacity(names.len());
    let mut problems = Vec::new();
    for name in names {
        match resolve(Direction::Output, name, config) {
            Ok(f) if config.source.provides(f) => {
                fields.push(f);
                types.push(f.wire_type().as_str());
            }
            Ok(f) => {
                problems.push(format!(
                    "`{}` is not provided by {}",
                    f.name(),
                    config.source.name()
                ));
                types.push(NOT_FOUND);
            }
            Err(why) => {
                problems.push(why);
                types.push(NOT_FOUND);
            }
        }
    }
    (fields, types.join(","), problems)
}

/// The field a setup names, if the configured controller has it; else why not.
fn resolve(direction: Direction, name: &str, config: &Config) -> Result<&'static Field, String> {
    let version = config.version;
    let Some(f) = lookup(direction, name) else {
        return Err(format!("`{name}` is not an RTDE {direction} variable"));
    };
    match f.availability_on(version) {
        Availability::Available
            if config.refuse_unrecorded && !f.since_is_recorded(config.generation) =>
        {
            Err(format!(
                "`{name}`: no source records the first {} version with it, and this simulator \
                 refuses such fields",
                config.generation
            ))
        }
        Availability::Available => Ok(f),
        Availability::Since(min) => Err(format!(
            "`{name}` needs controller software {min} or later (this is {version})"
        )),
        Availability::NotOnGeneration(g) => Err(format!("`{name}` does not exist on {g}")),
        Availability::UnknownGeneration => Err(format!(
            "`{name}` is unknown to controller software {version}"
        )),
    }
}

/// Encodes a controller package; `None` only for a package the codec cannot encode,
/// which the simulator never builds (texts are cut to 255 bytes first).
pub(crate) fn encode(msg: &ControllerMessage<'_>, version: ProtocolVersion) -> Option<Vec<u8>> {
    let len = msg.encoded_len(version).ok()?;
    let mut bytes = vec![0; len];
    msg.encode(version, &mut bytes).ok()?;
    Some(bytes)
}

/// Encodes a text message, cutting the message and source to what v2 allows.
pub(crate) fn encode_text(
    level: MessageLevel,
    message: &str,
    source: &str,
    version: ProtocolVersion,
) -> Option<Vec<u8>> {
    let msg = ControllerMessage::TextMessage(TextMessage {
        level,
        message: truncate(message, 255).as_bytes(),
        source: match version {
            ProtocolVersion::V1 => &[],
            ProtocolVersion::V2 => truncate(source, 255).as_bytes(),
        },
    });
    encode(&msg, version)
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_lists_tolerate_one_trailing_comma() {
        assert_eq!(name_list("a,b,").unwrap(), ["a", "b"]);
        assert_eq!(name_list("a,b").unwrap(), ["a", "b"]);
        assert_eq!(name_list("a,,").unwrap(), ["a", ""]);
        assert!(name_list("").is_err());
        assert!(name_list(",").is_err());
        let long = "x".repeat(MAX_NAME_LIST_BYTES);
        assert!(name_list(&long).is_ok());
        assert!(name_list(&format!("{long},")).is_ok());
        assert!(name_list(&format!("{long}y")).is_err());
    }

    #[test]
    fn truncation_respects_characters() {
        assert_eq!(truncate("héllo", 2), "h");
        assert_eq!(truncate("héllo", 3), "hé");
        assert_eq!(truncate("abc", 255), "abc");
    }
}
