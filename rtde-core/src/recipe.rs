//! Recipes: the ordered fields a client asks for (outputs) or writes (inputs).
//!
//! A recipe is described by a [`RecipeSpec`] (canonical names, wire types, direction),
//! which is all the client needs to set it up, and knows how to turn a data package's
//! payload into values ([`OutputRecipe`]) or values into a payload ([`InputRecipe`]).
//! `#[derive(RtdeRecipe)]` implements these traits for a struct at compile time; a
//! [`DynamicRecipe`](crate::DynamicRecipe) implements them for names chosen at run time.

use rtde_fields::{Direction, WireType};

/// The shape of a recipe: its canonical field names and wire types, in order.
///
/// ```
/// use rtde_core::RecipeSpec;
/// use rtde_fields::{Direction, WireType};
///
/// let spec = RecipeSpec::new(Direction::Output, &["timestamp", "actual_q"], &[WireType::Double, WireType::Vector6d]);
/// assert_eq!(spec.payload_size(), 56);
/// assert_eq!(spec.offset_of("actual_q"), Some(8));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecipeSpec<'a> {
    direction: Direction,
    names: &'a [&'static str],
    types: &'a [WireType],
}

impl<'a> RecipeSpec<'a> {
    /// A spec from parallel lists of names and types.
    ///
    /// Never panics. Lists of different lengths make a spec that no client sets up: the
    /// check before sending refuses it ([`RecipeProblem::LengthMismatch`](crate::RecipeProblem::LengthMismatch)),
    /// and [`RecipeSpec::try_new`] says so at once. The derive and
    /// [`DynamicRecipe`](crate::DynamicRecipe) always build them together.
    ///
    /// ```
    /// use rtde_core::RecipeSpec;
    /// use rtde_fields::{Direction, WireType};
    ///
    /// let spec = RecipeSpec::new(Direction::Output, &["timestamp", "actual_q"], &[WireType::Double]);
    /// assert!(!spec.is_consistent());
    /// assert_eq!(spec.len(), 1); // only the pairs count
    /// ```
    #[must_use]
    pub const fn new(
        direction: Direction,
        names: &'a [&'static str],
        types: &'a [WireType],
    ) -> Self {
        RecipeSpec {
            direction,
            names,
            types,
        }
    }

    /// A spec from parallel lists of names and types, refused when their lengths differ.
    ///
    /// ```
    /// use rtde_core::RecipeSpec;
    /// use rtde_fields::{Direction, WireType};
    ///
    /// let err = RecipeSpec::try_new(Direction::Output, &["timestamp"], &[]).unwrap_err();
    /// assert_eq!(err.to_string(), "invalid output recipe: 1 names but 0 wire types; a recipe spec needs one wire type per name");
    /// ```
    ///
    /// # Errors
    /// [`RecipeProblem::LengthMismatch`](crate::RecipeProblem::LengthMismatch) in a
    /// [`RecipeError`](crate::RecipeError).
    pub fn try_new(
        direction: Direction,
        names: &'a [&'static str],
        types: &'a [WireType],
    ) -> Result<Self, crate::RecipeError> {
        let spec = Self::new(direction, names, types);
        match spec.length_problem() {
            None => Ok(spec),
            Some(problem) => Err(crate::RecipeError::new(direction, vec![problem])),
        }
    }

    /// Whether the lists of names and types have the same length.
    #[must_use]
    pub const fn is_consistent(&self) -> bool {
        self.names.len() == self.types.len()
    }

    /// The problem of lists of different lengths, if they differ.
    pub(crate) fn length_problem(&self) -> Option<crate::RecipeProblem> {
        (!self.is_consistent()).then_some(crate::RecipeProblem::LengthMismatch {
            names: self.names.len(),
            types: self.types.len(),
        })
    }

    /// Whether the recipe is set up with SETUP_OUTPUTS or SETUP_INPUTS.
    #[must_use]
    pub const fn direction(&self) -> Direction {
        self.direction
    }

    /// The canonical wire names, in order (only those with a type, when the lists given to
    /// [`RecipeSpec::new`] differ in length).
    #[must_use]
    pub const fn names(&self) -> &'a [&'static str] {
        self.names.split_at(self.len()).0
    }

    /// The wire types, in order (only those with a name, as [`RecipeSpec::names`]).
    #[must_use]
    pub const fn types(&self) -> &'a [WireType] {
        self.types.split_at(self.len()).0
    }

    /// The number of fields: of names with a type.
    #[must_use]
    pub const fn len(&self) -> usize {
        if self.names.len() < self.types.len() {
            self.names.len()
        } else {
            self.types.len()
        }
    }

    /// Whether the recipe has no fields (the controller refuses such a setup).
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The size of a data package's values, recipe id excluded.
    #[must_use]
    pub const fn payload_size(&self) -> usize {
        let types = self.types();
        let mut size = 0;
        let mut i = 0;
        while i < types.len() {
            size += types[i].size();
            i += 1;
        }
        size
    }

    /// The byte offset of a field in the payload.
    #[must_use]
    pub fn offset_of(&self, name: &str) -> Option<usize> {
        let mut offset = 0;
        for (n, t) in self.names().iter().zip(self.types()) {
            if *n == name {
                return Some(offset);
            }
            offset += t.size();
        }
        None
    }

    /// The names joined by commas, as SETUP_OUTPUTS and SETUP_INPUTS carry them.
    pub fn write_name_list(&self, out: &mut String) {
        for (i, n) in self.names().iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(n);
        }
    }

    /// The length of the comma-separated name list, in bytes.
    #[must_use]
    pub fn name_list_len(&self) -> usize {
        let names = self.names();
        names.iter().map(|n| n.len()).sum::<usize>() + names.len().saturating_sub(1)
    }
}

/// A payload whose length does not match its recipe, or a buffer too small for one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PayloadError {
    /// The data package's values are not the recipe's size.
    #[error("data package holds {found} bytes of values, the recipe needs {expected}")]
    WrongLength {
        /// The recipe's payload size.
        expected: usize,
        /// The bytes received.
        found: usize,
    },
    /// The output buffer is shorter than the recipe's payload.
    #[error("buffer of {available} bytes is too small for the recipe's {needed} bytes")]
    BufferTooSmall {
        /// The recipe's payload size.
        needed: usize,
        /// The buffer's length.
        available: usize,
    },
}

/// Anything that describes a recipe to set up.
pub trait Recipe {
    /// The recipe's names, types and direction.
    fn spec(&self) -> RecipeSpec<'_>;
}

/// An output recipe: decodes a data package's values.
pub trait OutputRecipe: Recipe {
    /// Overwrites `self` with the values in `payload` (recipe id excluded).
    ///
    /// # Errors
    /// [`PayloadError::WrongLength`] when `payload` is not exactly the recipe's size;
    /// `self` is then unchanged.
    fn decode_into(&mut self, payload: &[u8]) -> Result<(), PayloadError>;
}

/// An input recipe: encodes values into a data package's payload.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an input recipe",
    label = "an input recipe is needed here",
    note = "derive `{Self}` with `#[rtde(input)]` to send it: without it, a recipe is an output recipe, which the controller sends and the client receives"
)]
pub trait InputRecipe: Recipe {
    /// Writes the values into the front of `out` (recipe id excluded) and returns how many
    /// bytes that took, always the recipe's payload size.
    ///
    /// # Errors
    /// [`PayloadError::BufferTooSmall`]; nothing is written then.
    fn encode_into(&self, out: &mut [u8]) -> Result<usize, PayloadError>;
}

/// A recipe whose shape is known at compile time, as `#[derive(RtdeRecipe)]` makes them.
///
/// Its consts, [`FromPayload`], [`ToPayload`] and [`RecipeView`] must agree on the layout:
/// the derive guarantees it; a hand-written implementation must keep them in step.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an RTDE recipe",
    label = "not a recipe",
    note = "derive it with `#[derive(RtdeRecipe)]`; a `#[rtde(flatten)]` field's type must be a recipe too"
)]
pub trait StaticRecipe: Sized {
    /// The recipe's names, types and direction: what a client sends in SETUP_OUTPUTS or
    /// SETUP_INPUTS.
    const SPEC: RecipeSpec<'static>;
    /// The size of its values in a data package.
    const PAYLOAD_SIZE: usize;
    /// The first controller version of each generation (CB3, e-Series, PolyScope X) that has
    /// every field, or `None` where a generation lacks one of them; a client checks the
    /// controller's version against it before setting the recipe up.
    const MIN_CONTROLLER: [Option<rtde_fields::ControllerVersion>; 3];
}

/// A recipe that can be built straight from a payload: a client decodes output recipes,
/// a controller (or a simulator) decodes input recipes.
pub trait FromPayload: StaticRecipe {
    /// Decodes the values in `payload` (recipe id excluded).
    ///
    /// # Errors
    /// [`PayloadError::WrongLength`] when `payload` is not exactly [`StaticRecipe::PAYLOAD_SIZE`].
    fn from_payload(payload: &[u8]) -> Result<Self, PayloadError>;

    /// [`FromPayload::from_payload`] with the error converted into the caller's `E`, as
    /// [`Client::recv_as`](crate::Client::recv_as) returns it.
    ///
    /// Prefer it to `from_payload(…).map_err(…)` when the result is returned as it is: for
    /// recipes of many values, the derive decodes out of line straight into the caller's
    /// `Result<Self, E>`, where converting afterwards would copy the decoded struct.
    ///
    /// ```
    /// use rtde_core::{FromPayload, PayloadError, RtdeRecipe};
    ///
    /// #[derive(RtdeRecipe)]
    /// struct Joints {
    ///     actual_q: [f64; 6],
    ///     actual_qd: [f64; 6],
    ///     target_q: [f64; 6],
    /// }
    ///
    /// #[derive(Debug)]
    /// enum AppError {
    ///     Payload(PayloadError),
    /// }
    ///
    /// impl From<PayloadError> for AppError {
    ///     fn from(e: PayloadError) -> Self {
    ///         AppError::Payload(e)
    ///     }
    /// }
    ///
    /// fn joints(payload: &[u8]) -> Result<Joints, AppError> {
    ///     Joints::from_payload_as(payload)
    /// }
    ///
    /// assert!(joints(&[0; 144]).is_ok());
    /// assert!(matches!(joints(&[0; 3]), Err(AppError::Payload(_))));
    /// ```
    ///
    /// # Errors
    /// As [`FromPayload::from_payload`], converted with `E::from`.
    #[inline]
    fn from_payload_as<E: From<PayloadError>>(payload: &[u8]) -> Result<Self, E> {
        Self::from_payload(payload).map_err(E::from)
    }
}

/// A recipe that encodes into a fixed-size array, with no allocation: a client encodes
/// input recipes, a controller (or a simulator) output recipes.
pub trait ToPayload: StaticRecipe {
    /// `[u8; PAYLOAD_SIZE]`.
    type Payload: AsRef<[u8]> + AsMut<[u8]> + Copy + std::fmt::Debug;

    /// The values, big-endian, in recipe order (recipe id excluded).
    fn to_payload(&self) -> Self::Payload;
}

/// A recipe with a borrowed view type: a data package's payload read one field at a time,
/// on demand, without copying the payload or decoding the fields not asked for.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an RTDE recipe",
    label = "not a recipe",
    note = "derive it with `#[derive(RtdeRecipe)]`; a `#[rtde(flatten)]` field's type must be a recipe too"
)]
pub trait RecipeView: StaticRecipe {
    /// The view, `<Name>View<'a>` for a derived recipe `Name`; it has one accessor per field.
    type View<'a>: Copy + AsRef<[u8]>;

    /// A view of `payload` (recipe id excluded).
    ///
    /// # Errors
    /// [`PayloadError::WrongLength`] when `payload` is not exactly [`StaticRecipe::PAYLOAD_SIZE`].
    fn view(payload: &[u8]) -> Result<Self::View<'_>, PayloadError>;
}
