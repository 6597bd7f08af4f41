//! Horizontal bar panels.

use super::lines::{mesh_style, plot_range};
use super::*;

pub(super) fn draw_bars<DB: DrawingBackend>(
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
