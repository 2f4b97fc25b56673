//! Placeholder build script, replaced by the generator of the all-fields recipes.
fn main() {}
