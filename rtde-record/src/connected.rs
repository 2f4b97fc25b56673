//! A capture's [`Header`] read off a connection that has its output recipe set up: the
//! one call a recorder starts from, instead of five getters.

use rtde_core::background::Background;
use rtde_core::fields::{ControllerVersion, Direction, Field, lookup};
use rtde_core::protocol::ProtocolVersion;
use rtde_core::{Client, Error, OutputRecipe};

use crate::capture::Header;
use crate::host_time::now_unix_us;

impl Header {
    /// The header of the stream `client` receives: its protocol and controller versions,
    /// output recipe id and frequency, and the fields of `recipe`, the output recipe set
    /// up on it; started now.
    ///
    /// ```
    /// use rtde_core::{Client, ConnectOptions, DynamicRecipe, Recipe};
    /// use rtde_record::capture::Header;
    /// use rtde_sim::Sim;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let sim = Sim::builder().start()?;
    /// let recipe = DynamicRecipe::outputs(["timestamp", "actual_q"])?;
    /// let mut client = Client::connect(sim.addr(), ConnectOptions::new())?;
    /// client.setup_outputs(recipe.spec(), 500.0)?;
    /// let header = Header::of_client(&client, &recipe)?;
    /// assert_eq!((header.frequency, header.fields.len()), (500.0, 2));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::Misuse`] when no output recipe is set up, or `recipe` is not it.
    pub fn of_client<R: OutputRecipe + ?Sized>(
        client: &Client,
        recipe: &R,
    ) -> Result<Header, Error> {
        client.session().check_output_spec(&recipe.spec())?;
        header(
            client.protocol_version(),
            client.controller_version(),
            client.requested_frequency(),
            client.output_recipe_id(),
            recipe,
        )
    }

    /// The header of the stream a background driver receives, as [`Header::of_client`]:
    /// `recipe` is the output recipe set up before spawning it.
    ///
    /// # Errors
    /// [`Error::Misuse`] when no output recipe is set up, or `recipe` has fields of
    /// another direction.
    pub fn of_background<R: OutputRecipe + ?Sized>(
        background: &Background,
        recipe: &R,
    ) -> Result<Header, Error> {
        header(
            background.protocol_version(),
            background.controller_version(),
            background.requested_frequency(),
            background.output_recipe_id(),
            recipe,
        )
    }
}

fn header<R: OutputRecipe + ?Sized>(
    protocol: ProtocolVersion,
    controller: ControllerVersion,
    frequency: Option<f64>,
    recipe_id: Option<u8>,
    recipe: &R,
) -> Result<Header, Error> {
    let frequency = frequency.ok_or(Error::Misuse(
        "no output recipe is set up: call `setup_outputs` before recording",
    ))?;
    let fields = recipe
        .spec()
        .names()
        .iter()
        .map(|n| lookup(Direction::Output, n))
        .collect::<Option<Vec<&'static Field>>>()
        .ok_or(Error::Misuse(
            "the recipe to record has a field that is no RTDE output",
        ))?;
    Ok(Header {
        protocol,
        controller,
        frequency,
        recipe_id,
        started_unix_micros: now_unix_us(),
        fields,
    })
}
