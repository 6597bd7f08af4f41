//! Heat-map panels and their colour scale.

use super::*;

/// Light yellow → dark blue: readable with black text in light cells and white in dark ones.
pub(super) fn heat_colour(t: f64) -> (RGBColor, bool) {
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

pub(super) fn draw_heat<DB: DrawingBackend>(
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

pub(super) fn category_label(names: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() > 1e-6 || i < 0.0 {
        String::new()
    } else {
        names.get(i as usize).cloned().unwrap_or_default()
    }
}
