//! Heat-map panels and their colour scale.

use plotters::style::text_anchor::{HPos, VPos};

use super::frame::{Chart, DrawError, anchored, build_chart, draw_rect, draw_text, label_fonts};
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
) -> Result<(), DrawError> {
    let (nc, nr) = (p.columns.len().max(1), p.rows.len().max(1));
    let scale = HeatScale::of(p);
    let x = -0.5..(nc as f64 - 0.5);
    let mut chart = build_chart(area, &p.title, 64, x, -0.5..(nr as f64 - 0.5))?;
    draw_heat_mesh(&mut chart, p, nc, nr)?;
    draw_cells(&mut chart, p, &scale)?;
    draw_marks(&mut chart, p)?;
    if let Some((row, label)) = &p.divider {
        let cell_width = area.dim_in_pixel().0 as f64 / nc as f64;
        draw_divider(&mut chart, *row, label, nc, cell_width)?;
    }
    draw_colour_key(legend, &scale, &p.value_label)
}

/// The log colour scale over the positive finite values of a heat map.
struct HeatScale {
    lo: f64,
    hi: f64,
    linear: bool,
}

impl HeatScale {
    fn of(p: &HeatPanel) -> Self {
        if let ColourScale::Linear(lo, hi) = p.scale {
            return Self {
                lo,
                hi,
                linear: true,
            };
        }
        let finite: Vec<f64> = p
            .values
            .iter()
            .flatten()
            .flatten()
            .copied()
            .filter(|v| v.is_finite() && *v > 0.0)
            .collect();
        Self {
            lo: finite.iter().copied().fold(f64::INFINITY, f64::min),
            hi: finite.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            linear: false,
        }
    }

    /// Whether `v` has a colour on this scale (the log scale has none for zero).
    fn shows(&self, v: f64) -> bool {
        v.is_finite() && (self.linear || v > 0.0)
    }

    /// Where `v` sits between lo (0) and hi (1); 0.5 when there is no spread.
    fn norm(&self, v: f64) -> f64 {
        // Log colour scale: a 3× jump should look like one whatever the baseline.
        if self.hi.partial_cmp(&self.lo) != Some(std::cmp::Ordering::Greater) {
            0.5
        } else if self.linear {
            (v - self.lo) / (self.hi - self.lo)
        } else {
            (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        }
    }
}

/// Column and row names as ticks, no grid.
fn draw_heat_mesh<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    p: &HeatPanel,
    nc: usize,
    nr: usize,
) -> Result<(), DrawError> {
    let x_fmt = |v: &f64| category_label(&p.columns, *v);
    let y_fmt = |v: &f64| category_label(&p.rows, *v);
    let mut mesh = chart.configure_mesh();
    mesh.disable_mesh()
        .x_desc(p.x_label.as_str())
        .y_desc(p.y_label.as_str())
        .x_labels(nc)
        .y_labels(nr)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt);
    label_fonts(&mut mesh).draw().map_err(DrawError::from)
}

/// Each cell filled with its colour and labelled with its value (grey and "—" when missing).
fn draw_cells<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    p: &HeatPanel,
    scale: &HeatScale,
) -> Result<(), DrawError> {
    for (r, row) in p.values.iter().enumerate() {
        for (c, value) in row.iter().enumerate() {
            let (x, y) = (c as f64, r as f64);
            let (fill, dark) = match value {
                Some(v) if scale.shows(*v) => heat_colour(scale.norm(*v)),
                _ => (RGBColor(230, 230, 230), false),
            };
            draw_rect(
                chart,
                [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                fill.filled(),
            )?;
            let text = value
                .filter(|v| v.is_finite())
                .map(format_number)
                .unwrap_or_else(|| "—".into());
            let colour: &'static RGBColor = if dark { &WHITE } else { &BLACK };
            let style = TextStyle::from((FONT, 13).into_font()).color(colour);
            let style = anchored(style, HPos::Center, VPos::Center);
            draw_text(chart, text, (x, y), style)?;
        }
    }
    Ok(())
}

/// The short red marks, in the upper part of their cells.
fn draw_marks<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    p: &HeatPanel,
) -> Result<(), DrawError> {
    for (c, r, text) in &p.marks {
        let style = TextStyle::from((FONT, 11).into_font().style(FontStyle::Bold))
            .color(&RGBColor(200, 0, 0));
        let style = anchored(style, HPos::Center, VPos::Center);
        draw_text(chart, text.clone(), (*c as f64, *r as f64 - 0.3), style)?;
    }
    Ok(())
}

/// The red divider below row `row`, labelled at its left end.
fn draw_divider<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    row: usize,
    label: &str,
    nc: usize,
    cell_width: f64,
) -> Result<(), DrawError> {
    let y = row as f64 - 0.5;
    let style = ShapeStyle::from(RGBColor(200, 0, 0)).stroke_width(3);
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(-0.5, y), (nc as f64 - 0.5, y)],
        style,
    )))?;
    let text =
        TextStyle::from((FONT, 14).into_font().style(FontStyle::Bold)).color(&RGBColor(200, 0, 0));
    let text = anchored(text, HPos::Left, VPos::Bottom);
    // The label sits just above the line, on a white box so cell colours do not swallow it.
    let width = label.chars().count() as f64 * 9.0 / cell_width;
    draw_rect(
        chart,
        [(-0.48, y + 0.02), (-0.48 + width, y + 0.3)],
        WHITE.filled(),
    )?;
    draw_text(chart, label.to_string(), (-0.46, y + 0.04), text)
}

/// The colour key under the map: lo, a strip of the scale, hi and what the values are.
fn draw_colour_key<DB: DrawingBackend>(
    legend: &DrawingArea<DB, Shift>,
    scale: &HeatScale,
    value_label: &str,
) -> Result<(), DrawError> {
    let style = TextStyle::from((FONT, 13).into_font()).color(&BLACK);
    if scale.hi <= scale.lo {
        return Ok(());
    }
    let steps = 40;
    for i in 0..steps {
        let t = i as f64 / (steps - 1) as f64;
        let (colour, _) = heat_colour(t);
        let x = 80 + i * 6;
        legend.draw(&Rectangle::new([(x, 4), (x + 6, 18)], colour.filled()))?;
    }
    legend.draw_text(&format_number(scale.lo), &style, (20, 5))?;
    let hi = format!("{}   {}", format_number(scale.hi), value_label);
    legend
        .draw_text(&hi, &style, (80 + steps * 6 + 8, 5))
        .map_err(DrawError::from)
}

pub(super) fn category_label(names: &[String], v: f64) -> String {
    let i = v.round();
    if (v - i).abs() > 1e-6 || i < 0.0 {
        String::new()
    } else {
        names.get(i as usize).cloned().unwrap_or_default()
    }
}
