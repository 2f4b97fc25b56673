//! `rtde fields` and `rtde check`: questions the registry answers alone.

use std::io::{self, Write};
use std::process::ExitCode;

use clap::ValueEnum;
use rtde_fields::{
    Availability, ControllerVersion, Direction, Field, Generation, all_fields, lookup_ignore_case,
    suggest,
};

/// Search the field registry by name (substring, any case, typos forgiven).
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  rtde fields tcp                       every field with \"tcp\" in its name
  rtde fields actual_tcp_pos            suggests actual_TCP_pose
  rtde fields --controller 3.15 --direction input register_24
  rtde fields --dictionary --csv        the object dictionary (GB/T 32197-2015 shape) as CSV
  rtde fields --pdo timestamp,actual_q  an output recipe as its TPDO mapping")]
pub(crate) struct FieldsArgs {
    /// Part of a field name; all fields when omitted.
    pattern: Option<String>,
    /// Show only the fields this controller version has, e.g. 5.4 or 3.15.8.
    #[arg(long, value_name = "VERSION")]
    controller: Option<ControllerVersion>,
    /// Show only outputs (controller to client) or inputs (client to controller).
    #[arg(long, value_enum)]
    direction: Option<DirectionArg>,
    /// Print the fields as an object dictionary in the shape of GB/T 32197-2015 (index,
    /// subindex, object code, data type, access, M/O per generation, PDO mapping, unit,
    /// range, default): an export view; the 2015 edition is replaced by a 2025 one.
    #[arg(long)]
    dictionary: bool,
    /// With --dictionary: CSV instead of a table.
    #[arg(long, requires = "dictionary")]
    csv: bool,
    /// Print a recipe (comma-separated names) as its TPDO (outputs) or RPDO (inputs) mapping.
    #[arg(long, value_name = "NAMES", conflicts_with = "dictionary")]
    pdo: Option<String>,
}

/// Say for each field whether a controller version has it and, if not, from which version.
///
/// Exits with status 1 when any field is unknown or missing on that controller.
#[derive(Debug, clap::Args)]
#[command(after_help = "Example:
  rtde check --controller 5.4 actual_q ft_raw_wrench payload_inertia")]
pub(crate) struct CheckArgs {
    /// The controller's software version, e.g. 5.4 or 3.15.8.106339.
    #[arg(long, value_name = "VERSION")]
    controller: ControllerVersion,
    /// Canonical field names (any case).
    #[arg(required = true, value_name = "FIELD")]
    fields: Vec<String>,
}

/// A direction as the command line spells it.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum DirectionArg {
    /// Controller to client.
    Output,
    /// Client to controller.
    Input,
}

impl From<DirectionArg> for Direction {
    fn from(d: DirectionArg) -> Self {
        match d {
            DirectionArg::Output => Direction::Output,
            DirectionArg::Input => Direction::Input,
        }
    }
}

/// Prints every field matching the pattern, or a suggestion when none does.
pub(crate) fn fields(out: &mut impl Write, args: &FieldsArgs) -> io::Result<ExitCode> {
    let pattern = args.pattern.as_deref();
    let controller = args.controller;
    let direction = args.direction.map(Direction::from);
    let needle = pattern.map(str::to_ascii_lowercase);
    if let Some(names) = &args.pdo {
        return Ok(match crate::dictionary::print_pdo(out, names, direction) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::FAILURE
            }
        });
    }
    if args.dictionary {
        crate::dictionary::print(out, args.csv, |f| {
            direction.is_none_or(|d| f.direction() == d)
                && controller.is_none_or(|v| f.is_available_on(v))
                && needle
                    .as_deref()
                    .is_none_or(|n| f.name().to_ascii_lowercase().contains(n))
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let matches: Vec<&Field> = all_fields()
        .filter(|f| direction.is_none_or(|d| f.direction() == d))
        .filter(|f| controller.is_none_or(|v| f.is_available_on(v)))
        .filter(|f| {
            needle
                .as_deref()
                .is_none_or(|n| f.name().to_ascii_lowercase().contains(n))
        })
        .collect();
    if matches.is_empty() {
        let pattern = pattern.unwrap_or_default();
        let directions = direction
            .as_ref()
            .map_or(&Direction::ALL[..], std::slice::from_ref);
        let guesses: Vec<&Field> = directions
            .iter()
            .filter_map(|&d| suggest(d, pattern))
            .collect();
        if guesses.is_empty() {
            eprintln!(
                "error: no field matches `{pattern}`{}",
                controller_note(controller)
            );
            return Ok(ExitCode::FAILURE);
        }
        writeln!(out, "no field matches `{pattern}`; did you mean:")?;
        for f in guesses {
            describe(out, f)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    for f in matches {
        describe(out, f)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn controller_note(controller: Option<ControllerVersion>) -> String {
    controller.map_or_else(String::new, |v| format!(" on controller {v}"))
}

/// One block per field: name, direction and type, then versions, register and description.
fn describe(out: &mut impl Write, f: &Field) -> io::Result<()> {
    let unit = match (f.unit(), f.frame()) {
        (Some(u), Some(frame)) => format!(" [{u}; frame: {frame}]"),
        (Some(u), None) => format!(" [{u}]"),
        (None, Some(frame)) => format!(" [frame: {frame}]"),
        (None, None) => String::new(),
    };
    writeln!(
        out,
        "{}  {} {}{unit}",
        f.name(),
        f.direction(),
        f.wire_type()
    )?;
    write!(out, "    ")?;
    for (i, g) in Generation::ALL.into_iter().enumerate() {
        let since = match f.since(g) {
            Some(_) if !f.since_is_recorded(g) => "yes, version not recorded".to_owned(),
            Some(v) => format!("since {v}"),
            None => "absent".to_owned(),
        };
        let sep = if i == 0 { "" } else { "; " };
        write!(out, "{sep}{}: {since}", g.as_str())?;
    }
    writeln!(out)?;
    if let Some(r) = f.register() {
        let range = r.kind().fieldbus_range();
        if r.is_reserved_for_fieldbus() {
            let free = r.kind().external_range().map_or_else(
                || "use the individual bit registers 64..127".to_owned(),
                |x| {
                    format!(
                        "registers {}..{} are meant for external clients",
                        x.start(),
                        x.end()
                    )
                },
            );
            writeln!(
                out,
                "    {} register in the range {}..{} reserved for fieldbus/PLC adapters; {free}",
                r.kind(),
                range.start(),
                range.end()
            )?;
        } else {
            writeln!(
                out,
                "    {} register free for external RTDE clients",
                r.kind()
            )?;
        }
    }
    if f.is_read_back() {
        writeln!(out, "    read back of the input register of the same name")?;
    }
    writeln!(out, "    {}", f.description())
}

/// Prints, per field, whether the controller has it; fails when any is unknown or missing.
pub(crate) fn check(out: &mut impl Write, args: &CheckArgs) -> io::Result<ExitCode> {
    let (controller, names) = (args.controller, &args.fields);
    let Some(generation) = controller.generation() else {
        eprintln!(
            "error: {controller} is no known controller generation (3.x CB3, 5.x e-Series, 10.x PolyScope X)"
        );
        return Ok(ExitCode::FAILURE);
    };
    let mut ok = true;
    for name in names {
        let entries: Vec<&Field> = Direction::ALL
            .iter()
            .filter_map(|&d| lookup_ignore_case(d, name))
            .collect();
        if entries.is_empty() {
            ok = false;
            let guess = Direction::ALL.iter().find_map(|&d| suggest(d, name));
            match guess {
                Some(g) => writeln!(out, "{name}: unknown field; did you mean `{}`?", g.name())?,
                None => writeln!(out, "{name}: unknown field")?,
            }
            continue;
        }
        for f in entries {
            let what = format!("{} ({} {})", f.name(), f.direction(), f.wire_type());
            match f.availability_on(controller) {
                Availability::Available if !f.since_is_recorded(generation) => {
                    writeln!(
                        out,
                        "{what}: in the current {generation} release; first version not recorded"
                    )?;
                }
                Availability::Available => writeln!(out, "{what}: available on {controller}")?,
                Availability::Since(min) => {
                    ok = false;
                    writeln!(out, "{what}: not on {controller}; requires {min} or later")?;
                }
                Availability::NotOnGeneration(g) => {
                    ok = false;
                    let elsewhere: Vec<String> = Generation::ALL
                        .into_iter()
                        .filter_map(|o| f.since(o).map(|v| format!("{} {v}", o.as_str())))
                        .collect();
                    writeln!(
                        out,
                        "{what}: does not exist on {g}; exists on {}",
                        elsewhere.join(", ")
                    )?;
                }
                Availability::UnknownGeneration => unreachable!("checked above"),
            }
        }
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
