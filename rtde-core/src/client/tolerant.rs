//! Setting up a run-time recipe with what the controller has, like the UR Client Library's
//! `ignore_unavailable_outputs`: the fields this controller lacks are dropped, named, and
//! the rest is set up.

use rtde_fields::{ControllerVersion, Direction};

use super::{Client, InputHandle};
use crate::dynamic::{DynamicRecipe, RecipeError, RecipeProblem};
use crate::error::Error;
use crate::recipe::Recipe;
use crate::session::setup;

/// Why a tolerant setup left a field out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DropReason {
    /// The registry says the connected controller's version lacks it; it was never sent.
    /// The version that has it, if any generation from the controller's on does.
    NotOnThisVersion(Option<ControllerVersion>),
    /// The controller answered `NOT_FOUND` for it.
    NotFound,
}

/// A field a tolerant setup left out, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DroppedField {
    /// The field's canonical name.
    pub name: &'static str,
    /// Why it was left out.
    pub reason: DropReason,
}

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
        let direction: Direction = recipe.spec().direction();
        let mut dropped = Vec::new();
        let mut candidate = recipe.clone();
        if let Err(Error::Unavailable(missing)) =
            setup::check_available(direction, recipe.fields(), self.controller_version())
        {
            dropped.extend(missing.fields().iter().map(|f| DroppedField {
                name: f.name(),
                reason: DropReason::NotOnThisVersion(f.needs()),
            }));
            let names: Vec<&str> = dropped.iter().map(|d| d.name).collect();
            candidate = match recipe.without(&names) {
                Ok(rest) => rest,
                // Nothing left: the error that says why is the one for the whole recipe.
                Err(e) if nothing_left(&e) => return Err(Error::Unavailable(missing)),
                // A mask left without its value, or the reverse.
                Err(e) => return Err(e.into()),
            };
        }
        let result = match set_up(self, &candidate) {
            Err(Error::SetupRefused(refused))
                if refused.in_use().is_empty() && !refused.not_found().is_empty() =>
            {
                let not_found = refused.not_found().to_vec();
                let rest = match candidate.without(&not_found) {
                    Ok(rest) => rest,
                    Err(e) if nothing_left(&e) => return Err(Error::SetupRefused(refused)),
                    Err(e) => return Err(e.into()),
                };
                dropped.extend(not_found.iter().map(|&name| DroppedField {
                    name,
                    reason: DropReason::NotFound,
                }));
                candidate = rest;
                set_up(self, &candidate)
            }
            other => other,
        }?;
        *recipe = candidate;
        Ok((result, dropped))
    }
}

fn nothing_left(e: &RecipeError) -> bool {
    e.problems() == [RecipeProblem::Empty]
}
