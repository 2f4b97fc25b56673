//! Why a recipe's names cannot be set up: every problem found, for the run-time recipe
//! and the setup's checks alike. A module of its own so that the error type and the
//! recipes that raise it do not import each other.

use std::fmt;

use rtde_fields::{Direction, Field, MAX_NAME_LIST_BYTES, WireType};

/// Why a [`DynamicRecipe`](crate::DynamicRecipe) could not be built: every problem found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecipeError {
    direction: Direction,
    problems: Vec<RecipeProblem>,
}

impl RecipeError {
    pub(crate) fn new(direction: Direction, problems: Vec<RecipeProblem>) -> Self {
        RecipeError {
            direction,
            problems,
        }
    }

    /// Every problem, in the order of the names given.
    #[must_use]
    pub fn problems(&self) -> &[RecipeProblem] {
        &self.problems
    }
}

impl fmt::Display for RecipeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid {} recipe: ", self.direction)?;
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RecipeError {}

/// One problem with a recipe's names.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecipeProblem {
    /// No field of that name in this direction.
    Unknown {
        /// The name as given.
        name: String,
        /// The recipe's direction.
        direction: Direction,
        /// The closest known name, if any is close.
        suggestion: Option<&'static str>,
    },
    /// The field exists only in the other direction.
    WrongDirection {
        /// The name as given.
        name: String,
        /// The recipe's direction.
        direction: Direction,
    },
    /// The field is listed more than once.
    Duplicate(&'static str),
    /// No fields at all.
    Empty,
    /// The comma-separated names exceed the protocol's limit.
    NameListTooLong {
        /// The list's length in bytes.
        len: usize,
    },
    /// An input recipe writes a masked value without its mask: the controller would ignore it.
    ValueWithoutMask {
        /// The masked value.
        value: &'static str,
        /// Its mask.
        mask: &'static str,
    },
    /// An input recipe writes a mask but none of the values it selects.
    MaskWithoutValue(&'static str),
    /// A recipe spec built from lists of names and types of different lengths
    /// ([`RecipeSpec::new`](crate::RecipeSpec::new)).
    LengthMismatch {
        /// The number of names.
        names: usize,
        /// The number of wire types.
        types: usize,
    },
    /// A recipe spec gives a field another wire type than the registry does.
    WrongType {
        /// The field.
        name: &'static str,
        /// The spec's type.
        spec: WireType,
        /// The registry's type.
        registry: WireType,
    },
}

impl RecipeProblem {
    /// Why `name` is not a field of `direction`: it belongs to the other direction, or it is
    /// unknown (with the closest known name, which is also the canonical spelling of a name
    /// given in the wrong case).
    pub(crate) fn not_a_field(direction: Direction, name: &str) -> RecipeProblem {
        let elsewhere = rtde_fields::lookup_ignore_case(direction.opposite(), name).is_some();
        if elsewhere && rtde_fields::lookup_ignore_case(direction, name).is_none() {
            RecipeProblem::WrongDirection {
                name: name.to_owned(),
                direction,
            }
        } else {
            RecipeProblem::Unknown {
                name: name.to_owned(),
                direction,
                suggestion: rtde_fields::suggest(direction, name).map(Field::name),
            }
        }
    }
}

impl fmt::Display for RecipeProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecipeProblem::Unknown {
                name,
                direction,
                suggestion: Some(s),
            } => write!(
                f,
                "unknown {direction} field `{name}` (did you mean `{s}`?)"
            ),
            RecipeProblem::Unknown {
                name, direction, ..
            } => write!(f, "unknown {direction} field `{name}`"),
            RecipeProblem::WrongDirection { name, direction } => write!(
                f,
                "`{name}` is an {} field; it cannot be in an {direction} recipe",
                direction.opposite()
            ),
            RecipeProblem::Duplicate(name) => write!(f, "`{name}` is requested twice"),
            RecipeProblem::Empty => f.write_str("a recipe needs at least one field"),
            RecipeProblem::ValueWithoutMask { value, mask } => write!(
                f,
                "`{value}` has no effect without `{mask}` in the same recipe"
            ),
            RecipeProblem::MaskWithoutValue(mask) => {
                write!(f, "`{mask}` selects no value of this recipe")?;
                let values: Vec<_> = rtde_fields::masked_by(mask).map(|m| m.value()).collect();
                write!(f, " (it gates `{}`)", values.join("`, `"))
            }
            RecipeProblem::NameListTooLong { len } => write!(
                f,
                "the names take {len} bytes; the controller accepts at most {MAX_NAME_LIST_BYTES}"
            ),
            RecipeProblem::LengthMismatch { names, types } => write!(
                f,
                "{names} names but {types} wire types; a recipe spec needs one wire type per name"
            ),
            RecipeProblem::WrongType {
                name,
                spec,
                registry,
            } => write!(
                f,
                "`{name}` is `{registry}` on the wire, but the recipe decodes it as `{spec}`"
            ),
        }
    }
}
