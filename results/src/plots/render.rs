//! From a figure to SVG text and PNG bytes, with the bundled font.

use super::baseline::Baseline;
use super::{Plot, PlotError};
use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};
use std::sync::OnceLock;

pub(super) static DEJAVU_SANS: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

/// The font family every text is drawn in. It is also the key the bundled
/// font is registered under, and the SVG's font-family attribute: a CSS
/// list, so an SVG viewer without DejaVu Sans falls back to its sans-serif.
pub(super) const FONT: &str = "DejaVu Sans, sans-serif";

// plotters keeps registered fonts in a process-wide table; registering once
// is enough, and the outcome is remembered for later calls.
fn register() -> Result<(), PlotError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        // plotters' own defaults (mesh labels) ask for "sans-serif"
        [FONT, "sans-serif"].into_iter().all(|family| {
            [FontStyle::Normal, FontStyle::Bold]
                .into_iter()
                .all(|style| register_font(family, style, DEJAVU_SANS).is_ok())
        })
    });
    if ok { Ok(()) } else { Err(PlotError::Font) }
}

pub(super) type DrawResult<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

/// Something drawable on any plotters backend.
pub(super) trait Figure {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult<DB>;
}

/// Renders `figure` at `size` pixels as SVG and PNG; with `stamp` (a
/// partial report's "INCOMPLETE: n of m runs"), in a red band above it.
pub(super) fn to_plot(
    name: &str,
    title: &str,
    size: (u32, u32),
    figure: &impl Figure,
    stamp: Option<&str>,
) -> Result<Plot, PlotError> {
    register()?;
    let size = match stamp {
        Some(_) => (size.0, size.1 + STAMP_BAND),
        None => size,
    };
    let draw_error = |e: String| PlotError::Draw {
        plot: name.to_string(),
        reason: e,
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_error(e.to_string()))?;
        draw_stamped(&root, figure, stamp).map_err(|e| draw_error(e.to_string()))?;
        root.present().map_err(|e| draw_error(e.to_string()))?;
    }
    let (w, h) = size;
    let mut pixels = vec![0u8; w as usize * h as usize * 3];
    {
        let bitmap = BitMapBackend::with_buffer(&mut pixels, size);
        let root = Baseline::new(bitmap, DEJAVU_SANS)
            .ok_or(PlotError::Font)?
            .into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_error(e.to_string()))?;
        draw_stamped(&root, figure, stamp).map_err(|e| draw_error(e.to_string()))?;
        root.present().map_err(|e| draw_error(e.to_string()))?;
    }
    let png = encode_png(&pixels, size).map_err(|e| PlotError::Png {
        plot: name.to_string(),
        reason: e.to_string(),
    })?;
    Ok(Plot {
        name: name.to_string(),
        title: title.to_string(),
        svg,
        png,
        caption: None,
    })
}

/// The height of the band above a stamped figure.
const STAMP_BAND: u32 = 34;

/// Draws `figure` on `root`, below a red band saying `stamp` when there is
/// one (the band is extra height, so it never covers the figure).
fn draw_stamped<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    figure: &impl Figure,
    stamp: Option<&str>,
) -> DrawResult<DB> {
    let Some(text) = stamp else {
        return figure.draw(root);
    };
    let (band, rest) = root.split_vertically(STAMP_BAND);
    let red = RGBColor(161, 29, 29);
    band.fill(&RGBColor(253, 236, 236))?;
    let (w, h) = band.dim_in_pixel();
    band.draw(&Rectangle::new(
        [(1, 1), (w as i32 - 2, h as i32 - 2)],
        red.stroke_width(2),
    ))?;
    let font = TextStyle::from((FONT, 17).into_font().style(FontStyle::Bold))
        .color(&red)
        .pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Left,
            plotters::style::text_anchor::VPos::Center,
        ));
    band.draw(&Text::new(text.to_string(), (12, h as i32 / 2), font))?;
    figure.draw(&rest)
}

fn encode_png(rgb: &[u8], (w, h): (u32, u32)) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, w, h);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        // anti-aliased lines and text compress far better with per-row filters
        encoder.set_adaptive_filter(png::AdaptiveFilterType::Adaptive);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(rgb)?;
        writer.finish()?;
    }
    Ok(out)
}

pub(super) fn title_font() -> TextStyle<'static> {
    (FONT, 22).into_font().style(FontStyle::Bold).into()
}

pub(super) fn label_font() -> TextStyle<'static> {
    TextStyle::from((FONT, 15).into_font()).color(&BLACK)
}

pub(super) fn small_font() -> TextStyle<'static> {
    TextStyle::from((FONT, 13).into_font()).color(&BLACK)
}

/// The plot's title, with "no data" in the middle: what a plot shows when
/// there is nothing to draw, instead of failing.
pub(super) fn draw_no_data<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, title: &str) -> DrawResult<DB> {
    let (w, h) = root.dim_in_pixel();
    let area = root.titled(title, title_font())?;
    let centre = TextStyle::from((FONT, 28).into_font())
        .color(&RGBColor(110, 110, 110))
        .pos(plotters::style::text_anchor::Pos::new(
            plotters::style::text_anchor::HPos::Center,
            plotters::style::text_anchor::VPos::Center,
        ));
    area.draw(&Text::new("no data", (w as i32 / 2, h as i32 / 2 - 30), centre))?;
    Ok(())
}

/// A line series' legend mark: a short thick stroke of its colour.
pub(super) fn legend_line(colour: RGBColor) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(3))
}

/// The legend every multi-series plot draws: the same frame and font, at `position`.
pub(super) fn draw_legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut plotters::chart::ChartContext<'a, DB, CT>,
    position: plotters::chart::SeriesLabelPosition,
) -> DrawResult<DB> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(plotters::style::WHITE.mix(0.85))
        .border_style(plotters::style::RGBColor(160, 160, 160))
        .label_font(small_font())
        .draw()
}

/// Every plot's axes: its fonts and a light grid of one minor line between
/// major ones, so the figures of a report read as one set.
pub(super) fn house_mesh<'m, 'a, 'b, X, Y, XT, YT, DB>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged<ValueType = XT> + ValueFormatter<XT>,
    Y: Ranged<ValueType = YT> + ValueFormatter<YT>,
    DB: DrawingBackend,
{
    mesh.label_style(small_font())
        .axis_desc_style(label_font())
        .light_line_style(RGBColor(242, 242, 242))
        .bold_line_style(RGBColor(215, 215, 215))
        .max_light_lines(1)
}
