//! The catalogue of mistakes: one per file in `ui/`, named after it, with the compiler's
//! output in the `.stderr` beside it. Regenerate with `TRYBUILD=overwrite` and review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
    t.pass("ui/pass/*.rs");
}
