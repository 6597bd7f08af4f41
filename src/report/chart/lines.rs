//! Line panels: the plotted ranges, the mesh and the series (solid measured, dashed model).

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

pub(super) fn mesh_style() -> (RGBColor, RGBColor) {
    (RGBColor(236, 236, 236), RGBColor(200, 200, 200))
}

/// A point in plot coordinates with its CI (plot coordinates too).
pub(super) type PlotPoint = (f64, f64, Option<(f64, f64)>);

pub(super) fn draw_lines<DB: DrawingBackend>(
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
