//! `rtde plot`: a recording (CSV, MCAP or raw capture, read by [`crate::plot_input`]) as
//! time series, PNG or SVG.
//!
//! One panel per field, stacked on a shared time axis; one line per vector element, named
//! after what it is (the joints of `actual_q`, the axes of `actual_TCP_pose`); axis labels
//! with the registry's units where it gives one; the packages the controller skipped
//! shaded, with the lines broken there rather than drawn across.
//!
//! Fields with a typed value that names its codes (`robot_mode`, `safety_status`, …) are
//! drawn as steps, with the codes' UR names on the axis. The rotation vectors of poses are
//! unwrapped ([`Pose::unwrapped_near`]), so a rotation through π is drawn continuous rather
//! than as a jump from `r` to nearly `-r`. The legend is as wide as its longest label.
//!
//! Text is drawn with DejaVu Sans from the `dejavu` crate, compiled in: no system font,
//! fontconfig or freetype is needed. The picture is drawn in memory and written under a
//! temporary name, then renamed, as `rtde record` does.

use crate::said;
use std::io::Write;
use std::path::{Path, PathBuf};

use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::FontStyle;
use rtde_core::Pose;
use rtde_core::fields::{Direction, Field, WireType, lookup, lookup_ignore_case};

use crate::outfile::PendingFile;
use crate::table::{Table, columns_of, width};

/// Plot a recorded CSV: one panel per field, one line per vector element, against time.
#[derive(Debug, clap::Args)]
#[command(
    long_about = "Plot a recording: a CSV from `rtde record`, an MCAP recording or a raw capture. \
One panel per field, stacked on a shared time axis (`timestamp`), one line per vector element, labelled with the registry's units. \
Packages the controller skipped are shaded, and lines are not drawn across them. Fields \
whose codes have names (`robot_mode`, `safety_status`, `runtime_state`, …) are drawn as steps \
with the names on the axis. The rotation vectors of poses (`actual_TCP_pose`, …) are unwrapped, \
so that a rotation through π is drawn continuous rather than as a jump from r to about -r; the \
panel's title says so when it happens.

The picture is a PNG or an SVG, by the output's extension. Text is drawn with a font compiled \
into rtde, so no system fonts are needed.",
    after_help = "Examples:
  rtde record --fields actual_q,actual_qd --duration 20s -o run.csv
  rtde plot run.csv --fields actual_q
      run.png: the six joint positions over time
  rtde plot run.csv --fields actual_q,actual_qd -o run.svg --size 1600x900
      two panels, as SVG
  rtde plot run.csv
      every recorded field
  rtde plot run.mcap --fields actual_q,/tcp_pose.pose.position.z
      a recipe field and a field of another channel of an MCAP recording"
)]
pub(crate) struct PlotArgs {
    /// The recording to plot: a CSV from `rtde record`, an MCAP recording (.mcap) or a raw
    /// capture (.rtde).
    #[arg(value_name = "FILE")]
    csv: PathBuf,
    /// Fields to plot, comma-separated, one panel each [default: every recipe field]. In
    /// an MCAP recording, a field of another channel is its topic and path, as Foxglove
    /// names it: `/tcp_pose.pose.position.z`, `/tf.transforms[5].translation.x`.
    #[arg(long, short = 'f', value_name = "FIELD,…", value_delimiter = ',')]
    fields: Vec<String>,
    /// The picture to write, .png or .svg [default: the CSV's name with .png].
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// The picture's size in pixels [default: 1200 wide, 300 high per panel].
    #[arg(long, value_name = "WIDTHxHEIGHT", value_parser = size)]
    size: Option<(u32, u32)>,
}

/// The largest width or height of a picture, in pixels.
const MAX_SIDE: u32 = 10_000;

/// 1200 pixels wide, 300 high a panel, but no taller than `--size` may ask for: the
/// picture is drawn in memory, and a CSV of hundreds of columns would take gigabytes.
fn default_size(panels: usize) -> (u32, u32) {
    let panels = u32::try_from(panels).unwrap_or(u32::MAX);
    (
        1200,
        panels.saturating_mul(300).saturating_add(60).min(MAX_SIDE),
    )
}

fn size(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("`{text}` is no size: use WIDTHxHEIGHT, e.g. 1200x800");
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (u32, u32) = (
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    );
    if !(200..=MAX_SIDE).contains(&w) || !(150..=MAX_SIDE).contains(&h) {
        return Err(format!(
            "`{text}`: width and height must be between 200 and 10000 pixels"
        ));
    }
    Ok((w, h))
}

/// The colours of the lines, in order: Tableau 10, without the yellow that vanishes on white.
const PALETTE: [RGBColor; 6] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0x76, 0xb7, 0xb2),
];
const INK: RGBColor = RGBColor(0x33, 0x33, 0x33);
const GAP: RGBColor = RGBColor(0xe1, 0x57, 0x59);
/// The font family every text is drawn in; registered by [`register_fonts`].
const FONT: &str = "sans-serif";
/// The narrowest legend column right of each panel; it widens to fit its longest label.
const LEGEND_WIDTH: u32 = 150;
/// The narrowest y tick labels' column; it widens to fit the names of codes.
const Y_LABEL_WIDTH: u32 = 72;
/// Where a legend's text starts, right of its line sample.
const LEGEND_TEXT_X: u32 = 38;
/// The most codes a panel names on its axis; beyond, the axis has numbers.
const MAX_NAMED_CODES: usize = 16;

/// Runs `rtde plot`.
pub(crate) fn run(args: &PlotArgs) -> Result<(), String> {
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.csv.with_extension("png"));
    let format = match output.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("png") => Format::Png,
        Some(e) if e.eq_ignore_ascii_case("svg") => Format::Svg,
        _ => {
            return Err(format!(
                "`{}`: the picture's name must end in .png or .svg",
                output.display()
            ));
        }
    };
    let table = crate::plot_input::read(&args.csv, &args.fields)?;
    let plot = Plot::new(&table, &args.fields, &args.csv)?;
    let (width, height) = args.size.unwrap_or_else(|| default_size(plot.panels.len()));
    register_fonts()?;
    let bytes = match format {
        Format::Png => {
            // Drawn at twice the size and averaged down: the bitmap backend draws lines
            // without anti-aliasing, and this smooths them.
            let (w, h) = (width * SUPERSAMPLE, height * SUPERSAMPLE);
            let mut rgb = vec![0u8; w as usize * h as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
                plot.draw(&root, SUPERSAMPLE)?;
                root.present().map_err(said)?;
            }
            png(&downsample(&rgb, width, height), width, height)?
        }
        Format::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
                plot.draw(&root, 1)?;
                root.present().map_err(said)?;
            }
            svg.into_bytes()
        }
    };
    let mut file = PendingFile::create(&output)?;
    file.write_all(&bytes).map_err(|e| {
        format!(
            "cannot write `{}`: {e}",
            file.temp_path().display(),
            e = said(e)
        )
    })?;
    file.commit()?;
    eprintln!(
        "rtde: plotted {} of `{}` to `{}`",
        plot.panels
            .iter()
            .map(|p| p.name.as_str())
            .filter(|n| !n.ends_with("(rotation)"))
            .collect::<Vec<_>>()
            .join(", "),
        args.csv.display(),
        output.display()
    );
    Ok(())
}

#[derive(Clone, Copy, Debug)]
enum Format {
    Png,
    Svg,
}

/// Makes DejaVu Sans the `sans-serif` font of the plots.
fn register_fonts() -> Result<(), String> {
    for (style, bytes) in [
        (FontStyle::Normal, dejavu::sans::regular()),
        (FontStyle::Bold, dejavu::sans::bold()),
    ] {
        plotters::style::register_font(FONT, style, bytes)
            .map_err(|_| "the built-in font cannot be read".to_owned())?;
    }
    Ok(())
}

/// How many times larger a PNG is drawn than written.
const SUPERSAMPLE: u32 = 2;

/// Averages each [`SUPERSAMPLE`]² block of an RGB picture into one pixel.
fn downsample(rgb: &[u8], width: u32, height: u32) -> Vec<u8> {
    let (w, h, k) = (width as usize, height as usize, SUPERSAMPLE as usize);
    let big_w = w * k;
    let mut out = vec![0u8; w * h * 3];
    for y in 0..h {
        for x in 0..w {
            for c in 0..3 {
                let mut sum = 0u32;
                for dy in 0..k {
                    for dx in 0..k {
                        sum += u32::from(rgb[((y * k + dy) * big_w + x * k + dx) * 3 + c]);
                    }
                }
                // An average of bytes is a byte.
                #[allow(clippy::cast_possible_truncation)]
                let avg =
                    ((sum + (SUPERSAMPLE * SUPERSAMPLE) / 2) / (SUPERSAMPLE * SUPERSAMPLE)) as u8;
                out[(y * w + x) * 3 + c] = avg;
            }
        }
    }
    out
}

/// Encodes an RGB buffer as PNG.
fn png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut encoder = ::png::Encoder::new(&mut out, width, height);
    encoder.set_color(::png::ColorType::Rgb);
    encoder.set_depth(::png::BitDepth::Eight);
    encoder.set_compression(::png::Compression::Best);
    encoder.set_adaptive_filter(::png::AdaptiveFilterType::Adaptive);
    let fail = |e: ::png::EncodingError| format!("cannot encode the PNG: {e}", e = said(e));
    let mut writer = encoder.write_header().map_err(fail)?;
    writer.write_image_data(rgb).map_err(fail)?;
    writer.finish().map_err(fail)?;
    Ok(out)
}

/// What to draw.
#[derive(Debug)]
struct Plot {
    title: String,
    /// Seconds since the first row.
    x: Vec<f64>,
    x_label: String,
    /// Rows after which the controller skipped packages.
    gaps: Vec<usize>,
    panels: Vec<Panel>,
}

/// One field's panel.
#[derive(Debug)]
struct Panel {
    name: String,
    title: String,
    y_label: String,
    /// (label, values): one line each.
    lines: Vec<(String, Vec<f64>)>,
    /// The UR names of the field's codes, when a typed value names them: drawn as steps.
    codes: Option<&'static [(i64, &'static str)]>,
}

impl Panel {
    /// The codes of the panel's values, in order, with their names, when they are few
    /// enough to name on the axis; `None` for a panel of numbers.
    fn named_codes(&self) -> Option<Vec<(f64, String)>> {
        let names = self.codes?;
        let mut values: Vec<f64> = self
            .lines
            .iter()
            .flat_map(|(_, v)| v.iter().copied())
            .filter(|v| v.is_finite() && v.fract() == 0.0)
            .collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        if values.is_empty() || values.len() > MAX_NAMED_CODES {
            return None;
        }
        Some(
            values
                .into_iter()
                .map(|v| {
                    // Codes are `i32` or `u32`: exact as `f64`. A code without a name keeps
                    // its number.
                    let name = names
                        .iter()
                        .find(|(code, _)| *code as f64 == v)
                        .map_or_else(|| v.to_string(), |(_, name)| (*name).to_owned());
                    (v, name)
                })
                .collect(),
        )
    }
}

impl Plot {
    fn new(table: &Table, requested: &[String], path: &Path) -> Result<Self, String> {
        let file = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let Some(timestamp) = table.column("timestamp") else {
            return Err(format!(
                "`{file}` has no `timestamp` column to plot against (record it with `rtde record`)"
            ));
        };
        if table.rows() == 0 {
            return Err(format!("`{file}` has no rows to plot"));
        }
        let t0 = timestamp[0];
        let x: Vec<f64> = timestamp.iter().map(|t| t - t0).collect();
        let unit = lookup(Direction::Output, "timestamp")
            .and_then(Field::unit)
            .unwrap_or("s");
        let x_label = if t0 == 0.0 {
            format!("timestamp [{unit}]")
        } else {
            format!("time [{unit}] since timestamp {t0}")
        };
        let (gaps, period) = gaps(&x);
        let panels = if requested.is_empty() {
            every_field(table)
        } else {
            requested
                .iter()
                .map(|name| panels(table, name.trim(), &file))
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .flatten()
                .collect()
        };
        if panels.is_empty() {
            return Err(format!("`{file}` has no column but `timestamp`"));
        }
        // Each package stands for one period, as `rtde record` and `rtde replay` count:
        // N packages at f Hz last N / f seconds.
        let span = x.last().copied().unwrap_or(0.0) + period.unwrap_or(0.0);
        let rate = match period {
            Some(p) if (1.0 / p - (1.0 / p).round()).abs() < 1e-6 / p => {
                format!(" at {} Hz", (1.0 / p).round())
            }
            Some(p) => format!(" at {:.1} Hz", 1.0 / p),
            None => String::new(),
        };
        let gaps_text = match gaps.len() {
            0 => "no gaps".to_owned(),
            1 => "1 gap (shaded)".to_owned(),
            n => format!("{n} gaps (shaded)"),
        };
        Ok(Plot {
            title: format!(
                "{file}: {} packages over {span:.3} s{rate}, {gaps_text}",
                x.len()
            ),
            x,
            x_label,
            gaps,
            panels,
        })
    }

    /// Draws the plot; `k` scales every size (fonts, margins, lines) for supersampling.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        k: u32,
    ) -> Result<(), String> {
        let px = |n: u32| n * k;
        root.fill(&WHITE).map_err(drawing_error)?;
        let title = (FONT, f64::from(px(20)), FontStyle::Bold)
            .into_font()
            .color(&INK);
        let body = root
            .margin(px(10), px(4), px(4), px(4))
            .titled(&self.title, title)
            .map_err(drawing_error)?;
        let areas = body.split_evenly((self.panels.len(), 1));
        let (width, _) = body.dim_in_pixel();
        let named: Vec<Option<Vec<(f64, String)>>> =
            self.panels.iter().map(Panel::named_codes).collect();
        let layout = Layout {
            k,
            width,
            x_max: x_span(&self.x),
            legend_width: self.legend_width(root, k, width),
            y_label_width: y_label_width(root, &named, k, width),
        };
        for (i, (panel, area)) in self.panels.iter().zip(&areas).enumerate() {
            let last = i + 1 == self.panels.len();
            self.draw_panel(root, &layout, panel, named[i].as_deref(), area, last)?;
        }
        Ok(())
    }

    /// The legend's width: it fits its longest label, up to two fifths of the picture; a
    /// longer label wraps.
    fn legend_width<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        k: u32,
        width: u32,
    ) -> u32 {
        // A tenth more than measured: an SVG viewer may draw `sans-serif` in a wider font
        // than DejaVu Sans.
        let longest_label = self
            .panels
            .iter()
            .flat_map(|p| &p.lines)
            .map(|(label, _)| text_width(root, label, 14, k) * 11 / 10)
            .max()
            .unwrap_or(0);
        (k * (LEGEND_TEXT_X + 12) + longest_label)
            .max(k * LEGEND_WIDTH)
            .min(width * 2 / 5)
    }

    /// Draws one panel: its chart in `area`, left of its legend; `codes` are its codes'
    /// names, if it has them; the `last` panel has the time axis's description.
    fn draw_panel<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        layout: &Layout,
        panel: &Panel,
        codes: Option<&[(f64, String)]>,
        area: &DrawingArea<DB, Shift>,
        last: bool,
    ) -> Result<(), String> {
        let Layout { k, x_max, .. } = *layout;
        let px = |n: u32| n * k;
        let (chart_area, legend_area) =
            area.split_horizontally(layout.width.saturating_sub(layout.legend_width));
        let (lo, hi) = y_range(&panel.lines);
        // The codes' names at the codes, or plotters' own numbers.
        let y_keys = match codes {
            Some(codes) => codes.iter().map(|(v, _)| *v).collect(),
            None => RangedCoordf64::from(lo..hi).key_points(6),
        };
        let y_axis = YAxis {
            range: (lo..hi).into(),
            ticks: y_keys,
        };
        let mut chart = ChartBuilder::on(&chart_area)
            .caption(&panel.title, font(16, k))
            .margin_left(px(10))
            .margin_right(px(10))
            .margin_top(px(6))
            .x_label_area_size(px(if last { 50 } else { 30 }))
            .y_label_area_size(layout.y_label_width)
            .build_cartesian_2d(0.0..x_max, y_axis)
            .map_err(drawing_error)?;
        let x_ticks = |v: &f64| tick(*v, x_max);
        let y_ticks = |v: &f64| match codes {
            Some(codes) => codes
                .iter()
                .find(|(code, _)| code == v)
                .map_or_else(|| tick(*v, hi - lo), |(_, name)| name.clone()),
            None => tick(*v, hi - lo),
        };
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(TRANSPARENT)
            .x_label_formatter(&x_ticks)
            .y_label_formatter(&y_ticks)
            .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4).stroke_width(px(1)))
            .axis_style(RGBColor(0x88, 0x88, 0x88).stroke_width(px(1)))
            .set_all_tick_mark_size(px(4))
            .label_style(font(13, k))
            .axis_desc_style(font(14, k))
            .y_desc(&panel.y_label)
            .y_labels(6)
            .x_labels(12);
        if last {
            mesh.x_desc(&self.x_label);
        }
        mesh.draw().map_err(drawing_error)?;
        // The controller's gaps, under the lines.
        chart
            .draw_series(self.gaps.iter().map(|&g| {
                Rectangle::new(
                    [(self.x[g], lo), (self.x[g + 1], hi)],
                    GAP.mix(0.18).filled(),
                )
            }))
            .map_err(drawing_error)?;
        self.draw_lines(&mut chart, panel, (lo, hi), layout)?;
        let fits = layout.legend_width.saturating_sub(px(LEGEND_TEXT_X + 6));
        let labels: Vec<Vec<String>> = panel
            .lines
            .iter()
            .map(|(label, _)| {
                wrap(label, |text| {
                    text_width(root, text, 14, k) * 11 / 10 <= fits
                })
            })
            .collect();
        draw_legend(&legend_area, &labels, k).map_err(drawing_error)
    }

    /// Draws `panel`'s lines on `chart`, whose y axis spans `(lo, hi)`: broken at the
    /// gaps, as steps if the panel's values are codes.
    fn draw_lines<DB: DrawingBackend>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, YAxis>>,
        panel: &Panel,
        (lo, hi): (f64, f64),
        layout: &Layout,
    ) -> Result<(), String> {
        let k = layout.k;
        let (plot_w, plot_h) = chart.plotting_area().dim_in_pixel();
        // One data unit per pixel, in x and y.
        let per_px = (
            layout.x_max / f64::from(plot_w.max(1)),
            (hi - lo) / f64::from(plot_h.max(1)),
        );
        for (j, (_, values)) in panel.lines.iter().enumerate() {
            let color = PALETTE[j % PALETTE.len()];
            for segment in segments(&self.x, values, &self.gaps, plot_w.max(1) as usize) {
                let segment = if panel.codes.is_some() {
                    steps(&segment)
                } else {
                    segment
                };
                if k == 1 {
                    // Vector output: the viewer draws wide lines, and joins them well.
                    chart
                        .draw_series(LineSeries::new(segment, color.stroke_width(2)))
                        .map_err(drawing_error)?;
                    continue;
                }
                // The bitmap backend draws wide lines as polygons whose corners spike
                // where a line turns back on itself; a square brush of one-pixel lines
                // has no corners to spike.
                let t = k * 2;
                for (dx, dy) in (0..t).flat_map(|dx| (0..t).map(move |dy| (dx, dy))) {
                    let shift = |d: u32| f64::from(d) - f64::from(t - 1) / 2.0;
                    let (sx, sy) = (shift(dx) * per_px.0, shift(dy) * per_px.1);
                    let moved = segment.iter().map(|&(x, y)| (x + sx, y + sy));
                    chart
                        .draw_series(LineSeries::new(moved, color))
                        .map_err(drawing_error)?;
                }
            }
        }
        Ok(())
    }
}

/// Sizes every panel shares, in pixels of the (supersampled) picture.
struct Layout {
    /// The supersampling factor.
    k: u32,
    width: u32,
    /// The time axis's end, in seconds.
    x_max: f64,
    legend_width: u32,
    y_label_width: u32,
}

/// The y axis labels' width: one for every panel, so that their time axes line up; at most
/// a third of the picture, so that a small one keeps room for the lines.
fn y_label_width<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    named: &[Option<Vec<(f64, String)>>],
    k: u32,
    width: u32,
) -> u32 {
    named
        .iter()
        .flatten()
        .flatten()
        .map(|(_, name)| text_width(root, name, 13, k) + k * 14)
        .max()
        .unwrap_or(0)
        .clamp(k * Y_LABEL_WIDTH, (width / 3).max(k * Y_LABEL_WIDTH))
}

/// The text style of `size`, scaled by `k`.
fn font(size: u32, k: u32) -> TextStyle<'static> {
    (FONT, f64::from(size * k)).into_font().color(&INK)
}

/// How wide `text` is drawn at `size`, scaled by `k`.
fn text_width<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    text: &str,
    size: u32,
    k: u32,
) -> u32 {
    root.estimate_text_size(text, &font(size, k))
        .map_or(0, |(w, _)| w)
}

/// A drawing error, as the message `rtde plot` reports.
fn drawing_error<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> String {
    e.to_string()
}

/// A linear y axis with the ticks it is given: a panel's codes, or plotters' own numbers.
struct YAxis {
    range: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ranged for YAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.range.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // The light lines are not drawn.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.range()
    }
}

/// The legend, in its own column right of the panel: a line of each colour and its label,
/// one text line per element of `labels` (a label that did not fit, wrapped).
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    labels: &[Vec<String>],
    k: u32,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let k = i32::try_from(k).unwrap_or(1);
    let style = (FONT, f64::from(14 * k)).into_font().color(&INK);
    let text_x = i32::try_from(LEGEND_TEXT_X).unwrap_or(38) * k;
    let mut y = 44 * k;
    for (j, label) in labels.iter().enumerate() {
        let color = PALETTE[j % PALETTE.len()];
        area.draw(&PathElement::new(
            vec![(6 * k, y), (30 * k, y)],
            color.stroke_width(u32::try_from(3 * k).unwrap_or(3)),
        ))?;
        for line in label {
            area.draw(&Text::new(line.clone(), (text_x, y - 8 * k), style.clone()))?;
            y += 17 * k;
        }
        y += 7 * k;
    }
    Ok(())
}

/// A label in lines that fit, broken after `_`, space or `,`; a piece without a break
/// that does not fit stays whole, on a line of its own.
fn wrap(label: &str, fits: impl Fn(&str) -> bool) -> Vec<String> {
    if fits(label) {
        return vec![label.to_owned()];
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for piece in label.split_inclusive(['_', ' ', ',']) {
        let longer = format!("{line}{piece}");
        if line.is_empty() || fits(longer.trim_end()) {
            line = longer;
        } else {
            lines.push(line.trim_end().to_owned());
            line = piece.to_owned();
        }
    }
    if !line.is_empty() {
        lines.push(line.trim_end().to_owned());
    }
    lines
}

/// A line as steps: each value holds until the next sample, then changes at once; codes
/// have no values between them.
fn steps(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for (i, &(x, y)) in points.iter().enumerate() {
        if let Some(&(_, before)) = i.checked_sub(1).and_then(|i| points.get(i))
            && before != y
        {
            out.push((x, before));
        }
        out.push((x, y));
    }
    out
}

/// A tick label on an axis spanning `range`: as many decimals as the tick spacing needs,
/// and no `-0`.
fn tick(v: f64, range: f64) -> String {
    let step = range / 6.0;
    // 0 to 9 decimals: no truncation.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let decimals = if step > 0.0 && step.is_finite() {
        (-step.log10()).ceil().clamp(0.0, 9.0) as usize
    } else {
        1
    };
    let text = format!("{v:.decimals$}");
    match text.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_owned(),
        _ => text,
    }
}

/// The largest magnitude an axis reaches. Beyond it, an axis's span `hi - lo` could be
/// infinite, and plotters never finishes laying out its ticks; values beyond are clipped.
const AXIS_LIMIT: f64 = f64::MAX / 4.0;

/// The end of the time axis (which starts at 0): the largest finite time, within
/// [`AXIS_LIMIT`], and above 0.
fn x_span(x: &[f64]) -> f64 {
    x.iter()
        .copied()
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max)
        .clamp(1e-9, AXIS_LIMIT)
}

/// The y range of the lines, padded; finite, with a finite span, even for flat, empty or
/// extreme data.
fn y_range(lines: &[(String, Vec<f64>)]) -> (f64, f64) {
    let finite = lines.iter().flat_map(|(_, v)| v).filter(|v| v.is_finite());
    let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
        (lo.min(v), hi.max(v))
    });
    if !(lo.is_finite() && hi.is_finite()) {
        return (-1.0, 1.0);
    }
    let (lo, hi) = (
        lo.clamp(-AXIS_LIMIT, AXIS_LIMIT),
        hi.clamp(-AXIS_LIMIT, AXIS_LIMIT),
    );
    let pad = if hi > lo {
        (hi - lo) * 0.06
    } else {
        lo.abs().max(1.0) * 0.1
    };
    (lo - pad, hi + pad)
}

/// The typical time between rows (the median), and the rows after which time jumps by
/// more than one and a half of it: where the controller skipped packages.
fn gaps(x: &[f64]) -> (Vec<usize>, Option<f64>) {
    let mut steps: Vec<f64> = x
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|d| *d > 0.0)
        .collect();
    if steps.is_empty() {
        return (Vec::new(), None);
    }
    steps.sort_by(f64::total_cmp);
    let typical = steps[steps.len() / 2];
    let gaps = x
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[1] - w[0] > 1.5 * typical)
        .map(|(i, _)| i)
        .collect();
    (gaps, Some(typical))
}

/// The points of one line, split at gaps and at values that are no numbers, and thinned
/// to the lowest and highest point per pixel column where there are more points than
/// pixels (so peaks survive).
fn segments(x: &[f64], y: &[f64], gaps: &[usize], pixels: usize) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let mut current: Vec<(f64, f64)> = Vec::new();
    let mut next_gap = gaps.iter().peekable();
    for (i, (&xi, &yi)) in x.iter().zip(y).enumerate() {
        if xi.is_finite() && yi.is_finite() {
            current.push((xi, yi));
        } else if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        if next_gap.peek() == Some(&&i) {
            next_gap.next();
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    let span = x_span(x);
    out.into_iter()
        .map(|s| {
            if s.len() > 2 * pixels {
                thin(&s, span, pixels)
            } else {
                s
            }
        })
        .collect()
}

/// Keeps, per pixel column, the lowest and the highest point, in their order.
fn thin(points: &[(f64, f64)], span: f64, pixels: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(2 * pixels + 2);
    let column = |x: f64| {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // 0..=pixels
        let c = (x / span * pixels as f64).clamp(0.0, pixels as f64) as usize;
        c
    };
    let mut start = 0;
    while start < points.len() {
        let c = column(points[start].0);
        let mut end = start;
        while end < points.len() && column(points[end].0) == c {
            end += 1;
        }
        let bucket = &points[start..end];
        let lo = bucket
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.1.total_cmp(&b.1.1))
            .map_or(0, |(i, _)| i);
        let hi = bucket
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.1.total_cmp(&b.1.1))
            .map_or(0, |(i, _)| i);
        let (a, b) = (lo.min(hi), lo.max(hi));
        out.push(bucket[a]);
        if b != a {
            out.push(bucket[b]);
        }
        start = end;
    }
    out
}

/// A panel for every field of the table but `timestamp`, vectors grouped.
fn every_field(table: &Table) -> Vec<Panel> {
    let mut panels = Vec::new();
    let mut c = 0;
    while c < table.columns.len() {
        let column = &table.columns[c];
        if column == "timestamp" {
            c += 1;
            continue;
        }
        // `actual_q_0` starts the six columns of `actual_q`.
        let vector = column
            .strip_suffix("_0")
            .and_then(|base| lookup(Direction::Output, base))
            .filter(|f| width(f.wire_type()) > 1)
            .filter(|f| {
                columns_of(f)
                    .iter()
                    .enumerate()
                    .all(|(k, name)| table.columns.get(c + k) == Some(name))
            });
        match vector {
            Some(field) => {
                panels.extend(field_panels(table, field));
                c += width(field.wire_type());
            }
            None => {
                match lookup(Direction::Output, column) {
                    Some(field) => panels.extend(field_panels(table, field)),
                    None => panels.push(column_panel(table, column)),
                }
                c += 1;
            }
        }
    }
    panels
}

/// The panels of one requested name: a registry field whose columns the table has, or a
/// column of that name.
fn panels(table: &Table, name: &str, file: &str) -> Result<Vec<Panel>, String> {
    if let Some(field) = lookup_ignore_case(Direction::Output, name)
        && columns_of(field).iter().all(|c| table.column(c).is_some())
    {
        return Ok(field_panels(table, field));
    }
    if table.column(name).is_some() {
        return Ok(vec![column_panel(table, name)]);
    }
    let mut recorded: Vec<String> = every_field(table).into_iter().map(|p| p.name).collect();
    recorded.retain(|n| !n.ends_with("(rotation)"));
    Err(format!(
        "`{name}` is not in `{file}`, which has {}",
        recorded.join(", ")
    ))
}

/// The panels of a registry field: one, or two for a Cartesian vector (its position or
/// force, and its rotation or torque, which have other units and scales).
fn field_panels(table: &Table, field: &'static Field) -> Vec<Panel> {
    let lines: Vec<(String, Vec<f64>)> = columns_of(field)
        .iter()
        .zip(element_names(field))
        .map(|(c, label)| {
            let values = table.column(c).unwrap_or_default().to_vec();
            (label, values)
        })
        .collect();
    let labelled = |name: String, unit: Option<&str>| match unit {
        Some(unit) => format!("{name} [{unit}]"),
        None => name,
    };
    if !is_cartesian(field) {
        return vec![Panel {
            name: field.name().to_owned(),
            title: format!("{} — {}", field.name(), field.description()),
            y_label: labelled(field.name().to_owned(), field.unit()),
            lines,
            codes: rtde_core::code_names(field.name()),
        }];
    }
    // "m/s, rad/s": a unit for each half.
    let units: Vec<&str> = field
        .unit()
        .map_or_else(Vec::new, |u| u.split(", ").collect());
    let (linear, angular) = match units[..] {
        [a, b] => (Some(a), Some(b)),
        _ => (field.unit(), field.unit()),
    };
    let mut lines = lines;
    let mut rotation = lines.split_off(3);
    let mut rotation_title = format!("{} rx, ry, rz", field.name());
    if Pose::describes(field.name()) && unwrap_rotation(&mut rotation) > 0 {
        rotation_title.push_str(" (unwrapped: continuous across sign flips, |r| may exceed π)");
    }
    vec![
        Panel {
            name: field.name().to_owned(),
            title: format!("{} x, y, z — {}", field.name(), field.description()),
            y_label: labelled(format!("{} x, y, z", field.name()), linear),
            lines,
            codes: None,
        },
        Panel {
            name: format!("{} (rotation)", field.name()),
            title: rotation_title,
            y_label: labelled(format!("{} rx, ry, rz", field.name()), angular),
            lines: rotation,
            codes: None,
        },
    ]
}

/// Unwraps the rotation vector of each row near the row before it
/// ([`Pose::unwrapped_near`]); rows that are not numbers are skipped. Returns how many rows
/// it changed.
fn unwrap_rotation(lines: &mut [(String, Vec<f64>)]) -> usize {
    let [(_, rx), (_, ry), (_, rz)] = lines else {
        return 0;
    };
    let mut previous: Option<[f64; 3]> = None;
    let mut changed = 0;
    for ((x, y), z) in rx.iter_mut().zip(ry.iter_mut()).zip(rz.iter_mut()) {
        let raw = Pose::new(0.0, 0.0, 0.0, *x, *y, *z);
        if !raw.rotation_vector().iter().all(|c| c.is_finite()) {
            continue;
        }
        let unwrapped = match previous {
            Some(p) => raw.unwrapped_near(p),
            None => raw,
        };
        if unwrapped != raw {
            changed += 1;
        }
        [*x, *y, *z] = unwrapped.rotation_vector();
        previous = Some([*x, *y, *z]);
    }
    changed
}

/// Whether a field is a six-vector of x, y, z and rx, ry, rz (a pose, a speed, a wrench).
fn is_cartesian(field: &Field) -> bool {
    let name = field.name().to_ascii_lowercase();
    field.wire_type() == WireType::Vector6d
        && (name.contains("tcp") || name.contains("wrench") || name.contains("force"))
}

fn column_panel(table: &Table, column: &str) -> Panel {
    Panel {
        name: column.to_owned(),
        title: column.to_owned(),
        y_label: column.to_owned(),
        lines: vec![(
            column.to_owned(),
            table.column(column).unwrap_or_default().to_vec(),
        )],
        codes: None,
    }
}

/// What each element of a field is: joints, Cartesian axes, or indices.
fn element_names(field: &Field) -> Vec<String> {
    const JOINTS: [&str; 6] = ["base", "shoulder", "elbow", "wrist 1", "wrist 2", "wrist 3"];
    const POSE: [&str; 6] = ["x", "y", "z", "rx", "ry", "rz"];
    match field.wire_type() {
        WireType::Vector3d => ["x", "y", "z"].map(String::from).to_vec(),
        WireType::Vector6d if is_cartesian(field) => POSE.map(String::from).to_vec(),
        WireType::Vector6d | WireType::Vector6Int32 | WireType::Vector6Uint32 => {
            JOINTS.map(String::from).to_vec()
        }
        _ => vec![field.name().to_owned()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_are_finite_and_so_are_their_spans() {
        let line = |v: Vec<f64>| vec![("x".to_owned(), v)];
        for values in [
            vec![1e308, -1e308],
            vec![f64::MAX, f64::MIN, f64::NAN],
            vec![1.0],
        ] {
            let (lo, hi) = y_range(&line(values));
            assert!(lo < hi && (hi - lo).is_finite(), "{lo}..{hi}");
        }
        assert_eq!(x_span(&[0.0, 1.0, f64::INFINITY, 2.0]), 2.0);
        assert_eq!(x_span(&[0.0, 3.0, 1.0]), 3.0);
        assert_eq!(x_span(&[0.0, f64::NAN]), 1e-9);
        assert!(x_span(&[0.0, f64::MAX]).is_finite());
    }

    #[test]
    fn gaps_are_jumps_in_time() {
        let x = [0.0, 0.008, 0.016, 0.032, 0.040, 0.064, 0.072];
        assert_eq!(gaps(&x), (vec![2, 4], Some(0.008)));
        assert_eq!(gaps(&[0.0]), (vec![], None));
    }

    #[test]
    fn lines_break_at_gaps_and_non_numbers() {
        let x = [0.0, 1.0, 2.0, 4.0, 5.0, 6.0];
        let y = [1.0, 2.0, 3.0, 4.0, f64::NAN, 6.0];
        let s = segments(&x, &y, &[2], 100);
        assert_eq!(
            s,
            [
                vec![(0.0, 1.0), (1.0, 2.0), (2.0, 3.0)],
                vec![(4.0, 4.0)],
                vec![(6.0, 6.0)]
            ]
        );
    }

    #[test]
    fn thinning_keeps_the_extremes_of_each_pixel() {
        let points: Vec<(f64, f64)> = (0..1000)
            .map(|i| (f64::from(i), if i == 500 { 99.0 } else { f64::from(i % 7) }))
            .collect();
        let thinned = thin(&points, 999.0, 10);
        assert!(thinned.len() <= 22, "{}", thinned.len());
        assert!(thinned.contains(&(500.0, 99.0)));
        assert!(thinned.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn panels_are_labelled_with_the_registry_units() {
        let table = Table {
            columns: Vec::new(),
            values: Vec::new(),
        };
        let labels = |f: &str| -> Vec<String> {
            field_panels(&table, lookup(Direction::Output, f).unwrap())
                .into_iter()
                .map(|p| p.y_label)
                .collect()
        };
        assert_eq!(labels("actual_q"), ["actual_q [rad]"]);
        assert_eq!(
            labels("actual_TCP_pose"),
            [
                "actual_TCP_pose x, y, z [m]",
                "actual_TCP_pose rx, ry, rz [rad]"
            ]
        );
        assert_eq!(
            labels("actual_TCP_force"),
            [
                "actual_TCP_force x, y, z [N]",
                "actual_TCP_force rx, ry, rz [Nm]"
            ]
        );
        assert_eq!(labels("robot_mode"), ["robot_mode"]);
    }

    #[test]
    fn elements_are_named_for_what_they_are() {
        let names = |f: &str| element_names(lookup(Direction::Output, f).unwrap());
        assert_eq!(names("actual_q")[0], "base");
        assert_eq!(names("actual_TCP_pose")[3], "rx");
        assert_eq!(names("actual_tool_accelerometer"), ["x", "y", "z"]);
        assert_eq!(names("robot_mode"), ["robot_mode"]);
    }

    #[test]
    fn labels_wrap_after_underscores_and_spaces_only_when_too_long() {
        let fits = |n: usize| move |t: &str| t.len() <= n;
        assert_eq!(
            wrap("actual_digital_input_bits", fits(30)),
            ["actual_digital_input_bits"]
        );
        assert_eq!(
            wrap("actual_digital_input_bits", fits(15)),
            ["actual_digital_", "input_bits"]
        );
        assert_eq!(wrap("wrist 1", fits(3)), ["wrist", "1"]);
        assert_eq!(wrap("unbreakable", fits(3)), ["unbreakable"]);
    }

    #[test]
    fn codes_hold_until_the_next_sample() {
        assert_eq!(
            steps(&[(0.0, 3.0), (1.0, 3.0), (2.0, 5.0), (3.0, 7.0)]),
            [
                (0.0, 3.0),
                (1.0, 3.0),
                (2.0, 3.0),
                (2.0, 5.0),
                (3.0, 5.0),
                (3.0, 7.0)
            ]
        );
        assert!(steps(&[]).is_empty());
    }

    #[test]
    fn ticks_have_the_decimals_their_spacing_needs() {
        assert_eq!(tick(-0.0001, 1.0), "0.0");
        assert_eq!(tick(0.4, 1.0), "0.4");
        assert_eq!(tick(2.0, 4.0), "2.0");
        assert_eq!(tick(40.0, 100.0), "40");
        assert_eq!(tick(0.0125, 0.05), "0.013");
        assert_eq!(tick(125.0, 1.0), "125.0");
    }

    #[test]
    fn the_default_size_stays_within_what_size_allows() {
        assert_eq!(default_size(1), (1200, 360));
        assert_eq!(default_size(3), (1200, 960));
        assert_eq!(default_size(400), (1200, MAX_SIDE));
        assert_eq!(default_size(usize::MAX), (1200, MAX_SIDE));
    }

    #[test]
    fn sizes() {
        assert_eq!(size("1600x900"), Ok((1600, 900)));
        assert!(size("10x10").is_err());
        assert!(size("wide").is_err());
    }
}
