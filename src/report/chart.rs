//! Figures as data ([`Figure`]: panels of lines, horizontal bars or a heat map) and their
//! drawing with plotters into PNG and SVG, using the embedded DejaVu Sans font.
//!
//! Figure builders (`figures.rs`) only fill these structures; everything about pixels lives
//! here. Legends are drawn below each plot, never over the data; model predictions are dashed
//! lines with hollow markers, measured/simulated data solid lines with filled markers.

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
            _ => format_number(v),
        }
    }
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

/// Height of the title line; each provenance line adds [`PROVENANCE_LINE`].
const TITLE_HEIGHT: u32 = 44;
const PROVENANCE_LINE: u32 = 18;
const LEGEND_ROW: u32 = 20;

impl Figure {
    /// The provenance text broken into lines that fit the figure's width.
    fn provenance_lines(&self) -> Vec<String> {
        let width = self.panel_width * self.columns() as u32;
        let max_chars = ((width.saturating_sub(28)) / 7).max(20) as usize;
        let mut lines = Vec::new();
        let mut current = String::new();
        for word in self.provenance.split(' ') {
            if !current.is_empty() && current.chars().count() + 1 + word.chars().count() > max_chars
            {
                lines.push(std::mem::take(&mut current));
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(word);
        }
        if !current.is_empty() {
            lines.push(current);
        }
        lines
    }

    fn head_height(&self) -> u32 {
        TITLE_HEIGHT + PROVENANCE_LINE * self.provenance_lines().len() as u32 + 6
    }

    fn columns(&self) -> usize {
        self.panels.len().clamp(1, 3)
    }

    fn legend_rows(&self, panel: &Panel) -> u32 {
        let names: Vec<&str> = match panel {
            Panel::Lines(p) => p
                .series
                .iter()
                .map(|s| s.name.as_str())
                .filter(|n| !n.is_empty())
                .collect(),
            Panel::Bars(p) => p.series.iter().map(|s| s.name.as_str()).collect(),
            Panel::Heat(_) => return 1,
        };
        let (_, rows) = legend_grid(&names, self.panel_width);
        rows
    }

    fn cell_height(&self) -> u32 {
        let legend = self
            .panels
            .iter()
            .map(|p| self.legend_rows(p))
            .max()
            .unwrap_or(0);
        self.panel_height + legend * LEGEND_ROW + 10
    }

    /// Pixel size of the whole figure.
    pub fn size(&self) -> (u32, u32) {
        let cols = self.columns() as u32;
        let rows = self.panels.len().div_ceil(self.columns()).max(1) as u32;
        (
            self.panel_width * cols,
            self.head_height() + rows * self.cell_height(),
        )
    }

    /// Draws the figure as `<dir>/<id>.png` and `<dir>/<id>.svg`.
    pub fn render(&self, dir: &Path) -> Result<(), ReportError> {
        ensure_font()?;
        let size = self.size();
        let err = |message: String| ReportError::Figure {
            figure: self.id.clone(),
            message,
        };
        let png = dir.join(format!("{}.png", self.id));
        {
            let root = BitMapBackend::new(&png, size).into_drawing_area();
            self.draw(&root).map_err(err)?;
            root.present().map_err(|e| err(e.to_string()))?;
        }
        let svg = dir.join(format!("{}.svg", self.id));
        {
            let root = SVGBackend::new(&svg, size).into_drawing_area();
            self.draw(&root).map_err(err)?;
            root.present().map_err(|e| err(e.to_string()))?;
        }
        Ok(())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), String> {
        let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
        root.fill(&WHITE).map_err(e)?;
        let (head, body) = root.split_vertically(self.head_height());
        head.draw_text(
            &self.title,
            &TextStyle::from((FONT, 21).into_font().style(FontStyle::Bold)).color(&BLACK),
            (14, 8),
        )
        .map_err(e)?;
        for (i, line) in self.provenance_lines().iter().enumerate() {
            head.draw_text(
                line,
                &TextStyle::from((FONT, 14).into_font()).color(&RGBColor(80, 80, 80)),
                (14, 38 + (i as u32 * PROVENANCE_LINE) as i32),
            )
            .map_err(e)?;
        }
        let cols = self.columns();
        let rows = self.panels.len().div_ceil(cols).max(1);
        let cells = body.split_evenly((rows, cols));
        for (panel, cell) in self.panels.iter().zip(cells.iter()) {
            let (plot, legend) = cell.split_vertically(self.panel_height);
            match panel {
                Panel::Lines(p) => {
                    draw_lines(&plot, p)?;
                    let entries: Vec<(String, Colour, SeriesKind)> = p
                        .series
                        .iter()
                        .map(|s| (s.name.clone(), s.colour, s.kind))
                        .collect();
                    draw_legend(&legend, &entries, self.panel_width)?;
                }
                Panel::Bars(p) => {
                    draw_bars(&plot, p)?;
                    let entries: Vec<(String, Colour, SeriesKind)> = p
                        .series
                        .iter()
                        .map(|s| (s.name.clone(), s.colour, SeriesKind::Bar))
                        .collect();
                    draw_legend(&legend, &entries, self.panel_width)?;
                }
                Panel::Heat(p) => draw_heat(&plot, &legend, p)?,
            }
        }
        Ok(())
    }
}

/// Columns and rows of a legend for these names in a panel this wide.
fn legend_grid(names: &[&str], width: u32) -> (u32, u32) {
    if names.is_empty() {
        return (1, 0);
    }
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(1) as u32;
    let entry = longest * 7 + 40;
    let cols = (width.saturating_sub(20) / entry).clamp(1, names.len() as u32);
    (cols, (names.len() as u32).div_ceil(cols))
}

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, Colour, SeriesKind)],
    width: u32,
) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let entries: Vec<&(String, Colour, SeriesKind)> =
        entries.iter().filter(|(n, _, _)| !n.is_empty()).collect();
    let names: Vec<&str> = entries.iter().map(|(n, _, _)| n.as_str()).collect();
    let (cols, _) = legend_grid(&names, width);
    let col_width = (width.saturating_sub(20)) / cols;
    let style = TextStyle::from((FONT, 13).into_font()).color(&BLACK);
    for (i, (name, colour, kind)) in entries.iter().enumerate() {
        let (c, r) = (i as u32 % cols, i as u32 / cols);
        let x = 20 + (c * col_width) as i32;
        let y = 4 + (r * LEGEND_ROW) as i32 + 7;
        let shape = ShapeStyle::from(colour.rgb()).stroke_width(2);
        match kind {
            SeriesKind::Data => {
                area.draw(&PathElement::new(vec![(x, y), (x + 24, y)], shape))
                    .map_err(e)?;
                area.draw(&Circle::new((x + 12, y), 3, shape.filled()))
                    .map_err(e)?;
            }
            SeriesKind::Bar => {
                area.draw(&Rectangle::new(
                    [(x + 4, y - 6), (x + 20, y + 6)],
                    colour.rgb().filled(),
                ))
                .map_err(e)?;
            }
            SeriesKind::Model => {
                area.draw(&DashedPathElement::new(
                    vec![(x, y), (x + 24, y)],
                    5,
                    3,
                    shape,
                ))
                .map_err(e)?;
                area.draw(&Circle::new((x + 12, y), 3, shape)).map_err(e)?;
            }
        }
        area.draw_text(name, &style, (x + 30, y - 7)).map_err(e)?;
    }
    Ok(())
}

/// The plotted range of some values, padded; `from_zero` includes 0.
fn plot_range(values: &[f64], from_zero: bool, pad_fraction: f64) -> (f64, f64) {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() {
        return (0.0, 1.0);
    }
    let mut lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let mut hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if from_zero {
        lo = lo.min(0.0);
        hi = hi.max(0.0);
    }
    if (hi - lo).abs() < 1e-12 {
        let d = if lo.abs() > 1e-12 {
            lo.abs() * 0.1
        } else {
            1.0
        };
        return sane_range(lo - d, hi + d);
    }
    let pad = (hi - lo) * pad_fraction;
    let lo = if from_zero && lo >= 0.0 { lo } else { lo - pad };
    sane_range(lo, hi + pad)
}

/// Largest magnitude an axis end may have: plotters' tick search divides the span into steps,
/// and a span that is infinite (or that f64 cannot split) never ends.
const AXIS_LIMIT: f64 = 1e150;

/// Every axis range handed to plotters: finite, within ±[`AXIS_LIMIT`], and wide enough that
/// its ends differ in f64 (defence in depth: documents are validated on load, but a figure
/// must not hang whatever it is given).
fn sane_range(lo: f64, hi: f64) -> (f64, f64) {
    let clamp = |v: f64| {
        if v.is_nan() {
            0.0
        } else {
            v.clamp(-AXIS_LIMIT, AXIS_LIMIT)
        }
    };
    let (lo, hi) = (clamp(lo), clamp(hi));
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    let floor = 1e-9 * lo.abs().max(hi.abs()).max(1e-12);
    if hi - lo >= floor {
        (lo, hi)
    } else {
        let d = if lo.abs() > 1e-12 {
            lo.abs() * 0.1
        } else {
            1.0
        };
        ((lo - d).max(-AXIS_LIMIT), (lo + d).min(AXIS_LIMIT))
    }
}

fn mesh_style() -> (RGBColor, RGBColor) {
    (RGBColor(236, 236, 236), RGBColor(200, 200, 200))
}

/// A point in plot coordinates with its CI (plot coordinates too).
type PlotPoint = (f64, f64, Option<(f64, f64)>);

fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &LinePanel,
) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for s in &p.series {
        for pt in &s.points {
            if p.x.accepts(pt.x) && p.y.accepts(pt.y) {
                xs.push(p.x.to_plot(pt.x));
                ys.push(p.y.to_plot(pt.y));
                if let Some((lo, hi)) = pt.ci {
                    for v in [lo, hi] {
                        if p.y.accepts(v) {
                            ys.push(p.y.to_plot(v));
                        }
                    }
                }
            }
        }
    }
    for v in &p.vlines {
        if p.x.accepts(v.at) {
            xs.push(p.x.to_plot(v.at));
        }
    }
    for h in &p.hlines {
        if p.y.accepts(h.at) {
            ys.push(p.y.to_plot(h.at));
        }
    }
    let (x0, x1) = match &p.x.ticks {
        TickFormat::Categories(names) => (-0.5, names.len().max(1) as f64 - 0.5),
        _ => plot_range(&xs, p.x.from_zero && p.x.scale == Scale::Linear, 0.04),
    };
    let (y0, y1) = match p.y.fixed {
        Some((lo, hi)) => {
            let top = ys.iter().copied().fold(hi, f64::max);
            sane_range(p.y.to_plot(lo), top)
        }
        None => plot_range(&ys, p.y.from_zero && p.y.scale == Scale::Linear, 0.08),
    };
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, (FONT, 16))
        .margin(12)
        .x_label_area_size(46)
        .y_label_area_size(64)
        .build_cartesian_2d(x0..x1, y0..y1)
        .map_err(e)?;
    let x_fmt = |v: &f64| p.x.tick_label(*v);
    let y_fmt = |v: &f64| p.y.tick_label(*v);
    let (light, bold) = mesh_style();
    // Room for about one label per 75 px: byte labels ("512 KiB") must not run together.
    let room = (area.dim_in_pixel().0 / 75).max(2) as usize;
    let x_labels = match &p.x.ticks {
        TickFormat::Categories(names) => names.len().max(1),
        _ if p.x.scale != Scale::Linear => ((x1 - x0).ceil() as usize + 1).clamp(2, room),
        _ => 8.min(room),
    };
    let y_labels = if p.y.scale != Scale::Linear {
        ((y1 - y0).ceil() as usize + 1).clamp(2, 10)
    } else {
        8
    };
    chart
        .configure_mesh()
        .x_desc(p.x.label.as_str())
        .y_desc(p.y.label.as_str())
        .x_labels(x_labels)
        .y_labels(y_labels)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 14))
        .light_line_style(light)
        .bold_line_style(bold)
        .max_light_lines(2)
        .draw()
        .map_err(e)?;

    let ref_style = ShapeStyle::from(RGBColor(90, 90, 90)).stroke_width(1);
    let note = TextStyle::from((FONT, 12).into_font()).color(&RGBColor(60, 60, 60));
    for (i, v) in p.vlines.iter().enumerate() {
        if !p.x.accepts(v.at) {
            continue;
        }
        let x = p.x.to_plot(v.at);
        chart
            .draw_series(std::iter::once(DashedPathElement::new(
                vec![(x, y0), (x, y1)],
                4,
                4,
                ref_style,
            )))
            .map_err(e)?;
        // Stagger labels vertically so neighbouring lines do not print on top of each other.
        let y = y1 - (y1 - y0) * (0.03 + 0.07 * (i % 3) as f64);
        let near_right = x > x0 + (x1 - x0) * 0.8;
        let style = if near_right {
            note.pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Right,
                plotters::style::text_anchor::VPos::Top,
            ))
        } else {
            note.clone()
        };
        let label = if near_right {
            format!("{} ", v.label)
        } else {
            format!(" {}", v.label)
        };
        chart
            .draw_series(std::iter::once(Text::new(label, (x, y), style)))
            .map_err(e)?;
    }
    for h in &p.hlines {
        if !p.y.accepts(h.at) {
            continue;
        }
        let y = p.y.to_plot(h.at);
        chart
            .draw_series(std::iter::once(DashedPathElement::new(
                vec![(x0, y), (x1, y)],
                4,
                4,
                ref_style,
            )))
            .map_err(e)?;
        chart
            .draw_series(std::iter::once(Text::new(
                h.label.clone(),
                (x0 + (x1 - x0) * 0.01, y),
                note.clone(),
            )))
            .map_err(e)?;
    }

    for s in &p.series {
        let colour = s.colour.rgb();
        let line = ShapeStyle::from(colour).stroke_width(2);
        let pts: Vec<PlotPoint> = s
            .points
            .iter()
            .filter(|pt| p.x.accepts(pt.x) && p.y.accepts(pt.y))
            .map(|pt| {
                let ci = pt
                    .ci
                    .filter(|(lo, hi)| p.y.accepts(*lo) && p.y.accepts(*hi))
                    .map(|(lo, hi)| (p.y.to_plot(lo), p.y.to_plot(hi)));
                (p.x.to_plot(pt.x), p.y.to_plot(pt.y), ci)
            })
            .collect();
        let xy: Vec<(f64, f64)> = pts.iter().map(|&(x, y, _)| (x, y)).collect();
        match s.kind {
            SeriesKind::Data | SeriesKind::Bar => {
                chart
                    .draw_series(LineSeries::new(xy.clone(), line))
                    .map_err(e)?;
                chart
                    .draw_series(xy.iter().map(|&c| Circle::new(c, 3, line.filled())))
                    .map_err(e)?;
            }
            SeriesKind::Model => {
                chart
                    .draw_series(std::iter::once(DashedPathElement::new(
                        xy.clone(),
                        6,
                        4,
                        line,
                    )))
                    .map_err(e)?;
                chart
                    .draw_series(xy.iter().map(|&c| Circle::new(c, 4, line)))
                    .map_err(e)?;
            }
        }
        // Error bars: a vertical stroke from the CI's low to high end, with small caps.
        let cap = (x1 - x0) * 0.006;
        for &(x, _, ci) in &pts {
            if let Some((lo, hi)) = ci {
                let bars = [
                    vec![(x, lo), (x, hi)],
                    vec![(x - cap, lo), (x + cap, lo)],
                    vec![(x - cap, hi), (x + cap, hi)],
                ];
                chart
                    .draw_series(bars.into_iter().map(|p| PathElement::new(p, line)))
                    .map_err(e)?;
            }
        }
    }
    Ok(())
}

fn draw_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &BarPanel,
) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let n = p.categories.len().max(1);
    let mut values = vec![0.0];
    for (i, _) in p.categories.iter().enumerate() {
        let mut stack = 0.0;
        for s in &p.series {
            if let Some(v) = s.values.get(i).copied().flatten().filter(|v| v.is_finite()) {
                if p.stacked {
                    stack += v;
                    values.push(stack);
                } else {
                    values.push(v);
                    if let Some(Some((_, hi))) = s.ci.get(i) {
                        values.push(*hi);
                    }
                }
            }
        }
    }
    values.extend(p.vlines.iter().map(|v| v.at));
    let (v0, v1) = plot_range(&values, true, 0.06);
    let longest = p
        .categories
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(4) as u32;
    // Categories run top to bottom: category i sits at y = n-1-i.
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, (FONT, 16))
        .margin(12)
        .x_label_area_size(46)
        .y_label_area_size((longest * 7 + 16).clamp(60, 330))
        .build_cartesian_2d(v0..v1, -0.5..(n as f64 - 0.5))
        .map_err(e)?;
    let names = p.categories.clone();
    let y_fmt = |v: &f64| {
        let i = v.round();
        if (v - i).abs() > 1e-6 || i < 0.0 || i as usize >= n {
            String::new()
        } else {
            names.get(n - 1 - i as usize).cloned().unwrap_or_default()
        }
    };
    let x_fmt = |v: &f64| p.value_axis.tick_label(*v);
    let (light, bold) = mesh_style();
    chart
        .configure_mesh()
        .x_desc(p.value_axis.label.as_str())
        .y_labels(n)
        .x_labels(8)
        .y_label_formatter(&y_fmt)
        .x_label_formatter(&x_fmt)
        .disable_y_mesh()
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 14))
        .light_line_style(light)
        .bold_line_style(bold)
        .max_light_lines(2)
        .draw()
        .map_err(e)?;
    let groups = if p.stacked { 1 } else { p.series.len().max(1) };
    let band = 0.8 / groups as f64;
    for i in 0..p.categories.len() {
        let centre = (n - 1 - i) as f64;
        let mut stack = 0.0;
        for (k, s) in p.series.iter().enumerate() {
            let Some(v) = s.values.get(i).copied().flatten().filter(|v| v.is_finite()) else {
                continue;
            };
            let (lo_y, hi_y) = if p.stacked {
                (centre - 0.4, centre + 0.4)
            } else {
                let top = centre + 0.4 - band * k as f64;
                (top - band * 0.92, top)
            };
            let (a, b) = if p.stacked {
                (stack, stack + v)
            } else {
                (0.0, v)
            };
            stack += v;
            let colour = s.colour.rgb();
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(a, lo_y), (b, hi_y)],
                    colour.filled(),
                )))
                .map_err(e)?;
            if !p.stacked
                && let Some(Some((ci_lo, ci_hi))) = s.ci.get(i)
                && ci_lo.is_finite()
                && ci_hi.is_finite()
            {
                let y = (lo_y + hi_y) / 2.0;
                let cap = (hi_y - lo_y) * 0.3;
                let bars = [
                    vec![(*ci_lo, y), (*ci_hi, y)],
                    vec![(*ci_lo, y - cap), (*ci_lo, y + cap)],
                    vec![(*ci_hi, y - cap), (*ci_hi, y + cap)],
                ];
                chart
                    .draw_series(
                        bars.into_iter()
                            .map(|p| PathElement::new(p, BLACK.stroke_width(1))),
                    )
                    .map_err(e)?;
            }
        }
    }
    let ref_style = ShapeStyle::from(RGBColor(60, 60, 60)).stroke_width(1);
    let note = TextStyle::from((FONT, 12).into_font()).color(&RGBColor(60, 60, 60));
    for v in &p.vlines {
        chart
            .draw_series(std::iter::once(DashedPathElement::new(
                vec![(v.at, -0.5), (v.at, n as f64 - 0.5)],
                4,
                4,
                ref_style,
            )))
            .map_err(e)?;
        chart
            .draw_series(std::iter::once(Text::new(
                format!(" {}", v.label),
                (v.at, n as f64 - 0.55),
                note.clone(),
            )))
            .map_err(e)?;
    }
    Ok(())
}

/// Light yellow → dark blue: readable with black text in light cells and white in dark ones.
fn heat_colour(t: f64) -> (RGBColor, bool) {
    let t = t.clamp(0.0, 1.0);
    let stops = [
        (255.0, 247.0, 188.0),
        (161.0, 218.0, 180.0),
        (65.0, 182.0, 196.0),
        (34.0, 94.0, 168.0),
        (8.0, 29.0, 88.0),
    ];
    let pos = t * (stops.len() - 1) as f64;
    let i = (pos.floor() as usize).min(stops.len() - 2);
    let f = pos - i as f64;
    let mix = |a: f64, b: f64| (a + (b - a) * f).round() as u8;
    let (a, b) = (stops[i], stops[i + 1]);
    (
        RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2)),
        t > 0.55,
    )
}

fn draw_heat<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    legend: &DrawingArea<DB, Shift>,
    p: &HeatPanel,
) -> Result<(), String> {
    let e = |x: DrawingAreaErrorKind<DB::ErrorType>| x.to_string();
    let (nc, nr) = (p.columns.len().max(1), p.rows.len().max(1));
    let finite: Vec<f64> = p
        .values
        .iter()
        .flatten()
        .flatten()
        .copied()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // Log colour scale: a 3× jump should look like one whatever the baseline.
    let norm = |v: f64| {
        if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
            0.5
        } else {
            (v.ln() - lo.ln()) / (hi.ln() - lo.ln())
        }
    };
    let mut chart = ChartBuilder::on(area)
        .caption(&p.title, (FONT, 16))
        .margin(12)
        .x_label_area_size(46)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5..(nc as f64 - 0.5), -0.5..(nr as f64 - 0.5))
        .map_err(e)?;
    let cols = p.columns.clone();
    let rows = p.rows.clone();
    let x_fmt = |v: &f64| category_label(&cols, *v);
    let y_fmt = |v: &f64| category_label(&rows, *v);
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .x_labels(nc)
        .y_labels(nr)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(e)?;
    for (r, row) in p.values.iter().enumerate() {
        for (c, value) in row.iter().enumerate() {
            let (x, y) = (c as f64, r as f64);
            let (fill, dark) = match value {
                Some(v) if v.is_finite() && *v > 0.0 => heat_colour(norm(*v)),
                _ => (RGBColor(230, 230, 230), false),
            };
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                    fill.filled(),
                )))
                .map_err(e)?;
            let text = value
                .filter(|v| v.is_finite())
                .map(format_number)
                .unwrap_or_else(|| "—".into());
            let colour = if dark { WHITE } else { BLACK };
            let style = TextStyle::from((FONT, 13).into_font()).color(&colour).pos(
                plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Center,
                    plotters::style::text_anchor::VPos::Center,
                ),
            );
            chart
                .draw_series(std::iter::once(Text::new(text, (x, y), style)))
                .map_err(e)?;
        }
    }
    for (c, r, text) in &p.marks {
        let colour = RGBColor(200, 0, 0);
        let style = TextStyle::from((FONT, 11).into_font().style(FontStyle::Bold))
            .color(&colour)
            .pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Center,
            ));
        chart
            .draw_series(std::iter::once(Text::new(
                text.clone(),
                (*c as f64, *r as f64 - 0.3),
                style,
            )))
            .map_err(e)?;
    }
    if let Some((row, label)) = &p.divider {
        let y = *row as f64 - 0.5;
        let style = ShapeStyle::from(RGBColor(200, 0, 0)).stroke_width(3);
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(-0.5, y), (nc as f64 - 0.5, y)],
                style,
            )))
            .map_err(e)?;
        let text = TextStyle::from((FONT, 14).into_font().style(FontStyle::Bold))
            .color(&RGBColor(200, 0, 0))
            .pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Left,
                plotters::style::text_anchor::VPos::Bottom,
            ));
        // The label sits just above the line, on a white box so cell colours do not swallow it.
        let width = label.chars().count() as f64 * 9.0 / (area.dim_in_pixel().0 as f64 / nc as f64);
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(-0.48, y + 0.02), (-0.48 + width, y + 0.3)],
                WHITE.filled(),
            )))
            .map_err(e)?;
        chart
            .draw_series(std::iter::once(Text::new(
                label.clone(),
                (-0.46, y + 0.04),
                text,
            )))
            .map_err(e)?;
    }
    // Colour key.
    let style = TextStyle::from((FONT, 13).into_font()).color(&BLACK);
    if hi > lo {
        let steps = 40;
        for i in 0..steps {
            let t = i as f64 / (steps - 1) as f64;
            let (colour, _) = heat_colour(t);
            let x = 80 + i * 6;
            legend
                .draw(&Rectangle::new([(x, 4), (x + 6, 18)], colour.filled()))
                .map_err(e)?;
        }
        legend
            .draw_text(&format_number(lo), &style, (20, 5))
            .map_err(e)?;
        legend
            .draw_text(
                &format!("{}   {}", format_number(hi), p.value_label),
                &style,
                (80 + steps * 6 + 8, 5),
            )
            .map_err(e)?;
    }
    Ok(())
}

fn category_label(names: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() > 1e-6 || i < 0.0 {
        String::new()
    } else {
        names.get(i as usize).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
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
