//! Typed writes to the controller's standard inputs, masks included: digital outputs per
//! bit, analog outputs with their domain, the speed slider, and the external registers.
//!
//! Two layers, so that any driver can send the writes:
//!
//! - [`IoWrite`] is one input data package's worth, built without I/O: which input recipe
//!   ([`IoGroup`]) it goes through and the encoded values, with the mask set to exactly what
//!   the call changes. It implements [`InputRecipe`](crate::InputRecipe).
//! - [`IoWriter`] sets the groups up on a [`Client`](crate::Client) and sends each write
//!   through its own recipe, so that a call puts on the wire only what it changes, through
//!   any [`InputSink`]: the blocking client or the background driver's
//!   [`Sender`](crate::background::Sender). Over the async driver (feature `tokio`),
//!   `IoWriter::setup_async` and `IoWriter::send_async` do the same, awaited.
//!
//! ```
//! use rtde_core::Recipe;
//! use rtde_core::writer::{IoGroup, IoWrite};
//!
//! // Standard digital output 3 on: the mask selects bit 3 and nothing else.
//! let write = IoWrite::standard_digital_output(3, true).unwrap();
//! assert_eq!(write.group(), IoGroup::StandardDigitalOutputs);
//! assert_eq!(write.spec().names(), ["standard_digital_output_mask", "standard_digital_output"]);
//! assert_eq!(write.payload(), [0b1000, 0b1000]);
//!
//! // Registers outside the external clients' range are refused.
//! assert!(IoWrite::int_register(3, 7).is_err());
//! ```
//!
//! Over a connection (a real controller here; the tests use the simulator):
//!
//! ```no_run
//! use rtde_core::writer::{AnalogDomain, IoConfig, IoWriter};
//! use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut client = Client::connect(("192.168.1.10", 30004), ConnectOptions::new())?;
//! let outputs = DynamicRecipe::outputs(["actual_digital_output_bits"])?;
//! client.setup_outputs(outputs.spec(), 125.0)?;
//! let io = IoWriter::setup(&mut client, &IoConfig::standard().double_registers(24..=29))?;
//! client.start()?;
//! io.standard_digital_output(&mut client, 3, true)?; // mask 0b1000, value 0b1000
//! io.analog_output(&mut client, 0, AnalogDomain::Voltage, 0.5)?;
//! io.speed_slider(&mut client, 0.3)?;
//! io.double_register(&mut client, 24, 1.25)?;
//! # Ok(())
//! # }
//! ```

#[cfg(feature = "tokio")]
mod over_async;
mod over_client;
mod sink;
mod write;

pub use over_client::{IoConfig, IoWriter, WriteError};
pub use sink::InputSink;
pub use write::{AnalogDomain, IoError, IoGroup, IoWrite};
