//! The PNG twin of plotters' SVG backend: a [`DrawingBackend`] that paints into a tiny-skia
//! pixmap, each primitive as the SVG backend writes it (the same coordinates, stroke widths,
//! SVG's default caps and joins, text anchors and baseline shifts), with the embedded DejaVu
//! faces drawn from their outlines. A figure is drawn once per backend, so its PNG and SVG
//! show the same picture without an SVG renderer in the build.

use ab_glyph::{Font, FontRef, GlyphId, OutlineCurve};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
    FontStyle, FontTransform,
};
use tiny_skia::{FillRule, Paint, Path, PathBuilder, Pixmap, Rect, Stroke, Transform};

/// Why a raster drawing failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum RasterError {
    #[error("a {0}×{1} figure cannot be drawn")]
    Size(u32, u32),
    #[error("the embedded DejaVu Sans font could not be read: {0}")]
    Font(String),
    #[error("the PNG could not be encoded: {0}")]
    Encode(String),
}

/// The two faces the figures use, read from the embedded font files.
struct Faces {
    regular: FontRef<'static>,
    bold: FontRef<'static>,
}

impl Faces {
    fn load() -> Result<Self, RasterError> {
        let read = |bytes: &'static [u8]| {
            FontRef::try_from_slice(bytes).map_err(|e| RasterError::Font(e.to_string()))
        };
        Ok(Faces {
            regular: read(dejavu::sans::regular())?,
            bold: read(dejavu::sans::bold())?,
        })
    }
}

/// A transparent canvas of `size` pixels for a [`PixmapBackend`] to paint on.
pub(super) fn canvas(size: (u32, u32)) -> Result<Pixmap, RasterError> {
    Pixmap::new(size.0, size.1).ok_or(RasterError::Size(size.0, size.1))
}

/// The canvas as PNG bytes.
pub(super) fn encode_png(canvas: &Pixmap) -> Result<Vec<u8>, RasterError> {
    canvas
        .encode_png()
        .map_err(|e| RasterError::Encode(e.to_string()))
}

/// Paints plotters' drawing calls into an RGBA pixmap (anti-aliased, as an SVG renderer would).
pub(super) struct PixmapBackend<'a> {
    pixmap: &'a mut Pixmap,
    faces: Faces,
}

impl<'a> PixmapBackend<'a> {
    pub(super) fn new(pixmap: &'a mut Pixmap) -> Result<Self, RasterError> {
        Ok(PixmapBackend {
            pixmap,
            faces: Faces::load()?,
        })
    }

    fn fill(&mut self, path: &Path, color: BackendColor) {
        self.pixmap.fill_path(
            path,
            &paint(color),
            FillRule::Winding,
            Transform::identity(),
            None,
        );
    }

    fn stroke(&mut self, path: &Path, color: BackendColor, width: u32) {
        let stroke = Stroke {
            width: width as f32,
            // SVG's defaults, which the SVG backend leaves in place.
            miter_limit: 4.0,
            ..Stroke::default()
        };
        self.pixmap
            .stroke_path(path, &paint(color), &stroke, Transform::identity(), None);
    }
}

fn paint(color: BackendColor) -> Paint<'static> {
    let (r, g, b) = color.rgb;
    let mut paint = Paint::default();
    paint.set_color_rgba8(r, g, b, (color.alpha.clamp(0.0, 1.0) * 255.0).round() as u8);
    paint.anti_alias = true;
    paint
}

fn polyline(points: impl IntoIterator<Item = BackendCoord>, close: bool) -> Option<Path> {
    let mut builder = PathBuilder::new();
    for (i, (x, y)) in points.into_iter().enumerate() {
        if i == 0 {
            builder.move_to(x as f32, y as f32);
        } else {
            builder.line_to(x as f32, y as f32);
        }
    }
    if close {
        builder.close();
    }
    builder.finish()
}

impl DrawingBackend for PixmapBackend<'_> {
    type ErrorType = RasterError;

    fn get_size(&self) -> (u32, u32) {
        (self.pixmap.width(), self.pixmap.height())
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<RasterError>> {
        Ok(())
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<RasterError>> {
        Ok(())
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<RasterError>> {
        if let Some(rect) = Rect::from_xywh(point.0 as f32, point.1 as f32, 1.0, 1.0) {
            self.fill(&PathBuilder::from_rect(rect), color);
        }
        Ok(())
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<RasterError>> {
        if let Some(path) = polyline([from, to], false) {
            self.stroke(&path, style.color(), style.stroke_width());
        }
        Ok(())
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<RasterError>> {
        let (w, h) = (bottom_right.0 - upper_left.0, bottom_right.1 - upper_left.1);
        // SVG draws nothing for a rectangle without area.
        let Some(rect) = (w > 0 && h > 0)
            .then(|| Rect::from_xywh(upper_left.0 as f32, upper_left.1 as f32, w as f32, h as f32))
            .flatten()
        else {
            return Ok(());
        };
        let path = PathBuilder::from_rect(rect);
        if fill {
            self.fill(&path, style.color());
        } else {
            // The SVG backend gives an outlined rectangle no stroke width: SVG's default, 1.
            self.stroke(&path, style.color(), 1);
        }
        Ok(())
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<RasterError>> {
        if let Some(path) = polyline(path, false) {
            self.stroke(&path, style.color(), style.stroke_width());
        }
        Ok(())
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<RasterError>> {
        if let Some(path) = polyline(vert, true) {
            self.fill(&path, style.color());
        }
        Ok(())
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<RasterError>> {
        let Some(path) = PathBuilder::from_circle(center.0 as f32, center.1 as f32, radius as f32)
        else {
            return Ok(());
        };
        if fill {
            self.fill(&path, style.color());
        } else {
            self.stroke(&path, style.color(), style.stroke_width());
        }
        Ok(())
    }

    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<RasterError>> {
        let face = match style.style() {
            FontStyle::Bold => &self.faces.bold,
            _ => &self.faces.regular,
        };
        // The SVG backend's font-size and its `dy` per vertical anchor (em = the font size,
        // ex = half of it, as SVG renderers resolve it).
        let font_size = (style.size() / 1.24) as f32;
        let dy = match style.anchor().v_pos {
            VPos::Top => 0.76 * font_size,
            VPos::Center => 0.25 * font_size,
            VPos::Bottom => -0.25 * font_size,
        };
        // SVG's default white-space handling: runs of spaces collapse to one, ends trimmed.
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let Some(glyphs) = text_path(face, &text, font_size) else {
            return Ok(());
        };
        let dx = match style.anchor().h_pos {
            HPos::Left => 0.0,
            HPos::Center => -glyphs.advance / 2.0,
            HPos::Right => -glyphs.advance,
        };
        let (x0, y0) = (pos.0 as f32, pos.1 as f32);
        let angle = match style.transform() {
            FontTransform::Rotate90 => 90.0,
            FontTransform::Rotate180 => 180.0,
            FontTransform::Rotate270 => 270.0,
            _ => 0.0,
        };
        let transform = Transform::from_rotate_at(angle, x0, y0).pre_translate(x0 + dx, y0 + dy);
        self.pixmap.fill_path(
            &glyphs.path,
            &paint(style.color()),
            FillRule::Winding,
            transform,
            None,
        );
        Ok(())
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<RasterError>> {
        // The same layout as the SVG backend's (plotters' own font metrics), so both backends
        // place labels alike.
        let layout = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let ((x0, y0), (x1, y1)) = layout;
        Ok(((x1 - x0) as u32, (y1 - y0) as u32))
    }
}

/// A line of text as one path, its origin at the start of the baseline (y grows downwards).
struct TextPath {
    path: Path,
    advance: f32,
}

/// Lays `text` out with the face's advances and kerning and joins the glyphs' outlines.
fn text_path(face: &FontRef<'static>, text: &str, font_size: f32) -> Option<TextPath> {
    let scale = font_size / face.units_per_em()?;
    let mut builder = PathBuilder::new();
    let mut pen = 0.0f32;
    let mut previous: Option<GlyphId> = None;
    for c in text.chars() {
        let id = face.glyph_id(c);
        if let Some(before) = previous {
            pen += face.kern_unscaled(before, id) * scale;
        }
        if let Some(outline) = face.outline(id) {
            append_outline(&mut builder, &outline.curves, pen, scale);
        }
        pen += face.h_advance_unscaled(id) * scale;
        previous = Some(id);
    }
    Some(TextPath {
        path: builder.finish()?,
        advance: pen,
    })
}

/// Adds a glyph's contours (font units, y up) at `pen` along the baseline.
fn append_outline(builder: &mut PathBuilder, curves: &[OutlineCurve], pen: f32, scale: f32) {
    let at = |p: ab_glyph::Point| (pen + p.x * scale, -p.y * scale);
    let mut last: Option<(f32, f32)> = None;
    for curve in curves {
        let start = at(match curve {
            OutlineCurve::Line(p, _) | OutlineCurve::Quad(p, _, _) | OutlineCurve::Cubic(p, ..) => {
                *p
            }
        });
        if last != Some(start) {
            if last.is_some() {
                builder.close();
            }
            builder.move_to(start.0, start.1);
        }
        let end = match curve {
            OutlineCurve::Line(_, p1) => {
                let p1 = at(*p1);
                builder.line_to(p1.0, p1.1);
                p1
            }
            OutlineCurve::Quad(_, c, p2) => {
                let (c, p2) = (at(*c), at(*p2));
                builder.quad_to(c.0, c.1, p2.0, p2.1);
                p2
            }
            OutlineCurve::Cubic(_, c1, c2, p3) => {
                let (c1, c2, p3) = (at(*c1), at(*c2), at(*p3));
                builder.cubic_to(c1.0, c1.1, c2.0, c2.1, p3.0, p3.1);
                p3
            }
        };
        last = Some(end);
    }
    if last.is_some() {
        builder.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::style::text_anchor::Pos;
    use plotters::style::{BLACK, IntoFont, TextStyle};

    /// The painted pixels' bounds: (left, top, right, bottom), right and bottom exclusive.
    fn ink(canvas: &Pixmap) -> Option<(u32, u32, u32, u32)> {
        let w = canvas.width();
        let mut bounds: Option<(u32, u32, u32, u32)> = None;
        for (i, pixel) in canvas.pixels().iter().enumerate() {
            if pixel.alpha() > 0 {
                let (x, y) = (i as u32 % w, i as u32 / w);
                let b = bounds.get_or_insert((x, y, x + 1, y + 1));
                *b = (b.0.min(x), b.1.min(y), b.2.max(x + 1), b.3.max(y + 1));
            }
        }
        bounds
    }

    fn painted(draw: impl FnOnce(&mut PixmapBackend)) -> Pixmap {
        let mut canvas = canvas((200, 200)).unwrap();
        draw(&mut PixmapBackend::new(&mut canvas).unwrap());
        canvas
    }

    fn text(anchor: Pos, transform: FontTransform, words: &'static str) -> Pixmap {
        painted(|backend| {
            let style = TextStyle::from(("sans-serif", 24).into_font().transform(transform))
                .pos(anchor)
                .color(&BLACK);
            backend.draw_text(words, &style, (100, 100)).unwrap();
        })
    }

    #[test]
    fn a_filled_rectangle_covers_its_pixels_exactly() {
        let canvas = painted(|backend| backend.draw_rect((2, 3), (6, 8), &BLACK, true).unwrap());
        assert_eq!(ink(&canvas), Some((2, 3, 6, 8)));
        assert_eq!(canvas.pixel(2, 3).unwrap().alpha(), 255);
    }

    #[test]
    fn text_sits_where_its_anchor_puts_it() {
        // (anchor, what must hold of the ink's (left, top, right, bottom) around (100, 100))
        type Check = fn((u32, u32, u32, u32)) -> bool;
        let cases: [(Pos, Check); 4] = [
            (Pos::new(HPos::Left, VPos::Top), |(l, t, _, b)| {
                (100..=103).contains(&l) && (100..=106).contains(&t) && b <= 122
            }),
            (Pos::new(HPos::Right, VPos::Top), |(_, _, r, _)| {
                (97..=101).contains(&r)
            }),
            (Pos::new(HPos::Center, VPos::Center), |(l, t, r, b)| {
                (l + r).abs_diff(200) <= 3 && (t + b).abs_diff(200) <= 8
            }),
            // SVG's `dy="-0.5ex"`: the baseline a quarter of the font size above the anchor.
            (Pos::new(HPos::Left, VPos::Bottom), |(_, _, _, b)| {
                (94..=97).contains(&b)
            }),
        ];
        for (case, (anchor, holds)) in cases.into_iter().enumerate() {
            let bounds = ink(&text(anchor, FontTransform::None, "Hello")).unwrap();
            assert!(holds(bounds), "case {case}: ink {bounds:?}");
        }
    }

    #[test]
    fn rotated_text_runs_up_the_page_and_spaces_collapse_as_in_svg() {
        let (l, t, r, b) = ink(&text(
            Pos::new(HPos::Left, VPos::Top),
            FontTransform::Rotate270,
            "Hello",
        ))
        .unwrap();
        assert!(b - t > 2 * (r - l), "not vertical: {:?}", (l, t, r, b));
        assert!(
            b <= 101,
            "rotated text must end at its anchor: {:?}",
            (l, t, r, b)
        );
        let anchor = Pos::new(HPos::Left, VPos::Top);
        let single = text(anchor, FontTransform::None, "a b");
        let triple = text(anchor, FontTransform::None, "  a   b ");
        assert_eq!(ink(&single), ink(&triple));
    }
}
