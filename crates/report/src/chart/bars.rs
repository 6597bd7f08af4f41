//! Horizontal bar panels.

use plotters::style::text_anchor::{HPos, VPos};

use super::frame::{
    Chart, DrawError, Whisker, anchored, build_chart, draw_dashed, draw_rect, draw_text,
    draw_whisker, grid_lines, label_fonts, note_style,
};
use super::lines::plot_range;
use super::*;

pub(super) fn draw_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &BarPanel,
) -> Result<(), DrawError> {
    let n = p.categories.len().max(1);
    let (v0, v1) = plot_range(&bar_extent(p), true, 0.06);
    let longest = p
        .categories
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(4) as u32;
    // Categories run top to bottom: category i sits at y = n-1-i.
    let label_width = (longest * 7 + 16).clamp(60, 520);
    let mut chart = build_chart(area, &p.title, label_width, v0..v1, -0.5..(n as f64 - 0.5))?;
    draw_bar_mesh(&mut chart, p, n)?;
    for i in 0..p.categories.len() {
        draw_category(&mut chart, p, i, (n - 1 - i) as f64)?;
    }
    draw_bar_vlines(&mut chart, p, n)
}

/// Every value the value axis must show: 0, bar ends (stack tops when stacked), CI ends and
/// reference lines.
fn bar_extent(p: &BarPanel) -> Vec<f64> {
    let mut values = vec![0.0];
    for i in 0..p.categories.len() {
        let mut stack = 0.0;
        for s in &p.series {
            if let Some(v) = bar_value(s, i) {
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
    values
}

/// Series `s`'s finite value for category `i`, if it has one.
fn bar_value(s: &BarSeries, i: usize) -> Option<f64> {
    s.values.get(i).copied().flatten().filter(|v| v.is_finite())
}

/// The vertical grid, the category names on the left and the value ticks below.
fn draw_bar_mesh<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    p: &BarPanel,
    n: usize,
) -> Result<(), DrawError> {
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
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(p.value_axis.label.as_str())
        .y_labels(n)
        .x_labels(8)
        .y_label_formatter(&y_fmt)
        .x_label_formatter(&x_fmt)
        .disable_y_mesh();
    grid_lines(label_fonts(&mut mesh))
        .draw()
        .map_err(DrawError::from)
}

/// The bars of category `i` around y = `centre`: side by side in bands, or stacked in one.
fn draw_category<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    p: &BarPanel,
    i: usize,
    centre: f64,
) -> Result<(), DrawError> {
    let groups = if p.stacked { 1 } else { p.series.len().max(1) };
    let band = 0.8 / groups as f64;
    let mut stack = 0.0;
    for (k, s) in p.series.iter().enumerate() {
        let Some(v) = bar_value(s, i) else {
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
        draw_rect(chart, [(a, lo_y), (b, hi_y)], s.colour.rgb().filled())?;
        if !p.stacked
            && let Some(Some((ci_lo, ci_hi))) = s.ci.get(i)
            && ci_lo.is_finite()
            && ci_hi.is_finite()
        {
            let y = (lo_y + hi_y) / 2.0;
            let cap = (hi_y - lo_y) * 0.3;
            let style = BLACK.stroke_width(1);
            draw_whisker(chart, (*ci_lo, *ci_hi), y, cap, Whisker::Horizontal, style)?;
        }
    }
    Ok(())
}

/// Vertical reference lines across all categories, labelled at the top: right of the line,
/// or left of it where the label would run past the plot's right edge.
fn draw_bar_vlines<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    p: &BarPanel,
    n: usize,
) -> Result<(), DrawError> {
    let ref_style = ShapeStyle::from(RGBColor(60, 60, 60)).stroke_width(1);
    let (x0, x1) = (chart.x_range().start, chart.x_range().end);
    let (right_edge, _) = chart.backend_coord(&(x1, 0.0));
    for v in &p.vlines {
        draw_dashed(chart, (v.at, -0.5), (v.at, n as f64 - 0.5), ref_style)?;
        // A small gap from the line: an SVG renderer drops a leading space.
        let gap = (x1 - x0) * 0.006;
        let (width, _) = chart
            .plotting_area()
            .estimate_text_size(&v.label, &note_style())
            .map_err(DrawError::from)?;
        let (line_x, _) = chart.backend_coord(&(v.at + gap, 0.0));
        let (at, style) = if line_x + width as i32 > right_edge {
            (v.at - gap, anchored(note_style(), HPos::Right, VPos::Top))
        } else {
            (v.at + gap, note_style())
        };
        draw_text(chart, v.label.clone(), (at, n as f64 - 0.55), style)?;
    }
    Ok(())
}
