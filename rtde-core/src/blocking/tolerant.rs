//! Setting up a run-time recipe with what the controller has, like the UR Client Library's
//! `ignore_unavailable_outputs`: the fields this controller lacks are dropped, named, and
//! the rest is set up, by the session's rule ([`crate::session::tolerant`]).

use super::{Client, InputHandle};
use crate::dynamic::DynamicRecipe;
use crate::error::Error;
use crate::recipe::Recipe;
use crate::session::tolerant::{DroppedField, Tolerant};

impl Client {
    /// Sets up `recipe` as the output recipe with every field this controller has, dropping
    /// the others, and returns the ones dropped (empty when none was). `recipe` becomes the
    /// recipe set up, so it receives with [`Client::recv_into`].
    ///
    /// Fields the registry says this controller's version lacks are dropped before anything
    /// is sent; fields the controller then answers `NOT_FOUND` for are dropped and the rest is
    /// set up again (one more SETUP_OUTPUTS). Any other refusal, and a recipe with nothing
    /// left, is an error as in [`Client::setup_outputs`].
    ///
    /// ```
    /// # fn f(client: &mut rtde_core::Client) -> Result<(), rtde_core::Error> {
    /// use rtde_core::DynamicRecipe;
    ///
    /// let mut recipe = DynamicRecipe::outputs(["timestamp", "actual_q", "ft_raw_wrench"])?;
    /// for dropped in client.setup_outputs_dropping_unavailable(&mut recipe, 125.0)? {
    ///     eprintln!("this controller has no `{}` ({:?})", dropped.name, dropped.reason);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`Client::setup_outputs`]; [`Error::Unavailable`] or [`Error::SetupRefused`] when
    /// the controller has none of the fields.
    pub fn setup_outputs_dropping_unavailable(
        &mut self,
        recipe: &mut DynamicRecipe,
        frequency: f64,
    ) -> Result<Vec<DroppedField>, Error> {
        self.setup_dropping_unavailable(recipe, |client, r| {
            client.setup_outputs(r.spec(), frequency)
        })
        .map(|((), dropped)| dropped)
    }

    /// [`Client::setup_outputs_dropping_unavailable`] for an input recipe: sets up what the
    /// controller has and returns its handle with the fields dropped. `IN_USE` is still an
    /// error: the field exists, someone else writes it.
    ///
    /// # Errors
    /// As [`Client::setup_inputs`]; [`Error::Unavailable`] or [`Error::SetupRefused`] when
    /// the controller has none of the fields.
    pub fn setup_inputs_dropping_unavailable(
        &mut self,
        recipe: &mut DynamicRecipe,
    ) -> Result<(InputHandle, Vec<DroppedField>), Error> {
        self.setup_dropping_unavailable(recipe, |client, r| client.setup_inputs(r.spec()))
    }

    fn setup_dropping_unavailable<T>(
        &mut self,
        recipe: &mut DynamicRecipe,
        mut set_up: impl FnMut(&mut Client, &DynamicRecipe) -> Result<T, Error>,
    ) -> Result<(T, Vec<DroppedField>), Error> {
        let mut plan = Tolerant::new(recipe, self.controller_version())?;
        loop {
            let answer = set_up(self, plan.candidate());
            if let Some(done) = plan.answered(answer)? {
                return Ok((done, plan.finish(recipe)));
            }
        }
    }
}
