//! How long the derive takes to expand a 10-field and a 100-field recipe, in process:
//! parsing the struct, checking it against the registry, generating the code and turning
//! it into text, as the compiler receives it.
//!
//! `cargo bench -p rtde-derive --bench expand`
//!
//! A proc-macro crate exports nothing but its macros, so this bench compiles the derive's
//! own modules a second time, as a plain library. Outside a compiler, proc-macro2 runs on
//! its own token implementation, which is faster than the compiler's bridge: these figures
//! are the derive's own work; `cargo bench -p rtde-bench --bench compile_time` measures
//! what it adds to a real build.

#![allow(missing_docs)]
// the derive's modules, compiled outside their crate
// Benches build with `cfg(test)` but without the test harness: the modules' unit tests are
// compiled without their `#[test]` functions, so their imports look unused.
#![cfg_attr(test, allow(unused_imports))]

#[path = "../src/ast.rs"]
mod ast;
#[path = "../src/attr.rs"]
mod attr;
#[path = "../src/check.rs"]
mod check;
#[path = "../src/ctxt.rs"]
mod ctxt;
#[path = "../src/derive.rs"]
mod derive;
#[path = "../src/expand.rs"]
mod expand;
#[path = "../src/fallback.rs"]
mod fallback;
#[path = "../src/suggest.rs"]
mod suggest;
#[path = "../src/symbol.rs"]
mod symbol;

use std::fmt::Write;
use std::hint::black_box;
use std::time::{Duration, Instant};

use rtde_fields::{Direction, MAX_NAME_LIST_BYTES, WireType};

/// An output recipe of `n` fields: the shortest names of the registry, so that 100 of
/// them fit the controller's 2048-byte name list.
fn recipe(n: usize) -> String {
    let mut fields: Vec<_> = rtde_fields::fields(Direction::Output).iter().collect();
    fields.sort_by_key(|f| f.name().len());
    let fields = &fields[..n];
    let list: usize = fields.iter().map(|f| f.name().len() + 1).sum();
    assert!(list <= MAX_NAME_LIST_BYTES, "{n} names take {list} bytes");
    let mut src = format!("pub struct Recipe{n} {{\n");
    for (i, f) in fields.iter().enumerate() {
        let name = f.name();
        let ty = f.wire_type().rust_type();
        let _ = writeln!(src, "    #[rtde(name = \"{name}\")]\n    pub f{i}: {ty},");
    }
    src.push('}');
    src
}

/// The median of `rounds` timings of parsing, expanding and printing `src`.
fn time_expansion(src: &str, rounds: usize) -> (Duration, usize) {
    let mut times = Vec::with_capacity(rounds);
    let mut len = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        let input: syn::DeriveInput = syn::parse_str(black_box(src)).expect("a struct");
        let output = derive::derive(&input).to_string();
        times.push(start.elapsed());
        len = black_box(output).len();
    }
    times.sort();
    (times[rounds / 2], len)
}

fn main() {
    println!("derive expansion in process (parse + check + generate + print), median of 200");
    for n in [10, 100] {
        let src = recipe(n);
        let (median, len) = time_expansion(&src, 200);
        assert!(
            !expand_is_error(&src),
            "the {n}-field recipe does not expand cleanly"
        );
        println!(
            "{n:>4} fields: {:>8.1} µs, {len} bytes of generated code",
            median.as_secs_f64() * 1e6
        );
    }
}

/// Whether the recipe expands to errors (the fallback) rather than code.
fn expand_is_error(src: &str) -> bool {
    let input: syn::DeriveInput = syn::parse_str(src).expect("a struct");
    derive::derive(&input).to_string().contains("compile_error")
}
