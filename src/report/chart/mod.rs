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
mod render;

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
        match self.ticks {
            TickFormat::Bytes => format_bytes(v),
            _ => trim_fraction(format_number(v)),
        }
    }
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
pub use crate::units::format_bytes;

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

#[cfg(test)]
mod tests {
    use super::lines::{AXIS_LIMIT, plot_range, sane_range};
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
    fn known_variants_keep_their_colour() {
        assert_eq!(colour_for("row-sum", 5), colour_for("row", 7));
        assert_ne!(colour_for("row-sum", 0), colour_for("col-sum", 0));
        assert_eq!(colour_for("something", 3), PALETTE[3]);
    }
}
