//! Drawing a [`Figure`] to PNG and SVG: the title, the provenance lines, the panels in a grid
//! and the legend below each plot.

use super::bars::draw_bars;
use super::frame::DrawError;
use super::heat::draw_heat;
use super::lines::draw_lines;
use super::raster::{self, PixmapBackend};
use super::*;

/// Height of the title line; each provenance line adds [`PROVENANCE_LINE`].
pub(super) const TITLE_HEIGHT: u32 = 44;
pub(super) const PROVENANCE_LINE: u32 = 18;
pub(super) const LEGEND_ROW: u32 = 20;

/// The widest figure the page shows unscaled (its content column is 1366 px wide): wider
/// figures would be shrunk by the browser, and 13 px legend text with them.
pub const MAX_FIGURE_WIDTH: u32 = 1360;

impl Figure {
    /// The provenance text broken into lines that fit the figure's width.
    fn provenance_lines(&self) -> Vec<String> {
        let width = self.panel_px() * self.columns() as u32;
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

    /// Panels side by side: all of them up to three, two rows of two for four (no empty
    /// cell), else rows of three.
    fn columns(&self) -> usize {
        match self.panels.len() {
            0 | 1 => 1,
            4 => 2,
            n => n.min(3),
        }
    }

    /// The drawn width of one panel: the figure's choice, narrowed so that the whole figure
    /// fits [`MAX_FIGURE_WIDTH`] and the page shows it at its own size (text stays at its
    /// point size instead of being scaled down by the browser).
    pub(super) fn panel_px(&self) -> u32 {
        self.panel_width
            .min(MAX_FIGURE_WIDTH / self.columns() as u32)
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
        let (_, rows) = legend_grid(&names, self.panel_px());
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
            self.panel_px() * cols,
            self.head_height() + rows * self.cell_height(),
        )
    }

    /// Draws the figure as `<dir>/<id>.svg` and, with the same drawing calls on a pixmap, as
    /// `<dir>/<id>.png` (plotters' own bitmap text kerns badly; its pixmap backend paints as the
    /// SVG backend writes).
    pub fn render(&self, dir: &Path) -> Result<(), ReportError> {
        ensure_font()?;
        let size = self.size();
        let err = |message: String| ReportError::Figure {
            figure: self.id.clone(),
            message,
        };
        let drawing = |e: DrawError| err(e.to_string());
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
            self.draw(&root).map_err(drawing)?;
            root.present().map_err(|e| err(e.to_string()))?;
        }
        let svg_path = dir.join(format!("{}.svg", self.id));
        std::fs::write(&svg_path, &svg).map_err(|e| err(format!("{}: {e}", svg_path.display())))?;
        let mut canvas = raster::canvas(size).map_err(|e| err(e.to_string()))?;
        {
            let backend = PixmapBackend::new(&mut canvas).map_err(|e| err(e.to_string()))?;
            let root = backend.into_drawing_area();
            self.draw(&root).map_err(drawing)?;
            root.present().map_err(|e| err(e.to_string()))?;
        }
        let png = raster::encode_png(&canvas).map_err(|e| err(e.to_string()))?;
        let png_path = dir.join(format!("{}.png", self.id));
        std::fs::write(&png_path, png).map_err(|e| err(format!("{}: {e}", png_path.display())))?;
        Ok(())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), DrawError> {
        root.fill(&WHITE)?;
        let (head, body) = root.split_vertically(self.head_height());
        head.draw_text(
            &self.title,
            &TextStyle::from((FONT, 21).into_font().style(FontStyle::Bold)).color(&BLACK),
            (14, 8),
        )?;
        for (i, line) in self.provenance_lines().iter().enumerate() {
            head.draw_text(
                line,
                &TextStyle::from((FONT, 14).into_font()).color(&RGBColor(80, 80, 80)),
                (14, 38 + (i as u32 * PROVENANCE_LINE) as i32),
            )?;
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
                    draw_legend(&legend, &entries, self.panel_px())?;
                }
                Panel::Bars(p) => {
                    draw_bars(&plot, p)?;
                    let entries: Vec<(String, Colour, SeriesKind)> = p
                        .series
                        .iter()
                        .map(|s| (s.name.clone(), s.colour, SeriesKind::Bar))
                        .collect();
                    draw_legend(&legend, &entries, self.panel_px())?;
                }
                Panel::Heat(p) => draw_heat(&plot, &legend, p)?,
            }
        }
        Ok(())
    }
}

/// Columns and rows of a legend for these names in a panel this wide.
pub(super) fn legend_grid(names: &[&str], width: u32) -> (u32, u32) {
    if names.is_empty() {
        return (1, 0);
    }
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(1) as u32;
    let entry = longest * 7 + 40;
    let cols = (width.saturating_sub(20) / entry).clamp(1, names.len() as u32);
    (cols, (names.len() as u32).div_ceil(cols))
}

pub(super) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(String, Colour, SeriesKind)],
    width: u32,
) -> Result<(), DrawError> {
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
                area.draw(&PathElement::new(vec![(x, y), (x + 24, y)], shape))?;
                area.draw(&Circle::new((x + 12, y), 3, shape.filled()))?;
            }
            SeriesKind::Markers => {
                area.draw(&Circle::new((x + 12, y), 3, shape.filled()))?;
            }
            SeriesKind::ModelMarkers => {
                let thin = ShapeStyle::from(colour.rgb()).stroke_width(1);
                area.draw(&Circle::new((x + 12, y), 5, thin))?;
            }
            SeriesKind::Rug => {
                let thin = ShapeStyle::from(colour.rgb()).stroke_width(1);
                for dx in [6, 10, 14, 18] {
                    area.draw(&PathElement::new(
                        vec![(x + dx, y + 5), (x + dx, y - 3)],
                        thin,
                    ))?;
                }
            }
            SeriesKind::Bar => {
                area.draw(&Rectangle::new(
                    [(x + 4, y - 6), (x + 20, y + 6)],
                    colour.rgb().filled(),
                ))?;
            }
            SeriesKind::Model => {
                area.draw(&DashedPathElement::new(
                    vec![(x, y), (x + 24, y)],
                    5,
                    3,
                    shape,
                ))?;
                area.draw(&Circle::new((x + 12, y), 3, shape))?;
            }
        }
        area.draw_text(name, &style, (x + 30, y - 7))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_fit_the_page_without_empty_cells() {
        let panel = || {
            Panel::Lines(LinePanel {
                title: "p".into(),
                x: Axis::linear("x"),
                y: Axis::linear("y"),
                series: Vec::new(),
                vlines: Vec::new(),
                hlines: Vec::new(),
            })
        };
        // (panels, the columns they are laid out in)
        for (n, columns) in [(1, 1), (2, 2), (3, 3), (4, 2), (5, 3), (6, 3)] {
            let figure = Figure {
                id: "f".into(),
                title: "t".into(),
                provenance: String::new(),
                panels: (0..n).map(|_| panel()).collect(),
                panel_width: 640,
                panel_height: 300,
            };
            assert_eq!(figure.columns(), columns, "{n} panels");
            // Shown at its own size in the page's 1366 px column, so 13 px legends stay 13 px.
            assert!(
                figure.size().0 <= MAX_FIGURE_WIDTH,
                "{n} panels: {:?}",
                figure.size()
            );
        }
    }

    #[test]
    fn the_png_is_the_same_drawing_at_the_figures_size() {
        let figure = Figure {
            id: "test-figure".into(),
            title: "L1d misses per load".into(),
            provenance: "simulated: L1d 32 KiB 8-way".into(),
            panels: vec![Panel::Lines(LinePanel {
                title: "stride 16 lines".into(),
                x: Axis::log2("stride (lines)"),
                y: Axis::fraction("misses per load"),
                series: vec![Series {
                    name: "K=16".into(),
                    colour: PALETTE[0],
                    kind: SeriesKind::Markers,
                    points: vec![XY::new(1.0, 0.0), XY::new(64.0, 1.0)],
                }],
                vlines: Vec::new(),
                hlines: Vec::new(),
            })],
            panel_width: 400,
            panel_height: 300,
        };
        let dir = std::env::temp_dir().join(format!("stridelab-render-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rendered = figure.render(&dir);
        let png = std::fs::read(dir.join("test-figure.png"));
        let svg = std::fs::read_to_string(dir.join("test-figure.svg"));
        std::fs::remove_dir_all(&dir).unwrap();
        rendered.unwrap();
        let (png, svg) = (png.unwrap(), svg.unwrap());
        // PNG signature, then the IHDR chunk's width and height (big-endian).
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let dimension = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
        let (width, height) = figure.size();
        assert_eq!((dimension(16), dimension(20)), (width, height));
        assert!(svg.contains(&format!("width=\"{width}\"")), "{svg}");
        // Not a blank page: a plain white PNG of this size compresses to a few hundred bytes.
        assert!(png.len() > 2_000);
    }
}
