//! What every panel kind shares: the chart frame (caption, margins, label areas), the mesh
//! fonts and grid, anchored text, and the single elements drawn in data coordinates (dashed
//! reference lines, rectangles, text, error whiskers).

use std::ops::Range;

use plotters::chart::MeshStyle;
use plotters::coord::types::RangedCoordf64;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::*;

/// A panel's chart in data coordinates.
pub(super) type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A mesh being configured on a [`Chart`].
pub(super) type Mesh<'a, 'b, DB> = MeshStyle<'a, 'b, RangedCoordf64, RangedCoordf64, DB>;

/// Why plotters could not draw a panel (its errors are generic over the backend, so the text
/// is what a figure error keeps).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct DrawError(String);

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for DrawError {
    fn from(x: DrawingAreaErrorKind<E>) -> Self {
        Self(x.to_string())
    }
}

/// The frame of a panel: its title as caption, a 12 px margin, 46 px under the plot for the
/// x labels and `y_label_width` px left of it for the y labels.
pub(super) fn build_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    title: &str,
    y_label_width: u32,
    x: Range<f64>,
    y: Range<f64>,
) -> Result<Chart<'a, DB>, DrawError> {
    ChartBuilder::on(area)
        .caption(title, (FONT, 16))
        .margin(12)
        .x_label_area_size(46)
        .y_label_area_size(y_label_width)
        .build_cartesian_2d(x, y)
        .map_err(DrawError::from)
}

/// The tick label and axis description fonts every panel uses.
pub(super) fn label_fonts<'m, 'a, 'b, DB: DrawingBackend>(
    mesh: &'m mut Mesh<'a, 'b, DB>,
) -> &'m mut Mesh<'a, 'b, DB> {
    mesh.label_style((FONT, 12)).axis_desc_style((FONT, 14))
}

/// Light grey grid lines, at most two light lines between labelled ones.
pub(super) fn grid_lines<'m, 'a, 'b, DB: DrawingBackend>(
    mesh: &'m mut Mesh<'a, 'b, DB>,
) -> &'m mut Mesh<'a, 'b, DB> {
    mesh.light_line_style(RGBColor(236, 236, 236))
        .bold_line_style(RGBColor(200, 200, 200))
        .max_light_lines(2)
}

/// The grey 12 px text that labels reference lines.
pub(super) fn note_style() -> TextStyle<'static> {
    TextStyle::from((FONT, 12).into_font()).color(&RGBColor(60, 60, 60))
}

/// `style` anchored at its position by `h` and `v` instead of the top left corner.
pub(super) fn anchored(style: TextStyle<'static>, h: HPos, v: VPos) -> TextStyle<'static> {
    style.pos(Pos::new(h, v))
}

/// A dashed line (4 px on, 4 px off) from `a` to `b`.
pub(super) fn draw_dashed<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    a: (f64, f64),
    b: (f64, f64),
    style: ShapeStyle,
) -> Result<(), DrawError> {
    chart.draw_series(std::iter::once(DashedPathElement::new(
        vec![a, b],
        4,
        4,
        style,
    )))?;
    Ok(())
}

/// `text` with its anchor at `at`.
pub(super) fn draw_text<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    text: String,
    at: (f64, f64),
    style: TextStyle<'static>,
) -> Result<(), DrawError> {
    chart.draw_series(std::iter::once(Text::new(text, at, style)))?;
    Ok(())
}

/// A rectangle between two corners.
pub(super) fn draw_rect<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    corners: [(f64, f64); 2],
    style: ShapeStyle,
) -> Result<(), DrawError> {
    chart.draw_series(std::iter::once(Rectangle::new(corners, style)))?;
    Ok(())
}

/// Which way an error bar runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Whisker {
    /// From (at, lo) up to (at, hi): a CI on y.
    Vertical,
    /// From (lo, at) across to (hi, at): a CI on x.
    Horizontal,
}

/// An error bar from `lo` to `hi` at `at`, with caps `cap` long on either side of each end.
pub(super) fn draw_whisker<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    (lo, hi): (f64, f64),
    at: f64,
    cap: f64,
    way: Whisker,
    style: ShapeStyle,
) -> Result<(), DrawError> {
    let bars = [
        [(at, lo), (at, hi)],
        [(at - cap, lo), (at + cap, lo)],
        [(at - cap, hi), (at + cap, hi)],
    ];
    let oriented = bars.map(|bar| match way {
        Whisker::Vertical => bar.to_vec(),
        Whisker::Horizontal => bar.iter().map(|&(a, v)| (v, a)).collect(),
    });
    chart.draw_series(oriented.into_iter().map(|p| PathElement::new(p, style)))?;
    Ok(())
}
