//! Figures as data ([`Figure`]: panels of lines, horizontal bars or a heat map) and their
//! drawing with plotters into PNG and SVG, using the embedded DejaVu Sans font.
//!
//! Figure builders (`figures/`) only fill these structures; everything about pixels lives
//! here. Legends are drawn below each plot, never over the data; model predictions are dashed
//! lines with hollow markers, measured/simulated data solid lines with filled markers.

mod bars;
mod frame;
mod heat;
mod lines;
mod place;
mod raster;
mod render;

pub use render::MAX_FIGURE_WIDTH;

use std::path::Path;
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use super::ReportError;

/// The font family every figure uses (registered from the embedded DejaVu Sans).
const FONT: &str = "sans-serif";

/// Registers the embedded font once per process; without it ab_glyph has nothing to draw with.
fn ensure_font() -> Result<(), ReportError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        register_font(FONT, FontStyle::Normal, dejavu::sans::regular()).is_ok()
            && register_font(FONT, FontStyle::Bold, dejavu::sans::bold()).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(ReportError::Figure {
            figure: "(font)".into(),
            message: "the embedded DejaVu Sans font could not be registered".into(),
        })
    }
}

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Colour(pub u8, pub u8, pub u8);

impl Colour {
    fn rgb(self) -> RGBColor {
        RGBColor(self.0, self.1, self.2)
    }
}

/// Colour-blind-safe palette (Okabe–Ito, then a few distinct extras).
pub const PALETTE: [Colour; 10] = [
    Colour(0, 114, 178),   // blue
    Colour(213, 94, 0),    // vermillion
    Colour(0, 158, 115),   // green
    Colour(230, 159, 0),   // orange
    Colour(204, 121, 167), // purple
    Colour(86, 180, 233),  // sky
    Colour(120, 120, 120), // grey
    Colour(160, 130, 0),   // dark yellow
    Colour(140, 86, 75),   // brown
    Colour(60, 60, 160),   // indigo
];

/// Variants whose colour is the same in every figure (row order is always blue, …).
const FIXED_COLOURS: &[(&str, usize)] = &[
    ("row-sum", 0),
    ("row", 0),
    ("row-major", 0),
    ("col-sum", 1),
    ("col", 1),
    ("naive-read", 3),
    ("naive-write", 1),
    ("blocked", 2),
    ("fast", 0),
    ("tile-major", 2),
    ("copy", 0),
    ("read", 2),
    ("compulsory", 6),
    ("capacity", 5),
    ("conflict", 1),
    ("timed", 0),
    ("simulated", 2),
];

/// The colour of a named variant: fixed for known variants, else the `fallback`-th palette slot.
pub fn colour_for(variant: &str, fallback: usize) -> Colour {
    FIXED_COLOURS
        .iter()
        .find(|(name, _)| *name == variant)
        .map(|&(_, i)| PALETTE[i])
        .unwrap_or(PALETTE[fallback % PALETTE.len()])
}

/// How an axis maps values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Values are drawn at log2(v); ticks are labelled with v.
    Log2,
    /// Values are drawn at log10(v).
    Log10,
}

/// How tick values are printed.
#[derive(Debug, Clone, PartialEq)]
pub enum TickFormat {
    Number,
    /// Whole numbers only (counts): other ticks stay blank.
    Integer,
    /// Sizes in bytes (4 KiB, 32 MiB).
    Bytes,
    /// Ticks at 0, 1, 2, … named by these labels.
    Categories(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// Axis description with its unit, e.g. "time per access (ns)".
    pub label: String,
    pub scale: Scale,
    pub ticks: TickFormat,
    /// Force the axis to include 0 (linear scales only).
    pub from_zero: bool,
    /// A fixed plotted range (data units), e.g. 0..1 for miss rates, so that noise near zero
    /// is not blown up to fill the panel.
    pub fixed: Option<(f64, f64)>,
}

impl Axis {
    pub fn linear(label: &str) -> Self {
        Self {
            label: label.into(),
            scale: Scale::Linear,
            ticks: TickFormat::Number,
            from_zero: true,
            fixed: None,
        }
    }
    /// A linear axis fixed to 0..1 (fractions, miss rates).
    pub fn fraction(label: &str) -> Self {
        Self {
            fixed: Some((0.0, 1.05)),
            ..Self::linear(label)
        }
    }
    pub fn log2_bytes(label: &str) -> Self {
        Self {
            label: label.into(),
            scale: Scale::Log2,
            ticks: TickFormat::Bytes,
            from_zero: false,
            fixed: None,
        }
    }
    pub fn log2(label: &str) -> Self {
        Self {
            label: label.into(),
            scale: Scale::Log2,
            ticks: TickFormat::Number,
            from_zero: false,
            fixed: None,
        }
    }
    pub fn log10(label: &str) -> Self {
        Self {
            label: label.into(),
            scale: Scale::Log10,
            ticks: TickFormat::Number,
            from_zero: false,
            fixed: None,
        }
    }
    pub fn categories(label: &str, names: Vec<String>) -> Self {
        Self {
            label: label.into(),
            scale: Scale::Linear,
            ticks: TickFormat::Categories(names),
            from_zero: false,
            fixed: None,
        }
    }

    fn to_plot(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => v,
            Scale::Log2 => v.log2(),
            Scale::Log10 => v.log10(),
        }
    }

    fn value_at(&self, p: f64) -> f64 {
        match self.scale {
            Scale::Linear => p,
            Scale::Log2 => p.exp2(),
            Scale::Log10 => 10f64.powf(p),
        }
    }

    fn accepts(&self, v: f64) -> bool {
        v.is_finite() && (self.scale == Scale::Linear || v > 0.0)
    }

    fn tick_label(&self, p: f64) -> String {
        if let TickFormat::Categories(names) = &self.ticks {
            let i = p.round();
            if (p - i).abs() > 1e-6 || i < 0.0 {
                return String::new();
            }
            return names.get(i as usize).cloned().unwrap_or_default();
        }
        // Log axes label only whole powers: the others would read as arbitrary numbers.
        if self.scale != Scale::Linear && (p - p.round()).abs() > 1e-6 {
            return String::new();
        }
        let v = self.value_at(p);
        if self.ticks == TickFormat::Integer && (v - v.round()).abs() > 1e-6 {
            return String::new();
        }
        self.tick_text(v)
    }

    /// The label of tick value `v` (data units).
    fn tick_text(&self, v: f64) -> String {
        match self.ticks {
            TickFormat::Bytes => format_bytes(v),
            _ => trim_fraction(format_number(v)),
        }
    }
}

/// The values a log axis labels over the plotted range `lo..hi` (log coordinates), at most
/// `room` of them: whole powers of 2 (thinned to every 2nd, 4th, … power when crowded); for
/// base 10, 1-2-5 steps when the range spans fewer than three decades (1-2-3-5 within one),
/// else the whole powers. A range too narrow for two such values gets its ends' round values.
pub fn log_ticks(scale: Scale, lo: f64, hi: f64, room: usize) -> Vec<f64> {
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    if !(lo.is_finite() && hi.is_finite()) || hi - lo > 4096.0 {
        return Vec::new();
    }
    let room = room.max(2);
    let inside = |p: f64| p >= lo - 1e-9 && p <= hi + 1e-9;
    let mut ticks: Vec<f64> = match scale {
        Scale::Linear => return Vec::new(),
        Scale::Log2 => {
            let powers: Vec<f64> = (lo.ceil() as i64..=hi.floor() as i64)
                .map(|n| n as f64)
                .collect();
            let step = powers.len().div_ceil(room).max(1) as i64;
            powers
                .into_iter()
                .filter(|n| (*n as i64).rem_euclid(step) == 0)
                .map(f64::exp2)
                .collect()
        }
        Scale::Log10 => {
            let span = hi - lo;
            let mantissas: &[f64] = if span < 1.0 {
                &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0]
            } else if span < 3.0 {
                &[1.0, 2.0, 5.0]
            } else {
                &[1.0]
            };
            let mut ticks: Vec<f64> = (lo.floor() as i64..=hi.ceil() as i64)
                .flat_map(|d| mantissas.iter().map(move |m| m * 10f64.powi(d as i32)))
                .filter(|v| inside(v.log10()))
                .collect();
            while ticks.len() > room {
                ticks = ticks.into_iter().step_by(2).collect();
            }
            ticks
        }
    };
    if ticks.len() < 2 {
        // Too narrow for round values: label the ends, rounded to two significant digits.
        let base = if scale == Scale::Log2 { 2f64 } else { 10f64 };
        let round = |v: f64| {
            let magnitude = 10f64.powi(v.log10().floor() as i32 - 1);
            (v / magnitude).round() * magnitude
        };
        ticks = [lo, hi]
            .iter()
            .map(|p| round(base.powf(*p)))
            .filter(|v| inside(v.log(base)))
            .collect();
        ticks.dedup();
    }
    ticks
}

/// `0.800` → `0.8`, `2.50` → `2.5`, `3.00` → `3`: a tick shows the digits its step has, and
/// ticks fall on round steps (1, 2 or 5 × 10^k), so trailing zeros carry nothing.
fn trim_fraction(text: String) -> String {
    if !text.contains('.') || text.contains('e') {
        return text;
    }
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `4 KiB`, `32 MiB`, `8 B`: the crate's one byte formatter, where the figures look for it.
pub use stridelab_core::units::format_bytes;

/// A compact number for ticks and tables: 3 significant digits, no exponent for common ranges.
pub fn format_number(v: f64) -> String {
    if !v.is_finite() {
        return "—".into();
    }
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 1e6 {
        format!("{v:.3e}")
    } else if a >= 100.0 || (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.001 {
        format!("{v:.3}")
    } else {
        format!("{v:.2e}")
    }
}

/// Whether a series is data or the model's prediction (drawn dashed, hollow markers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeriesKind {
    Data,
    Model,
    /// Legend only: a filled square (bar charts).
    Bar,
    /// Data at points that were measured apart: filled markers, no line joining them.
    Markers,
    /// The model at those points: hollow markers, no line.
    ModelMarkers,
    /// Short vertical ticks at the points (a rug): where something was simulated and found
    /// nothing, drawn so that many of them stay apart.
    Rug,
}

/// One point, with an optional confidence interval on y.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct XY {
    pub x: f64,
    pub y: f64,
    pub ci: Option<(f64, f64)>,
}

impl XY {
    pub fn new(x: f64, y: f64) -> Self {
        Self { x, y, ci: None }
    }
    pub fn with_ci(x: f64, y: f64, ci: Option<(f64, f64)>) -> Self {
        Self { x, y, ci }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub colour: Colour,
    pub kind: SeriesKind,
    pub points: Vec<XY>,
}

/// A labelled reference line (cache sizes, the line size, ways).
#[derive(Debug, Clone, PartialEq)]
pub struct RefLine {
    pub at: f64,
    pub label: String,
    /// Where a vertical line's label sits on the y axis (`None`: near the top, staggered),
    /// for panels whose data crowd the top.
    pub label_y: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LinePanel {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    /// Vertical reference lines (x values).
    pub vlines: Vec<RefLine>,
    /// Horizontal reference lines (y values).
    pub hlines: Vec<RefLine>,
}

/// Horizontal bars: one row per category, one bar per series (side by side or stacked).
#[derive(Debug, Clone, PartialEq)]
pub struct BarPanel {
    pub title: String,
    pub categories: Vec<String>,
    pub value_axis: Axis,
    pub series: Vec<BarSeries>,
    pub stacked: bool,
    /// Vertical reference lines on the value axis.
    pub vlines: Vec<RefLine>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    pub name: String,
    pub colour: Colour,
    /// One value per category (None: no bar).
    pub values: Vec<Option<f64>>,
    pub ci: Vec<Option<(f64, f64)>>,
}

/// A heat map of `values[row][column]`, each cell labelled with its value.
#[derive(Debug, Clone, PartialEq)]
pub struct HeatPanel {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub columns: Vec<String>,
    pub rows: Vec<String>,
    pub values: Vec<Vec<Option<f64>>>,
    /// What a cell's value is, with its unit (shown in the colour key).
    pub value_label: String,
    /// A horizontal divider drawn above row index `.0`, labelled `.1` (e.g. "ways = 8").
    pub divider: Option<(usize, String)>,
    /// Short marks drawn in cells (column, row, text), e.g. "TLB?".
    pub marks: Vec<(usize, usize, String)>,
    /// How values map to colours.
    pub scale: ColourScale,
}

/// How a heat map's values map to its colours.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ColourScale {
    /// Logarithmic over the positive values (times: a 3× jump looks alike at any baseline);
    /// zero and missing cells are grey.
    Log,
    /// Linear over a fixed range (fractions such as misses per load: 0 is a colour too).
    Linear(f64, f64),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Panel {
    Lines(LinePanel),
    Bars(BarPanel),
    Heat(HeatPanel),
}

/// One figure: a title, where its numbers come from, and one or more panels side by side.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    /// File stem (`fig01-miss-rate-vs-stride`).
    pub id: String,
    pub title: String,
    /// Provenance line drawn under the title: timed / measured / simulated (geometry) / model.
    pub provenance: String,
    pub panels: Vec<Panel>,
    /// Width of one panel in pixels.
    pub panel_width: u32,
    /// Height of the plot part of a panel (the legend adds to it).
    pub panel_height: u32,
}

/// Series that coincide are drawn once. Two series coincide when they share at least one x
/// and their y differ by at most `tolerance` (relative, or absolute below 1e-12) at every
/// shared x. A group keeps its first member's colour and kind, takes the union of the points
/// and joins the names with " = ". Returns the series to draw and, per merged group of two or
/// more, the members' names (for the reading guide to say they coincide).
pub fn merge_coinciding(series: Vec<Series>, tolerance: f64) -> (Vec<Series>, Vec<Vec<String>>) {
    let mut groups: Vec<(Series, Vec<String>)> = Vec::new();
    for s in series {
        match groups.iter_mut().find(|(g, _)| coincide(g, &s, tolerance)) {
            Some((group, names)) => {
                for p in &s.points {
                    if !group.points.iter().any(|q| q.x == p.x) {
                        group.points.push(*p);
                    }
                }
                group.points.sort_by(|a, b| a.x.total_cmp(&b.x));
                names.push(s.name.clone());
                if !s.name.is_empty() {
                    group.name = format!("{} = {}", group.name, s.name);
                }
            }
            None => {
                let name = s.name.clone();
                groups.push((s, vec![name]));
            }
        }
    }
    let merged = groups
        .iter()
        .filter(|(_, names)| names.len() > 1)
        .map(|(_, names)| names.clone())
        .collect();
    (groups.into_iter().map(|(s, _)| s).collect(), merged)
}

/// Whether `a` and `b` share an x and agree within `tolerance` at every shared x.
fn coincide(a: &Series, b: &Series, tolerance: f64) -> bool {
    let mut shared = 0;
    for p in &a.points {
        if let Some(q) = b.points.iter().find(|q| q.x == p.x) {
            let scale = p.y.abs().max(q.y.abs());
            if (p.y - q.y).abs() > tolerance * scale && (p.y - q.y).abs() > 1e-12 {
                return false;
            }
            shared += 1;
        }
    }
    shared > 0
}

#[cfg(test)]
mod tests {
    use super::lines::{AXIS_LIMIT, clear_of_axis, plot_range, sane_range};
    use super::*;

    #[test]
    fn byte_and_number_formats() {
        let cases: &[(f64, &str)] = &[
            (8.0, "8 B"),
            (4096.0, "4 KiB"),
            (4104.0, "4.0 KiB"),
            (32.0 * 1024.0 * 1024.0, "32 MiB"),
            (f64::NAN, "—"),
        ];
        for (v, s) in cases {
            assert_eq!(format_bytes(*v), *s, "{v}");
        }
        assert_eq!(format_number(4.56789), "4.57");
        assert_eq!(format_number(0.0123), "0.012");
        assert_eq!(format_number(1234.0), "1234");
        assert_eq!(format_number(f64::INFINITY), "—");
    }

    #[test]
    fn log_ticks_label_only_whole_powers() {
        let axis = Axis::log2_bytes("stride (bytes)");
        assert_eq!(axis.tick_label(12.0), "4 KiB");
        assert_eq!(axis.tick_label(12.5), "");
        let linear = Axis::fraction("misses per load");
        for (v, label) in [
            (0.8, "0.8"),
            (0.25, "0.25"),
            (1.0, "1"),
            (2.5, "2.5"),
            (0.0, "0"),
        ] {
            assert_eq!(linear.tick_label(v), label, "{v}");
        }
        let cats = Axis::categories("n", vec!["a".into(), "b".into()]);
        assert_eq!(cats.tick_label(1.0), "b");
        assert_eq!(cats.tick_label(0.5), "");
        assert_eq!(cats.tick_label(2.0), "");
    }

    #[test]
    fn log_axes_get_round_ticks_even_within_one_decade() {
        let ln = |a: f64, b: f64| (a.log10(), b.log10());
        // 1.1 to 170 ns: 1-2-5 steps.
        let (lo, hi) = ln(1.1, 170.0);
        assert_eq!(
            log_ticks(Scale::Log10, lo, hi, 10),
            [2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        );
        // Within one decade (1.2 to 8 ns) there are still several labels.
        let (lo, hi) = ln(1.2, 8.0);
        assert_eq!(
            log_ticks(Scale::Log10, lo, hi, 10),
            [1.5, 2.0, 3.0, 5.0, 7.0]
        );
        // Many decades: whole powers only.
        assert_eq!(
            log_ticks(Scale::Log10, -1.0, 3.0, 10),
            [0.1, 1.0, 10.0, 100.0, 1000.0]
        );
        // Powers of two, thinned to the room there is.
        assert_eq!(
            log_ticks(Scale::Log2, 2.0, 6.0, 10),
            [4.0, 8.0, 16.0, 32.0, 64.0]
        );
        assert_eq!(log_ticks(Scale::Log2, 0.0, 20.0, 6).len(), 6);
        // Narrower than one round step: the ends, rounded.
        let (lo, hi) = ln(4.2, 4.6);
        let ends = log_ticks(Scale::Log10, lo, hi, 10);
        assert_eq!(ends.len(), 2);
        assert!(
            (ends[0] - 4.2).abs() < 1e-9 && (ends[1] - 4.6).abs() < 1e-9,
            "{ends:?}"
        );
        assert!(log_ticks(Scale::Linear, 0.0, 1.0, 5).is_empty());
        assert!(log_ticks(Scale::Log2, f64::NAN, 1.0, 5).is_empty());
    }

    #[test]
    fn axis_ranges_are_finite_and_wide_whatever_the_values() {
        let cases: &[(&[f64], bool)] = &[
            (&[1e308, -1e308], false),
            (&[f64::MAX, f64::MIN], true),
            (&[1e300, 1e300 * (1.0 + 1e-16)], false),
            (&[f64::INFINITY, 1.0], false),
            (&[5e-324, 0.0], true),
            (&[-1e200], false),
        ];
        for &(values, from_zero) in cases {
            let (lo, hi) = plot_range(values, from_zero, 0.08);
            assert!(lo.is_finite() && hi.is_finite(), "{values:?}: {lo} {hi}");
            assert!(hi > lo && (hi - lo).is_finite(), "{values:?}: {lo} {hi}");
            assert!(
                lo >= -AXIS_LIMIT && hi <= AXIS_LIMIT,
                "{values:?}: {lo} {hi}"
            );
        }
        assert_eq!(sane_range(f64::NAN, f64::NAN), (-1.0, 1.0));
        assert_eq!(sane_range(3.0, 1.0), (1.0, 3.0));
    }

    #[test]
    fn ranges_are_padded_and_never_empty() {
        assert_eq!(plot_range(&[], true, 0.1), (0.0, 1.0));
        let (lo, hi) = plot_range(&[2.0, 2.0], false, 0.1);
        assert!(lo < 2.0 && hi > 2.0);
        let (lo, hi) = plot_range(&[1.0, 3.0, f64::NAN], true, 0.0);
        assert_eq!((lo, hi), (0.0, 3.0));
    }

    #[test]
    fn a_point_on_the_bottom_of_the_range_gets_room_under_it() {
        // (range bottom, top, lowest point, the bottom drawn)
        let cases: &[(f64, f64, f64, f64)] = &[
            // Misses per load fixed to 0..1.05 with points at 0: the axis moves below them.
            (0.0, 1.05, 0.0, -0.0315),
            // Nothing at the bottom: the range stays.
            (0.0, 1.05, 0.25, 0.0),
            (1.0, 2.0, 1.5, 1.0),
            // No points at all.
            (0.0, 1.0, f64::INFINITY, 0.0),
        ];
        for &(y0, y1, lowest, want) in cases {
            let got = clear_of_axis(y0, y1, lowest);
            assert!(
                (got - want).abs() < 1e-12,
                "{y0}..{y1} lowest {lowest}: {got}"
            );
        }
    }

    #[test]
    fn coinciding_series_are_drawn_once_with_their_names_joined() {
        let line = |name: &str, pts: &[(f64, f64)]| Series {
            name: name.into(),
            colour: PALETTE[0],
            kind: SeriesKind::Data,
            points: pts.iter().map(|&(x, y)| XY::new(x, y)).collect(),
        };
        let (drawn, merged) = merge_coinciding(
            vec![
                line("L1d", &[(8.0, 0.125), (64.0, 1.0)]),
                line("L2", &[(8.0, 0.125), (64.0, 1.0)]),
                line("f32", &[(4.0, 0.06), (8.0, 0.125)]),
                line("other", &[(8.0, 0.5)]),
                line("apart", &[(1000.0, 1.0)]),
            ],
            1e-9,
        );
        let names: Vec<&str> = drawn.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["L1d = L2 = f32", "other", "apart"]);
        assert_eq!(drawn[0].points.len(), 3, "the union of the points");
        assert_eq!(
            merged,
            vec![vec!["L1d".to_string(), "L2".into(), "f32".into()]]
        );
    }

    #[test]
    fn known_variants_keep_their_colour() {
        assert_eq!(colour_for("row-sum", 5), colour_for("row", 7));
        assert_ne!(colour_for("row-sum", 0), colour_for("col-sum", 0));
        assert_eq!(colour_for("something", 3), PALETTE[3]);
    }
}
