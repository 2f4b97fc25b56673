//! The rule for setting up a run-time recipe with what the controller has, like the UR
//! Client Library's `ignore_unavailable_outputs`: the fields this controller lacks are
//! dropped, named, and the rest is set up. Every driver follows it.

use rtde_fields::{ControllerVersion, Direction};

use super::setup;
use crate::dynamic::DynamicRecipe;
use crate::error::Error;
use crate::recipe::Recipe;
use crate::recipe_error::{RecipeError, RecipeProblem};

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

/// The tolerant setup's rule, without I/O, so that every driver follows it: what to set up
/// first (the recipe without the fields the registry says this controller's version
/// lacks), and what to set up again after the controller's answer (without the fields it
/// answered `NOT_FOUND` for, once).
#[derive(Debug)]
pub(crate) struct Tolerant {
    candidate: DynamicRecipe,
    dropped: Vec<DroppedField>,
    retried: bool,
}

impl Tolerant {
    /// The plan for `recipe` on a controller of `version`.
    ///
    /// # Errors
    /// [`Error::Unavailable`] when the version has none of the fields; a recipe error when
    /// dropping them leaves a mask without its value, or the reverse.
    pub(crate) fn new(recipe: &DynamicRecipe, version: ControllerVersion) -> Result<Self, Error> {
        let direction: Direction = recipe.spec().direction();
        let mut plan = Tolerant {
            candidate: recipe.clone(),
            dropped: Vec::new(),
            retried: false,
        };
        if let Err(Error::Unavailable(missing)) =
            setup::check_available(direction, recipe.fields(), version)
        {
            plan.dropped
                .extend(missing.fields().iter().map(|f| DroppedField {
                    name: f.name(),
                    reason: DropReason::NotOnThisVersion(f.needs()),
                }));
            let names: Vec<&str> = plan.dropped.iter().map(|d| d.name).collect();
            plan.candidate = match recipe.without(&names) {
                Ok(rest) => rest,
                // Nothing left: the error that says why is the one for the whole recipe.
                Err(e) if nothing_left(&e) => return Err(Error::Unavailable(missing)),
                // A mask left without its value, or the reverse.
                Err(e) => return Err(e.into()),
            };
        }
        Ok(plan)
    }

    /// The recipe to set up next.
    pub(crate) fn candidate(&self) -> &DynamicRecipe {
        &self.candidate
    }

    /// What the controller answered to the setup of [`Tolerant::candidate`]: `Some` when the
    /// setup is done, `None` when the candidate (now without the `NOT_FOUND` fields) is to
    /// be set up again.
    ///
    /// # Errors
    /// Any refusal but a first one of `NOT_FOUND` fields only; that refusal itself when it
    /// leaves nothing to set up.
    pub(crate) fn answered<T>(&mut self, answer: Result<T, Error>) -> Result<Option<T>, Error> {
        match answer {
            Err(Error::SetupRefused(refused))
                if !self.retried
                    && refused.in_use().is_empty()
                    && !refused.not_found().is_empty() =>
            {
                let not_found = refused.not_found().to_vec();
                self.candidate = match self.candidate.without(&not_found) {
                    Ok(rest) => rest,
                    Err(e) if nothing_left(&e) => return Err(Error::SetupRefused(refused)),
                    Err(e) => return Err(e.into()),
                };
                self.dropped
                    .extend(not_found.iter().map(|&name| DroppedField {
                        name,
                        reason: DropReason::NotFound,
                    }));
                self.retried = true;
                Ok(None)
            }
            other => other.map(Some),
        }
    }

    /// The fields left out; `recipe` becomes the recipe set up.
    pub(crate) fn finish(self, recipe: &mut DynamicRecipe) -> Vec<DroppedField> {
        *recipe = self.candidate;
        self.dropped
    }
}

fn nothing_left(e: &RecipeError) -> bool {
    e.problems() == [RecipeProblem::Empty]
}
