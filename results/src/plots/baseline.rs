//! Text on the PNGs on one baseline.
//!
//! plotters 0.3.7 places each glyph of a text at `(size / 2 + top) as i32`,
//! `top` being the glyph's pixel top relative to the baseline. The cast
//! truncates toward zero, so a glyph whose top lies above mid-height (a
//! digit, a capital) moves down by up to a pixel and one whose top lies
//! below it (a full stop, a comma, a hyphen) moves up by up to one: at the
//! 11–13 px of tick labels a decimal point sits visibly raised ("5·0").
//! [`Baseline`] wraps the bitmap backend and draws text itself, with the
//! same layout, anchors and rotations as plotters but every glyph
//! rasterised at its exact pen position on the baseline, so all glyphs of a
//! text share one baseline and keep their advances. Everything else is
//! the wrapped backend's. The SVGs hold text as text and need none of this.
//!
//! The bundled DejaVu Sans is the only font the plots register (for every
//! family and style they name), so it is the one drawn here.

use ab_glyph::{Font, FontRef, ScaleFont};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind};

/// A drawing backend whose text is drawn on one baseline (see the module docs).
pub(super) struct Baseline<DB> {
    inner: DB,
    font: FontRef<'static>,
}

impl<DB> Baseline<DB> {
    /// `None` when the bundled font cannot be read.
    pub(super) fn new(inner: DB, font: &'static [u8]) -> Option<Baseline<DB>> {
        Some(Baseline {
            inner,
            font: FontRef::try_from_slice(font).ok()?,
        })
    }
}

/// Calls `draw(x, y, coverage)` for every pixel of `text` at `size` px, its
/// layout box's top left at (0, 0) as plotters lays it out: the baseline at
/// `size / 2`, glyphs advanced and kerned in turn.
fn draw_glyphs<E>(
    font: &FontRef<'_>,
    size: f64,
    text: &str,
    mut draw: impl FnMut(i32, i32, f32) -> Result<(), E>,
) -> Result<(), E> {
    let scaled = font.as_scaled(size as f32);
    let mut x_shift = 0f32;
    let mut prev = None;
    for c in text.chars() {
        if let Some(pc) = prev {
            x_shift += scaled.kern(scaled.glyph_id(pc), scaled.glyph_id(c));
        }
        prev = Some(c);
        // rasterised at its exact (fractional) pen position, on a baseline
        // on a whole pixel row so that every glyph's foot is as sharp; its
        // pixel box is then whole pixels
        let mut glyph = scaled.scaled_glyph(c);
        glyph.position = ab_glyph::point(x_shift, ((size as f32) / 2.0).floor());
        if let Some(outlined) = scaled.outline_glyph(glyph) {
            let bounds = outlined.px_bounds();
            let (dx, dy) = (bounds.min.x as i32, bounds.min.y as i32);
            let mut pixels = Vec::new();
            outlined.draw(|x, y, coverage| pixels.push((x as i32 + dx, y as i32 + dy, coverage)));
            for (x, y, coverage) in pixels {
                draw(x, y, coverage)?;
            }
        }
        x_shift += scaled.h_advance(scaled.glyph_id(c));
    }
    Ok(())
}

impl<DB: DrawingBackend> DrawingBackend for Baseline<DB> {
    type ErrorType = DB::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.inner.blit_bitmap(pos, size, src)
    }

    fn estimate_text_size<TStyle: BackendTextStyle>(
        &self,
        text: &str,
        style: &TStyle,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        self.inner.estimate_text_size(text, style)
    }

    /// plotters' own placement (layout box, anchor, rotation), with the
    /// glyphs drawn by [`draw_glyphs`].
    fn draw_text<TStyle: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &TStyle,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let transform = style.transform();
        let (w, h) = self.inner.get_size();
        let font = self.font.clone();
        draw_glyphs(&font, style.size(), text, |x, y, coverage| {
            let (x, y) = transform.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && x < w as i32 && y >= 0 && y < h as i32 {
                let mixed = BackendColor {
                    alpha: color.alpha * f64::from(coverage),
                    rgb: color.rgb,
                };
                self.inner.draw_pixel((x, y), mixed)
            } else {
                Ok(())
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lowest inked row of each glyph of `text`, glyph by glyph.
    fn bottoms(font: &FontRef<'_>, size: f64, text: &str) -> Vec<i32> {
        text.chars()
            .map(|c| {
                let mut bottom = i32::MIN;
                draw_glyphs::<()>(font, size, &c.to_string(), |_, y, coverage| {
                    if coverage > 0.5 {
                        bottom = bottom.max(y);
                    }
                    Ok(())
                })
                .unwrap();
                bottom
            })
            .collect()
    }

    #[test]
    fn a_decimal_point_sits_on_the_digits_baseline_at_every_label_size() {
        let font = FontRef::try_from_slice(super::super::render::DEJAVU_SANS).unwrap();
        for size in [10.0, 11.0, 12.0, 13.0, 14.0, 15.5, 17.0, 22.0] {
            // both stand flat on the baseline: their ink ends on the same row
            let b = bottoms(&font, size, "1.");
            assert_eq!(b[0], b[1], "size {size}: bottoms of 1 and . {b:?}");
        }
    }
}
