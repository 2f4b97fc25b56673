//! The derive's test suite lives in `tests/`; this library compiles the README's examples
//! and those of the guides in `docs/`, so that none of them goes stale.
#![doc = include_str!("../../README.md")]

#[doc = include_str!("../../docs/recipes.md")]
pub mod recipes {}

#[doc = include_str!("../../docs/drivers.md")]
pub mod drivers {}

#[doc = include_str!("../../docs/dashboard.md")]
pub mod dashboard {}

#[doc = include_str!("../../docs/migrating-from-ur_rtde.md")]
pub mod migrating_from_ur_rtde {}

#[doc = include_str!("../../docs/motion.md")]
pub mod motion {}

#[doc = include_str!("../../docs/primary.md")]
pub mod primary {}

#[doc = include_str!("../../docs/view.md")]
pub mod view {}

#[doc = include_str!("../../docs/urscript.md")]
pub mod urscript {}
