//! The checks around SETUP_OUTPUTS and SETUP_INPUTS: the recipe against the registry and
//! the controller's version before sending, and the controller's reply after.

use rtde_fields::{
    Availability, ControllerVersion, Direction, Field, Generation, MAX_NAME_LIST_BYTES, WireType,
};

use crate::error::{
    Error, SetupRefused, SetupReplyMismatch, TypeMismatch, Unavailable, UnavailableField,
};
use crate::recipe::RecipeSpec;
use crate::recipe_error::{RecipeError, RecipeProblem};

/// A recipe as set up on the connection: what its data packages look like.
#[derive(Clone, Debug)]
pub(crate) struct SetUp {
    pub(crate) names: Box<[&'static str]>,
    pub(crate) types: Box<[WireType]>,
    pub(crate) payload_size: usize,
    /// The lists of the last `'static` spec that matched ([`SetUp::matches_static`]).
    matched: Option<StaticLists>,
}

/// A `'static` spec's lists, kept by address: memory that lives for the whole program and
/// is only ever shared never changes, so the same slices (address and length) hold the
/// same names and types for good.
type StaticLists = (&'static [&'static str], &'static [WireType]);

impl SetUp {
    pub(crate) fn new(spec: &RecipeSpec<'_>) -> Self {
        SetUp {
            names: spec.names().into(),
            types: spec.types().into(),
            payload_size: spec.payload_size(),
            matched: None,
        }
    }

    /// The spec of this recipe, to set it up again.
    pub(crate) fn spec(&self, direction: Direction) -> RecipeSpec<'_> {
        RecipeSpec::new(direction, &self.names, &self.types)
    }

    /// Whether `spec` is this recipe: same names and types, in order. Names usually are the
    /// registry's own `&'static str`s, so the pointer comparison settles most of them.
    pub(crate) fn matches(&self, spec: &RecipeSpec<'_>) -> bool {
        *self.types == *spec.types()
            && self.names.len() == spec.names().len()
            && self
                .names
                .iter()
                .zip(spec.names())
                .all(|(a, b)| std::ptr::eq(*a, *b) || a == b)
    }

    /// [`SetUp::matches`] for a spec known at compile time (a derived recipe's `SPEC`),
    /// remembered: a receive loop compares the lists once, then two addresses per package
    /// (some 400 instructions fewer a package for a ten-field recipe, counted with
    /// callgrind; docs/performance.md has what that did and did not change).
    pub(crate) fn matches_static(&mut self, spec: &RecipeSpec<'static>) -> bool {
        let lists: StaticLists = (spec.names(), spec.types());
        if self.matched.is_some_and(|(names, types)| {
            std::ptr::eq(names, lists.0) && std::ptr::eq(types, lists.1)
        }) {
            return true;
        }
        let matches = self.matches(spec);
        if matches {
            self.matched = Some(lists);
        }
        matches
    }
}

/// Checks a spec against the registry, before anything is sent: every name known in the
/// spec's direction, spelled canonically, once, with the registry's wire type; at least one
/// field; a name list within the protocol's 2048 bytes. Returns the registry entries.
pub(crate) fn check_spec(spec: &RecipeSpec<'_>) -> Result<Vec<&'static Field>, Error> {
    let direction = spec.direction();
    let mut problems: Vec<RecipeProblem> = spec.length_problem().into_iter().collect();
    let mut fields = Vec::with_capacity(spec.len());
    for (i, (&name, &ty)) in spec.names().iter().zip(spec.types()).enumerate() {
        if spec.names()[..i].contains(&name) {
            if !problems.contains(&RecipeProblem::Duplicate(name)) {
                problems.push(RecipeProblem::Duplicate(name));
            }
            continue;
        }
        match rtde_fields::lookup(direction, name) {
            Some(field) => {
                if field.wire_type() != ty {
                    problems.push(RecipeProblem::WrongType {
                        name,
                        spec: ty,
                        registry: field.wire_type(),
                    });
                }
                fields.push(field);
            }
            None => problems.push(RecipeProblem::not_a_field(direction, name)),
        }
    }
    if spec.is_empty() && problems.is_empty() {
        problems.push(RecipeProblem::Empty);
    }
    if spec.name_list_len() > MAX_NAME_LIST_BYTES {
        problems.push(RecipeProblem::NameListTooLong {
            len: spec.name_list_len(),
        });
    }
    if problems.is_empty() {
        Ok(fields)
    } else {
        Err(RecipeError::new(direction, problems).into())
    }
}

/// Refuses, in one error, every field the controller's version lacks. A controller of a
/// generation the registry does not know (a major version other than 3, 5 or 10) is let
/// through: it decides for itself, and a `NOT_FOUND` will name what it lacks.
pub(crate) fn check_available(
    direction: Direction,
    fields: &[&'static Field],
    controller: ControllerVersion,
) -> Result<(), Error> {
    let mut missing = Vec::new();
    for field in fields {
        let needs = match field.availability_on(controller) {
            Availability::Available | Availability::UnknownGeneration => continue,
            Availability::Since(version) => Some(version),
            Availability::NotOnGeneration(generation) => Generation::ALL
                .into_iter()
                .filter(|g| *g > generation)
                .find_map(|g| field.since(g)),
        };
        missing.push(UnavailableField {
            name: field.name(),
            needs,
        });
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Error::Unavailable(Box::new(Unavailable {
            direction,
            controller,
            fields: missing,
        })))
    }
}

/// The types token a controller answers for a field it does not know.
const NOT_FOUND: &str = "NOT_FOUND";
/// The types token a controller answers for an input another client or adapter holds.
const IN_USE: &str = "IN_USE";

/// Checks a setup reply against the recipe: refusals first (`NOT_FOUND`, `IN_USE`, input
/// recipe id 0), then the number of types, then each type.
pub(crate) fn check_reply(
    spec: &RecipeSpec<'_>,
    recipe_id: Option<u8>,
    types: &str,
) -> Result<(), Error> {
    let direction = spec.direction();
    let tokens = types.split(',');
    let mut not_found = Vec::new();
    let mut in_use = Vec::new();
    for (&name, token) in spec.names().iter().zip(tokens.clone()) {
        match token {
            NOT_FOUND => not_found.push(name),
            IN_USE => in_use.push(name),
            _ => {}
        }
    }
    let input_refused = direction == Direction::Input && recipe_id == Some(0);
    // No type at all for a non-empty recipe: the request was refused as a whole (a name
    // list too long, a frequency out of range), not field by field.
    let refused_whole = types.is_empty() && !spec.is_empty();
    if !not_found.is_empty() || !in_use.is_empty() || input_refused || refused_whole {
        return Err(Error::SetupRefused(Box::new(SetupRefused {
            direction,
            recipe_id,
            not_found,
            in_use,
            reason: None,
        })));
    }
    let answered = tokens.clone().count();
    let mut mismatch = SetupReplyMismatch {
        direction,
        requested: spec.len(),
        answered,
        types: Vec::new(),
    };
    if answered == spec.len() {
        for ((&name, &expected), token) in spec.names().iter().zip(spec.types()).zip(tokens) {
            if WireType::from_wire_name(token) != Some(expected) {
                mismatch.types.push(TypeMismatch {
                    name,
                    expected,
                    found: token.into(),
                });
            }
        }
        if mismatch.types.is_empty() {
            return Ok(());
        }
    }
    Err(Error::SetupReply(Box::new(mismatch)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: Direction = Direction::Output;

    fn cb3() -> ControllerVersion {
        "3.15.8".parse().unwrap()
    }

    #[test]
    fn every_spec_problem_is_reported_at_once() {
        let spec = RecipeSpec::new(
            OUT,
            &[
                "actual_tcp_pose",
                "actual_q",
                "actual_q",
                "target_q",
                "speed_slider_mask",
            ],
            &[
                WireType::Vector6d,
                WireType::Vector6d,
                WireType::Vector6d,
                WireType::Vector3d,
                WireType::Uint32,
            ],
        );
        let err = check_spec(&spec).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid output recipe: unknown output field `actual_tcp_pose` (did you mean \
             `actual_TCP_pose`?); `actual_q` is requested twice; `target_q` is `VECTOR6D` on the \
             wire, but the recipe decodes it as `VECTOR3D`; `speed_slider_mask` is an input \
             field; it cannot be in an output recipe"
        );
    }

    #[test]
    fn specs_of_different_lengths_are_refused_not_panicked_on() {
        let spec = RecipeSpec::new(OUT, &["timestamp", "actual_q"], &[WireType::Double]);
        assert_eq!(spec.payload_size(), 8);
        assert_eq!(
            check_spec(&spec).unwrap_err().to_string(),
            "invalid output recipe: 2 names but 1 wire types; a recipe spec needs one wire type \
             per name"
        );
        let spec = RecipeSpec::new(OUT, &[], &[WireType::Double, WireType::Int32]);
        assert!(spec.is_empty());
        assert_eq!(spec.offset_of("timestamp"), None);
        assert_eq!(
            check_spec(&spec).unwrap_err().to_string(),
            "invalid output recipe: 0 names but 2 wire types; a recipe spec needs one wire type \
             per name"
        );
        // Gap counting reads the spec too.
        let spec = RecipeSpec::new(OUT, &["actual_q", "timestamp"], &[WireType::Vector6d]);
        let _ = crate::session::gaps::GapCounter::new(&spec, 500.0, 500.0);
    }

    #[test]
    fn unavailable_fields_name_the_version_each_needs() {
        let spec = RecipeSpec::new(
            OUT,
            &["timestamp", "ft_raw_wrench"],
            &[WireType::Double, WireType::Vector6d],
        );
        let fields = check_spec(&spec).unwrap();
        let err = check_available(OUT, &fields, cb3()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the controller cannot provide 1 of the requested output fields: `ft_raw_wrench` \
             requires e-Series 5.9.0 (controller is CB3 3.15.8); remove them from the recipe or \
             update the controller"
        );
        assert!(check_available(OUT, &fields, "5.9".parse().unwrap()).is_ok());
        // An unknown generation decides for itself.
        assert!(check_available(OUT, &fields, "4.0".parse().unwrap()).is_ok());
    }

    #[test]
    fn replies_are_checked_refusals_first() {
        let spec = RecipeSpec::new(
            OUT,
            &["timestamp", "actual_q"],
            &[WireType::Double, WireType::Vector6d],
        );
        assert!(check_reply(&spec, Some(1), "DOUBLE,VECTOR6D").is_ok());
        let err = check_reply(&spec, Some(1), "DOUBLE,VECTOR3D").unwrap_err();
        assert!(
            err.to_string().contains(
                "`actual_q` is `VECTOR3D` on the controller but `VECTOR6D` in the recipe"
            ),
            "{err}"
        );
        let err = check_reply(&spec, Some(1), "DOUBLE").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the controller's SETUP_OUTPUTS reply names 1 types for 2 requested fields"
        );
        let Error::SetupRefused(refused) =
            check_reply(&spec, Some(0), "NOT_FOUND,NOT_FOUND").unwrap_err()
        else {
            panic!("a refusal")
        };
        assert_eq!(refused.not_found(), ["timestamp", "actual_q"]);
    }
}
