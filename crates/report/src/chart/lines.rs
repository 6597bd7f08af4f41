//! Line panels: the plotted ranges, the mesh, the reference lines and the series (solid
//! measured, dashed model).

use std::ops::Range;

use plotters::style::text_anchor::{HPos, VPos};

use super::frame::{
    Chart, DrawError, Whisker, anchored, build_chart, draw_dashed, draw_text, draw_whisker,
    grid_lines, label_fonts, note_style,
};
use super::place::{LabelBox, separate};
use super::*;

/// The plotted range of some values, padded; `from_zero` includes 0.
pub(super) fn plot_range(values: &[f64], from_zero: bool, pad_fraction: f64) -> (f64, f64) {
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
pub(super) const AXIS_LIMIT: f64 = 1e150;

/// Every axis range handed to plotters: finite, within ±[`AXIS_LIMIT`], and wide enough that
/// its ends differ in f64 (defence in depth: documents are validated on load, but a figure
/// must not hang whatever it is given).
pub(super) fn sane_range(lo: f64, hi: f64) -> (f64, f64) {
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

/// A point in plot coordinates with its CI (plot coordinates too).
pub(super) type PlotPoint = (f64, f64, Option<(f64, f64)>);

pub(super) fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &LinePanel,
) -> Result<(), DrawError> {
    let (x_range, y_range) = plotted_ranges(p);
    let mut chart = build_chart(area, &p.title, 64, x_range.clone(), y_range.clone())?;
    draw_line_mesh(&mut chart, p, &x_range, &y_range, area.dim_in_pixel().0)?;
    draw_log_ticks(
        area,
        &mut chart,
        p,
        (&x_range, &y_range),
        area.dim_in_pixel().0,
    )?;
    draw_vlines(&mut chart, p, &x_range, &y_range)?;
    draw_hlines(&mut chart, p, &x_range)?;
    let plotted: Vec<Vec<PlotPoint>> = p.series.iter().map(|s| plot_points(p, s)).collect();
    let near = |a: &PlotPoint, b: &PlotPoint| {
        let span = |r: &Range<f64>| (r.end - r.start).abs().max(f64::MIN_POSITIVE);
        (a.0 - b.0).abs() <= 0.004 * span(&x_range) && (a.1 - b.1).abs() <= 0.01 * span(&y_range)
    };
    for (i, s) in p.series.iter().enumerate() {
        // A series that a later one of the same kind draws over (a point within a marker's
        // width) gets a wider stroke and larger markers, so both stay visible (nested rings,
        // a coloured edge along the line) instead of the last one hiding the first.
        // Lines of noisy data near each other are not widened: only markers that sit on one
        // another (rings around dots) are, and identical lines are merged before drawing.
        let markers = matches!(s.kind, SeriesKind::Markers | SeriesKind::ModelMarkers);
        let under = (i + 1..p.series.len())
            .filter(|_| markers)
            .filter(|&j| p.series[j].kind == s.kind)
            .filter(|&j| {
                plotted[i]
                    .iter()
                    .any(|a| plotted[j].iter().any(|b| near(a, b)))
            })
            .count()
            .min(3) as u32;
        draw_series_line(&mut chart, p, s, (&x_range, &y_range), under)?;
    }
    Ok(())
}

/// Every plotted x and y (points, their CIs, reference lines) in plot coordinates.
fn plotted_values(p: &LinePanel) -> (Vec<f64>, Vec<f64>) {
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for pt in p.series.iter().flat_map(|s| &s.points) {
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
    xs.extend(
        p.vlines
            .iter()
            .filter(|v| p.x.accepts(v.at))
            .map(|v| p.x.to_plot(v.at)),
    );
    ys.extend(
        p.hlines
            .iter()
            .filter(|h| p.y.accepts(h.at))
            .map(|h| p.y.to_plot(h.at)),
    );
    (xs, ys)
}

/// The x and y ranges of the plot: categories centred on whole numbers, a fixed y range
/// widened to show values above it, else the padded data range.
fn plotted_ranges(p: &LinePanel) -> (Range<f64>, Range<f64>) {
    let (xs, ys) = plotted_values(p);
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
    let lowest = p
        .series
        .iter()
        .flat_map(|s| plot_points(p, s))
        .map(|(_, y, _)| y)
        .fold(f64::INFINITY, f64::min);
    (x0..x1, clear_of_axis(y0, y1, lowest)..y1)
}

/// The bottom of a y range that leaves room under its lowest point: a point at the bottom
/// (no misses on a 0..1 axis, a time axis from 0) would sit on the axis line, half hidden,
/// so the range then starts [`BELOW_AXIS`] of its height lower.
pub(super) fn clear_of_axis(y0: f64, y1: f64, lowest: f64) -> f64 {
    let span = y1 - y0;
    if lowest.is_finite() && span.is_finite() && span > 0.0 && lowest <= y0 + span * 1e-9 {
        y0 - span * BELOW_AXIS
    } else {
        y0
    }
}

/// How far below its lowest point a range starts when that point lies on the axis.
const BELOW_AXIS: f64 = 0.03;

/// How many tick labels each axis gets in a panel `width` pixels wide.
fn label_counts(p: &LinePanel, x: &Range<f64>, y: &Range<f64>, width: u32) -> (usize, usize) {
    // Room for about one label per 75 px: byte labels ("512 KiB") must not run together.
    let room = (width / 75).max(2) as usize;
    let x_labels = match &p.x.ticks {
        TickFormat::Categories(names) => names.len().max(1),
        _ if p.x.scale != Scale::Linear => ((x.end - x.start).ceil() as usize + 1).clamp(2, room),
        _ => 8.min(room),
    };
    let y_labels = if p.y.scale != Scale::Linear {
        ((y.end - y.start).ceil() as usize + 1).clamp(2, 10)
    } else {
        8
    };
    (x_labels, y_labels)
}

/// The grid, ticks and axis descriptions.
fn draw_line_mesh<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    p: &LinePanel,
    x: &Range<f64>,
    y: &Range<f64>,
    width: u32,
) -> Result<(), DrawError> {
    let x_fmt = |v: &f64| p.x.tick_label(*v);
    let y_fmt = |v: &f64| p.y.tick_label(*v);
    let (x_labels, y_labels) = label_counts(p, x, y, width);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(p.x.label.as_str())
        .y_desc(p.y.label.as_str())
        .x_labels(x_labels)
        .y_labels(y_labels)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt);
    // A log axis gets its own ticks and grid ([`draw_log_ticks`]) at round values.
    if custom_log_ticks(&p.x) {
        mesh.x_labels(0).disable_x_mesh();
    }
    if custom_log_ticks(&p.y) {
        mesh.y_labels(0).disable_y_mesh();
    }
    grid_lines(label_fonts(&mut mesh))
        .draw()
        .map_err(DrawError::from)
}

/// Whether an axis is labelled by [`draw_log_ticks`] rather than by plotters' mesh.
fn custom_log_ticks(axis: &Axis) -> bool {
    axis.scale != Scale::Linear && !matches!(axis.ticks, TickFormat::Categories(_))
}

/// Grid lines, tick marks and labels of log axes at [`log_ticks`] values: plotters spaces its
/// ticks evenly in the plotted (log) coordinate, so only whole powers could be labelled, and a
/// range within one decade got a single label.
fn draw_log_ticks<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &mut Chart<'_, DB>,
    p: &LinePanel,
    (x, y): (&Range<f64>, &Range<f64>),
    width: u32,
) -> Result<(), DrawError> {
    let screen = area.use_screen_coord();
    let grid = ShapeStyle::from(RGBColor(210, 210, 210)).stroke_width(1);
    let tick = ShapeStyle::from(BLACK).stroke_width(1);
    let style = TextStyle::from((FONT, 12).into_font()).color(&BLACK);
    if custom_log_ticks(&p.x) {
        let room = (width / 75).max(2) as usize;
        for v in log_ticks(p.x.scale, x.start, x.end, room) {
            let at = p.x.to_plot(v);
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(at, y.start), (at, y.end)],
                grid,
            )))?;
            let (bx, by) = chart.backend_coord(&(at, y.start));
            screen.draw(&PathElement::new(vec![(bx, by), (bx, by + 5)], tick))?;
            let label = p.x.tick_text(v);
            let anchored_style = anchored(style.clone(), HPos::Center, VPos::Top);
            screen.draw(&Text::new(label, (bx, by + 7), anchored_style))?;
        }
    }
    if custom_log_ticks(&p.y) {
        for v in log_ticks(p.y.scale, y.start, y.end, 10) {
            let at = p.y.to_plot(v);
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x.start, at), (x.end, at)],
                grid,
            )))?;
            let (bx, by) = chart.backend_coord(&(x.start, at));
            screen.draw(&PathElement::new(vec![(bx - 5, by), (bx, by)], tick))?;
            let anchored_style = anchored(style.clone(), HPos::Right, VPos::Center);
            screen.draw(&Text::new(p.y.tick_text(v), (bx - 7, by), anchored_style))?;
        }
    }
    Ok(())
}

/// The grey style of reference lines on line panels.
fn ref_style() -> ShapeStyle {
    ShapeStyle::from(RGBColor(90, 90, 90)).stroke_width(1)
}

/// Vertical reference lines, labelled near the top (or where the figure asks); labels near the
/// right edge turn left, and a label that would print over an earlier one moves a row
/// ([`separate`]).
fn draw_vlines<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    p: &LinePanel,
    x_range: &Range<f64>,
    y_range: &Range<f64>,
) -> Result<(), DrawError> {
    let (Range { start: x0, end: x1 }, Range { start: y0, end: y1 }) =
        (x_range.clone(), y_range.clone());
    let mut labels: Vec<(String, (f64, f64), TextStyle<'static>, LabelBox)> = Vec::new();
    for (i, v) in p.vlines.iter().enumerate() {
        if !p.x.accepts(v.at) {
            continue;
        }
        let x = p.x.to_plot(v.at);
        draw_dashed(chart, (x, y0), (x, y1), ref_style())?;
        if v.label.is_empty() {
            continue;
        }
        // Stagger labels vertically so neighbouring lines do not print on top of each other.
        let y = match v.label_y.filter(|&y| p.y.accepts(y)) {
            Some(y) => p.y.to_plot(y),
            None => y1 - (y1 - y0) * (0.03 + 0.07 * (i % 3) as f64),
        };
        // A small gap from the line: an SVG renderer drops a leading space.
        let gap = (x1 - x0) * 0.006;
        let right_aligned = x > x0 + (x1 - x0) * 0.8;
        let (at, style) = if right_aligned {
            (x - gap, anchored(note_style(), HPos::Right, VPos::Top))
        } else {
            (x + gap, note_style())
        };
        let (w, h) = chart
            .plotting_area()
            .estimate_text_size(&v.label, &style)
            .map_err(DrawError::from)?;
        let (px, py) = chart.backend_coord(&(at, y));
        let (w, h) = (w as i32, h as i32);
        let left = if right_aligned { px - w } else { px };
        let label_box = LabelBox {
            left,
            right: left + w,
            top: py,
            height: h + 2,
        };
        labels.push((v.label.clone(), (at, y), style, label_box));
    }
    let (_, plot_top) = chart.backend_coord(&(x0, y1));
    let (_, plot_bottom) = chart.backend_coord(&(x0, y0));
    let boxes: Vec<LabelBox> = labels.iter().map(|l| l.3).collect();
    let tops = separate(&boxes, plot_top, plot_bottom);
    // Pixels to plot units on y (screen y grows downwards).
    let per_pixel = (y1 - y0) / f64::from((plot_bottom - plot_top).max(1));
    for ((text, (at, y), style, wanted), top) in labels.into_iter().zip(tops) {
        let moved = y - f64::from(top - wanted.top) * per_pixel;
        draw_text(chart, text, (at, moved), style)?;
    }
    Ok(())
}

/// Horizontal reference lines, labelled at the left edge.
fn draw_hlines<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    p: &LinePanel,
    x_range: &Range<f64>,
) -> Result<(), DrawError> {
    let Range { start: x0, end: x1 } = x_range.clone();
    for h in p.hlines.iter().filter(|h| p.y.accepts(h.at)) {
        let y = p.y.to_plot(h.at);
        draw_dashed(chart, (x0, y), (x1, y), ref_style())?;
        draw_text(
            chart,
            h.label.clone(),
            (x0 + (x1 - x0) * 0.01, y),
            note_style(),
        )?;
    }
    Ok(())
}

/// A series' drawable points in plot coordinates, with the CIs the y axis can show.
fn plot_points(p: &LinePanel, s: &Series) -> Vec<PlotPoint> {
    s.points
        .iter()
        .filter(|pt| p.x.accepts(pt.x) && p.y.accepts(pt.y))
        .map(|pt| {
            let ci = pt
                .ci
                .filter(|(lo, hi)| p.y.accepts(*lo) && p.y.accepts(*hi))
                .map(|(lo, hi)| (p.y.to_plot(lo), p.y.to_plot(hi)));
            (p.x.to_plot(pt.x), p.y.to_plot(pt.y), ci)
        })
        .collect()
}

/// One series: its error bars, then a solid line with filled markers (data) or dashed with
/// hollow ones (model) over them. An error bar no longer than its marker is left out: its
/// caps would stick out of the marker as a dash and hide it (the table gives the CI).
fn draw_series_line<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    p: &LinePanel,
    s: &Series,
    (x_range, y_range): (&Range<f64>, &Range<f64>),
    under: u32,
) -> Result<(), DrawError> {
    let line = ShapeStyle::from(s.colour.rgb()).stroke_width(2 + 2 * under);
    let grow = 2 * under as i32;
    let radius = match s.kind {
        SeriesKind::Markers => 3 + grow,
        SeriesKind::ModelMarkers => 5 + grow,
        SeriesKind::Model => 4 + grow,
        _ => 3 + grow,
    };
    let pts = plot_points(p, s);
    // Error bars: a vertical stroke from the CI's low to high end, with small caps.
    let cap = (x_range.end - x_range.start) * 0.006;
    let whisker = ShapeStyle::from(s.colour.rgb()).stroke_width(2);
    for &(x, _, ci) in &pts {
        let Some((lo, hi)) = ci else { continue };
        let pixels = chart.backend_coord(&(x, lo)).1 - chart.backend_coord(&(x, hi)).1;
        if pixels > 2 * radius + 2 {
            draw_whisker(chart, (lo, hi), x, cap, Whisker::Vertical, whisker)?;
        }
    }
    let xy: Vec<(f64, f64)> = pts.iter().map(|&(x, y, _)| (x, y)).collect();
    match s.kind {
        SeriesKind::Data | SeriesKind::Bar => {
            chart.draw_series(LineSeries::new(xy.clone(), line))?;
            chart.draw_series(xy.iter().map(|&c| Circle::new(c, radius, line.filled())))?;
        }
        SeriesKind::Markers => {
            chart.draw_series(xy.iter().map(|&c| Circle::new(c, radius, line.filled())))?;
        }
        SeriesKind::ModelMarkers => {
            let thin = ShapeStyle::from(s.colour.rgb()).stroke_width(1);
            chart.draw_series(xy.iter().map(|&c| Circle::new(c, radius, thin)))?;
        }
        SeriesKind::Rug => {
            let tick = (y_range.end - y_range.start) * 0.035;
            let thin = ShapeStyle::from(s.colour.rgb()).stroke_width(1);
            chart.draw_series(
                xy.iter()
                    .map(|&(x, y)| PathElement::new(vec![(x, y), (x, y + tick)], thin)),
            )?;
        }
        SeriesKind::Model => {
            chart.draw_series(std::iter::once(DashedPathElement::new(
                xy.clone(),
                6,
                4,
                line,
            )))?;
            chart.draw_series(xy.iter().map(|&c| Circle::new(c, radius, line)))?;
        }
    }
    Ok(())
}
